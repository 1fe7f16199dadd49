"""Where a kernel host lives on disk, and how to tell whether it is alive.

Each kernel of a store has four files in ``<store>/kernels/<session>/`` (folders mode 0700):

* ``NAME.lock``: an exclusive ``flock`` held by the host for its whole life. A client that
  starts a host takes it first and hands the locked file to the host, so two clients never
  start two hosts; when the host dies, however it dies, the lock goes with it. A held lock
  means a live host (or one starting); a free one means whatever else is there is stale.
* ``NAME.sock``: the host's Unix socket (mode 0600).
* ``NAME.json``: the host's metadata (name, session, kernel id, language, pid, started, last
  used, idle minutes); never the ``--env`` values.
* ``NAME.log``: the host's standard output and error (appended to; kept after it stops).

Socket paths can be longer than a Unix socket address allows (108 bytes), so sockets are bound
and reached through ``/proc/self/fd/<folder fd>/NAME.sock``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewtrail._durable import replace_file
from reviewtrail.errors import InvalidInputError
from reviewtrail.provenance.kernels._protocol import check_kernel_name
from reviewtrail.provenance.runs._sessions import workspace_of
from reviewtrail.store import Store

__all__ = [
    "KernelFiles",
    "connect",
    "kernel_entries",
    "kernel_files",
    "lock_held",
    "make_private_folder",
    "pid_alive",
    "read_meta",
    "short_address",
    "take_lock",
    "write_meta",
]


def _kernels_root(store: Store) -> Path:
    if store.root is None:
        raise InvalidInputError("kernels need a store on disk (for their sockets)", field="store")
    return store.root / "kernels"


@dataclass(frozen=True)
class KernelFiles:
    """The files of kernel ``name`` of session ``session_id`` in ``folder``."""

    folder: Path
    session_id: str
    name: str

    @property
    def lock(self) -> Path:
        return self.folder / f"{self.name}.lock"

    @property
    def socket(self) -> Path:
        return self.folder / f"{self.name}.sock"

    @property
    def meta(self) -> Path:
        return self.folder / f"{self.name}.json"

    @property
    def log(self) -> Path:
        return self.folder / f"{self.name}.log"


def kernel_files(store: Store, session_id: str, name: str) -> KernelFiles:
    """The files of kernel ``name`` of ``session_id`` (both checked; nothing is made)."""
    workspace_of(store, session_id)  # a session id, or InvalidInputError
    return KernelFiles(_kernels_root(store) / session_id, session_id, check_kernel_name(name))


def make_private_folder(files: KernelFiles) -> None:
    """Make ``kernels/`` and ``kernels/<session>/`` (mode 0700); each must be a real folder of this user."""
    for folder in (files.folder.parent, files.folder):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise InvalidInputError(f"{folder} is not a folder of this user (a file or a symlink?)", field="kernel")
        if stat.S_IMODE(info.st_mode) & 0o077:
            folder.chmod(0o700)


def take_lock(path: Path, *, wait: bool = False) -> int | None:
    """An fd holding the exclusive lock on ``path`` (created when missing), or None when another
    process holds it. The file is the one at ``path`` when the lock was taken (a holder may
    remove it while it holds the lock: a lock taken on a removed file is dropped and taken again)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        held = os.fstat(fd)
        try:
            now = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            return fd
        os.close(fd)


def lock_held(path: Path) -> bool:
    """Whether a process (a live host, or a client starting one) holds the lock on ``path``."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a dead process not yet reaped)."""
    try:
        text = Path(f"/proc/{int(pid)}/stat").read_text(encoding="ascii", errors="replace")
    except (OSError, ValueError):
        return False
    state = text.rpartition(")")[2].split()[:1]
    return state not in (["Z"], ["X"], [])


@contextlib.contextmanager
def short_address(path: Path) -> Iterator[str]:
    """An address for the Unix socket ``path`` short enough for any folder: through an open fd
    of its folder (``/proc/self/fd/N/NAME``), valid while the block runs."""
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def connect(files: KernelFiles, timeout: float | None = None) -> socket.socket | None:
    """A connection to the kernel's host, or None when nothing listens on its socket."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    sock.settimeout(timeout)
    try:
        with short_address(files.socket) as address:
            sock.connect(address)
    except OSError:
        sock.close()
        return None
    return sock


def read_meta(path: Path) -> dict[str, Any] | None:
    """The host's metadata, or None when it is missing or unreadable."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def write_meta(path: Path, doc: dict[str, Any]) -> None:
    replace_file(path, json.dumps(doc, sort_keys=True, indent=2).encode("utf-8") + b"\n", mode=0o600)


def kernel_entries(store: Store, session_id: str | None = None) -> list[KernelFiles]:
    """Every kernel with metadata in the store (of ``session_id`` when given), by session and name."""
    root = _kernels_root(store)
    if session_id is not None:
        workspace_of(store, session_id)
        folders = [root / session_id]
    else:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()) if root.is_dir() else []
    found = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for meta in sorted(folder.glob("*.json")):
            doc = read_meta(meta)
            name = doc.get("name") if doc is not None else None
            if isinstance(name, str) and f"{name}.json" == meta.name:
                found.append(KernelFiles(folder, folder.name, name))
    return found
