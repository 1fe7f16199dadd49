"""Paged, ordered reads of query tables, as pure rules: checking a page's arguments, choosing a
page from rows in memory, and the SQL of a page and of a count.

A page is keyset-paged: ordered by one column, starting strictly after a value of it, so a
page costs the same wherever it starts (an index on the column, or on the filter columns then
the column, serves it without a sort).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger.contract._projections import ROW_SEQ, ProjectionTable

__all__ = ["MAX_PAGE", "PageOrder", "count_sql", "page_in_memory", "page_order", "page_sql"]

MAX_PAGE = 10_000


@dataclass(frozen=True)
class PageOrder:
    """How one page is chosen: ordered by ``column`` (of ``kind``), after ``after``, at most ``limit``."""

    column: str
    kind: str
    after: Any
    limit: int
    descending: bool


def page_order(
    spec: ProjectionTable,
    order_by: str,
    after: Any,
    limit: int,
    descending: bool,
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
    return PageOrder(order_by, kind, after, limit, bool(descending))


def page_in_memory(rows: Iterable[dict[str, Any]], order: PageOrder) -> list[dict[str, Any]]:
    """The page of ``rows`` (already filtered) that ``order`` chooses."""
    col, after = order.column, order.after
    kept = [r for r in rows if r.get(col) is not None]
    if after is not None:
        kept = [r for r in kept if (r[col] < after if order.descending else r[col] > after)]
    kept.sort(key=lambda r: r[col], reverse=order.descending)
    return kept[: order.limit]


def _quoted(columns: Iterable[str]) -> list[str]:
    return [f'"{c}"' for c in columns]  # validated identifiers (ProjectionTable), quoted all the same


def _where(where: Iterable[str]) -> str:
    return " AND ".join(f"{c} = ?" for c in _quoted(where))


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
    params.append(order.limit)
    sql = (
        f"SELECT {', '.join(_quoted(cols))} FROM rt_p_{spec.name} WHERE {' AND '.join(conditions)}"
        f" ORDER BY {key}{' DESC' if order.descending else ''} LIMIT ?"
    )
    return sql, params, cols


def count_sql(spec: ProjectionTable, where: dict[str, Any]) -> tuple[str, list[Any]]:
    """The query counting the rows of ``spec`` that match ``where`` (``?`` placeholders), and its parameters."""
    return f"SELECT COUNT(*) FROM rt_p_{spec.name}" + (f" WHERE {_where(where)}" if where else ""), list(where.values())
