"""The training export: a campaign version's training examples written with their preference adapters
and dataset manifest into an export folder, the proof of a folder against its manifest and the
store, and the receipts of checkpoints trained from one (docs/human-review.md, "Export" and
"Training receipts")."""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.human_review.export._adapters import to_openai_preference as to_openai_preference
    from reviewtrail.human_review.export._adapters import to_trl_preference as to_trl_preference
    from reviewtrail.human_review.export._dataset_manifest import MANIFEST_NAME as MANIFEST_NAME
    from reviewtrail.human_review.export._dataset_manifest import MANIFEST_VERSION as MANIFEST_VERSION
    from reviewtrail.human_review.export._dataset_manifest import append_to_manifest as append_to_manifest
    from reviewtrail.human_review.export._dataset_manifest import dataset_manifest as dataset_manifest
    from reviewtrail.human_review.export._dataset_manifest import file_entry as file_entry
    from reviewtrail.human_review.export._dataset_manifest import jsonl_bytes as jsonl_bytes
    from reviewtrail.human_review.export._dataset_manifest import write_export as write_export
    from reviewtrail.human_review.export._export_folder import JOURNAL_NAME as JOURNAL_NAME
    from reviewtrail.human_review.export._export_folder import MANIFEST_MAX_BYTES as MANIFEST_MAX_BYTES
    from reviewtrail.human_review.export._export_job import EXPORT_KINDS as EXPORT_KINDS
    from reviewtrail.human_review.export._export_job import OPENAI_PREFERENCE as OPENAI_PREFERENCE
    from reviewtrail.human_review.export._export_job import TRL_PREFERENCE as TRL_PREFERENCE
    from reviewtrail.human_review.export._export_job import ExportExclusion as ExportExclusion
    from reviewtrail.human_review.export._export_job import ExportReport as ExportReport
    from reviewtrail.human_review.export._export_job import campaign_file_pattern as campaign_file_pattern
    from reviewtrail.human_review.export._export_job import campaign_files as campaign_files
    from reviewtrail.human_review.export._export_job import export_campaign as export_campaign
    from reviewtrail.human_review.export._export_job import export_file_name as export_file_name
    from reviewtrail.human_review.export._export_verify import ExportProblem as ExportProblem
    from reviewtrail.human_review.export._export_verify import ExportVerification as ExportVerification
    from reviewtrail.human_review.export._export_verify import prove_export_manifest as prove_export_manifest
    from reviewtrail.human_review.export._export_verify import read_export_manifest as read_export_manifest
    from reviewtrail.human_review.export._export_verify import verify_export as verify_export
    from reviewtrail.human_review.export._training_receipt import EVALUATION_MAX_BYTES as EVALUATION_MAX_BYTES
    from reviewtrail.human_review.export._training_receipt import ReceiptResult as ReceiptResult
    from reviewtrail.human_review.export._training_receipt import load_evaluation as load_evaluation
    from reviewtrail.human_review.export._training_receipt import record_training_receipt as record_training_receipt
else:
    __getattr__, __dir__ = _face.lazy(__name__)
