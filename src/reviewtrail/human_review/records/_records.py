"""Human review record types: review prompts, candidate responses, frozen review items, decisions
and campaign settings (docs/human-review.md, "Records").

Every text a person or a model wrote is bounded (the ``*_MAX_CHARS`` constants, counted in
Unicode code points). The record privacy is the envelope's ``privacy``; the functions here that
make records (``new_*_record``) apply the rules that tie a payload to its envelope.
"""

# No ``from __future__ import annotations``: the fields' types are objects, which a decoder takes
# as they are (an annotation given as text is compiled when the decoder is built, at each read).
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

import msgspec
from msgspec import Meta

from reviewtrail._struct import FieldProblem, Model, PayloadStruct, whole
from reviewtrail.cas import DIGEST_PATTERN
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.records._record_names import (
    ACTOR,
    CAMPAIGN,
    CODE_PATTERN,
    DECISION,
    EVIDENCE_MAX_CHARS,
    IDENT_PATTERN,
    INSTRUCTIONS_MAX_CHARS,
    ITEM,
    LABEL_MAX_CHARS,
    MAX_ALLOWLIST,
    MAX_CANDIDATE_AGENTS,
    MAX_REASON_CODES,
    MAX_RESPONSE_TAGS,
    NOTE_MAX_CHARS,
    PROMPT,
    PROMPT_MAX_CHARS,
    RESPONSE,
    RESPONSE_MAX_CHARS,
    SECOND_JUDGMENT,
)
from reviewtrail.human_review.records._self_identification import NAMED, Named
from reviewtrail.ledger import new_record, record_type

if TYPE_CHECKING:
    from reviewtrail.ledger import NewRecord, Privacy

__all__ = [
    "DISPOSITIONS",
    "CampaignIdentity",
    "CampaignRef",
    "CampaignSettings",
    "CandidateSelfIdentification",
    "Criterion",
    "CriterionIdentity",
    "Disposition",
    "Ident",
    "ItemCandidate",
    "Label",
    "ReviewDecision",
    "ReviewItem",
    "ReviewPrompt",
    "ReviewResponse",
    "SecondJudgment",
    "Strength",
    "new_campaign_record",
    "new_decision_record",
    "new_item_record",
    "new_prompt_record",
    "new_second_judgment_record",
]

Disposition = Literal["prefer", "tie", "correct", "underdetermined", "malformed", "skip"]
DISPOSITIONS: tuple[Disposition, ...] = ("prefer", "tie", "correct", "underdetermined", "malformed", "skip")
Strength = Literal["slight", "strong"]

# Identifiers: printable, no spaces, bounded.
Ident = Annotated[str, Meta(min_length=1, max_length=200, pattern=whole(IDENT_PATTERN))]
# Allowlisted reason codes and response tags: lower-case tokens.
Token = Annotated[str, Meta(min_length=1, max_length=64, pattern=whole(CODE_PATTERN))]
Label = Annotated[str, Meta(min_length=1, max_length=LABEL_MAX_CHARS)]
Version = Annotated[int, Meta(ge=1)]
Share = Annotated[float, Meta(ge=0.0, le=1.0)]
Response = Annotated[str, Meta(min_length=1, max_length=RESPONSE_MAX_CHARS)]
Note = Annotated[str, Meta(min_length=1, max_length=NOTE_MAX_CHARS)]
ReasonCodes = Annotated[list[Token], Meta(max_length=MAX_REASON_CODES)]
ResponseTags = Annotated[list[Token], Meta(max_length=MAX_RESPONSE_TAGS)]
Allowlist = Annotated[list[Token], Meta(max_length=MAX_ALLOWLIST)]


class _Part(Model, frozen=True, rename="camel"):
    """Base of the parts of the payloads: wire names in camel case."""


def _unique(values: Sequence[str], field: str) -> None:
    if len(set(values)) != len(values):
        raise FieldProblem(field, f"{field} lists a value twice")


def _without_none(out: dict[str, Any], key: str) -> dict[str, Any]:
    """``out`` without ``key`` when it is null (a field written only when set)."""
    if out.get(key, 0) is None:
        del out[key]
    return out


class CampaignIdentity(_Part, frozen=True, kw_only=True):
    id: Ident
    version: Version
    label: Label


class CampaignRef(_Part, frozen=True, kw_only=True):
    """A campaign version, as items and runs name it."""

    id: Ident
    version: Version


