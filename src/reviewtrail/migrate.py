"""``reviewtrail migrate``: a whole store copied to other backends, so a team can outgrow a laptop
(SQLite and the store folder's files to PostgreSQL and an object store, and back) without losing
anything.

The ledger is copied record by record in seq order with :meth:`Ledger.copy_sealed`: the target
holds the same chain byte for byte (ids, headers, payload bytes, hashes), with the signatures stored
beside the records, each run checked against the chain rule and the first against the target's
head, all in one transaction of the target (killed or failing, it leaves the target as it was), and
its query tables get their rows as a rebuild from the chain gives them. Records are read a page at a
time and written a run at a time, so memory does not grow with the store. The CAS objects (both
pools and the legacy layout, whose objects go to the ``data`` pool, where a bare ``{hash, size}``
reference finds them first) are streamed through the source's verified read, a few at a time
(threads), beside the records: an object that does not hash to its address stops the copy (exit 4)
before anything of it is published. Objects the target already holds intact are skipped.

The records a target already holds must be the source's first records exactly (otherwise nothing
is written and the first differing seq is named, exit 4), and the copy continues after them. At the
end the target's head must be the source's (seq and hash), every object a record references must be
in the target and hash right (read back through the target's verified read), and every record,
every signature beside it and every query-table row the target holds must be the source's (the
records and signatures by digests of a chunk of seqs, a chunk read only when they differ; the rows
read in order and merged); anything else is a problem in the report (exit 4), naming the first seq,
or the table and key, that differs. A migrate run again over a finished copy checks all of it again.

The source is the configured store, opened read-only; the store folder's marker names the
identity record, which the target then holds too, so pointing ``REVIEWTRAIL_DATABASE_URL`` and
``REVIEWTRAIL_CAS_URL`` at the target is all that is left to do (docs/architecture.md, "Moving a
store").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reviewtrail.errors import (
    CorruptObjectError,
    IntegrityError,
    InvalidInputError,
    ObjectNotFoundError,
)

if TYPE_CHECKING:
    from reviewtrail.cas import CasStore, Location, VerifyingReader
    from reviewtrail.config import Settings
    from reviewtrail.ledger import Envelope, Ledger, RecordCatalog, RunDigest
    from reviewtrail.store import Store

__all__ = ["DEFAULT_BATCH", "MigrateOptions", "MigrateReport", "migrate"]

_T = TypeVar("_T")

DEFAULT_BATCH = 10_000  # records per run written to the target
_BATCH_BYTES = 16 * 1024 * 1024  # payload bytes per run, whatever the batch size
_MAX_PROBLEMS = 100  # problems listed in a report (the rest are counted)
_OBJECT_THREADS = 8  # objects copied (and the target's objects re-hashed) at once
_COMPARE_CHUNK = 20_000  # records compared by one digest of each side

# (phase, advance, total): "records" (counted), "bytes" (the objects' bytes), "checking" (the
# distinct object references checked), "comparing" (records compared with the source's).
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class MigrateOptions:
    """Where the store goes: ``database_url`` (``sqlite:///PATH`` or ``postgresql://…``) and
    ``cas_url`` (``file:///ABS/PATH`` or ``s3://bucket/prefix``); ``None`` leaves that part where
    it is. ``batch_size``: records per run written to the target (all in one transaction)."""

    database_url: str | None = None
    cas_url: str | None = None
    batch_size: int = DEFAULT_BATCH


@dataclass
class MigrateReport:
    source_database: str
    source_cas: str
    target_database: str
    target_cas: str
    head_seq: int = 0
    head_hash: str | None = None
    records_present: int = 0  # in the target before this run (a resumed migrate)
    records_copied: int = 0
    objects_copied: int = 0
    objects_skipped: int = 0  # already in the target, intact
    bytes_copied: int = 0
    refs_checked: int = 0
    elapsed: float = 0.0
    problems: list[str] = field(default_factory=list)
    more_problems: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def problem(self, text: str) -> None:
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(text)
        else:
            self.more_problems += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "source": {"databaseUrl": self.source_database, "casUrl": self.source_cas},
            "target": {"databaseUrl": self.target_database, "casUrl": self.target_cas},
            "head": {"seq": self.head_seq, "hash": self.head_hash},
            "records": {"copied": self.records_copied, "alreadyPresent": self.records_present},
            "objects": {"copied": self.objects_copied, "skipped": self.objects_skipped, "bytes": self.bytes_copied},
            "refsChecked": self.refs_checked,
            "elapsedSeconds": round(self.elapsed, 3),
            "problems": list(self.problems),
            "moreProblems": self.more_problems,
            "notes": list(self.notes),
        }


def migrate(
    settings: Settings,
    catalog: RecordCatalog,
    options: MigrateOptions,
    *,
    progress: Progress | None = None,
) -> MigrateReport:
    """Copy the store of ``settings`` (opened read-only with ``catalog``) to ``options``' targets,
    resuming a copy begun earlier, then check the target. Bad URLs are :class:`InvalidInputError`
    (exit 2), an unreachable database :class:`BackendUnavailableError` (exit 5); a target ledger
    that is not a start of the source's chain, or a source object that does not hash, is
    :class:`IntegrityError` (exit 4) raised before anything of it is written. What the final check
    finds is in the report's problems."""
    from reviewtrail._redact import redact_url
    from reviewtrail.store import Store

    tick = progress or _no_progress
    if isinstance(options.batch_size, bool) or options.batch_size < 1:
        raise InvalidInputError(f"must be at least 1, got {options.batch_size!r}", field="batch_size")
    to_db = _checked_database_url(options.database_url)
    to_cas = _checked_cas_url(options.cas_url)
    ledger_moves = to_db is not None and not _same_database(to_db, settings.database_url)
    cas_moves = to_cas is not None and _cas_place(to_cas, settings) != _cas_place(settings.cas_url, settings)
    if not ledger_moves and not cas_moves:
        raise InvalidInputError(
            "nothing to migrate: give --to and/or --cas-to naming somewhere the store is not already",
            field="to",
        )
    started = time.monotonic()
    source_cas_name = settings.cas_url or f"file://{settings.store}"
    report = MigrateReport(
        source_database=settings.database_url_redacted,
        source_cas=redact_url(source_cas_name),
        target_database=redact_url(to_db) if ledger_moves and to_db else settings.database_url_redacted,
        target_cas=redact_url(to_cas) if cas_moves and to_cas else redact_url(source_cas_name),
    )
    with Store.open(settings, catalog, read_only=True) as source:
        head = source.ledger.head()
        end, end_hash = (head.seq, head.hash) if head is not None else (0, None)
        report.head_seq, report.head_hash = end, end_hash
        target_ledger = _open_target_ledger(to_db, catalog) if ledger_moves and to_db else None
        refs: _Refs = {}
        try:
            if target_ledger is not None:  # checked before anything of the target is written
                report.records_present = _common_start(source.ledger, target_ledger, end)
            cas = _open_target_cas(to_cas, settings) if cas_moves and to_cas else source.cas
            copied = _copy_both(source, (target_ledger, cas), end, options.batch_size, report, tick, refs)
            if target_ledger is not None:
                _check_target(
                    target_ledger, cas, source.cas, (end, end_hash), report, tick, refs, (source.ledger, copied)
                )
                _compare_ledgers(source.ledger, target_ledger, report)
            else:
                _check_target(source.ledger, cas, source.cas, (end, end_hash), report, tick, refs)
        finally:
            if target_ledger is not None:
                target_ledger.close()
        later = source.ledger.head_seq()
        if later > end:
            report.notes.append(
                f"the source gained {later - end} record(s) while migrating (seq {end + 1}..{later}); "
                "run migrate again to copy them"
            )
    report.elapsed = time.monotonic() - started
    return report


def _no_progress(phase: str, advance: int, total: int) -> None:
    return None


# --- where the target is --------------------------------------------------------------------
def _checked_database_url(url: str | None) -> str | None:
    from reviewtrail._redact import redact_url
    from reviewtrail.config import sqlite_path

    if url is None:
        return None
    path = sqlite_path(url)
    if path is not None:
        if not path.name:
            raise InvalidInputError(f"{redact_url(url)!r} names no file", field="to")
        if not path.absolute().parent.is_dir():
            raise InvalidInputError(f"the folder {path.absolute().parent} does not exist", field="to")
        return url
    if url.startswith(("postgresql://", "postgres://")) and len(url.partition("://")[2]) > 0:
        return url
    raise InvalidInputError(
        f"{redact_url(url)!r} is not a database URL (sqlite:///PATH, sqlite:////ABSOLUTE/PATH, postgresql://...)",
        field="to",
    )


def _checked_cas_url(url: str | None) -> str | None:
    """``url`` when it has the shape of a CAS URL (``open_cas`` checks the rest when it opens it)."""
    if url is None:
        return None
    _cas_place(url, None)
    return url


def _same_database(a: str, b: str) -> bool:
    from reviewtrail.config import sqlite_path

    pa, pb = sqlite_path(a), sqlite_path(b)
    if pa is not None or pb is not None:
        return pa is not None and pb is not None and pa.resolve() == pb.resolve()
    return a.rstrip("/") == b.rstrip("/")


def _cas_place(url: str | None, settings: Settings | None) -> tuple[str, str]:
    """What identifies where a CAS URL keeps the objects (None: the store's folder):
    ``("file", folder)`` or ``("s3", bucket/prefix)``; :class:`InvalidInputError` for any other URL."""
    from urllib.parse import unquote, urlsplit

    from reviewtrail._redact import redact_url

    if url is None:
        assert settings is not None
        return "file", str(settings.store.resolve())
    forms = "file:///ABSOLUTE/FOLDER or s3://BUCKET/PREFIX"
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    scheme = parts.scheme.lower() if parts is not None else ""
    if parts is None or parts.query or parts.fragment or "?" in url or "#" in url:
        scheme = ""
    if scheme == "file" and parts is not None:
        folder = unquote(parts.path)
        if parts.netloc in ("", "localhost") and folder.startswith("/") and folder.rstrip("/"):
            return "file", str(Path(folder).resolve())
        host = f" names the host {parts.netloc!r}," if parts.netloc not in ("", "localhost") else ""
        raise InvalidInputError(f"{url!r}{host} does not name an absolute folder; use {forms}", field="cas_to")
    if scheme == "s3" and parts is not None and parts.netloc and not {"@", ":"} & set(parts.netloc):
        return "s3", f"{parts.netloc}/{parts.path.strip('/')}"
    raise InvalidInputError(f"{redact_url(url)!r} is not a CAS URL; use {forms}", field="cas_to")


def _open_target_ledger(url: str, catalog: RecordCatalog) -> Ledger:
    from reviewtrail.ledger import open_ledger

    return open_ledger(url, catalog=catalog, create=True)


def _open_target_cas(url: str, settings: Settings) -> CasStore:
    """The target CAS (``open_cas``), its layout created when new."""
    from reviewtrail.cas import open_cas

    return open_cas(url, store=settings.store, s3=settings.s3, create=True, field="cas_to")


def _copy_both(
    source: Store,
    target: tuple[Ledger | None, CasStore],
    end: int,
    batch_size: int,
    report: MigrateReport,
    tick: Progress,
    refs: _Refs,
) -> list[tuple[int, str]] | None:
    """The records (:func:`_copy_records`, when the ledger moves; otherwise their references
    gathered) and the objects (:func:`_copy_objects`, when the CAS moves) copied side by side: the
    objects by threads of their own while the target database stores the records. A failure of
    the records stops the objects not yet begun and is raised once those under way have ended; a
    failure of the objects is raised once the records are copied."""
    from concurrent.futures import ThreadPoolExecutor

    ledger, cas = target
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="migrate-objects") as side:
        objects = side.submit(_copy_objects, source.cas, cas, report, tick, stop) if cas is not source.cas else None
        try:
            if ledger is None:
                _gather_refs(source.ledger.read(end=end) if end else iter(()), refs, report)
                copied = None
            else:
                copied = _copy_records(source.ledger, ledger, end, batch_size, report, tick, refs)
        except BaseException:
            stop.set()
            raise
        if objects is not None:
            objects.result()
    return copied


# --- the records ------------------------------------------------------------------------------
# The first use of each distinct object reference (pool, hash, size): the record that names it, and it.
_Refs = dict[tuple[str, str, int], tuple[str, Any]]


def _copy_records(
    source: Ledger, target: Ledger, end: int, batch_size: int, report: MigrateReport, tick: Progress, refs: _Refs
) -> list[tuple[int, str]] | None:
    """The source's records after those the target holds (:func:`_common_start`), up to ``end``,
    with the signatures the source stores beside them, in one transaction of the target
    (:meth:`Ledger.copy_sealed`): killed or failing, it leaves the target as it was. The
    references of every record up to ``end`` are gathered in ``refs`` on the way; copied from
    seq 1, the records' digests (:class:`_Digests`) are returned."""
    present = report.records_present
    if present:
        tick("records", present, end)
        _gather_refs(source.read(end=present), refs, report)
    if present >= end:
        return None
    digests = _Digests() if not present else None

    def runs() -> Iterator[tuple[list[Envelope], Any]]:
        for batch, signatures in _batches(source, present + 1, end, batch_size):
            _gather_refs(batch, refs, report)
            if digests is not None:
                digests.add(batch, signatures)
            yield batch, signatures
            tick("records", len(batch), end)

    report.records_copied += target.copy_sealed(runs())
    return digests.finish() if digests is not None else None


class _Digests:
    """:meth:`Ledger.records_digest` of each :data:`_COMPARE_CHUNK` seqs of the records copied
    from seq 1, taken from them on the way (the source is not read again to compare)."""

    def __init__(self) -> None:
        self.done: list[tuple[int, str]] = []
        self._run = _run_digest()

    def add(self, envelopes: list[Envelope], signatures: dict[int, Any]) -> None:
        for env in envelopes:  # a payload that does not hash to its payloadHash fails the copy (copy_sealed)
            self._run.add(env, signatures.get(env.seq), payload_sha=env.payload_hash)
            if self._run.count == _COMPARE_CHUNK:
                self._close()

    def _close(self) -> None:
        self.done.append(self._run.value())
        self._run = _run_digest()

    def finish(self) -> list[tuple[int, str]]:
        if self._run.count:
            self._close()
        return self.done


def _run_digest() -> RunDigest:
    from reviewtrail.ledger import RunDigest

    return RunDigest()


def _gather_refs(envelopes: Iterable[Envelope], refs: _Refs, report: MigrateReport) -> None:
    """Each reference of ``envelopes`` not in ``refs`` yet, with the record that names it first; a
    malformed one is a problem of the report."""
    for env in envelopes:
        try:
            found = env.cas_refs
        except InvalidInputError as exc:
            report.problem(f"ledger seq {env.seq} ({env.id}): a malformed CAS reference ({exc})")
            continue
        for ref in found:
            key = (getattr(ref, "pool", ""), ref.hash, ref.size)
            if key not in refs:
                refs[key] = (f"ledger seq {env.seq} ({env.id})", ref)


def _batches(source: Ledger, start: int, end: int, batch_size: int) -> Iterator[tuple[list[Envelope], Any]]:
    """The records ``start..end`` in batches of ``batch_size`` (fewer when their payloads reach
    :data:`_BATCH_BYTES`), each with the signatures the source stores beside them."""
    batch: list[Envelope] = []
    size = 0
    for env in source.read(start=start, end=end):
        batch.append(env)
        size += len(env.payload)
        if len(batch) >= batch_size or size >= _BATCH_BYTES:
            yield batch, _signatures(source, batch)
            batch, size = [], 0
    if batch:
        yield batch, _signatures(source, batch)


def _signatures(source: Ledger, batch: list[Envelope]) -> dict[int, Any]:
    """The signatures the source stores beside a batch of records that follow each other (one
    read of the seqs it spans)."""
    return {seq: sig for seq, _, _, sig in source.signed_scan(start=batch[0].seq, end=batch[-1].seq)}


def _common_start(source: Ledger, target: Ledger, end: int) -> int:
    """How many records the target holds, which must be the source's first ones exactly (every
    field, payload bytes and hashes); :class:`IntegrityError` naming the first seq where they
    differ otherwise, before anything is written."""
    have = target.head_seq()
    if have == 0:
        return 0
    differs, _ = _differences(source, target, min(have, end), _no_progress)
    if differs is not None:
        at, mine, held = differs
        raise IntegrityError(
            f"the target ledger {target.describe()} differs from the source at seq {at}: it holds "
            f"{_describe(held)} where the source has {_describe(mine)}; it was not written to",
            field="to",
        )
    if have > end:
        raise IntegrityError(
            f"the target ledger {target.describe()} differs from the source at seq {end + 1}: it holds {have} records, "
            f"the source {end}; it was not written to",
            field="to",
        )
    return have


# Where two ledgers part: the first seq, and what each holds there (a record, or a signature row).
_Apart = tuple[int, Any, Any]


def _differences(
    source: Ledger, target: Ledger, upto: int, tick: Progress, known: list[tuple[int, str]] | None = None
) -> tuple[_Apart | None, _Apart | None]:
    """The first seq up to ``upto`` where the two ledgers' records differ (in any field or payload
    byte), and the first where the signatures beside them differ, each with what either holds
    there, or ``None``. Compared by :meth:`Ledger.records_digest`, :data:`_COMPARE_CHUNK` records
    at a time (the source's digest taken beside the target's, or ``known`` from the copy); only a
    chunk whose digests differ is read, to name the seq."""
    from concurrent.futures import ThreadPoolExecutor

    ahead = known or []
    record: _Apart | None = None
    signature: _Apart | None = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="migrate-compare") as pool:
        for chunk, start in enumerate(range(1, upto + 1, _COMPARE_CHUNK)):
            stop = min(start + _COMPARE_CHUNK - 1, upto)
            pending = None if chunk < len(ahead) else pool.submit(source.records_digest, start, stop)
            held = target.records_digest(start, stop)
            if held != (ahead[chunk] if pending is None else pending.result()):
                record = record or _apart(source.read(start=start, end=stop), target.read(start=start, end=stop), start)
                signature = signature or _apart(
                    source.signature_scan(start=start, end=stop), target.signature_scan(start=start, end=stop), start
                )
                if record is not None and signature is not None:
                    break
            tick("comparing", stop - start + 1, upto)
    return record, signature


