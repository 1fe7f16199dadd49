"""``verify``: a whole store checked against its chain, in one consistent snapshot of its ledger."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reviewtrail.cas import is_hex
from reviewtrail.errors import ConfigError
from reviewtrail.ledger import GENESIS_HASH, Envelope, signature_problems
from reviewtrail.verify._projections import ProjectionCheck
from reviewtrail.verify._records import ObjectIndex, Tick, walk_records

if TYPE_CHECKING:
    from reviewtrail.ledger import TrustedKeys
    from reviewtrail.store import Store

__all__ = ["VerifyReport", "verify_store"]


@dataclass
class VerifyReport:
    objects_checked: int = 0
    records_checked: int = 0
    refs_checked: int = 0
    rows_checked: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    store_id: str | None = None
    head_seq: int = 0
    head_hash: str | None = None
    chain_ok: bool = True  # the records themselves (identity, links, hashes) are sound
    # verify --since: {"seq", "hash", "checkpoint", "checked"}, what was checked from which checkpoint
    since: dict[str, object] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "storeId": self.store_id,
            "head": {"seq": self.head_seq, "hash": self.head_hash},
            "objectsChecked": self.objects_checked,
            "recordsChecked": self.records_checked,
            "refsChecked": self.refs_checked,
            "rowsChecked": self.rows_checked,
            "problems": list(self.problems),
            "notes": list(self.notes),
            "repairs": list(self.repairs),
            "since": None if self.since is None else dict(self.since),
        }


def verify_store(
    store: Store,
    progress: Tick | None = None,
    *,
    since: tuple[int, str] | None = None,
    trusted_keys: TrustedKeys | None = None,
    read_data: bool = True,
) -> VerifyReport:
    """Check the whole store against its chain, in one consistent snapshot of the ledger.

    The ledger is read first (one read transaction), then every CAS object is re-hashed, then
    every record is checked (links, hashes, CAS references) and every query table is
    recomputed from the records and compared. Objects and records written by others during
    the run are outside the snapshot's records and are never reported as tampering. Memory
    holds a page of records and one entry per CAS object, not one per record or row.

    ``since`` (the seq and head hash of a checkpoint already verified): the record at that
    seq must still have that hash; then only the records after it are checked (links from
    that hash on, hashes, their CAS references, re-hashing the objects they name) and the
    query-table rows they give. Records before it, objects no such record names and rows
    only earlier records give are not looked at.

    Every record's signature is held to the chain's writer keys and, with ``trusted_keys``, to
    those keys (:func:`~reviewtrail.ledger.signature_problems`), in the same snapshot.

    ``read_data=False`` lists the objects instead of reading them (restic's ``check`` without
    ``--read-data``): every object a record names must be there with the size its reference
    says, and every stored name must be an address, but no byte is read, so a flipped byte in an
    object is not seen. For a large bucket it costs a listing, not a download of the store.
    """
    ledger = store.ledger
    report = VerifyReport(store_id=store.store_id)
    if since is not None:
        report.since = {
            "seq": since[0],
            "hash": since[1],
            "checked": f"only what follows seq {since[0]} of a verified checkpoint (records up to it were not)",
        }
    tick = progress or (lambda phase, advance, total: None)
    hidden = ledger.hidden_row_problems()
    if hidden:
        raise ConfigError(
            f"{ledger.describe()}: verify refuses, as it may not see every row: {'; '.join(hidden)}. "
            "Disable it (ALTER TABLE ... DISABLE ROW LEVEL SECURITY) or drop the policies, then verify again",
            field="database",
        )
    unnamed = store.marker is not None and store.marker.store_id is None  # an older store's marker
    with ledger.snapshot():
        head = ledger.head()
        if head is not None:
            report.head_seq, report.head_hash = head.seq, head.hash
        identity = store.identity_problems()
        report.problems.extend(identity)
        report.problems.extend(store.furniture_problems())
        if since is None and not read_data:
            objects = _list_objects(store, report, tick)
        elif since is None:
            objects = _verify_objects(store, report, tick, count_bytes=progress is not None)
        else:
            objects = ObjectIndex(store.cas)
            anchor = _anchor_problems(store, since, head)
            identity.extend(anchor)  # the chain itself: nothing after a moved anchor can be trusted
            report.problems.extend(anchor)
        if head is None and objects.intact and unnamed:
            identity.append(store.emptied_problem(len(objects.intact)))
            report.problems.append(identity[-1])
        total = head.seq if head is not None else 0
        with ProjectionCheck(ledger, after_seq=since[0] if since is not None else 0) as projections:
            walk = walk_records(ledger, end=total, objects=objects, projections=projections, after=since, tick=progress)
            report.records_checked, report.refs_checked = walk.records, walk.refs_checked
            report.problems.extend(walk.chain)
            report.problems.extend(walk.refs)
            report.problems.extend(objects.problems)
            report.objects_checked += objects.checked
            count_problems = _count_problems(store, head, walk.records, since[0] if since is not None else 0)
            report.problems.extend(count_problems)
            report.chain_ok = not (identity or walk.chain or count_problems)
            report.problems.extend(projections.problems())
            report.rows_checked = projections.rows_checked
        signatures = signature_problems(
            ledger, end=total, after=since[0] if since is not None else 0, trusted=trusted_keys
        )
        report.problems.extend(signatures.problems)
        if signatures.signed or signatures.required_from is not None or trusted_keys is not None:
            report.notes.append(signatures.note())
    if unnamed:
        report.notes.append("this store has no recorded identity (made by an older version); run 'reviewtrail init'")
    note = store.cas.unfinished_writes_note()
    if note is not None:
        report.notes.append(note)
    return report


def _anchor_problems(store: Store, since: tuple[int, str], head: Envelope | None) -> list[str]:
    """The record a checkpoint anchors must still be there with its hash (read in verify's snapshot)."""
    seq, expected = since
    if seq == 0:
        return [] if expected == GENESIS_HASH else ["the checkpoint is at seq 0 with a hash other than genesis"]
    last = head.seq if head is not None else 0
    found = store.ledger.records_at([seq]).get(seq)
    if last < seq:
        return [f"the checkpoint is at seq {seq} but the ledger ends at seq {last}: records were cut from its end"]
    if found is None:
        return [f"the ledger has no record at seq {seq}, which the checkpoint anchors"]
    if found.hash != expected:
        return [
            f"the record at seq {seq} has hash {found.hash}, the checkpoint says {expected}: the history up to "
            "the checkpoint was rewritten"
        ]
    return []


def _list_objects(store: Store, report: VerifyReport, tick: Tick) -> ObjectIndex:
    """The objects as listed, with their stored sizes, none read (``verify --no-read-data``)."""
    objects = ObjectIndex()
    listed = 0
    for location, name, size in store.cas.object_sizes():
        listed += 1
        if not is_hex(name):
            objects.bad.add((location, name))
            report.problems.append(f"{location}: stray file {name!r} is not a SHA-256 address")
        elif size is None:
            objects.bad.add((location, name))
            report.problems.append(f"{location}/sha256:{name}: vanished while listing")
        else:
            objects.intact[(location, name)] = size
        tick("objects", 1, 0)
    report.notes.append(
        f"{listed} object(s) listed, not read: present and of the size their references say, but their bytes "
        "were not re-hashed; 'reviewtrail verify' (--read-data, the default) re-hashes every object"
    )
    return objects


def _verify_objects(store: Store, report: VerifyReport, tick: Tick, *, count_bytes: bool) -> ObjectIndex:
    cas = store.cas
    names = list(cas.iter_objects())
    objects = ObjectIndex()
    on_bytes = None
    if count_bytes:  # sizing every object first costs an open each: only for a progress bar
        total_bytes = sum(cas.stored_size(location, name) or 0 for location, name in names)

        def on_bytes(n: int) -> None:
            tick("bytes", n, total_bytes)

    for location, name in names:
        check = cas.check_object(location, name, on_bytes)
        report.objects_checked += 1
        if check.problem is None:
            objects.intact[(location, name)] = check.size
        else:
            objects.bad.add((location, name))
            report.problems.append(check.problem)
        tick("objects", 1, len(names))
    return objects


def _count_problems(store: Store, head: Envelope | None, read: int, after: int = 0) -> list[str]:
    problems: list[str] = []
    if head is not None and read != head.seq - after:
        what = f"{read} records were read" if not after else f"{read} records after seq {after} were read"
        problems.append(f"ledger: head is seq {head.seq} but {what}")
    chain = read + after
    count, low, high = store.ledger.stats()
    if count != chain or (count and (low != 1 or high != count)):
        problems.append(
            f"ledger: {count} rows stored (seq {low}..{high}) but {chain} form the chain "
            "(rows outside 1..head were added or removed)"
        )
    top = high or 0
    for table, seq in sorted(store.ledger.projected_seq_max().items()):
        if seq > top:
            problems.append(
                f"ledger: query table {table} refers to seq {seq}, beyond the last record {top} "
                "(records were removed from the end)"
            )
    return problems
