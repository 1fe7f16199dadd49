"""Review reuse: reviewing an unchanged artifact version again with the same configuration reuses
the earlier complete review instead of running the checks (and any model call) again.

The configuration of a review (recorded on the run as ``configuration``, with its
``configurationDigest``)::

    {"rulesVersion": REVIEW_RULES_VERSION,   # bumped whenever a check's rules change
     "tier": "quick" | "smart" | "deep",
     "mediaKind": "narrative" | "json" | "other",      # see ._media
     "checks": ["citation", "computation"],          # the checks that run, LLM tier last
     "reviewer": null | {"kind", "endpoint", "model"}}  # the LLM backend of smart and deep

An earlier review is reused when, and only when:

* the caller did not force a new review (``force=True``, ``review run --force``);
* it reviewed the same artifact version (the same version record) with the same content digest;
* its configuration digest is the same;
* it is complete: no check was inconclusive (unreadable text or lineage, an LLM answer that
  could not be read), and it is an original review, not itself a reuse;
* nothing a check reads has been recorded since: every later ledger record is a review, a
  PromptManifest, a model-usage record or a reviewer trace. New evidence, claims, runs, PDF
  extractions or versions therefore mean a fresh review.

The reuse is recorded as a review of its own (new id, the caller's trigger and times) with the
earlier one's checks, findings, decision and summary and ``reusedFromReviewId`` set to the
original review; it lists no PromptManifests or traces, since it made no model call. The most
recent qualifying review is the one reused.
"""

from __future__ import annotations

from typing import Any, Final

from reviewtrail._struct import read
from reviewtrail.canonical import canonical_sha256
from reviewtrail.ledger import Envelope
from reviewtrail.media import MediaKind
from reviewtrail.provenance.artifacts import VersionInfo
from reviewtrail.reviewer._media import checks_for
from reviewtrail.reviewer._records import ArtifactReviewRun
from reviewtrail.reviewer.catalog import REVIEW_RUN
from reviewtrail.store import Store

__all__ = [
    "REVIEW_RULES_VERSION",
    "configuration_digest",
    "find_reusable",
    "review_configuration",
]

#: Version 2: the reference's citation rules, advice codes, media kinds and the structure check.
REVIEW_RULES_VERSION: Final = "2"
#: Records that never change what a review's checks read.
_INERT_PREFIXES: Final = ("reviewer.", "provenance.prompt-manifest@", "provenance.model-usage@", "trace.review-call@")


def review_configuration(tier: str, kind: MediaKind, reviewer: dict[str, Any] | None) -> dict[str, Any]:
    """The configuration of a review (see the module docstring)."""
    checks = checks_for(kind) + ([tier] if tier in ("smart", "deep") else [])
    return {
        "rulesVersion": REVIEW_RULES_VERSION,
        "tier": tier,
        "mediaKind": kind,
        "checks": checks,
        "reviewer": reviewer,
    }


def configuration_digest(configuration: dict[str, Any]) -> str:
    return "sha256:" + canonical_sha256(configuration, field="configuration")


def _complete(run: ArtifactReviewRun) -> bool:
    return run.reused_from_review_id is None and all(c.status != "inconclusive" for c in run.checks)


def _nothing_recorded_since(store: Store, envelope: Envelope) -> bool:
    return all(later.type.startswith(_INERT_PREFIXES) for later in store.ledger.read(start=envelope.seq + 1))


def find_reusable(
    store: Store, info: VersionInfo, config_digest: str, content_digest: str
) -> tuple[ArtifactReviewRun, Envelope] | None:
    """The most recent complete review that may be reused for this version and configuration."""
    rows = store.ledger.rows("rv_runs", artifact_id=info.version.artifact_id)
    for row in sorted(rows, key=lambda r: r["seq"], reverse=True):
        if row["version"] != info.version.version:
            continue
        envelope = store.ledger.get(row["record_id"])
        if envelope.type != REVIEW_RUN:
            continue
        run = read(ArtifactReviewRun, envelope.payload)
        if (
            run.version_record_id == info.envelope.id
            and run.content_digest == content_digest
            and run.configuration_digest == config_digest
            and _complete(run)
        ):
            return (run, envelope) if _nothing_recorded_since(store, envelope) else None
    return None
