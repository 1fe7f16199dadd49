"""SQLite ledger, the embedded default: WAL, synchronous=FULL, BEGIN IMMEDIATE, one writer.

Opening never creates a database unless asked to (``create=True``, which only ``init`` and
tests use): a missing file is a missing ledger, reported as an integrity failure. A file that
is not a SQLite database, or whose pages are damaged, is an integrity failure too; a full disk
and a read-only file are backend conditions with their own errors.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
import re
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from reviewtrail._durable import special_file_problem
from reviewtrail.errors import (
    BackendUnavailableError,
    IntegrityError,
    LedgerMissingError,
    ReadOnlyStoreError,
    StorageFullError,
)
from reviewtrail.ledger.backends._sql import SIGNATURES_DROPPED, SqlLedger, SqlRecorder, insert_chunks
from reviewtrail.ledger.backends._sql_schema import COLUMNS, Cursor
from reviewtrail.ledger.contract._projections import Projection
from reviewtrail.ledger.contract._protocol import catalog_of

__all__ = ["SqliteLedger", "SqliteRecorder"]

_BUSY_TIMEOUT_S = 60.0
# What SQLite says when a read-only open of a WAL database cannot create its -shm index.
_CANNOT_MAP_WAL = re.compile(r"unable to open|attempt to write a readonly database")
_FILES = ("", "-wal", "-shm", "-journal")  # the database and the files SQLite keeps beside it


# An append's records go in multi-row INSERTs of at most this many rows (fewer when SQLite allows
# fewer parameters): one statement per 1,000 rows costs SQLite less than a statement per row.
_ROWS_PER_INSERT = 1000
_IDS_PER_QUERY = 2000  # a batch of 1,000 (and what its records supersede) in one lookup
# Of a row's 12 values, those a batch may hold as NULL in every row (subject and supersedes), and
# the payload's.
_NULLABLE = (6, 7)
_PAYLOAD = 8
# A unique key on exactly rt_records.id, compared byte for byte, for every row.
_ID_KEY = (
    "SELECT 1 FROM pragma_index_list('rt_records') AS l WHERE l.\"unique\" = 1 AND l.partial = 0 AND "
    "(SELECT group_concat(x.name || ' ' || x.coll, ',') FROM pragma_index_xinfo(l.name) AS x WHERE x.key = 1) "
    "= 'id BINARY' LIMIT 1"
)


@functools.cache
def _insert_sql(rows: int, nulls: tuple[int, ...] = (), text_payload: bool = False) -> str:
    """The insert of ``rows`` rows, with NULL written into the statement at the ``nulls``
    positions of every row (their values are not parameters), and with ``text_payload`` the
    payload given as its UTF-8 text, stored as the blob of those bytes."""
    marks = ["NULL" if i in nulls else "?" for i in range(12)]
    if text_payload:
        marks[_PAYLOAD] = "CAST(? AS BLOB)"
    row = "(" + ", ".join(marks) + ")"
    return f"INSERT INTO rt_records ({COLUMNS}) VALUES " + ", ".join([row] * rows)


@functools.cache
def _kept(nulls: tuple[int, ...]) -> tuple[bool, ...]:
    return tuple(i not in nulls for i in range(12))


def _sha256_hex(value: bytes | str | None) -> str | None:
    """``rt_sha256(X)`` in this module's connections: the SHA-256 in hex of a blob, or of a
    text's UTF-8 bytes (``records_digest``)."""
    if value is None:
        return None
    return hashlib.sha256(value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value).hexdigest()


def _normalized(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";").lower()


