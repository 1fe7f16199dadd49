"""Decisions per reviewer, and how often two reviewers who judged the same item agreed
(docs/human-review.md, "Coverage"). Pure: nothing here reads a store.

Definitions:

- a reviewer's *recorded* decisions are every decision record they made in the campaign version
  (counted or not); *active* are the items' active decisions that are theirs;
- a decision's *verdict* is what it says about the pair: ``prefer`` of one run (the strength is
  not compared), ``tie``, ``correct``, ``underdetermined`` or ``malformed``. A ``skip`` says nothing
  and has no verdict; a decision that does not count (invalid, a duplicate submission) has none;
- on one item, each reviewer's *verdict* is that of their latest counted decision with one; an
  item with verdicts by two or more named reviewers gives one *pair* per two of them, and the
  pair *agreed* when both verdicts are equal.

What it does not measure: items reach a second reviewer because someone chose to decide them
again (a supersession), not at random, and the later reviewer may have seen the earlier decision
in ``review history``. So the rate is the raw agreement on the items that happen to have two
reviewers' verdicts: not an inter-annotator agreement of the campaign, not corrected for chance
(no Cohen's or Fleiss' kappa), and decisions recorded before reviewer ids (no named reviewer)
are left out of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

__all__ = ["Agreement", "ReviewerDecision", "ReviewerTally", "agreement", "reviewer_tallies", "verdict"]

_NO_VERDICT = frozenset({"skip"})


def verdict(disposition: str, preferred: str | None) -> str | None:
    """What a decision says about its pair, as compared between reviewers (None for ``skip``)."""
    if disposition in _NO_VERDICT:
        return None
    if disposition == "prefer":
        return f"prefer:{preferred}"
    return disposition


@dataclass(frozen=True)
class ReviewerDecision:
    """One decision record of an item: its reviewer (None when recorded before reviewer ids),
    its seq, whether it counts, whether it is the item's active decision, and its verdict."""

    reviewer: str | None
    seq: int
    counted: bool
    active: bool
    verdict: str | None


@dataclass
class ReviewerTally:
    """One reviewer's decisions in a campaign version."""

    recorded: int = 0
    active: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"recorded": self.recorded, "active": self.active}


@dataclass
class Agreement:
    """Pairs of named reviewers' verdicts on one item, and how many agreed."""

    items: int = 0  # items with verdicts by two or more named reviewers
    pairs: int = 0
    agreed: int = 0
    by_pair: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (a, b) -> [pairs, agreed]

    @property
    def rate(self) -> float | None:
        return self.agreed / self.pairs if self.pairs else None

    def to_json(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "pairs": self.pairs,
            "agreed": self.agreed,
            "rate": self.rate,
            "byReviewerPair": [
                {"reviewers": list(pair), "pairs": n, "agreed": k} for pair, (n, k) in sorted(self.by_pair.items())
            ],
        }


def reviewer_tallies(items: Iterable[Sequence[ReviewerDecision]]) -> dict[str, ReviewerTally]:
    """Reviewer -> their recorded and active decisions (an unnamed reviewer under ``""``)."""
    out: dict[str, ReviewerTally] = {}
    for decisions in items:
        for d in decisions:
            tally = out.setdefault(d.reviewer or "", ReviewerTally())
            tally.recorded += 1
            tally.active += d.active
    return dict(sorted(out.items()))


def agreement(items: Iterable[Sequence[ReviewerDecision]]) -> Agreement:
    """The agreement of named reviewers on the items each of them gave a verdict on."""
    out = Agreement()
    for decisions in items:
        latest: dict[str, tuple[int, str]] = {}
        for d in decisions:
            if d.reviewer is None or not d.counted or d.verdict is None:
                continue
            if d.reviewer not in latest or d.seq > latest[d.reviewer][0]:
                latest[d.reviewer] = (d.seq, d.verdict)
        if len(latest) < 2:
            continue
        out.items += 1
        for a, b in combinations(sorted(latest), 2):
            same = latest[a][1] == latest[b][1]
            out.pairs += 1
            out.agreed += same
            counts = out.by_pair.setdefault((a, b), [0, 0])
            counts[0] += 1
            counts[1] += same
    return out
