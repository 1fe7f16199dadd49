"""The skill's positive gate, as one rule (seed 000, "Pass --verdict ..."): a trace may say
``review_positive`` only after the skill's own gate succeeded. For ``/auto-review-loop`` that
gate is score >= 6 AND verdict ``ready`` or ``almost``, so a raw ``ready`` at score 5 is not
positive. Other skills keep other thresholds and verdicts: both are parameters.

The trace helper itself never infers positivity from verdict text or scores; ``trace gate`` and
``trace save --gate`` apply this rule only when the caller asks for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import msgspec

from reviewtrail.errors import InvalidInputError

__all__ = ["AUTO_REVIEW_LOOP_MIN_SCORE", "AUTO_REVIEW_LOOP_VERDICTS", "GateOutcome", "positive_gate"]

AUTO_REVIEW_LOOP_MIN_SCORE = 6.0
AUTO_REVIEW_LOOP_VERDICTS = ("ready", "almost")


class GateOutcome(msgspec.Struct, frozen=True):
    """Whether the gate passed, and why (or why not) in words."""

    positive: bool
    reason: str
    score: float | None
    verdict: str | None
    min_score: float
    verdicts: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "positive": self.positive,
            "reason": self.reason,
            "score": self.score,
            "verdict": self.verdict,
            "minScore": self.min_score,
            "positiveVerdicts": list(self.verdicts),
        }


def _number(value: float) -> str:
    return f"{value:g}"


def positive_gate(
    score: float | None,
    verdict: str | None,
    *,
    min_score: float = AUTO_REVIEW_LOOP_MIN_SCORE,
    verdicts: Sequence[str] = AUTO_REVIEW_LOOP_VERDICTS,
) -> GateOutcome:
    """Score at least ``min_score`` AND ``verdict`` one of ``verdicts`` (compared without case or
    surrounding spaces). ``None`` or ``""`` is not given, and not positive. A score or threshold
    that is not a finite number, or no positive verdict at all, is exit 2 naming the field."""
    for name, value in (("score", score), ("min-score", min_score)):
        if value is not None and (isinstance(value, bool) or not math.isfinite(value)):
            raise InvalidInputError(f"must be a finite number, got {value!r}", field=name)
    allowed = tuple(dict.fromkeys(v.strip().lower() for v in verdicts if v.strip()))
    if not allowed:
        raise InvalidInputError("give at least one verdict that passes", field="positive-verdict")
    said = verdict.strip().lower() if verdict else ""
    problems = []
    if score is None:
        problems.append("no score given")
    elif score < min_score:
        problems.append(f"score {_number(score)} < {_number(min_score)}")
    if not said:
        problems.append("no verdict given")
    elif said not in allowed:
        problems.append(f"verdict {said!r} is not one of {', '.join(allowed)}")
    if problems:
        reason = "not positive: " + "; ".join(problems)
    else:
        assert score is not None
        reason = f"positive: score {_number(score)} >= {_number(min_score)} and verdict {said}"
    return GateOutcome(not problems, reason, score, said or None, min_score, allowed)
