"""An export folder while one export writes into it: the export holds the folder's lock, journals
the files it is about to write, and clears only what a killed export journaled
(docs/human-review.md, "Exporting a campaign").

Before it writes anything, an export records its intent in the folder's journal
(:data:`JOURNAL_NAME`): the names whose temporary files (``.<name>.<random>.tmp``) it may leave;
once those are written in full, and before the first is renamed into place, the journal is
replaced by one that also holds the name and SHA-256 of each file. The journal is made durable
before the first byte is written and removed after the manifest. A journal still present means
an export was killed: the next export removes each journaled file that the manifest does not
list and whose bytes still have the journaled SHA-256 (so it is exactly what that export wrote),
the journaled names' temporary files, then the journal. Nothing else is ever removed: a file that
merely matches the export naming pattern is never deleted, and with ``manifest.json`` missing
while export files of the campaign version are present the export refuses (the files of a manifest
moved away are never deleted, nor numbered over)."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reviewtrail._durable import fsync_dir, replace_file
from reviewtrail.canonical import loads_document
from reviewtrail.errors import ConflictError, InvalidInputError
from reviewtrail.inputs import read_regular

__all__ = [
    "JOURNAL_NAME",
    "MANIFEST_MAX_BYTES",
    "clear_debris",
    "export_lock",
    "journaled_names",
    "load_manifest",
    "remove_journal",
    "rewrite_journal",
    "write_journal",
]

#: The hidden journal of the export writing into a folder (present only while it writes, or
#: after it was killed).
JOURNAL_NAME = ".reviewtrail-export.journal"
#: The largest dataset manifest (or journal) read.
MANIFEST_MAX_BYTES = 16 * 1024 * 1024
_JOURNAL_VERSION = 1
_TEMP = re.compile(r"^\.(?P<name>.+)\.[^.]+\.tmp$")  # _durable.replace_file's temporary names
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_HEX = re.compile(r"^[0-9a-f]{64}$")


@contextmanager
def export_lock(folder: Path) -> Iterator[None]:
    """Hold the folder's exclusive lock (on the folder itself, no lock file); another export
    holding it is a conflict (field ``out``)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ConflictError(f"another export is writing into {folder}", field="out") from None
            raise
        yield
    finally:
        os.close(fd)


def write_journal(folder: Path, files: Sequence[tuple[str, str]], temporaries: Sequence[str]) -> None:
    """Record, durably and before anything is written, the ``(name, sha256)`` of each file an
    export will write and the names whose temporary files it may leave. A journal already there
    (an export killed before :func:`clear_debris` ran) is a conflict (field ``out``)."""
    path = folder / JOURNAL_NAME
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ConflictError(
            f"{folder} holds the journal of an interrupted export ({JOURNAL_NAME}); "
            "`reviewtrail review export` into the folder clears it first",
            field="out",
        ) from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(_journal(files, temporaries))
        handle.flush()
        os.fsync(handle.fileno())
    fsync_dir(folder)


def rewrite_journal(folder: Path, files: Sequence[tuple[str, str]], temporaries: Sequence[str]) -> None:
    """Replace the folder's journal (atomically and durably) once the files it will name are
    written in full and their SHA-256 known, before the first of them is put in place."""
    replace_file(folder / JOURNAL_NAME, _journal(files, temporaries))


def _journal(files: Sequence[tuple[str, str]], temporaries: Sequence[str]) -> bytes:
    doc = {
        "journalVersion": _JOURNAL_VERSION,
        "files": [{"name": name, "sha256": sha256} for name, sha256 in files],
        "temporaries": list(temporaries),
    }
    return json.dumps(doc, indent=2).encode("utf-8") + b"\n"


def remove_journal(folder: Path) -> None:
    """Remove the folder's journal once the manifest lists what it named."""
    (folder / JOURNAL_NAME).unlink(missing_ok=True)
    fsync_dir(folder)


