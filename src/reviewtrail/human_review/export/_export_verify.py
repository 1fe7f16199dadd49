"""Proving an export folder against its manifest and the store (docs/human-review.md, "Verifying
an export").

The proof: each file ``manifest.json`` lists exists, is a regular file (not a symlink) and has the
listed SHA-256, size and row count; each ledger head the manifest records is a record of this
store's chain (the record at the listed seq has the listed hash; a head listed without its seq is
looked for along the chain); and no training receipt recorded in the store contradicts the
manifest: a receipt names a manifest by the SHA-256 of its bytes, and (since receipts record
them) by the name, SHA-256 and ledger head of each export file it was trained from, so an
export file edited together with its manifest entry after a receipt no longer has the SHA-256
the receipt bound. ``review export verify`` also reports every file of the folder that matches
the export naming pattern but is not listed. ``campaign receipt`` and ``campaign coverage
--export-manifest`` run the same proof over the manifest and the files it lists, and refuse
(:class:`~reviewtrail.errors.IntegrityError`) when it fails."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewtrail._struct import read
from reviewtrail.errors import IntegrityError, InvalidInputError
from reviewtrail.human_review.export._dataset_manifest import MANIFEST_NAME
from reviewtrail.human_review.export._export_folder import (
    JOURNAL_NAME,
    journaled_names,
    load_manifest,
)
from reviewtrail.human_review.export._export_job import EXPORT_KINDS
from reviewtrail.human_review.records._run_records import TrainingReceipt
from reviewtrail.inputs import read_regular
from reviewtrail.ledger import Ledger
from reviewtrail.store import Store

__all__ = [
    "ExportProblem",
    "ExportVerification",
    "prove_export_manifest",
    "read_bounded",
    "read_export_manifest",
    "verify_export",
]

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_HEX = re.compile(r"^[0-9a-f]{64}$")
_KINDS = "|".join(re.escape(k) for k in EXPORT_KINDS)
#: Any campaign version's export file name (``<campaign>-v<V>-<n>.<kind>.jsonl``).
_EXPORT_NAME = re.compile(rf"^.+-v[1-9][0-9]*-[1-9][0-9]*\.({_KINDS})\.jsonl$")


@dataclass(frozen=True)
class ExportProblem:
    """What differs: ``name`` is the file (or the manifest), ``field`` what was checked (``file``,
    ``sha256``, ``bytes``, ``rows``, ``name``, ``ledgerHead``, ``ledgerHeadSeq``, ``receipt``,
    ``unlisted``)."""

    name: str
    field: str
    problem: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "field": self.field, "problem": self.problem}


@dataclass
class ExportVerification:
    """The proof of an export folder: what was checked, the receipts that name the manifest, and
    every problem (none when ``ok``). Notes are not problems (a manifest no receipt names yet)."""

    directory: str
    manifest: str
    manifest_sha256: str
    files: list[dict[str, Any]] = field(default_factory=list)
    ledger_heads: list[dict[str, Any]] = field(default_factory=list)
    receipts: list[dict[str, Any]] = field(default_factory=list)
    problems: list[ExportProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def problem(self, name: str, field_: str, problem: str) -> None:
        self.problems.append(ExportProblem(name, field_, problem))

    def check(self, *, field: str) -> None:
        """Raise :class:`IntegrityError` (with ``field``) naming each problem, if there is one."""
        if self.problems:
            listed = "; ".join(f"{p.name}: {p.problem}" for p in self.problems)
            raise IntegrityError(f"the export at {self.manifest} does not hold: {listed}", field=field)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "directory": self.directory,
            "manifest": self.manifest,
            "manifestSha256": self.manifest_sha256,
            "files": list(self.files),
            "ledgerHeads": list(self.ledger_heads),
            "receipts": list(self.receipts),
            "problems": [p.to_json() for p in self.problems],
            "notes": list(self.notes),
        }


def read_bounded(path: Path, *, field: str, most: int) -> bytes:
    """The bytes of ``path``, at most ``most``; a missing, unreadable or larger file is refused
    with ``field`` (exit 2)."""
    return read_regular(path, most, field=field)


def read_export_manifest(path: Path, *, field: str) -> tuple[bytes, dict[str, Any]]:
    """A dataset manifest's bytes and its parsed JSON (an object listing its files), at most
    ``MANIFEST_MAX_BYTES``; refused with ``field`` otherwise (exit 2)."""
    data, manifest = load_manifest(path, field=field)
    if not isinstance(manifest.get("files"), list):
        raise InvalidInputError(f"{path} is not a dataset manifest (an object listing its files)", field=field)
    return data, manifest


def verify_export(store: Store, directory: str | Path) -> ExportVerification:
    """Prove the export folder ``directory`` (its ``manifest.json``, every file it lists, the
    ledger heads and the store's training receipts) and report every file matching the export
    naming pattern that the manifest does not list. Returns the proof; its problems are not
    raised (``check`` raises them). A folder or manifest that cannot be read is refused (field
    ``dir``, exit 2)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InvalidInputError(f"{folder} is not a folder", field="dir")
    path = folder / MANIFEST_NAME
    data, manifest = read_export_manifest(path, field="dir")
    result = prove_export_manifest(store, path, data, manifest)
    if path.is_symlink():
        result.problem(MANIFEST_NAME, "file", "is a symlink, not a regular file")
    listed = {str(e.get("name")) for e in manifest["files"] if isinstance(e, dict)}
    journaled = journaled_names(folder)
    for entry in sorted(folder.iterdir()):
        if _EXPORT_NAME.match(entry.name) and entry.name not in listed:
            why = "is an export file the manifest does not list"
            if entry.name in journaled:
                why += " (an interrupted export journaled it: the next export into the folder removes it)"
            result.problem(entry.name, "unlisted", why)
    if (folder / JOURNAL_NAME).exists():
        result.notes.append(f"{JOURNAL_NAME}: an export into this folder was interrupted; the next export clears it")
    return result


def prove_export_manifest(store: Store, path: Path, data: bytes, manifest: dict[str, Any]) -> ExportVerification:
    """The proof of the manifest at ``path`` (its ``data`` and parsed ``manifest``) over the
    files it lists in its folder, the ledger heads it records and the store's training
    receipts (see the module's docstring); files it does not list are not looked at."""
    folder = path.parent
    result = ExportVerification(str(folder), str(path), hashlib.sha256(data).hexdigest())
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in manifest["files"]:
        if not isinstance(entry, dict):
            result.problem(MANIFEST_NAME, "files", f"lists {entry!r}, not a file entry")
            continue
        name = str(entry.get("name", ""))
        if name in seen:
            result.problem(name, "name", "is listed twice")
        seen.add(name)
        entries.append(entry)
        _check_file(folder, entry, result)
    ledger = store.ledger
    with ledger.snapshot():
        _check_heads(ledger, entries, result)
        _check_receipts(ledger, entries, result)
    if not result.receipts:
        result.notes.append("no training receipt names this manifest or its files (an export before its receipt)")
    return result


def _is_export(entry: dict[str, Any]) -> bool:
    """An entry an export wrote (by its schema version or its name): it must list everything."""
    return entry.get("schemaVersion") in EXPORT_KINDS.values() or bool(_EXPORT_NAME.match(str(entry.get("name"))))


def _measure(path: Path) -> tuple[str, int, int]:
    digest, size, rows = hashlib.sha256(), 0, 0
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
            rows += chunk.count(b"\n")
    return digest.hexdigest(), size, rows


def _check_file(folder: Path, entry: dict[str, Any], result: ExportVerification) -> None:
    name = entry.get("name")
    if not isinstance(name, str) or not _PLAIN.match(name) or name == MANIFEST_NAME:
        result.problem(str(name), "name", "is not a plain file name of the folder")
        return
    path = folder / name
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        result.problem(name, "file", "is listed but missing")
        return
    if stat.S_ISLNK(mode):
        result.problem(name, "file", "is a symlink, not a regular file")
        return
    if not stat.S_ISREG(mode):
        result.problem(name, "file", "is not a regular file")
        return
    sha256, size, rows = _measure(path)
    result.files.append({"name": name, "sha256": sha256, "bytes": size, "rows": rows})
    if "sha256" not in entry:
        if _is_export(entry):
            result.problem(name, "sha256", "is listed without its sha256")
        else:
            result.notes.append(f"{name}: listed without a sha256, not checked")
    elif entry["sha256"] != sha256:
        result.problem(name, "sha256", f"has sha256 {sha256}; the manifest lists {entry['sha256']}")
    for key, actual in (("bytes", size), ("rows", rows)):
        if key in entry and entry[key] != actual:
            result.problem(name, key, f"has {actual} {key}; the manifest lists {entry[key]}")


def _check_heads(ledger: Ledger, entries: list[dict[str, Any]], result: ExportVerification) -> None:
    """Each ledger head an export entry lists is a record of this store's chain (for an entry of
    another kind, carried verbatim and perhaps from another store, a head not found is a note)."""
    heads: dict[tuple[str, int | None], list[str]] = {}
    exports = {str(e.get("name")) for e in entries if _is_export(e)}
    for entry in entries:
        name, head, seq = str(entry.get("name")), entry.get("ledgerHead"), entry.get("ledgerHeadSeq")
        if head is None and not _is_export(entry):
            continue
        if not isinstance(head, str) or not _HEX.match(head):
            result.problem(name, "ledgerHead", "lists no ledger head hash (64 hex digits)")
        elif seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 1):
            result.problem(name, "ledgerHeadSeq", f"lists {seq!r}, not a record's seq")
        else:
            heads.setdefault((head, seq), []).append(name)
    at = ledger.records_at(seq for _, seq in heads if seq is not None)
    found = _find_hashes(ledger, {head for head, seq in heads if seq is None})
    for (head, listed_seq), names in heads.items():
        seq = listed_seq if listed_seq is not None else found.get(head)
        if seq is None:
            problem = f"ledger head {head} is no record of this store's chain"
        elif seq not in at and listed_seq is not None:
            problem = f"ledger head seq {seq} is no record of this store's chain"
        elif listed_seq is not None and at[seq].hash != head:
            problem = f"the record at seq {seq} of this store's chain has hash {at[seq].hash}, not ledger head {head}"
        else:
            result.ledger_heads.append({"hash": head, "seq": seq, "files": names})
            continue
        for name in names:
            if name in exports:
                result.problem(name, "ledgerHead", problem)
            else:
                result.notes.append(f"{name}: a carried entry, not checked against this store: {problem}")


