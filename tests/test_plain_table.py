"""Tables written to a pipe are drawn without importing rich, byte for byte as rich draws them;
whenever rich could draw a table differently (markup, emoji codes, wide text, forced colour) the
command falls back to rich."""

from __future__ import annotations

import io
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from reviewtrail.cli._output import PIPE_WIDTH, plain_table


def rich_table(title: str, columns: list[str], rows: list[list[str]], no_wrap: tuple[str, ...] = ()) -> str:
    out = io.StringIO()
    t = Table(title=title)
    for c in columns:
        t.add_column(c, overflow="fold", no_wrap=c in no_wrap)
    for r in rows:
        t.add_row(*r)
    Console(file=out, width=PIPE_WIDTH, _environ={}).print(t)
    return out.getvalue()


LEDGER_ROWS = [
    ["1", "2026-12-01 15:46:28", "store.identity@1", "reviewtrail", "private", "store:00c29b57-6db8", "d7da40369099"],
    ["2", "2026-12-01 15:47:00", "eval.result@1", "alice", "public-source", "", "0a1b2c3d4e5f"],
]
LEDGER_COLUMNS = ["seq", "time", "type", "actor", "privacy", "subject", "hash"]


def test_a_ledger_table_is_drawn_as_rich_draws_it() -> None:
    drawn = plain_table("ledger", LEDGER_COLUMNS, LEDGER_ROWS)
    assert drawn is not None
    assert drawn == rich_table("ledger", LEDGER_COLUMNS, LEDGER_ROWS, no_wrap=("seq", "time", "type", "hash"))
    assert plain_table("empty", ["a", "b"], []) == rich_table("empty", ["a", "b"], [])


@pytest.mark.parametrize(
    "cell",
    ["[bold]x[/bold]", ":smile:", "a:thumbs_up:b", "naïve", "日本", " padded", "two\nlines", "x" * PIPE_WIDTH],
)
def test_cells_rich_would_change_fall_back_to_rich(cell: str) -> None:
    assert plain_table("t", ["a"], [[cell]]) is None


def test_forced_colour_falls_back_to_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert plain_table("t", ["a"], [["1"]]) is None


def test_no_emoji_code_is_two_digits() -> None:
    """A time's ``HH:MM:SS`` is drawn plainly because no emoji name is two digits."""
    from rich._emoji_codes import EMOJI

    assert [name for name in EMOJI if len(name) == 2 and name.isdigit()] == []


TEXT = st.text(alphabet=string.ascii_letters + string.digits + " :-_.@/[]\\é", max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    title=TEXT,
    columns=st.lists(TEXT.filter(bool), min_size=1, max_size=5),
    data=st.data(),
)
def test_whenever_drawn_plainly_the_table_is_exactly_rich_s(
    title: str, columns: list[str], data: st.DataObject
) -> None:
    rows = data.draw(st.lists(st.lists(TEXT, min_size=len(columns), max_size=len(columns)), max_size=4))
    drawn = plain_table(title, columns, rows)
    if drawn is not None:
        assert drawn == rich_table(title, columns, rows)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.from_regex(r"[a-z0-9][a-z0-9 ._@-]{0,40}[a-z0-9]", fullmatch=True), min_size=3, max_size=3),
        max_size=5,
    )
)
def test_ordinary_tables_are_drawn_plainly(rows: list[list[str]]) -> None:
    drawn = plain_table("things", ["name", "value", "note"], rows)
    assert drawn is not None and drawn == rich_table("things", ["name", "value", "note"], rows)
