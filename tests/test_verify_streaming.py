"""verify compares query tables and finds ids used twice without holding every row or id: the
mechanism is tested (small batches, the materializing reads forbidden) against the comparison
it replaced (every row in a dict), on the same damaged stores. No timing, no memory measure."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest

import reviewtrail.verify._projections as projection_check
from reviewtrail.app import init_store
from reviewtrail.cas import MemoryCas
from reviewtrail.config import Settings
from reviewtrail.ledger import (
    ROW_SEQ,
    Ledger,
    MemoryLedger,
    NewRecord,
    chain_problems,
    new_id,
    projection_rows,
    verify_reads,
)
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from reviewtrail.verify._row_diff import MAX_REPORTED_PER_TABLE as MAX


def reference_problems(ledger: Ledger) -> list[str]:
    """The comparison verify made before it streamed: both sides in memory, by key."""
    tables = ledger.tables
    expected: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {t: {} for t in tables}
    for env in ledger.read():
        try:
            rows = projection_rows([env], ledger.projections)
        except Exception:
            continue
        for table, row in rows:
            expected[table][tuple(row[k] for k in tables[table].key)] = row
    problems: list[str] = []
    dropped = set(ledger.missing_tables())

    def label(key: tuple[str, ...], values: tuple[Any, ...]) -> str:
        return "{" + ", ".join(f"{k}={v!r}" for k, v in zip(key, values, strict=True)) + "}"

    for table, spec in sorted(tables.items()):
        if table in dropped:
            problems.append(
                f"query table {table}: the table rt_p_{table} was dropped "
                f"({len(expected[table])} row(s) of the chain missing)"
            )
            continue
        stored = {tuple(r.get(k) for k in spec.key): r for r in ledger.stored_rows(table)}
        want_all = expected[table]
        found = [
            f"query table {table}: row {label(spec.key, k)} was added (no record gives it)"
            for k in sorted(stored.keys() - want_all.keys(), key=repr)
        ]
        found += [
            f"query table {table}: row {label(spec.key, k)} is missing (record seq {want_all[k][ROW_SEQ]} gives it)"
            for k in sorted(want_all.keys() - stored.keys(), key=repr)
        ]
        for k in sorted(stored.keys() & want_all.keys(), key=repr):
            have, want = stored[k], want_all[k]
            diffs = [f"{c}={have.get(c)!r} (chain: {want.get(c)!r})" for c in want if have.get(c) != want.get(c)]
            if diffs:
                found.append(f"query table {table}: row {label(spec.key, k)} was edited: {', '.join(diffs)}")
        if len(found) > MAX:
            found = [*found[:MAX], f"query table {table}: … and {len(found) - MAX} more row problem(s)"]
        problems.extend(found)
    return problems


def fill(store: Store, records: int) -> None:
    refs = [store.cas.put(f"object {i}".encode()).to_json() for i in range(7)]
    ids = [new_id() for _ in range(records)]
    for start in range(0, records, 50):
        batch = []
        for i in range(start, min(records, start + 50)):
            extra = {"supersedes": ids[i - 3]} if i >= 3 and i % 3 == 0 else {}
            payload = {"f": refs[i % 7], "g": [refs[(i + 1) % 7]], "i": i, "text": "é∂" if i % 5 else "plain"}
            batch.append(NewRecord(type="t.rec@1", actor="x", privacy="private", payload=payload, id=ids[i], **extra))
        store.append(batch)


def streamed(ledger: Ledger) -> list[str]:
    """The streaming comparison, in batches of 7 rows, reading stored rows 5 at a time, with the
    reads that hold a whole table forbidden."""
    import reviewtrail.ledger.backends._postgres as pg
    import reviewtrail.ledger.backends._sql as sql

    held: list[int] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sql, "_SCAN_BATCH", 5)
        mp.setattr(pg, "_SCAN_BATCH", 5)
        if isinstance(ledger, sql.SqlLedger):
            mp.setattr(ledger, "stored_rows", lambda table: pytest.fail(f"stored_rows({table}) materializes"))
        with projection_check.ProjectionCheck(ledger, batch=7) as check:
            flush = check._flush

            def counted_flush() -> None:
                held.append(check._held)
                flush()

            mp.setattr(check, "_flush", counted_flush)
            for env in ledger.read():
                check.add(env)
            problems = check.problems()
            folder = Path(check._folder)
    assert not folder.exists()  # the scratch database is removed
    assert held and max(held) < 7 + 10  # never more than a batch (and one record's rows) in memory
    return problems


def damage(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM rt_p_cas_refs WHERE seq % 4 = 1")  # > MAX problems: the first ones are kept
    conn.execute("UPDATE rt_p_cas_refs SET size = size + 1 WHERE seq % 11 = 2")
    conn.execute("UPDATE rt_p_supersessions SET by_id = 'forged' WHERE seq = 9")
    conn.execute("UPDATE rt_p_supersessions SET rt_seq = 1 WHERE seq = 12")
    conn.execute("INSERT INTO rt_p_supersessions (superseded_id, by_id, seq, rt_seq) VALUES ('é', 'z', 3, 3)")
    conn.execute("INSERT INTO rt_p_supersessions (superseded_id, by_id, seq, rt_seq) VALUES (X'61', 'b', 3, NULL)")
    conn.execute("INSERT INTO rt_p_cas_refs (seq, hash, size, pool, rt_seq) VALUES ('7', 'h', 1, '', 7)")
    conn.commit()
    conn.close()


def test_streamed_comparison_reports_what_the_in_memory_one_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "store"
    settings = Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    with init_store(settings) as store:
        fill(store, 300)
        assert streamed(store.ledger) == reference_problems(store.ledger) == []
    damage(root / "ledger.sqlite")
    with init_store(settings) as store:
        want = reference_problems(store.ledger)
        assert sum("… and" in p for p in want) == 1 and len(want) > MAX  # truncated and not
        assert streamed(store.ledger) == want
        report = verify_store(store)
        assert [p for p in report.problems if p.startswith("query table")] == want


def test_a_dropped_table_is_counted_from_the_scratch_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "store"
    settings = Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    with init_store(settings) as store:
        fill(store, 120)
    conn = sqlite3.connect(root / "ledger.sqlite")
    conn.execute("DROP TABLE rt_p_supersessions")
    conn.commit()
    conn.close()
    with init_store(settings) as store:
        want = reference_problems(store.ledger)
        assert any("was dropped (39 row(s)" in p for p in want)
        assert streamed(store.ledger) == want


def test_the_memory_ledger_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(MemoryCas(), MemoryLedger())
    fill(store, 90)
    ledger = store.ledger
    assert isinstance(ledger, MemoryLedger)
    spec = ledger.tables["cas_refs"]
    rows = ledger.recorder._tables_data["cas_refs"]
    for key in [k for k in rows if k[0] % 4 == 1]:
        del rows[key]
    some = next(iter(rows))
    rows[some] = {**rows[some], "size": -1}
    rows[(0, "h", "")] = {"seq": 0, "hash": "h", "size": 1, "pool": "", ROW_SEQ: 0}
    assert spec.key == ("seq", "hash", "pool")
    want = reference_problems(ledger)
    assert want and streamed(ledger) == want


def test_ids_used_twice_come_from_the_ledger_not_a_set() -> None:
    ledger = MemoryLedger()
    envs = ledger.append([NewRecord(type="t.a@1", actor="x", privacy="private", payload={"i": i}) for i in range(6)])
    ledger.tamper(4, id=envs[1].id)
    ledger.tamper(6, id=envs[1].id)
    with_set = list(chain_problems(ledger.read()))
    repeated = verify_reads(ledger).repeated_ids(start=1, end=6)
    assert repeated == {4: envs[1].id, 6: envs[1].id}
    assert list(chain_problems(ledger.read(), repeated_ids=repeated)) == with_set
    assert [p for p in with_set if "used twice" in p] == [
        f"ledger seq 4: id {envs[1].id} used twice",
        f"ledger seq 6: id {envs[1].id} used twice",
    ]
    assert verify_reads(ledger).repeated_ids(start=5, end=6) == {6: envs[1].id}


def test_sqlite_finds_ids_used_twice_in_the_rows(tmp_path: Path) -> None:
    """A records table rebuilt without its UNIQUE constraint holds an id twice: found by one query."""
    root = tmp_path / "store"
    settings = Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    with init_store(settings) as store:
        envs = store.append([NewRecord(type="t.a@1", actor="x", privacy="private", payload={"i": i}) for i in range(4)])
    conn = sqlite3.connect(root / "ledger.sqlite")
    (ddl,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'rt_records'").fetchone()
    conn.executescript(
        "PRAGMA foreign_keys=OFF; ALTER TABLE rt_records RENAME TO old_records;"
        f"{ddl.replace('id TEXT NOT NULL UNIQUE', 'id TEXT NOT NULL')};"
        "INSERT INTO rt_records SELECT * FROM old_records; DROP TABLE old_records;"
    )
    conn.execute("UPDATE rt_records SET id = ? WHERE seq = 4", (envs[0].id,))
    conn.commit()
    conn.close()
    with init_store(settings) as store:
        assert verify_reads(store.ledger).repeated_ids(start=1, end=5) == {4: envs[0].id}
        problems = verify_store(store).problems
    assert f"ledger seq 4: id {envs[0].id} used twice" in problems


def test_scratch_rows_go_to_the_temporary_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = Store(MemoryCas(), MemoryLedger())
    fill(store, 10)
    with projection_check.ProjectionCheck(store.ledger) as check:
        assert Path(check._folder).parent == tmp_path
    assert list(tmp_path.iterdir()) == []


@pytest.mark.postgres
def test_postgres_streams_the_same_report(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    settings = Settings(store=tmp_path / "store", database_url=pg_url)
    with init_store(settings) as store:
        fill(store, 120)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM rt_p_cas_refs WHERE seq % 4 = 1")
        conn.execute("UPDATE rt_p_cas_refs SET size = size + 1 WHERE seq % 11 = 2")
        # Keys whose order differs between code points and a language's collation: 'B' < 'a' < 'é'.
        for first in ("B", "a", "é", "Z", "_"):
            conn.execute(
                "INSERT INTO rt_p_supersessions (superseded_id, by_id, seq, rt_seq) VALUES (%s, 'x', 3, 3)",
                (first,),
            )
    with init_store(settings) as store:
        want = reference_problems(store.ledger)
        assert len(want) > MAX
        assert streamed(store.ledger) == want
        with store.ledger.snapshot():  # inside verify's snapshot the stored rows stream from a named cursor
            assert streamed(store.ledger) == want


@pytest.mark.postgres
def test_postgres_since_looks_up_rows_a_later_record_gives(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    settings = Settings(store=tmp_path / "store", database_url=pg_url)
    with init_store(settings) as store:
        fill(store, 60)
        anchor = store.ledger.records_at([31])[31]
        assert verify_store(store, since=(31, anchor.hash)).ok
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM rt_p_supersessions WHERE rt_seq = 41")  # given by a record after seq 31
        conn.execute("UPDATE rt_p_supersessions SET rt_seq = 20 WHERE rt_seq = 50")  # now names an earlier one
        conn.execute("DELETE FROM rt_p_supersessions WHERE rt_seq = 11")  # only earlier records give it
    with init_store(settings) as store:
        report = verify_store(store, since=(31, anchor.hash))
        assert report.records_checked == 30 and report.since is not None
        rows = [p for p in report.problems if p.startswith("query table")]
        assert len(rows) == 2, rows
        assert "is missing (record seq 41 gives it)" in rows[0]
        assert "was edited: rt_seq=20 (chain: 50)" in rows[1]
        assert len([p for p in verify_store(store).problems if p.startswith("query table")]) == 3
        assert verify_store(store, since=(31, "0" * 64)).chain_ok is False
