"""Campaign coverage: counts per scenario family and overall, from facts already read
(docs/human-review.md, "Coverage"). Pure: nothing here reads a store.

Definitions:

- *runs*: every run id triggered by a prompt of the family, by its current status; *pairable* runs
  pass every pairing rule, the others are *excluded* and counted once per exclusion code they
  carry (a run can carry several codes).
- *items*: valid items still bind what they froze; invalid ones are listed with their problems
  and their prompt's short label (:func:`~._labels.prompt_label`);
  *self-identifying* items have a candidate whose text names a candidate's identity (left out of
  standings and position bias); items recorded before that check are *not checked*.
- *decisions*: ``recorded`` counts every decision record; ``active`` counts each item's one
  active decision by disposition; ``inactive`` = recorded - active (superseded, concurrent, or
  never counted); ``undecided`` items have no active decision; ``open`` items are still in the
  review queue: undecided, or with an active ``skip`` (a skip supplies no judgment).
- *judgeability rate* = (prefer + tie + correct) / (active decisions - skip): the share of the
  items a reviewer judged (skips excluded: a skip says nothing about the item) on which a
  judgment was possible; ``underdetermined`` and ``malformed`` are the not-judgeable ones. None
  when there is no active decision other than skip.
- *reviewers*: each reviewer's recorded and active decisions (:mod:`._agreement`).
- *second judgments*: the share asked for, the items selected and still waiting for one, and the
  agreement of each decision with its second judgments (:mod:`._judgment_agreement`).
- *quality-eligible*: active prefer/correct decisions marked for training in a training-enabled
  campaign; *exportable*: active decisions ``review export`` would write now (externally
  eligible, on a valid item); *evaluation-only*: every other active decision.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reviewtrail.human_review.quality._agreement import ReviewerTally
from reviewtrail.human_review.quality._judgment_agreement import JudgmentAgreement
from reviewtrail.human_review.records._records import DISPOSITIONS
from reviewtrail.human_review.rules._run_rules import Exclusion

__all__ = ["Coverage", "FamilyCoverage", "ItemCoverageFacts", "PromptCoverageFacts", "coverage_of"]

_JUDGEABLE = ("prefer", "tie", "correct")


@dataclass(frozen=True)
class PromptCoverageFacts:
    """One prompt's runs: the status of each run id (``completed``, ``failed``, or ``unresolved``
    when the run has no single current record), the pairable ones and the exclusions of the others."""

    family: str
    statuses: Mapping[str, str]
    pairable: int
    exclusions: Mapping[str, list[Exclusion]]


@dataclass(frozen=True)
class ItemCoverageFacts:
    """One item: validity, its decisions and what its active decision is eligible for."""

    family: str
    item_id: str
    problems: tuple[str, ...]
    recorded: int
    active: str | None  # the active decision's disposition
    # The active judgment waits for its second judgment: counted apart, never by what it says, so
    # no count tells the second reviewer what the first judgment was.
    waiting: bool = False
    quality_eligible: bool = False
    exportable: bool = False
    self_identifying: bool | None = None  # a candidate names an identity; None: never checked
    prompt_label: str = ""  # the short label of the item's prompt (given at least for an invalid item)


@dataclass
class FamilyCoverage:
    """The counts of one scenario family (or of the whole campaign)."""

    prompts: int = 0
    runs: Counter[str] = field(default_factory=Counter)  # status -> runs
    pairable_runs: int = 0
    excluded_runs: int = 0
    exclusions: Counter[str] = field(default_factory=Counter)  # code -> runs
    items: int = 0
    invalid_items: dict[str, tuple[str, ...]] = field(default_factory=dict)
    invalid_labels: dict[str, str] = field(default_factory=dict)  # invalid item id -> its prompt's label
    self_identifying: int = 0
    identity_unchecked: int = 0
    recorded: int = 0
    active: Counter[str] = field(default_factory=Counter)  # disposition -> active decisions
    undecided: int = 0
    waiting: int = 0  # active judgments waiting for their second judgment (not by disposition)
    quality_eligible: int = 0
    exportable: int = 0

    @property
    def active_total(self) -> int:
        return sum(self.active.values())

    @property
    def judgeability(self) -> float | None:
        judged = self.active_total - self.active["skip"]
        return sum(self.active[d] for d in _JUDGEABLE) / judged if judged else None

    def add_prompt(self, facts: PromptCoverageFacts) -> None:
        self.prompts += 1
        self.runs.update(facts.statuses.values())
        self.pairable_runs += facts.pairable
        self.excluded_runs += len(facts.exclusions)
        for found in facts.exclusions.values():
            self.exclusions.update({e.code for e in found})

    def add_item(self, facts: ItemCoverageFacts) -> None:
        self.items += 1
        self.self_identifying += facts.self_identifying is True
        self.identity_unchecked += facts.self_identifying is None
        if facts.problems:
            self.invalid_items[facts.item_id] = facts.problems
            self.invalid_labels[facts.item_id] = facts.prompt_label
        self.recorded += facts.recorded
        if facts.active is None:
            self.undecided += 1
        elif facts.waiting:
            self.waiting += 1
            return  # what it is eligible for would say what it is
        else:
            self.active[facts.active] += 1
        self.quality_eligible += facts.quality_eligible
        self.exportable += facts.exportable

    def to_json(self) -> dict[str, Any]:
        active = self.active_total + self.waiting
        return {
            "prompts": self.prompts,
            "runs": {
                "total": sum(self.runs.values()),
                "completed": self.runs["completed"],
                "failed": self.runs["failed"],
                "unresolved": self.runs["unresolved"],
                "pairable": self.pairable_runs,
                "excluded": self.excluded_runs,
                "exclusions": dict(sorted(self.exclusions.items())),
            },
            "items": {
                "total": self.items,
                "valid": self.items - len(self.invalid_items),
                "invalid": len(self.invalid_items),
                "invalidItems": [
                    {"itemId": i, "promptLabel": self.invalid_labels.get(i, ""), "problems": list(p)}
                    for i, p in sorted(self.invalid_items.items())
                ],
                "selfIdentifying": self.self_identifying,
                "selfIdentificationNotChecked": self.identity_unchecked,
            },
            "decisions": {
                "recorded": self.recorded,
                "active": active,
                "inactive": self.recorded - active,
                "undecided": self.undecided,
                "open": self.undecided + self.active["skip"] + self.waiting,
                "awaitingSecondJudgment": self.waiting,
                "byDisposition": {d: self.active[d] for d in DISPOSITIONS},
                "judgeabilityRate": self.judgeability,
                "qualityEligible": self.quality_eligible,
                "exportable": self.exportable,
                "evaluationOnly": active - self.exportable,
            },
        }


@dataclass
class Coverage:
    """A campaign version's coverage per scenario family and overall, its training receipts, the
    examples listed in a given export manifest, and the owner-only quality section."""

    campaign_id: str
    version: int
    training_enabled: bool
    families: dict[str, FamilyCoverage]
    overall: FamilyCoverage
    receipts: list[dict[str, Any]] = field(default_factory=list)
    exported: int | None = None
    quality: dict[str, Any] = field(default_factory=dict)
    reviewers: dict[str, ReviewerTally] = field(default_factory=dict)  # reviewer id (as shown) -> decisions
    second_judgments: JudgmentAgreement = field(default_factory=lambda: JudgmentAgreement([]))

    def to_json(self) -> dict[str, Any]:
        return {
            "campaign": {"id": self.campaign_id, "version": self.version},
            "trainingEnabled": self.training_enabled,
            "families": [{"family": name, **self.families[name].to_json()} for name in sorted(self.families)],
            "overall": self.overall.to_json(),
            "reviewers": [{"reviewer": name, **tally.to_json()} for name, tally in self.reviewers.items()],
            "secondJudgments": self.second_judgments.to_json(),
            "exported": self.exported,
            "trainingReceipts": list(self.receipts),
            "quality": dict(self.quality),
        }


def coverage_of(
    campaign_id: str,
    version: int,
    prompts: Iterable[PromptCoverageFacts],
    items: Iterable[ItemCoverageFacts],
    *,
    training_enabled: bool,
) -> Coverage:
    """Aggregate prompt and item facts per family and overall."""
    families: dict[str, FamilyCoverage] = {}
    overall = FamilyCoverage()
    for prompt in prompts:
        families.setdefault(prompt.family, FamilyCoverage()).add_prompt(prompt)
        overall.add_prompt(prompt)
    for item in items:
        families.setdefault(item.family, FamilyCoverage()).add_item(item)
        overall.add_item(item)
    return Coverage(campaign_id, version, training_enabled, families, overall)
