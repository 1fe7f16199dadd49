"""The proxy's session book: every signed-in browser, kept server-side, so that a session ends
when it is logged out of or expires, wherever its cookie was copied to (docs/human-review.md,
"The public proxy").

- The cookie carries only a random session id (256 bits); the book keeps the SHA-256 of it
  (:func:`session_key`), never the id itself.
- A row holds the pseudonymous actor, the write flag and the allowlist it was granted under,
  when the session began, when it was last seen, and when it expires: the first of its absolute
  end (began + the maximum age) and its idle end (last seen + the idle limit). :func:`alive` is
  the rule; "last seen" is moved on at most every :func:`touch_every` seconds, so a busy session
  is not a write per request.
- The book is a SQLite file of its own (WAL, ``synchronous = FULL``, every change in ``BEGIN
  IMMEDIATE``), so it outlives a restart of the proxy, and proxies sharing the file share the
  sessions: a logout on one ends the session on every one. Expired rows are deleted whenever the
  book is written. Without a file the book is kept in memory, for one process.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from reviewtrail.errors import BackendUnavailableError

__all__ = ["SESSION_FILE_ENV", "SESSION_FILE_NAME", "SessionBook", "SessionRow", "alive", "session_key", "touch_every"]

SESSION_FILE_ENV = "REVIEWTRAIL_PROXY_SESSION_FILE"
SESSION_FILE_NAME = "reviewtrail-proxy-sessions.sqlite"  # default: beside the session secret file
_TOUCH_EVERY = 60.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS proxy_sessions (
    id_hash TEXT PRIMARY KEY,
    actor TEXT NOT NULL,
    can_write INTEGER NOT NULL,
    allow TEXT NOT NULL,
    created REAL NOT NULL,
    seen REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS proxy_sessions_expires ON proxy_sessions (expires);
"""
_SELECT = "SELECT id_hash, actor, can_write, allow, created, seen FROM proxy_sessions WHERE id_hash = ?"


@dataclass(frozen=True)
class SessionRow:
    """One session as the book keeps it (``key``: the SHA-256 of its id, in hex)."""

    key: str
    actor: str
    write: bool
    allow: str
    created: float
    seen: float


def session_key(session_id: str) -> str:
    """What the book keeps of session id ``session_id``: its SHA-256, in hex."""
    return hashlib.sha256(session_id.encode("ascii")).hexdigest()


def alive(created: float, seen: float, now: float, *, idle: float, max_age: float) -> bool:
    """Whether a session that began at ``created`` and was last seen at ``seen`` is alive at
    ``now``: before its absolute end and before its idle end."""
    return now < created + max_age and now < seen + idle


def expires(created: float, seen: float, *, idle: float, max_age: float) -> float:
    """When a session ends if it is not seen again: the first of its absolute and idle ends."""
    return min(created + max_age, seen + idle)


def touch_every(idle: float) -> float:
    """How often a session's "last seen" is moved on: every minute, or a tenth of the idle limit
    when that is shorter (so a session used more often than its idle limit never lapses)."""
    return min(_TOUCH_EVERY, idle / 10)


class SessionBook:
    """The sessions of the proxy, in the SQLite file ``path`` (None: in memory)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            if path is not None:
                os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))  # the WAL files take its mode
            self._db = sqlite3.connect(
                path if path is not None else ":memory:", isolation_level=None, check_same_thread=False, timeout=30
            )
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise BackendUnavailableError(
                f"{path}: cannot open the session book ({exc}); {SESSION_FILE_ENV} names another file",
                field=SESSION_FILE_ENV,
            ) from None

    def _change(self, now: float, sql: str, params: tuple[object, ...]) -> int:
        """Run one change (and delete the rows expired at ``now``) in a transaction of its own;
        the number of rows the change touched."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("DELETE FROM proxy_sessions WHERE expires <= ?", (now,))
                count = self._db.execute(sql, params).rowcount if sql else 0
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise BackendUnavailableError(
                    f"{self.path or 'memory'}: cannot write the session book ({exc})", field=SESSION_FILE_ENV
                ) from None
        return int(count)

    def add(self, row: SessionRow, *, idle: float, max_age: float, now: float) -> None:
        """Keep session ``row``."""
        self._change(
            now,
            "INSERT INTO proxy_sessions (id_hash, actor, can_write, allow, created, seen, expires)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row.key,
                row.actor,
                int(row.write),
                row.allow,
                row.created,
                row.seen,
                expires(row.created, row.seen, idle=idle, max_age=max_age),
            ),
        )

    def get(self, key: str) -> SessionRow | None:
        """The session kept under ``key``, expired or not; None if there is none."""
        with self._lock:
            try:
                found = self._db.execute(_SELECT, (key,)).fetchone()
            except sqlite3.Error as exc:
                raise BackendUnavailableError(
                    f"{self.path or 'memory'}: cannot read the session book ({exc})", field=SESSION_FILE_ENV
                ) from None
        if found is None:
            return None
        return SessionRow(found[0], found[1], bool(found[2]), found[3], float(found[4]), float(found[5]))

    def touch(self, row: SessionRow, *, idle: float, max_age: float, now: float) -> bool:
        """Mark session ``row`` seen at ``now``; False if it is no longer kept (ended meanwhile)."""
        end = expires(row.created, now, idle=idle, max_age=max_age)
        sql = "UPDATE proxy_sessions SET seen = max(seen, ?), expires = max(expires, ?) WHERE id_hash = ?"
        return self._change(now, sql, (now, end, row.key)) == 1

    def remove(self, key: str, *, now: float) -> bool:
        """End the session kept under ``key``; whether there was one."""
        return self._change(now, "DELETE FROM proxy_sessions WHERE id_hash = ?", (key,)) == 1

    def prune(self, *, now: float) -> None:
        """Delete every session expired at ``now``."""
        self._change(now, "", ())

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT count(*) FROM proxy_sessions").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._db.close()
