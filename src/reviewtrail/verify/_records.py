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

import multiprocessing
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from reviewtrail.cas import BARE_SEARCH, CasObjectRef, CasRef, CasStore, Location
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import Envelope, Ledger, VerifyReads, chain_problems, verify_reads
from reviewtrail.verify._projections import ProjectionCheck

__all__ = ["SPLIT_AT_LEAST", "ObjectIndex", "WalkResult", "spare_core", "walk_records"]

# (phase, advance, total)
Tick = Callable[[str, int, int], None]
_SOUND_MAX = 4096


class ObjectIndex:
    """What verify knows of each CAS object: intact (with its size), damaged, or absent."""

    def __init__(self, cas: CasStore | None = None) -> None:
        self.intact: dict[tuple[Location, str], int] = {}
        self.bad: set[tuple[Location, str]] = set()
        self._cas = cas  # set: objects are checked when first referenced
        self._absent: set[tuple[Location, str]] = set()
        self.checked = 0
        self.problems: list[str] = []
        # References found intact with their size, by identity (references of the same values are
        # mostly one object: see cas._refs), each kept so that its id is not reused; bounded.
        self.sound: dict[int, CasObjectRef | CasRef] = {}

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
        # Found once, and kept for the record's query-table rows; a canonical payload was parsed
        # by the record check.
        refs = env.cas_refs
    except (InvalidInputError, ValueError) as exc:
        return [f"ledger seq {env.seq} ({env.id}): unreadable CAS reference: {exc}"], 0
    problems: list[str] = _NONE
    sound = objects.sound
    for ref in refs:
        if id(ref) in sound:  # this very reference was found intact, with its size, before
            continue
        where: tuple[Location, ...] = (ref.pool,) if isinstance(ref, CasRef) else BARE_SEARCH
        found = objects.find(where, ref.hash)
        if found is None:
            problem = f"object missing from {', '.join(where)}"
        elif found in objects.bad:
            problem = f"object {found[0]}/{ref.digest} is corrupt"
        elif objects.intact[found] != ref.size:
            problem = f"size {ref.size} recorded, object has {objects.intact[found]} bytes"
        else:
            if len(sound) >= _SOUND_MAX:
                sound.clear()
            sound[id(ref)] = ref
            continue
        if problems is _NONE:
            problems = []
        problems.append(f"ledger seq {env.seq} ({env.id}) -> {ref.digest}: {problem}")
    return problems, len(refs)


_NONE: list[str] = []  # no problem (never added to)


@dataclass
class WalkResult:
    chain: list[str] = field(default_factory=list)  # links, gaps, ids, the records themselves
    refs: list[str] = field(default_factory=list)
    records: int = 0
    refs_checked: int = 0
    last: tuple[int, str] | None = None  # seq and hash of the last record walked

    def extend(self, later: WalkResult) -> None:
        self.chain.extend(later.chain)
        self.refs.extend(later.refs)
        self.records += later.records
        self.refs_checked += later.refs_checked
        self.last = later.last if later.last is not None else self.last


def walk_records(
    ledger: Ledger,
    *,
    end: int,
    objects: ObjectIndex,
    projections: ProjectionCheck,
    after: tuple[int, str] | None = None,
    tick: Tick | None = None,
) -> WalkResult:
    """Check the records after ``after`` (seq, hash; else from seq 1) up to ``end``.

    A long walk from seq 1 is split in two: a second process (forked, with its own connection
    and snapshot) walks the later half while this one walks the first, and its results are kept
    only when the record it started after is the one this walk ended on (same seq, same hash),
    so the report is the one a single walk gives; otherwise the later half is walked here too.
    """
    start = after[0] + 1 if after is not None else 1
    if end < start:
        return WalkResult()
    step = _Step(ledger, objects, repeated=verify_reads(ledger).repeated_ids(start=start, end=end), tick=tick)
    step.total = end - start + 1
    middle = start + step.total // 2
    second = _Second.start(step, middle, end) if after is None and step.total >= SPLIT_AT_LEAST else None
    try:
        result = step.walk(start, middle - 1 if second is not None else end, after, projections)
    except BaseException:
        if second is not None:
            second.stop()
        raise
    if second is None:
        return result
    later = second.join()
    if later is not None and result.last == later[1]:
        walked, _, folder = later
        projections.merge(folder)
        if tick is not None:
            tick("records", walked.records, step.total)
        result.extend(walked)
    else:
        if later is not None:
            shutil.rmtree(later[2], ignore_errors=True)
        result.extend(step.walk(middle, end, result.last if result.last is not None else after, projections))
    return result


