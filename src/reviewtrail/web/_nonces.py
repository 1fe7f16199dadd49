"""The nonce book: every nonce a signed write carried, claimed once, kept on disk.

A nonce is claimed before the request's body is read; a claim is committed (SQLite, ``synchronous
= FULL``) before the claim returns, so a replay is refused after a restart of the inspector as
well as before. Nonces older than twice the freshness window are dropped as new ones are claimed:
a request that old is refused for its age before its nonce is looked at.

The book is a SQLite file of its own (default ``review-nonces.sqlite`` in the store's folder,
beside the session leases; ``REVIEWTRAIL_REVIEW_NONCE_FILE`` names another). It holds no record
of the store: losing it reopens replay within one freshness window at most.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from reviewtrail.errors import BackendUnavailableError
from reviewtrail.web._capability import FRESHNESS_SECONDS, SignatureRefusedError, SignedRequest

__all__ = ["NONCE_FILE_ENV", "NonceBook"]

NONCE_FILE_ENV = "REVIEWTRAIL_REVIEW_NONCE_FILE"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS review_nonces (
    key_id TEXT NOT NULL,
    nonce TEXT NOT NULL,
    created INTEGER NOT NULL,
    claimed REAL NOT NULL,
    PRIMARY KEY (key_id, nonce)
);
CREATE INDEX IF NOT EXISTS review_nonces_created ON review_nonces (created);
"""


class NonceBook:
    """One-time nonces of signed writes, durable in the SQLite file ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"{path}: cannot open the nonce book ({exc})", field=NONCE_FILE_ENV) from None

    def claim(self, signed: SignedRequest, *, now: float | None = None) -> None:
        """Claim ``signed``'s nonce, or refuse the request as a replay (field ``nonce``)."""
        clock = time.time() if now is None else now
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute(
                    "DELETE FROM review_nonces WHERE created < ?", (int(clock) - 2 * FRESHNESS_SECONDS - 1,)
                )
                self._db.execute(
                    "INSERT INTO review_nonces (key_id, nonce, created, claimed) VALUES (?, ?, ?, ?)",
                    (signed.key_id, signed.nonce, signed.created, clock),
                )
                self._db.execute("COMMIT")
            except sqlite3.IntegrityError:
                self._db.execute("ROLLBACK")
                raise SignatureRefusedError("this nonce was used already: a replayed request", field="nonce") from None
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise BackendUnavailableError(
                    f"{self.path}: cannot record the nonce ({exc})", field=NONCE_FILE_ENV
                ) from None

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT count(*) FROM review_nonces").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._db.close()