def _read_journal(folder: Path) -> dict[str, Any] | None:
    """The journal's files (name → sha256) and temporary names, ``{}`` for a journal cut short
    (it is made durable before any file is written, so nothing it would name was written), or
    ``None`` when there is no journal."""
    path = folder / JOURNAL_NAME
    if not path.is_file() or path.is_symlink():
        return None
    try:
        doc = loads_document(read_regular(path, MANIFEST_MAX_BYTES, field="journal").decode("utf-8"))
    except (ValueError, UnicodeDecodeError):  # InvalidInputError is a ValueError
        return {}
    if not isinstance(doc, dict) or doc.get("journalVersion") != _JOURNAL_VERSION:
        return {}
    files = {
        str(e["name"]): str(e["sha256"])
        for e in doc.get("files", [])
        if isinstance(e, dict) and _PLAIN.match(str(e.get("name", ""))) and _HEX.match(str(e.get("sha256", "")))
    }
    temps = {str(t) for t in doc.get("temporaries", []) if isinstance(t, str) and _PLAIN.match(t)}
    return {"files": files, "temporaries": temps}


def journaled_names(folder: Path) -> set[str]:
    """The file names the folder's journal says an interrupted export was writing (empty when
    there is no journal)."""
    journal = _read_journal(folder)
    return set(journal.get("files", {})) if journal else set()


def _listed(folder: Path, manifest_name: str) -> set[str] | None:
    manifest = folder / manifest_name
    if not manifest.is_file():
        return set()
    try:
        files = load_manifest(manifest, field="manifest")[1].get("files", [])
        return {str(e.get("name")) for e in files if isinstance(e, dict)}
    except (ValueError, AttributeError):  # InvalidInputError is a ValueError
        return None


def _is_ours(path: Path, sha256: str) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest() == sha256


def clear_debris(folder: Path, pattern: re.Pattern[str], manifest_name: str) -> list[str]:
    """Remove what a killed export journaled (see the module's docstring), then refuse when
    ``manifest_name`` is missing but files matching ``pattern`` remain (a conflict, field
    ``out``, naming them); call it holding :func:`export_lock`. Returns the names removed. An
    unreadable manifest removes nothing (the export refuses it later)."""
    listed = _listed(folder, manifest_name)
    if listed is None:
        return []
    removed: list[str] = []
    journal = _read_journal(folder)
    if journal is not None:
        files: dict[str, str] = journal.get("files", {})
        temps: set[str] = journal.get("temporaries", set())
        for path in sorted(folder.iterdir()):
            temp = _TEMP.match(path.name)
            if path.name in files and path.name not in listed:
                ours = _is_ours(path, files[path.name])
            else:
                # the journaled names' temporary files, and the journal's own (a kill while it was
                # rewritten): both are written only by an export, under the folder's lock
                named = temp is not None and (temp["name"] in temps or temp["name"] == JOURNAL_NAME)
                ours = named and path.is_file() and not path.is_symlink()
            if ours:
                path.unlink()
                removed.append(path.name)
        (folder / JOURNAL_NAME).unlink()
        fsync_dir(folder)
    if not (folder / manifest_name).exists():
        present = sorted(p.name for p in folder.iterdir() if pattern.match(p.name))
        if present:
            raise ConflictError(
                f"{folder} has no {manifest_name} but holds export files it would list: {', '.join(present)}; "
                f"restore its {manifest_name} or move them away (an export never deletes or numbers over them)",
                field="out",
            )
    return removed


def load_manifest(path: Path, *, field: str) -> tuple[bytes, dict[str, Any]]:
    """A dataset manifest's bytes and its parsed JSON object: a regular file of at most
    :data:`MANIFEST_MAX_BYTES`, nested no deeper than the parser goes; refused naming ``field``
    (exit 2) otherwise (a folder, a FIFO, a document nested 100,000 deep...)."""
    data = read_regular(path, MANIFEST_MAX_BYTES, field=field)
    try:
        doc = loads_document(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInputError(f"{path} is not a JSON manifest: {exc}", field=field) from exc
    if not isinstance(doc, dict):
        raise InvalidInputError(f"{path} is not a dataset manifest (a JSON object)", field=field)
    return data, doc
