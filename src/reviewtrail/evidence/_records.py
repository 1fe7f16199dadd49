"""Claims, evidence items and evidence links as ledger record types (docs/architecture.md, "Claims
and evidence")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reviewtrail._strict import IS_INT, StrictBool, StrictInt
from reviewtrail.cas import DIGEST_PATTERN, CasRef
from reviewtrail.ledger import Envelope, Projection, ProjectionTable, RecordPayload, record_type

__all__ = [
    "ALIAS_MAP",
    "CHIP_ALIAS",
    "CLAIM",
    "EVIDENCE_ITEM",
    "EVIDENCE_LINK",
    "EVIDENCE_PROJECTION",
    "PDF_EXTRACTION",
    "PROJECTIONS",
    "RECORD_TYPES",
    "RELATIONS",
    "AliasMap",
    "ArtifactOrigin",
    "Claim",
    "ClaimCitation",
    "EvidenceItem",
    "EvidenceLink",
    "EvidenceOrigin",
    "ExecutionOrigin",
    "McpRecordOrigin",
    "PaperOrigin",
    "PdfExtraction",
    "RemoteJobOrigin",
    "UserInputOrigin",
    "normalize_paper_id",
    "origin_key",
]

CLAIM = "evidence.claim@1"
EVIDENCE_ITEM = "evidence.item@1"
EVIDENCE_LINK = "evidence.link@1"
PDF_EXTRACTION = "evidence.pdf-extraction@1"
ALIAS_MAP = "evidence.alias-map@1"
#: A chip's alias as recorded: lower case, ``ev``, ``evidence`` or ``artifact`` then digits.
CHIP_ALIAS = r"^(?:ev|evidence|artifact)[0-9]+$"
Relation = Literal["supports", "context", "contradicts"]
RELATIONS: tuple[Relation, ...] = ("supports", "context", "contradicts")
Ref = dict[str, Any]


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")


class McpRecordOrigin(_Part):
    kind: Literal["mcp-record"] = "mcp-record"
    server: str = Field(min_length=1)
    record_type: str = Field(alias="recordType", min_length=1)
    record_id: str = Field(alias="recordId", min_length=1)
    content_scope: Literal["curated-record", "abstract", "metadata"] = Field(alias="contentScope")
    paper_id: str | None = Field(default=None, alias="paperId")  # the paper this record describes, if any
    full_text_retrieved: StrictBool = Field(default=False, alias="fullTextRetrieved")


def normalize_paper_id(value: str) -> str:
    """``scheme:id`` with the scheme in lowercase; DOIs (case-insensitive by definition) wholly lowercase."""
    value = value.strip()
    scheme, sep, rest = value.partition(":")
    if not sep:
        return value
    scheme = scheme.lower()
    return f"{scheme}:{rest.lower() if scheme == 'doi' else rest}"


class PaperOrigin(_Part):
    kind: Literal["paper"] = "paper"
    paper_id: str = Field(alias="paperId", min_length=1)  # doi:..., arxiv:..., pmid:...
    page: Annotated[int, Field(ge=1), IS_INT] | None = None
    quote_hash: str | None = Field(default=None, alias="quoteHash", pattern=rf"^{DIGEST_PATTERN}$")
    full_text_retrieved: StrictBool = Field(default=False, alias="fullTextRetrieved")


class ExecutionOrigin(_Part):
    kind: Literal["execution"] = "execution"
    run_id: str = Field(alias="runId", min_length=1)
    output: Ref | None = None  # the stdout or file ref this evidence points at


class ArtifactOrigin(_Part):
    kind: Literal["artifact"] = "artifact"
    artifact_id: str = Field(alias="artifactId")
    name: str
    version: StrictInt = Field(ge=1)
    content: Ref


class RemoteJobOrigin(_Part):
    kind: Literal["remote-job"] = "remote-job"
    job_id: str = Field(alias="jobId", min_length=1)
    output: Ref | None = None


class UserInputOrigin(_Part):
    kind: Literal["user-input"] = "user-input"
    content: Ref


EvidenceOrigin = Annotated[
    McpRecordOrigin | PaperOrigin | ExecutionOrigin | ArtifactOrigin | RemoteJobOrigin | UserInputOrigin,
    Field(discriminator="kind"),
]


class ClaimCitation(_Part):
    type: str
    id: str
    raw: str
    resolved: StrictBool
    target: str | None = None  # what it resolved to: "evidence:<id>", "execution:<id>", "artifact:<name>@<v>"
    # A chip ([EV1]): its alias ("ev1") and the evidence id the turn's alias map gave it (None: no mapping).
    alias: str | None = Field(default=None, pattern=CHIP_ALIAS)
    evidence_id: str | None = Field(default=None, alias="evidenceId")


@record_type(CLAIM)
class Claim(RecordPayload):
    claim_id: str = Field(alias="claimId")
    text: str
    citations: list[ClaimCitation]
    review_run_id: str | None = Field(alias="reviewRunId")
    turn_id: str | None = Field(alias="turnId")
    numeric: StrictBool
    source: Ref | None = None  # the reply it was extracted from (CAS)
    sentence_start: StrictInt = Field(alias="sentenceStart")
    sentence_end: StrictInt = Field(alias="sentenceEnd")


@record_type(ALIAS_MAP)
class AliasMap(RecordPayload):
    """What a turn's chips point at: ``aliases`` maps ``ev1`` (lower case) to an evidence id.

    It applies to a text by content (``source``: the CAS reference of the reply it was given with)
    or to one artifact version named here. The evidence need not be recorded yet: a review reports
    a mapping to evidence that is not recorded.
    """

    aliases: dict[Annotated[str, Field(pattern=CHIP_ALIAS)], Annotated[str, Field(pattern=r"^\S+$")]]
    turn_id: str | None = Field(default=None, alias="turnId")
    review_run_id: str | None = Field(default=None, alias="reviewRunId")
    source: CasRef | None = None  # a real CAS reference: Store.append checks the object exists
    artifact_id: str | None = Field(default=None, alias="artifactId")
    artifact_version: Annotated[int, Field(ge=1), IS_INT] | None = Field(default=None, alias="artifactVersion")

    @model_validator(mode="after")
    def _target(self) -> AliasMap:
        if (self.artifact_id is None) != (self.artifact_version is None):
            raise ValueError("artifactId and artifactVersion go together")
        return self


@record_type(EVIDENCE_ITEM)
class EvidenceItem(RecordPayload):
    evidence_id: str = Field(alias="evidenceId")
    origin: EvidenceOrigin
    label: str | None = None


@record_type(EVIDENCE_LINK)
class EvidenceLink(RecordPayload):
    claim_id: str = Field(alias="claimId")
    evidence_id: str = Field(alias="evidenceId")
    relation: Relation


@record_type(PDF_EXTRACTION)
class PdfExtraction(RecordPayload):
    paper_id: str = Field(alias="paperId", min_length=1, pattern=r"^\S+$")
    status: Literal["succeeded", "failed"]
    pages: StrictInt | None = None
    text: CasRef | None = None  # a real CAS reference: Store.append checks the object exists
    source: CasRef | None = None
    error: str | None = None

    @model_validator(mode="after")
    def _outcome(self) -> PdfExtraction:
        # Only a real extraction may make fullTextRetrieved true: success needs the text and no error.
        if self.status == "succeeded" and (self.text is None or self.source is None or self.error is not None):
            raise ValueError("a succeeded extraction needs its text and its source PDF, and no error")
        if self.status == "failed" and not self.error:
            raise ValueError("a failed extraction needs its error")
        return self


def origin_key(origin: dict[str, Any]) -> str:
    """How an evidence item is looked up: run id, paper id, ``server/type/record`` for MCP records,
    ``artifactId@version`` for artifacts, job id; user input by content digest."""
    kind = origin["kind"]
    if kind == "execution":
        return str(origin["runId"])
    if kind == "paper":
        return str(origin["paperId"])
    if kind == "mcp-record":
        return f"{origin['server']}/{origin['recordType']}/{origin['recordId']}"
    if kind == "artifact":
        return f"{origin['artifactId']}@{origin['version']}"
    if kind == "remote-job":
        return str(origin["jobId"])
    return str(origin.get("content", {}).get("digest", ""))


def _rows(env: Envelope) -> Iterable[tuple[str, dict[str, Any]]]:
    if not env.type.startswith("evidence."):
        return
    p = env.payload_value
    if env.type == CLAIM:
        yield (
            "ev_claims",
            {
                "claim_id": p["claimId"],
                "record_id": env.id,
                "review_run_id": p.get("reviewRunId"),
                "turn_id": p.get("turnId"),
                "seq": env.seq,
            },
        )
    elif env.type == EVIDENCE_ITEM:
        origin = p["origin"]
        yield (
            "ev_items",
            {
                "evidence_id": p["evidenceId"],
                "record_id": env.id,
                "kind": origin["kind"],
                "key": origin_key(origin),
                "paper_id": origin.get("paperId"),
            },
        )
    elif env.type == EVIDENCE_LINK:
        yield (
            "ev_links",
            {
                "claim_id": p["claimId"],
                "evidence_id": p["evidenceId"],
                "relation": p["relation"],
                "record_id": env.id,
                "seq": env.seq,
            },
        )
    elif env.type == PDF_EXTRACTION and p["status"] == "succeeded":
        yield "ev_pdf_extractions", {"paper_id": p["paperId"], "record_id": env.id}
    elif env.type == ALIAS_MAP:
        yield (
            "ev_alias_maps",
            {
                "record_id": env.id,
                "turn_id": p.get("turnId"),
                "source_digest": (p.get("source") or {}).get("digest"),
                "artifact_id": p.get("artifactId"),
                "artifact_version": p.get("artifactVersion"),
                "seq": env.seq,
            },
        )


EVIDENCE_PROJECTION = Projection(
    name="evidence",
    version=3,
    tables=(
        ProjectionTable(
            "ev_claims",
            (
                ("claim_id", "text"),
                ("record_id", "text"),
                ("review_run_id", "text"),
                ("turn_id", "text"),
                ("seq", "int"),
            ),
            key=("claim_id",),
            indexes=(("review_run_id",), ("turn_id",)),
        ),
        ProjectionTable(
            "ev_items",
            (("evidence_id", "text"), ("record_id", "text"), ("kind", "text"), ("key", "text"), ("paper_id", "text")),
            key=("evidence_id",),
            indexes=(("kind", "key"), ("paper_id",)),
        ),
        ProjectionTable(
            "ev_links",
            (
                ("claim_id", "text"),
                ("evidence_id", "text"),
                ("relation", "text"),
                ("record_id", "text"),
                ("seq", "int"),
            ),
            key=("claim_id", "evidence_id", "relation"),
            indexes=(("evidence_id",),),
        ),
        ProjectionTable("ev_pdf_extractions", (("paper_id", "text"), ("record_id", "text")), key=("paper_id",)),
        ProjectionTable(
            "ev_alias_maps",
            (
                ("record_id", "text"),
                ("turn_id", "text"),
                ("source_digest", "text"),
                ("artifact_id", "text"),
                ("artifact_version", "int"),
                ("seq", "int"),
            ),
            key=("record_id",),
            indexes=(("turn_id",), ("source_digest",), ("artifact_id", "artifact_version")),
        ),
    ),
    rows=_rows,
)

# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[RecordPayload], ...] = (Claim, AliasMap, EvidenceItem, EvidenceLink, PdfExtraction)
PROJECTIONS: tuple[Projection, ...] = (EVIDENCE_PROJECTION,)
