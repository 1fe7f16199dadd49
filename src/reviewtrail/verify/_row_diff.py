"""Rules of the query-table comparison, pure: two streams of rows ordered by key, merged.

``verify`` reads a query table as stored and as recomputed from the records, both ordered by
key (:func:`reviewtrail.ledger.key_order`), and merges them: a stored row whose key the
recomputation lacks was added, a recomputed row with no stored one was deleted, and a pair that
differs was edited. Only the first :data:`MAX_REPORTED_PER_TABLE` problems of a table are kept (by
kind — added, missing, edited — then by the text of the key, as they are reported), so memory
holds a row or two and those problems, however large the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from reviewtrail.ledger import ProjectionTable, key_order

__all__ = ["MAX_REPORTED_PER_TABLE", "TableDiff", "diff_table"]

MAX_REPORTED_PER_TABLE = 20

Row = tuple[Any, ...]


def _key_label(key: Sequence[str], values: Sequence[Any]) -> str:
    return "{" + ", ".join(f"{k}={v!r}" for k, v in zip(key, values, strict=True)) + "}"


class _First:
    """The ``limit`` messages that sort first (by their key's text), and how many there were."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self._kept: list[tuple[str, str]] = []

    def add(self, key: Row, message: str) -> None:
        self.count += 1
        self._kept.append((repr(key), message))
        if len(self._kept) >= 4 * self.limit:
            self._prune()

    def _prune(self) -> None:
        self._kept.sort(key=lambda item: item[0])
        del self._kept[self.limit :]

    def messages(self) -> list[str]:
        self._prune()
        return [message for _, message in self._kept]


@dataclass
class TableDiff:
    """What the merge of one table found: the problems to report and the stored rows it read."""

    problems: list[str] = field(default_factory=list)
    rows_read: int = 0


def diff_table(
    spec: ProjectionTable,
    stored: Iterator[Row],
    expected: Iterator[Row],
    *,
    after_seq: int = 0,
    lookup: Callable[[Row], Row | None] | None = None,
) -> TableDiff:
    """Merge ``stored`` with ``expected`` (rows: the table's columns then ``rt_seq``, both ordered
    by key). With ``after_seq``, ``expected`` holds only the rows of records after that seq and
    ``stored`` only the rows naming such a record; a recomputed row with no stored partner is
    then looked up by key (``lookup``), since its stored row may name an earlier record (which,
    in a table whose first row given stays, is then the row it must hold)."""
    name, limit = spec.name, MAX_REPORTED_PER_TABLE
    cols = (*spec.column_names, "rt_seq")
    at = [spec.column_names.index(k) for k in spec.key]
    pick = itemgetter(*at)
    key_of: Callable[[Row], Row] = (lambda r: (r[at[0]],)) if len(at) == 1 else pick
    added, missing, edited = _First(limit), _First(limit), _First(limit)
    out = TableDiff()
    beyond = f" after seq {after_seq}" if after_seq else ""
    first_stays = spec.on_conflict == "first"

    def compare(have: Row, want: Row, key: Row) -> None:
        diffs = [f"{c}={h!r} (chain: {w!r})" for c, h, w in zip(cols, have, want, strict=True) if h != w]
        if diffs:
            edited.add(key, f"query table {name}: row {_key_label(spec.key, key)} was edited: {', '.join(diffs)}")

    def lost(want: Row, key: Row) -> None:
        have = lookup(key) if lookup is not None else None
        if have is None:
            label = _key_label(spec.key, key)
            missing.add(key, f"query table {name}: row {label} is missing (record seq {want[-1]} gives it)")
        else:
            out.rows_read += 1
            if first_stays and have[-1] <= after_seq:
                return  # claimed by a record before the checkpoint: that first row stays
            compare(have, want, key)

    def extra(key: Row) -> None:
        out.rows_read += 1
        added.add(key, f"query table {name}: row {_key_label(spec.key, key)} was added (no record{beyond} gives it)")

    s, e = next(stored, None), next(expected, None)
    while s is not None or e is not None:
        if s is not None and s == e:  # the usual pair: one stored row as the chain gives it
            out.rows_read += 1
            s, e = next(stored, None), next(expected, None)
        elif s is not None and e is not None:
            skey, ekey = key_of(s), key_of(e)
            if skey == ekey:
                out.rows_read += 1
                compare(s, e, skey)
                s, e = next(stored, None), next(expected, None)
            elif key_order(skey) < key_order(ekey):
                extra(skey)
                s = next(stored, None)
            else:
                lost(e, ekey)
                e = next(expected, None)
        elif s is not None:
            extra(key_of(s))
            s = next(stored, None)
        elif e is not None:
            lost(e, key_of(e))
            e = next(expected, None)
    found = [*added.messages(), *missing.messages(), *edited.messages()]
    total = added.count + missing.count + edited.count
    if total > limit:
        found = [*found[:limit], f"query table {name}: … and {total - limit} more row problem(s)"]
    out.problems = found
    return out
