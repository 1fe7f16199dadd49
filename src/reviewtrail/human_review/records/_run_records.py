"""Record types around candidate runs: the completed (or failed) run, its context receipt, privacy
reclassifications, and the receipt of a checkpoint trained from an export (docs/human-review.md,
"Candidate runs", "Amendments" and "Training receipts").

A candidate run's output is an ordinary ``stream.thought.output.review-response@1`` record whose
subject is the run id. Run, receipt and output records of one run are appended in one batch.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from reviewtrail.cas import DIGEST_PATTERN
from reviewtrail.human_review.records._record_names import (
    ACTOR,
    ERROR_MAX_CHARS,
    RECEIPT,
    RECLASSIFICATION,
    RUN,
    TRAINING_RECEIPT,
)
from reviewtrail.human_review.records._records import CampaignRef, Ident, Label, _Part
from reviewtrail.ledger import NewRecord, Privacy, RecordPayload, new_record, record_type

__all__ = [
    "ERROR_MAX_CHARS",
    "RECEIPT",
    "RECEIPT_FILES_MAX",
    "RECLASSIFICATION",
    "RUN",
    "RUN_ORIGINS",
    "RUN_STATUSES",
    "TRAINING_RECEIPT",
    "AgentIdentity",
    "CandidateRun",
    "ContextInput",
    "ContextReceipt",
    "PrivacyReclassification",
    "ReceiptFile",
    "RunOrigin",
    "RunStatus",
    "TrainingReceipt",
    "new_reclassification_record",
    "new_training_receipt_record",
]

RunStatus = Literal["completed", "failed"]
RUN_STATUSES: tuple[RunStatus, ...] = ("completed", "failed")
RunOrigin = Literal["local", "imported"]
RUN_ORIGINS: tuple[RunOrigin, ...] = ("local", "imported")

Digest = Annotated[str, Field(pattern=rf"^{DIGEST_PATTERN}$")]
Name = Annotated[str, Field(min_length=1, max_length=200)]
Timestamp = Annotated[str, Field(min_length=1, max_length=64)]


class AgentIdentity(_Part):
    """A candidate agent: model + provider + execution adapter + optional learned adapter +
    catalog generation. Every field is training-relevant provenance."""

    id: Ident
    model: Name
    provider: Name
    execution_adapter: Ident = Field(alias="executionAdapter")
    learned_adapter: Ident | None = Field(default=None, alias="learnedAdapter")
    catalog_generation: Ident = Field(alias="catalogGeneration")


@record_type(RUN)
class CandidateRun(RecordPayload):
    """One candidate agent's run over one review prompt (its trigger). Its record's subject is the
    run id; a correction is a later record of the same run id that supersedes it."""

    run_id: Ident = Field(alias="runId")
    campaign: CampaignRef
    trigger_event_id: Ident = Field(alias="triggerEventId")
    agent: AgentIdentity
    status: RunStatus
    origin: RunOrigin = "local"
    started_at: Timestamp = Field(alias="startedAt")
    ended_at: Timestamp = Field(alias="endedAt")
    prompt_hash: Digest = Field(alias="promptHash")
    prompt_manifest_id: Ident | None = Field(default=None, alias="promptManifestId")
    trace: Ident | None = None
    retry_of: Ident | None = Field(default=None, alias="retryOf")
    error: str | None = Field(default=None, min_length=1, max_length=ERROR_MAX_CHARS)
    # Set when the run produced an output that is not a contract-valid review response (so no
    # output event was recorded): why it was refused.
    output_problem: str | None = Field(default=None, min_length=1, max_length=ERROR_MAX_CHARS, alias="outputProblem")

    @model_validator(mode="after")
    def _error_only_when_failed(self) -> CandidateRun:
        if (self.status == "failed") != (self.error is not None):
            raise ValueError("a failed run carries an error and a completed run carries none")
        return self


class ContextInput(_Part):
    """One input of a run's context: which event, its payload hash, and how it was included."""

    event_id: Ident = Field(alias="eventId")
    payload_hash: str = Field(alias="payloadHash", pattern=r"^[0-9a-f]{64}$")
    inclusion: Literal["whole", "projected"]
    payload_fields: list[Name] | None = Field(default=None, alias="payloadFields")


@record_type(RECEIPT)
class ContextReceipt(RecordPayload):
    """What a run's context held, as recorded fields a validator checks: its inputs, the tool
    evidence it gained and whether it had external action authority. Its subject is the run id."""

    run_id: Ident = Field(alias="runId")
    inputs: list[ContextInput] = Field(max_length=64)
    tool_evidence: list[Ident] = Field(default_factory=list, alias="toolEvidence", max_length=64)
    external_action_authority: bool = Field(alias="externalActionAuthority")


@record_type(RECLASSIFICATION)
class PrivacyReclassification(RecordPayload):
    """Makes an earlier prompt, run or output record stricter: the envelope's ``supersedes`` names
    the record, and ``privacy`` (also the envelope privacy) is its new level. Never more open."""

    target_id: Ident = Field(alias="targetId")
    privacy: Literal["public-source", "private", "sensitive"]
    reason: str = Field(min_length=1, max_length=ERROR_MAX_CHARS)


#: The most export files a training receipt binds (a thousand exports of three files).
RECEIPT_FILES_MAX = 3_000


class ReceiptFile(_Part):
    """An export file a training receipt binds: its name, the SHA-256 of its bytes and the hash of
    the ledger head it was exported from."""

    name: str = Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    ledger_head: str = Field(alias="ledgerHead", pattern=r"^[0-9a-f]{64}$")


@record_type(TRAINING_RECEIPT)
class TrainingReceipt(RecordPayload):
    """A checkpoint trained outside from one exact export (by manifest digest, and by the name,
    SHA-256 and ledger head of each export file of the campaign version the manifest listed),
    with its held-out evaluation results. Private by default and never exported."""

    campaign: CampaignRef
    export_manifest_sha256: str = Field(alias="exportManifestSha256", pattern=r"^[0-9a-f]{64}$")
    checkpoint: Name
    evaluation: dict[str, Any]
    label: Label | None = None
    export_files: list[ReceiptFile] | None = Field(default=None, alias="exportFiles", max_length=RECEIPT_FILES_MAX)


def new_reclassification_record(
    payload: PrivacyReclassification, subject: str | None, *, actor: str = ACTOR
) -> NewRecord:
    """The record of a privacy reclassification: it supersedes its target, with the new privacy."""
    privacy: Privacy = payload.privacy
    return new_record(payload, actor=actor, privacy=privacy, subject=subject, supersedes=payload.target_id)


def new_training_receipt_record(
    payload: TrainingReceipt, *, privacy: Privacy = "private", actor: str = ACTOR
) -> NewRecord:
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.campaign.id)
