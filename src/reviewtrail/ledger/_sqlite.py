"""SQLite ledger, the embedded default: WAL, synchronous=FULL, BEGIN IMMEDIATE, one writer."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from typing import ClassVar

from reviewtrail.errors import BackendUnavailableError
from reviewtrail.ledger._projections import Projection
from reviewtrail.ledger._sql import Cursor, SqlLedger

__all__ = ["SqliteLedger"]

_BUSY_TIMEOUT_S = 60.0


class SqliteLedger(SqlLedger):
    dialect = "sqlite"
    types: ClassVar[dict[str, str]] = {"BLOB": "BLOB", "BIGINT": "INTEGER"}
    append_only_ddl: ClassVar[list[str]] = [
        "CREATE TRIGGER rt_records_no_update BEFORE UPDATE ON rt_records "
        "BEGIN SELECT RAISE(ABORT, 'ledger records are append-only'); END",
        "CREATE TRIGGER rt_records_no_delete BEFORE DELETE ON rt_records "
        "BEGIN SELECT RAISE(ABORT, 'ledger records are append-only'); END",
    ]

    def __init__(self, path: str | os.PathLike[str], projections: Iterable[Projection] | None = None) -> None:
        self.path = os.fspath(path)
        try:
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, timeout=_BUSY_TIMEOUT_S, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"cannot open SQLite ledger at {self.path}: {exc}", field="database") from exc
        self._lock = threading.RLock()
        super().__init__(projections)

    @contextlib.contextmanager
    def _write_txn(self) -> Iterator[Cursor]:
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                self._conn.rollback()
                raise
            else:
                cur.execute("COMMIT")
            finally:
                cur.close()

    @contextlib.contextmanager
    def _read(self) -> Iterator[Cursor]:
        with self._lock:
            cur = self._conn.cursor()
            try:
                yield cur
            finally:
                cur.close()

    def _migration_lock(self, cur: Cursor) -> None:
        """BEGIN IMMEDIATE already excludes other writers."""

    def close(self) -> None:
        with self._lock:
            self._conn.close()
