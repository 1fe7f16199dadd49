"""The ArtifactReviewRun record: one Reviewer Specialist checkpoint and its findings.

Fields added after the first release are optional, so earlier records stay readable:
``configuration`` (what the review ran: rule version, tier, media kind, checks, reviewer model;
see :mod:`._reuse`), its ``configurationDigest``, the reviewed ``contentDigest``, and
``reusedFromReviewId`` when the review reused an earlier complete one instead of running again.
Earlier records have none of them and are therefore never reused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from msgspec import Meta, field

from reviewtrail._struct import Model, PayloadStruct
from reviewtrail.ledger import record_type
from reviewtrail.reviewer._finding_codes import FindingCode, check_finding_code
from reviewtrail.reviewer.catalog import REVIEW_RUN

__all__ = [
    "DECISIONS",
    "RECORD_TYPES",
    "SUMMARY_LIMIT",
    "ArtifactReviewRun",
    "CheckResult",
    "Decision",
    "ReviewFinding",
]

Decision = Literal["ACCEPT_AND_PROCEED", "REVISE_AND_RETRY", "SKIPPED"]
DECISIONS: tuple[Decision, ...] = ("ACCEPT_AND_PROCEED", "REVISE_AND_RETRY", "SKIPPED")
Severity = Literal["error", "warning", "info"]
SUMMARY_LIMIT = 1000


class ReviewFinding(Model, frozen=True, rename="camel"):
    code: Annotated[str, Meta(pattern=r"^[A-Z][A-Z0-9_]{2,63}$")]
    severity: Severity
    message: str
    check: str  # citation | structure | computation | smart | deep
    location: dict[str, Any] | None = None
    evidence_refs: list[str] = field(default_factory=list)

    @classmethod
    def new(
        cls,
        code: FindingCode,
        severity: Severity,
        check: str,
        message: str,
        *,
        location: dict[str, Any] | None = None,
        evidence_refs: Iterable[str] = (),
    ) -> ReviewFinding:
        """A finding of one of the reviewer's rules: ``code`` must be a :data:`FindingCode`
        (``code`` itself stays a string, so recorded reviews with other codes still load)."""
        return cls(
            code=check_finding_code(code),
            severity=severity,
            check=check,
            message=message,
            location=location,
            evidence_refs=list(evidence_refs),
        )


class CheckResult(Model, frozen=True):
    check: str
    status: Literal["passed", "failed", "inconclusive", "skipped"]
    detail: str | None = None


@record_type(REVIEW_RUN)
class ArtifactReviewRun(PayloadStruct, frozen=True, rename="camel"):
    review_run_id: str
    artifact_id: str
    project_id: str
    name: str
    version: int
    version_record_id: str
    tier: Literal["quick", "smart", "deep"]
    trigger: Literal["cli", "api", "review_checkpoint"]
    checks: list[CheckResult]
    findings: list[ReviewFinding]
    decision: Decision
    summary: Annotated[str, Meta(max_length=SUMMARY_LIMIT)]
    started_at: str
    ended_at: str
    prompt_manifest_ids: list[str] = field(default_factory=list)
    trace_paths: list[str] = field(default_factory=list)
    configuration: dict[str, Any] | None = None
    configuration_digest: str | None = None
    content_digest: str | None = None
    reused_from_review_id: str | None = None


# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[PayloadStruct], ...] = (ArtifactReviewRun,)
