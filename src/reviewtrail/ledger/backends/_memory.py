"""In-memory ledger for tests: same contract, nothing durable."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import ConflictError
from reviewtrail.ledger.contract._key_state import KeyRow, key_row
from reviewtrail.ledger.contract._pages import PageOrder, kept_within, page_in_memory
from reviewtrail.ledger.contract._projections import Projection, ProjectionTable
from reviewtrail.ledger.contract._protocol import Ledger, catalog_of
from reviewtrail.ledger.contract._recorder import (
    Recorder,
    SealedRun,
    Stamp,
    check_range,
    parse_type_filter,
    refuse_unless_extends,
    seal_batch,
)
from reviewtrail.ledger.keys._writer_keys import KEY_RECORD_TYPES
from reviewtrail.ledger.records._envelope import Envelope

if TYPE_CHECKING:
    from reviewtrail.ledger.keys._record_signature import RecordSignature
    from reviewtrail.ledger.records._new_record import NewRecord

__all__ = ["MemoryLedger", "MemoryRecorder"]


class MemoryRecorder(Recorder):
    def __init__(self, projections: Iterable[Projection]) -> None:
        super().__init__(projections)
        self._records: list[Envelope] = []
        self._by_id: dict[str, Envelope] = {}
        self._signed: dict[int, RecordSignature] = {}
        self._tables_data: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {t: {} for t in self.tables}
        self._lock = threading.Lock()

    def append(self, records: list[NewRecord], payloads: list[bytes], now: datetime, stamp: Stamp) -> list[Envelope]:
        with self._lock:
            last = self._records[-1] if self._records else None
            envs = seal_batch(
                records,
                payloads,
                head=(last.seq, last.hash) if last else None,
                now=now,
                known_ids=lambda ids: {i for i in ids if i in self._by_id},
            )
            signatures = stamp(last.seq if last else 0, self._key_rows, envs)
            rows = self.projection_rows(envs)  # computed before any state changes
            staged: set[tuple[str, tuple[Any, ...]]] = set()
            for table, row in rows:
                spec = self.tables[table]
                key = tuple(row[k] for k in spec.key)
                if spec.claims_once and (key in self._tables_data[table] or (table, key) in staged):
                    raise ConflictError(f"{table}: a row with this key is already recorded", field=table)
                staged.add((table, key))
            self._records.extend(envs)
            self._by_id.update((e.id, e) for e in envs)
            if signatures is not None:
                self._signed.update((e.seq, sig) for e, sig in zip(envs, signatures, strict=True))
            for table, row in rows:
                key = tuple(row[k] for k in self.tables[table].key)
                self._tables_data[table][key] = dict(row)
            return envs

    def _key_rows(self, after: int) -> Iterator[KeyRow]:
        for env in self._records[after:]:
            if env.type in KEY_RECORD_TYPES:
                yield key_row(env.seq, env.type, env.hash, env.payload, self._signed.get(env.seq))

    def append_sealed(self, runs: Iterable[SealedRun]) -> int:
        with self._lock:
            last = self._records[-1] if self._records else None
            staged = {table: dict(rows) for table, rows in self._tables_data.items()}
            records: list[Envelope] = []
            ids: set[str] = set()
            signed: dict[int, RecordSignature] = {}
            for envelopes, signatures in runs:
                if not records:
                    refuse_unless_extends(self.describe(), (last.seq, last.hash) if last else None, envelopes[0])
                for env in envelopes:
                    if env.id in self._by_id or env.id in ids:
                        raise ConflictError(f"a record with id {env.id!r} already exists", field="id")
                    ids.add(env.id)
                for table, row in self.projection_rows(envelopes):  # as a rebuild from the chain writes them
                    spec = self.tables[table]
                    key = tuple(row[k] for k in spec.key)
                    if key in staged[table] and spec.on_conflict != "update":
                        if spec.on_conflict == "error":
                            raise ConflictError(f"{table}: a row with this key is already recorded", field=table)
                        continue
                    staged[table][key] = dict(row)
                records.extend(envelopes)
                signed.update(signatures)
            self._records.extend(records)
            self._by_id.update((e.id, e) for e in records)
            self._signed.update(signed)
            self._tables_data = staged
            return len(records)

    def read(
        self,
        *,
        start: int = 1,
        end: int | None = None,
        type: str | None = None,
        subject: str | None = None,
        limit: int | None = None,
    ) -> Iterator[Envelope]:
        check_range(start, end, limit)
        tf = parse_type_filter(type) if type is not None else None
        count = 0
        for env in list(self._records[start - 1 : end]):
            if limit is not None and count >= limit:
                return
            if (tf is None or tf.matches(env.type)) and (subject is None or env.subject == subject):
                count += 1
                yield env

    def head(self) -> Envelope | None:
        return self._records[-1] if self._records else None

    def tail(self, n: int = 20, *, type: str | None = None, subject: str | None = None) -> list[Envelope]:
        matched = list(self.read(type=type, subject=subject))
        return matched[-n:] if n > 0 else []

    def stats(self) -> tuple[int, int | None, int | None]:
        seqs = [e.seq for e in self._records]
        return len(seqs), (min(seqs) if seqs else None), (max(seqs) if seqs else None)

    def projected_seq_max(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, rows in self._tables_data.items():
            values = [r["seq"] for r in rows.values() if "seq" in r]
            if values:
                out[name] = max(values)
        return out

    def records_at(self, seqs: Iterable[int]) -> dict[int, Envelope]:
        return {s: self._records[s - 1] for s in set(seqs) if 1 <= s <= len(self._records)}

    def rebuild_projections(self) -> None:
        with self._lock:
            rebuilt: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {t: {} for t in self.tables}
            for table, row in self.projection_rows(self._records):
                held = rebuilt[table]
                key = tuple(row[k] for k in self.tables[table].key)
                if self.tables[table].on_conflict != "first" or key not in held:
                    held[key] = dict(row)
            self._tables_data = rebuilt

    def select_rows(self, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        return [dict(r) for r in self._tables_data[table].values() if all(r.get(k) == v for k, v in where.items())]

    def select_rows_in(self, table: str, column: str, values: list[Any], where: dict[str, Any]) -> list[dict[str, Any]]:
        wanted = set(values)
        rows = self._tables_data[table].values()
        return [dict(r) for r in rows if r.get(column) in wanted and all(r.get(k) == v for k, v in where.items())]

    def get_many(self, record_ids: Iterable[str]) -> dict[str, Envelope]:
        return {i: self._by_id[i] for i in record_ids if i in self._by_id}

    def select_page(self, table: str, where: dict[str, Any], order: PageOrder) -> list[dict[str, Any]]:
        return page_in_memory(self._kept_within(self.select_rows(table, where), order.within), order)

    def count_rows(self, table: str, where: dict[str, Any], within: ProjectionTable | None = None) -> int:
        return len(self._kept_within(self.select_rows(table, where), within))

    def _kept_within(self, rows: list[dict[str, Any]], within: ProjectionTable | None) -> list[dict[str, Any]]:
        keys = {key[0] for key in self._tables_data[within.name]} if within is not None else set()
        return kept_within(rows, within, keys)

    def signatures_at(self, seqs: Iterable[int]) -> dict[int, RecordSignature]:
        return {s: self._signed[s] for s in set(seqs) if s in self._signed}

    def stray_signatures(self, *, limit: int = 20) -> list[int]:
        return sorted(s for s in self._signed if not 1 <= s <= len(self._records))[:limit]

    # Test hooks: what only an attacker with write access to memory could do.
    def tamper_signature(self, seq: int, signature: RecordSignature | None) -> None:
        if signature is None:
            self._signed.pop(seq, None)
        else:
            self._signed[seq] = signature

    def tamper(self, seq: int, **changes: Any) -> None:
        env = self._records[seq - 1]
        changed = self._records[seq - 1] = env.replace(**changes)
        del self._by_id[env.id]
        self._by_id[changed.id] = changed


class MemoryLedger(Ledger):
    """A ledger in memory (for tests), with the hooks an attacker with write access to memory has."""

    recorder: MemoryRecorder

    def __init__(self, projections: Iterable[Projection] | None = None) -> None:
        catalog = catalog_of(projections)
        super().__init__(MemoryRecorder(catalog.projections), catalog)

    def tamper_signature(self, seq: int, signature: RecordSignature | None) -> None:
        self.recorder.tamper_signature(seq, signature)

    def tamper(self, seq: int, **changes: Any) -> None:
        self.recorder.tamper(seq, **changes)
