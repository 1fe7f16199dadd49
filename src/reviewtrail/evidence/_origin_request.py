"""Evidence origins as ``reviewtrail evidence add`` names them, and claims of a reply recorded
against an artifact version named ``NAME[@VERSION]``.

An :class:`EvidenceRequest` holds exactly one origin (checked, nothing read yet);
:func:`record_evidence` builds the origin (an artifact version looked up, a user's file stored
in the CAS, a quoted passage reduced to its hash) and records the item.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.evidence._evidence import RecordedClaims, add_evidence, parse_origin, record_claims
from reviewtrail.store import Store

__all__ = ["EvidenceRequest", "quote_hash", "record_evidence", "record_reply_claims"]

_ORIGIN_OPTIONS = "--run, --artifact, --paper, --mcp, --remote-job, --user-input"


def quote_hash(quote: str | None) -> str | None:
    """``sha256:<hex>`` of a quoted passage's UTF-8 bytes (only the hash is kept); None for no quote."""
    return f"sha256:{hashlib.sha256(quote.encode()).hexdigest()}" if quote else None


@dataclass(frozen=True)
class EvidenceRequest:
    """Exactly one origin (``run``, ``artifact``, ``paper``, ``mcp``, ``remote_job`` or
    ``user_input``; anything else is ``InvalidInputError``, field ``origin``) and what qualifies it."""

    run: str | None = None
    artifact: str | None = None
    paper: str | None = None
    page: int | None = None
    quote: str | None = None
    mcp: str | None = None
    scope: str = "metadata"
    paper_id: str | None = None
    remote_job: str | None = None
    user_input: Path | None = None
    project_id: str = "default"
    label: str | None = None

    def __post_init__(self) -> None:
        origins = (self.run, self.artifact, self.paper, self.mcp, self.remote_job, self.user_input)
        if sum(x is not None for x in origins) != 1:
            raise InvalidInputError(f"give exactly one of {_ORIGIN_OPTIONS}", field="origin")


def _mcp_origin(mcp: str, scope: str, paper_id: str | None) -> dict[str, Any]:
    parts = mcp.split("/", 2)
    if len(parts) != 3 or not all(parts):
        raise InvalidInputError(f"{mcp!r} is not SERVER/RECORD_TYPE/RECORD_ID", field="mcp")
    return {
        "kind": "mcp-record",
        "server": parts[0],
        "recordType": parts[1],
        "recordId": parts[2],
        "contentScope": scope,
        "paperId": paper_id,
    }


def _artifact_origin(store: Store, spec: str, project_id: str) -> dict[str, Any]:
    from reviewtrail.provenance.artifacts import get_version, parse_spec

    name, version = parse_spec(spec)
    info = get_version(store, name, version, project_id)
    return {
        "kind": "artifact",
        "artifactId": info.version.artifact_id,
        "name": name,
        "version": info.version.version,
        "content": info.version.content,
    }


def _origin(store: Store, r: EvidenceRequest) -> dict[str, Any]:
    if r.run is not None:
        return {"kind": "execution", "runId": r.run}
    if r.artifact is not None:
        return _artifact_origin(store, r.artifact, r.project_id)
    if r.paper is not None:
        return {"kind": "paper", "paperId": r.paper, "page": r.page, "quoteHash": quote_hash(r.quote)}
    if r.mcp is not None:
        return _mcp_origin(r.mcp, r.scope, r.paper_id)
    if r.remote_job is not None:
        return {"kind": "remote-job", "jobId": r.remote_job}
    assert r.user_input is not None
    ref = store.cas.put_file(r.user_input, pool="data", media_type="application/octet-stream")
    return {"kind": "user-input", "content": ref.to_json()}


def record_evidence(store: Store, request: EvidenceRequest) -> tuple[str, bool]:
    """Record the request's evidence item (de-duplicated); returns (evidence id, created)."""
    return add_evidence(store, parse_origin(_origin(store, request)), label=request.label)


def record_reply_claims(
    store: Store,
    text: str,
    *,
    review_run_id: str | None = None,
    turn_id: str | None = None,
    aliases: dict[str, str] | None = None,
    artifact: str | None = None,
    project_id: str = "default",
    dry_run: bool = False,
) -> RecordedClaims:
    """:func:`record_claims` of a reply, its alias map also applying to the artifact version
    ``artifact`` (``NAME[@VERSION]`` of ``project_id``) when given."""
    info = None
    if artifact is not None:
        from reviewtrail.provenance.artifacts import get_version, parse_spec

        name, version = parse_spec(artifact)
        info = get_version(store, name, version, project_id)
    return record_claims(
        store, text, review_run_id=review_run_id, turn_id=turn_id, aliases=aliases, artifact=info, dry_run=dry_run
    )
