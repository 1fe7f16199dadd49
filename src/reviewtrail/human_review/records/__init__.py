"""Human review's records: the payload models of its record types, their names and bounds, the
query tables a record's rows make, and the self-identification rule whose findings an item records
(docs/human-review.md, "Records"). Pure: nothing here reads a store; every other part of the package
stands on these."""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.human_review.records._projection import HUMAN_REVIEW_PROJECTION as HUMAN_REVIEW_PROJECTION
    from reviewtrail.human_review.records._projection import PROJECTIONS as PROJECTIONS
    from reviewtrail.human_review.records._projection import queue_key as queue_key
    from reviewtrail.human_review.records._record_names import CAMPAIGN as CAMPAIGN
    from reviewtrail.human_review.records._record_names import DECISION as DECISION
    from reviewtrail.human_review.records._record_names import ERROR_MAX_CHARS as ERROR_MAX_CHARS
    from reviewtrail.human_review.records._record_names import EVIDENCE_MAX_CHARS as EVIDENCE_MAX_CHARS
    from reviewtrail.human_review.records._record_names import INSTRUCTIONS_MAX_CHARS as INSTRUCTIONS_MAX_CHARS
    from reviewtrail.human_review.records._record_names import ITEM as ITEM
    from reviewtrail.human_review.records._record_names import LABEL_MAX_CHARS as LABEL_MAX_CHARS
    from reviewtrail.human_review.records._record_names import MAX_ALLOWLIST as MAX_ALLOWLIST
    from reviewtrail.human_review.records._record_names import MAX_CANDIDATE_AGENTS as MAX_CANDIDATE_AGENTS
    from reviewtrail.human_review.records._record_names import MAX_REASON_CODES as MAX_REASON_CODES
    from reviewtrail.human_review.records._record_names import MAX_RESPONSE_TAGS as MAX_RESPONSE_TAGS
    from reviewtrail.human_review.records._record_names import NOTE_MAX_CHARS as NOTE_MAX_CHARS
    from reviewtrail.human_review.records._record_names import PRIVACY_ORDER as PRIVACY_ORDER
    from reviewtrail.human_review.records._record_names import PROMPT as PROMPT
    from reviewtrail.human_review.records._record_names import PROMPT_MAX_CHARS as PROMPT_MAX_CHARS
    from reviewtrail.human_review.records._record_names import RECEIPT as RECEIPT
    from reviewtrail.human_review.records._record_names import RECLASSIFICATION as RECLASSIFICATION
    from reviewtrail.human_review.records._record_names import RESPONSE as RESPONSE
    from reviewtrail.human_review.records._record_names import RESPONSE_MAX_CHARS as RESPONSE_MAX_CHARS
    from reviewtrail.human_review.records._record_names import RUN as RUN
    from reviewtrail.human_review.records._record_names import SECOND_JUDGMENT as SECOND_JUDGMENT
    from reviewtrail.human_review.records._record_names import TRAINING_RECEIPT as TRAINING_RECEIPT
    from reviewtrail.human_review.records._record_names import prompt_digest as prompt_digest
    from reviewtrail.human_review.records._record_types import RECORD_TYPES as RECORD_TYPES
    from reviewtrail.human_review.records._records import DISPOSITIONS as DISPOSITIONS
    from reviewtrail.human_review.records._records import CampaignIdentity as CampaignIdentity
    from reviewtrail.human_review.records._records import CampaignRef as CampaignRef
    from reviewtrail.human_review.records._records import CampaignSettings as CampaignSettings
    from reviewtrail.human_review.records._records import Criterion as Criterion
    from reviewtrail.human_review.records._records import CriterionIdentity as CriterionIdentity
    from reviewtrail.human_review.records._records import Disposition as Disposition
    from reviewtrail.human_review.records._records import ItemCandidate as ItemCandidate
    from reviewtrail.human_review.records._records import ReviewDecision as ReviewDecision
    from reviewtrail.human_review.records._records import ReviewItem as ReviewItem
    from reviewtrail.human_review.records._records import ReviewPrompt as ReviewPrompt
    from reviewtrail.human_review.records._records import ReviewResponse as ReviewResponse
    from reviewtrail.human_review.records._records import SecondJudgment as SecondJudgment
    from reviewtrail.human_review.records._records import Strength as Strength
    from reviewtrail.human_review.records._records import new_campaign_record as new_campaign_record
    from reviewtrail.human_review.records._records import new_decision_record as new_decision_record
    from reviewtrail.human_review.records._records import new_item_record as new_item_record
    from reviewtrail.human_review.records._records import new_prompt_record as new_prompt_record
    from reviewtrail.human_review.records._records import new_second_judgment_record as new_second_judgment_record
    from reviewtrail.human_review.records._run_records import RECEIPT_FILES_MAX as RECEIPT_FILES_MAX
    from reviewtrail.human_review.records._run_records import RUN_ORIGINS as RUN_ORIGINS
    from reviewtrail.human_review.records._run_records import RUN_STATUSES as RUN_STATUSES
    from reviewtrail.human_review.records._run_records import AgentIdentity as AgentIdentity
    from reviewtrail.human_review.records._run_records import CandidateRun as CandidateRun
    from reviewtrail.human_review.records._run_records import ContextInput as ContextInput
    from reviewtrail.human_review.records._run_records import ContextReceipt as ContextReceipt
    from reviewtrail.human_review.records._run_records import PrivacyReclassification as PrivacyReclassification
    from reviewtrail.human_review.records._run_records import ReceiptFile as ReceiptFile
    from reviewtrail.human_review.records._run_records import RunOrigin as RunOrigin
    from reviewtrail.human_review.records._run_records import RunStatus as RunStatus
    from reviewtrail.human_review.records._run_records import TrainingReceipt as TrainingReceipt
    from reviewtrail.human_review.records._run_records import new_reclassification_record as new_reclassification_record
    from reviewtrail.human_review.records._run_records import new_training_receipt_record as new_training_receipt_record
else:
    __getattr__, __dir__ = _face.lazy(__name__)
