"""Removing session workspaces from disk: resumable, serialized, never following symlinks out."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from reviewtrail.errors import BackendUnavailableError

__all__ = ["make_owner_writable", "removal_lock", "remove_workspace"]


@contextlib.contextmanager
def removal_lock(workspaces: Path) -> Iterator[None]:
    """One workspace removal at a time per store (an advisory lock on the ``workspaces`` folder)."""
    workspaces.mkdir(parents=True, exist_ok=True)
    fd = os.open(workspaces, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def make_owner_writable(top: Path) -> None:
    """Give the owner rwx on ``top`` and every folder beneath it, so it can be removed.

    A sandboxed run may leave read-only folders behind. Symbolic links are never followed:
    each entry is checked with ``lstat`` before it is changed, and ``os.fwalk`` does not
    descend through links.
    """

    def fix(name: str | Path, dir_fd: int | None) -> None:
        with contextlib.suppress(OSError):
            st = os.lstat(name, dir_fd=dir_fd)
            if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o700 != 0o700:
                os.chmod(name, stat.S_IMODE(st.st_mode) | 0o700, dir_fd=dir_fd)

    fix(top, None)
    for _path, dirnames, _files, dir_fd in os.fwalk(top, follow_symlinks=False):
        for name in dirnames:
            fix(name, dir_fd)


def remove_workspace(workspace: Path, session_id: str) -> bool:
    """Remove ``workspace`` entirely; ``False`` when there was nothing left to remove.

    Raises :class:`BackendUnavailableError` (exit 5) naming the file that could not go;
    running ``session rm`` again (or ``verify --repair``) finishes the job later.
    """
    if not os.path.lexists(workspace):
        return False
    try:
        if workspace.is_symlink() or not workspace.is_dir():
            workspace.unlink()
            return True
        try:
            shutil.rmtree(workspace)
        except PermissionError:
            make_owner_writable(workspace)
            shutil.rmtree(workspace)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and not os.path.lexists(workspace):
            return True  # removed concurrently: the goal is reached
        where = f" ({exc.filename})" if exc.filename else ""
        raise BackendUnavailableError(
            f"could not remove all of the workspace {workspace}: {exc.strerror or exc}{where}; "
            f"the deletion is recorded: fix this, then run `reviewtrail session rm {session_id}` again "
            "(or `reviewtrail verify --repair`)",
            field="session",
        ) from exc
    return True
