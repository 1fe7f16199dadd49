"""Human review record types: review prompts, candidate responses, frozen review items, decisions
and campaign settings (docs/human-review.md, "Records").

Every text a person or a model wrote is bounded (the ``*_MAX_CHARS`` constants, counted in
Unicode code points). The record privacy is the envelope's ``privacy``; the functions here that
make records (``new_*_record``) apply the rules that tie a payload to its envelope.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from reviewtrail._strict import IS_FLOAT, StrictBool, StrictInt
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
    prompt_digest,
)
from reviewtrail.human_review.records._self_identification import NAMED, Named
from reviewtrail.ledger import (
    NewRecord,
    Privacy,
    RecordPayload,
    new_record,
    record_type,
)

__all__ = [
    "ACTOR",
    "CAMPAIGN",
    "DECISION",
    "DISPOSITIONS",
    "EVIDENCE_MAX_CHARS",
    "INSTRUCTIONS_MAX_CHARS",
    "ITEM",
    "LABEL_MAX_CHARS",
    "MAX_ALLOWLIST",
    "MAX_CANDIDATE_AGENTS",
    "MAX_REASON_CODES",
    "MAX_RESPONSE_TAGS",
    "NOTE_MAX_CHARS",
    "PROMPT",
    "PROMPT_MAX_CHARS",
    "RESPONSE",
    "RESPONSE_MAX_CHARS",
    "SECOND_JUDGMENT",
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
    "prompt_digest",
]

Disposition = Literal["prefer", "tie", "correct", "underdetermined", "malformed", "skip"]
DISPOSITIONS: tuple[Disposition, ...] = ("prefer", "tie", "correct", "underdetermined", "malformed", "skip")
Strength = Literal["slight", "strong"]

# Identifiers: printable, no spaces, bounded.
Ident = Annotated[str, Field(min_length=1, max_length=200, pattern=IDENT_PATTERN)]
# Allowlisted reason codes and response tags: lower-case tokens.
Token = Annotated[str, Field(min_length=1, max_length=64, pattern=CODE_PATTERN)]
Label = Annotated[str, Field(min_length=1, max_length=LABEL_MAX_CHARS)]


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")


def _unique(values: list[str], field: str) -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"{field} lists a value twice")


class CampaignIdentity(_Part):
    id: Ident
    version: StrictInt = Field(ge=1)
    label: Label


class CampaignRef(_Part):
    """A campaign version, as items and runs name it."""

    id: Ident
    version: StrictInt = Field(ge=1)


class CriterionIdentity(_Part):
    id: Ident
    version: StrictInt = Field(ge=1)


class Criterion(_Part):
    id: Ident
    version: StrictInt = Field(ge=1)
    label: Label
    instructions: str = Field(min_length=1, max_length=INSTRUCTIONS_MAX_CHARS)
    allowed_reason_codes: list[Token] = Field(
        default_factory=list, alias="allowedReasonCodes", max_length=MAX_ALLOWLIST
    )
    allowed_response_tags: list[Token] = Field(
        default_factory=list, alias="allowedResponseTags", max_length=MAX_ALLOWLIST
    )

    @field_validator("allowed_reason_codes", "allowed_response_tags")
    @classmethod
    def _lists(cls, values: list[str], info: ValidationInfo) -> list[str]:
        _unique(values, cls.model_fields[str(info.field_name)].alias or str(info.field_name))
        return values

    def identity(self) -> CriterionIdentity:
        return CriterionIdentity(id=self.id, version=self.version)


@record_type(PROMPT)
class ReviewPrompt(RecordPayload):
    """A source event: one prompt of a campaign, the shared trigger of every candidate run over it."""

    campaign: CampaignIdentity
    scenario_family: Label = Field(alias="scenarioFamily")
    prompt: str = Field(min_length=1, max_length=PROMPT_MAX_CHARS)
    evidence: str | None = Field(default=None, min_length=1, max_length=EVIDENCE_MAX_CHARS)
    criterion: Criterion
    candidate_agent_ids: list[Ident] = Field(alias="candidateAgentIds", min_length=2, max_length=MAX_CANDIDATE_AGENTS)
    external_export_eligible: StrictBool = Field(default=False, alias="externalExportEligible")

    @field_validator("candidate_agent_ids")
    @classmethod
    def _agents(cls, values: list[str]) -> list[str]:
        _unique(values, "candidateAgentIds")
        return values


@record_type(RESPONSE)
class ReviewResponse(RecordPayload):
    """The one output of a candidate run over a review prompt."""

    response: str = Field(min_length=1, max_length=RESPONSE_MAX_CHARS)


class ItemCandidate(_Part):
    run_id: Ident = Field(alias="runId")
    output_event_id: Ident = Field(alias="outputEventId")
    digest: str = Field(pattern=rf"^{DIGEST_PATTERN}$")


class CandidateSelfIdentification(_Part):
    """A candidate whose text names a candidate's identity: its run id and what it names
    (``own-model``, ``other-provider``...; :mod:`._self_identification`)."""

    run_id: Ident = Field(alias="runId")
    named: list[Named] = Field(min_length=1, max_length=len(NAMED))

    @field_validator("named")
    @classmethod
    def _named(cls, values: list[str]) -> list[str]:
        _unique(values, "named")
        return values


@record_type(ITEM)
class ReviewItem(RecordPayload):
    """One frozen pair of candidate runs over one prompt and criterion.

    ``candidates`` are kept ordered by ``runId``; ``displayOrder`` is the two run ids in the
    order a reviewer sees them (the first is "A"). ``selfIdentification`` lists the candidates
    whose text names a candidate's identity, in candidate order: empty when materialize found
    none, absent (None) in items recorded before it was checked. It is in neither the item id
    nor any candidate digest."""

    item_id: Ident = Field(alias="itemId")
    campaign: CampaignRef
    prompt_event_id: Ident = Field(alias="promptEventId")
    criterion: CriterionIdentity
    candidates: list[ItemCandidate] = Field(min_length=2, max_length=2)
    display_order: list[Ident] = Field(alias="displayOrder", min_length=2, max_length=2)
    self_identification: list[CandidateSelfIdentification] | None = Field(
        default=None, alias="selfIdentification", max_length=2, exclude_if=lambda value: value is None
    )

    @model_validator(mode="after")
    def _pair(self) -> ReviewItem:
        runs = [c.run_id for c in self.candidates]
        if runs[0] >= runs[1]:
            raise ValueError("candidates must be two distinct runs ordered by runId")
        if sorted(self.display_order) != runs:
            raise ValueError("displayOrder must list the two candidates' run ids")
        flagged = [f.run_id for f in self.self_identification or ()]
        if flagged != [run for run in runs if run in flagged]:
            raise ValueError("selfIdentification must name candidates' run ids, once each, in candidate order")
        return self

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


@record_type(DECISION)
class ReviewDecision(RecordPayload):
    """One reviewer's decision on one item. Which fields go with which disposition, and the
    allowlists, are checked by :func:`reviewtrail.human_review.check_decision`."""

    item_id: Ident = Field(alias="itemId")
    disposition: Disposition
    preferred: Ident | None = None  # the runId of the winning candidate (prefer)
    strength: Strength | None = None  # prefer only
    replacement: str | None = Field(default=None, min_length=1, max_length=RESPONSE_MAX_CHARS)  # correct only
    confidence: Annotated[float, Field(ge=0.0, le=1.0), IS_FLOAT] | None = None
    reason_codes: list[Token] = Field(default_factory=list, alias="reasonCodes", max_length=MAX_REASON_CODES)
    response_tags: list[Token] = Field(default_factory=list, alias="responseTags", max_length=MAX_RESPONSE_TAGS)
    note: str | None = Field(default=None, min_length=1, max_length=NOTE_MAX_CHARS)
    use_for_training: StrictBool = Field(default=False, alias="useForTraining")
    supersedes: Ident | None = None  # the id of the decision record this one replaces
    submission_id: Ident = Field(alias="submissionId")


@record_type(CAMPAIGN)
class CampaignSettings(RecordPayload):
    """A campaign's settings; a later record for the same campaign and version supersedes it."""

    campaign_id: Ident = Field(alias="campaignId")
    version: StrictInt = Field(ge=1)
    training_enabled: StrictBool = Field(default=False, alias="trainingEnabled")
    # The share of items (0 to 1) that get a second judgment, for agreement; absent: none (0).
    second_judgment_share: Annotated[float, Field(ge=0.0, le=1.0), IS_FLOAT] | None = Field(
        default=None, alias="secondJudgmentShare", exclude_if=lambda value: value is None
    )


