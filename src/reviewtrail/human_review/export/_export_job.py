"""``review export``: a campaign version's training examples, read from one consistent state of
the store and written with their preference adapters and the dataset manifest
(docs/human-review.md, "Exporting a campaign").

Only active, externally eligible ``prefer`` and ``correct`` decisions on items that still bind
what they froze become examples; every other decision is reported with its reason.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns._campaigns import require_campaign
from reviewtrail.human_review.export._adapters import preference_lines
from reviewtrail.human_review.export._dataset_manifest import MANIFEST_NAME, ExportFiles
from reviewtrail.human_review.export._export_folder import clear_debris, export_lock, load_manifest
from reviewtrail.human_review.reads._campaign_read import ItemState, campaign_item_states, campaign_training
from reviewtrail.human_review.rules._export_rows import TRAINING_EXAMPLE_V4, training_example_v4
from reviewtrail.human_review.rules._labels import prompt_label
from reviewtrail.ledger import Ledger, signed_reads
from reviewtrail.store import Progress, Store

if TYPE_CHECKING:
    from reviewtrail.ledger import TrustedKeys

__all__ = [
    "EXPORT_KINDS",
    "OPENAI_PREFERENCE",
    "TRL_PREFERENCE",
    "ExportExclusion",
    "ExportReport",
    "campaign_file_pattern",
    "campaign_files",
    "export_campaign",
    "export_file_name",
]

#: Schema version of the TRL preference file of an export.
TRL_PREFERENCE = "trl.preference.v1"
#: Schema version of the OpenAI preference fine-tuning file of an export.
OPENAI_PREFERENCE = "openai.preference.v1"
#: File kind (the name's suffix before ``.jsonl``) → schema version, in the order written.
EXPORT_KINDS: dict[str, str] = {
    "training-example.v4": TRAINING_EXAMPLE_V4,
    "trl-preference": TRL_PREFERENCE,
    "openai-preference": OPENAI_PREFERENCE,
}
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _slug(campaign_id: str) -> str:
    """The campaign id as a file-name part: itself when it is a plain name, else its plain
    characters and a short digest of the id (so two ids never share a slug)."""
    if _PLAIN.match(campaign_id):
        return campaign_id
    import hashlib

    plain = re.sub(r"[^A-Za-z0-9._-]", "_", campaign_id).lstrip("._-") or "campaign"
    return f"{plain}-{hashlib.sha256(campaign_id.encode('utf-8')).hexdigest()[:8]}"


def export_file_name(campaign_id: str, version: int, number: int, kind: str) -> str:
    """``<campaign>-v<version>-<n>.<kind>.jsonl``: ``n`` numbers the exports of a campaign
    version into one directory, so a later export never overwrites an earlier one."""
    return f"{_slug(campaign_id)}-v{version}-{number}.{kind}.jsonl"


def campaign_file_pattern(campaign_id: str, version: int) -> re.Pattern[str]:
    """Matches the export file names of a campaign version; group 1 is the export number and
    group 2 the kind."""
    kinds = "|".join(re.escape(k) for k in EXPORT_KINDS)
    return re.compile(rf"^{re.escape(_slug(campaign_id))}-v{version}-([1-9][0-9]*)\.({kinds})\.jsonl$")


def campaign_files(manifest: Any, campaign_id: str, version: int) -> list[dict[str, Any]]:
    """The entries of a dataset manifest (parsed JSON) that name export files of a campaign
    version (by their file names, see :func:`export_file_name`)."""
    listed = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(listed, list):
        return []
    pattern = campaign_file_pattern(campaign_id, version)
    return [e for e in listed if isinstance(e, dict) and pattern.match(str(e.get("name", "")))]


def _next_number(out_dir: Path, campaign_id: str, version: int) -> int:
    pattern = campaign_file_pattern(campaign_id, version)
    names = {p.name for p in out_dir.iterdir()} if out_dir.is_dir() else set()
    manifest = out_dir / MANIFEST_NAME
    if os.path.lexists(manifest):
        listed = load_manifest(manifest, field="manifest")[1].get("files", [])
        if not isinstance(listed, list):
            raise InvalidInputError(
                f"{manifest} is not a dataset manifest (an object listing its files)", field="manifest"
            )
        names |= {str(e.get("name")) for e in listed if isinstance(e, dict)}
    numbers = [int(m.group(1)) for name in names if (m := pattern.match(name))]
    return max(numbers, default=0) + 1


@dataclass(frozen=True)
class ExportExclusion:
    """A decision (or, for an item whose decisions cannot be read, the item) left out of an
    export: the field that fails (``disposition``, ``decision``, ``eligibility``, ``item``,
    ``response``, ``replacement``, ``preferred``) and why, with the short label of the item's
    prompt (:func:`~._labels.prompt_label`; in the report only, never in an exported file)."""

    item_id: str
    decision_id: str | None
    disposition: str | None
    field: str
    reason: str
    prompt_label: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "itemId": self.item_id,
            "promptLabel": self.prompt_label,
            "decisionId": self.decision_id,
            "disposition": self.disposition,
            "field": self.field,
            "reason": self.reason,
        }


@dataclass
class ExportReport:
    """What an export wrote and left out."""

    campaign_id: str
    version: int
    out_dir: str
    ledger_head: str
    number: int = 0
    items: int = 0
    undecided: int = 0
    exported: int = 0
    files: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[ExportExclusion] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "campaign": {"id": self.campaign_id, "version": self.version},
            "outDir": self.out_dir,
            "ledgerHead": self.ledger_head,
            "exportNumber": self.number,
            "items": self.items,
            "undecided": self.undecided,
            "exported": self.exported,
            "files": list(self.files),
            "excluded": [e.to_json() for e in self.excluded],
        }


def export_campaign(
    store: Store,
    campaign_id: str,
    version: int,
    out_dir: str | Path,
    *,
    progress: Progress | None = None,
    trusted_keys: TrustedKeys | None = None,
) -> ExportReport:
    """Export a campaign version's training examples into ``out_dir``: the
    ``thoughtstream.training-example.v4`` file and its TRL and OpenAI preference files, each
    listed in ``manifest.json`` with the same ledger head (the head when the export began; every
    read is made from that one state). The files are written as the items are read (memory
    does not grow with the campaign) and appear, with their manifest entries, only when whole.
    Returns what was written and every decision left out.

    ``trusted_keys``: every record the export reads must be signed by one of these keys (not
    after its revocation); the first that is not is refused (exit 4, naming its seq and type)
    and nothing is left written (:func:`~reviewtrail.ledger.signed_reads`: checked on the reads
    themselves)."""
    ledger = store.ledger
    require_campaign(ledger, campaign_id, version)
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        raise InvalidInputError(f"{folder} exists and is not a folder", field="out")
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInputError(f"cannot create the folder {folder}: {exc.strerror or exc}", field="out") from None
    signed = signed_reads(ledger, trusted_keys) if trusted_keys is not None else contextlib.nullcontext()
    with ledger.snapshot(), _refused_leaves_nothing(folder, created), signed, _collector_paused():
        head = ledger.head()
        if head is None:
            raise InvalidInputError("the ledger is empty: there is nothing to export", field="campaign")
        report = ExportReport(campaign_id, version, str(folder), head.hash)
        with export_lock(folder):  # a killed export's files are cleared, never numbered past
            clear_debris(folder, campaign_file_pattern(campaign_id, version), MANIFEST_NAME)
            report.number = _next_number(folder, campaign_id, version)
            named = [(export_file_name(campaign_id, version, report.number, k), v) for k, v in EXPORT_KINDS.items()]
            with ExportFiles(folder, named) as out:
                _write_rows(out, ledger, report, progress)
                manifest = out.commit(ledger_head=head.hash, ledger_head_seq=head.seq)
    report.files.extend(manifest["files"][-len(named) :])
    return report


def _write_rows(out: ExportFiles, ledger: Ledger, report: ExportReport, progress: Progress | None) -> None:
    """Write the rows of the campaign's items into ``out`` as they are read: each v4 row, then
    its TRL and OpenAI preference rows."""
    campaign_id, version = report.campaign_id, report.version
    training = campaign_training(ledger, campaign_id, version)
    total = ledger.count("hr_items", campaign_id=campaign_id, campaign_version=version)
    for state in campaign_item_states(ledger, campaign_id, version, training_enabled=training):
        report.items += 1
        for row in _export_item(state, report):
            out.write(0, row)
            for trl, openai in preference_lines(row):
                out.write(1, trl)
                out.write(2, openai)
            report.exported += 1
        if progress is not None:
            progress("items", 1, total)


@contextlib.contextmanager
def _refused_leaves_nothing(folder: Path, created: bool) -> Iterator[None]:
    """A read refused before anything is written leaves no folder the export made itself."""
    try:
        yield
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when still empty
        raise


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cycle collector while a campaign is read: the read makes and keeps hundreds of
    thousands of small objects (records, payloads, rows), and each full collection would walk them
    all again, though none of them forms a cycle that must be freed before the read ends."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _export_item(state: ItemState, report: ExportReport) -> list[dict[str, Any]]:
    """The row of an item's active decision, if it may become one; every other decision of the
    item is reported with its reason."""
    item_id = state.item_id

    def exclude(decision_id: str | None, disposition: str | None, field_: str, reason: str) -> None:
        label = prompt_label(state.resolved.prompt.prompt)  # only for what is left out
        report.excluded.append(ExportExclusion(item_id, decision_id, disposition, field_, reason, label))

    if not state.decisions:
        report.undecided += 1
    active_id = state.active.decision.decision_id if state.active else None
    inactive = set(state.active.inactive) if state.active else set()
    for fact in state.decisions:
        if fact.decision_id == active_id:
            continue
        reason = _inactive(active_id) if fact.decision_id in inactive else _never_counted()
        exclude(fact.decision_id, fact.decision.disposition, "decision", reason)
    invalid = "the item is invalid: " + "; ".join(state.resolved.problems) if state.resolved.problems else None
    if state.active is None:
        if invalid is not None:
            exclude(None, None, "item", invalid)
        return []
    disposition = state.active.decision.decision.disposition
    if invalid is not None:  # whatever the decision, an item that no longer binds what it froze
        exclude(active_id, disposition, "item", invalid)
        return []
    if state.refusal is not None or state.example is None:
        field_, reason = (state.refusal.field, state.refusal.problem) if state.refusal else ("item", "no facts")
        exclude(active_id, disposition, field_, reason)
        return []
    return [training_example_v4(state.example)]


def _inactive(active_id: str | None) -> str:
    return f"the decision is not active: {active_id} is the item's active decision"


def _never_counted() -> str:
    return "the decision never counts (it does not fit its item, repeats a submission or names a wrong decision)"
