"""Workspace snapshots: (path, size, mtime, content hash) of every regular file.

Symbolic links and other special files are never followed or read: code in the sandbox
could point one at a host file. A file larger than ``max_file_size`` (the run's
``--max-file-size``; sparse files count at their apparent size) is never read: its state
has no hash (``sha256 == ""``), it counts as changed when its size, mtime or inode did, and
the run does not store it (see ``record_run``). A 10 GB sparse file costs a ``stat``, not a
10 GB read.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_BOUND", "FileState", "Snapshot", "changes", "open_beneath", "snapshot"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    inode: int
    sha256: str  # "" when the file was too large to read (see the module docs)

    @property
    def oversize(self) -> bool:
        return self.sha256 == ""


DEFAULT_BOUND = 1 << 30  # the default --max-file-size


class Snapshot(dict[str, FileState]):
    """Posix path relative to the workspace -> state. ``max_file_size`` is the bound it was taken
    with; a snapshot taken with it as ``previous`` uses the same bound."""

    max_file_size: int = DEFAULT_BOUND


def _hash(path: str) -> str:
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        while chunk := os.read(fd, _CHUNK):
            h.update(chunk)
    finally:
        os.close(fd)
    return h.hexdigest()


def snapshot(root: Path, previous: dict[str, FileState] | None = None, max_file_size: int | None = None) -> Snapshot:
    """Every regular file under ``root``; hashes are reused from ``previous`` when size, mtime and
    inode agree; files larger than ``max_file_size`` (default: the bound of ``previous``, else
    :data:`DEFAULT_BOUND`) are not read."""
    out = Snapshot()
    if max_file_size is None:
        max_file_size = getattr(previous, "max_file_size", DEFAULT_BOUND)
    out.max_file_size = max_file_size
    base = str(root)
    for folder, dirs, files in os.walk(base, followlinks=False):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in files:
            full = os.path.join(folder, name)
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            known = previous.get(rel) if previous else None
            if known and (known.size, known.mtime_ns, known.inode) == (st.st_size, st.st_mtime_ns, st.st_ino):
                out[rel] = known
                continue
            if st.st_size > max_file_size:
                out[rel] = FileState(st.st_size, st.st_mtime_ns, st.st_ino, "")
                continue
            try:
                digest = _hash(full)
            except (FileNotFoundError, OSError):
                continue
            out[rel] = FileState(st.st_size, st.st_mtime_ns, st.st_ino, digest)
    return out


def changes(before: dict[str, FileState], after: dict[str, FileState]) -> tuple[list[str], list[str]]:
    """(created, modified) paths, sorted. A file is modified when its content hash changed (for a
    file too large to hash: when its size, mtime or inode changed)."""
    created = sorted(p for p in after if p not in before)
    modified = sorted(p for p in after if p in before and _changed(before[p], after[p]))
    return created, modified


def _changed(old: FileState, new: FileState) -> bool:
    if old.oversize or new.oversize:
        return (old.size, old.mtime_ns, old.inode, old.sha256) != (new.size, new.mtime_ns, new.inode, new.sha256)
    return old.sha256 != new.sha256


def open_beneath(root: Path, rel: str) -> int | None:
    """Open ``root/rel`` for reading without following any symlink on the way (each folder is
    opened with ``O_NOFOLLOW | O_DIRECTORY``, the file with ``O_NOFOLLOW``), and only if it is a
    regular file. ``None`` when it vanished or is not a regular file: code in the sandbox can swap
    a file for a symlink to a host file at any moment, and that must never be read."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    flags_dir = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        dirfd = os.open(root, flags_dir)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags_dir, dir_fd=dirfd)
            os.close(dirfd)
            dirfd = nxt
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dirfd)
    except OSError:
        return None
    finally:
        os.close(dirfd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd
