"""Closing the loop: record that a checkpoint was trained outside from one exact export, with its
held-out evaluation results (docs/human-review.md, "Training receipts").

Review never trains, promotes or activates anything: a receipt is evidence only, private by
default, never exported, and shown by ``campaign coverage``. A receipt is recorded only for an
export that holds (``._export_verify``): each file the manifest lists has its listed SHA-256, its
ledger heads are records of this store's chain and no earlier receipt contradicts it; the receipt
binds the manifest's bytes and each export file of the campaign version by name, SHA-256 and
ledger head.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewtrail._struct import parse
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns._campaigns import require_campaign
from reviewtrail.human_review.export._export_job import campaign_files
from reviewtrail.human_review.export._export_verify import prove_export_manifest, read_bounded, read_export_manifest
from reviewtrail.human_review.records._run_records import (
    RECEIPT_FILES_MAX,
    TrainingReceipt,
    new_training_receipt_record,
)
from reviewtrail.ledger import Privacy
from reviewtrail.store import Store

__all__ = ["EVALUATION_MAX_BYTES", "ReceiptResult", "load_evaluation", "record_training_receipt"]

#: The largest evaluation file a receipt takes (its results are a summary, not a dataset).
EVALUATION_MAX_BYTES = 64 * 1024


def load_evaluation(path: Path) -> dict[str, Any]:
    """The held-out evaluation results: a JSON object of at most ``EVALUATION_MAX_BYTES`` bytes
    (refused with field ``eval`` otherwise)."""
    data = read_bounded(path, field="eval", most=EVALUATION_MAX_BYTES)

    def refuse(constant: str) -> Any:
        raise InvalidInputError(
            f"{path} holds {constant}, which canonical JSON cannot hold (it is refused, never stored as null)",
            field="eval",
        )

    try:
        loaded = json.loads(data.decode("utf-8"), parse_constant=refuse)
    except InvalidInputError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"{path} is not JSON: {exc}", field="eval") from exc
    if not isinstance(loaded, dict):
        raise InvalidInputError(f"{path} must hold a JSON object of evaluation results", field="eval")
    return loaded


@dataclass(frozen=True)
class ReceiptResult:
    """A recorded training receipt."""

    record_id: str
    campaign_id: str
    version: int
    checkpoint: str
    export_manifest_sha256: str
    files: tuple[str, ...]
    privacy: str

    def to_json(self) -> dict[str, Any]:
        return {
            "recordId": self.record_id,
            "campaign": {"id": self.campaign_id, "version": self.version},
            "checkpoint": self.checkpoint,
            "exportManifestSha256": self.export_manifest_sha256,
            "files": list(self.files),
            "privacy": self.privacy,
        }


def record_training_receipt(
    store: Store,
    campaign_id: str,
    version: int,
    *,
    export_manifest: Path,
    checkpoint: str,
    evaluation: dict[str, Any],
    privacy: Privacy = "private",
) -> ReceiptResult:
    """Record a ``human-review.training-receipt@1``: ``checkpoint`` was trained from the export
    whose manifest file is ``export_manifest`` (bound by the SHA-256 of its bytes), with
    ``evaluation`` as its held-out results. A manifest that lists no export file of the campaign
    version is refused (field ``export-manifest``); so is an evaluation that is not a JSON object
    or is larger than ``EVALUATION_MAX_BYTES`` once encoded (field ``eval``); an unknown campaign
    version is not found (field ``campaign``). An export that does not hold (a listed file that
    differs from its entry, a ledger head that is no record of this store's chain, a file an
    earlier receipt bound with another SHA-256) is refused with :class:`IntegrityError` (field
    ``export-manifest``, exit 4) and nothing is recorded."""
    require_campaign(store.ledger, campaign_id, version)
    data, manifest = read_export_manifest(export_manifest, field="export-manifest")
    listed = campaign_files(manifest, campaign_id, version)
    if not listed:
        raise InvalidInputError(
            f"{export_manifest} lists no export file of campaign {campaign_id} v{version}", field="export-manifest"
        )
    if len(listed) > RECEIPT_FILES_MAX:
        raise InvalidInputError(
            f"{export_manifest} lists {len(listed)} export files of the campaign version; a receipt binds at most "
            f"{RECEIPT_FILES_MAX}",
            field="export-manifest",
        )
    if not isinstance(evaluation, dict):
        raise InvalidInputError("the evaluation must be a JSON object", field="eval")
    if len(json.dumps(evaluation, ensure_ascii=False).encode("utf-8")) > EVALUATION_MAX_BYTES:
        raise InvalidInputError(f"the evaluation is larger than {EVALUATION_MAX_BYTES} bytes", field="eval")
    proof = prove_export_manifest(store, export_manifest, data, manifest)
    proof.check(field="export-manifest")
    digest = proof.manifest_sha256
    payload = parse(
        TrainingReceipt,
        {
            "campaign": {"id": campaign_id, "version": version},
            "exportManifestSha256": digest,
            "checkpoint": checkpoint,
            "evaluation": evaluation,
            "exportFiles": [{"name": e["name"], "sha256": e["sha256"], "ledgerHead": e["ledgerHead"]} for e in listed],
        },
        field="receipt",
    )
    [env] = store.append([new_training_receipt_record(payload, privacy=privacy)])
    names = tuple(str(e["name"]) for e in listed)
    return ReceiptResult(env.id, campaign_id, version, checkpoint, digest, names, env.privacy)
