"""Agreement between an item's decision and its second judgments (docs/human-review.md,
"Agreement"). Pure: nothing here reads a store.

Each counted second judgment with a verdict, on an item whose judged decision has one, is one
*pair*: (the decision's reviewer and verdict, the second judge and verdict). Verdicts are compared
by what they say about the pair as shown: ``prefer:A`` or ``prefer:B`` (the candidate's display
position; the strength is not compared), ``tie``, ``correct``, ``underdetermined``, ``malformed``.

- *raw agreement* of a set of pairs: agreed / pairs;
- *Cohen's kappa* of two raters over their pairs: (po - pe) / (1 - pe), where po is the raw
  agreement and pe = sum over verdicts k of p1(k) * p2(k), p1 and p2 being each rater's share of
  pairs with verdict k. It is undefined (None) with no pairs or when pe = 1 (both raters gave one
  and the same verdict every time: chance explains everything). For a reviewer pair the raters
  are the two reviewers, whichever judged first; overall they are "the decision" and "the second
  judgment";
- *per reviewer*: the pairs a reviewer is in (either side) and how many agreed.

Supersessions (a reviewer deciding an item again) are not pairs here: they are not sampled and
the later reviewer may have seen the earlier decision; they stay under ``quality.agreement``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from reviewtrail.human_review.quality._agreement import verdict
from reviewtrail.human_review.rules._frozen import POSITIONS

__all__ = ["JudgmentAgreement", "JudgmentPair", "cohen_kappa", "judgment_agreement", "position_verdict"]


def position_verdict(disposition: str, preferred: str | None, display_order: Sequence[str]) -> str | None:
    """What a judgment says about its pair as shown (None for ``skip``): ``prefer:A`` when it
    prefers the candidate shown first, ``prefer:B`` the other, else the disposition."""
    position = None if preferred is None else POSITIONS[0 if preferred == display_order[0] else 1]
    return verdict(disposition, position)


@dataclass(frozen=True)
class JudgmentPair:
    """One item's judged decision and one second judgment of it."""

    first: str  # the decision's reviewer
    second: str  # the second judge
    first_verdict: str
    second_verdict: str

    @property
    def agreed(self) -> bool:
        return self.first_verdict == self.second_verdict


def cohen_kappa(ratings: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' verdicts on the same items (see the module), exact in rationals."""
    n = len(ratings)
    if not n:
        return None
    observed = Fraction(sum(a == b for a, b in ratings), n)
    left = Counter(a for a, _ in ratings)
    right = Counter(b for _, b in ratings)
    expected = sum((Fraction(left[k], n) * Fraction(right[k], n) for k in left), Fraction(0))
    if expected == 1:
        return None
    return float((observed - expected) / (1 - expected))


def _rate(agreed: int, pairs: int) -> float | None:
    return agreed / pairs if pairs else None


@dataclass
class JudgmentAgreement:
    """The pairs of a campaign version, overall, per reviewer pair and per reviewer."""

    pairs: list[JudgmentPair]
    selected: int = 0  # items the campaign asks a second judgment of
    waiting: int = 0  # of those, items with an active judgment and no second judgment yet
    share: float | None = None  # the share in force

    def by_reviewer_pair(self) -> dict[tuple[str, str], list[JudgmentPair]]:
        out: dict[tuple[str, str], list[JudgmentPair]] = {}
        for p in self.pairs:
            a, b = sorted((p.first, p.second))
            out.setdefault((a, b), []).append(p)
        return dict(sorted(out.items()))

    def by_reviewer(self) -> dict[str, tuple[int, int]]:
        """Reviewer -> (pairs they are in, agreed)."""
        out: dict[str, list[int]] = {}
        for p in self.pairs:
            for who in {p.first, p.second}:
                counts = out.setdefault(who, [0, 0])
                counts[0] += 1
                counts[1] += p.agreed
        return {who: (n, k) for who, (n, k) in sorted(out.items())}

    def to_json(self) -> dict[str, Any]:
        agreed = sum(p.agreed for p in self.pairs)
        pairs = []
        for (a, b), found in self.by_reviewer_pair().items():
            ratings = [(p.first_verdict, p.second_verdict) if p.first == a else (p.second_verdict, p.first_verdict)
                       for p in found]  # fmt: skip
            k = sum(p.agreed for p in found)
            pairs.append({"reviewers": [a, b], "pairs": len(found), "agreed": k, "rate": _rate(k, len(found)),
                          "kappa": cohen_kappa(ratings)})  # fmt: skip
        return {
            "share": self.share,
            "selected": self.selected,
            "waiting": self.waiting,
            "pairs": len(self.pairs),
            "agreed": agreed,
            "rate": _rate(agreed, len(self.pairs)),
            "kappa": cohen_kappa([(p.first_verdict, p.second_verdict) for p in self.pairs]),
            "byReviewerPair": pairs,
            "byReviewer": [
                {"reviewer": who, "pairs": n, "agreed": k, "rate": _rate(k, n)}
                for who, (n, k) in self.by_reviewer().items()
            ],
        }


def judgment_agreement(pairs: Iterable[JudgmentPair], *, selected: int = 0, waiting: int = 0,
                       share: float | None = None) -> JudgmentAgreement:  # fmt: skip
    """The agreement of a campaign version's pairs (in a stable order: by reviewers, then verdicts)."""
    ordered = sorted(pairs, key=lambda p: (p.first, p.second, p.first_verdict, p.second_verdict))
    return JudgmentAgreement(ordered, selected=selected, waiting=waiting, share=share)
