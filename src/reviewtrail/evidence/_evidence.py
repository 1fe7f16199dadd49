"""Recording claims and evidence, resolving citations, linking claims to evidence."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from reviewtrail._struct import decode, read
from reviewtrail.canonical import canonical_sha256
from reviewtrail.errors import InvalidInputError, NotFoundError
from reviewtrail.evidence._aliases import alias_map_record, chip_citation
from reviewtrail.evidence._claim_list import ClaimList, Outcome
from reviewtrail.evidence._claims import citation_at, claim_spans
from reviewtrail.evidence._records import (
    AliasMap,
    Claim,
    EvidenceItem,
    EvidenceLink,
    EvidenceOrigin,
    PdfExtraction,
    Relation,
    normalize_paper_id,
)
from reviewtrail.ledger import Envelope, new_id, new_record
from reviewtrail.store import Store

__all__ = [
    "RecordedClaims",
    "add_evidence",
    "check_pdf",
    "claims_for",
    "full_text_retrieved",
    "get_claim",
    "get_evidence",
    "link_evidence",
    "links_of",
    "parse_origin",
    "record_claims",
    "record_pdf_extraction",
    "resolve_citation",
]

_PAPER_TYPES = ("doi", "arxiv", "pmid", "pmc", "paper", "isbn")
_KNOWN_CITATIONS = 4096  # citations whose resolution one record_claims call remembers (one query each)


def parse_origin(doc: dict[str, Any]) -> Any:
    """The origin ``doc`` describes; a refused field is named under its kind (``origin.paper.page``)."""
    return decode(EvidenceOrigin, doc, field="origin")  # type: ignore[arg-type]


def _paper_key(type_: str, id_: str) -> str:
    return normalize_paper_id(id_ if type_ == "paper" else f"{type_}:{id_}")


def full_text_retrieved(store: Store, paper_id: str | None) -> bool:
    """True only after a successful PDF extraction of that paper was recorded."""
    if not paper_id:
        return False
    return bool(store.ledger.rows("ev_pdf_extractions", paper_id=normalize_paper_id(paper_id)))


def _identity(origin: Any) -> dict[str, Any]:
    doc: dict[str, Any] = msgspec.to_builtins(origin)
    doc.pop("fullTextRetrieved", None)
    return doc


def add_evidence(store: Store, origin: Any, *, label: str | None = None, actor: str = "user") -> tuple[str, bool]:
    """Record an evidence item once: the same origin always yields the same id. Returns (id, created).

    References are checked (the execution run or artifact version must be recorded), and
    ``fullTextRetrieved`` is set from the recorded PDF extractions, never from the caller.
    """
    if isinstance(origin, dict):
        origin = parse_origin(origin)
    kind = origin.kind
    if kind == "execution":
        rows = store.ledger.rows("prov_runs", record_id=origin.run_id)
        if not rows:
            raise NotFoundError(f"no recorded execution run {origin.run_id}", field="origin.runId")
    if kind == "artifact":
        versions = store.ledger.rows("prov_artifact_versions", artifact_id=origin.artifact_id)
        match = [row for row in versions if row["version"] == origin.version]
        if not match:
            raise NotFoundError(f"no recorded version {origin.version} of {origin.name}", field="origin.version")
        recorded = store.ledger.get(match[0]["record_id"]).payload_value
        # Name and content come from the recorded version, never from the caller.
        origin = msgspec.structs.replace(origin, name=recorded["name"], content=recorded["content"])
    if kind == "paper":
        origin = msgspec.structs.replace(origin, paper_id=normalize_paper_id(origin.paper_id))
    if kind == "mcp-record" and origin.paper_id:
        origin = msgspec.structs.replace(origin, paper_id=normalize_paper_id(origin.paper_id))
    if kind in ("paper", "mcp-record"):
        claimed = origin.full_text_retrieved
        actual = full_text_retrieved(store, origin.paper_id)
        if claimed and not actual:
            raise InvalidInputError(
                f"fullTextRetrieved is true only after a successful PDF extraction of {origin.paper_id}",
                field="origin.fullTextRetrieved",
            )
        origin = msgspec.structs.replace(origin, full_text_retrieved=actual)
    evidence_id = "ev-" + canonical_sha256(_identity(origin))[:24]
    if store.ledger.rows("ev_items", evidence_id=evidence_id):
        return evidence_id, False
    item = EvidenceItem(evidence_id=evidence_id, origin=origin, label=label)
    store.append([new_record(item, actor=actor, privacy="private", subject=f"evidence:{evidence_id}")])
    return evidence_id, True


def get_evidence(store: Store, evidence_id: str) -> EvidenceItem:
    rows = store.ledger.rows("ev_items", evidence_id=evidence_id)
    if not rows:
        raise NotFoundError(f"no evidence item {evidence_id}", field="evidence")
    return read(EvidenceItem, store.ledger.get(rows[0]["record_id"]).payload)


def resolve_citation(store: Store, type_: str, id_: str) -> str | None:
    """What a ``[TYPE:ID]`` citation points at in this store, or ``None`` when nothing recorded matches."""
    t = type_.lower()
    rows: list[dict[str, Any]]
    if t in ("ev", "evidence"):
        return f"evidence:{id_}" if store.ledger.rows("ev_items", evidence_id=id_) else None
    if t in ("run", "exec", "execution"):
        rows = store.ledger.rows("prov_runs", record_id=id_)
        return f"execution:{id_}" if rows else None
    if t == "artifact":
        from reviewtrail.provenance.artifacts import parse_spec

        try:
            name, version = parse_spec(id_)
        except InvalidInputError:
            return None
        matches = [
            r
            for r in store.ledger.rows("prov_artifact_versions", name=name)
            if version is None or r["version"] == version
        ]
        if not matches:
            return None
        best = max(matches, key=lambda r: r["version"])
        return f"artifact:{name}@{best['version']}"
    if t in _PAPER_TYPES:
        key = _paper_key(t, id_)
        rows = store.ledger.rows("ev_items", kind="paper", key=key) or store.ledger.rows("ev_items", paper_id=key)
        return f"evidence:{rows[0]['evidence_id']}" if rows else None
    if t == "mcp":
        # [mcp:SERVER/TYPE/ID] exactly, or [mcp:ID] when exactly one recorded MCP record has that id.
        if "/" in id_:
            rows = store.ledger.rows("ev_items", kind="mcp-record", key=id_)
        else:
            rows = [r for r in store.ledger.rows("ev_items", kind="mcp-record") if r["key"].endswith(f"/{id_}")]
        return f"evidence:{rows[0]['evidence_id']}" if len(rows) == 1 else None
    return None


@dataclass(frozen=True)
class RecordedClaims:
    claims: Sequence[Claim]  # a ClaimList from record_claims: each Claim built when read
    envelopes: list[Envelope]  # one per claim, then the alias map's when one was given
    alias_map: AliasMap | None = None

    @property
    def unresolved(self) -> list[tuple[str, str]]:
        """(claim id, raw citation) for every citation that resolves to nothing recorded."""
        if isinstance(self.claims, ClaimList):
            return self.claims.unresolved()
        return [(c.claim_id, cit.raw) for c in self.claims for cit in c.citations if not cit.resolved]

    def summaries(self) -> Iterator[tuple[str, str, Iterator[tuple[str, bool]]]]:
        """Per claim: its id, its text and its citations as (raw, resolved); from a ClaimList without
        building each Claim (a claim with a hundred thousand citations would hold as many models)."""
        if isinstance(self.claims, ClaimList):
            return self.claims.summaries()
        return ((c.claim_id, c.text, ((x.raw, x.resolved) for x in c.citations)) for c in self.claims)

    @property
    def unresolved_count(self) -> int:
        """How many citations resolve to nothing recorded (``len(unresolved)``, without the list)."""
        if isinstance(self.claims, ClaimList):
            return self.claims.unresolved_count()
        return len(self.unresolved)

    def to_json(self, *, stream: bool = False) -> dict[str, Any]:
        """The result as JSON; with ``stream``, its lists make their items while ``json.JSONEncoder``
        with an indent writes them (the same text, a claim at a time; for ``claims extract --json``)."""
        ids: list[str | None] = [e.id for e in self.envelopes[: len(self.claims)]] or [None] * len(self.claims)
        if stream and isinstance(self.claims, ClaimList):
            return {
                "claims": self.claims.json_claims(ids),
                "unresolved": self.claims.json_unresolved(),
                "aliasMap": None if self.alias_map is None else self.alias_map.payload_json(),
            }
        return {
            "claims": [
                {**c.payload_json(), "recordId": record_id} for c, record_id in zip(self.claims, ids, strict=True)
            ],
            "unresolved": [{"claimId": cid, "citation": raw} for cid, raw in self.unresolved],
            "aliasMap": None if self.alias_map is None else self.alias_map.payload_json(),
        }


def record_claims(
    store: Store,
    reply: str,
    *,
    review_run_id: str | None = None,
    turn_id: str | None = None,
    aliases: Mapping[str, str] | None = None,
    artifact: Any = None,
    actor: str = "agent",
    dry_run: bool = False,
) -> RecordedClaims:
    """Extract the claims of an assistant reply, resolve their citations, and record them (one batch).

    ``aliases`` is the turn's alias map (``ev1`` → evidence id): chips resolve through it, and it
    is recorded in the same batch, for this reply's content and for ``artifact`` (a
    :class:`~reviewtrail.provenance.artifacts.VersionInfo`) when given.
    """
    layout, spans = claim_spans(reply, review_run_id=review_run_id, turn_id=turn_id)
    first = next(spans, None)
    with_map = aliases is not None or artifact is not None
    alias_map = None
    if with_map:  # checked before anything is stored
        alias_map = alias_map_record(aliases or {}, turn_id=turn_id, review_run_id=review_run_id, artifact=artifact)
    source = None
    if not dry_run and (first is not None or with_map):
        source = store.cas.put(reply.encode("utf-8"), pool="agent-state", media_type="text/markdown").to_json()
        if with_map:
            alias_map = alias_map_record(
                aliases or {}, turn_id=turn_id, review_run_id=review_run_id, source=source, artifact=artifact
            )
    mapping = alias_map.aliases if alias_map is not None else {}
    tokens = layout.tokens
    claims = ClaimList(reply, tokens, review_run_id=review_run_id, turn_id=turn_id, source=source)
    known: dict[str, Outcome] = {}  # what each citation (as written) resolved to, bounded

    def outcome(k: int) -> Outcome:
        start, end = tokens[2 * k], tokens[2 * k + 1]
        raw = reply[start:end]  # what a citation resolves to depends on its text alone
        if raw not in known:
            if len(known) >= _KNOWN_CITATIONS:
                known.clear()
            c = citation_at(reply, start, end)
            if c.alias is not None:
                chip = chip_citation(store, c, [mapping[c.alias]] if c.alias in mapping else [])
                known[raw] = (chip.resolved, chip.target, chip.evidence_id)
            else:
                target = resolve_citation(store, c.type, c.id)
                known[raw] = (target is not None, target, None)
        return known[raw]

    while first is not None:
        claims.add(new_id(), first, (outcome(k) for k in range(first.first, first.stop)))
        first = next(spans, None)
    if dry_run or (not claims and alias_map is None):
        return RecordedClaims(claims, [], alias_map)
    records = [new_record(c, actor=actor, privacy="private", subject=f"claim:{c.claim_id}") for c in claims]
    if alias_map is not None:
        records.append(
            new_record(alias_map, actor=actor, privacy="private", subject=f"turn:{turn_id}" if turn_id else None)
        )
    return RecordedClaims(claims, store.append(records), alias_map)


def get_claim(store: Store, claim_id: str) -> Claim:
    rows = store.ledger.rows("ev_claims", claim_id=claim_id)
    if not rows:
        raise NotFoundError(f"no claim {claim_id}", field="claim")
    return read(Claim, store.ledger.get(rows[0]["record_id"]).payload)


def claims_for(store: Store, *, review_run_id: str | None = None, turn_id: str | None = None) -> list[Claim]:
    where = {k: v for k, v in (("review_run_id", review_run_id), ("turn_id", turn_id)) if v is not None}
    rows = sorted(store.ledger.rows("ev_claims", **where), key=lambda r: r["seq"])
    return [read(Claim, store.ledger.get(r["record_id"]).payload) for r in rows]


def link_evidence(
    store: Store, claim_id: str, evidence_id: str, relation: Relation, *, actor: str = "user"
) -> Envelope:
    if relation not in ("supports", "context", "contradicts"):
        raise InvalidInputError(f"{relation!r} is not supports, context or contradicts", field="relation")
    get_claim(store, claim_id)
    get_evidence(store, evidence_id)
    for row in store.ledger.rows("ev_links", claim_id=claim_id, evidence_id=evidence_id, relation=relation):
        return store.ledger.get(row["record_id"])  # already linked: the same link is never recorded twice
    link = EvidenceLink(claim_id=claim_id, evidence_id=evidence_id, relation=relation)
    [env] = store.append([new_record(link, actor=actor, privacy="private", subject=f"claim:{claim_id}")])
    return env


def links_of(store: Store, claim_id: str) -> list[tuple[EvidenceLink, EvidenceItem]]:
    out = []
    for row in sorted(store.ledger.rows("ev_links", claim_id=claim_id), key=lambda r: r["seq"]):
        link = read(EvidenceLink, store.ledger.get(row["record_id"]).payload)
        out.append((link, get_evidence(store, link.evidence_id)))
    return out


_PDF_HEADER = b"%PDF-"
_HEADER_WINDOW = 1024  # readers accept a header preceded by up to 1 KiB of other bytes


def check_pdf(data: bytes, *, field: str = "pdf") -> bytes:
    """InvalidInputError unless ``data`` is a PDF at all (``%PDF-`` in its first kilobyte).

    A file that says it is a PDF but cannot be read is a recorded failed extraction; a file
    that is no PDF is wrong input, and nothing is stored or recorded for it.
    """
    if _PDF_HEADER not in data[: _HEADER_WINDOW + len(_PDF_HEADER)]:
        what = "an empty file" if not data else f"{len(data)} bytes without a %PDF- header"
        raise InvalidInputError(f"not a PDF ({what})", field=field)
    return data


def record_pdf_extraction(store: Store, paper_id: str, pdf: bytes, *, actor: str = "agent") -> PdfExtraction:
    """``paper_extract_pdf``: extract a paper's text; only a success makes ``fullTextRetrieved`` true."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError, PyPdfError

    paper_id = normalize_paper_id(paper_id)
    if not paper_id or any(c.isspace() for c in paper_id):
        raise InvalidInputError(f"{paper_id!r} is not a paper id like doi:10.1000/xyz", field="paper")
    source = store.cas.put(pdf, pool="data", media_type="application/pdf").to_json()
    try:
        reader = PdfReader(io.BytesIO(pdf))
        text = "\n".join((page.extract_text() or "") for page in reader.pages)
        pages = len(reader.pages)
        error = None if text.strip() else "no text could be extracted"
    except (PdfReadError, PyPdfError, RecursionError, MemoryError) as exc:
        text, pages, error = "", None, f"not a readable PDF ({type(exc).__name__}: {exc})"
    except Exception as exc:
        text, pages, error = "", None, f"not a readable PDF ({type(exc).__name__}: {exc})"
    text_ref = (
        store.cas.put(text.encode("utf-8"), pool="agent-state", media_type="text/plain").to_json()
        if not error
        else None
    )
    record = PdfExtraction.read(
        {
            "paperId": paper_id,
            "status": "failed" if error else "succeeded",
            "pages": pages,
            "text": text_ref,
            "source": source,
            "error": error,
        }
    )
    store.append([new_record(record, actor=actor, privacy="private", subject=f"paper:{paper_id}")])
    return record
