"""Paged, ordered reads of query tables, as pure rules: checking a page's arguments, choosing a
page from rows in memory, and the SQL of a page and of a count.

A page is keyset-paged: ordered by one column, starting strictly after a value of it, so a
page costs the same wherever it starts (an index on the column, or on the filter columns then
the column, serves it without a sort). A page may also skip ``offset`` rows of that order (read
along the same index, never sorted or built), and keep only the rows whose key is also a key of
another table (``within``: one index probe a row).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewtrail._value import Value
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger.contract._projections import ROW_SEQ, ProjectionTable

__all__ = [
    "MAX_OFFSET",
    "MAX_PAGE",
    "PageOrder",
    "check_within",
    "count_sql",
    "kept_within",
    "page_in_memory",
    "page_order",
    "page_sql",
]

MAX_PAGE = 10_000
MAX_OFFSET = 2**31 - 1


class PageOrder(Value):
    """How one page is chosen: ordered by ``column`` (of ``kind``), after ``after``, at most ``limit``."""

    column: str
    kind: str
    after: Any
    limit: int
    descending: bool
    offset: int = 0
    within: ProjectionTable | None = None  # keep only rows whose value of its key column is one of its keys


def page_order(
    spec: ProjectionTable,
    order_by: str,
    after: Any,
    limit: int,
    descending: bool,
    offset: int = 0,
    within: ProjectionTable | None = None,
) -> PageOrder:
    """The checked order of a page of ``spec``; :class:`InvalidInputError` names the bad argument."""
    kinds = dict(spec.columns)
    if not isinstance(order_by, str) or order_by not in kinds:
        raise InvalidInputError(
            f"{order_by!r} is not a column of {spec.name} (one of {', '.join(spec.column_names)})", field="order_by"
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"must be a whole number from 1 to {MAX_PAGE}, got {limit!r}", field="limit")
    kind = kinds[order_by]
    if after is not None:
        fits = isinstance(after, str) if kind == "text" else isinstance(after, int) and not isinstance(after, bool)
        if not fits:
            want = "text" if kind == "text" else "a whole number"
            raise InvalidInputError(f"{order_by} holds {want}; got {after!r}", field="after")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidInputError(f"must be a whole number from 0 to {MAX_OFFSET}, got {offset!r}", field="offset")
    check_within(spec, within)
    return PageOrder(order_by, kind, after, limit, bool(descending), offset, within)


def check_within(spec: ProjectionTable, within: ProjectionTable | None) -> None:
    """``within`` must be keyed by one column, which ``spec`` has too (:class:`InvalidInputError`)."""
    if within is not None and (len(within.key) != 1 or within.key[0] not in spec.column_names):
        raise InvalidInputError(
            f"{within.name} is not keyed by one column of {spec.name} ({', '.join(spec.column_names)})",
            field="within",
        )


def kept_within(rows: Iterable[dict[str, Any]], within: ProjectionTable | None, keys: set[Any]) -> list[dict[str, Any]]:
    """The rows whose value of ``within``'s key column is one of ``keys`` (every row when ``within`` is None)."""
    if within is None:
        return list(rows)
    [column] = within.key
    return [r for r in rows if r.get(column) in keys]


def page_in_memory(rows: Iterable[dict[str, Any]], order: PageOrder) -> list[dict[str, Any]]:
    """The page of ``rows`` (already filtered) that ``order`` chooses."""
    col, after = order.column, order.after
    kept = [r for r in rows if r.get(col) is not None]
    if after is not None:
        kept = [r for r in kept if (r[col] < after if order.descending else r[col] > after)]
    kept.sort(key=lambda r: r[col], reverse=order.descending)
    return kept[order.offset : order.offset + order.limit]


def _quoted(columns: Iterable[str]) -> list[str]:
    return [f'"{c}"' for c in columns]  # validated identifiers (ProjectionTable), quoted all the same


def _where(where: Iterable[str]) -> str:
    return " AND ".join(f"{c} = ?" for c in _quoted(where))


def _exists_in(spec: ProjectionTable, within: ProjectionTable) -> str:
    """The condition that a row of ``spec`` has its value of ``within``'s key column among its keys."""
    [column] = _quoted(within.key)
    return f"EXISTS (SELECT 1 FROM rt_p_{within.name} w WHERE w.{column} = rt_p_{spec.name}.{column})"


def page_sql(
    spec: ProjectionTable, where: dict[str, Any], order: PageOrder, *, text_collation: str = ""
) -> tuple[str, list[Any], tuple[str, ...]]:
    """The query of a page (``?`` placeholders), its parameters and the columns it returns.

    ``text_collation``: a ``COLLATE`` clause for a text order column, so that text is ordered by
    code point whatever the database's default collation (PostgreSQL: ``COLLATE "C"``)."""
    cols = (*spec.column_names, ROW_SEQ)
    [column] = _quoted([order.column])
    key = f"{column} {text_collation}" if order.kind == "text" and text_collation else column
    conditions = [_where(where)] if where else []
    conditions.append(f"{column} IS NOT NULL")
    params = list(where.values())
    if order.after is not None:
        conditions.append(f"{key} {'<' if order.descending else '>'} ?")
        params.append(order.after)
    if order.within is not None:
        conditions.append(_exists_in(spec, order.within))
    params.extend((order.limit, order.offset))
    sql = (
        f"SELECT {', '.join(_quoted(cols))} FROM rt_p_{spec.name} WHERE {' AND '.join(conditions)}"
        f" ORDER BY {key}{' DESC' if order.descending else ''} LIMIT ? OFFSET ?"
    )
    return sql, params, cols


def count_sql(
    spec: ProjectionTable, where: dict[str, Any], within: ProjectionTable | None = None
) -> tuple[str, list[Any]]:
    """The query counting the rows of ``spec`` that match ``where`` (and, with ``within``, whose
    key is one of its keys) (``?`` placeholders), and its parameters."""
    conditions = [_where(where)] if where else []
    if within is not None:
        conditions.append(_exists_in(spec, within))
    clause = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    return f"SELECT COUNT(*) FROM rt_p_{spec.name}{clause}", list(where.values())
