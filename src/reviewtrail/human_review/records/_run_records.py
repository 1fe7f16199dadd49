"""Record types around candidate runs: the completed (or failed) run, its context receipt, privacy
reclassifications, and the receipt of a checkpoint trained from an export (docs/human-review.md,
"Candidate runs", "Amendments" and "Training receipts").

A candidate run's output is an ordinary ``stream.thought.output.review-response@1`` record whose
subject is the run id. Run, receipt and output records of one run are appended in one batch.
"""

# No ``from __future__ import annotations``: the fields' types are objects, which a decoder takes
# as they are (an annotation given as text is compiled when the decoder is built, at each read).
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import Meta

from reviewtrail._struct import FieldProblem, PayloadStruct, whole
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
from reviewtrail.ledger import new_record, record_type

if TYPE_CHECKING:
    from reviewtrail.ledger import NewRecord, Privacy

__all__ = [
    "RECEIPT_FILES_MAX",
    "RUN_ORIGINS",
    "RUN_STATUSES",
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

Digest = Annotated[str, Meta(pattern=whole(rf"^{DIGEST_PATTERN}$"))]
Name = Annotated[str, Meta(min_length=1, max_length=200)]
Timestamp = Annotated[str, Meta(min_length=1, max_length=64)]
Hex = Annotated[str, Meta(pattern=whole(r"^[0-9a-f]{64}$"))]
Problem = Annotated[str, Meta(min_length=1, max_length=ERROR_MAX_CHARS)]


class AgentIdentity(_Part, frozen=True, kw_only=True):
    """A candidate agent: model + provider + execution adapter + optional learned adapter +
    catalog generation. Every field is training-relevant provenance."""

    id: Ident
    model: Name
    provider: Name
    execution_adapter: Ident
    learned_adapter: Ident | None = None
    catalog_generation: Ident


@record_type(RUN)
class CandidateRun(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """One candidate agent's run over one review prompt (its trigger). Its record's subject is the
    run id; a correction is a later record of the same run id that supersedes it."""

    run_id: Ident
    campaign: CampaignRef
    trigger_event_id: Ident
    agent: AgentIdentity
    status: RunStatus
    origin: RunOrigin = "local"
    started_at: Timestamp
    ended_at: Timestamp
    prompt_hash: Digest
    prompt_manifest_id: Ident | None = None
    trace: Ident | None = None
    retry_of: Ident | None = None
    error: Problem | None = None
    # Set when the run produced an output that is not a contract-valid review response (so no
    # output event was recorded): why it was refused.
    output_problem: Problem | None = None

    def __post_init__(self) -> None:
        if (self.status == "failed") != (self.error is not None):
            raise FieldProblem(None, "a failed run carries an error and a completed run carries none")


class ContextInput(_Part, frozen=True, kw_only=True):
    """One input of a run's context: which event, its payload hash, and how it was included."""

    event_id: Ident
    payload_hash: Hex
    inclusion: Literal["whole", "projected"]
    payload_fields: list[Name] | None = None


@record_type(RECEIPT)
class ContextReceipt(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """What a run's context held, as recorded fields a validator checks: its inputs, the tool
    evidence it gained and whether it had external action authority. Its subject is the run id."""

    run_id: Ident
    inputs: Annotated[list[ContextInput], Meta(max_length=64)]
    tool_evidence: Annotated[list[Ident], Meta(max_length=64)] = msgspec.field(default_factory=list)
    external_action_authority: bool


@record_type(RECLASSIFICATION)
class PrivacyReclassification(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """Makes an earlier prompt, run or output record stricter: the envelope's ``supersedes`` names
    the record, and ``privacy`` (also the envelope privacy) is its new level. Never more open."""

    target_id: Ident
    privacy: Literal["public-source", "private", "sensitive"]
    reason: Problem


#: The most export files a training receipt binds (a thousand exports of three files).
RECEIPT_FILES_MAX = 3_000


class ReceiptFile(_Part, frozen=True, kw_only=True):
    """An export file a training receipt binds: its name, the SHA-256 of its bytes and the hash of
    the ledger head it was exported from."""

    name: Annotated[str, Meta(min_length=1, max_length=255, pattern=whole(r"^[A-Za-z0-9][A-Za-z0-9._-]*$"))]
    sha256: Hex
    ledger_head: Hex


@record_type(TRAINING_RECEIPT)
class TrainingReceipt(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """A checkpoint trained outside from one exact export (by manifest digest, and by the name,
    SHA-256 and ledger head of each export file of the campaign version the manifest listed),
    with its held-out evaluation results. Private by default and never exported."""

    campaign: CampaignRef
    export_manifest_sha256: Hex
    checkpoint: Name
    evaluation: dict[str, Any]
    label: Label | None = None
    export_files: Annotated[list[ReceiptFile], Meta(max_length=RECEIPT_FILES_MAX)] | None = None


def new_reclassification_record(
    payload: PrivacyReclassification, subject: str | None, *, actor: str = ACTOR
) -> "NewRecord":
    """The record of a privacy reclassification: it supersedes its target, with the new privacy."""
    privacy: Privacy = payload.privacy
    return new_record(payload, actor=actor, privacy=privacy, subject=subject, supersedes=payload.target_id)


def new_training_receipt_record(
    payload: TrainingReceipt, *, privacy: "Privacy" = "private", actor: str = ACTOR
) -> "NewRecord":
    return new_record(payload, actor=actor, privacy=privacy, subject=payload.campaign.id)
