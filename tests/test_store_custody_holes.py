"""Holes a hostile campaign found in the store's custody, each closed: a rewritten marker, store
files replaced by symlinks, a dropped query table, writes a trigger swallows, and a checkpoint of a
damaged chain."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from conftest import init_cli_store, run_cli
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.errors import IntegrityError
from reviewtrail.ledger import NewRecord, make_checkpoint
from reviewtrail.verify import verify_store

APPEND_ONLY = {
    "rt_records_no_update": "CREATE TRIGGER rt_records_no_update BEFORE UPDATE ON rt_records "
    "BEGIN SELECT RAISE(ABORT, 'ledger records are append-only'); END",
    "rt_records_no_delete": "CREATE TRIGGER rt_records_no_delete BEFORE DELETE ON rt_records "
    "BEGIN SELECT RAISE(ABORT, 'ledger records are append-only'); END",
}


def _settings(tmp_path: Path) -> Settings:
    root = tmp_path / "store"
    return Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")


def _populated(tmp_path: Path) -> Settings:
    settings = _settings(tmp_path)
    with init_store(settings) as store:
        ref = store.cas.put(b"kept bytes\n")
        store.append(
            [
                NewRecord(type="t.file@1", actor="x", privacy="private", payload={"file": ref.to_json()}),
                NewRecord(type="t.note@1", actor="x", privacy="private", payload={"n": 1}),
            ]
        )
    return settings


@contextmanager
def _db(settings: Settings) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(settings.store / "ledger.sqlite", isolation_level=None)) as conn:
        yield conn


@contextmanager
def _unguarded(settings: Settings) -> Iterator[sqlite3.Connection]:
    """The append-only triggers dropped for the block and put back after it."""
    with _db(settings) as conn:
        for name in APPEND_ONLY:
            conn.execute(f"DROP TRIGGER {name}")
        yield conn
        for sql in APPEND_ONLY.values():
            conn.execute(sql)


def _downgrade(settings: Settings) -> None:
    (settings.store / "reviewtrail-store.json").write_text('{"format": 1}')


# --- 1. a marker rewritten without its identity ---------------------------------------------------
def test_a_marker_rewritten_without_identity_is_refused_and_init_restores_it(tmp_path: Path) -> None:
    settings = _populated(tmp_path)
    _downgrade(settings)
    with pytest.raises(IntegrityError, match=r"marker names no identity, but .* holds the identity record") as err:
        open_store(settings)
    assert err.value.exit_code == 4
    with open_store(settings, check_identity=False) as store:
        report = verify_store(store)
    assert not report.ok and not report.chain_ok
    assert any("marker names no identity" in p for p in report.problems), report.problems
    init_store(settings).close()  # adopts the ledger's identity record again
    with open_store(settings) as store:
        assert store.store_id is not None and verify_store(store).ok


def test_a_rewritten_marker_over_an_emptied_ledger_is_reported(tmp_path: Path) -> None:
    settings = _populated(tmp_path)
    _downgrade(settings)
    with _unguarded(settings) as conn:
        conn.execute("DELETE FROM rt_records")
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'rt_p_%'"):
            conn.execute(f"DELETE FROM {name}")
    with open_store(settings, check_identity=False) as store:
        problems = verify_store(store).problems
    assert any("is empty but the CAS holds 1 object(s)" in p for p in problems), problems


def test_an_older_store_without_identity_still_verifies(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    settings.store.mkdir()
    from reviewtrail.app import catalog
    from reviewtrail.cas import FilesystemCas
    from reviewtrail.ledger import open_ledger

    FilesystemCas(settings.store, create=True)

    with open_ledger(settings.database_url, catalog=catalog(), create=True) as ledger:
        ledger.append([NewRecord(type="t.note@1", actor="x", privacy="private", payload={"n": 1})])
    _downgrade(settings)
    with open_store(settings) as store:
        report = verify_store(store)
    assert report.ok, report.problems
    assert any("no recorded identity" in n for n in report.notes)


# --- 2. store files replaced by symlinks ----------------------------------------------------------
@pytest.mark.parametrize("name", ["ledger.sqlite", "reviewtrail-store.json", "ledger.sqlite-wal"])
def test_a_store_file_replaced_by_a_symlink_is_refused(tmp_path: Path, name: str) -> None:
    settings = _populated(tmp_path)
    path = settings.store / name
    outside = tmp_path / f"outside-{name}"
    if path.exists():
        shutil.copy(path, outside)
        path.unlink()
    else:  # the WAL is removed when the last connection closes: one planted in its place
        outside.write_bytes(b"")
    path.symlink_to(outside)
    with pytest.raises(IntegrityError, match=f"{name} is a symlink") as err:
        open_store(settings, check_identity=False)
    assert err.value.exit_code == 4


def test_a_symlinked_store_file_is_reported_by_verify(tmp_path: Path) -> None:
    settings = _populated(tmp_path)
    marker = settings.store / "reviewtrail-store.json"
    with open_store(settings) as store:
        outside = tmp_path / "outside.json"
        shutil.copy(marker, outside)
        marker.unlink()
        marker.symlink_to(outside)
        problems = verify_store(store).problems
    assert any("reviewtrail-store.json is a symlink" in p for p in problems), problems


def test_a_fifo_in_place_of_the_marker_is_refused(tmp_path: Path) -> None:
    import os

    settings = _populated(tmp_path)
    marker = settings.store / "reviewtrail-store.json"
    marker.unlink()
    os.mkfifo(marker)
    with pytest.raises(IntegrityError, match="not a regular file"):
        open_store(settings)


# --- 3. a dropped query table ---------------------------------------------------------------------
def test_a_dropped_query_table_is_an_integrity_failure_and_repair_rebuilds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    assert run_cli("cas", "put", "--help")[0] == 0
    (project / "a.txt").write_text("a")
    assert run_cli("artifact", "upload", "a.txt", "a.txt")[0] == 0
    with closing(sqlite3.connect(project / "store" / "ledger.sqlite", isolation_level=None)) as conn:
        conn.execute("DROP TABLE rt_p_cas_refs")
        conn.execute("DROP TABLE rt_p_prov_artifact_versions")
    code, out, err = run_cli("verify", "--json")
    assert code == 4, (out, err)
    problems = json.loads(out)["problems"]
    assert any("rt_p_cas_refs was dropped" in p for p in problems), problems
    code, _, err = run_cli("artifact", "ls")
    assert code == 4 and "rt_p_prov_artifact_versions" in err, err
    assert run_cli("verify", "--repair")[0] == 4
    code, out, err = run_cli("verify")
    assert code == 0, (out, err)


# --- 4. an append a trigger swallows (SQLite; PostgreSQL rules in test_custody_postgres) ----------
def test_an_append_a_trigger_swallows_is_refused_with_nothing_written(tmp_path: Path) -> None:
    settings = _populated(tmp_path)
    with _db(settings) as conn:
        conn.execute("CREATE TRIGGER swallow BEFORE INSERT ON rt_records BEGIN SELECT RAISE(IGNORE); END")
    with open_store(settings) as store:
        head = store.ledger.head()
        with pytest.raises(IntegrityError, match="was not stored as sealed") as err:
            store.append([NewRecord(type="t.note@1", actor="x", privacy="private", payload={"n": 3})])
        assert err.value.exit_code == 4 and store.ledger.head() == head


def test_query_rows_a_trigger_swallows_fail_the_append(tmp_path: Path) -> None:
    settings = _populated(tmp_path)
    with _db(settings) as conn:
        conn.execute("CREATE TRIGGER swallow BEFORE INSERT ON rt_p_cas_refs BEGIN SELECT RAISE(IGNORE); END")
    with open_store(settings) as store:
        head = store.ledger.head()
        ref = store.cas.put(b"more bytes\n")
        with pytest.raises(IntegrityError, match="query table rt_p_cas_refs, 0 stored"):
            store.append([NewRecord(type="t.file@1", actor="x", privacy="private", payload={"f": ref.to_json()})])
        assert store.ledger.head() == head


# --- 5. a checkpoint of a damaged chain -----------------------------------------------------------
def test_a_checkpoint_of_a_damaged_chain_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _populated(tmp_path)
    with _unguarded(settings) as conn:
        conn.execute("UPDATE rt_records SET actor = 'mallory' WHERE seq = 2")
    with open_store(settings) as store, pytest.raises(IntegrityError, match="chain does not verify"):
        make_checkpoint(store.ledger, store_id=store.store_id, private_key_pem=None)
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(settings.store))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", settings.database_url)
    code, out, err = run_cli("ledger", "checkpoint", "--out", str(tmp_path / "cp.json"))
    assert code == 4 and "seq 2" in err, (out, err)
    assert not (tmp_path / "cp.json").exists()
