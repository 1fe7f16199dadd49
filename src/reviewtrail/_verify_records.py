"""``verify``'s walk over the records: links, hashes, canonical payloads, CAS references, and the
query-table rows each record gives, in one pass that holds one page of records at a time.

Each record is checked as it is read (:func:`reviewtrail.ledger.chain_problems`: its payload is
parsed once, when canonical, and that value serves its CAS references and its query-table rows);
ids used twice are asked of the ledger (one grouped query on SQL backends) instead of kept in a
set. From a checkpoint (``after``), the walk starts at the record after it and must link to the
checkpoint's hash.

CAS objects are looked up in :class:`ObjectIndex`: the whole CAS re-hashed beforehand (a full
verify: one entry per object, not per record), or each referenced object re-hashed when first
referenced (from a checkpoint).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from reviewtrail._projection_check import ProjectionCheck
from reviewtrail.cas import BARE_SEARCH, CasRef, CasStore, Location, refs_in
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import Envelope, Ledger, chain_problems, verify_reads

__all__ = ["ObjectIndex", "WalkResult", "walk_records"]

# (phase, advance, total)
Tick = Callable[[str, int, int], None]
_ABSENT = -1


class ObjectIndex:
    """What verify knows of each CAS object: intact (with its size), damaged, or absent."""

    def __init__(self, cas: CasStore | None = None) -> None:
        self.intact: dict[tuple[Location, str], int] = {}
        self.bad: set[tuple[Location, str]] = set()
        self._cas = cas  # set: objects are checked when first referenced
        self._absent: set[tuple[Location, str]] = set()
        self.checked = 0
        self.problems: list[str] = []

    def _check(self, key: tuple[Location, str]) -> None:
        assert self._cas is not None
        location, name = key
        check = self._cas.check_object(location, name)
        if check.problem is None:
            self.checked += 1
            self.intact[key] = check.size
        elif check.problem == f"{location}/sha256:{name}: vanished while verifying":
            self._absent.add(key)
        else:
            self.checked += 1
            self.bad.add(key)
            self.problems.append(check.problem)

    def find(self, where: tuple[Location, ...], name: str) -> tuple[Location, str] | None:
        """The first of ``where`` holding an object ``name`` (intact or not), or ``None``."""
        for location in where:
            key = (location, name)
            if self._cas is not None and key not in self.intact and key not in self.bad and key not in self._absent:
                self._check(key)
            if key in self.intact or key in self.bad:
                return key
        return None


def ref_problems(env: Envelope, objects: ObjectIndex) -> tuple[list[str], int]:
    """Problems with the CAS references of one record (already checked by ``chain_problems``), and
    how many references it holds."""
    try:
        # A canonical payload was parsed by the record check; any other is searched as parsed.
        refs = env.cas_refs if "payload_value" in env.__dict__ else refs_in(env.payload_value)
    except (InvalidInputError, ValueError) as exc:
        return [f"ledger seq {env.seq} ({env.id}): unreadable CAS reference: {exc}"], 0
    problems: list[str] = []
    for ref in refs:
        where: tuple[Location, ...] = (ref.pool,) if isinstance(ref, CasRef) else BARE_SEARCH
        label = f"ledger seq {env.seq} ({env.id}) -> {ref.digest}"
        found = objects.find(where, ref.hash)
        if found is None:
            problems.append(f"{label}: object missing from {', '.join(where)}")
        elif found in objects.bad:
            problems.append(f"{label}: object {found[0]}/{ref.digest} is corrupt")
        elif objects.intact[found] != ref.size:
            problems.append(f"{label}: size {ref.size} recorded, object has {objects.intact[found]} bytes")
    return problems, len(refs)


@dataclass
class WalkResult:
    chain: list[str] = field(default_factory=list)  # links, gaps, ids, the records themselves
    refs: list[str] = field(default_factory=list)
    records: int = 0
    refs_checked: int = 0


def walk_records(
    ledger: Ledger,
    *,
    end: int,
    objects: ObjectIndex,
    projections: ProjectionCheck,
    after: tuple[int, str] | None = None,
    tick: Tick | None = None,
) -> WalkResult:
    """Check the records after ``after`` (seq, hash; else from seq 1) up to ``end``."""
    start = after[0] + 1 if after is not None else 1
    result = WalkResult()
    if end < start:
        return result
    total = end - start + 1
    repeated = verify_reads(ledger).repeated_ids(start=start, end=end)

    def records() -> Iterator[Envelope]:
        for env in ledger.read(start=start, end=end):
            result.records += 1
            if tick is not None:
                tick("records", 1, total)
            yield env
            # chain_problems has checked this record (and kept its parsed payload) by now.
            found, count = ref_problems(env, objects)
            result.refs.extend(found)
            result.refs_checked += count
            projections.add(env)

    result.chain = list(chain_problems(records(), after=after, repeated_ids=repeated))
    return result
