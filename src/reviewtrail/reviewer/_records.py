"""The ArtifactReviewRun record: one Reviewer Specialist checkpoint and its findings.

Fields added after the first release are optional, so earlier records stay readable:
``configuration`` (what the review ran: rule version, tier, media kind, checks, reviewer model;
see :mod:`._reuse`), its ``configurationDigest``, the reviewed ``contentDigest``, and
``reusedFromReviewId`` when the review reused an earlier complete one instead of running again.
Earlier records have none of them and are therefore never reused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reviewtrail._strict import StrictInt
from reviewtrail.ledger import Envelope, Projection, ProjectionTable, RecordPayload, record_type
from reviewtrail.reviewer._finding_codes import FindingCode, check_finding_code

__all__ = [
    "DECISIONS",
    "PROJECTIONS",
    "RECORD_TYPES",
    "REVIEW_PROJECTION",
    "REVIEW_RUN",
    "SUMMARY_LIMIT",
    "ArtifactReviewRun",
    "CheckResult",
    "Decision",
    "ReviewFinding",
]

REVIEW_RUN = "reviewer.artifact-review-run@1"
Decision = Literal["ACCEPT_AND_PROCEED", "REVISE_AND_RETRY", "SKIPPED"]
DECISIONS: tuple[Decision, ...] = ("ACCEPT_AND_PROCEED", "REVISE_AND_RETRY", "SKIPPED")
Severity = Literal["error", "warning", "info"]
SUMMARY_LIMIT = 1000


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")


class ReviewFinding(_Part):
    code: str = Field(pattern=r"^[A-Z][A-Z0-9_]{2,63}$")
    severity: Severity
    message: str
    check: str  # citation | structure | computation | smart | deep
    location: dict[str, Any] | None = None
    evidence_refs: list[str] = Field(default_factory=list, alias="evidenceRefs")

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


class CheckResult(_Part):
    check: str
    status: Literal["passed", "failed", "inconclusive", "skipped"]
    detail: str | None = None


@record_type(REVIEW_RUN)
class ArtifactReviewRun(RecordPayload):
    review_run_id: str = Field(alias="reviewRunId")
    artifact_id: str = Field(alias="artifactId")
    project_id: str = Field(alias="projectId")
    name: str
    version: StrictInt
    version_record_id: str = Field(alias="versionRecordId")
    tier: Literal["quick", "smart", "deep"]
    trigger: Literal["cli", "api", "review_checkpoint"]
    checks: list[CheckResult]
    findings: list[ReviewFinding]
    decision: Decision
    summary: str = Field(max_length=SUMMARY_LIMIT)
    started_at: str = Field(alias="startedAt")
    ended_at: str = Field(alias="endedAt")
    prompt_manifest_ids: list[str] = Field(default_factory=list, alias="promptManifestIds")
    trace_paths: list[str] = Field(default_factory=list, alias="tracePaths")
    configuration: dict[str, Any] | None = None
    configuration_digest: str | None = Field(None, alias="configurationDigest")
    content_digest: str | None = Field(None, alias="contentDigest")
    reused_from_review_id: str | None = Field(None, alias="reusedFromReviewId")


def _rows(env: Envelope) -> Iterable[tuple[str, dict[str, Any]]]:
    if env.type == REVIEW_RUN:
        p = env.payload_value
        yield (
            "rv_runs",
            {
                "review_run_id": p["reviewRunId"],
                "artifact_id": p["artifactId"],
                "name": p["name"],
                "version": p["version"],
                "record_id": env.id,
                "seq": env.seq,
            },
        )


REVIEW_PROJECTION = Projection(
    name="reviewer",
    version=1,
    tables=(
        ProjectionTable(
            "rv_runs",
            (
                ("review_run_id", "text"),
                ("artifact_id", "text"),
                ("name", "text"),
                ("version", "int"),
                ("record_id", "text"),
                ("seq", "int"),
            ),
            key=("review_run_id",),
            indexes=(("artifact_id",), ("name",)),
        ),
    ),
    rows=_rows,
)

# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[RecordPayload], ...] = (ArtifactReviewRun,)
PROJECTIONS: tuple[Projection, ...] = (REVIEW_PROJECTION,)
