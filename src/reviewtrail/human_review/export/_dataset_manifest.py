"""The dataset manifest beside exported files, and the one I/O of export: writing a file and its
manifest atomically (docs/human-review.md, "Export").

Each manifest entry names a file with its schema version, row count, byte size, SHA-256 and the
ledger head it was exported from (its hash, and its seq when known). Appending carries the
existing entries verbatim: files of an older schema version (v3 rows) stay listed, valid and
untouched. Writing journals the files first (``._export_folder``), so a killed write leaves only
what the next export can prove it wrote."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reviewtrail._durable import replace_file
from reviewtrail.canonical import canonical_json
from reviewtrail.errors import ConflictError, InvalidInputError
from reviewtrail.human_review.export._export_folder import load_manifest, remove_journal, write_journal
from reviewtrail.human_review.rules._export_rows import TRAINING_EXAMPLE_V4

__all__ = [
    "MANIFEST_NAME",
    "MANIFEST_VERSION",
    "append_to_manifest",
    "dataset_manifest",
    "file_entry",
    "jsonl_bytes",
    "write_export",
    "write_exports",
]

#: The manifest's file name in an export directory.
MANIFEST_NAME = "manifest.json"
#: The manifest format's version.
MANIFEST_VERSION = 1
_HEAD = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def jsonl_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """One RFC 8785 line per row: the same rows always give the same bytes."""
    return b"".join(canonical_json(dict(row), field="row") + b"\n" for row in rows)


def file_entry(name: str, schema_version: str, data: bytes) -> dict[str, Any]:
    """The manifest entry of a JSONL file's bytes (without its ledger head)."""
    if not _NAME.match(name) or name == MANIFEST_NAME:
        raise InvalidInputError(f"{name!r} is not a plain file name", field="name")
    return {
        "name": name,
        "schemaVersion": schema_version,
        "rows": data.count(b"\n"),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def dataset_manifest(
    files: Sequence[Mapping[str, Any]], *, ledger_head: str, ledger_head_seq: int | None = None
) -> dict[str, Any]:
    """A manifest listing ``files`` (entries from :func:`file_entry`), each exported from the
    ledger head whose hash is ``ledger_head`` and, when given, whose seq is ``ledger_head_seq``
    (field ``ledgerHeadSeq``: ``review export verify`` finds the record by it)."""
    if not _HEAD.match(ledger_head):
        raise InvalidInputError("the ledger head must be a record hash (64 hex digits)", field="ledgerHead")
    head: dict[str, Any] = {"ledgerHead": ledger_head}
    if ledger_head_seq is not None:
        if isinstance(ledger_head_seq, bool) or not isinstance(ledger_head_seq, int) or ledger_head_seq < 1:
            raise InvalidInputError("the ledger head's seq must be a positive integer", field="ledgerHeadSeq")
        head["ledgerHeadSeq"] = ledger_head_seq
    entries = [{**dict(f), **head} for f in files]
    _unique(entries)
    return {"manifestVersion": MANIFEST_VERSION, "files": entries}


def append_to_manifest(existing: Mapping[str, Any], new_files: Mapping[str, Any]) -> dict[str, Any]:
    """``existing`` with the files of the manifest ``new_files`` appended. Existing entries (of
    any schema version) are carried verbatim, never rewritten; a file name listed twice is a
    conflict."""
    carried = existing.get("files")
    if not isinstance(carried, list) or not all(isinstance(e, dict) and "name" in e for e in carried):
        raise InvalidInputError("the existing manifest must list its files, each with a name", field="files")
    merged = {**copy.deepcopy(dict(existing)), "files": copy.deepcopy(carried) + copy.deepcopy(new_files["files"])}
    _unique(merged["files"])
    return merged


def _unique(entries: Sequence[Mapping[str, Any]]) -> None:
    names = [e["name"] for e in entries]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConflictError(f"the manifest would list {', '.join(twice)} twice", field="name")


def write_export(
    directory: str | os.PathLike[str],
    rows: Iterable[Mapping[str, Any]],
    *,
    name: str,
    ledger_head: str,
    ledger_head_seq: int | None = None,
    schema_version: str = TRAINING_EXAMPLE_V4,
) -> dict[str, Any]:
    """Write ``rows`` as the JSONL file ``name`` in ``directory`` and list it in the directory's
    manifest (appended to an existing one), each written to a temporary file and renamed into
    place. An existing file of that name is a conflict. Returns the manifest."""
    return write_exports(
        directory, [(name, rows, schema_version)], ledger_head=ledger_head, ledger_head_seq=ledger_head_seq
    )


def write_exports(
    directory: str | os.PathLike[str],
    files: Sequence[tuple[str, Iterable[Mapping[str, Any]], str]],
    *,
    ledger_head: str,
    ledger_head_seq: int | None = None,
) -> dict[str, Any]:
    """Write each ``(name, rows, schema_version)`` as a JSONL file in ``directory``, then list
    them all in the directory's manifest with one write, so the manifest never lists part of
    them. Each file is written to a temporary file and renamed into place, the manifest last;
    before the first, the folder's journal records the names and SHA-256 about to be written, and
    it is removed after the manifest. An existing file of one of the names, or a journal left by
    an interrupted export, is a conflict. Returns the manifest."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    datas = [(name, jsonl_bytes(rows)) for name, rows, _ in files]
    entries = [file_entry(name, schema, data) for (name, data), (_, _, schema) in zip(datas, files, strict=True)]
    new = dataset_manifest(entries, ledger_head=ledger_head, ledger_head_seq=ledger_head_seq)
    for name, _ in datas:
        if (folder / name).exists():
            raise ConflictError(f"{name} already exists in {folder}", field="name")
    manifest_path = folder / MANIFEST_NAME
    if os.path.lexists(manifest_path):  # whatever is there must be a manifest (a folder is exit 2)
        manifest = append_to_manifest(load_manifest(manifest_path, field="manifest")[1], new)
    else:
        manifest = new
    write_journal(folder, [(e["name"], e["sha256"]) for e in entries], [*(n for n, _ in datas), MANIFEST_NAME])
    for name, data in datas:
        replace_file(folder / name, data)
    replace_file(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False).encode("utf-8") + b"\n")
    remove_journal(folder)
    return manifest