class SqliteRecorder(SqlRecorder):
    dialect = "sqlite"
    types: ClassVar[dict[str, str]] = {"BLOB": "BLOB", "BIGINT": "INTEGER"}
    # The hashes as one blob of 64 ASCII digits each: a blob's substr is sliced by byte offset.
    hash_at_seq = "CAST(substr(?, (seq - ?) * 64 + 1, 64) AS TEXT)"
    append_only_ddl: ClassVar[list[str]] = [
        "CREATE TRIGGER rt_records_no_update BEFORE UPDATE ON rt_records "
        "BEGIN SELECT RAISE(ABORT, 'ledger records are append-only'); END",
        "CREATE TRIGGER rt_records_no_delete BEFORE DELETE ON rt_records "
        "BEGIN SELECT RAISE(ABORT, 'ledger records are append-only'); END",
    ]
    signatures_append_only_ddl: ClassVar[list[str]] = [
        "CREATE TRIGGER rt_signatures_no_update BEFORE UPDATE ON rt_signatures "
        "BEGIN SELECT RAISE(ABORT, 'ledger signatures are append-only'); END",
        "CREATE TRIGGER rt_signatures_no_delete BEFORE DELETE ON rt_signatures "
        "BEGIN SELECT RAISE(ABORT, 'ledger signatures are append-only'); END",
    ]

    def __init__(
        self,
        path: str | os.PathLike[str],
        projections: Iterable[Projection],
        *,
        create: bool = True,
        read_only: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        if not create or os.path.lexists(self.path):
            for problem in self.file_problems():
                raise IntegrityError(f"{problem.removeprefix('ledger: ')}; refusing to open it", field="ledger")
        if not create and not Path(self.path).is_file():
            raise LedgerMissingError(f"the ledger file {self.path} is missing", field="ledger")
        self._lock = threading.RLock()
        self._conn = self._connect(create=create, read_only=read_only)
        parameters = self._conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        self._rows_per_insert = max(1, min(_ROWS_PER_INSERT, parameters // 12))
        self._ids_per_query = min(_IDS_PER_QUERY, parameters)
        self._utf8: bool | None = None  # whether the database's text encoding is UTF-8 (asked on first write)
        super().__init__(projections, create=create, read_only=read_only)

    def _connect(self, *, create: bool, read_only: bool) -> sqlite3.Connection:
        mode = "ro" if read_only else ("rwc" if create else "rw")
        uri = f"file:{urllib.parse.quote(self.path)}?mode={mode}"
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(
                uri, uri=True, isolation_level=None, timeout=_BUSY_TIMEOUT_S, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
            if read_only:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            else:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
            conn.create_function("rt_sha256", 1, _sha256_hex, deterministic=True)
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            if read_only and isinstance(exc, sqlite3.OperationalError) and _CANNOT_MAP_WAL.search(str(exc)):
                # A WAL database whose -shm file cannot be made (a read-only filesystem, or a folder
                # this process may not write): open it immutable.
                return self._connect_immutable()
            self._raise(exc, "open")
        return conn

    def _connect_immutable(self) -> sqlite3.Connection:
        uri = f"file:{urllib.parse.quote(self.path)}?mode=ro&immutable=1"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.create_function("rt_sha256", 1, _sha256_hex, deterministic=True)
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            self._raise(exc, "open")
        return conn

    def describe(self) -> str:
        return f"the SQLite ledger {self.path}"

    def file_problems(self) -> list[str]:
        """The ledger file and its WAL and shared-memory files must be regular files: a symlink
        (to a copy kept outside the store) or anything else in their place is refused."""
        found = ((f"{self.path}{suffix}", special_file_problem(f"{self.path}{suffix}")) for suffix in _FILES)
        return [f"ledger: the ledger file {name} {problem}" for name, problem in found if problem is not None]

    def _raise(self, exc: sqlite3.Error, doing: str) -> NoReturn:
        """Turn a SQLite error into the documented one: damage is integrity, the rest availability."""
        text = str(exc)
        low = text.lower()
        where = f"{self.describe()} ({doing}): {text}"
        if "disk is full" in low or "database or disk is full" in low:
            raise StorageFullError(f"no space left for {where}; nothing was written", field="ledger") from exc
        if "readonly" in low or "read-only" in low:
            raise ReadOnlyStoreError(f"cannot write {where}", field="store") from exc
        if "no such table: rt_records" in low:
            raise LedgerMissingError(f"{where}: the records table was dropped", field="ledger") from exc
        if "no such table: rt_signatures" in low:
            raise IntegrityError(f"{where}: {SIGNATURES_DROPPED}", field="ledger") from exc
        if "no such table: rt_p_" in low:
            raise IntegrityError(
                f"{where}: query table {text.rsplit(':', 1)[-1].strip()} was dropped; "
                "'reviewtrail verify --repair' rebuilds it from the chain",
                field="ledger",
            ) from exc
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            raise IntegrityError(f"{where}: the ledger file is damaged (not a database, or truncated)") from exc
        if "malformed" in low or "not a database" in low:
            raise IntegrityError(f"{where}: the ledger file is damaged") from exc
        raise BackendUnavailableError(f"cannot use {where}", field="database") from exc

    @contextlib.contextmanager
    def _write_txn(self) -> Iterator[Cursor]:
        self.refuse_if_read_only()
        with self._lock:
            cur = self._conn.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                cur.close()
                self._raise(exc, "write")
            try:
                yield cur
            except BaseException as exc:
                self._conn.rollback()
                if isinstance(exc, sqlite3.Error):
                    self._raise(exc, "write")
                raise
            else:
                try:
                    cur.execute("COMMIT")
                except sqlite3.Error as exc:
                    self._conn.rollback()
                    self._raise(exc, "commit")
            finally:
                cur.close()

    @contextlib.contextmanager
    def _read(self) -> Iterator[Cursor]:
        with self._lock:
            cur = self._conn.cursor()
            try:
                yield cur
            except sqlite3.Error as exc:
                self._raise(exc, "read")
            finally:
                cur.close()

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        with self._lock:
            try:
                self._conn.execute("BEGIN")
                # In WAL mode the snapshot is fixed by the first read of the transaction.
                self._conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            except sqlite3.Error as exc:
                self._raise(exc, "read")
            try:
                yield
            finally:
                self._conn.execute("ROLLBACK")

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        return self._snapshot()

    def _repeated_id_sql(self) -> str:
        # Grouped from the rows themselves, not from the index on id, which could disagree with them.
        return "SELECT id FROM rt_records NOT INDEXED WHERE seq > 0 AND seq <= ? GROUP BY id HAVING COUNT(*) > 1"

    def _table_names(self, cur: Cursor) -> set[str]:
        cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(r[0]) for r in cur.fetchall()}

    def guard_problems(self) -> list[str]:
        file_problems = self.file_problems()
        with self._read() as cur:
            cur.execute("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")
            rows = cur.fetchall()
        guards = [*self.append_only_ddl, *(self.signatures_append_only_ddl if self._has_signatures else ())]
        # Each guard: (its name, the table it guards), from its DDL ("CREATE TRIGGER name ... ON table ...").
        tables = {ddl.split()[2]: ddl.split()[ddl.split().index("ON") + 1] for ddl in guards}
        present = {str(name): _normalized(str(sql or "")) for name, table, sql in rows if tables.get(name) == table}
        problems: list[str] = [
            f"ledger: trigger {name} on {table} is not reviewtrail's own; it can change what is recorded or "
            "what query tables show"
            for name, table, _ in rows
            if tables.get(name) != table
        ]
        for ddl in guards:
            name = ddl.split()[2]
            if name not in present:
                problems.append(f"ledger: append-only trigger {name} on {tables[name]} was dropped")
            elif present[name] != _normalized(ddl):
                problems.append(f"ledger: append-only trigger {name} on {tables[name]} was replaced: {present[name]!r}")
        return file_problems + problems

    def _id_key_refuses(self, cur: Cursor) -> bool:
        # rt_records.id is UNIQUE (an index SQLite never lets be dropped); a table rebuilt without
        # it, or with the key under another collation or a condition, has every id looked up.
        cur.execute(_ID_KEY)
        return cur.fetchone() is not None

    def _insert_records(self, cur: Cursor, columns: list[Any]) -> None:
        # sqlite3 binds None and bytes through its adapter lookup, which costs more per value than
        # the rest of a row's binding. So a column that is null in every row of the batch (a
        # subject, a superseded id: often) is written as NULL by the statement, and the payload
        # (canonical JSON: UTF-8) is given as text that the statement casts to the blob of its
        # UTF-8 bytes (the database's encoding, asked once), byte for byte.
        rows = len(columns) // 12
        nulls = tuple(i for i in _NULLABLE if columns[i::12].count(None) == rows)
        params = list(itertools.compress(columns, itertools.cycle(_kept(nulls)))) if nulls else list(columns)
        width = 12 - len(nulls)
        at = _PAYLOAD - len(nulls)
        if self._utf8 is None:
            cur.execute("PRAGMA encoding")
            self._utf8 = cur.fetchone()[0] == "UTF-8"
        text_payload = self._utf8
        if text_payload:
            try:
                params[at::width] = list(map(bytes.decode, params[at::width]))
            except (TypeError, UnicodeDecodeError):  # not UTF-8 bytes: bound as they are
                text_payload = False
        for count, chunk in insert_chunks(params, self._rows_per_insert, width):
            cur.execute(_insert_sql(count, nulls, text_payload), chunk)

    def _droppable_indexes(self, cur: Cursor) -> list[tuple[str, str]]:
        cur.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rt_records' "
            "AND sql IS NOT NULL ORDER BY name"
        )
        return [('"' + str(name).replace('"', '""') + '"', str(sql)) for name, sql in cur.fetchall()]

    def _migration_lock(self, cur: Cursor) -> None:
        """BEGIN IMMEDIATE already excludes other writers."""

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class SqliteLedger(SqlLedger):
    """A ledger in a SQLite file."""

    recorder: SqliteRecorder

    def __init__(
        self,
        path: str | os.PathLike[str],
        projections: Iterable[Projection] | None = None,
        *,
        create: bool = True,
        read_only: bool = False,
    ) -> None:
        catalog = catalog_of(projections)
        super().__init__(SqliteRecorder(path, catalog.projections, create=create, read_only=read_only), catalog)

    @property
    def path(self) -> str:
        return self.recorder.path

    def file_problems(self) -> list[str]:
        return self.recorder.file_problems()

    def reopen(self) -> SqliteLedger:
        return SqliteLedger(self.path, self.catalog, create=False, read_only=self.read_only)
