"""Workspace snapshots: (path, size, mtime, content hash) of every regular file.

Symbolic links and other special files are never followed or read: code in the sandbox
could point one at a host file.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FileState", "Snapshot", "changes", "open_beneath", "snapshot"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    inode: int
    sha256: str


Snapshot = dict[str, FileState]  # posix path relative to the workspace -> state


def _hash(path: str) -> str:
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        while chunk := os.read(fd, _CHUNK):
            h.update(chunk)
    finally:
        os.close(fd)
    return h.hexdigest()


def snapshot(root: Path, previous: Snapshot | None = None) -> Snapshot:
    """Every regular file under ``root``; hashes are reused from ``previous`` when size, mtime and inode agree."""
    out: Snapshot = {}
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
            try:
                digest = _hash(full)
            except (FileNotFoundError, OSError):
                continue
            out[rel] = FileState(st.st_size, st.st_mtime_ns, st.st_ino, digest)
    return out


def changes(before: Snapshot, after: Snapshot) -> tuple[list[str], list[str]]:
    """(created, modified) paths, sorted. A file is modified when its content hash changed."""
    created = sorted(p for p in after if p not in before)
    modified = sorted(p for p in after if p in before and after[p].sha256 != before[p].sha256)
    return created, modified


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
