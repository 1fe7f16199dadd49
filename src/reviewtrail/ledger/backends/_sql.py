"""What the SQLite and PostgreSQL ledgers share: migrating, appending, reading.

The SQL text is in :mod:`._sql_schema` (written once with ``?`` placeholders and
``{BLOB}``/``{BIGINT}`` type names); each backend supplies its dialect, transactions and
write lock.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from reviewtrail.errors import ConflictError, IntegrityError, LedgerMissingError, ReadOnlyStoreError
from reviewtrail.ledger.backends._sql_schema import (
    COLUMNS,
    EMPTY_DIGEST,
    MIGRATIONS,
    READ_ONLY_OPTIONAL,
    SIGNATURE_COLUMNS,
    SIGNATURES_MIGRATION,
    Cursor,
    digest_sql,
    env_row,
    filter_sql,
    row_to_env,
    row_to_signature,
    table_ddl,
    upsert_sql,
)
from reviewtrail.ledger.contract._key_state import KEY_ROWS_SQL, KeyRow, key_row
from reviewtrail.ledger.contract._pages import PageOrder, count_sql, page_sql
from reviewtrail.ledger.contract._projections import ROW_SEQ, Projection, ProjectionTable, Row
from reviewtrail.ledger.contract._protocol import Ledger
from reviewtrail.ledger.contract._recorder import (
    Recorder,
    SealedRun,
    Stamp,
    check_range,
    projection_rows,
    refuse_known_ids,
    refuse_unless_extends,
    seal_batch,
)
from reviewtrail.ledger.contract._verify_reads import repeated_from
from reviewtrail.ledger.keys._writer_keys import KEY_RECORD_TYPES
from reviewtrail.ledger.records._envelope import Envelope

if TYPE_CHECKING:
    from reviewtrail.ledger.keys._record_signature import RecordSignature
    from reviewtrail.ledger.records._new_record import NewRecord

__all__ = ["SIGNATURES_DROPPED", "SqlLedger", "SqlRecorder"]

_PAGE = 1000
#: What a missing signatures table is called in every refusal (exit 4).
SIGNATURES_DROPPED = (
    "the signatures table rt_signatures is missing (migration 4 made it): every record's signature is lost with it"
)
_SCAN_BATCH = 2000  # rows per fetch of a streamed read
_ID_CHUNK = 500
_INSERT = f"INSERT INTO rt_records ({COLUMNS}) VALUES ({', '.join('?' * 12)})"
# The read-back of an append: how many rows there are from the batch's first seq (at most one past
# the batch), the highest seq, and how many hold the hash sealed for their seq ({HASH_AT}: the
# sealed hash of the row's seq, taken from parameter 1 with the batch's first seq, parameter 2).
_READ_BACK = (
    "SELECT COUNT(*), MAX(seq), SUM(CASE WHEN hash = {HASH_AT} THEN 1 ELSE 0 END) "
    "FROM (SELECT seq, hash FROM rt_records WHERE seq >= ? ORDER BY seq LIMIT ?) AS batch"
)
_INSERT_SIGNATURE = f"INSERT INTO rt_signatures ({SIGNATURE_COLUMNS}) VALUES (?, ?, ?)"
# The read-back of a signed append: how many signatures the batch's seqs hold.
SIGNATURES_READ_BACK = "SELECT COUNT(*) FROM rt_signatures WHERE seq >= ? AND seq <= ?"
# What verify streams: each record's seq, type and hash with its signature (no payloads).
_SIGNATURE_SCAN = (
    "SELECT r.seq, r.type, r.hash, s.key_id, s.sig FROM rt_records r LEFT JOIN rt_signatures s ON s.seq = r.seq "
    "WHERE r.seq >= ? AND r.seq <= ? ORDER BY r.seq"
)
_SIGNED_SCAN = (
    "SELECT r.seq, r.type, r.hash, s.key_id, s.sig FROM rt_signatures s JOIN rt_records r ON r.seq = s.seq "
    "WHERE s.seq >= ? AND s.seq <= ? ORDER BY s.seq"
)


def insert_chunks(columns: list[Any], per: int, width: int = 12) -> Iterator[tuple[int, list[Any]]]:
    """A multi-row insert's statements: (rows, parameters) for as many full statements of ``per``
    rows as ``columns`` (``width`` values a row) fills, then statements of powers of two rows for
    the rest. A handful of statement texts, each prepared once per connection."""
    rows = len(columns) // width
    at, size = 0, per
    while at < rows:
        if rows - at < size:
            size = 1 << ((rows - at).bit_length() - 1)
        yield size, columns if size == rows else columns[at * width : (at + size) * width]
        at += size


class SqlRecorder(Recorder):
    dialect: ClassVar[str]
    types: ClassVar[dict[str, str]]
    hash_at_seq: ClassVar[str]  # SQL: the sealed hash of a read-back row's seq (see _READ_BACK)
    _ids_per_query = _ID_CHUNK  # ids an append looks up in one query
    append_only_ddl: ClassVar[list[str]]
    signatures_append_only_ddl: ClassVar[list[str]]
    _has_signatures = True  # whether the database has rt_signatures (a read-only store may not)

    def __init__(self, projections: Iterable[Projection], *, create: bool = True, read_only: bool = False) -> None:
        super().__init__(projections)
        self._create = create
        self.read_only = read_only
        self._migrate()
        if not read_only:
            self._sync_projections()
        else:
            self._refuse_stale_projections()

    # --- dialect hooks ----------------------------------------------------------------------
    @abc.abstractmethod
    def _write_txn(self) -> contextlib.AbstractContextManager[Cursor]:
        """A transaction holding the ledger's single-writer lock."""

    @abc.abstractmethod
    def _read(self) -> contextlib.AbstractContextManager[Cursor]:
        """A cursor for reads (each statement sees committed data)."""

    @abc.abstractmethod
    def _migration_lock(self, cur: Cursor) -> None:
        """Serialize schema changes among processes (inside the write transaction)."""

    @abc.abstractmethod
    def _table_names(self, cur: Cursor) -> set[str]:
        """Names of the tables in the ledger's database (schema)."""

    def _q(self, sql: str) -> str:
        return sql

    def _is_unique_violation(self, exc: Exception) -> bool:
        return "UNIQUE" in str(exc).upper()

    def _text_order_collation(self) -> str:
        """The ``COLLATE`` clause that orders text by code point ("" when the default does)."""
        return ""

    def _ddl(self, stmt: str) -> list[str]:
        if stmt == "{APPEND_ONLY}":
            return list(self.append_only_ddl)
        if stmt == "{SIGNATURES_APPEND_ONLY}":
            return list(self.signatures_append_only_ddl)
        return [stmt.format(**self.types)]

    # --- schema ---------------------------------------------------------------------------
    def _migrate(self) -> None:
        with self._read() as cur:
            tables = self._table_names(cur)
            done: set[int] = set()
            if "rt_migrations" in tables:
                cur.execute("SELECT version FROM rt_migrations")
                done = {int(r[0]) for r in cur.fetchall()}
        self._check_schema(tables, done)
        if {v for v, _, _ in MIGRATIONS} <= done:
            return
        if self.read_only and {v for v, _, _ in MIGRATIONS} - done <= READ_ONLY_OPTIONAL:
            # Reads answer the same without the indexes a read-only store cannot add; without the
            # signatures table, as a store with no signature.
            self._has_signatures = SIGNATURES_MIGRATION in done
            return
        if self.read_only:
            raise ReadOnlyStoreError(
                f"{self.describe()} needs a schema upgrade, which a read-only store cannot take", field="store"
            )
        with self._write_txn() as cur:
            self._migration_lock(cur)
            cur.execute(
                "CREATE TABLE IF NOT EXISTS rt_migrations (version INTEGER PRIMARY KEY, "
                "description TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            cur.execute("SELECT version FROM rt_migrations")
            done = {r[0] for r in cur.fetchall()}
            for version, description, statements in MIGRATIONS:
                if version in done:
                    continue
                for stmt in statements:
                    for sql in self._ddl(stmt):
                        cur.execute(sql)
                cur.execute(
                    self._q("INSERT INTO rt_migrations (version, description, applied_at) VALUES (?, ?, ?)"),
                    (version, description, datetime.now(UTC).isoformat()),
                )

    def _check_schema(self, tables: set[str], done: set[int]) -> None:
        """An existing ledger must have its records table and its migration history; only a new
        ledger (``create=True`` on an empty database) gets them created."""
        if "rt_records" in tables and not done:
            raise LedgerMissingError(
                f"{self.describe()} has a records table but its migration history (rt_migrations) is "
                "missing or empty; the database was altered outside reviewtrail",
                field="ledger",
            )
        if "rt_records" not in tables and (done or not self._create):
            what = "has no records table (rt_records): it was dropped, or this is not the store's database"
            raise LedgerMissingError(f"{self.describe()} {what}", field="ledger")
        # Migrations are applied in order, all in one transaction: a sound history is 1..its last.
        # A row deleted from it would make the open run that migration again over what it made.
        lacking = [v for v in range(1, max(done, default=0)) if v not in done]
        if "rt_signatures" in tables and SIGNATURES_MIGRATION not in done:
            lacking.append(SIGNATURES_MIGRATION)
        if SIGNATURES_MIGRATION in done and "rt_records" in tables and "rt_signatures" not in tables:
            raise IntegrityError(
                f"{self.describe()}: {SIGNATURES_DROPPED}; the database was altered outside reviewtrail",
                field="ledger",
            )
        if lacking:
            raise IntegrityError(
                f"{self.describe()}: its migration history (rt_migrations) lacks version(s) "
                f"{', '.join(map(str, sorted(set(lacking))))}, which were applied (a later version is recorded, "
                "or the table it made exists); the database was altered outside reviewtrail",
                field="ledger",
            )

    def missing_tables(self) -> list[str]:
        with self._read() as cur:
            present = self._table_names(cur)
        return sorted(name for name in self.tables if f"rt_p_{name}" not in present)

    def schema_version(self) -> int:
        with self._read() as cur:
            cur.execute("SELECT MAX(version) FROM rt_migrations")
            return int(cur.fetchone()[0] or 0)

    def _sync_projections(self) -> None:
        """Create projection tables; rebuild any whose version changed since last time."""
        with self._read() as cur:
            cur.execute("SELECT name, version FROM rt_projection_state")
            state = {r[0]: r[1] for r in cur.fetchall()}
        stale = [p for p in self.projections if state.get(p.name) != p.version]
        if not stale:
            return
        with self._write_txn() as cur:
            self._migration_lock(cur)
            cur.execute("SELECT name, version FROM rt_projection_state")
            state = {r[0]: r[1] for r in cur.fetchall()}
            stale = [p for p in self.projections if state.get(p.name) != p.version]
            self._rebuild(cur, stale)

    def _refuse_stale_projections(self) -> None:
        """A read-only ledger cannot rebuild query tables: one whose tables an older version made
        (another projection version recorded) is refused, naming them and the fix, instead of
        answering reads from tables of another shape."""
        with self._read() as cur:
            if "rt_projection_state" not in self._table_names(cur):
                return
            cur.execute("SELECT name, version FROM rt_projection_state")
            state = {r[0]: r[1] for r in cur.fetchall()}
        stale = [f"{p.name} (version {state.get(p.name, 'none')}, now {p.version})" for p in self.projections
                 if state.get(p.name) != p.version]  # fmt: skip
        if stale:
            raise ReadOnlyStoreError(
                f"{self.describe()}: query tables made by another version of reviewtrail: {', '.join(stale)}; "
                "a read-only store cannot rebuild them: run 'reviewtrail verify' once, which rebuilds them "
                "from the chain",
                field="store",
            )

    def _rebuild(self, cur: Cursor, projections: list[Projection]) -> None:
        for p in projections:
            for table in p.tables:
                for sql in table_ddl(table, self.types["BIGINT"]):
                    cur.execute(sql)
        if projections:
            self._replay(cur, projections)
        for p in projections:
            cur.execute(self._q("DELETE FROM rt_projection_state WHERE name = ?"), (p.name,))
            cur.execute(self._q("INSERT INTO rt_projection_state (name, version) VALUES (?, ?)"), (p.name, p.version))

    def rebuild_projections(self) -> None:
        self.refuse_if_read_only()
        with self._write_txn() as cur:
            self._migration_lock(cur)
            self._rebuild(cur, list(self.projections))

    def _replay(self, cur: Cursor, projections: list[Projection]) -> None:
        last = 0
        while True:
            cur.execute(self._q(f"SELECT {COLUMNS} FROM rt_records WHERE seq > ? ORDER BY seq LIMIT ?"), (last, _PAGE))
            page = [row_to_env(r) for r in cur.fetchall()]
            if not page:
                return
            self._write_rows(cur, projection_rows(page, projections), replay=True)
            last = page[-1].seq

    def _write_rows(self, cur: Cursor, rows: list[Row], *, replay: bool = False) -> None:
        by_table: dict[str, list[dict[str, Any]]] = {}
        for table, row in rows:
            by_table.setdefault(table, []).append(row)
        for name, items in by_table.items():
            spec = self.tables[name]
            sql, cols = upsert_sql(spec, replay=replay)
            try:
                cur.executemany(self._q(sql), [tuple(r[c] for c in cols) for r in items])
            except Exception as exc:
                if spec.claims_once and self._is_unique_violation(exc):
                    raise ConflictError(f"{name}: a row with this key is already recorded ({exc})", field=name) from exc
                raise
            if "DO NOTHING" not in sql:
                self._refuse_unless_all_stored(name, len(items), cur.rowcount)

    def _refuse_unless_all_stored(self, name: str, given: int, stored: int) -> None:
        """Fail the append when query table ``name`` stored fewer of the ``given`` rows than it was
        given (``stored``: rows inserted or updated; -1 when the driver cannot tell)."""
        if 0 <= stored < given:
            raise IntegrityError(
                f"{self.describe()}: {given} row(s) written to query table rt_p_{name}, {stored} stored: "
                "a rule or trigger on it swallows rows; nothing was written; run 'reviewtrail verify'",
                field=name,
            )

    # --- writes ---------------------------------------------------------------------------
    def _id_key_refuses(self, cur: Cursor) -> bool:
        """Whether the insert of an append refuses an id already recorded, as the table stands in
        this transaction (a unique key on exactly ``rt_records.id``). Then the append looks up only
        the ids its records supersede; otherwise every id of the batch is looked up before sealing."""
        return False

    def _known_ids(self, cur: Cursor, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(ids), self._ids_per_query):
            chunk = ids[i : i + self._ids_per_query]
            cur.execute(self._q(f"SELECT id FROM rt_records WHERE id IN ({', '.join('?' for _ in chunk)})"), chunk)
            found.update(r[0] for r in cur.fetchall())
        return found

    def _sealed_hashes(self, envs: list[Envelope]) -> Any:
        """The batch's hashes in seq order, joined, as the parameter ``hash_at_seq`` takes them."""
        return "".join([e.hash for e in envs]).encode("ascii")

    def _insert_records(self, cur: Cursor, columns: list[Any]) -> None:
        """Insert sealed ``rt_records`` rows: ``columns`` holds each row's 12 values in turn
        (:data:`COLUMNS` order)."""
        cur.executemany(self._q(_INSERT), [tuple(columns[i : i + 12]) for i in range(0, len(columns), 12)])

    def append(self, records: list[NewRecord], payloads: list[bytes], now: datetime, stamp: Stamp) -> list[Envelope]:
        with self._write_txn() as cur:
            cur.execute("SELECT seq, hash FROM rt_records ORDER BY seq DESC LIMIT 1")
            last = cur.fetchone()
            columns: list[Any] = []
            by_key = self._id_key_refuses(cur)
            envs = seal_batch(
                records,
                payloads,
                head=(int(last[0]), str(last[1])) if last else None,
                now=now,
                known_ids=lambda ids: self._known_ids(cur, ids),
                columns=columns,
                ids_refused_on_insert=by_key,
            )
            signatures = stamp(int(last[0]) if last else 0, lambda after: self._key_rows(cur, after), envs)
            try:
                self._insert_records(cur, columns)
            except Exception as exc:
                if by_key and self._is_unique_violation(exc):
                    # The unique key on id refused a recorded id: name it (nothing is committed).
                    refuse_known_ids(records, self._known_ids(cur, sorted({r.id for r in records})))
                raise
            if signatures is not None:
                self._insert_signatures(cur, envs, signatures)
            # Read back what is acknowledged: a rule or trigger that swallows or alters the insert
            # must fail the append (nothing committed), never return records that are not stored.
            if signatures is not None:
                cur.execute(self._q(SIGNATURES_READ_BACK), (envs[0].seq, envs[-1].seq))
                self._refuse_unless_signed(int(cur.fetchone()[0]), envs)
            self._refuse_unless_stored_as_sealed(cur, envs)
            self._write_rows(cur, self.projection_rows(envs))
            return envs

    def _key_rows(self, cur: Cursor, after: int) -> list[KeyRow]:
        """The key records past seq ``after``, read in the append's transaction."""
        cur.execute(self._q(KEY_ROWS_SQL), (*KEY_RECORD_TYPES, after))
        return self._fetched_key_rows(cur)

    def _fetched_key_rows(self, cur: Cursor) -> list[KeyRow]:
        """The answer of :data:`KEY_ROWS_SQL` as key rows."""
        return [
            key_row(int(seq), t, h, p, None if k is None and sig is None else row_to_signature(k, sig))
            for seq, t, h, p, k, sig in cur.fetchall()
        ]

    def _insert_signatures(self, cur: Cursor, envs: list[Envelope], signatures: list[RecordSignature]) -> None:
        """Insert the batch's signatures beside its records (in the append's transaction)."""
        rows = [(env.seq, sig.key_id, sig.value) for env, sig in zip(envs, signatures, strict=True)]
        cur.executemany(self._q(_INSERT_SIGNATURE), rows)

    def _refuse_unless_signed(self, stored: int, envs: list[Envelope]) -> None:
        """The read-back of a signed append: each record of the batch holds its signature."""
        if stored != len(envs):
            first, final = envs[0].seq, envs[-1].seq
            raise IntegrityError(
                f"{self.describe()}: the signatures of seq {first}..{final} were not stored ({stored} of "
                f"{len(envs)} read back): a rule or trigger on rt_signatures changes what is written; "
                "nothing was written; run 'reviewtrail verify'",
                field="ledger",
            )

    def append_sealed(self, runs: Iterable[SealedRun]) -> int:
        """One transaction. Into an empty ledger the records table's secondary indexes are
        dropped first and built again once every run is stored (a bulk load sorts each index
        once instead of growing it row by row); a failure rolls the drop back with the rest."""
        stored = 0
        with self._write_txn() as cur:
            cur.execute("SELECT seq, hash FROM rt_records ORDER BY seq DESC LIMIT 1")
            last = cur.fetchone()
            head = (int(last[0]), str(last[1])) if last else None
            rebuilt = self._droppable_indexes(cur) if head is None else []
            for name, _ in rebuilt:
                cur.execute(f"DROP INDEX {name}")
            for envelopes, signatures in runs:
                if not stored:
                    refuse_unless_extends(self.describe(), head, envelopes[0])
                self._store_sealed(cur, envelopes, signatures)
                stored += len(envelopes)
            for _, ddl in rebuilt:
                cur.execute(ddl)
        return stored

    def _droppable_indexes(self, cur: Cursor) -> list[tuple[str, str]]:
        """(name, the statement that creates it) of the records table's indexes that no key
        constraint needs (the seq and id keys stay) and that this connection may drop."""
        return []

    def _store_sealed(self, cur: Cursor, envelopes: list[Envelope], signatures: dict[int, RecordSignature]) -> None:
        """One run of :meth:`append_sealed`: its records, their signatures, the read-back of
        both, and the run's projection rows as a replay writes them."""
        try:
            self._insert_sealed(cur, envelopes)
        except Exception as exc:
            if self._is_unique_violation(exc):
                first, final = envelopes[0].seq, envelopes[-1].seq
                raise ConflictError(
                    f"{self.describe()} already holds the id of a record of seq {first}..{final} "
                    f"({str(exc).splitlines()[0]}); nothing was written",
                    field="id",
                ) from None
            raise
        signed = [env for env in envelopes if env.seq in signatures]
        if signed:
            self._insert_signatures(cur, signed, [signatures[env.seq] for env in signed])
            cur.execute(self._q(SIGNATURES_READ_BACK), (envelopes[0].seq, envelopes[-1].seq))
            self._refuse_unless_signed(int(cur.fetchone()[0]), signed)
        self._refuse_unless_stored_as_sealed(cur, envelopes)
        self._write_rows(cur, self.projection_rows(envelopes), replay=True)

    def _insert_sealed(self, cur: Cursor, envelopes: list[Envelope]) -> None:
        """Insert the ``rt_records`` rows of sealed envelopes."""
        self._insert_records(cur, [value for env in envelopes for value in env_row(env)])

    def _refuse_unless_stored_as_sealed(self, cur: Cursor, envs: list[Envelope]) -> None:
        """The read-back of an append: exactly the batch's seqs, each holding the hash sealed for
        it, or nothing is committed. One row answers: the rows from the batch's first seq (LIMIT:
        one past the batch, so the primary key serves it whatever the statistics say)."""
        first = envs[0].seq
        cur.execute(
            self._q(_READ_BACK.format(HASH_AT=self.hash_at_seq)),
            (self._sealed_hashes(envs), first, first, len(envs) + 1),
        )
        self._refuse_unless_stored(cur, envs)

    def _refuse_unless_stored(self, read_back: Cursor, envs: list[Envelope]) -> None:
        """Refuse the append unless the read-back's one row is (batch size, last seq, batch size)."""
        stored = tuple(read_back.fetchone())
        first, final = envs[0].seq, envs[-1].seq
        if stored != (len(envs), final, len(envs)):
            raise IntegrityError(
                f"{self.describe()}: the append of seq {first}..{final} was not stored as sealed "
                f"(read back {stored[0]} row(s)): a rule or trigger on rt_records changes what is written; "
                "nothing was written; run 'reviewtrail verify'",
                field="ledger",
            )

    # --- reads ----------------------------------------------------------------------------
    def read(
        self,
        *,
        start: int = 1,
        end: int | None = None,
        type: str | None = None,
        subject: str | None = None,
        limit: int | None = None,
    ) -> Iterator[Envelope]:
        check_range(start, end, limit)
        extra, params = filter_sql(type, subject)
        if end is not None:
            extra += " AND seq <= ?"
            params.append(end)
        last = start - 1
        remaining = limit
        while remaining is None or remaining > 0:
            page = _PAGE if remaining is None else min(_PAGE, remaining)
            with self._read() as cur:
                cur.execute(
                    self._q(f"SELECT {COLUMNS} FROM rt_records WHERE seq > ?{extra} ORDER BY seq LIMIT ?"),
                    [last, *params, page],
                )
                rows = cur.fetchall()
            if not rows:
                return
            for row in rows:
                yield row_to_env(row)
            last = rows[-1][0]
            if remaining is not None:
                remaining -= len(rows)
            if len(rows) < page:
                return

    def records_digest(self, start: int, end: int) -> tuple[int, str]:
        with self._read() as cur:
            cur.execute(self._q(digest_sql(self.dialect, signatures=self._has_signatures)), (start, end))
            count, digest = cur.fetchone()
        return int(count), str(digest) if count else EMPTY_DIGEST

    def head(self) -> Envelope | None:
        with self._read() as cur:
            cur.execute(f"SELECT {COLUMNS} FROM rt_records ORDER BY seq DESC LIMIT 1")
            row = cur.fetchone()
        return None if row is None else row_to_env(row)

    def tail(self, n: int = 20, *, type: str | None = None, subject: str | None = None) -> list[Envelope]:
        if n <= 0:
            return []
        extra, params = filter_sql(type, subject)
        with self._read() as cur:
            cur.execute(
                self._q(f"SELECT {COLUMNS} FROM rt_records WHERE seq > 0{extra} ORDER BY seq DESC LIMIT ?"),
                [*params, n],
            )
            rows = cur.fetchall()
        return [row_to_env(r) for r in reversed(rows)]

    def stats(self) -> tuple[int, int | None, int | None]:
        with self._read() as cur:
            cur.execute("SELECT COUNT(*), MIN(seq), MAX(seq) FROM rt_records")
            count, low, high = cur.fetchone()
        return int(count), low, high

    def projected_seq_max(self) -> dict[str, int]:
        out: dict[str, int] = {}
        dropped = set(self.missing_tables())  # reported by verify; reading one would fail
        with self._read() as cur:
            for name, spec in self.tables.items():
                if "seq" in spec.column_names and name not in dropped:
                    cur.execute(f"SELECT MAX(seq) FROM rt_p_{name}")
                    value = cur.fetchone()[0]
                    try:
                        out[name] = int(value)
                    except (TypeError, ValueError):  # none, or a row edited to hold text: verify's
                        continue  # comparison of the rows reports the edited row itself
        return out

    def select_rows(self, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        cols = (*self.tables[table].column_names, ROW_SEQ)
        clause = " AND ".join(f"{k} = ?" for k in where) or "1 = 1"
        with self._read() as cur:
            cur.execute(self._q(f"SELECT {', '.join(cols)} FROM rt_p_{table} WHERE {clause}"), list(where.values()))
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    def select_rows_in(self, table: str, column: str, values: list[Any], where: dict[str, Any]) -> list[dict[str, Any]]:
        cols = (*self.tables[table].column_names, ROW_SEQ)
        clause = " AND ".join([f"{k} = ?" for k in where] + [f"{column} IN ({', '.join('?' for _ in values)})"])
        with self._read() as cur:
            cur.execute(
                self._q(f"SELECT {', '.join(cols)} FROM rt_p_{table} WHERE {clause}"), [*where.values(), *values]
            )
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    def _rows_in(self, select: str, values: Sequence[Any], *before: Any) -> Iterator[tuple[Any, ...]]:
        """The rows of ``select`` (SQL that ends in ``IN``) for ``values``, ``_ID_CHUNK`` values a
        query; ``before`` are the parameters of the placeholders ahead of the list."""
        for i in range(0, len(values), _ID_CHUNK):
            chunk = values[i : i + _ID_CHUNK]
            with self._read() as cur:
                cur.execute(self._q(f"{select} ({', '.join('?' for _ in chunk)})"), [*before, *chunk])
                rows = cur.fetchall()
            yield from rows

    def get_many(self, record_ids: Iterable[str]) -> dict[str, Envelope]:
        rows = self._rows_in(f"SELECT {COLUMNS} FROM rt_records WHERE id IN", list(dict.fromkeys(record_ids)))
        return {env.id: env for env in map(row_to_env, rows)}

    def select_page(self, table: str, where: dict[str, Any], order: PageOrder) -> list[dict[str, Any]]:
        sql, params, cols = page_sql(self.tables[table], where, order, text_collation=self._text_order_collation())
        with self._read() as cur:
            cur.execute(self._q(sql), params)
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    def count_rows(self, table: str, where: dict[str, Any], within: ProjectionTable | None = None) -> int:
        sql, params = count_sql(self.tables[table], where, within)
        with self._read() as cur:
            cur.execute(self._q(sql), params)
            return int(cur.fetchone()[0])

    def select_records(self, column: str, values: list[str], type: str | None) -> list[Envelope]:
        assert column in ("subject", "supersedes")
        extra, params = filter_sql(type, None)
        with self._read() as cur:
            cur.execute(
                self._q(
                    f"SELECT {COLUMNS} FROM rt_records WHERE {column} IN ({', '.join('?' for _ in values)}){extra}"
                ),
                [*values, *params],
            )
            return [row_to_env(r) for r in cur.fetchall()]

    def seqs_of_type(self, type: str, *, after: int = 0, upto: int | None = None) -> list[int]:
        extra, params = filter_sql(type, None)
        if upto is not None:
            extra += " AND seq <= ?"
            params.append(upto)
        with self._read() as cur:
            cur.execute(self._q(f"SELECT seq FROM rt_records WHERE seq > ?{extra} ORDER BY seq"), [after, *params])
            return [int(r[0]) for r in cur.fetchall()]

    def head_seq(self) -> int:
        with self._read() as cur:
            cur.execute("SELECT MAX(seq) FROM rt_records")
            value = cur.fetchone()[0]
        return int(value) if value is not None else 0

    def links_after(self, seqs: list[int]) -> tuple[int, dict[int, str | None]]:
        if not seqs or len(seqs) > _ID_CHUNK:
            return self.head_seq(), self._prev_hashes(seqs) if seqs else {}
        found: dict[int, str | None] = {}
        with self._read() as cur:  # the head and the links in one round trip
            cur.execute(
                self._q(
                    "SELECT seq, prev_hash FROM rt_records WHERE seq IN "
                    f"({', '.join('?' for _ in seqs)}) UNION ALL SELECT MAX(seq), NULL FROM rt_records"
                ),
                seqs,
            )
            rows = cur.fetchall()
        head = 0
        for seq, prev in rows:
            if prev is None:
                head = int(seq) if seq is not None else 0
            else:
                found[int(seq)] = str(prev)
        return head, found

    def _prev_hashes(self, seqs: list[int]) -> dict[int, str | None]:
        rows = self._rows_in("SELECT seq, prev_hash FROM rt_records WHERE seq IN", seqs)
        return {int(seq): str(prev) for seq, prev in rows}

    # --- signatures -------------------------------------------------------------------------
    def signatures_at(self, seqs: Iterable[int]) -> dict[int, RecordSignature]:
        wanted = sorted(set(seqs))
        if not self._has_signatures:
            return {}
        rows = self._rows_in(f"SELECT {SIGNATURE_COLUMNS} FROM rt_signatures WHERE seq IN", wanted)
        return {int(seq): row_to_signature(key_id, sig) for seq, key_id, sig in rows}

    def signature_scan(self, *, start: int = 1, end: int | None = None) -> Iterator[tuple[int, str, str, Any]]:
        if not self._has_signatures:
            yield from super().signature_scan(start=start, end=end)
            return
        last = end if end is not None else self.head_seq()
        for seq, type_, record_hash, key_id, sig in self._scan(_SIGNATURE_SCAN, (start, last)):
            yield (
                int(seq),
                type_,
                record_hash,
                None if key_id is None and sig is None else row_to_signature(key_id, sig),
            )

    def signed_scan(self, *, start: int = 1, end: int | None = None) -> Iterator[tuple[int, str, str, Any]]:
        if not self._has_signatures:
            return
        last = end if end is not None else self.head_seq()
        for seq, type_, record_hash, key_id, sig in self._scan(_SIGNED_SCAN, (start, last)):
            yield int(seq), type_, record_hash, row_to_signature(key_id, sig)

    def stray_signatures(self, *, limit: int = 20) -> list[int]:
        if not self._has_signatures:
            return []
        with self._read() as cur:
            cur.execute(
                self._q(
                    "SELECT s.seq FROM rt_signatures s WHERE NOT EXISTS "
                    "(SELECT 1 FROM rt_records r WHERE r.seq = s.seq) ORDER BY s.seq LIMIT ?"
                ),
                (limit,),
            )
            return [int(r[0]) for r in cur.fetchall()]

    # --- what verify streams (ledger.contract._verify_reads.VerifyReads) -----------------------------
    def _scan(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        """The rows of one query, fetched in batches from one cursor (inside a snapshot: of it)."""
        with self._read() as cur:
            cur.execute(self._q(sql), params)
            while rows := cur.fetchmany(_SCAN_BATCH):
                yield from rows

    def _repeated_id_sql(self) -> str:
        return "SELECT id FROM rt_records WHERE seq > 0 AND seq <= ? GROUP BY id HAVING COUNT(*) > 1"

    def repeated_ids(self, *, start: int, end: int) -> dict[int, str]:
        with self._read() as cur:
            cur.execute(self._q(self._repeated_id_sql()), (end,))
            ids = [str(r[0]) for r in cur.fetchall()]
        rows = self._rows_in("SELECT seq, id FROM rt_records WHERE seq > 0 AND seq <= ? AND id IN", ids, end)
        return repeated_from([(int(seq), str(id_)) for seq, id_ in rows], start)

    def stored_rows_by_key(self, table: str, *, after_seq: int = 0) -> Iterator[tuple[Any, ...]]:
        spec = self.tables[table]
        kinds = dict(spec.columns)
        collation = self._text_order_collation()
        order = ", ".join(f'"{k}" {collation}' if collation and kinds[k] == "text" else f'"{k}"' for k in spec.key)
        cols = ", ".join(f'"{c}"' for c in (*spec.column_names, ROW_SEQ))
        where, params = (f" WHERE {ROW_SEQ} > ?", [after_seq]) if after_seq else ("", [])
        return self._scan(f"SELECT {cols} FROM rt_p_{table}{where} ORDER BY {order}", params)

    def stored_row(self, table: str, key: Sequence[Any]) -> tuple[Any, ...] | None:
        spec = self.tables[table]
        cols = ", ".join(f'"{c}"' for c in (*spec.column_names, ROW_SEQ))
        where = " AND ".join(f'"{k}" = ?' for k in spec.key)
        with self._read() as cur:
            cur.execute(self._q(f"SELECT {cols} FROM rt_p_{table} WHERE {where}"), list(key))
            row = cur.fetchone()
        return None if row is None else tuple(row)

    def records_at(self, seqs: Iterable[int]) -> dict[int, Envelope]:
        rows = self._rows_in(f"SELECT {COLUMNS} FROM rt_records WHERE seq IN", sorted(set(seqs)))
        return {env.seq: env for env in map(row_to_env, rows)}


class SqlLedger(Ledger, abc.ABC):
    """A ledger kept by a SQL recorder, which streams the reads ``verify`` makes
    (:class:`~reviewtrail.ledger.contract._verify_reads.VerifyReads`) in the database."""

    recorder: SqlRecorder

    @abc.abstractmethod
    def reopen(self) -> SqlLedger:
        """Another connection to the same ledger, with the same catalog (for a second process)."""

    def repeated_ids(self, *, start: int, end: int) -> dict[int, str]:
        return self.recorder.repeated_ids(start=start, end=end)

    def stored_rows_by_key(self, table: str, *, after_seq: int = 0) -> Iterator[tuple[Any, ...]]:
        return self.recorder.stored_rows_by_key(table, after_seq=after_seq)

    def stored_row(self, table: str, key: Sequence[Any]) -> tuple[Any, ...] | None:
        return self.recorder.stored_row(table, key)

    def schema_version(self) -> int:
        return self.recorder.schema_version()
