"""PostgreSQL ledger (psycopg 3).

Gap-free global order under concurrent writers: every append takes
``LOCK TABLE rt_records IN EXCLUSIVE MODE`` (readers are never blocked), reads
the head, and inserts ``seq = head + 1 ...`` before committing. Because the next
writer cannot read the head until this one has committed, a reader that follows
``seq`` can never see ``n + 1`` while ``n`` is still uncommitted.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, cast

from reviewtrail.errors import (
    BackendUnavailableError,
    ConflictError,
    IntegrityError,
    LedgerMissingError,
    StorageFullError,
)
from reviewtrail.ledger.backends._sql import (
    _INSERT_SIGNATURE,
    _READ_BACK,
    SIGNATURES_DROPPED,
    SIGNATURES_READ_BACK,
    SqlLedger,
    SqlRecorder,
    insert_chunks,
)
from reviewtrail.ledger.backends._sql_schema import COLUMNS, Cursor, env_row, upsert_sql
from reviewtrail.ledger.contract._key_state import KEY_ROWS_SQL
from reviewtrail.ledger.contract._projections import Projection, Row
from reviewtrail.ledger.contract._protocol import catalog_of
from reviewtrail.ledger.contract._recorder import Stamp, seal_batch
from reviewtrail.ledger.keys._writer_keys import KEY_RECORD_TYPES
from reviewtrail.ledger.records._envelope import Envelope

if TYPE_CHECKING:
    from reviewtrail.ledger.records._new_record import NewRecord

__all__ = ["PostgresLedger", "PostgresRecorder"]

# Records from which a never-analyzed records table is analyzed on open.
_ANALYZE_FROM = 10_000

_MIGRATION_LOCK_KEY = 0x5245_5654  # "REVT"
# libc locales whose text order is by code point (UTF-8 bytes), as SQLite's and Python's is.
_CODE_POINT_LOCALES = {"c", "posix", "c.utf8", "c.utf-8"}
_SCAN_BATCH = 2000  # rows per fetch of a server-side cursor
_SCANS = itertools.count(1)
# psycopg logs a warning when a failed pipeline is closed ("error ignored terminating <Pipeline…>"),
# an error this module turns into its own message. Without a handler of its own the warning reached
# stderr through logging's last resort, before that message; an application that configures logging
# still receives it (propagation is untouched).
logging.getLogger("psycopg").addHandler(logging.NullHandler())
# The types of rt_records' columns (COLUMNS order), as a binary COPY writes them.
_COPY_TYPES = ["bigint", *["text"] * 7, "bytea", *["text"] * 3]
_ROWS_PER_INSERT = 1000  # rows per INSERT of an append (12,000 parameters; PostgreSQL takes 65,535)
_WIDTH = 12


def text_array(values: Sequence[str]) -> str:
    """``values`` as one PostgreSQL array literal (every element quoted), sent as a single text
    parameter and cast with ``::text[]``: psycopg's list dumper tests each element with a regular
    expression, 6 ms per 1,000 ids or hashes, twice per append, under the table lock."""
    return "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


@functools.cache
def _insert_sql(rows: int) -> str:
    """The multi-row INSERT in PostgreSQL's own ``$n`` placeholders, sent through a raw cursor:
    psycopg parses a ``%s`` query this long on every call (it caches only short ones), which cost
    60 ms per 1,000 rows, under the table lock that orders every writer."""
    marks = ("(" + ", ".join(f"${row * _WIDTH + col + 1}" for col in range(_WIDTH)) + ")" for row in range(rows))
    return f"INSERT INTO rt_records ({COLUMNS}) VALUES " + ", ".join(marks)


class PostgresRecorder(SqlRecorder):
    dialect = "postgresql"
    types: ClassVar[dict[str, str]] = {"BLOB": "BYTEA", "BIGINT": "BIGINT"}
    # A slice of the batch's hashes joined (bytea: found in place, where a text array or a UTF-8
    # text is walked from its start for every row).
    hash_at_seq = "convert_from(substr(?::bytea, CAST(seq - ? AS INTEGER) * 64 + 1, 64), 'UTF8')"
    append_only_ddl: ClassVar[list[str]] = [
        """CREATE OR REPLACE FUNCTION rt_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'ledger records are append-only'; END $$""",
        "CREATE TRIGGER rt_records_no_change BEFORE UPDATE OR DELETE ON rt_records "
        "FOR EACH ROW EXECUTE FUNCTION rt_append_only()",
        "CREATE TRIGGER rt_records_no_truncate BEFORE TRUNCATE ON rt_records "
        "FOR EACH STATEMENT EXECUTE FUNCTION rt_append_only()",
    ]
    signatures_append_only_ddl: ClassVar[list[str]] = [
        "CREATE TRIGGER rt_signatures_no_change BEFORE UPDATE OR DELETE ON rt_signatures "
        "FOR EACH ROW EXECUTE FUNCTION rt_append_only()",
        "CREATE TRIGGER rt_signatures_no_truncate BEFORE TRUNCATE ON rt_signatures "
        "FOR EACH STATEMENT EXECUTE FUNCTION rt_append_only()",
    ]

    def __init__(
        self,
        url: str,
        projections: Iterable[Projection],
        *,
        create: bool = True,
        read_only: bool = False,
    ) -> None:
        self.url = url
        self._conn: Any = self._connect()
        self._lock = threading.RLock()
        self._schema_ready = False
        self._snapshots = 0  # snapshots open on the connection (a lost one is never silently replaced)
        # The refusal of the statement that aborted the open transaction (a dropped table): the
        # statements after it in that transaction are refused as it was, not as "aborted".
        self._aborted_by: IntegrityError | None = None
        self._attempt = threading.local()  # commit_sent: this thread's last append attempt sent its COMMIT
        self._text_collation: str | None = None
        super().__init__(projections, create=create, read_only=read_only)

    def _connect(self) -> Any:
        try:
            import psycopg
        except ImportError:
            raise BackendUnavailableError(
                "PostgreSQL support is not installed; install it with: pip install 'reviewtrail[postgres]'",
                field="database",
            ) from None
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise BackendUnavailableError(
                f"cannot connect to PostgreSQL: {self._redacted(exc)}", field="database"
            ) from None

    def _redacted(self, exc: BaseException) -> str:
        from reviewtrail._redact import redact_text

        return redact_text(str(exc), self.url)

    def records_by_id(self, ids: list[str]) -> list[Envelope]:
        found = self.get_many(ids)
        out: list[Envelope] = []
        for record_id in ids:
            if record_id not in found:
                break
            out.append(found[record_id])
        return out

    def describe(self) -> str:
        from reviewtrail._redact import redact_url

        return f"the PostgreSQL ledger {redact_url(self.url)}"

    def append(self, records: list[NewRecord], payloads: list[bytes], now: datetime, stamp: Stamp) -> list[Envelope]:
        """Append in one transaction; when the connection is lost (or fails once the COMMIT was
        sent), reconnect and try once more.

        A lost connection may have lost the COMMIT's answer, not the COMMIT: if every id of the
        batch is already recorded, the first attempt committed and its records are returned.
        """
        import psycopg

        def lost(commit_sent: bool) -> str:
            """What a lost connection left: before the COMMIT was sent, nothing; after it, the server
            may have committed the batch (its answer is what was lost)."""
            if not commit_sent:
                return "nothing was written"
            return (
                "the append is recorded whole or not at all (the connection went after its COMMIT was sent): "
                f"'reviewtrail ledger show {records[0].id}' tells which"
            )

        try:
            return self._append_once(records, payloads, now, stamp)
        except (psycopg.OperationalError, psycopg.InterfaceError) as first:
            first_sent = self._attempt.commit_sent
            # A failure once the COMMIT was sent ("cannot exit pipeline mode while busy" as the
            # connection goes) is handled as a lost connection: the retry finds the batch if it landed.
            if not self._conn.closed and not isinstance(first, psycopg.InterfaceError) and not first_sent:
                if "no space left" in str(first).lower() or getattr(first, "sqlstate", None) == "53100":
                    raise StorageFullError(f"PostgreSQL: {self._redacted(first)}; nothing was written") from None
                raise BackendUnavailableError(f"PostgreSQL: {self._redacted(first)}", field="database") from None
            with self._lock:
                try:
                    self._reconnect()
                except BackendUnavailableError as exc:
                    raise BackendUnavailableError(
                        f"PostgreSQL connection lost during an append and not re-established ({exc}); "
                        + lost(first_sent),
                        field="database",
                    ) from None
        try:
            return self._append_once(records, payloads, now, stamp)
        except ConflictError:
            recorded = self.records_by_id([r.id for r in records])
            if len(recorded) == len(records) and [e.payload for e in recorded] == payloads:
                return recorded
            raise
        except (psycopg.OperationalError, psycopg.InterfaceError) as second:
            raise BackendUnavailableError(
                f"PostgreSQL connection lost during an append, and again on retry: {self._redacted(second)}; "
                + lost(first_sent or self._attempt.commit_sent),
                field="database",
            ) from None

    def _append_once(
        self, records: list[NewRecord], payloads: list[bytes], now: datetime, stamp: Stamp
    ) -> list[Envelope]:
        """One transaction in three round trips (psycopg's pipeline mode): (1) the lock timeout and
        the replication role, the table lock, the head and which of the batch's ids (and the ids it
        supersedes) are recorded; (2) the records, the read-back of what was stored and the query
        rows; (3) the COMMIT, sent only when the read-back and the query rows are as sealed. The
        statements and checks are those of ``SqlRecorder.append``."""
        import psycopg

        conn = self._conn
        wanted = sorted({r.id for r in records} | {r.supersedes for r in records if r.supersedes is not None})
        self._attempt.commit_sent = False
        try:
            with self._lock, conn.pipeline(), conn.transaction():
                setup, head, known = conn.cursor(), conn.cursor(), conn.cursor()
                setup.execute(
                    "SELECT set_config('lock_timeout', '60s', true), current_setting('session_replication_role')"
                )
                if self._schema_ready:
                    conn.cursor().execute("LOCK TABLE rt_records IN EXCLUSIVE MODE")
                head.execute("SELECT seq, hash FROM rt_records ORDER BY seq DESC LIMIT 1")
                known.execute("SELECT id FROM rt_records WHERE id = ANY(%s::text[])", (text_array(wanted),))
                after = stamp.seen
                keys = conn.cursor()
                keys.execute(self._q(KEY_ROWS_SQL), (*KEY_RECORD_TYPES, after))
                self._check_role(str(setup.fetchone()[1]))
                last = head.fetchone()
                found = {str(r[0]) for r in known.fetchall()}
                key_rows = self._fetched_key_rows(keys)
                columns: list[Any] = []
                envs = seal_batch(
                    records,
                    payloads,
                    head=(int(last[0]), str(last[1])) if last else None,
                    now=now,
                    known_ids=lambda ids: found,
                    columns=columns,
                )
                signatures = stamp(
                    int(last[0]) if last else 0,
                    lambda start: key_rows if start == after else self._key_rows(conn.cursor(), start),
                    envs,
                )
                for rows, params in insert_chunks(columns, _ROWS_PER_INSERT):
                    psycopg.RawCursor(conn).execute(_insert_sql(rows), params)
                signed = None
                if signatures is not None:
                    signed_rows = [(env.seq, sig.key_id, sig.value) for env, sig in zip(envs, signatures, strict=True)]
                    conn.cursor().executemany(self._q(_INSERT_SIGNATURE), signed_rows)
                    signed = conn.cursor()
                    signed.execute(self._q(SIGNATURES_READ_BACK), (envs[0].seq, envs[-1].seq))
                read_back = conn.cursor()
                read_back.execute(
                    self._q(_READ_BACK.format(HASH_AT=self.hash_at_seq)),
                    (self._sealed_hashes(envs), envs[0].seq, envs[0].seq, len(envs) + 1),
                )
                try:
                    self._write_rows(conn.cursor(), self.projection_rows(envs))  # answered: round trip 2
                except Exception:
                    # A read-back that failed too is the first thing wrong (as in SqlRecorder.append).
                    with contextlib.suppress(psycopg.Error):
                        self._refuse_unless_stored(read_back, envs)
                    raise
                self._refuse_unless_stored(read_back, envs)
                if signed is not None:
                    self._refuse_unless_signed(int(signed.fetchone()[0]), envs)
                self._attempt.commit_sent = True  # leaving the block sends the COMMIT
                return envs
        except (psycopg.errors.UndefinedTable, psycopg.errors.InsufficientPrivilege) as exc:
            raise self._refusal(exc) from None

    def _insert_sealed(self, cur: Cursor, envelopes: list[Envelope]) -> None:
        """The rows of sealed records with one binary ``COPY``: no statement to parse, no parameter
        to bind, no value written as text."""
        with cast(Any, cur).copy(f"COPY rt_records ({COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(_COPY_TYPES)
            for env in envelopes:
                copy.write_row(env_row(env))

    def _droppable_indexes(self, cur: Cursor) -> list[tuple[str, str]]:
        cur.execute(
            "SELECT quote_ident(i.relname), pg_get_indexdef(i.oid) FROM pg_index x "
            "JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid "
            "WHERE t.oid = 'rt_records'::regclass AND pg_has_role(t.relowner, 'USAGE') "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid) ORDER BY i.relname"
        )
        return [(str(name), str(ddl)) for name, ddl in cur.fetchall()]

    def _write_rows(self, cur: Cursor, rows: list[Row], *, replay: bool = False) -> None:
        """The query rows, one statement per row sent without waiting (pipeline mode; inside an
        append's pipeline, with the records' INSERT before them), then every answer at once: a key
        an ``on_conflict="error"`` table already holds is a conflict, and a table that stored
        fewer rows than it was given (a rule or trigger swallows them) fails the append."""
        import psycopg

        try:
            with self._conn.pipeline():
                written = self._queue_rows(rows, replay=replay)
        except psycopg.errors.UniqueViolation as exc:
            name = str(exc.diag.table_name or "").removeprefix("rt_p_")
            spec = self.tables.get(name)
            if spec is not None and spec.claims_once:
                raise ConflictError(f"{name}: a row with this key is already recorded ({exc})", field=name) from exc
            raise
        for name, given, table_cur in written:
            self._refuse_unless_all_stored(name, given, table_cur.rowcount)

    def _check_role(self, role: str) -> None:
        if role != "origin":
            raise IntegrityError(
                f"{self.describe()}: session_replication_role is {role!r}, which disables the append-only "
                "triggers; refusing to write (reset it with ALTER DATABASE/ROLE ... RESET "
                "session_replication_role)",
                field="ledger",
            )

    def _queue_rows(self, rows: list[Row], *, replay: bool = False) -> list[tuple[str, int, Any]]:
        """Send the query rows of an append, one multi-row statement per table (in pipeline mode:
        nothing is waited for); what :meth:`_refuse_unless_all_stored` checks once they are answered."""
        by_table: dict[str, list[dict[str, Any]]] = {}
        for table, row in rows:
            by_table.setdefault(table, []).append(row)
        written = []
        for name, items in by_table.items():
            sql, cols = upsert_sql(self.tables[name], replay=replay)
            cur = self._conn.cursor()
            cur.executemany(self._q(sql), [tuple(r[c] for c in cols) for r in items])
            if "DO NOTHING" not in sql:
                written.append((name, len(items), cur))
        return written

    def _migrate(self) -> None:
        super()._migrate()
        self._schema_ready = True
        self._analyze_if_never()

    def _analyze_if_never(self) -> None:
        """Give the planner statistics for a records table that has none yet (a store just loaded
        in bulk, before autovacuum's first ANALYZE): without them a lookup of many subjects or
        superseded ids by their index is planned as a full scan. Best effort: a role that may not
        ANALYZE reads the same, only more slowly."""
        import psycopg

        try:
            with self._lock, self._conn.cursor() as cur:
                cur.execute(
                    "SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = 'rt_records'::regclass "
                    "AND last_analyze IS NULL AND last_autoanalyze IS NULL"
                )
                row = cur.fetchone()
                if row is not None and int(row[0] or 0) >= _ANALYZE_FROM:
                    cur.execute("ANALYZE rt_records")
        except psycopg.Error:
            return

    def _q(self, sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def _text_order_collation(self) -> str:
        """Pages order text by code point: in a database whose default collation does so, by it
        (an index on the column then serves the order); in any other, ``COLLATE "C"``, which
        such an index cannot serve, so the matching rows are sorted."""
        if self._text_collation is None:
            provider = "datlocprovider" if self._conn.info.server_version >= 150000 else "'c'"
            with self._read() as cur:
                cur.execute(f"SELECT datcollate, {provider} FROM pg_database WHERE datname = current_database()")
                collate, kind = cur.fetchone()
            by_code_point = str(kind) == "c" and str(collate).lower() in _CODE_POINT_LOCALES
            self._text_collation = "" if by_code_point else 'COLLATE "C"'
        return self._text_collation

    def _is_unique_violation(self, exc: Exception) -> bool:
        import psycopg.errors

        return isinstance(exc, psycopg.errors.UniqueViolation)

    @contextlib.contextmanager
    def _write_txn(self) -> Iterator[Cursor]:
        import psycopg

        try:
            with self._lock, self._live().transaction(), self._conn.cursor() as cur:
                cur.execute(
                    "SELECT set_config('lock_timeout', '60s', true), current_setting('session_replication_role')"
                )
                self._check_role(str(cur.fetchone()[1]))
                if self._schema_ready:
                    cur.execute("LOCK TABLE rt_records IN EXCLUSIVE MODE")
                yield cur
        except (psycopg.errors.UndefinedTable, psycopg.errors.InsufficientPrivilege) as exc:
            raise self._refusal(exc) from None

    @contextlib.contextmanager
    def _read(self) -> Iterator[Cursor]:
        import psycopg

        with self._lock:
            try:
                cursor = self._live().cursor()
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:  # lost inside a snapshot
                raise BackendUnavailableError(f"PostgreSQL: {self._redacted(exc)}", field="database") from None
            with cursor as cur:
                try:
                    yield cur
                except (psycopg.errors.UndefinedTable, psycopg.errors.InsufficientPrivilege) as exc:
                    raise self._refusal(exc) from None
                except psycopg.errors.InFailedSqlTransaction as exc:
                    if self._aborted_by is not None:
                        raise self._aborted_by from None
                    raise BackendUnavailableError(f"PostgreSQL: {self._redacted(exc)}", field="database") from None
                except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                    raise BackendUnavailableError(f"PostgreSQL: {self._redacted(exc)}", field="database") from None

    def _scan(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        """One server-side cursor, fetched in batches: the client holds one batch, never the result."""
        import psycopg

        with self._lock:
            outside = self._live().info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            txn = self._conn.transaction() if outside else contextlib.nullcontext()
            try:
                with txn, self._conn.cursor(name=f"rt_scan_{next(_SCANS)}") as cur:
                    cur.execute(self._q(sql), params)
                    while rows := cur.fetchmany(_SCAN_BATCH):
                        yield from rows
            except (psycopg.errors.UndefinedTable, psycopg.errors.InsufficientPrivilege) as exc:
                raise self._refusal(exc) from None
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                raise BackendUnavailableError(f"PostgreSQL: {self._redacted(exc)}", field="database") from None

    def _refusal(self, exc: Exception) -> IntegrityError | BackendUnavailableError:
        """What a missing table (:meth:`_dropped`) or a missing privilege (:meth:`_denied`) means."""
        import psycopg.errors

        return self._dropped(exc) if isinstance(exc, psycopg.errors.UndefinedTable) else self._denied(exc)

    def _denied(self, exc: Exception) -> BackendUnavailableError:
        """The database role may not do what the command asked (exit 5), naming the role and the
        refusal: a reader's role asked to append, or a role the deploy guide's grants were not given."""
        role = self._conn.info.user if not self._conn.closed else "?"
        return BackendUnavailableError(
            f"PostgreSQL: the role {role!r} lacks a privilege this command needs ({self._redacted(exc)}); "
            "nothing was written. docs/deploy.md lists the grants of the owner, writer and reader roles",
            field="database",
        )

    def _dropped(self, exc: Exception) -> IntegrityError:
        """A table of the ledger that is not there: damage (exit 4), naming the table."""
        text = self._redacted(exc).splitlines()[0]
        if "rt_records" in text:
            return LedgerMissingError(f"{self.describe()}: the records table was dropped ({text})", field="ledger")
        if "rt_signatures" in text:
            self._aborted_by = IntegrityError(f"{self.describe()}: {SIGNATURES_DROPPED} ({text})", field="ledger")
            return self._aborted_by
        return IntegrityError(
            f"{self.describe()}: a query table was dropped ({text}); 'reviewtrail verify --repair' rebuilds it "
            "from the chain",
            field="ledger",
        )

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read-only REPEATABLE READ transaction. A connection found lost when it begins (the
        server restarted, or terminated this backend) is re-established once, as an append's is;
        lost again, or lost while the snapshot is read or ends, it is exit 5 naming the database
        (a snapshot writes nothing, so nothing is half-written)."""
        import psycopg

        with self._lock:
            for attempt in (1, 2):
                began = False
                try:
                    with self._conn.transaction():
                        self._conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                        began = True
                        self._snapshots += 1
                        try:
                            yield
                        finally:
                            self._snapshots -= 1
                    return
                except (psycopg.errors.UndefinedTable, psycopg.errors.InsufficientPrivilege) as exc:
                    raise self._refusal(exc) from None
                except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                    if began or attempt == 2 or not self._conn.closed:
                        raise BackendUnavailableError(
                            f"PostgreSQL: {self._redacted(exc)}; a read was interrupted, nothing was written",
                            field="database",
                        ) from None
                self._reconnect()

    def _live(self) -> Any:
        """The connection, re-established first when it was found lost outside a snapshot (the
        server restarted, or terminated this backend): a long-lived process reads and writes again
        once the server is back, with nothing in progress lost. The caller holds the lock; a server
        still away is exit 5 naming the database. Inside a snapshot a lost connection stays lost,
        so the snapshot's reads fail rather than go on outside it."""
        if self._conn.closed and not self._snapshots:
            self._reconnect()
        return self._conn

    def _reconnect(self) -> None:
        """A new connection in place of a lost one (the caller holds the lock)."""
        with contextlib.suppress(Exception):
            self._conn.close()
        self._conn = self._connect()

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        return self._snapshot()

    def _table_names(self, cur: Cursor) -> set[str]:
        cur.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        return {str(r[0]) for r in cur.fetchall()}

    def _foreign_triggers(self, ours: set[tuple[str, str]]) -> list[tuple[str, str]]:
        """(name, table) of the triggers on the ledger's tables that are not in ``ours``."""
        with self._read() as cur:
            cur.execute(
                "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace "
                "AND c.relname LIKE 'rt!_%' ESCAPE '!' ORDER BY c.relname, t.tgname"
            )
            return [(str(n), str(t)) for n, t in cur.fetchall() if (str(n), str(t)) not in ours]

    def guard_problems(self) -> list[str]:
        guarded = ("rt_records", "rt_signatures") if self._has_signatures else ("rt_records",)
        with self._read() as cur:
            cur.execute(
                "SELECT t.tgname, c.relname, t.tgenabled, pg_get_triggerdef(t.oid), p.proname, p.prosrc, "
                "p.pronamespace = current_schema()::regnamespace FROM pg_trigger t "
                "JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY(%s) AND NOT t.tgisinternal",
                (list(guarded),),
            )
            found = {(str(r[0]), str(r[1])): r[2:] for r in cur.fetchall()}
            cur.execute("SELECT quote_ident(current_schema())")
            schema = str(cur.fetchone()[0])
        expected = {
            (f"{table}_no_change", table): f"BEFORE DELETE OR UPDATE ON {{s}}.{table} FOR EACH ROW" for table in guarded
        } | {
            (f"{table}_no_truncate", table): f"BEFORE TRUNCATE ON {{s}}.{table} FOR EACH STATEMENT" for table in guarded
        }
        body = _squeezed(self.append_only_ddl[0].split("$$")[1])
        problems: list[str] = [
            f"ledger: trigger {name} on {table} is not reviewtrail's own; it can change what is recorded or "
            "what query tables show"
            for name, table in self._foreign_triggers(set(expected))
        ]
        for (name, table), timing in sorted(expected.items(), key=lambda item: (guarded.index(item[0][1]), item[0][0])):
            if (name, table) not in found:
                problems.append(f"ledger: append-only trigger {name} on {table} was dropped")
                continue
            enabled, definition, function, source, own_schema = found[(name, table)]
            if enabled not in ("O", "A"):
                problems.append(f"ledger: append-only trigger {name} on {table} is disabled")
            want = f"CREATE TRIGGER {name} {timing.format(s=schema)} EXECUTE FUNCTION "
            named = _squeezed(str(definition)) in (f"{want}rt_append_only()", f"{want}{schema}.rt_append_only()")
            if not named or function != "rt_append_only" or not own_schema:
                problems.append(f"ledger: append-only trigger {name} on {table} was replaced: {definition}")
            elif _squeezed(str(source)) != body:
                replaced = _squeezed(str(source))
                problems.append(f"ledger: the function rt_append_only behind trigger {name} was replaced: {replaced!r}")
        return problems + self._rule_problems() + self._replication_problems()

    def hidden_row_problems(self) -> list[str]:
        """Row-level security on the ledger's tables (``ALTER TABLE ... ENABLE ROW LEVEL
        SECURITY``): the rows a policy does not allow are left out of every read of a role the
        policy binds, without an error, so the chain a reader sees can end early (nothing shows
        that a record after the last one shown exists). reviewtrail never enables it."""
        with self._read() as cur:
            cur.execute(
                "SELECT relname, relforcerowsecurity FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
                "AND relname LIKE 'rt!_%' ESCAPE '!' AND (relrowsecurity OR relforcerowsecurity) ORDER BY relname"
            )
            tables = [(str(name), bool(forced)) for name, forced in cur.fetchall()]
            cur.execute(
                "SELECT tablename, policyname, cmd, roles, qual FROM pg_policies WHERE schemaname = current_schema() "
                "AND tablename LIKE 'rt!_%' ESCAPE '!' ORDER BY tablename, policyname"
            )
            policies: dict[str, list[str]] = {}
            for table, name, cmd, roles, qual in cur.fetchall():
                shown = f"{name} ({cmd} to {', '.join(map(str, roles or []))}{f' using {qual}' if qual else ''})"
                policies.setdefault(str(table), []).append(_squeezed(shown)[:200])
            cur.execute("SELECT current_user")
            role = str(cur.fetchone()[0])
        problems = []
        for table, forced in tables:
            named = policies.get(table)
            shown = f"policy {'; '.join(named)}" if named else "no policy (every row hidden from the roles it binds)"
            problems.append(
                f"row-level security is enabled on {table}{' (forced on its owner too)' if forced else ''} with "
                f"{shown}: a role it binds (this one is {role!r}) is shown only the rows its policies allow"
            )
        return problems

    def _rule_problems(self) -> list[str]:
        """Rewrite rules on the ledger's tables (``DO INSTEAD NOTHING`` swallows appends)."""
        with self._read() as cur:
            cur.execute(
                "SELECT rulename, tablename, definition FROM pg_rules WHERE schemaname = current_schema() "
                "AND tablename LIKE 'rt!_%' ESCAPE '!' ORDER BY tablename, rulename"
            )
            rows = cur.fetchall()
        return [
            f"ledger: rule {name} on {table} rewrites what is written to the ledger: {_squeezed(str(sql))[:200]}"
            for name, table, sql in rows
        ]

    def _replication_problems(self) -> list[str]:
        """Settings that turn ordinary triggers off (``session_replication_role`` other than origin):
        in this session, and stored for the database or a role (``ALTER DATABASE/ROLE ... SET``)."""
        with self._read() as cur:
            cur.execute("SELECT current_setting('session_replication_role')")
            now = str(cur.fetchone()[0])
            cur.execute(
                "SELECT coalesce(r.rolname, '(every role)'), coalesce(d.datname, '(every database)'), s.setconfig "
                "FROM pg_db_role_setting s LEFT JOIN pg_roles r ON r.oid = s.setrole "
                "LEFT JOIN pg_database d ON d.oid = s.setdatabase "
                "WHERE s.setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))"
            )
            stored = cur.fetchall()
        problems = []
        if now != "origin":
            problems.append(
                f"ledger: session_replication_role is {now!r} in this session, which disables the append-only triggers"
            )
        for role, database, config in stored:
            for item in config or []:
                if str(item).lower().startswith("session_replication_role=") and str(item).lower() != (
                    "session_replication_role=origin"
                ):
                    problems.append(
                        f"ledger: {item} is set for role {role} in database {database} (ALTER ... SET), which "
                        "disables the append-only triggers"
                    )
        return problems

    def _migration_lock(self, cur: Cursor) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK_KEY,))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _squeezed(text: str) -> str:
    return " ".join(text.split())


class PostgresLedger(SqlLedger):
    """A ledger in a PostgreSQL database."""

    recorder: PostgresRecorder

    def __init__(
        self,
        url: str,
        projections: Iterable[Projection] | None = None,
        *,
        create: bool = True,
        read_only: bool = False,
    ) -> None:
        catalog = catalog_of(projections)
        super().__init__(PostgresRecorder(url, catalog.projections, create=create, read_only=read_only), catalog)

    @property
    def url(self) -> str:
        return self.recorder.url

    def reopen(self) -> PostgresLedger:
        return PostgresLedger(self.url, self.catalog, create=False, read_only=self.read_only)
