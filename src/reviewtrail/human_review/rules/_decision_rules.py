"""Pure rules of review decisions: the one decision input every surface builds, what a decision
may carry, which decision of an item is active, and idempotent submissions (docs/human-review.md,
"Decisions")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any

import msgspec

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.records._record_names import MAX_REASON_CODES, MAX_RESPONSE_TAGS
from reviewtrail.human_review.records._records import (
    DISPOSITIONS,
    Criterion,
    Disposition,
    ReviewDecision,
    ReviewItem,
    Strength,
)

__all__ = [
    "ActiveDecision",
    "DecisionFact",
    "DecisionInput",
    "Refusal",
    "active_decisions",
    "check_decision",
    "first_submission",
]


_SEQ = attrgetter("seq")
_WIRE_NAMES = {"reason_codes": "reasonCodes", "response_tags": "responseTags", "use_for_training": "useForTraining"}


class DecisionInput(msgspec.Struct, frozen=True):
    """What a reviewer decides, as every surface gives it: ``review decide``, the write route and
    the MCP tool build this one object (:meth:`chosen`, :meth:`of`, the tool's arguments) and pass
    it to :func:`~reviewtrail.human_review.session.decide`, which checks it once, as the record's payload,
    by :func:`check_decision`. ``preferred`` is the position shown ("A" or "B", either case) or a
    run id; it is recorded as the run id."""

    disposition: Disposition
    preferred: str | None = None
    strength: Strength | None = None
    replacement: str | None = None
    confidence: float | None = None
    reason_codes: tuple[str, ...] = ()
    response_tags: tuple[str, ...] = ()
    note: str | None = None
    use_for_training: bool = False
    supersedes: str | None = None

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> DecisionInput:
        """The decision of the fields named in ``values`` (a list as a tuple; other names ignored)."""
        names = set(cls.__struct_fields__)
        given: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if k in names}
        return cls(**given)

    @classmethod
    def chosen(cls, given: Mapping[str, bool], **values: Any) -> DecisionInput:
        """The decision whose disposition is the only one ``given`` as true (``review decide``'s
        flags), with ``values``; exactly one, else exit 2 (field ``disposition``) naming the flags."""
        flags = [f"--{d}" for d in DISPOSITIONS]
        said = [flag for d, flag in zip(DISPOSITIONS, flags, strict=True) if given.get(d)]
        if len(said) != 1:
            raise InvalidInputError(
                f"give exactly one of {', '.join(flags)} (got {', '.join(said) or 'none'})", field="disposition"
            )
        return cls.of({**values, "disposition": said[0].removeprefix("--")})

    def to_wire(self) -> dict[str, Any]:
        """The decision fields in wire names, unset optional fields left out."""
        out: dict[str, Any] = {}
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if value is not None:
                out[_WIRE_NAMES.get(name, name)] = list(value) if isinstance(value, tuple) else value
        return out


class Refusal(msgspec.Struct, frozen=True):
    """Why a decision is refused: the field (wire name) and the problem."""

    field: str
    problem: str

    def error(self) -> InvalidInputError:
        return InvalidInputError(self.problem, field=self.field)


def check_decision(decision: ReviewDecision, item: ReviewItem, criterion: Criterion) -> Refusal | None:
    """The first reason ``decision`` may not be recorded on ``item`` judged by ``criterion``, or
    None. ``prefer`` names one of the item's two runs and a strength; ``correct`` carries a
    replacement; every other disposition carries none of them. Reason codes and response tags
    come from the criterion's allowlists, at most two of each, none twice."""
    if decision.item_id != item.item_id:
        return Refusal("itemId", f"the decision is for item {decision.item_id}, not {item.item_id}")
    if criterion.identity() != item.criterion:
        return Refusal("criterion", f"the item is judged by criterion {item.criterion.id}@{item.criterion.version}")
    return _shape(decision, item) or _allowlisted(decision, criterion)


def _shape(decision: ReviewDecision, item: ReviewItem) -> Refusal | None:
    disposition = decision.disposition
    if disposition == "prefer":
        if decision.preferred is None:
            return Refusal("preferred", "prefer must name the preferred candidate's run")
        if decision.preferred not in item.run_ids():
            return Refusal("preferred", f"{decision.preferred} is not one of the item's two candidates")
        if decision.strength is None:
            return Refusal("strength", "prefer must carry a strength (slight or strong)")
    elif decision.preferred is not None:
        return Refusal("preferred", f"{disposition} must not name a preferred candidate")
    elif decision.strength is not None:
        return Refusal("strength", f"{disposition} must not carry a strength")
    if disposition == "correct":
        if decision.replacement is None:
            return Refusal("replacement", "correct must carry a replacement response")
    elif decision.replacement is not None:
        return Refusal("replacement", f"{disposition} must not carry a replacement response")
    return None


def _allowlisted(decision: ReviewDecision, criterion: Criterion) -> Refusal | None:
    lists = (
        ("reasonCodes", decision.reason_codes, criterion.allowed_reason_codes, MAX_REASON_CODES),
        ("responseTags", decision.response_tags, criterion.allowed_response_tags, MAX_RESPONSE_TAGS),
    )
    for field, values, allowed, most in lists:
        if not values:
            continue
        if len(values) > most:
            return Refusal(field, f"at most {most} values")
        if len(set(values)) != len(values):
            return Refusal(field, "a value is listed twice")
        for value in values:
            if value not in allowed:
                return Refusal(field, f"{value} is not allowed by criterion {criterion.id}@{criterion.version}")
    return None


class DecisionFact(msgspec.Struct, frozen=True):
    """A recorded decision: its record id and seq, its payload, whether it passed
    :func:`check_decision` against its item (a decision recorded by another writer may not), and
    who recorded it (the record's actor)."""

    decision_id: str
    seq: int
    decision: ReviewDecision
    valid: bool = True
    actor: str = ""

    @property
    def item_id(self) -> str:
        return self.decision.item_id


class ActiveDecision(msgspec.Struct, frozen=True):
    """The active decision of an item and the ids of the earlier decisions it leaves inactive
    (superseded, or concurrent leaves), oldest first."""

    decision: DecisionFact
    inactive: tuple[str, ...]


def active_decisions(decisions: Iterable[DecisionFact]) -> dict[str, ActiveDecision]:
    """Item id → its one active decision: the latest (highest seq) counted decision of the item.

    A decision counts when it is valid, is the first record of its submission id, and names
    in ``supersedes`` (if anything) an earlier decision of the same item. Older decisions are
    inactive whether or not they were superseded by name, so two racing writers can never leave
    two active decisions. The order of ``decisions`` does not matter."""
    seen_submissions: set[str] = set()
    item_of: dict[str, tuple[str, int]] = {}
    counted: dict[str, list[DecisionFact]] = {}
    for fact in sorted(decisions, key=_SEQ):
        duplicate = fact.decision.submission_id in seen_submissions
        seen_submissions.add(fact.decision.submission_id)
        item_of.setdefault(fact.decision_id, (fact.item_id, fact.seq))
        target = fact.decision.supersedes
        bad_link = target is not None and (target not in item_of or item_of[target][0] != fact.item_id)
        if fact.valid and not duplicate and not bad_link and target != fact.decision_id:
            counted.setdefault(fact.item_id, []).append(fact)
    return {
        item: ActiveDecision(facts[-1], tuple([f.decision_id for f in facts[:-1]])) for item, facts in counted.items()
    }


def first_submission(decisions: Iterable[DecisionFact], submission_id: str) -> DecisionFact | None:
    """The first recorded decision of ``submission_id``: what a resubmission returns (and then
    appends nothing)."""
    matching = [f for f in decisions if f.decision.submission_id == submission_id]
    return min(matching, key=lambda f: f.seq) if matching else None