def _apart(mine: Iterator[Any], held: Iterator[Any], start: int) -> _Apart | None:
    """The first place (counted from seq ``start``) where two runs read in seq order differ."""
    for seq, (a, b) in enumerate(_pairs(mine, held), start=start):
        if a != b:
            return seq, a, b
    return None


def _pairs(a: Iterator[_T], b: Iterator[_T]) -> Iterator[tuple[_T | None, _T | None]]:
    """The items of two runs (records, signature rows) side by side, ``None`` where one ended first."""
    while True:
        x, y = next(a, None), next(b, None)
        if x is None and y is None:
            return
        yield x, y


def _describe(env: Envelope | None) -> str:
    return "no record" if env is None else f"record {env.id} (hash {env.hash[:12]}…)"


# --- the objects ------------------------------------------------------------------------------
def _copy_objects(
    source: CasStore, target: CasStore, report: MigrateReport, tick: Progress, stop: threading.Event
) -> None:
    """Every object of the source the target does not hold intact, :data:`_OBJECT_THREADS` at a
    time; the first failure (in listing order) is raised once the copies under way have ended,
    the objects not yet begun left uncopied (as they are once ``stop`` is set)."""
    from concurrent.futures import ThreadPoolExecutor

    from reviewtrail.cas import is_hex

    total = 0
    if tick is not _no_progress:  # sizing every object costs a look at each: only for a progress bar
        total = sum(source.stored_size(loc, name) or 0 for loc, name in source.iter_objects())
    lock = threading.Lock()

    def advance(n: int, copied: bool = True) -> None:
        with lock:
            report.bytes_copied += n if copied else 0
            tick("bytes", n, total)

    listed: list[tuple[Location, str]] = []
    for location, name in source.iter_objects():
        if is_hex(name):
            listed.append((location, name))
        else:
            report.notes.append(f"{location}: {name!r} is not a SHA-256 address (not an object); not copied")

    def copy(location: Location, name: str) -> bool | None:
        return None if stop.is_set() else _copy_object(source, target, location, name, advance)

    with ThreadPoolExecutor(max_workers=_OBJECT_THREADS, thread_name_prefix="migrate-object") as pool:
        futures = [pool.submit(copy, loc, name) for loc, name in listed]
        try:
            for future in futures:
                done = future.result()
                if done:
                    report.objects_copied += 1
                elif done is not None:
                    report.objects_skipped += 1
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _copy_object(
    source: CasStore, target: CasStore, location: Location, name: str, advance: Callable[[int, bool], None]
) -> bool:
    """Copy one object (True), or find the target holding it intact already (False); ``advance``
    is told the bytes copied, or those found (not copied). A corrupt copy in the target, or a
    source object that does not hash, is raised."""
    held = target.locate(name) if location == "legacy" else location
    if held is not None and target.stored_size(held, name) is not None:
        check = target.check_object(held, name)
        if check.problem is not None:
            raise CorruptObjectError(
                f"the target already holds {location}/sha256:{name}, corrupt ({check.problem}); "
                "nothing was copied over it"
            )
        advance(check.size, False)
        return False
    pool = "data" if location == "legacy" else location
    try:
        with _source_reader(source, location, name) as reader:
            ref = target.put_stream(reader, pool=pool, on_bytes=advance)  # type: ignore[arg-type]
    except CorruptObjectError as exc:
        raise CorruptObjectError(
            f"source object {location}/sha256:{name}: {exc}; migrate stopped and copied nothing of it "
            "(run 'reviewtrail verify' on the source)"
        ) from None
    if ref.hash != name:  # the reader verified the bytes; a mismatch here is a bug, never copied silently
        raise IntegrityError(f"object {location}/sha256:{name} was stored as {ref.digest}")
    return True


