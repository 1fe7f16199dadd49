"""Claims, evidence items and evidence links as ledger record types (docs/architecture.md, "Claims
and evidence")."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import Meta

from reviewtrail._struct import FieldProblem, Model, PayloadStruct
from reviewtrail.cas import DIGEST_PATTERN, CasRef
from reviewtrail.evidence.catalog import (
    ALIAS_MAP,
    CLAIM,
    EVIDENCE_ITEM,
    EVIDENCE_LINK,
    PDF_EXTRACTION,
)
from reviewtrail.ledger import record_type

__all__ = [
    "CHIP_ALIAS",
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
]

#: A chip's alias as recorded: lower case, ``ev``, ``evidence`` or ``artifact`` then digits.
CHIP_ALIAS = r"^(?:ev|evidence|artifact)[0-9]+$"
Relation = Literal["supports", "context", "contradicts"]
RELATIONS: tuple[Relation, ...] = ("supports", "context", "contradicts")
Ref = dict[str, Any]


NonEmpty = Annotated[str, Meta(min_length=1)]


class _Origin(Model, frozen=True, kw_only=True, rename="camel", tag_field="kind"):
    """An evidence item's origin: its ``kind`` (the tag that tells the origins apart) and fields."""

    kind: ClassVar[str]


class McpRecordOrigin(_Origin, frozen=True, tag="mcp-record"):
    kind: ClassVar[Literal["mcp-record"]] = "mcp-record"
    server: NonEmpty
    record_type: NonEmpty
    record_id: NonEmpty
    content_scope: Literal["curated-record", "abstract", "metadata"]
    paper_id: str | None = None  # the paper this record describes, if any
    full_text_retrieved: bool = False


def normalize_paper_id(value: str) -> str:
    """``scheme:id`` with the scheme in lowercase; DOIs (case-insensitive by definition) wholly lowercase."""
    value = value.strip()
    scheme, sep, rest = value.partition(":")
    if not sep:
        return value
    scheme = scheme.lower()
    return f"{scheme}:{rest.lower() if scheme == 'doi' else rest}"


class PaperOrigin(_Origin, frozen=True, tag="paper"):
    kind: ClassVar[Literal["paper"]] = "paper"
    paper_id: NonEmpty  # doi:..., arxiv:..., pmid:...
    page: Annotated[int, Meta(ge=1)] | None = None
    quote_hash: Annotated[str, Meta(pattern=rf"^{DIGEST_PATTERN}$")] | None = None
    full_text_retrieved: bool = False


class ExecutionOrigin(_Origin, frozen=True, tag="execution"):
    kind: ClassVar[Literal["execution"]] = "execution"
    run_id: NonEmpty
    output: Ref | None = None  # the stdout or file ref this evidence points at


class ArtifactOrigin(_Origin, frozen=True, tag="artifact"):
    kind: ClassVar[Literal["artifact"]] = "artifact"
    artifact_id: str
    name: str
    version: Annotated[int, Meta(ge=1)]
    content: Ref


class RemoteJobOrigin(_Origin, frozen=True, tag="remote-job"):
    kind: ClassVar[Literal["remote-job"]] = "remote-job"
    job_id: NonEmpty
    output: Ref | None = None


class UserInputOrigin(_Origin, frozen=True, tag="user-input"):
    kind: ClassVar[Literal["user-input"]] = "user-input"
    content: Ref


EvidenceOrigin = McpRecordOrigin | PaperOrigin | ExecutionOrigin | ArtifactOrigin | RemoteJobOrigin | UserInputOrigin


class ClaimCitation(Model, frozen=True, kw_only=True, rename="camel"):
    type: str
    id: str
    raw: str
    resolved: bool
    target: str | None = None  # what it resolved to: "evidence:<id>", "execution:<id>", "artifact:<name>@<v>"
    # A chip ([EV1]): its alias ("ev1") and the evidence id the turn's alias map gave it (None: no mapping).
    alias: Annotated[str, Meta(pattern=CHIP_ALIAS)] | None = None
    evidence_id: str | None = None


@record_type(CLAIM)
class Claim(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    claim_id: str
    text: str
    citations: list[ClaimCitation]
    review_run_id: str | None
    turn_id: str | None
    numeric: bool
    source: Ref | None = None  # the reply it was extracted from (CAS)
    sentence_start: int
    sentence_end: int


@record_type(ALIAS_MAP)
class AliasMap(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    """What a turn's chips point at: ``aliases`` maps ``ev1`` (lower case) to an evidence id.

    It applies to a text by content (``source``: the CAS reference of the reply it was given with)
    or to one artifact version named here. The evidence need not be recorded yet: a review reports
    a mapping to evidence that is not recorded.
    """

    aliases: dict[Annotated[str, Meta(pattern=CHIP_ALIAS)], Annotated[str, Meta(pattern=r"^\S+$")]]
    turn_id: str | None = None
    review_run_id: str | None = None
    source: CasRef | None = None  # a real CAS reference: Store.append checks the object exists
    artifact_id: str | None = None
    artifact_version: Annotated[int, Meta(ge=1)] | None = None

    def __post_init__(self) -> None:
        if (self.artifact_id is None) != (self.artifact_version is None):
            raise FieldProblem(None, "artifactId and artifactVersion go together")


@record_type(EVIDENCE_ITEM)
class EvidenceItem(PayloadStruct, frozen=True, rename="camel"):
    evidence_id: str
    origin: EvidenceOrigin
    label: str | None = None


@record_type(EVIDENCE_LINK)
class EvidenceLink(PayloadStruct, frozen=True, rename="camel"):
    claim_id: str
    evidence_id: str
    relation: Relation


@record_type(PDF_EXTRACTION)
class PdfExtraction(PayloadStruct, frozen=True, rename="camel"):
    paper_id: Annotated[str, Meta(min_length=1, pattern=r"^\S+$")]
    status: Literal["succeeded", "failed"]
    pages: int | None = None
    text: CasRef | None = None  # a real CAS reference: Store.append checks the object exists
    source: CasRef | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        # Only a real extraction may make fullTextRetrieved true: success needs the text and no error.
        if self.status == "succeeded" and (self.text is None or self.source is None or self.error is not None):
            raise FieldProblem(None, "a succeeded extraction needs its text and its source PDF, and no error")
        if self.status == "failed" and not self.error:
            raise FieldProblem(None, "a failed extraction needs its error")


# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[PayloadStruct], ...] = (Claim, AliasMap, EvidenceItem, EvidenceLink, PdfExtraction)
