"""The Reviewer Specialist: explicit, read-only review checkpoints for artifact versions.

Public API::

    from reviewtrail.reviewer import review_artifact, review_checkpoint, check_citations
"""

from reviewtrail.ledger import Projection, RecordPayload
from reviewtrail.reviewer._citations import CitationReport, check_citations
from reviewtrail.reviewer._records import (
    DECISIONS,
    REVIEW_PROJECTION,
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
)

# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[RecordPayload], ...] = (ArtifactReviewRun,)
PROJECTIONS: tuple[Projection, ...] = (REVIEW_PROJECTION,)

__all__ = [
    "DECISIONS",
    "PROJECTIONS",
    "RECORD_TYPES",
    "TIERS",
    "ArtifactReviewRun",
    "CheckResult",
    "CitationReport",
    "ReviewFinding",
    "ReviewOutcome",
    "check_citations",
    "get_review",
    "review_artifact",
    "review_checkpoint",
    "reviewer_tier",
    "summarize",
]
