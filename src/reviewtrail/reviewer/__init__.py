"""The Reviewer Specialist: explicit, read-only review checkpoints for artifact versions.

Public API::

    from reviewtrail.reviewer import review_artifact, review_checkpoint, review_summary, check_citations
"""

import typing

from reviewtrail import _face

# Each name loads on first use: the composition root reads the record types and query tables alone.
if typing.TYPE_CHECKING:
    from reviewtrail.reviewer._citations import check_citations as check_citations
    from reviewtrail.reviewer._cite_report import CitationReport as CitationReport
    from reviewtrail.reviewer._finding_codes import FINDING_CODES as FINDING_CODES
    from reviewtrail.reviewer._finding_codes import FindingCode as FindingCode
    from reviewtrail.reviewer._records import DECISIONS as DECISIONS
    from reviewtrail.reviewer._records import RECORD_TYPES as RECORD_TYPES
    from reviewtrail.reviewer._records import SUMMARY_LIMIT as SUMMARY_LIMIT
    from reviewtrail.reviewer._records import ArtifactReviewRun as ArtifactReviewRun
    from reviewtrail.reviewer._records import CheckResult as CheckResult
    from reviewtrail.reviewer._records import ReviewFinding as ReviewFinding
    from reviewtrail.reviewer._specialist import TIERS as TIERS
    from reviewtrail.reviewer._specialist import ReviewOutcome as ReviewOutcome
    from reviewtrail.reviewer._specialist import get_review as get_review
    from reviewtrail.reviewer._specialist import review_artifact as review_artifact
    from reviewtrail.reviewer._specialist import review_checkpoint as review_checkpoint
    from reviewtrail.reviewer._specialist import reviewer_tier as reviewer_tier
    from reviewtrail.reviewer._specialist import summarize as summarize
    from reviewtrail.reviewer._specialist import version_reviews as version_reviews
    from reviewtrail.reviewer._summary import ReviewSummary as ReviewSummary
    from reviewtrail.reviewer._summary import review_summary as review_summary
    from reviewtrail.reviewer.catalog import PROJECTIONS as PROJECTIONS
    from reviewtrail.reviewer.catalog import RECORD_TYPE_NAMES as RECORD_TYPE_NAMES
else:
    __getattr__, __dir__ = _face.lazy(__name__)