SPLIT_AT_LEAST = 20_000  # records a walk from seq 1 needs before a second process takes half


def spare_core() -> bool:
    """Whether a second process would run beside this one rather than take turns with it: more
    than one CPU, and a load average (last minute, which counts this process too) below CPUs − ½.
    On a busy machine the two halves only share the same CPU time, and the split costs a fork and
    a merge (2 CPUs, idle: 1.24x faster at 5,000 records, 1.41x at 20,000, 1.47x at 50,000,
    1.7x to 2.4x at 200,000; 8% slower at load 3, 200,000 records)."""
    cpus = os.cpu_count() or 1
    return cpus >= 2 and os.getloadavg()[0] < cpus - 0.5


class _Step:
    """One walk's shared state: the ledger, the objects, the ids used twice, progress."""

    def __init__(self, ledger: Ledger, objects: ObjectIndex, *, repeated: dict[int, str], tick: Tick | None) -> None:
        self.ledger, self.objects, self.repeated, self.tick = ledger, objects, repeated, tick
        self.total = 0

    def walk(self, start: int, end: int, after: tuple[int, str] | None, projections: ProjectionCheck) -> WalkResult:
        result = WalkResult()
        tick, objects = self.tick, self.objects

        def records() -> Iterator[Envelope]:
            add, refs, walked, env = projections.add, 0, 0, None
            for env in self.ledger.read(start=start, end=end):
                walked += 1
                if tick is not None:
                    tick("records", 1, self.total)
                yield env
                # chain_problems has checked this record (and kept its parsed payload) by now.
                found, count = ref_problems(env, objects)
                if found:
                    result.refs.extend(found)
                refs += count
                add(env)
            result.records, result.refs_checked = walked, refs
            if env is not None:
                result.last = (env.seq, env.hash)

        result.chain = list(chain_problems(records(), after=after, repeated_ids=self.repeated))
        return result


class _Second:
    """The later half of a walk, in a forked process: (its result, the seq and hash it started
    after, the folder of its scratch rows), or ``None`` when it could not walk."""

    def __init__(self, process: Any, pipe: Any) -> None:
        self._process, self._pipe = process, pipe

    @classmethod
    def start(cls, step: _Step, middle: int, end: int) -> _Second | None:
        if not hasattr(os, "fork") or not spare_core() or not isinstance(step.ledger, VerifyReads):
            return None
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_walk_later, args=(step, middle, end, send), daemon=True)
        try:
            process.start()
        except OSError:
            return None
        send.close()
        return cls(process, receive)

    def stop(self) -> None:
        """This walk failed: wait for the second process (so that it removes its own scratch rows
        or sends them), and remove what it sent."""
        later = self.join()
        if later is not None:
            shutil.rmtree(later[2], ignore_errors=True)

    def join(self) -> tuple[WalkResult, tuple[int, str], str] | None:
        try:
            answer = self._pipe.recv()
        except (EOFError, OSError):
            answer = None
        finally:
            self._pipe.close()
            self._process.join()
        return answer if isinstance(answer, tuple) else None


def _walk_later(step: _Step, middle: int, end: int, send: Any) -> None:
    """In the forked process: walk ``middle..end`` on a connection of its own, send the result."""
    answer: object = None
    try:
        ledger = verify_reads(step.ledger).reopen()
        if ledger is not None:
            try:
                with ledger.snapshot():
                    anchor = ledger.records_at([middle - 1]).get(middle - 1)
                    if anchor is not None:
                        step.ledger, step.tick = ledger, None
                        check = ProjectionCheck(ledger)
                        try:
                            walked = step.walk(middle, end, (anchor.seq, anchor.hash), check)
                        except BaseException:
                            check.close()
                            raise
                        answer = (walked, (anchor.seq, anchor.hash), check.hand_over())
            finally:
                ledger.close()
    except Exception as exc:  # the first process walks this half itself
        answer = f"{type(exc).__name__}: {exc}"
    send.send(answer)
    send.close()