class CriterionIdentity(_Part, frozen=True, kw_only=True):
    id: Ident
    version: Version


class Criterion(_Part, frozen=True, kw_only=True):
    id: Ident
    version: Version
    label: Label
    instructions: Annotated[str, Meta(min_length=1, max_length=INSTRUCTIONS_MAX_CHARS)]
    allowed_reason_codes: Allowlist = msgspec.field(default_factory=list)
    allowed_response_tags: Allowlist = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        _unique(self.allowed_reason_codes, "allowedReasonCodes")
        _unique(self.allowed_response_tags, "allowedResponseTags")

    def identity(self) -> CriterionIdentity:
        return CriterionIdentity(id=self.id, version=self.version)


@record_type(PROMPT)
class ReviewPrompt(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """A source event: one prompt of a campaign, the shared trigger of every candidate run over it."""

    campaign: CampaignIdentity
    scenario_family: Label
    prompt: Annotated[str, Meta(min_length=1, max_length=PROMPT_MAX_CHARS)]
    evidence: Annotated[str, Meta(min_length=1, max_length=EVIDENCE_MAX_CHARS)] | None = None
    criterion: Criterion
    candidate_agent_ids: Annotated[list[Ident], Meta(min_length=2, max_length=MAX_CANDIDATE_AGENTS)]
    external_export_eligible: bool = False

    def __post_init__(self) -> None:
        _unique(self.candidate_agent_ids, "candidateAgentIds")


@record_type(RESPONSE)
class ReviewResponse(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """The one output of a candidate run over a review prompt."""

    response: Response


class ItemCandidate(_Part, frozen=True, kw_only=True):
    run_id: Ident
    output_event_id: Ident
    digest: Annotated[str, Meta(pattern=whole(rf"^{DIGEST_PATTERN}$"))]


class CandidateSelfIdentification(_Part, frozen=True, kw_only=True):
    """A candidate whose text names a candidate's identity: its run id and what it names
    (``own-model``, ``other-provider``...; :mod:`._self_identification`)."""

    run_id: Ident
    named: Annotated[list[Named], Meta(min_length=1, max_length=len(NAMED))]

    def __post_init__(self) -> None:
        _unique(self.named, "named")


@record_type(ITEM)
class ReviewItem(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """One frozen pair of candidate runs over one prompt and criterion.

    ``candidates`` are kept ordered by ``runId``; ``displayOrder`` is the two run ids in the
    order a reviewer sees them (the first is "A"). ``selfIdentification`` lists the candidates
    whose text names a candidate's identity, in candidate order: empty when materialize found
    none, absent (None) in items recorded before it was checked. It is in neither the item id
    nor any candidate digest."""

    item_id: Ident
    campaign: CampaignRef
    prompt_event_id: Ident
    criterion: CriterionIdentity
    candidates: Annotated[list[ItemCandidate], Meta(min_length=2, max_length=2)]
    display_order: Annotated[list[Ident], Meta(min_length=2, max_length=2)]
    self_identification: Annotated[list[CandidateSelfIdentification], Meta(max_length=2)] | None = None

    def __post_init__(self) -> None:
        runs = [c.run_id for c in self.candidates]
        if runs[0] >= runs[1]:
            raise FieldProblem(None, "candidates must be two distinct runs ordered by runId")
        if sorted(self.display_order) != runs:
            raise FieldProblem(None, "displayOrder must list the two candidates' run ids")
        flagged = [f.run_id for f in self.self_identification or ()]
        if flagged != [run for run in runs if run in flagged]:
            raise FieldProblem(None, "selfIdentification must name candidates' run ids, once each, in candidate order")

    def payload_json(self) -> dict[str, Any]:
        return _without_none(super().payload_json(), "selfIdentification")

    def run_ids(self) -> tuple[str, str]:
        return self.candidates[0].run_id, self.candidates[1].run_id

    def self_identifying(self) -> bool | None:
        """Whether a candidate's text names a candidate's identity; None when never checked."""
        return None if self.self_identification is None else bool(self.self_identification)

    def named_by(self, run_id: str) -> tuple[str, ...] | None:
        """What the candidate ``run_id``'s text names (empty for nothing); None when never checked."""
        if self.self_identification is None:
            return None
        return next((tuple(f.named) for f in self.self_identification if f.run_id == run_id), ())


# The docstring is the published schema's description, kept as published (scripts/record_schemas.py --check).
@record_type(DECISION)
class ReviewDecision(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """One reviewer's decision on one item. Which fields go with which disposition, and the
    allowlists, are checked by :func:`reviewtrail.human_review.check_decision`."""

    item_id: Ident
    disposition: Disposition
    preferred: Ident | None = None  # the runId of the winning candidate (prefer)
    strength: Strength | None = None  # prefer only
    replacement: Response | None = None  # correct only
    confidence: Share | None = None
    reason_codes: ReasonCodes = msgspec.field(default_factory=list)
    response_tags: ResponseTags = msgspec.field(default_factory=list)
    note: Note | None = None
    use_for_training: bool = False
    supersedes: Ident | None = None  # the id of the decision record this one replaces
    submission_id: Ident


@record_type(CAMPAIGN)
class CampaignSettings(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """A campaign's settings; a later record for the same campaign and version supersedes it."""

    campaign_id: Ident
    version: Version
    training_enabled: bool = False
    # The share of items (0 to 1) that get a second judgment, for agreement; absent: none (0).
    second_judgment_share: Share | None = None

    def payload_json(self) -> dict[str, Any]:
        return _without_none(super().payload_json(), "secondJudgmentShare")


@record_type(SECOND_JUDGMENT)
class SecondJudgment(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """A second reviewer's judgment of an item another reviewer decided, recorded to measure
    agreement (docs/human-review.md, "Second judgments"). It names the active decision it was
    compared with; it is never a decision: never active, never superseding, never exported. Its
    fields are a decision's judgment fields, checked by the same rules."""

    item_id: Ident
    compared_with: Ident  # the id of the decision record judged again
    disposition: Disposition
    preferred: Ident | None = None
    strength: Strength | None = None
    replacement: Response | None = None
    confidence: Share | None = None
    reason_codes: ReasonCodes = msgspec.field(default_factory=list)
    response_tags: ResponseTags = msgspec.field(default_factory=list)
    note: Note | None = None
    submission_id: Ident

    @classmethod
    def of_decision(cls, decision: ReviewDecision, compared_with: str) -> Self:
        """A decision's judgment fields as a second judgment of the decision ``compared_with``
        (``useForTraining`` and ``supersedes`` are not kept)."""
        return cls(**_fields_in(cls, decision), compared_with=compared_with)

    def as_decision(self) -> ReviewDecision:
        """The judgment as a decision's fields (never recorded as one), to check it by the decision rules."""
        return ReviewDecision(**_fields_in(ReviewDecision, self))


def _fields_in(model: type[msgspec.Struct], source: msgspec.Struct) -> dict[str, Any]:
    """The values of ``source``'s fields that ``model`` has too."""
    shared = set(model.__struct_fields__)
    return {name: getattr(source, name) for name in source.__struct_fields__ if name in shared}


def new_prompt_record(payload: ReviewPrompt, privacy: "Privacy", *, actor: str = ACTOR) -> "NewRecord":
    """The record of a review prompt. The envelope privacy is authoritative: only a
    ``public-source`` prompt may be ``externalExportEligible``."""
    if payload.external_export_eligible and privacy != "public-source":
        raise InvalidInputError(
            f"only a public-source prompt may be eligible for external export (privacy is {privacy})",
            field="externalExportEligible",
        )
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.campaign.id)


def new_item_record(payload: ReviewItem, privacy: "Privacy", *, actor: str = ACTOR) -> "NewRecord":
    """The record of a review item, about its prompt; its id is the item id's record."""
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.item_id)


def new_decision_record(payload: ReviewDecision, privacy: "Privacy", *, actor: str = ACTOR) -> "NewRecord":
    """The record of a decision, about its item. A superseded decision is also named in the
    envelope's ``supersedes``, so the ledger checks it is an earlier record."""
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.item_id, supersedes=payload.supersedes)


def new_campaign_record(payload: CampaignSettings, *, supersedes: str | None = None, actor: str = ACTOR) -> "NewRecord":
    """The record of a campaign's settings (always private: it is not training data)."""
    return new_record(payload, actor=actor, privacy="private", subject=payload.campaign_id, supersedes=supersedes)


def new_second_judgment_record(payload: SecondJudgment, privacy: "Privacy", *, actor: str) -> "NewRecord":
    """The record of a second judgment, about its item; it supersedes nothing."""
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.item_id)
