"""A long verify walks the later half of the records in a forked process: the report must be the
one a single walk gives, on sound and damaged ledgers, and damage at the seam included."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import reviewtrail.verify._records as verify_records
from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.ledger import NewRecord
from reviewtrail.verify import VerifyReport, verify_store


def report_of(settings: Settings, *, split: bool, monkeypatch: pytest.MonkeyPatch) -> VerifyReport:
    monkeypatch.setattr(verify_records, "SPLIT_AT_LEAST", 10 if split else 10**9)
    monkeypatch.setattr(verify_records, "spare_core", lambda: True)  # however busy the test machine is
    started: list[int] = []
    original = verify_records._Second.start.__func__  # type: ignore[attr-defined]

    def counted(cls: type, step: object, middle: int, end: int) -> object:
        second = original(cls, step, middle, end)
        started.append(second is not None)
        return second

    monkeypatch.setattr(verify_records._Second, "start", classmethod(counted))
    with init_store(settings) as store:
        report = verify_store(store)
    assert started == ([True] if split else [])
    return report


def build(tmp_path: Path) -> Settings:
    root = tmp_path / "store"
    settings = Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    with init_store(settings) as store:
        refs = [store.cas.put(f"object {i}".encode()).to_json() for i in range(3)]
        for start in range(0, 40, 10):
            store.append(
                NewRecord(type="t.rec@1", actor="x", privacy="private", payload={"f": refs[i % 3], "i": i})
                for i in range(start, start + 10)
            )
    return settings  # seq 1..41; the walk splits at seq 21


def tamper(settings: Settings, *statements: str) -> None:
    conn = sqlite3.connect(settings.store / "ledger.sqlite")
    conn.execute("DROP TRIGGER IF EXISTS rt_records_no_update")
    conn.execute("DROP TRIGGER IF EXISTS rt_records_no_delete")
    for sql in statements:
        conn.execute(sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "damage",
    [
        (),
        ("UPDATE rt_records SET payload = X'7B7D' WHERE seq IN (5, 30)",),  # one record in each half
        ("UPDATE rt_records SET hash = 'ab' WHERE seq = 20",),  # the record the second half starts after
        ("DELETE FROM rt_records WHERE seq = 20",),  # a gap at the seam
        ("DELETE FROM rt_records WHERE seq = 21",),
        ("UPDATE rt_records SET prev_hash = 'cd' WHERE seq = 21",),
        ("DELETE FROM rt_p_cas_refs WHERE seq IN (3, 33)", "UPDATE rt_p_cas_refs SET size = 9 WHERE seq = 25"),
    ],
)
def test_a_split_walk_reports_what_one_walk_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: tuple[str, ...]
) -> None:
    settings = build(tmp_path)
    tamper(settings, *damage)
    one = report_of(settings, split=False, monkeypatch=monkeypatch)
    two = report_of(settings, split=True, monkeypatch=monkeypatch)
    assert two.problems == one.problems
    assert (two.records_checked, two.refs_checked, two.rows_checked) == (
        one.records_checked,
        one.refs_checked,
        one.rows_checked,
    )
    assert two.chain_ok == one.chain_ok == (not damage or damage[0].startswith("DELETE FROM rt_p"))
    assert not list(Path(tmp_path).glob("**/reviewtrail-verify-*"))


def test_a_second_process_that_fails_leaves_the_walk_to_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = build(tmp_path)
    tamper(settings, "UPDATE rt_records SET payload = X'7B7D' WHERE seq = 30")
    one = report_of(settings, split=False, monkeypatch=monkeypatch)

    monkeypatch.setattr(verify_records, "verify_reads", lambda ledger: _Broken(ledger))
    monkeypatch.setattr(verify_records, "SPLIT_AT_LEAST", 10)
    monkeypatch.setattr(verify_records, "spare_core", lambda: True)
    with init_store(settings) as store:
        two = verify_store(store)
    assert two.problems == one.problems and two.records_checked == one.records_checked == 41


class _Broken:
    """The ledger's own reads, but no second connection (the forked process reports an error)."""

    def __init__(self, ledger: object) -> None:
        self._ledger = ledger

    def __getattr__(self, name: str) -> object:
        return getattr(self._ledger, name)

    def reopen(self) -> None:
        raise RuntimeError("no second connection")


@pytest.mark.postgres
def test_a_split_walk_on_postgres(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    root = tmp_path / "store"
    settings = Settings(store=root, database_url=pg_url)
    with init_store(settings) as store:
        store.append(NewRecord(type="t.rec@1", actor="x", privacy="private", payload={"i": i}) for i in range(40))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE rt_records DISABLE TRIGGER USER")
        conn.execute("UPDATE rt_records SET payload = '\\x7b7d' WHERE seq IN (7, 35)")
        conn.execute("ALTER TABLE rt_records ENABLE TRIGGER USER")
    one = report_of(settings, split=False, monkeypatch=monkeypatch)
    two = report_of(settings, split=True, monkeypatch=monkeypatch)
    assert two.problems == one.problems and any("seq 35" in p for p in two.problems)


def test_no_second_process_without_a_spare_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify_records.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(verify_records.os, "getloadavg", lambda: (1.5, 0.0, 0.0))
    assert not verify_records.spare_core()
    monkeypatch.setattr(verify_records.os, "getloadavg", lambda: (1.2, 0.0, 0.0))  # this process, mostly
    assert verify_records.spare_core()
    monkeypatch.setattr(verify_records.os, "cpu_count", lambda: 1)
    assert not verify_records.spare_core()


def test_a_first_half_that_fails_leaves_no_scratch_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    import reviewtrail.verify._projections as projection_check

    settings = build(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(verify_records, "SPLIT_AT_LEAST", 10)
    monkeypatch.setattr(verify_records, "spare_core", lambda: True)
    add = projection_check.ProjectionCheck.add

    def failing(self: projection_check.ProjectionCheck, env: object) -> None:
        if getattr(env, "seq", 0) == 5:  # in the first half only
            raise RuntimeError("the first half fails")
        add(self, env)  # type: ignore[arg-type]

    monkeypatch.setattr(projection_check.ProjectionCheck, "add", failing)
    with init_store(settings) as store, pytest.raises(RuntimeError, match="first half"):
        verify_store(store)
    assert list(scratch.iterdir()) == []
