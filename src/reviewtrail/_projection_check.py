"""Query tables recomputed from the chain and compared with what is stored (``verify``).

Every projection row is a pure function of one record, so the whole of every table can be
recomputed by replaying the records in order (a later row with the same key replaces an earlier
one, as the append does). Any stored row that is not in the recomputation was added, any
missing one was deleted, and any that differs was edited; each is reported with its table and key.
"""

from __future__ import annotations

from typing import Any

from reviewtrail.ledger import ROW_SEQ, Envelope, Ledger, projection_rows

__all__ = ["MAX_REPORTED_PER_TABLE", "ProjectionCheck"]

MAX_REPORTED_PER_TABLE = 20


def _key_label(key: tuple[str, ...], values: tuple[Any, ...]) -> str:
    return "{" + ", ".join(f"{k}={v!r}" for k, v in zip(key, values, strict=True)) + "}"


class ProjectionCheck:
    """Feed it every record in seq order, then ask for the problems."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._tables = ledger.tables
        self._expected: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {t: {} for t in self._tables}
        self.rows_checked = 0

    def add(self, env: Envelope) -> None:
        try:
            rows = projection_rows([env], self._ledger.projections)
        except Exception:
            return
        for table, row in rows:
            spec = self._tables[table]
            self._expected[table][tuple(row[k] for k in spec.key)] = row

    def problems(self) -> list[str]:
        problems: list[str] = []
        dropped = set(self._ledger.missing_tables())
        for table, spec in sorted(self._tables.items()):
            if table in dropped:
                problems.append(
                    f"query table {table}: the table rt_p_{table} was dropped "
                    f"({len(self._expected[table])} row(s) of the chain missing)"
                )
                continue
            stored = {tuple(r.get(k) for k in spec.key): r for r in self._ledger.stored_rows(table)}
            expected = self._expected[table]
            self.rows_checked += len(stored)
            found: list[str] = []
            for key in sorted(stored.keys() - expected.keys(), key=repr):
                found.append(f"query table {table}: row {_key_label(spec.key, key)} was added (no record gives it)")
            for key in sorted(expected.keys() - stored.keys(), key=repr):
                found.append(
                    f"query table {table}: row {_key_label(spec.key, key)} is missing "
                    f"(record seq {expected[key][ROW_SEQ]} gives it)"
                )
            for key in sorted(stored.keys() & expected.keys(), key=repr):
                have, want = stored[key], expected[key]
                diffs = [f"{c}={have.get(c)!r} (chain: {want.get(c)!r})" for c in want if have.get(c) != want.get(c)]
                if diffs:
                    found.append(f"query table {table}: row {_key_label(spec.key, key)} was edited: {', '.join(diffs)}")
            if len(found) > MAX_REPORTED_PER_TABLE:
                extra = len(found) - MAX_REPORTED_PER_TABLE
                found = [*found[:MAX_REPORTED_PER_TABLE], f"query table {table}: … and {extra} more row problem(s)"]
            problems.extend(found)
        return problems
