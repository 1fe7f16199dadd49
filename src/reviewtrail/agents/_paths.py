"""The one rule for the paths an agent names: inside the server's roots, never onto a secret.

Every tool argument that names a file or folder on the server's machine goes through a
:class:`PathRule` built when the server starts:

- The path resolves, symlinks followed, inside one of the **roots**: the server's project folder
  (``--project-dir``, else the git top level of the folder it was started in) and the folders given
  with ``--allow-path``. ``/proc``, ``/sys``, ``/dev`` and ``/run`` are never inside a root.
- It is never a **secret** of the store or the server: the store's folder (ledger, objects,
  workspaces, leases, status), the ledger's SQLite file and a ``file://`` CAS folder wherever they
  are, the writer's signing key, the user's configuration folder, and the files the command line
  adds (the review capability file and nonce book). A secret is matched by its real path and, for
  files, by device and inode too, so a hard link to it is refused as well.
- A file a tool reads is opened first and then checked by what the open descriptor is
  (``/proc/self/fd``), so a folder swapped for a symlink between the check and the read cannot
  redirect it; it is read from that descriptor (at most its kind's size, :mod:`reviewtrail.inputs`),
  or handed to the reader as that descriptor's path. A file with more than one hard link is
  refused: it could be a link to a file inside a secret folder, which no list of inodes covers.

A refusal is invalid input naming the argument (exit 2). Its message names the path as the agent
gave it and never says whether anything exists outside the roots, and no refusal carries a byte of
any file.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from reviewtrail.errors import InvalidInputError
from reviewtrail.inputs import INPUT_LIMITS, InputKind

__all__ = ["SYSTEM_FOLDERS", "PathRule"]

#: Never inside a root, whatever the roots are: the kernel's and the running processes' files.
SYSTEM_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"), Path("/run"))

_CHUNK = 1 << 20


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@dataclass(frozen=True)
class PathRule:
    """Where an agent's paths may resolve (``roots``) and what they may never be (``secrets``:
    files or folders, by real path; ``secret_ids``: the device and inode of secret files)."""

    roots: tuple[Path, ...]
    secrets: tuple[Path, ...]
    secret_ids: frozenset[tuple[int, int]]

    @classmethod
    def build(cls, roots: Iterable[Path], secrets: Iterable[Path | None]) -> PathRule:
        """The rule over these roots and secrets, each resolved now (a secret that does not exist
        yet is kept by its path, so it is refused once it does)."""
        real_secrets = tuple(dict.fromkeys(_real(Path(s)) for s in secrets if s is not None))
        ids: set[tuple[int, int]] = set()
        for secret in real_secrets:
            try:
                found = os.stat(secret)
            except OSError:
                continue
            if stat.S_ISREG(found.st_mode):
                ids.add((found.st_dev, found.st_ino))
        real_roots = tuple(dict.fromkeys(_real(Path(r)) for r in roots))
        return cls(real_roots, real_secrets, frozenset(ids))

    def describe(self) -> str:
        return ", ".join(str(r) for r in self.roots) or "none"

    def _refusal(self, given: str | Path, field: str) -> InvalidInputError:
        return InvalidInputError(
            f"{given} is not a path this server may use: a path must resolve inside the project folder or a "
            f"folder given with --allow-path ({self.describe()}), and never onto the store, a key or a "
            "configuration file of the server",
            field=field,
        )

    def _allowed(self, real: Path) -> bool:
        if any(_inside(real, system) for system in SYSTEM_FOLDERS):
            return False
        if not any(_inside(real, root) for root in self.roots):
            return False
        return not any(_inside(real, secret) for secret in self.secrets)

    def resolve(self, given: str | Path, *, field: str) -> Path:
        """The real path of ``given`` (relative to the first root), if the rule allows it; it
        need not exist."""
        if not str(given).strip() or "\0" in str(given):
            raise InvalidInputError("must be a path", field=field)
        path = Path(given)
        if not path.is_absolute():
            if not self.roots:
                raise self._refusal(given, field)
            path = self.roots[0] / path
        try:
            real = _real(path)
        except (OSError, ValueError):  # a link changed as it was followed, a name too long...
            raise self._refusal(given, field) from None
        if not self._allowed(real):
            raise self._refusal(given, field)
        return real

    def _open(self, given: str | Path, field: str) -> int:
        """A descriptor of the regular file ``given``, checked by what was opened: its real path
        allowed, not a secret's inode, and not a file with another hard link (which could be a
        link to a secret inside a secret folder, where no inode list reaches)."""
        real = self.resolve(given, field=field)
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        except FileNotFoundError:
            raise InvalidInputError(f"{given} does not exist", field=field) from None
        except OSError as exc:
            raise InvalidInputError(f"cannot read {given}: {exc.strerror or exc}", field=field) from None
        try:
            found = os.fstat(fd)
            opened = _real(Path(os.readlink(f"/proc/self/fd/{fd}")))
            if (found.st_dev, found.st_ino) in self.secret_ids or not self._allowed(opened):
                raise self._refusal(given, field)
            if not stat.S_ISREG(found.st_mode):
                raise InvalidInputError(f"{given} is not a regular file", field=field)
            if found.st_nlink > 1:
                raise InvalidInputError(
                    f"{given} has {found.st_nlink} hard links; a file this server reads must have one", field=field
                )
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, given: str | Path, kind: InputKind, *, field: str) -> bytes:
        """The bytes of the regular file ``given``, at most its kind's size (README, "Input
        files"), if the rule allows the file that was actually opened (:meth:`_open`)."""
        fd = self._open(given, field)
        try:
            return self._read_open(fd, given, kind, field)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def opened(self, given: str | Path, *, field: str) -> Iterator[Path]:
        """The file ``given``, checked once opened (:meth:`_open`), as a path to that open
        descriptor (``/proc/self/fd/N``): a reader given it reads the file that was checked, even
        if a folder on the way is swapped meanwhile."""
        fd = self._open(given, field)
        try:
            yield Path(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)

    def _read_open(self, fd: int, given: str | Path, kind: InputKind, field: str) -> bytes:
        found = os.fstat(fd)
        most = INPUT_LIMITS[kind]
        message = f"{given} is larger than {most:,} bytes, the most a {kind} file may hold"
        too_large = InvalidInputError(message, field=field)
        if found.st_size > most:
            raise too_large
        os.set_blocking(fd, True)
        parts: list[bytes] = []
        left = most + 1
        while left > 0 and (chunk := os.read(fd, min(_CHUNK, left))):
            parts.append(chunk)
            left -= len(chunk)
        data = b"".join(parts)
        if len(data) > most:
            raise too_large
        return data

    def read_text(self, given: str | Path, kind: InputKind, *, field: str) -> str:
        """:meth:`read` as UTF-8 text; refused naming the byte where it is not (never the bytes)."""
        data = self.read(given, kind, field=field)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            message = f"{given} is not UTF-8 text ({exc.reason} at byte {exc.start})"
            raise InvalidInputError(message, field=field) from None
