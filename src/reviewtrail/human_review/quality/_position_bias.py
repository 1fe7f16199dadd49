"""Position bias of a campaign: the share of ``prefer`` decisions that chose the candidate shown
first, with a 95% Wilson score interval, overall and per reviewer (docs/human-review.md,
"Campaign quality"). Decisions on self-identifying items are left out and counted: a reviewer who
can tell which model wrote a candidate is not choosing by position alone.

Evaluation evidence for the campaign owner only: it never changes any decision's eligibility and
is never shown on a reviewer's surface.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist

from reviewtrail.errors import InvalidInputError

__all__ = ["BiasShare", "PositionBias", "position_bias", "wilson_interval"]

_LEVEL = 0.95
"""Coverage of the reported intervals."""

_Z = NormalDist().inv_cdf(0.5 + _LEVEL / 2)  # 1.959963984540054


def wilson_interval(successes: int, trials: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval for ``successes`` out of ``trials``, or None with no trials.

    Unlike the normal approximation it stays inside [0, 1] and is sensible near 0 and 1; it always
    contains the observed share (the bounds are clamped so rounding cannot break either)."""
    if trials < 0 or successes < 0 or successes > trials:
        raise InvalidInputError(f"{successes} successes out of {trials} trials is not a count", field="trials")
    if trials == 0:
        return None
    share = successes / trials
    z2 = _Z * _Z
    denominator = 1 + z2 / trials
    centre = (share + z2 / (2 * trials)) / denominator
    half = _Z / denominator * math.sqrt(share * (1 - share) / trials + z2 / (4 * trials * trials))
    return min(max(0.0, centre - half), share), max(min(1.0, centre + half), share)


@dataclass(frozen=True)
class BiasShare:
    """How often ``prefer`` decisions chose the first-displayed candidate. ``flagged`` when the
    95% interval excludes one half (the reviewer, or the campaign, leans to one side); with no
    decisions the share and interval are None and nothing is flagged."""

    decisions: int
    chose_first: int
    share: float | None
    low: float | None
    high: float | None
    flagged: bool

    @classmethod
    def of(cls, chose_first: int, decisions: int) -> BiasShare:
        interval = wilson_interval(chose_first, decisions)
        if interval is None:
            return cls(decisions, chose_first, None, None, None, False)
        low, high = interval
        return cls(decisions, chose_first, chose_first / decisions, low, high, high < 0.5 or low > 0.5)

    def to_json(self) -> dict[str, object]:
        interval = None if self.low is None else {"low": self.low, "high": self.high}
        return {
            "decisions": self.decisions,
            "choseFirst": self.chose_first,
            "share": self.share,
            "interval": interval,
            "flagged": self.flagged,
        }


@dataclass(frozen=True)
class PositionBias:
    """Position bias over all ``prefer`` decisions and per reviewer (keyed by reviewer id), and
    how many decisions on self-identifying items were left out."""

    overall: BiasShare
    reviewers: dict[str, BiasShare]
    self_identifying: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "method": "wilson",
            "level": _LEVEL,
            "selfIdentifyingLeftOut": self.self_identifying,
            "overall": self.overall.to_json(),
            "reviewers": [{"reviewer": name, **self.reviewers[name].to_json()} for name in sorted(self.reviewers)],
        }


def position_bias(choices: Iterable[tuple[str, bool] | tuple[str, bool, bool]]) -> PositionBias:
    """Position bias of ``(reviewer, chose_first)`` pairs, one per active ``prefer`` decision:
    ``chose_first`` is whether the preferred candidate was the one displayed first. A third
    element, when given, says whether the item is self-identifying (a candidate's text names a
    candidate's identity): such a decision is left out, and counted. Evaluation evidence only: it
    never changes eligibility."""
    firsts: dict[str, int] = {}
    totals: dict[str, int] = {}
    left_out = 0
    for reviewer, chose_first, *flagged in choices:
        if not reviewer:
            raise InvalidInputError("a prefer decision has an empty reviewer id", field="reviewer")
        if any(flagged):
            left_out += 1
            continue
        totals[reviewer] = totals.get(reviewer, 0) + 1
        firsts[reviewer] = firsts.get(reviewer, 0) + bool(chose_first)
    overall = BiasShare.of(sum(firsts.values()), sum(totals.values()))
    reviewers = {name: BiasShare.of(firsts[name], totals[name]) for name in sorted(totals)}
    return PositionBias(overall, reviewers, left_out)
