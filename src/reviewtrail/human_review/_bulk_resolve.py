"""Resolving a page of review items from a few bulk reads (docs/human-review.md, "Exporting a
campaign").

:class:`Preloaded` reads everything a page of ``hr_items`` rows rests on at once: the item and
prompt records, the runs and their receipts and outputs, the decisions, and every record that
supersedes any of them (corrections, reclassifications, later decisions), following the chains
to their ends. It then answers the reads of :mod:`._resolve` (``get``, ``superseded_by``,
``rows``) from memory, so :func:`~._resolve.resolve_item` and
:func:`~._resolve.item_decisions` run unchanged over it: the same rules, the same re-check of
every digest, a few queries per page instead of some fifteen per item. Every query-table row is
read through the ledger's checked reads (each row verified against its record); anything not
preloaded is read from the ledger itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewtrail.ledger import Envelope, Ledger

__all__ = ["Preloaded"]

# The (table, column) pairs a page preloads, answered from memory for a single-column read.
_RUNS = ("hr_runs", "run_id")
_PARTS = ("hr_run_parts", "run_id")
_DECISIONS = ("hr_decisions", "item_id")
_ITEMS = ("hr_items", "item_id")


class Preloaded:
    """The records and rows a page of items rests on, read in bulk from ``ledger`` (call it
    inside ``ledger.snapshot()`` so every read sees one state); reads it does not hold fall
    through to the ledger."""

    def __init__(self, ledger: Ledger, item_rows: list[dict[str, Any]]) -> None:
        self._ledger = ledger
        self._records: dict[str, Envelope] = {}
        self._by: dict[str, list[str]] = {}
        self._rows: dict[tuple[str, str], dict[Any, list[dict[str, Any]]]] = {}
        item_ids = [str(r["item_id"]) for r in item_rows]
        self._keep(_ITEMS, item_ids, item_rows)
        self._records.update((env.id, env) for _, env in ledger.rows_in_with_records(*_ITEMS, item_ids))
        prompts: list[str] = []
        runs: list[str] = []
        for row in item_rows:
            payload = self._payload(str(row["record_id"]))
            prompts.append(str(payload.get("promptEventId")))
            runs += [str(c.get("runId")) for c in payload.get("candidates") or () if isinstance(c, dict)]
        self._read_rows(_RUNS, runs)
        self._read_rows(_PARTS, runs)
        self._read_rows(_DECISIONS, item_ids)
        self._load_records(prompts)
        self._load_supersessions(list(self._records))

    # --- the reads of _resolve.Records ----------------------------------------------------------
    def get(self, record_id: str) -> Envelope:
        env = self._records.get(record_id)
        if env is None:
            env = self._records[record_id] = self._ledger.get(record_id)
        return env

    def superseded_by(self, record_id: str) -> list[str]:
        by = self._by.get(record_id)
        if by is None:
            by = self._by[record_id] = self._ledger.superseded_by(record_id)
        return list(by)

    def rows(self, table: str, **where: Any) -> list[dict[str, Any]]:
        if len(where) == 1:
            [(column, value)] = where.items()
            held = self._rows.get((table, column))
            if held is not None and value in held:
                return [dict(r) for r in held[value]]
        return self._ledger.rows(table, **where)

    # --- bulk loading --------------------------------------------------------------------------
    def _payload(self, record_id: str) -> dict[str, Any]:
        env = self._records.get(record_id)
        value = env.payload_value if env is not None else None
        return value if isinstance(value, dict) else {}

    def _keep(self, key: tuple[str, str], values: Iterable[Any], rows: list[dict[str, Any]]) -> None:
        """Hold ``rows`` as the answer of ``key`` for each of ``values`` (a value without a row
        is held too, as an empty answer)."""
        held = self._rows.setdefault(key, {})
        for value in values:
            held.setdefault(value, [])
        for row in rows:
            held[row[key[1]]].append(row)

    def _read_rows(self, key: tuple[str, str], values: list[str]) -> None:
        """The rows of ``key`` for ``values`` and the records they rest on (each row's
        ``record_id``), read and checked in one pass."""
        found = self._ledger.rows_in_with_records(key[0], key[1], values)
        self._keep(key, values, [row for row, _ in found])
        self._records.update((env.id, env) for _, env in found)

    def _load_records(self, record_ids: Iterable[str]) -> None:
        wanted = [i for i in dict.fromkeys(record_ids) if i not in self._records]
        if wanted:
            self._records.update(self._ledger.get_many(wanted))

    def _load_supersessions(self, record_ids: list[str]) -> None:
        """The records superseding each of ``record_ids``, and theirs in turn, to the ends of
        the chains."""
        todo = [i for i in record_ids if i not in self._by]
        while todo:
            rows = self._ledger.rows_in("supersessions", "superseded_id", todo)
            for record_id in todo:
                self._by[record_id] = []
            for row in sorted(rows, key=lambda r: r["seq"]):
                self._by[str(row["superseded_id"])].append(str(row["by_id"]))
            later = [str(r["by_id"]) for r in rows]
            self._load_records(later)
            todo = [i for i in dict.fromkeys(later) if i not in self._by]
