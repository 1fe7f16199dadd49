"""An export folder while one export writes into it: the export holds the folder's lock, and
clears what a killed export left (docs/human-review.md, "Exporting a campaign").

A killed export can leave files of its campaign version that its manifest never listed (the
manifest is written last) and hidden temporary files. Under the lock no other export is writing,
so such files are debris: the next export of that campaign version removes them before it
numbers its own files, and ends as an uninterrupted export would have."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reviewtrail._durable import fsync_dir
from reviewtrail.errors import ConflictError

__all__ = ["clear_debris", "export_lock"]

_TEMP = re.compile(r"^\.(?P<name>.+)\.[^.]+\.tmp$")  # _durable.replace_file's temporary names


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


def clear_debris(folder: Path, pattern: re.Pattern[str], manifest_name: str) -> list[str]:
    """Remove the files matching ``pattern`` that the manifest does not list, and the temporary
    files of such names or of the manifest; call it holding :func:`export_lock`. Returns the
    names removed. An unreadable manifest removes nothing (the export refuses it later)."""
    listed: set[str] = set()
    manifest = folder / manifest_name
    if manifest.is_file():
        try:
            files = json.loads(manifest.read_text(encoding="utf-8")).get("files", [])
            listed = {str(e.get("name")) for e in files if isinstance(e, dict)}
        except (ValueError, UnicodeDecodeError, AttributeError):
            return []
    removed = []
    for path in folder.iterdir():
        temp = _TEMP.match(path.name)
        stray = pattern.match(path.name) and path.name not in listed
        if temp and (pattern.match(temp["name"]) or temp["name"] == manifest_name):
            stray = True
        if stray and path.is_file() and not path.is_symlink():
            path.unlink()
            removed.append(path.name)
    if removed:
        fsync_dir(folder)
    return sorted(removed)
