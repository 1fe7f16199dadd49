"""The Reviewer Specialist: explicit, read-only review checkpoints for artifact versions.

Public API::

    from reviewtrail.reviewer import review_artifact, review_checkpoint, review_summary, check_citations
"""

from reviewtrail.reviewer._citations import CitationReport, check_citations
from reviewtrail.reviewer._finding_codes import FINDING_CODES, FindingCode
from reviewtrail.reviewer._records import (
    DECISIONS,
    PROJECTIONS,
    RECORD_TYPES,
    SUMMARY_LIMIT,
    ArtifactReviewRun,
    CheckResult,
    ReviewFinding,
)
from reviewtrail.reviewer._specialist import (
    TIERS,
    ReviewOutcome,
    get_review,
    review_artifact,
    review_checkpoint,
    reviewer_tier,
    summarize,
    version_reviews,
)
from reviewtrail.reviewer._summary import ReviewSummary, review_summary

__all__ = [
    "DECISIONS",
    "FINDING_CODES",
    "PROJECTIONS",
    "RECORD_TYPES",
    "SUMMARY_LIMIT",
    "TIERS",
    "ArtifactReviewRun",
    "CheckResult",
    "CitationReport",
    "FindingCode",
    "ReviewFinding",
    "ReviewOutcome",
    "ReviewSummary",
    "check_citations",
    "get_review",
    "review_artifact",
    "review_checkpoint",
    "review_summary",
    "reviewer_tier",
    "summarize",
    "version_reviews",
]
