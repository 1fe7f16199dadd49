"""Ledger.append_sealed: records sealed by one ledger appended to another exactly as they are
(memory, SQLite, PostgreSQL), the primitive ``reviewtrail migrate`` copies a chain with."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reviewtrail.errors import ConflictError, IntegrityError, ReadOnlyStoreError
from reviewtrail.ledger import GENESIS_HASH, Envelope, Ledger, MemoryLedger, NewRecord, open_ledger
from reviewtrail.ledger.records._envelope import seal

BACKENDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def rec(n: int, **kw: Any) -> NewRecord:
    fields: dict[str, Any] = {"type": "test.item@1", "actor": "tester", "privacy": "private", "payload": {"n": n}}
    fields.update(kw)
    return NewRecord(**fields)


@pytest.fixture(params=BACKENDS)
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A maker of new, empty ledgers of one backend (closed at the end)."""
    opened: list[Ledger] = []

    def new() -> Ledger:
        if request.param == "memory":
            ledger: Ledger = MemoryLedger()
        elif request.param == "sqlite":
            ledger = open_ledger(f"sqlite:///{tmp_path / f'l-{uuid.uuid4().hex[:8]}.sqlite'}")
        else:
            ledger = open_ledger(request.getfixturevalue("pg_server").new_database())
        opened.append(ledger)
        return ledger

    yield new
    for ledger in opened:
        ledger.close()


def source_chain(count: int = 12) -> list[Envelope]:
    """A chain with subjects, a supersession and a CAS reference (rows in the built-in tables)."""
    source = MemoryLedger()
    first = source.append([rec(i, subject=f"s{i % 3}") for i in range(count - 2)])
    source.append([rec(99, supersedes=first[2].id)])
    source.append([rec(100, payload={"file": {"hash": "ab" * 32, "size": 3}})])
    return list(source.read())


def rows_of(ledger: Ledger) -> dict[str, list[dict[str, Any]]]:
    return {name: sorted(ledger.stored_rows(name), key=repr) for name in sorted(ledger.tables)}


def test_a_chain_copied_in_batches_is_the_same_chain(make: Any) -> None:
    chain = source_chain()
    target = make()
    for i in range(0, len(chain), 5):
        assert target.append_sealed(chain[i : i + 5]) == chain[i : i + 5]
    copied = list(target.read())
    assert [dataclasses.astuple(e) for e in copied] == [dataclasses.astuple(e) for e in chain]
    assert list(target.verify()) == []
    reference = MemoryLedger()
    reference.append_sealed(chain)
    assert rows_of(target) == rows_of(reference)
    assert target.rows("supersessions", superseded_id=chain[2].id)[0]["by_id"] == chain[-2].id
    # The copy goes on like any ledger: the next append links to the copied head.
    [after] = target.append([rec(1000)])
    assert after.seq == len(chain) + 1 and after.prev_hash == chain[-1].hash


def test_a_batch_that_does_not_extend_the_head_is_refused(make: Any) -> None:
    chain = source_chain()
    target = make()
    with pytest.raises(ConflictError, match="is empty; the records to append start at seq 3"):
        target.append_sealed(chain[2:5])
    target.append_sealed(chain[:4])
    with pytest.raises(ConflictError, match=r"ends at seq 4 .* start at seq 4"):
        target.append_sealed(chain[3:6])
    with pytest.raises(ConflictError, match="start at seq 6"):
        target.append_sealed(chain[5:7])
    other = source_chain()  # same seqs, another chain: seq 5 does not link to this ledger's seq 4
    with pytest.raises(ConflictError, match="do not extend it"):
        target.append_sealed(other[4:6])
    assert [e.hash for e in target.read()] == [e.hash for e in chain[:4]]


def test_records_whose_bytes_do_not_hash_are_refused(make: Any) -> None:
    chain = source_chain()
    target = make()
    target.append_sealed(chain[:3])
    altered = [chain[3], dataclasses.replace(chain[4], payload=b'{"n":666}'), chain[5]]
    with pytest.raises(IntegrityError, match=r"ledger seq 5 .*payload does not hash"):
        target.append_sealed(altered)
    rehashed = dataclasses.replace(chain[4], actor="mallory")
    with pytest.raises(IntegrityError, match="hash does not match the envelope"):
        target.append_sealed([chain[3], rehashed])
    with pytest.raises(IntegrityError, match="does not follow seq 4"):
        target.append_sealed([chain[3], chain[5]])
    assert target.head_seq() == 3


def test_an_id_already_recorded_is_a_conflict(make: Any) -> None:
    target = make()
    [first] = target.append([rec(1)])
    again = seal(rec(2, id=first.id), seq=2, prev_hash=first.hash, now=_now())
    with pytest.raises(ConflictError, match="id"):
        target.append_sealed([again])
    assert target.head_seq() == 1


def test_a_read_only_ledger_refuses(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ro.sqlite'}"
    open_ledger(url).close()
    with open_ledger(url, create=False, read_only=True) as ledger, pytest.raises(ReadOnlyStoreError):
        ledger.append_sealed(source_chain()[:1])


def test_the_first_record_links_to_genesis() -> None:
    chain = source_chain()
    assert chain[0].prev_hash == GENESIS_HASH
    forged = seal(rec(1), seq=1, prev_hash="1" * 64, now=_now())
    with pytest.raises(ConflictError, match="is empty"):
        MemoryLedger().append_sealed([forged])


def _now() -> datetime:
    return datetime.now(UTC)
