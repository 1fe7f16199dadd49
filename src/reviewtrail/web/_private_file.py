"""Files that hold a secret, checked as OpenSSH checks a private key file and its folders
(``safe_path`` with ``StrictModes``): the rule the review capability file is read by
(docs/human-review.md, "Writes: the review capability").

- The file is opened without following a symbolic link (``O_NOFOLLOW``) and every check is made
  on the open descriptor (``fstat``), so what is checked is what is read.
- It is a regular file, owned by the user the server runs as (its effective uid), and neither
  its group nor others have any permission on it (``0600`` or ``0400``).
- Its folder and every folder above it, up to ``/`` (symbolic links in the folder's path
  resolved, as OpenSSH does), is owned by root or by that user, and is not writable by its group
  or by others. The file's own folder allows no other writer at all, sticky or not (in a sticky
  folder others may still create names beside the file, such as the one it is about to be
  written under). A folder above it may be sticky (``/tmp``, mode ``1777``): there no one else can
  rename or remove an entry they do not own, so the folder below, owned by root or the user,
  stays put.

Each refusal is a :class:`~reviewtrail.errors.ConfigError` (exit 5) naming the file, what is
wrong and how to put it right.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from reviewtrail.errors import ConfigError

__all__ = ["check_folders", "read_private_file"]

_UNSAFE_FOLDER_BITS = stat.S_IWGRP | stat.S_IWOTH


def _server_user(owner: int | None) -> int:
    return os.geteuid() if owner is None else owner


def read_private_file(path: Path, *, field: str, what: str, owner: int | None = None) -> bytes:
    """The bytes of the secret file ``path`` (``what`` names it in refusals: "the capability
    file"), checked as the module says. ``owner`` is the uid the file and its folders must belong
    to, by default this process's effective uid."""
    uid = _server_user(owner)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO never hangs the open
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(
                f"{path}: {what} is a symbolic link; name the file itself, which is read without following links",
                field=field,
            ) from None
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})", field=field) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: {what} is not a regular file", field=field)
        if info.st_uid != uid:
            raise ConfigError(
                f"{path}: {what} is owned by uid {info.st_uid}, not by uid {uid} the server runs as "
                f"(chown {uid} {path})",
                field=field,
            )
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            raise ConfigError(
                f"{path}: mode {mode:04o} lets others read or change {what}; it must be readable by "
                f"its owner only (chmod 600 {path})",
                field=field,
            )
        check_folders(path, field=field, what=what, owner=uid)
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})", field=field) from None
    finally:
        os.close(fd)


def check_folders(path: Path, *, field: str, what: str, owner: int | None = None) -> None:
    """Refuse ``path`` unless its folder and every folder above it is owned by root or by
    ``owner`` (default: the effective uid) and only they may change it (a sticky folder above
    the file's own aside)."""
    uid = _server_user(owner)
    folder = Path(os.path.realpath(Path(path).absolute().parent))
    for current in (folder, *folder.parents):
        own = current == folder
        try:
            info = os.stat(current)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot check the folder {current} ({exc.strerror})", field=field) from None
        if info.st_uid not in (0, uid):
            raise ConfigError(
                f"{path}: the folder {current} is owned by uid {info.st_uid}; the folders of {what} must be "
                f"owned by root or by uid {uid} the server runs as, or their owner may replace it",
                field=field,
            )
        mode = stat.S_IMODE(info.st_mode)
        if mode & _UNSAFE_FOLDER_BITS and (own or not mode & stat.S_ISVTX):
            raise ConfigError(
                f"{path}: the folder {current} has mode {mode:04o}: other users may replace {what} "
                f"(chmod go-w {current}, or keep the file in a folder only its owner can write)",
                field=field,
            )
