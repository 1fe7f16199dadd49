"""Query tables recomputed from the chain and compared with what is stored (``verify``).

Every projection row is a pure function of one record, so the whole of every table can be
recomputed by replaying the records in order (a later row with the same key replaces an earlier
one, as the append does; in a table that claims keys once with ``on_conflict="first"``, the first
row given stays). Any stored row that is not in the recomputation was added, any
missing one was deleted, and any that differs was edited; each is reported with its table and key.

Neither side is held in memory: recomputed rows are upserted, in batches, into a scratch SQLite
database in a temporary folder (``$TMPDIR``; removed afterwards), then each table is read from
both sides ordered by key and merged (:mod:`reviewtrail.verify._row_diff`).

From a checkpoint (``after_seq``), only the records after it are replayed: a key one of them
gives must hold its last row, and a stored row naming one of them must be one they give. A row
whose key only earlier records give is not looked at (nor is a deleted one).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from reviewtrail.ledger import ROW_SEQ, Envelope, Ledger, row_makers, verify_reads
from reviewtrail.verify._row_diff import diff_table

__all__ = ["ProjectionCheck"]

_BATCH = 20_000  # recomputed rows held before they are written to the scratch database


class ProjectionCheck:
    """Feed it every record in seq order (after ``after_seq``), then ask for the problems; close it."""

    def __init__(self, ledger: Ledger, *, after_seq: int = 0, batch: int = _BATCH) -> None:
        self._ledger = ledger
        self._tables = ledger.tables
        self._makers = row_makers(ledger.projections)
        self._after = after_seq
        self._batch = batch
        self._pending: dict[str, list[tuple[Any, ...]]] = {t: [] for t in self._tables}
        self._held = 0
        self.rows_checked = 0
        self._values = {t: _values_of(spec.column_names) for t, spec in self._tables.items()}
        self._folder = tempfile.mkdtemp(prefix="reviewtrail-verify-")
        try:
            self._db = sqlite3.connect(os.path.join(self._folder, "rows.sqlite"), isolation_level=None)
            for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-16384", "temp_store=FILE"):
                self._db.execute(f"PRAGMA {pragma}")
            self._merges: dict[str, str] = {}
            self._upserts = {t: self._create(i, t) for i, t in enumerate(sorted(self._tables))}
        except BaseException:
            shutil.rmtree(self._folder, ignore_errors=True)
            raise

    def _create(self, index: int, table: str) -> str:
        spec = self._tables[table]
        cols = [f'"{c}"' for c in (*spec.column_names, ROW_SEQ)]
        keys = ", ".join(f'"{k}"' for k in spec.key)
        # Untyped columns: values are kept exactly as the projection gave them.
        self._db.execute(f"CREATE TABLE t{index} ({', '.join(cols)}, PRIMARY KEY ({keys}))")
        others = [c for c in cols if c.strip('"') not in spec.key]
        if spec.on_conflict == "first":  # the first record to give a key holds it, as appends keep it
            upsert = f"ON CONFLICT ({keys}) DO NOTHING"
        else:
            upsert = f"ON CONFLICT ({keys}) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in others)
        self._merges[table] = (
            f"INSERT INTO t{index} ({', '.join(cols)}) SELECT {', '.join(cols)} FROM other.t{index} WHERE true {upsert}"
        )
        return f"INSERT INTO t{index} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)}) {upsert}"

    def _name(self, table: str) -> str:
        return self._upserts[table].split()[2]

    def add(self, env: Envelope) -> None:
        seq = env.seq
        values = self._values
        try:
            rows = [(table, (*values[table](row), seq)) for make in self._makers(env) for table, row in make(env)]
        except Exception:
            return  # a record that gives no rows (damaged, or of a shape its projection refuses)
        if not rows:
            return
        pending = self._pending
        for table, row_values in rows:
            pending[table].append(row_values)
        self._held += len(rows)
        if self._held >= self._batch:
            self._flush()

    def _flush(self) -> None:
        self._db.execute("BEGIN")
        for table, rows in self._pending.items():
            if not rows:
                continue
            sql = self._upserts[table]
            try:
                self._db.executemany(sql, rows)
            except (sqlite3.Error, OverflowError, TypeError):
                for values in rows:  # a value SQLite cannot hold is compared by its text
                    self._db.execute(sql, tuple(_storable(v) for v in values))
            rows.clear()
        self._db.execute("COMMIT")
        self._held = 0

    def problems(self) -> list[str]:
        self._flush()
        reads = verify_reads(self._ledger)
        problems: list[str] = []
        dropped = set(self._ledger.missing_tables())
        beyond = f" after seq {self._after}" if self._after else ""
        for table, spec in sorted(self._tables.items()):
            name = self._name(table)
            if table in dropped:
                (count,) = self._db.execute(f"SELECT COUNT(*) FROM {name}").fetchone()
                missing = f"{count} row(s) of the chain{beyond} missing"
                problems.append(f"query table {table}: the table rt_p_{table} was dropped ({missing})")
                continue
            cols = ", ".join(f'"{c}"' for c in (*spec.column_names, ROW_SEQ))
            order = ", ".join(f'"{k}"' for k in spec.key)
            expected = iter(self._db.execute(f"SELECT {cols} FROM {name} ORDER BY {order}"))
            stored = reads.stored_rows_by_key(table, after_seq=self._after)
            lookup = (lambda key, table=table: reads.stored_row(table, key)) if self._after else None
            diff = diff_table(spec, stored, expected, after_seq=self._after, lookup=lookup)
            self.rows_checked += diff.rows_read
            problems.extend(diff.problems)
        return problems

    def hand_over(self) -> str:
        """Write what is held and close, keeping the scratch database for :meth:`merge` (in
        another process); its folder."""
        self._flush()
        self._db.close()
        self._handed = True
        return self._folder

    def merge(self, folder: str) -> None:
        """Upsert the rows of another check's scratch database (of later records) over these,
        then remove it."""
        self._flush()
        try:
            self._db.execute("ATTACH DATABASE ? AS other", (os.path.join(folder, "rows.sqlite"),))
            try:
                self._db.execute("BEGIN")
                try:
                    for sql in self._merges.values():
                        self._db.execute(sql)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            finally:
                self._db.execute("DETACH DATABASE other")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        if not getattr(self, "_handed", False):
            self._db.close()
            shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> ProjectionCheck:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _storable(value: Any) -> Any:
    if value is None or (
        type(value) in (bool, int, float, str, bytes) and not (type(value) is int and abs(value) >= 2**63)
    ):
        return value
    return repr(value)


def _values_of(columns: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A row's values in column order (``None`` for a column the row lacks)."""
    pick = itemgetter(*columns)

    def values(row: dict[str, Any]) -> tuple[Any, ...]:
        try:
            found = pick(row)
        except KeyError:
            return tuple(row.get(c) for c in columns)
        return (found,) if len(columns) == 1 else found

    return values
