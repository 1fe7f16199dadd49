"""Claims on (agent, trigger): one model call per needed run, even with two ``campaign run``s at
once (docs/human-review.md, "Candidate runs").

Before the model call of a candidate agent over a review prompt, ``campaign run`` claims the pair
(agent id, prompt event id) and holds the claim until the run's records are appended (or the
call failed and was recorded). A claim is a lock, not a record: nothing is added to the ledger,
and the records of a run are exactly what they were without claims.

File claim
    An exclusive ``flock`` on ``<store>/campaign-claims/<key>.lock``, where ``<key>`` is the
    SHA-256 (hex) of ``reviewtrail.campaign-run-claim\\0<prompt event id>\\0<agent id>``; opened
    close-on-exec, as the session run locks (``provenance.runs._pending.session_lock``) are. Every
    process on this machine that opens the same store folder sees it, whatever the ledger. The
    kernel releases it when its process ends in any way (exit, crash, SIGKILL), so a claim never
    outlives its holder. The (empty) files stay; they hold nothing.

Database claim (PostgreSQL ledgers only)
    Also a session-level advisory lock, ``pg_try_advisory_lock(bigint)`` / ``pg_advisory_lock``,
    keyed by the first 8 bytes of the same digest, on a connection of its own (opened at the
    first claim, closed when the campaign run ends). Store folders on other machines that share
    the database see it. The server releases it when that connection ends: a killed process's
    socket is closed by its kernel at once; a machine that vanished is noticed by TCP keepalive.

A claim is taken without waiting first. A pair another process holds is put aside and the
runner goes on with the next one, so two runners share the work; once every free pair is done,
the runner waits for each pair it put aside. After any claim is granted, the runner reads the
runs over the prompt again: when a run of that agent was recorded since it planned (by the
process that held the claim, or one that finished just before), it makes no call and reports
that run. A holder that hangs holds its claim as long as it hangs (bounded by its call's
``timeout`` and the models layer's retries); a holder that dies releases it.

A store opened read-only takes no claims (it writes nothing; its runs are refused anyway).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewtrail.errors import BackendUnavailableError, ReadOnlyStoreError, StorageFullError
from reviewtrail.store import Store

__all__ = ["CLAIMS_FOLDER", "RunClaims", "claim_key"]

#: The folder of the store that holds the claim files.
CLAIMS_FOLDER = "campaign-claims"
_DOMAIN = b"reviewtrail.campaign-run-claim"


def claim_key(prompt_event_id: str, agent_id: str) -> bytes:
    """The SHA-256 digest naming the claim on (agent, trigger)."""
    return hashlib.sha256(b"\0".join((_DOMAIN, prompt_event_id.encode(), agent_id.encode()))).digest()


class RunClaims:
    """The claims of one campaign run. Use as a context manager: leaving it releases every
    claim still held and closes the database connection."""

    def __init__(self, store: Store) -> None:
        self._root = None if store.read_only or store.root is None else store.root / CLAIMS_FOLDER
        url = getattr(store.ledger, "url", None)
        self._pg_url = url if isinstance(url, str) and url.startswith(("postgresql://", "postgres://")) else None
        if store.read_only:
            self._pg_url = None
        self._pg: Any = None

    def __enter__(self) -> RunClaims:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pg is not None:
            with contextlib.suppress(Exception):
                self._pg.close()
            self._pg = None

    @contextlib.contextmanager
    def take(self, prompt_event_id: str, agent_id: str, *, wait: bool) -> Iterator[bool]:
        """Hold the claim on (agent, trigger) for the ``with`` body; yields whether it is held.
        Without ``wait`` a claim another process holds yields False at once; with it, the body
        waits for it (and then yields True)."""
        key = claim_key(prompt_event_id, agent_id)
        fd = self._open(key)
        try:
            if fd is not None and not _flock(fd, wait=wait):
                yield False
                return
            if not self._pg_lock(key, wait=wait):
                yield False
                return
            try:
                yield True
            finally:
                self._pg_unlock(key)
        finally:
            if fd is not None:
                os.close(fd)  # releases the flock

    # --- the file claim -------------------------------------------------------------------------
    def _open(self, key: bytes) -> int | None:
        if self._root is None:
            return None
        path = self._root / f"{key.hex()}.lock"
        try:
            self._root.mkdir(exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise _storage_error(exc, path) from None

    # --- the database claim ---------------------------------------------------------------------
    def _connection(self) -> Any:
        if self._pg is None:
            import psycopg

            assert self._pg_url is not None
            try:
                self._pg = psycopg.connect(self._pg_url, autocommit=True, connect_timeout=10)
            except psycopg.Error as exc:
                raise BackendUnavailableError(
                    f"cannot connect to PostgreSQL for the campaign run claims: {type(exc).__name__}",
                    field="database",
                ) from None
        return self._pg

    def _pg_lock(self, key: bytes, *, wait: bool) -> bool:
        if self._pg_url is None:
            return True
        number = int.from_bytes(key[:8], "big", signed=True)
        import psycopg

        try:
            if wait:
                self._connection().execute("SELECT pg_advisory_lock(%s)", (number,))
                return True
            row = self._connection().execute("SELECT pg_try_advisory_lock(%s)", (number,)).fetchone()
        except psycopg.Error as exc:
            raise BackendUnavailableError(
                f"lost the PostgreSQL connection of the campaign run claims: {type(exc).__name__}", field="database"
            ) from None
        return bool(row and row[0])

    def _pg_unlock(self, key: bytes) -> None:
        if self._pg_url is None or self._pg is None:
            return
        number = int.from_bytes(key[:8], "big", signed=True)
        try:
            self._pg.execute("SELECT pg_advisory_unlock(%s)", (number,))
        except Exception:  # the connection is gone, and its locks with it
            self.close()


def _flock(fd: int, *, wait: bool) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _storage_error(exc: OSError, path: Path) -> Exception:
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ReadOnlyStoreError(f"cannot create the campaign run claim {path}: {exc.strerror}", field="store")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFullError(f"cannot create the campaign run claim {path}: {exc.strerror}", field="store")
    return BackendUnavailableError(f"cannot create the campaign run claim {path}: {exc.strerror}", field="store")
