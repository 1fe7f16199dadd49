"""Ledger.append_sealed: records sealed by one ledger appended to another exactly as they are
(memory, SQLite, PostgreSQL), the primitive ``reviewtrail migrate`` copies a chain with."""

from __future__ import annotations

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
    assert list(copied) == list(chain)
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
    altered = [chain[3], chain[4].replace(payload=b'{"n":666}'), chain[5]]
    with pytest.raises(IntegrityError, match=r"ledger seq 5 .*payload does not hash"):
        target.append_sealed(altered)
    rehashed = chain[4].replace(actor="mallory")
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


# --- copy_sealed: runs of a chain in one transaction; records_digest: the same on every backend --------
def indexes_of(ledger: Ledger) -> list[tuple[str, str]]:
    """The records table's indexes (name, definition) of a SQL ledger; none for the memory one."""
    if isinstance(ledger, MemoryLedger):
        return []
    url = str(getattr(ledger, "url", ""))
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url) as conn:
            found = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'rt_records'")
            return sorted((str(n), str(d)) for n, d in found.fetchall())
    import sqlite3

    with sqlite3.connect(str(getattr(ledger, "path", ""))) as conn:
        found = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rt_records'")
        return sorted((str(n), str(d)) for n, d in found.fetchall())


@pytest.mark.parametrize("held", [0, 2])
def test_runs_copied_are_one_transaction(make: Any, held: int) -> None:
    """A run found unsound (its bytes do not hash, or it does not follow the run before it) after
    others were stored leaves the ledger as it was: records, query rows and indexes."""
    chain = source_chain()
    target = make()
    target.append_sealed(chain[:held])
    before = [e.hash for e in target.read()] if held else [], rows_of(target), indexes_of(target)
    assert len(before[2]) >= 5 or isinstance(target, MemoryLedger)  # the keys and four secondary indexes
    altered = chain[8].replace(payload=b'{"n":666}')
    with pytest.raises(IntegrityError, match=r"ledger seq 9 .*payload does not hash.*nothing was written"):
        target.copy_sealed([(chain[held:5], {}), (chain[5:8], {}), ([altered, *chain[9:]], {})])
    with pytest.raises(IntegrityError, match="does not follow seq 5"):
        target.copy_sealed([(chain[held:5], {}), (chain[6:], {})])
    assert ([e.hash for e in target.read()] if target.head_seq() else [], rows_of(target), indexes_of(target)) == before
    assert target.copy_sealed([(chain[held:5], {}), (chain[5:], {})]) == len(chain) - held
    reference = MemoryLedger()
    reference.append_sealed(chain)
    assert list(target.read()) == chain and rows_of(target) == rows_of(reference)
    assert indexes_of(target) == before[2]


ODD = ['quote " back \\ slash', "3:abc", "ä ö ü", "日本語", "😀", "colon:", "x" * 300, "12"]


def odd_chain() -> tuple[list[Envelope], dict[int, Any]]:
    """Records whose texts hold what a joined text could confuse (digits and colons, quotes, wide
    characters), with and without a subject, and signatures beside some of them."""
    from reviewtrail.ledger import RecordSignature

    source = MemoryLedger()
    first = source.append([rec(i, actor=text, subject=ODD[-1 - i] if i % 3 else None) for i, text in enumerate(ODD)])
    source.append([rec(50, supersedes=first[1].id, payload={"s": "日本", "file": {"hash": "cd" * 32, "size": 1}})])
    chain = list(source.read())
    signatures = {e.seq: RecordSignature(f"key-{e.seq}", bytes([e.seq]) * 64) for e in chain if e.seq % 2}
    return chain, signatures


def test_records_digest_is_the_same_on_every_backend(make: Any) -> None:
    chain, signatures = odd_chain()
    target = make()
    assert target.copy_sealed([(chain[:4], signatures), (chain[4:], signatures)]) == len(chain)
    reference = MemoryLedger()  # the digest written in Python, over the same records and signatures
    reference.append_sealed(chain, signatures=signatures)
    end = len(chain)
    for start, stop in [(1, end), (2, 5), (end, end), (end + 1, end + 9)]:
        assert target.records_digest(start, stop) == reference.records_digest(start, stop), (start, stop)
    assert target.records_digest(1, end)[0] == end and target.records_digest(end + 1, end + 9)[0] == 0
    unsigned = MemoryLedger()
    unsigned.append_sealed(chain)
    assert unsigned.records_digest(1, end) != reference.records_digest(1, end)


EDITS = [
    "UPDATE rt_records SET actor = actor || 'x' WHERE seq = 3",
    "UPDATE rt_records SET subject = '' WHERE seq = 1",
    "UPDATE rt_records SET subject = NULL WHERE seq = 2",
    "UPDATE rt_records SET time = '2020-01-01T00:00:00.000000Z' WHERE seq = 4",
    "UPDATE rt_records SET payload = ? WHERE seq = 5",
    "UPDATE rt_signatures SET sig = ? WHERE seq = 1",
    "UPDATE rt_signatures SET key_id = 'key-x' WHERE seq = 3",
    "DELETE FROM rt_signatures WHERE seq = 5",
    "INSERT INTO rt_signatures (seq, key_id, sig) VALUES (2, 'key-2', ?)",
]


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
@pytest.mark.parametrize("edit", EDITS)
def test_any_field_edited_changes_the_digest(
    request: pytest.FixtureRequest, tmp_path: Path, kind: str, edit: str
) -> None:
    chain, signatures = odd_chain()
    url = str(request.getfixturevalue("pg_server").new_database()) if kind == "postgres" else ""
    url = url or f"sqlite:///{tmp_path / 'l.sqlite'}"
    with open_ledger(url) as ledger:
        ledger.append_sealed(chain, signatures=signatures)
        before = ledger.records_digest(1, len(chain))
    params = (b'{"n":5 }',) if "payload" in edit else (bytes(64),) if "?" in edit else ()
    if kind == "postgres":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET session_replication_role = replica")  # the append-only triggers off
            conn.execute(edit.replace("?", "%s"), params)  # type: ignore[arg-type]
    else:
        import sqlite3

        with sqlite3.connect(tmp_path / "l.sqlite") as conn:
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                conn.execute(f"DROP TRIGGER {name}")
            conn.execute(edit, params)
    with open_ledger(url, create=False) as ledger:
        after = ledger.records_digest(1, len(chain))
        assert after[0] == len(chain) and after != before
        assert ledger.records_digest(6, len(chain)) == python_digest(chain[5:], signatures)


def python_digest(chain: list[Envelope], signatures: dict[int, Any]) -> tuple[int, str]:
    """The digest the memory ledger (Python) gives of a run of ``chain`` with its ``signatures``."""
    import hashlib

    from reviewtrail.ledger import record_text

    digest = hashlib.sha256()
    for env in chain:
        digest.update(record_text(env, signatures.get(env.seq)).encode())
    return len(chain), digest.hexdigest()
