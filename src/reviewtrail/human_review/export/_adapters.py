"""Adapters from ``thoughtstream.training-example.v4`` rows to trainers' preference formats
(docs/human-review.md, "Export"). Each rejected response of a row gives one preference pair."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.rules._export_rows import TRAINING_EXAMPLE_V4

__all__ = ["preference_lines", "to_openai_preference", "to_trl_preference"]


def _pairs(row: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(prompt, chosen, rejected) of each rejected response of a v4 row. Only a v4 ``prefer`` or
    ``correct`` row is a preference: anything else is refused, so a tie, an underdetermined,
    malformed or skipped decision never becomes an example in any format."""
    if row.get("schemaVersion") != TRAINING_EXAMPLE_V4:
        raise InvalidInputError(f"not a {TRAINING_EXAMPLE_V4} row", field="schemaVersion")
    disposition = row.get("judgment", {}).get("disposition")
    if disposition not in ("prefer", "correct"):
        raise InvalidInputError(f"a {disposition} decision is never a training example", field="disposition")
    rejected = row.get("rejected") or []
    if not rejected:
        raise InvalidInputError("a preference needs at least one rejected response", field="rejected")
    chosen = row["chosen"]["response"]
    return [(row["prompt"], chosen, r["response"]) for r in rejected]


def _trl(prompt: str, chosen: str, rejected: str) -> dict[str, str]:
    return {"prompt": prompt, "chosen": chosen, "rejected": rejected}


def _openai(prompt: str, chosen: str, rejected: str) -> dict[str, Any]:
    return {
        "input": {"messages": [{"role": "user", "content": prompt}]},
        "preferred_output": [{"role": "assistant", "content": chosen}],
        "non_preferred_output": [{"role": "assistant", "content": rejected}],
    }


def to_trl_preference(rows: Iterable[dict[str, Any]]) -> list[dict[str, str]]:
    """TRL's standard preference format: ``prompt``, ``chosen``, ``rejected`` as plain strings,
    one row per rejected response. The prompt is what the candidate models were given; the
    reviewer's evidence is not part of it."""
    return [_trl(*pair) for row in rows for pair in _pairs(row)]


def to_openai_preference(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI's preference (DPO) fine-tuning lines: ``input.messages`` with the prompt as the
    user message, ``preferred_output`` and ``non_preferred_output`` each one assistant message;
    one line per rejected response."""
    return [_openai(*pair) for row in rows for pair in _pairs(row)]


def preference_lines(row: dict[str, Any]) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """The :func:`to_trl_preference` and :func:`to_openai_preference` line of each rejected
    response of one v4 row, from one reading of it."""
    return [(_trl(*pair), _openai(*pair)) for pair in _pairs(row)]
