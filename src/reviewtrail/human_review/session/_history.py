"""An item's decision history: every decision, the active one and what it is good for, and the
candidates' provenance, revealed once the item has a decision and no open item shows the same
response (the reveal gate; docs/human-review.md, "The queue and history" and "Blinding")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from reviewtrail.human_review.reads._campaign_read import campaign_training, training_when_decided
from reviewtrail.human_review.reads._chains import current
from reviewtrail.human_review.reads._resolve import ResolvedItem, blinded_problems, item_decisions, resolve_item
from reviewtrail.human_review.rules._decision_rules import DecisionFact, active_decisions
from reviewtrail.human_review.rules._eligibility import (
    ChainPrivacy,
    Eligibility,
    externally_eligible,
    quality_eligible,
)
from reviewtrail.human_review.rules._frozen import POSITIONS
from reviewtrail.human_review.rules._labels import prompt_label
from reviewtrail.human_review.rules._reviewers import reviewer_label
from reviewtrail.human_review.session._decide import counted_when_recorded, superseded_count
from reviewtrail.human_review.session._reveal import CandidateProvenance, gated_provenance
from reviewtrail.human_review.session._second_judgments import pending_second_judgment
from reviewtrail.ledger import Ledger
from reviewtrail.store import Store

__all__ = ["WITHHELD", "DecisionEntry", "History", "history"]

#: The disposition shown for a decision whose item waits for its second judgment.
WITHHELD = "withheld until the second judgment"


@dataclass(frozen=True)
class DecisionEntry:
    """One recorded decision of an item: who made it (its reviewer id), whether it counts and
    whether it is the active one."""

    decision_id: str
    seq: int
    reviewer: str
    disposition: str
    preferred: str | None  # the position ("A", "B") of the preferred candidate (prefer)
    strength: str | None
    active: bool
    counted: bool
    supersedes: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "decisionId": self.decision_id,
            "seq": self.seq,
            "reviewer": self.reviewer,
            "disposition": self.disposition,
            "preferred": self.preferred,
            "strength": self.strength,
            "active": self.active,
            "counted": self.counted,
            "supersedes": self.supersedes,
        }


@dataclass(frozen=True)
class History:
    """The decisions of an item. ``active`` is the active decision's entry (None before any);
    ``superseded`` how many earlier decisions it left inactive; ``quality`` and ``external`` the
    eligibility facts of the active decision; ``provenance`` the candidates A and B, empty while
    the item has no decision, each through the reveal gate once it has one (a withheld position
    says when it is shown)."""

    item_id: str
    prompt_label: str  # the prompt's first words (:func:`~._labels.prompt_label`)
    valid: bool
    problems: tuple[str, ...]
    decisions: tuple[DecisionEntry, ...]
    active: DecisionEntry | None
    superseded: int
    quality: Eligibility | None
    external: Eligibility | None
    provenance: tuple[CandidateProvenance, ...]
    campaign_id: str
    campaign_version: int
    allowed_reason_codes: tuple[str, ...]  # the criterion's allowlists, for a superseding decision
    allowed_response_tags: tuple[str, ...]
    #: The active judgment waits for the second judgment its campaign asks for: until it is
    #: recorded, what each decision says (disposition, choice, strength, eligibility) is withheld
    #: from everyone, so the second reviewer judges without knowing the first judgment.
    awaiting_second_judgment: bool = False

    @property
    def use(self) -> str | None:
        """``export-eligible`` or ``evaluation-only`` for the active decision; None before any."""
        if self.active is None:
            return None
        return "export-eligible" if self.external is not None and self.external.eligible else "evaluation-only"

    @property
    def blinded(self) -> bool:
        """Whether no producer is shown: no decision yet, or both withheld by the reveal gate."""
        return all(p.withheld is not None for p in self.provenance)

    def to_json(self) -> dict[str, Any]:
        def fact(e: Eligibility | None) -> dict[str, Any] | None:
            return None if e is None else {"eligible": e.eligible, "reason": e.reason}

        return {
            "itemId": self.item_id,
            "promptLabel": self.prompt_label,
            "valid": self.valid,
            "problems": list(self.problems),
            "active": self.active.to_json() if self.active else None,
            "use": self.use,
            "qualityEligible": fact(self.quality),
            "externallyEligible": fact(self.external),
            "superseded": self.superseded,
            "decisions": [d.to_json() for d in self.decisions],
            "blinded": self.blinded,
            "provenance": [p.to_json() for p in self.provenance] if self.provenance else None,
            "campaign": {"id": self.campaign_id, "version": self.campaign_version},
            "awaitingSecondJudgment": self.awaiting_second_judgment,
            "allowedReasonCodes": list(self.allowed_reason_codes),
            "allowedResponseTags": list(self.allowed_response_tags),
        }


def history(store: Store, item_id: str) -> History:
    """The history of ``item_id`` (exit 3, field ``item``, when there is none), read from one
    state of the ledger."""
    with store.ledger.snapshot():
        return _history(store.ledger, item_id)


def _history(ledger: Ledger, item_id: str) -> History:
    resolved = resolve_item(ledger, item_id)
    facts = item_decisions(ledger, resolved.item, resolved.prompt)
    active = active_decisions(facts).get(item_id)
    counted = {f.decision_id for f in facts if counted_when_recorded(facts, f)}
    entries = tuple(
        DecisionEntry(
            f.decision_id,
            f.seq,
            reviewer_label(ledger.get(f.decision_id).actor),
            f.decision.disposition,
            _position(resolved, f.decision.preferred),
            f.decision.strength,
            active is not None and active.decision.decision_id == f.decision_id,
            f.decision_id in counted,
            f.decision.supersedes,
        )
        for f in facts
    )
    awaiting = active is not None and pending_second_judgment(ledger, item_id, snapshot=False)
    if awaiting:
        entries = tuple(replace(e, disposition=WITHHELD, preferred=None, strength=None) for e in entries)
    chosen = next((e for e in entries if e.active), None)
    quality = external = None
    superseded = 0
    if active is not None:
        superseded = superseded_count(facts, active.decision)
        if not awaiting:
            quality, external = _eligibility(ledger, resolved, active.decision)
    problems = resolved.problems if facts else blinded_problems(resolved)
    provenance = gated_provenance(ledger, resolved.item) if facts else ()
    label = prompt_label(resolved.prompt.prompt)
    criterion = resolved.prompt.criterion
    return History(
        item_id,
        label,
        resolved.valid,
        problems,
        entries,
        chosen,
        superseded,
        quality,
        external,
        provenance,
        resolved.item.campaign.id,
        resolved.item.campaign.version,
        tuple(criterion.allowed_reason_codes),
        tuple(criterion.allowed_response_tags),
        awaiting,
    )


def _position(resolved: ResolvedItem, run_id: str | None) -> str | None:
    if run_id is None or run_id not in resolved.item.display_order:
        return None
    return POSITIONS[resolved.item.display_order.index(run_id)]


def _eligibility(ledger: Ledger, resolved: ResolvedItem, fact: DecisionFact) -> tuple[Eligibility, Eligibility]:
    campaign = (ledger, resolved.item.campaign.id, resolved.item.campaign.version)
    enabled, when = campaign_training(*campaign), training_when_decided(*campaign, fact.seq)
    decision = fact.decision
    quality = quality_eligible(decision, training_enabled=enabled, enabled_when_decided=when)
    if not resolved.valid:
        reasons = "; ".join(resolved.problems)
        return quality, Eligibility(False, f"the item no longer binds what it froze: {reasons}")
    decision_privacy = current(ledger, ledger.get(fact.decision_id)).privacy
    a, b = (resolved.candidates[run][0] for run in resolved.item.display_order)
    chain = ChainPrivacy(
        prompt=resolved.prompt_privacy,
        item=resolved.item_privacy,
        run_a=a.run_privacy,
        run_b=b.run_privacy,
        output_a=a.output_privacy,
        output_b=b.output_privacy,
        decision=decision_privacy,
    )
    external = externally_eligible(
        decision, training_enabled=enabled, prompt=resolved.prompt, privacy=chain, enabled_when_decided=when
    )
    return quality, external
