"""Whole-store verification: every object, every link, every reference; any changed byte is reported."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from reviewtrail.app import init_store, open_store
from reviewtrail.cas import CasRef, FilesystemCas, MemoryCas
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError, StoreNotInitializedError
from reviewtrail.ledger import MemoryLedger, NewRecord
from reviewtrail.store import Store
from reviewtrail.verify import verify_store


def make_store(tmp_path: Path) -> Store:
    root = tmp_path / "store"
    return init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))


def populate(store: Store) -> list[CasRef]:
    a = store.cas.put(b"alpha file bytes\n", media_type="text/plain")
    b = store.cas.put(b"agent transcript", pool="agent-state")
    store.append(
        [
            NewRecord(type="t.file@1", actor="x", privacy="private", payload={"file": a.to_json()}),
            NewRecord(type="t.run@1", actor="x", privacy="private", payload={"log": b.object_ref().to_json()}),
            NewRecord(type="t.note@1", actor="x", privacy="public-source", payload={"text": "no refs"}),
        ]
    )
    return [a, b]


def test_intact_store_verifies(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        populate(store)
        report = verify_store(store)
    assert report.ok, report.problems
    assert (report.objects_checked, report.records_checked, report.refs_checked) == (2, 4, 2)  # + identity


def test_verify_reports_progress(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    with make_store(tmp_path) as store:
        populate(store)
        verify_store(store, progress=lambda phase, adv, total: seen.append((phase, adv, total)))
    assert seen.count(("objects", 1, 2)) == 2 and seen.count(("records", 1, 4)) == 4


def test_every_byte_of_every_object_is_covered(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        refs = populate(store)
        cas = store.cas
        assert isinstance(cas, FilesystemCas)
        for ref in refs:
            path = cas.object_path(ref.pool, ref.hash)
            original = path.read_bytes()
            path.chmod(0o644)
            for i in range(len(original)):
                changed = bytearray(original)
                changed[i] ^= 0x20
                path.write_bytes(bytes(changed))
                report = verify_store(store)
                assert not report.ok
                assert any(ref.hash in p for p in report.problems), (i, report.problems)
            path.write_bytes(original)
        assert verify_store(store).ok


def test_every_byte_of_every_record_is_covered(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        populate(store)
    db = tmp_path / "store" / "ledger.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER rt_records_no_update")
    columns = ["id", "type", "time", "actor", "privacy", "subject", "payload", "payload_hash", "prev_hash", "hash"]
    rows = conn.execute(f"SELECT seq, {', '.join(columns)} FROM rt_records").fetchall()
    conn.commit()
    for row in rows:
        seq = row[0]
        for col, value in zip(columns, row[1:], strict=True):
            if value is None:
                continue
            raw = bytes(value) if isinstance(value, bytes) else value.encode()
            for i in range(0, len(raw), max(1, len(raw) // 7)):
                changed = bytearray(raw)
                changed[i] ^= 0x01
                new: bytes | str = bytes(changed) if isinstance(value, bytes) else bytes(changed).decode("latin-1")
                conn.execute(f"UPDATE rt_records SET {col} = ? WHERE seq = ?", (new, seq))
                conn.commit()
                settings = Settings(store=tmp_path / "store", database_url=f"sqlite:///{db}")
                with open_store(settings, check_identity=False) as store:
                    report = verify_store(store)
                assert not report.ok, (seq, col, i)
                conn.execute(f"UPDATE rt_records SET {col} = ? WHERE seq = ?", (value, seq))
                conn.commit()
    conn.execute(
        "CREATE TRIGGER rt_records_no_update BEFORE UPDATE ON rt_records "
        "BEGIN SELECT RAISE(ABORT, 'ledger records are append-only'); END"
    )
    conn.commit()
    conn.close()
    with open_store(Settings(store=tmp_path / "store", database_url=f"sqlite:///{db}")) as store:
        assert verify_store(store).ok


def test_missing_and_wrong_size_references_are_reported(tmp_path: Path) -> None:
    cas, ledger = MemoryCas(), MemoryLedger()
    store = Store(cas, ledger)
    ref = cas.put(b"12345")
    ghost = hashlib.sha256(b"never stored").hexdigest()
    ledger.append(
        [
            NewRecord(type="t.a@1", actor="x", privacy="private", payload={"f": {"hash": ghost, "size": 12}}),
            NewRecord(type="t.b@1", actor="x", privacy="private", payload={"f": {"hash": ref.hash, "size": 4}}),
            NewRecord(
                type="t.c@1",
                actor="x",
                privacy="private",
                payload={"f": CasRef(pool="agent-state", digest=ref.digest, size=5).to_json()},
            ),
        ]
    )
    problems = verify_store(store).problems
    assert any("seq 1" in p and "missing" in p for p in problems)
    assert any("seq 2" in p and "size 4" in p for p in problems)
    assert any("seq 3" in p and "agent-state" in p for p in problems)


def test_store_append_refuses_dangling_references(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        ghost = {"hash": "0" * 64, "size": 1}
        with pytest.raises(InvalidInputError) as err:
            store.append([NewRecord(type="t.a@1", actor="x", privacy="private", payload={"f": ghost})])
        assert err.value.field == "records[0].payload"
        head = store.ledger.head()
        assert head is not None and head.type == "store.identity@1"


def test_legacy_objects_are_verified(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        data = b"written by an old version"
        h = hashlib.sha256(data).hexdigest()
        legacy = tmp_path / "store" / "cas" / "sha256" / h[:2] / h
        legacy.parent.mkdir(parents=True)
        legacy.write_bytes(data)
        store.append(
            [NewRecord(type="t.a@1", actor="x", privacy="private", payload={"f": {"hash": h, "size": len(data)}})]
        )
        assert verify_store(store).ok
        legacy.write_bytes(data + b"!")
        problems = verify_store(store).problems
        assert any(h in p and "legacy" in p for p in problems)


def test_stray_files_in_blobs_are_reported(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        (tmp_path / "store" / "versioning" / "data" / "blobs" / "sha256" / "tmp-123").write_bytes(b"x")
        problems = verify_store(store).problems
    assert any("stray file 'tmp-123'" in p for p in problems)


def test_open_requires_init(tmp_path: Path) -> None:
    with pytest.raises(StoreNotInitializedError):
        open_store(Settings(store=tmp_path / "none", database_url="memory:"))


def test_init_is_idempotent_and_keeps_data(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        populate(store)
    with make_store(tmp_path) as store:
        assert verify_store(store).ok
        head = store.ledger.head()
        assert head is not None and head.seq == 4  # the identity record, then populate's three


def test_interrupted_write_leftovers_are_noted_and_cleanable(tmp_path: Path) -> None:
    import os

    with make_store(tmp_path) as store:
        populate(store)
        ingest = tmp_path / "store" / "versioning" / "data" / "ingest"
        old, fresh = ingest / "put-old", ingest / "put-fresh"
        old.write_bytes(b"partial")
        fresh.write_bytes(b"in progress")
        os.utime(old, (1_000_000, 1_000_000))
        report = verify_store(store)
        # Mentioned at once, with their size (a fresh one may be a write in progress: a note, not a problem).
        assert report.ok and len(report.notes) == 1 and "2 temporary file(s) (18 bytes)" in report.notes[0]
        cas = store.cas
        assert isinstance(cas, FilesystemCas)
        assert cas.clean_ingest() == [old]
        assert fresh.exists() and not old.exists()
        assert ["1 temporary file(s) (11 bytes)" in n for n in verify_store(store).notes] == [True]
        fresh.unlink()
        assert verify_store(store).notes == []
        assert verify_store(store).objects_checked == 2


def test_rows_outside_the_chain_and_a_cut_tail_are_reported(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        [a, _b] = populate(store)
        store.append([NewRecord(type="t.tail@1", actor="x", privacy="private", payload={"f": a.to_json()})])
    db = tmp_path / "store" / "ledger.sqlite"
    settings = Settings(store=tmp_path / "store", database_url=f"sqlite:///{db}")
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO rt_records (seq, id, type, time, actor, privacy, subject, supersedes, payload, payload_hash,"
        " prev_hash, hash) VALUES (0, 'forged', 't.x@1', 't', 'mallory', 'private', NULL, NULL, X'7B7D', 'a', 'b', 'c')"
    )
    conn.commit()
    with open_store(settings) as store:
        assert any("rows stored" in p for p in verify_store(store).problems)
    conn.execute("DROP TRIGGER rt_records_no_delete")
    conn.execute("DELETE FROM rt_records WHERE seq = 0")
    conn.execute("DELETE FROM rt_records WHERE seq = 5")  # the last record; seq 1..4 still chain
    conn.commit()
    conn.close()
    with open_store(settings) as store:
        assert [e.seq for e in store.ledger.read()] == [1, 2, 3, 4]
        problems = verify_store(store).problems
    assert any("beyond the last record" in p for p in problems), problems


def test_a_folder_named_like_an_object_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        populate(store)
        bogus = tmp_path / "store" / "versioning" / "data" / "blobs" / "sha256" / ("ab" * 32)
        bogus.mkdir()
        report = verify_store(store)
        assert not report.ok and any("ab" * 32 in p and "not a regular file" in p for p in report.problems)
        assert store.cas.verify("ab" * 32) is False