@record_type(SECOND_JUDGMENT)
class SecondJudgment(RecordPayload):
    """A second reviewer's judgment of an item another reviewer decided, recorded to measure
    agreement (docs/human-review.md, "Second judgments"). It names the active decision it was
    compared with; it is never a decision: never active, never superseding, never exported. Its
    fields are a decision's judgment fields, checked by the same rules."""

    item_id: Ident = Field(alias="itemId")
    compared_with: Ident = Field(alias="comparedWith")  # the id of the decision record judged again
    disposition: Disposition
    preferred: Ident | None = None
    strength: Strength | None = None
    replacement: str | None = Field(default=None, min_length=1, max_length=RESPONSE_MAX_CHARS)
    confidence: Annotated[float, Field(ge=0.0, le=1.0), IS_FLOAT] | None = None
    reason_codes: list[Token] = Field(default_factory=list, alias="reasonCodes", max_length=MAX_REASON_CODES)
    response_tags: list[Token] = Field(default_factory=list, alias="responseTags", max_length=MAX_RESPONSE_TAGS)
    note: str | None = Field(default=None, min_length=1, max_length=NOTE_MAX_CHARS)
    submission_id: Ident = Field(alias="submissionId")

    def as_decision(self) -> ReviewDecision:
        """The judgment as a decision's fields (never recorded as one), to check it by the decision rules."""
        fields = self.model_dump(by_alias=True, exclude={"compared_with"})
        return ReviewDecision.model_validate(fields)


