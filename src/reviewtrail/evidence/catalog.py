"""The evidence package's record types and query table, declared without its payload models:
:mod:`reviewtrail.app` reads them when it builds the catalog, and the models load when a record of
these types is validated or made (docs/architecture.md, "Claims and evidence")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewtrail.ledger import Envelope, Projection, ProjectionTable

__all__ = [
    "ALIAS_MAP",
    "CLAIM",
    "EVIDENCE_ITEM",
    "EVIDENCE_LINK",
    "EVIDENCE_PROJECTION",
    "PDF_EXTRACTION",
    "PROJECTIONS",
    "RECORD_TYPE_NAMES",
    "origin_key",
]

CLAIM = "evidence.claim@1"
EVIDENCE_ITEM = "evidence.item@1"
EVIDENCE_LINK = "evidence.link@1"
PDF_EXTRACTION = "evidence.pdf-extraction@1"
ALIAS_MAP = "evidence.alias-map@1"
RECORD_TYPE_NAMES = frozenset([CLAIM, EVIDENCE_ITEM, EVIDENCE_LINK, PDF_EXTRACTION, ALIAS_MAP])


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
    types=RECORD_TYPE_NAMES,
)

PROJECTIONS: tuple[Projection, ...] = (EVIDENCE_PROJECTION,)
