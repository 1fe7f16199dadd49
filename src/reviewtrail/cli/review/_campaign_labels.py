"""How the campaign and review commands name a prompt in a table: its short label (the prompt's
first words, ``promptLabel`` in ``--json``) and a short id, the last characters of its record id,
so two prompts that start alike stay apart (docs/human-review.md, "Prompt labels"). The last, not
the first: a record id begins with its time, so the ids of one import share their first characters;
they end in random digits."""

from __future__ import annotations

__all__ = ["ROWS_SHOWN", "SHORT_ID", "more_line", "short_id"]

#: Characters of a record id shown as its short id, from its end (``--json`` gives the whole id).
SHORT_ID = 8
#: Rows a command lists before it says how many more there are.
ROWS_SHOWN = 50


def short_id(record_id: str) -> str:
    """The last :data:`SHORT_ID` characters of a record id."""
    return record_id[-SHORT_ID:]


def more_line(total: int, shown: int = ROWS_SHOWN) -> str | None:
    """The line under a table cut at ``shown`` rows of ``total``; None when nothing was cut."""
    return f"… and {total - shown} more (--json lists them all)" if total > shown else None
