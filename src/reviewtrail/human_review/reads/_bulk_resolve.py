"""Resolving a page of review items from the records themselves, read in a few bulk reads
(docs/human-review.md, "Exporting a campaign" and "Reads that gate").

:class:`Preloaded` reads everything a page of items rests on at once, from the ledger's records
rather than its query tables: every record *about* each item (the item, its decisions and their
corrections share the item id as subject), every record about each of their runs (the run, its
receipt and output and their corrections and reclassifications share the run id), the prompts,
and every record that supersedes any of them, following the chains to their ends. Each record is
checked as it is read (its stored bytes hashed, the next record's link to it). The query-table
rows the rules of :mod:`._resolve` ask for (``hr_items`` and ``hr_decisions`` by item,
``hr_runs`` and ``hr_run_parts`` by run) are then computed from those records with the package's
projection, so a row deleted, restored or pointed at an older record can neither hide a decision,
a correction or a reclassification nor bring back one that was replaced: what the rules see is
what the chain gives. :func:`~._resolve.resolve_item` and :func:`~._resolve.item_decisions` run
unchanged over it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.records._projection import Rows, table_rows
from reviewtrail.ledger import ROW_SEQ, Envelope, Ledger

__all__ = ["Preloaded"]

T = TypeVar("T")
# The answers held for one column of a table: column value → the rows that give it.
_Held = dict[Any, list[dict[str, Any]]]

# The (table, column) reads answered from the records held: by item, and by run.
_ITEMS = ("hr_items", "item_id")
_DECISIONS = ("hr_decisions", "item_id")
_RUNS = ("hr_runs", "run_id")
_PARTS = ("hr_run_parts", "run_id")
_TRIGGERS = ("hr_runs", "trigger_event_id")


class Preloaded:
    """The records a page of items rests on, read from ``ledger`` (call it inside
    ``ledger.snapshot()`` so every read sees one state). ``item_rows``: the ``hr_items`` rows the
    caller read for ``item_ids`` (a page of the table); each must be the row the chain gives, and
    an item the chain records must have its row, or the read is refused (exit 4) as a damaged
    query table. Reads it does not hold fall through to the ledger."""

    def __init__(
        self,
        ledger: Ledger,
        item_ids: Iterable[str],
        item_rows: list[dict[str, Any]] | None = None,
        *,
        run_ids: Iterable[str] = (),
        record_ids: Iterable[str] = (),
    ) -> None:
        """``run_ids`` and ``record_ids`` (e.g. prompts): more runs and records to hold besides
        those of the items; the runs are also answered by trigger (``hr_runs`` by
        ``trigger_event_id``), for the prompts among ``record_ids``."""
        self._ledger = ledger
        self._records: dict[str, Envelope] = {}
        self._by: dict[str, list[str]] = {}
        self._rows: dict[tuple[str, str], _Held] = {}
        self._given: set[str] = set()  # the records whose rows the reads held have been given
        self._memo: dict[tuple[Callable[..., Any], str], Any] = {}
        ids = list(dict.fromkeys(item_ids))
        # Each record's own hashes are checked as it is read; the links of all of them at the end.
        about_items = self._hold(ledger.records_about(ids, links=False))
        self._derive((_ITEMS, _DECISIONS), ids, about_items)
        if item_rows is not None:
            self._check_item_rows(ids, item_rows)
        extra = list(dict.fromkeys(record_ids))
        prompts: list[str] = list(extra)
        runs: list[str] = list(run_ids)
        for item_id in ids:
            for row in self._rows[_ITEMS][item_id]:
                payload = self._payload(row["record_id"])
                prompts.append(str(payload.get("promptEventId")))
                for candidate in payload.get("candidates") or ():
                    if isinstance(candidate, dict):
                        runs.append(str(candidate.get("runId")))
        runs = list(dict.fromkeys(runs))
        run_records = self._hold(ledger.records_about(runs, links=False))
        self._derive((_RUNS, _PARTS), runs, run_records)
        if extra:  # the runs' rows, given again, answer by trigger too
            self._derive((_TRIGGERS,), extra, run_records)
        wanted = [p for p in dict.fromkeys(prompts) if p not in self._records]
        self._hold(list(ledger.checked_get_many(wanted, links=False).values()))
        self._load_supersessions(list(self._records), links=False)
        #: The head's seq when the records were read (their links checked against it).
        self.head = ledger.check_links(self._records.values())

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._records

    @property
    def ledger(self) -> Ledger:
        """The ledger the records were read from (reads not held fall through to it)."""
        return self._ledger

    # --- the reads of _resolve.Records ----------------------------------------------------------
    def get(self, record_id: str) -> Envelope:
        env = self._records.get(record_id)
        if env is None:
            found = self._ledger.checked_get_many([record_id])
            env = self._records[record_id] = found[record_id] if record_id in found else self._ledger.get(record_id)
        return env

    def superseded_by(self, record_id: str) -> list[str]:
        by = self._by.get(record_id)
        if by is None:
            self._load_supersessions([record_id])
            by = self._by[record_id]
        return list(by)

    def rows(self, table: str, **where: Any) -> list[dict[str, Any]]:
        """The rows the records held give (shared with later answers: read them, never change
        them), or the ledger's when they are not held."""
        if len(where) == 1:
            [(column, value)] = where.items()
            held = self._rows.get((table, column))
            answer = held.get(value) if held is not None else None
            if answer is not None:
                return list(answer)
        return self._ledger.rows(table, **where)

    def memo(self, make: Callable[[Preloaded, str], T], key: str) -> T:
        """What ``make(self, key)`` gives (e.g. a run's candidate), made once for ``make`` and
        ``key`` while the records held stay the same: items of a page share prompts and runs,
        which are then resolved once for all of them. :meth:`include` forgets every answer."""
        memo = self._memo
        found = memo.get((make, key), memo)
        if found is memo:
            found = memo[make, key] = make(self, key)
        return found  # type: ignore[no-any-return]

    def include(self, records: list[Envelope]) -> None:
        """Hold ``records`` (read afresh, e.g. an item's decisions after an append) too: each new
        one adds its rows to the reads held and its supersessions. A record already held without
        its rows (read as a supersession, after the rows were read) adds its rows now."""
        fresh = [env for env in records if env.id not in self._given]
        if not fresh:
            return
        self._memo.clear()
        unheld = [env for env in fresh if env.id not in self._records]
        self._hold(fresh)
        by_table: dict[str, list[tuple[str, _Held]]] = {}
        for (table, column), held in self._rows.items():
            by_table.setdefault(table, []).append((column, held))
        self._give(fresh, by_table)
        self._given.update(env.id for env in fresh)
        for env in unheld:
            if env.supersedes is not None and env.supersedes in self._by:
                self._by[env.supersedes].append(env.id)

    # --- bulk loading --------------------------------------------------------------------------
    def _hold(self, records: list[Envelope]) -> list[Envelope]:
        self._records.update({env.id: env for env in records})
        return records

    def _payload(self, record_id: str) -> dict[str, Any]:
        env = self._records.get(record_id)
        value = env.payload_value if env is not None else None
        return value if isinstance(value, dict) else {}

    def _derive(self, keys: tuple[tuple[str, str], ...], values: list[str], records: list[Envelope]) -> None:
        """Hold, for each of ``keys`` and each of ``values``, the rows the records give (in seq
        order; a value no record gives a row for is held as an empty answer)."""
        by_table: dict[str, list[tuple[str, _Held]]] = {}
        for table, column in keys:
            held = self._rows.setdefault((table, column), {})
            for value in values:
                held.setdefault(value, [])
            by_table.setdefault(table, []).append((column, held))
        self._give(records, by_table)
        self._given.update([env.id for env in records])

    @staticmethod
    def _give(records: Iterable[Envelope], by_table: dict[str, list[tuple[str, _Held]]]) -> None:
        """Add each row the records give to the tables held to the answers held for its column
        value: each table's rows derived by the projection's own function for it, and no other
        table's."""
        plan: dict[str, list[tuple[Rows, list[tuple[str, _Held]]]]] = {}
        for table, held in by_table.items():
            for type_, rows in table_rows(table).items():
                plan.setdefault(type_, []).append((rows, held))
        for env in records:
            for rows, held in plan.get(env.type, ()):
                for row in rows(env):
                    for column, answers in held:
                        answer = answers.get(row.get(column))
                        if answer is not None:
                            answer.append(row)

    def _check_item_rows(self, item_ids: list[str], item_rows: list[dict[str, Any]]) -> None:
        """The table's rows for ``item_ids`` must be exactly the rows the chain gives."""
        stored = {str(r.get("item_id")): _without_seq(r) for r in item_rows}
        for item_id in stored.keys() - set(item_ids):
            raise IntegrityError(
                f"query table hr_items gave a row for item {item_id}, which was not asked for", field="hr_items"
            )
        for item_id in item_ids:
            if item_id in stored and not self._rows[_ITEMS][item_id]:
                raise IntegrityError(
                    f"query table hr_items lists item {item_id}, which no record gives; run 'reviewtrail verify'",
                    field="hr_items",
                )
            given = self._rows[_ITEMS][item_id]  # only item records give hr_items rows
            if given and stored.get(item_id) != given[0]:
                what = "has no row" if item_id not in stored else "holds another row"
                raise IntegrityError(
                    f"query table hr_items {what} for item {item_id}, which record {given[0]['record_id']} "
                    "records; run 'reviewtrail verify'",
                    field="hr_items",
                )

    def _load_supersessions(self, record_ids: list[str], *, links: bool = True) -> None:
        """The records superseding each of ``record_ids``, and theirs in turn, to the ends of
        the chains, read from the records themselves."""
        todo = [i for i in dict.fromkeys(record_ids) if i not in self._by]
        while todo:
            later = self._hold(self._ledger.records_superseding(todo, links=links))
            for record_id in todo:
                self._by[record_id] = []
            for env in later:
                if env.supersedes is not None:
                    self._by.setdefault(env.supersedes, []).append(env.id)
            todo = [env.id for env in later if env.id not in self._by]


def _without_seq(row: dict[str, Any]) -> dict[str, Any]:
    """A stored row without the seq of its record (:data:`ROW_SEQ`), as the projection gives it."""
    row = dict(row)
    row.pop(ROW_SEQ, None)
    return row
