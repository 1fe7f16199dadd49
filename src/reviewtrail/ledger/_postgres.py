"""PostgreSQL ledger (psycopg 3).

Gap-free global order under concurrent writers: every append takes
``LOCK TABLE rt_records IN EXCLUSIVE MODE`` (readers are never blocked), reads
the head, and inserts ``seq = head + 1 ...`` before committing. Because the next
writer cannot read the head until this one has committed, a reader that follows
``seq`` can never see ``n + 1`` while ``n`` is still uncommitted.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from reviewtrail.errors import BackendUnavailableError
from reviewtrail.ledger._projections import Projection
from reviewtrail.ledger._sql import Cursor, SqlLedger

__all__ = ["PostgresLedger"]

_MIGRATION_LOCK_KEY = 0x5245_5654  # "REVT"


class PostgresLedger(SqlLedger):
    dialect = "postgresql"
    types: ClassVar[dict[str, str]] = {"BLOB": "BYTEA", "BIGINT": "BIGINT"}
    append_only_ddl: ClassVar[list[str]] = [
        """CREATE OR REPLACE FUNCTION rt_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'ledger records are append-only'; END $$""",
        "CREATE TRIGGER rt_records_no_change BEFORE UPDATE OR DELETE ON rt_records "
        "FOR EACH ROW EXECUTE FUNCTION rt_append_only()",
        "CREATE TRIGGER rt_records_no_truncate BEFORE TRUNCATE ON rt_records "
        "FOR EACH STATEMENT EXECUTE FUNCTION rt_append_only()",
    ]

    def __init__(self, url: str, projections: Iterable[Projection] | None = None) -> None:
        import psycopg

        self.url = url
        try:
            self._conn: Any = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            from reviewtrail._redact import redact_text

            message = redact_text(str(exc), url)
            raise BackendUnavailableError(f"cannot connect to PostgreSQL: {message}", field="database") from None
        self._lock = threading.RLock()
        self._schema_ready = False
        super().__init__(projections)

    def _migrate(self) -> None:
        super()._migrate()
        self._schema_ready = True

    def _q(self, sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def _is_unique_violation(self, exc: Exception) -> bool:
        import psycopg.errors

        return isinstance(exc, psycopg.errors.UniqueViolation)

    @contextlib.contextmanager
    def _write_txn(self) -> Iterator[Cursor]:
        with self._lock, self._conn.transaction(), self._conn.cursor() as cur:
            cur.execute("SET LOCAL lock_timeout = '60s'")
            if self._schema_ready:
                cur.execute("LOCK TABLE rt_records IN EXCLUSIVE MODE")
            yield cur

    @contextlib.contextmanager
    def _read(self) -> Iterator[Cursor]:
        with self._lock, self._conn.cursor() as cur:
            yield cur

    def _migration_lock(self, cur: Cursor) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK_KEY,))

    def close(self) -> None:
        with self._lock:
            self._conn.close()
