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
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reviewtrail._durable import fsync_dir, replace_file
from reviewtrail.canonical import canonical_json
from reviewtrail.errors import ConflictError, InvalidInputError
from reviewtrail.human_review.export._export_folder import (
    load_manifest,
    remove_journal,
    rewrite_journal,
    write_journal,
)
from reviewtrail.human_review.rules._export_rows import TRAINING_EXAMPLE_V4

__all__ = [
    "MANIFEST_NAME",
    "MANIFEST_VERSION",
    "ExportFiles",
    "append_to_manifest",
    "dataset_manifest",
    "file_entry",
    "jsonl_bytes",
    "jsonl_line",
    "place_file",
    "write_export",
    "write_exports",
]

#: The manifest's file name in an export directory.
MANIFEST_NAME = "manifest.json"
#: The manifest format's version.
MANIFEST_VERSION = 1
_HEAD = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def jsonl_line(row: Mapping[str, Any]) -> bytes:
    """A row's line of a JSONL file, in RFC 8785: the same row always gives the same bytes."""
    return canonical_json(row if type(row) is dict else dict(row), field="row") + b"\n"


def jsonl_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """One line per row (:func:`jsonl_line`)."""
    return b"".join(map(jsonl_line, rows))


def file_entry(name: str, schema_version: str, data: bytes) -> dict[str, Any]:
    """The manifest entry of a JSONL file's bytes (without its ledger head)."""
    _check_name(name)
    return _entry(name, schema_version, data.count(b"\n"), len(data), hashlib.sha256(data).hexdigest())


def _entry(name: str, schema_version: str, rows: int, size: int, sha256: str) -> dict[str, Any]:
    """A manifest entry, its keys in the order the manifest lists them."""
    return {"name": name, "schemaVersion": schema_version, "rows": rows, "bytes": size, "sha256": sha256}


def _check_name(name: str) -> None:
    if not _NAME.match(name) or name == MANIFEST_NAME:
        raise InvalidInputError(f"{name!r} is not a plain file name", field="name")


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
    them all in the directory's manifest with one write (:class:`ExportFiles`). Returns the
    manifest."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    with ExportFiles(folder, [(name, schema) for name, _, schema in files]) as out:
        for index, (_, rows, _) in enumerate(files):
            for row in rows:
                out.write(index, row)
        return out.commit(ledger_head=ledger_head, ledger_head_seq=ledger_head_seq)


class _Staged:
    """One file being written: its temporary file (``.<name>.<random>.tmp``), rows, bytes, SHA-256."""

    def __init__(self, folder: Path, name: str, schema_version: str) -> None:
        self.name, self.schema_version = name, schema_version
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        self.tmp = Path(tmp)
        self.handle = os.fdopen(fd, "wb")
        self.sha256 = hashlib.sha256()
        self.rows = 0

    def write(self, line: bytes) -> None:
        self.handle.write(line)
        self.sha256.update(line)
        self.rows += 1

    def entry(self) -> dict[str, Any]:
        # "bytes": every byte written, from the first
        return _entry(self.name, self.schema_version, self.rows, self.handle.tell(), self.sha256.hexdigest())


class ExportFiles:
    """The JSONL files of one export, written as their rows come and listed in the folder's
    manifest at the end, so memory does not grow with the export.

    Entering checks the names (an existing file of one of them is a conflict) and the existing
    manifest (whatever is there must be a manifest), then journals the temporary files about to
    be written (``._export_folder``) before the first byte. :meth:`write` adds a row (one RFC
    8785 line, :func:`jsonl_line`) to a file's temporary file. :meth:`commit` makes each file
    durable, journals its name and SHA-256, renames each into place (:func:`place_file`), makes
    the names durable (one fsync of the folder), then writes the manifest (temp file and rename)
    and removes the journal: the manifest never lists part of an export. Leaving without a commit
    (a refusal, an error) removes the temporary files and the journal; a process killed part way
    leaves only what the journal names."""

    def __init__(self, folder: Path, files: Sequence[tuple[str, str]]) -> None:
        self.folder = folder
        for name, _ in files:
            _check_name(name)
            if (folder / name).exists():
                raise ConflictError(f"{name} already exists in {folder}", field="name")
        _unique([{"name": name} for name, _ in files])
        self._manifest_path = folder / MANIFEST_NAME
        self._existing: dict[str, Any] | None = None
        if os.path.lexists(self._manifest_path):  # whatever is there must be a manifest (a folder is exit 2)
            self._existing = load_manifest(self._manifest_path, field="manifest")[1]
            append_to_manifest(self._existing, {"files": [{"name": name} for name, _ in files]})
        self._files = files
        self._staged: list[_Staged] = []
        self._done = False

    def __enter__(self) -> ExportFiles:
        write_journal(self.folder, [], [*(name for name, _ in self._files), MANIFEST_NAME])
        try:
            self._staged = [_Staged(self.folder, name, schema) for name, schema in self._files]
        except BaseException:
            self._abort()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._done:
            self._abort()

    def write(self, index: int, row: Mapping[str, Any]) -> None:
        """Add ``row`` to the ``index``-th file."""
        self._staged[index].write(jsonl_line(row))

    def commit(self, *, ledger_head: str, ledger_head_seq: int | None = None) -> dict[str, Any]:
        """Put the files in place and list them in the manifest; returns the manifest."""
        entries = [staged.entry() for staged in self._staged]
        new = dataset_manifest(entries, ledger_head=ledger_head, ledger_head_seq=ledger_head_seq)
        manifest = new if self._existing is None else append_to_manifest(self._existing, new)
        for staged in self._staged:
            staged.handle.flush()
            os.fsync(staged.handle.fileno())
            staged.handle.close()
        names = [e["name"] for e in entries]
        rewrite_journal(self.folder, [(e["name"], e["sha256"]) for e in entries], [*names, MANIFEST_NAME])
        self._done = True  # from here on, what a failure leaves is the journal's to clear
        for staged in self._staged:
            place_file(staged.tmp, self.folder / staged.name)
        fsync_dir(self.folder)  # every name put in place made durable at once, before the manifest lists them
        replace_file(self._manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False).encode("utf-8") + b"\n")
        remove_journal(self.folder)
        return manifest

    def _abort(self) -> None:
        for staged in self._staged:
            staged.handle.close()
            staged.tmp.unlink(missing_ok=True)
        remove_journal(self.folder)


def place_file(staged: Path, target: Path) -> None:
    """Rename the durable temporary file ``staged`` to ``target`` (the caller then makes the
    names it placed durable, with one fsync of their folder)."""
    os.replace(staged, target)