def _source_reader(source: CasStore, location: Location, name: str) -> VerifyingReader:
    """The object's bytes at exactly ``location``, verified as they are read (the last read of a
    corrupt object raises, so a copy of it is never published)."""
    from reviewtrail.cas import CasRef

    if location == "legacy":
        return source.open(name)  # a bare address: found where a bare reference finds it
    size = source.stored_size(location, name)
    if size is None:
        raise ObjectNotFoundError(f"source object {location}/sha256:{name} vanished while migrating", field="ref")
    return source.open(CasRef(pool=location, digest=f"sha256:{name}", size=size))


# --- the end ----------------------------------------------------------------------------------
def _check_target(
    ledger: Ledger,
    cas: CasStore,
    source_cas: CasStore,
    head: tuple[int, str | None],
    report: MigrateReport,
    tick: Progress,
    refs: _Refs,
    source: tuple[Ledger, list[tuple[int, str]] | None] | None = None,
) -> None:
    """The target's head must be the source's, and every object in ``refs`` (what the records
    reference) must be in its CAS and hash right (read through its verified read,
    :data:`_OBJECT_THREADS` at once). With the ``source`` ledger (and the digests of the records
    copied, if any), every record the target holds up to the head (every field, payload bytes and
    hashes) and the signature beside it must be the source's too (:func:`_differences`): a
    problem names the first seq that differs."""
    from concurrent.futures import ThreadPoolExecutor

    end, end_hash = head
    found = ledger.head()
    at: tuple[int, str | None] = (found.seq, found.hash) if found is not None else (0, None)
    if at != (end, end_hash):
        report.problem(f"the target ledger's head is seq {at[0]} ({at[1]}), the source's is seq {end} ({end_hash})")
    report.refs_checked += len(refs)

    def intact(ref: Any) -> bool:
        ok = cas.verify(ref)
        tick("checking", 1, len(refs))
        return ok

    with ThreadPoolExecutor(max_workers=_OBJECT_THREADS, thread_name_prefix="migrate-check") as pool:
        verified = pool.map(intact, (ref for _, ref in refs.values()))  # re-hashed while the records are compared
        differs, signature = (
            _differences(source[0], ledger, end, tick, source[1]) if source is not None and end else (None, None)
        )
        held = list(verified)
    for ((pool_name, digest, size), (record, ref)), ok in zip(refs.items(), held, strict=True):
        if not ok:
            where = "nor intact in the source's" if not source_cas.has(ref) else "though the source's holds it"
            report.problem(
                f"{record} references {pool_name or 'sha256'}:{digest} ({size} bytes), "
                f"which is not intact in the target's CAS ({where})"
            )
    if differs is not None:
        seq, mine, held_env = differs
        report.problem(
            f"the target's record at seq {seq} differs from the source's: it holds {_describe(held_env)} where "
            f"the source has {_describe(mine)}"
        )
    if signature is not None:
        seq, mine, held_row = signature
        report.problem(
            f"the target's signature of seq {seq} differs from the source's: it holds "
            f"{_signature_label(held_row)} where the source has {_signature_label(mine)}"
        )


def _compare_ledgers(source: Ledger, target: Ledger, report: MigrateReport) -> None:
    """No signature may stand where the target holds no record, and every row of every query
    table must be the source's (the records and the signatures beside them are compared by
    :func:`_check_target`): a problem names each table's first differing rows. Both sides are
    streamed in order (rows by key) and merged, so memory holds a page of each."""
    from reviewtrail.ledger import verify_reads
    from reviewtrail.verify import diff_table

    stray = target.stray_signatures(limit=1)
    if stray:
        report.problem(f"the target holds a signature at seq {stray[0]}, where it holds no record")
    mine_reads, held_reads = verify_reads(source), verify_reads(target)
    for table, spec in sorted(source.tables.items()):
        found = diff_table(spec, held_reads.stored_rows_by_key(table), mine_reads.stored_rows_by_key(table))
        for problem in found.problems:
            report.problem(f"the target's {problem} (compared with the source's rows)")


def _signature_label(row: tuple[Any, ...] | None) -> str:
    if row is None:
        return "no record"
    signature = row[3]
    if signature is None:
        return "no signature"
    return f"a signature by key {signature.key_id!r} ({bytes(signature.value)[:8].hex()}…)"
