"""The payload models this package adds to the application's record catalog (see
:mod:`reviewtrail.app`): loaded when a record of one of its types is validated or made, never by
a read of the query tables (:mod:`._projection`)."""

from __future__ import annotations

from reviewtrail._struct import PayloadStruct
from reviewtrail.human_review.records._records import (
    CampaignSettings,
    ReviewDecision,
    ReviewItem,
    ReviewPrompt,
    ReviewResponse,
    SecondJudgment,
)
from reviewtrail.human_review.records._run_records import (
    CandidateRun,
    ContextReceipt,
    PrivacyReclassification,
    TrainingReceipt,
)

__all__ = ["RECORD_TYPES"]

RECORD_TYPES: tuple[type[PayloadStruct], ...] = (
    ReviewPrompt,
    ReviewResponse,
    ReviewItem,
    ReviewDecision,
    CampaignSettings,
    SecondJudgment,
    CandidateRun,
    ContextReceipt,
    PrivacyReclassification,
    TrainingReceipt,
)
