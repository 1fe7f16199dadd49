"""Reads of human review's query tables, each row held against the record it rests on by this
package's own projection (:data:`~._projection.HUMAN_REVIEW_PROJECTION`, which reads payloads as
plain JSON).

A checked read of the ledger (``ledger.page``, ``ledger.rows_in``) holds its rows against their
records through the application's catalog, which loads every payload model of the package (and
pydantic) to do it. These reads check the same things from the same records, with no model: each
row's record is read afresh and checked (its stored bytes, the next record's link to it) and must
give exactly that row. When a row fails any of it, the read is done again as the ledger's own
checked read, which refuses it (exit 4) in its own words: what is refused, and how it is worded,
is the same either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.records._projection import HUMAN_REVIEW_PROJECTION
from reviewtrail.ledger import ROW_SEQ, Ledger

__all__ = ["ROWS_ONE_BY_ONE", "checked_page", "checked_rows_in"]

#: The most values :func:`checked_rows_in` reads one by one; more are one read of the ledger.
ROWS_ONE_BY_ONE = 50


def checked_page(
    ledger: Ledger,
    table: str,
    where: Mapping[str, Any] | None,
    *,
    order_by: str,
    after: Any,
    limit: int,
    offset: int = 0,
    within: str | None = None,
) -> list[dict[str, Any]]:
    """``ledger.page(table, where, order_by=..., after=..., limit=..., offset=..., within=...)``,
    checked, as the ledger would return it."""
    options: dict[str, Any] = {"order_by": order_by, "after": after, "limit": limit, "offset": offset, "within": within}
    rows = ledger.page(table, where, check=False, **options)
    if not _supported(ledger, table, rows):
        return ledger.page(table, where, **options)
    return _without_seq(rows)


def checked_rows_in(ledger: Ledger, table: str, column: str, values: Iterable[Any]) -> list[dict[str, Any]]:
    """``ledger.rows_in(table, column, values)``, checked: the rows whose ``column`` holds one of
    ``values``. Up to :data:`ROWS_ONE_BY_ONE` values are read one at a time (a query each, on an
    index); more are left to the ledger's read, one query per many values, for which loading the
    models costs little beside the work."""
    wanted = [v for v in dict.fromkeys(values) if v is not None]
    if len(wanted) > ROWS_ONE_BY_ONE:
        return ledger.rows_in(table, column, wanted)
    rows = [row for value in wanted for row in ledger.stored_rows(table, **{column: value})]
    if not _supported(ledger, table, rows):
        return ledger.rows_in(table, column, wanted)
    return _without_seq(rows)


def _supported(ledger: Ledger, table: str, rows: list[dict[str, Any]]) -> bool:
    """Whether every row (as stored, with its record's seq) is one its record gives, that record
    being sound and linked to by the next one."""
    if not rows:
        return True
    seqs: set[int] = set()
    for row in rows:
        seq = row.get(ROW_SEQ)
        if type(seq) is not int:
            return False
        seqs.add(seq)
    records = ledger.records_at(seqs)
    try:
        ledger.checked_records(records.values(), field=table)
    except IntegrityError:
        return False
    given: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        seq = row[ROW_SEQ]
        record = records.get(seq)
        if record is None:
            return False
        if seq not in given:
            given[seq] = [{**r, ROW_SEQ: seq} for t, r in HUMAN_REVIEW_PROJECTION.rows(record) if t == table]
        if row not in given[seq]:
            return False
    return True


def _without_seq(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        row.pop(ROW_SEQ, None)
    return rows