def new_prompt_record(payload: ReviewPrompt, privacy: Privacy, *, actor: str = ACTOR) -> NewRecord:
    """The record of a review prompt. The envelope privacy is authoritative: only a
    ``public-source`` prompt may be ``externalExportEligible``."""
    if payload.external_export_eligible and privacy != "public-source":
        raise InvalidInputError(
            f"only a public-source prompt may be eligible for external export (privacy is {privacy})",
            field="externalExportEligible",
        )
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.campaign.id)


def new_item_record(payload: ReviewItem, privacy: Privacy, *, actor: str = ACTOR) -> NewRecord:
    """The record of a review item, about its prompt; its id is the item id's record."""
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.item_id)


def new_decision_record(payload: ReviewDecision, privacy: Privacy, *, actor: str = ACTOR) -> NewRecord:
    """The record of a decision, about its item. A superseded decision is also named in the
    envelope's ``supersedes``, so the ledger checks it is an earlier record."""
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.item_id, supersedes=payload.supersedes)


def new_campaign_record(payload: CampaignSettings, *, supersedes: str | None = None, actor: str = ACTOR) -> NewRecord:
    """The record of a campaign's settings (always private: it is not training data)."""
    return new_record(payload, actor=actor, privacy="private", subject=payload.campaign_id, supersedes=supersedes)


def new_second_judgment_record(payload: SecondJudgment, privacy: Privacy, *, actor: str) -> NewRecord:
    """The record of a second judgment, about its item; it supersedes nothing."""
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.item_id)
