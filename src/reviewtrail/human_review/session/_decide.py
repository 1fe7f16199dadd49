"""Recording a reviewer's decision on a review item (docs/human-review.md, "Deciding"): made by a
named reviewer, idempotent by submission id, refused on an item that no longer binds what it
froze, checked against the item and its criterion, never more open than the item's privacy chain,
and never a silent replacement of the item's active decision."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import msgspec

from reviewtrail._struct import parse
from reviewtrail.errors import ConflictError, IntegrityError, InvalidInputError, NotFoundError
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._resolve import ResolvedItem, blinded_problems, item_decisions, resolve_item
from reviewtrail.human_review.records._projection import SKIP
from reviewtrail.human_review.records._record_names import DECISION, PRIVACY_ORDER, SECOND_JUDGMENT
from reviewtrail.human_review.records._records import Disposition, ReviewDecision, new_decision_record
from reviewtrail.human_review.rules._decision_rules import (
    DecisionFact,
    DecisionInput,
    active_decisions,
    check_decision,
)
from reviewtrail.human_review.rules._eligibility import privacy_join
from reviewtrail.human_review.rules._labels import prompt_label
from reviewtrail.human_review.rules._reviewers import check_reviewer_id, reviewer_label
from reviewtrail.human_review.session._reveal import CandidateProvenance, gated_provenance, preferred_run
from reviewtrail.human_review.session._second_judgments import (
    ItemJudgments,
    item_judgments,
    record_second_judgment,
    second_judgment_share,
)
from reviewtrail.ledger import Envelope, Ledger, Privacy
from reviewtrail.store import Store

__all__ = ["DecisionResult", "decide"]


@dataclass(frozen=True)
class DecisionResult:
    """A recorded decision: its id, whether it is the item's active decision now, how many
    earlier decisions of the item it left inactive when it was recorded, whether this call was a
    resubmission (nothing appended), and the provenance of candidates A and B, each through the
    reveal gate: shown once no open item shows its response, else withheld saying when."""

    decision_id: str
    seq: int
    item_id: str
    prompt_label: str  # the item's prompt's first words (:func:`~._labels.prompt_label`)
    submission_id: str
    reviewer: str
    disposition: Disposition
    active: bool
    superseded: int
    resubmitted: bool
    privacy: Privacy
    provenance: tuple[CandidateProvenance, ...]
    compared_with: str | None = None  # a second judgment: the decision it judged again
    #: The skip this decision superseded, when it superseded one: (decision id, its reviewer).
    superseded_skip: tuple[str, str] | None = None

    @property
    def notice(self) -> str | None:
        """What the decision did beyond its own record: "supersedes the skip by REVIEWER"."""
        if self.superseded_skip is None:
            return None
        return f"supersedes the skip by {self.superseded_skip[1]} (decision {self.superseded_skip[0]})"

    def to_json(self) -> dict[str, Any]:
        second = {} if self.compared_with is None else {"secondJudgment": True, "comparedWith": self.compared_with}
        return second | {
            "decisionId": self.decision_id,
            "seq": self.seq,
            "itemId": self.item_id,
            "promptLabel": self.prompt_label,
            "submissionId": self.submission_id,
            "reviewer": self.reviewer,
            "disposition": self.disposition,
            "active": self.active,
            "superseded": self.superseded,
            "resubmitted": self.resubmitted,
            "privacy": self.privacy,
            "provenance": [p.to_json() for p in self.provenance],
            "supersedesSkip": None
            if self.superseded_skip is None
            else {"decisionId": self.superseded_skip[0], "reviewer": self.superseded_skip[1]},
            "notice": self.notice,
        }


def decide(
    store: Store,
    item_id: str,
    payload: dict[str, Any] | DecisionInput,
    *,
    submission_id: str | None = None,
    privacy: Privacy | None = None,
    reviewer: str | None,
    campaign: tuple[str, int] | None = None,
    second: bool | None = None,
) -> DecisionResult:
    """Record ``reviewer``'s decision on ``item_id`` (``payload``: a :class:`DecisionInput`, or its
    fields in wire names), unless its submission id is already recorded: then return that first
    result and append nothing (``resubmitted``). Without a submission id a random one is used. The
    reviewer id is the record's actor (:func:`check_reviewer_id`; no default: a missing one is
    exit 5).

    Refusals append nothing and name the field: an unknown item (``item``, exit 3); an item that
    no longer binds what it froze (``item``, :class:`ConflictError`, exit 6: a label is never
    bound to bytes that changed); a submission id recorded for another item (``submissionId``,
    exit 6); a payload that is not a decision or does not fit the item and its criterion (the
    wire field, exit 2); ``supersedes`` naming no decision of this item (exit 2); an item that
    has an active decision which ``supersedes`` does not name (``supersedes``, exit 6, naming that
    decision and its reviewer: nothing is replaced silently; a decision recorded by another
    reviewer meanwhile is refused the same way, at append); a ``privacy`` more open than the
    item's privacy chain.

    Second judgments (docs/human-review.md, "Second judgments"): with ``second`` None, a decision
    that supersedes nothing, on an item the campaign selected for a second judgment whose active
    judgment is another reviewer's and that this reviewer has not judged again, is recorded as a
    second judgment of that decision (never a decision: ``secondJudgment`` in the answer; a
    ``useForTraining`` it carries is not kept); ``second=True`` asks for one and refuses an item
    that is not due one (field ``second``, or ``reviewer`` for one's own decision); ``second=False``
    never records one."""
    actor = check_reviewer_id(reviewer)
    wire = dict(payload.to_wire() if isinstance(payload, DecisionInput) else payload)
    sid = _submission_id(wire, submission_id)
    ledger = store.ledger
    # What the item rests on, read from its records in a few bulk reads (each record checked).
    records = Preloaded(ledger, [item_id], ledger.stored_rows("hr_items", item_id=item_id))
    seconds = ledger.records_about([item_id], type=SECOND_JUDGMENT)
    again = next((env for env in seconds if env.payload_value.get("submissionId") == sid), None)
    if again is not None:
        return _result(ledger, records, resolve_item(records, item_id), again.id, resubmitted=True, second=again)
    first = _recorded(ledger, records, sid, item_id)
    if first is not None:
        return first
    resolved = resolve_item(records, item_id)
    _check_campaign(resolved, campaign)
    if not resolved.valid:
        reasons = "; ".join(blinded_problems(resolved))
        raise ConflictError(f"the item no longer binds what it froze, so it cannot be decided: {reasons}", field="item")
    decision = _decision(wire, resolved, sid)
    refusal = check_decision(decision, resolved.item, resolved.prompt.criterion)
    if refusal is not None:
        raise refusal.error()
    _check_supersedes(records, decision.supersedes, item_id)
    if second and decision.use_for_training:
        raise InvalidInputError("a second judgment is never used for training", field="useForTraining")
    if second is not False:
        share = second_judgment_share(ledger, resolved.item.campaign.id, resolved.item.campaign.version)
        judged = item_judgments(records, resolved, seconds, share)
        compared = judged.due(actor) if decision.supersedes is None else None
        if compared is not None:
            env = record_second_judgment(store, decision, compared, _privacy(resolved, privacy), actor=actor)
            return _result(ledger, records, resolved, env.id, resubmitted=False, second=env)
        if second:
            raise _not_due(judged, actor, decision)
    decision = _check_not_replacing(records, item_decisions(records, resolved.item, resolved.prompt), decision)
    record = new_decision_record(decision, _privacy(resolved, privacy), actor=actor)
    try:
        [appended] = store.append([record])
    except ConflictError as exc:
        if exc.field not in ("hr_submissions", "hr_decision_links"):
            raise
        # Recorded meanwhile: this submission (a concurrent resubmission: return that one), or
        # another decision on the item (refused, naming it).
        records.include(ledger.records_about([item_id], type=DECISION))
        first = _recorded(ledger, records, sid, item_id)
        if first is not None:
            return first
        if exc.field == "hr_submissions":
            raise
        _check_not_replacing(records, item_decisions(records, resolved.item, resolved.prompt), decision)
        raise
    if records.head and appended.seq == records.head + 1:
        records.include([appended])  # nothing was recorded between the read and this decision
    return _result(ledger, records, resolved, record.id, resubmitted=False)


def _not_due(judged: ItemJudgments, actor: str, decision: ReviewDecision) -> InvalidInputError | ConflictError:
    """Why the reviewer cannot record a second judgment of the item."""
    item = judged.resolved.item.item_id
    active = judged.active
    if decision.supersedes is not None:
        return InvalidInputError("a second judgment supersedes nothing", field="supersedes")
    if not judged.selected:
        return InvalidInputError(f"item {item} is not selected for a second judgment", field="second")
    if active is None or active[2] == SKIP:
        return InvalidInputError(f"item {item} has no active judgment to judge again: decide it", field="second")
    if active[1] == actor:
        return InvalidInputError(
            f"the active decision {active[0]} of item {item} is your own: a second judgment is another reviewer's",
            field="reviewer",
        )
    if any(f.reviewer == actor for f in judged.seconds):
        return ConflictError(f"you already recorded a second judgment of item {item}", field="second")
    return ConflictError(f"item {item} already has its second judgment", field="second")


def _check_campaign(resolved: ResolvedItem, campaign: tuple[str, int] | None) -> None:
    if campaign is None:
        return
    recorded = (resolved.item.campaign.id, resolved.item.campaign.version)
    if recorded != campaign:
        raise InvalidInputError(
            f"item {resolved.item.item_id} belongs to campaign {recorded[0]} version {recorded[1]}, "
            f"not {campaign[0]} version {campaign[1]}",
            field="campaignId",
        )


def _submission_id(wire: dict[str, Any], given: str | None) -> str:
    carried = wire.pop("submissionId", None)
    if given is not None and carried is not None and carried != given:
        raise InvalidInputError(f"the payload carries {carried!r}, the call gives {given!r}", field="submissionId")
    chosen = given if given is not None else carried
    if chosen is None:
        return str(uuid.uuid4())
    if not isinstance(chosen, str):
        raise InvalidInputError("must be a string", field="submissionId")
    return chosen


def _recorded(ledger: Ledger, records: Preloaded, submission_id: str, item_id: str) -> DecisionResult | None:
    """The first result of ``submission_id`` when it is recorded: found among the item's own
    decision records (read from the chain), or, for another item, refused."""
    found = _submitted(records, submission_id, item_id)
    if found is not None:
        return _result(ledger, records, resolve_item(records, item_id), found, resubmitted=True)
    rows = ledger.rows("hr_submissions", submission_id=submission_id)
    if not rows:
        return None
    env = ledger.get(rows[0]["record_id"])
    recorded_item = env.payload_value.get("itemId")
    if recorded_item != item_id:
        raise ConflictError(
            f"submission {submission_id} is already recorded for another item ({recorded_item})", field="submissionId"
        )
    # Recorded since the item's records were read (a racing resubmission): read its decisions again.
    records.include(ledger.records_about([item_id], type=DECISION))
    found = _submitted(records, submission_id, item_id)
    if found is not None:
        return _result(ledger, records, resolve_item(records, item_id), found, resubmitted=True)
    raise IntegrityError(
        f"query table hr_submissions names decision {env.id} on item {item_id}, which the item's records do not "
        "hold; run 'reviewtrail verify'",
        field="hr_submissions",
    )


def _submitted(records: Preloaded, submission_id: str, item_id: str) -> str | None:
    """The id of the item's decision record holding ``submission_id``, if one is held."""
    for row in records.rows("hr_decisions", item_id=item_id):
        env = records.get(row["record_id"])
        if env.payload_value.get("submissionId") == submission_id:
            return env.id
    return None


def _decision(wire: dict[str, Any], resolved: ResolvedItem, submission_id: str) -> ReviewDecision:
    given_item = wire.pop("itemId", resolved.item.item_id)
    if given_item != resolved.item.item_id:
        raise InvalidInputError(f"the payload is for item {given_item!r}, not {resolved.item.item_id}", field="itemId")
    preferred = wire.get("preferred")
    if isinstance(preferred, str):
        wire["preferred"] = preferred_run(resolved.item, preferred)
    fields = {**wire, "itemId": resolved.item.item_id, "submissionId": submission_id}
    return parse(ReviewDecision, fields, field="decision")


def _check_supersedes(records: Preloaded, supersedes: str | None, item_id: str) -> None:
    """``supersedes`` must name a decision of this item (its decisions read from the chain)."""
    if supersedes is None:
        return
    if any(r["record_id"] == supersedes for r in records.rows("hr_decisions", item_id=item_id)):
        return
    try:
        env = records.get(supersedes)
    except NotFoundError:
        env = None
    if env is None or env.type != DECISION:
        raise InvalidInputError(f"{supersedes} is not a recorded decision", field="supersedes")
    raise InvalidInputError(f"{supersedes} is a decision on another item, not on {item_id}", field="supersedes")


def _check_not_replacing(records: Preloaded, facts: list[DecisionFact], decision: ReviewDecision) -> ReviewDecision:
    """A decision on an item that has one must name it in ``supersedes``: the item's active
    decision, or, when none of its decisions counts, its latest decision record (the one no other
    supersedes). Otherwise :class:`ConflictError` naming that decision and its reviewer. (That
    decision being this very submission, recorded meanwhile, is a resubmission, which the append
    finds.) The one exception: an active ``skip`` supplies no judgment, so a decision that
    supersedes nothing supersedes it, named (the decision returned names it in ``supersedes``;
    the result says whose skip it superseded). A skip never replaces a judgment (exit 2, field
    ``disposition``): the item was revealed once judged, so it is never served as open again."""
    if not facts:
        return decision
    active = active_decisions(facts).get(facts[0].item_id)
    current = active.decision if active is not None else max(facts, key=lambda f: f.seq)
    supersedes = decision.supersedes
    if current.decision.submission_id == decision.submission_id:
        return decision
    if supersedes == current.decision_id:
        if decision.disposition == SKIP and active is not None and current.decision.disposition != SKIP:
            raise InvalidInputError(
                f"a skip cannot replace the judgment {current.decision_id} ({current.decision.disposition}) of "
                f"item {current.item_id}: once judged, who produced its candidates may have been revealed, so it "
                "cannot be served blinded again; to withdraw the judgment, decide underdetermined or malformed",
                field="disposition",
            )
        return decision
    if supersedes is None and active is not None and current.decision.disposition == SKIP:
        return msgspec.structs.replace(decision, supersedes=current.decision_id)
    who = reviewer_label(records.get(current.decision_id).actor)
    said = "that supersedes nothing" if supersedes is None else f"superseding {supersedes}, which is not it,"
    raise ConflictError(
        f"item {current.item_id} already has an active decision {current.decision_id} "
        f"({current.decision.disposition}, by reviewer {who}); a decision {said} would replace it silently: "
        f"to change it, decide again superseding it (--supersedes {current.decision_id})",
        field="supersedes",
    )


def chain_privacy(resolved: ResolvedItem) -> Privacy:
    """The privacy of the item's chain as it stands: the join of its prompt, the item and both
    candidates' runs and outputs. A decision on it is never more open."""
    levels = [resolved.prompt_privacy, resolved.item_privacy]
    for facts, _ in resolved.candidates.values():
        levels += [facts.run_privacy, facts.output_privacy]
    return privacy_join(levels)


def _privacy(resolved: ResolvedItem, given: str | None) -> Privacy:
    floor = chain_privacy(resolved)
    if given is None:
        return floor
    chosen = privacy_join([given])
    if PRIVACY_ORDER.index(chosen) < PRIVACY_ORDER.index(floor):
        raise InvalidInputError(
            f"{given} is more open than the item's privacy ({floor}); nothing declassifies", field="privacy"
        )
    return chosen


def _result(
    ledger: Ledger,
    records: Preloaded,
    resolved: ResolvedItem,
    decision_id: str,
    *,
    resubmitted: bool,
    second: Envelope | None = None,
) -> DecisionResult:
    """The result of a decision: the item's decisions as the chain holds them (read again when
    the decision is not among the records read, as when others appended meanwhile), the
    candidates' provenance from what the decision was checked against. ``second``: the record
    of a second judgment (never active, superseding nothing)."""
    if second is not None:
        payload = second.payload_value
        return DecisionResult(
            decision_id=second.id,
            seq=second.seq,
            item_id=resolved.item.item_id,
            prompt_label=prompt_label(resolved.prompt.prompt),
            submission_id=str(payload["submissionId"]),
            reviewer=reviewer_label(second.actor),
            disposition=payload["disposition"],
            active=False,
            superseded=0,
            resubmitted=resubmitted,
            privacy=privacy_join([second.privacy]),
            # Through the gate: a skip gives no verdict, so the item still waits and stays blinded.
            provenance=gated_provenance(records, resolved.item),
            compared_with=str(payload["comparedWith"]),
        )
    if decision_id not in records:  # recorded since the item's records were read: read its decisions again
        records.include(ledger.records_about([resolved.item.item_id], type=DECISION))
    facts = item_decisions(records, resolved.item, resolved.prompt)
    [ours] = [f for f in facts if f.decision_id == decision_id]
    now = active_decisions(facts).get(resolved.item.item_id)
    return DecisionResult(
        decision_id=decision_id,
        seq=ours.seq,
        item_id=resolved.item.item_id,
        prompt_label=prompt_label(resolved.prompt.prompt),
        submission_id=ours.decision.submission_id,
        reviewer=reviewer_label(records.get(decision_id).actor),
        disposition=ours.decision.disposition,
        active=now is not None and now.decision.decision_id == decision_id,
        superseded=superseded_count(facts, ours),
        resubmitted=resubmitted,
        privacy=privacy_join([records.get(decision_id).privacy]),
        provenance=gated_provenance(records, resolved.item),
        superseded_skip=_superseded_skip(records, facts, ours),
    )


def _superseded_skip(records: Preloaded, facts: list[DecisionFact], ours: DecisionFact) -> tuple[str, str] | None:
    """The skip ``ours`` supersedes by name, and its reviewer, if it supersedes one."""
    named = ours.decision.supersedes
    skip = next((f for f in facts if f.decision_id == named and f.decision.disposition == SKIP), None)
    if skip is None:
        return None
    return skip.decision_id, reviewer_label(records.get(skip.decision_id).actor)


def counted_when_recorded(facts: list[DecisionFact], ours: DecisionFact) -> bool:
    """Whether ``ours`` was the item's active decision once it was recorded (it does not count:
    a duplicate submission, an invalid decision, a bad ``supersedes``)."""
    then = active_decisions(f for f in facts if f.seq <= ours.seq).get(ours.item_id)
    return then is not None and then.decision.decision_id == ours.decision_id


def superseded_count(facts: list[DecisionFact], ours: DecisionFact) -> int:
    """How many earlier decisions of the item ``ours`` left inactive when it was recorded (0 when
    it does not count, :func:`counted_when_recorded`)."""
    if not counted_when_recorded(facts, ours):
        return 0
    return len(active_decisions(f for f in facts if f.seq <= ours.seq)[ours.item_id].inactive)