def _find_hashes(ledger: Ledger, hashes: Iterable[str]) -> dict[str, int]:
    """The seq of each record of the chain whose hash is one of ``hashes`` (a walk along the
    chain, only for heads listed without their seq)."""
    wanted, found = set(hashes), {}
    if wanted:
        for env in ledger.read():
            if env.hash in wanted:
                found[env.hash] = env.seq
                if len(found) == len(wanted):
                    break
    return found


def _check_receipts(ledger: Ledger, entries: list[dict[str, Any]], result: ExportVerification) -> None:
    """Every training receipt that binds a file this manifest lists (same name, same ledger head)
    bound the SHA-256 the manifest lists; the receipts that name the manifest are reported."""
    listed = {str(e.get("name")): e for e in entries}
    for row in sorted(ledger.rows("hr_training_receipts"), key=lambda r: r["seq"]):
        env = ledger.get(row["record_id"])
        receipt = read(TrainingReceipt, env.payload)
        shown = {
            "recordId": env.id,
            "campaign": {"id": receipt.campaign.id, "version": receipt.campaign.version},
            "checkpoint": receipt.checkpoint,
            "exportManifestSha256": receipt.export_manifest_sha256,
        }
        named, differs, elsewhere = receipt.export_manifest_sha256 == result.manifest_sha256, False, []
        for bound in receipt.export_files or ():
            entry = listed.get(bound.name)
            if entry is None:
                continue
            if entry.get("ledgerHead") != bound.ledger_head:
                elsewhere.append(bound.name)
            elif entry.get("sha256") != bound.sha256:
                differs = True
                result.problem(
                    bound.name,
                    "receipt",
                    f"training receipt {env.id} (checkpoint {receipt.checkpoint}) bound sha256 {bound.sha256} for "
                    f"this file exported at ledger head {bound.ledger_head}; the manifest lists {entry.get('sha256')}",
                )
            else:
                named = True
        if named and not differs:
            by = "manifest" if receipt.export_manifest_sha256 == result.manifest_sha256 else "files"
            result.receipts.append({**shown, "boundBy": by})
        if elsewhere:
            result.notes.append(
                f"training receipt {env.id} binds {', '.join(elsewhere)} exported at another ledger head than "
                "this manifest lists (another export folder, or an edited entry)"
            )
