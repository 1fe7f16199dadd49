"""The reads ``verify`` streams: ids used twice, and query-table rows in key order.

``verify`` compares every query table with its recomputation without holding either in memory,
so it reads both sides ordered by key and merges them. Both orders must agree: values are ordered
as SQLite orders them (NULL, then numbers, then text by code point, then bytes), which is also
PostgreSQL's order for a key of whole numbers and text compared ``COLLATE "C"`` (key columns are
never NULL there). :func:`value_order` is that order in Python.

The SQL ledgers answer these reads in the database (:class:`VerifyReads` is implemented by
:class:`~reviewtrail.ledger.backends._sql.SqlLedger`); any other ledger (the in-memory one) is read through
the public API, in memory (it is in memory already).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from reviewtrail.ledger.contract._projections import ROW_SEQ
from reviewtrail.ledger.contract._protocol import Ledger

__all__ = ["VerifyReads", "key_order", "repeated_from", "value_order", "verify_reads"]


@runtime_checkable
class VerifyReads(Protocol):
    def repeated_ids(self, *, start: int, end: int) -> dict[int, str]:
        """Records with ``start <= seq <= end`` whose id a record with a lower seq (>= 1) holds too,
        by seq (each such record, not the first holder)."""
        ...

    def stored_rows_by_key(self, table: str, *, after_seq: int = 0) -> Iterator[tuple[Any, ...]]:
        """The rows of a query table as stored (its columns then ``rt_seq``, unchecked) whose
        ``rt_seq`` is beyond ``after_seq``, ordered by key in :func:`key_order`'s order."""
        ...

    def stored_row(self, table: str, key: Sequence[Any]) -> tuple[Any, ...] | None:
        """The stored row with this key (columns then ``rt_seq``), or ``None``."""
        ...

    def reopen(self) -> Ledger | None:
        """Another connection to the same ledger (for a second process), or ``None``."""
        ...


def value_order(value: Any) -> tuple[int, Any]:
    """Where SQLite's ORDER BY puts ``value``: NULL, numbers, text (by code point), bytes."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return (3, bytes(value))
    return (4, repr(value))


def key_order(values: Sequence[Any]) -> tuple[tuple[int, Any], ...]:
    return tuple(value_order(v) for v in values)


def repeated_from(pairs: Sequence[tuple[int, str]], start: int) -> dict[int, str]:
    """From ``(seq, id)`` pairs of ids held more than once: each holder after the first whose seq
    is at least ``start``."""
    first: dict[str, int] = {}
    out: dict[int, str] = {}
    for seq, record_id in sorted(pairs):
        if record_id in first:
            if seq >= start:
                out[seq] = record_id
        else:
            first[record_id] = seq
    return out


class _Generic:
    """:class:`VerifyReads` through the public ledger API (rows and ids held in memory)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    def repeated_ids(self, *, start: int, end: int) -> dict[int, str]:
        return repeated_from([(env.seq, env.id) for env in self._ledger.read(end=end)], start)

    def _rows(self, table: str) -> list[tuple[Any, ...]]:
        spec = self._ledger.tables[table]
        cols = (*spec.column_names, ROW_SEQ)
        return [tuple(r.get(c) for c in cols) for r in self._ledger.stored_rows(table)]

    def stored_rows_by_key(self, table: str, *, after_seq: int = 0) -> Iterator[tuple[Any, ...]]:
        spec = self._ledger.tables[table]
        at = [spec.column_names.index(k) for k in spec.key]
        rows = self._rows(table)
        if after_seq:
            rows = [r for r in rows if value_order(r[-1]) > (1, after_seq)]
        rows.sort(key=lambda r: key_order([r[i] for i in at]))
        return iter(rows)

    def stored_row(self, table: str, key: Sequence[Any]) -> tuple[Any, ...] | None:
        spec = self._ledger.tables[table]
        at = [spec.column_names.index(k) for k in spec.key]
        wanted = tuple(key)
        return next((r for r in self._rows(table) if tuple(r[i] for i in at) == wanted), None)

    def reopen(self) -> Ledger | None:
        return None  # an in-memory ledger is not shared with another process


def verify_reads(ledger: Ledger) -> VerifyReads:
    """The ledger itself when it streams these reads, else the generic reads over its API."""
    return ledger if isinstance(ledger, VerifyReads) else _Generic(ledger)
