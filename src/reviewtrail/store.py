"""A reviewtrail store: one CAS and one ledger, opened from settings, verified as a whole."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from reviewtrail.cas import BARE_SEARCH, CasRef, CasStore, FilesystemCas, Location, refs_in
from reviewtrail.config import STORE_MARKER as _MARKER
from reviewtrail.config import Settings, load_settings
from reviewtrail.errors import InvalidInputError, StoreNotInitializedError
from reviewtrail.ledger import Envelope, Ledger, NewRecord, chain_problems, open_ledger

__all__ = ["STORE_FORMAT", "Progress", "Store", "VerifyReport"]

STORE_FORMAT = 1

# (phase, advance, total) — total is known up front for every phase.
Progress = Callable[[str, int, int], None]


@dataclass
class VerifyReport:
    objects_checked: int = 0
    records_checked: int = 0
    refs_checked: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "objectsChecked": self.objects_checked,
            "recordsChecked": self.records_checked,
            "refsChecked": self.refs_checked,
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def _load_record_types() -> None:
    """Register every package's record types and projections before a ledger is opened, so
    every writer validates the same payloads and keeps the same query tables."""
    import reviewtrail.evidence
    import reviewtrail.models
    import reviewtrail.provenance
    import reviewtrail.reviewer  # noqa: F401


class Store:
    """The CAS and the ledger together."""

    def __init__(self, cas: CasStore, ledger: Ledger, root: Path | None = None) -> None:
        self.cas = cas
        self.ledger = ledger
        self.root = root

    # --- opening --------------------------------------------------------------------------
    @classmethod
    def init(cls, settings: Settings | None = None) -> Store:
        """Create (or re-open) the store at the configured location. Idempotent."""
        _load_record_types()
        settings = settings or load_settings()
        root = settings.store
        if root.exists() and not root.is_dir():
            raise InvalidInputError(f"{root} exists and is not a folder", field="store")
        root.mkdir(parents=True, exist_ok=True)
        marker = root / _MARKER
        if not marker.exists():
            tmp = root / f".{_MARKER}.{os.getpid()}"
            tmp.write_text(json.dumps({"format": STORE_FORMAT}) + "\n", encoding="utf-8")
            os.replace(tmp, marker)
        cas = FilesystemCas(root, create=True)
        return cls(cas, open_ledger(settings.database_url), root)

    @classmethod
    def open(cls, settings: Settings | None = None) -> Store:
        """Open an existing store; :class:`StoreNotInitializedError` when there is none."""
        _load_record_types()
        settings = settings or load_settings()
        if not settings.store_exists:
            raise StoreNotInitializedError(
                f"no reviewtrail store at {settings.store}; run 'reviewtrail init' first", field="store"
            )
        return cls(FilesystemCas(settings.store), open_ledger(settings.database_url), settings.store)

    def close(self) -> None:
        self.ledger.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing --------------------------------------------------------------------------
    def append(self, records: Iterable[NewRecord]) -> list[Envelope]:
        """Append records after checking that every CAS reference they hold is present and intact."""
        batch = list(records)
        for i, record in enumerate(batch):
            for ref in refs_in(record.payload):
                if not self.cas.has(ref):
                    raise InvalidInputError(
                        f"references {ref.digest} ({ref.size} bytes), which is not in the CAS or is corrupt",
                        field=f"records[{i}].payload",
                    )
        return self.ledger.append(batch)

    # --- verification ---------------------------------------------------------------------
    def verify(self, progress: Progress | None = None) -> VerifyReport:
        """Re-hash every CAS object, check every ledger link and every CAS reference."""
        report = VerifyReport()
        tick = progress or (lambda phase, advance, total: None)
        names = list(self.cas.iter_objects())
        intact: dict[tuple[Location, str], int] = {}
        bad: set[tuple[Location, str]] = set()
        for location, name in names:
            check = self.cas.check_object(location, name)
            report.objects_checked += 1
            if check.problem is None:
                intact[(location, name)] = check.size
            else:
                bad.add((location, name))
                report.problems.append(check.problem)
            tick("objects", 1, len(names))

        head = self.ledger.head()
        total = head.seq if head is not None else 0

        ref_problems: list[str] = []

        def counted() -> Iterable[Envelope]:
            for env in self.ledger.read():
                report.records_checked += 1
                tick("records", 1, total)
                ref_problems.extend(self._ref_problems(env, intact, bad, report))
                yield env

        report.problems.extend(list(chain_problems(counted())))
        report.problems.extend(ref_problems)
        if isinstance(self.cas, FilesystemCas):
            stale = self.cas.stale_ingest()
            if stale:
                size = sum(p.stat().st_size for p in stale if p.exists())
                report.notes.append(
                    f"{len(stale)} temporary file(s) ({size} bytes) left in ingest/ by interrupted writes; "
                    "'reviewtrail cas clean-ingest' removes them"
                )
        if head is not None and report.records_checked != head.seq:
            report.problems.append(f"ledger: head is seq {head.seq} but {report.records_checked} records were read")
        count, low, high = self.ledger.stats()
        if count != report.records_checked or (count and (low != 1 or high != count)):
            report.problems.append(
                f"ledger: {count} rows stored (seq {low}..{high}) but {report.records_checked} form the chain "
                "(rows outside 1..head were added or removed)"
            )
        top = high or 0
        for table, seq in sorted(self.ledger.projected_seq_max().items()):
            if seq > top:
                report.problems.append(
                    f"ledger: query table {table} refers to seq {seq}, beyond the last record {top} "
                    "(records were removed from the end)"
                )
        return report

    def _ref_problems(
        self,
        env: Envelope,
        intact: dict[tuple[Location, str], int],
        bad: set[tuple[Location, str]],
        report: VerifyReport,
    ) -> list[str]:
        problems: list[str] = []
        try:
            refs = refs_in(env.payload_value)
        except (InvalidInputError, ValueError) as exc:
            return [f"ledger seq {env.seq} ({env.id}): unreadable CAS reference: {exc}"]
        for ref in refs:
            report.refs_checked += 1
            where: tuple[Location, ...] = (ref.pool,) if isinstance(ref, CasRef) else BARE_SEARCH
            label = f"ledger seq {env.seq} ({env.id}) -> {ref.digest}"
            found = next(
                ((loc, ref.hash) for loc in where if (loc, ref.hash) in intact or (loc, ref.hash) in bad), None
            )
            if found is None:
                problems.append(f"{label}: object missing from {', '.join(where)}")
            elif found in bad:
                problems.append(f"{label}: object {found[0]}/{ref.digest} is corrupt")
            elif intact[found] != ref.size:
                problems.append(f"{label}: size {ref.size} recorded, object has {intact[found]} bytes")
        return problems
