"""Attacks on the custody promise: each one must make `verify` (and reads) fail, never say "intact".

Every test here was written as an attack first and failed on the code before the fix: a deleted,
emptied, replaced or damaged ledger; edited, added or deleted query-table rows; dropped or
replaced append-only triggers; edited layout files and swapped blobs.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewtrail.app import init_store, open_store
from reviewtrail.cas import FilesystemCas
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.errors import (
    IntegrityError,
    LedgerMissingError,
    ReadOnlyStoreError,
    StorageFullError,
)
from reviewtrail.ledger import NewRecord
from reviewtrail.verify import verify_store

runner = CliRunner()


def settings_for(root: Path, url: str | None = None) -> Settings:
    return Settings(store=root, database_url=url or f"sqlite:///{root / 'ledger.sqlite'}")


def populated(root: Path, url: str | None = None) -> Settings:
    settings = settings_for(root, url)
    with init_store(settings) as store:
        a = store.cas.put(b"alpha\n", media_type="text/plain")
        b = store.cas.put(b"beta", pool="agent-state")
        [first, *_] = store.append(
            [
                NewRecord(type="t.file@1", actor="x", privacy="private", payload={"file": a.to_json()}),
                NewRecord(type="t.run@1", actor="x", privacy="private", payload={"log": b.to_json()}),
            ]
        )
        store.append([NewRecord(type="t.fix@1", actor="x", privacy="private", supersedes=first.id, payload={})])
    return settings


def verify_cli(settings: Settings, monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[int, dict[str, object]]:
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(settings.store))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", settings.database_url)
    monkeypatch.chdir(settings.store.parent)
    result = runner.invoke(app, ["verify", "--json", *extra])
    doc = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, doc


def message(doc: dict[str, object]) -> str:
    if "error" in doc:
        return str(doc["error"])
    return "\n".join(str(p) for p in doc.get("problems", []))  # type: ignore[attr-defined]


# --- the ledger itself -------------------------------------------------------------------------


def test_deleted_ledger_is_an_integrity_failure_and_is_never_recreated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = populated(tmp_path / "s")
    db = tmp_path / "s" / "ledger.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "missing" in message(doc)
    assert not db.exists()
    result = runner.invoke(app, ["ledger", "tail", "--json"])
    assert result.exit_code == 4 and not db.exists()
    with pytest.raises(LedgerMissingError):
        init_store(settings)  # init will not replace the store's ledger with an empty one
    assert not db.exists()


def test_emptied_records_table_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    conn = sqlite3.connect(tmp_path / "s" / "ledger.sqlite")
    conn.execute("DROP TRIGGER rt_records_no_delete")
    conn.execute("DELETE FROM rt_records")
    conn.commit()
    conn.close()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4
    text = message(doc)
    assert "identity record" in text and "emptied or replaced" in text
    assert "rt_records_no_delete" in text  # the dropped guard is named too


def test_a_ledger_from_another_store_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    other = populated(tmp_path / "other")
    shutil.copy(tmp_path / "other" / "ledger.sqlite", tmp_path / "s" / "ledger.sqlite")
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "replaced or rewritten" in message(doc)
    # pointing the configured URL at the other store's database is the same attack
    code, doc = verify_cli(settings_for(settings.store, other.database_url), monkeypatch)
    assert code == 4 and "not the identity record" in message(doc)


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_ledger_file_is_integrity_not_availability(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    settings = populated(tmp_path / "s")
    db = tmp_path / "s" / "ledger.sqlite"
    data = db.read_bytes()
    db.write_bytes(b"this is not a database at all" * 200 if damage == "garbage" else data[: len(data) // 3])
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4, doc


def test_dropped_records_table_and_emptied_migrations_are_clear_integrity_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = populated(tmp_path / "s")
    conn = sqlite3.connect(tmp_path / "s" / "ledger.sqlite")
    conn.execute("DELETE FROM rt_migrations")
    conn.commit()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "rt_migrations" in message(doc)
    conn.execute("DROP TABLE rt_records")
    conn.commit()
    conn.close()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "rt_records" in message(doc)


def test_replaced_trigger_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    conn = sqlite3.connect(tmp_path / "s" / "ledger.sqlite")
    conn.execute("DROP TRIGGER rt_records_no_update")
    conn.execute("CREATE TRIGGER rt_records_no_update BEFORE UPDATE ON rt_records BEGIN SELECT 1; END")
    conn.commit()
    conn.close()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "rt_records_no_update" in message(doc) and "replaced" in message(doc)


# --- query tables ------------------------------------------------------------------------------


def _db(settings: Settings) -> sqlite3.Connection:
    return sqlite3.connect(settings.database_url[len("sqlite:///") :])


@pytest.mark.parametrize(
    ("attack", "expected"),
    [
        ("UPDATE rt_p_cas_refs SET size = size + 1 WHERE pool = 'data'", "was edited: size="),
        ("DELETE FROM rt_p_cas_refs WHERE pool = 'agent-state'", "is missing"),
        (
            "INSERT INTO rt_p_cas_refs (seq, hash, size, pool, rt_seq) VALUES (3, '" + "ab" * 32 + "', 9, 'data', 3)",
            "was added",
        ),
        ("UPDATE rt_p_supersessions SET by_id = 'forged'", "was added"),
    ],
)
def test_edited_added_deleted_query_rows_are_reported_and_repaired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str, expected: str
) -> None:
    settings = populated(tmp_path / "s")
    conn = _db(settings)
    conn.execute(attack)
    conn.commit()
    conn.close()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and expected in message(doc), message(doc)
    assert "query table" in message(doc)
    code, doc = verify_cli(settings, monkeypatch, "--repair")
    assert code == 4 and doc["repairs"] == ["query tables rebuilt from the chain"]
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 0, message(doc)


def test_reads_never_show_a_row_the_chain_does_not_support(tmp_path: Path) -> None:
    settings = populated(tmp_path / "s")
    conn = _db(settings)
    conn.execute("UPDATE rt_p_cas_refs SET size = 999 WHERE pool = 'data'")
    conn.commit()
    with open_store(settings) as store:
        assert len(store.ledger.rows("cas_refs", pool="agent-state")) == 1  # untouched rows still read
        with pytest.raises(IntegrityError, match="cas_refs"):
            store.ledger.rows("cas_refs", pool="data")
    conn.execute("UPDATE rt_p_cas_refs SET size = 6, rt_seq = 3 WHERE pool = 'data'")  # a row moved to another record
    conn.commit()
    conn.close()
    with open_store(settings) as store, pytest.raises(IntegrityError, match="does not match"):
        store.ledger.rows("cas_refs", pool="data")


def test_repair_refuses_when_the_chain_itself_is_damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    conn = _db(settings)
    conn.execute("DROP TRIGGER rt_records_no_update")
    conn.execute("UPDATE rt_records SET actor = 'mallory' WHERE seq = 2")
    conn.execute("DELETE FROM rt_p_cas_refs")
    conn.commit()
    conn.close()
    code, doc = verify_cli(settings, monkeypatch, "--repair")
    assert code == 4 and doc["repairs"] == []
    assert any("nothing repaired" in str(n) for n in doc["notes"])  # type: ignore[attr-defined]


# --- the store's furniture --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "content", "expected"),
    [
        ("versioning/data/oci-layout", b'{"imageLayoutVersion": "9.9.9"}', "oci-layout was changed"),
        ("versioning/agent-state/index.json", b"{", "index.json is unreadable"),
        ("versioning/data/index.json", b'{"schemaVersion": 2, "manifests": [{}]}', "index.json was changed"),
    ],
)
def test_layout_files_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, content: bytes, expected: str
) -> None:
    settings = populated(tmp_path / "s")
    target = tmp_path / "s" / path
    target.chmod(0o644)
    target.write_bytes(content)
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and expected in message(doc)


def test_a_damaged_store_marker_is_an_integrity_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    (tmp_path / "s" / "reviewtrail-store.json").write_text('{"format": 1, "storeId": 5}')
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "store marker" in message(doc)


def test_a_blob_swapped_for_a_symlink_or_fifo_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    with open_store(settings) as store:
        cas = store.cas
        assert isinstance(cas, FilesystemCas)
        ref = cas.put(b"same bytes elsewhere")
        path = cas.object_path("data", ref.hash)
    outside = tmp_path / "outside"
    outside.write_bytes(b"same bytes elsewhere")
    path.unlink()
    path.symlink_to(outside)
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "symlink" in message(doc)
    with open_store(settings) as store:
        assert store.cas.verify(ref) is False
    path.unlink()
    os.mkfifo(path)  # opening a FIFO for reading would hang a naive verifier
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "not a regular file" in message(doc)


# --- availability, not integrity ----------------------------------------------------------------


def test_disk_full_during_append_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    settings = populated(tmp_path / "s")
    with open_store(settings) as store:
        before = store.ledger.head()
        conn = store.ledger.recorder._conn  # type: ignore[attr-defined]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # the database cannot grow: a full disk
        big = "x" * 200_000
        with pytest.raises(StorageFullError, match="no space left"):
            store.append([NewRecord(type="t.big@1", actor="x", privacy="private", payload={"text": big})])
        assert store.ledger.head() == before
    with open_store(settings) as store:
        assert verify_store(store).ok


def test_a_read_only_store_is_read_and_verified_and_refuses_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = populated(tmp_path / "s")
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is needed to mount the store read-only")
    import subprocess
    import sys

    exe = str(Path(sys.executable).parent / "reviewtrail")
    root = str(settings.store)
    env = {**os.environ, "REVIEWTRAIL_STORE": root, "REVIEWTRAIL_DATABASE_URL": settings.database_url}
    wrap = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", root, root, "--chdir", str(tmp_path), exe]
    verify = subprocess.run([*wrap, "verify", "--json"], capture_output=True, text=True, env=env, check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    tail = subprocess.run([*wrap, "ledger", "tail", "--json"], capture_output=True, text=True, env=env, check=False)
    assert tail.returncode == 0 and len(json.loads(tail.stdout)) == 4
    append = subprocess.run(
        [*wrap, "ledger", "append", "--type", "u.note@1", "--actor", "a", "--privacy", "private", "--payload", "{}"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert append.returncode == 5 and "read-only" in append.stderr
    (tmp_path / "new.txt").write_text("new bytes")
    put = subprocess.run([*wrap, "cas", "put", "new.txt"], capture_output=True, text=True, env=env, check=False)
    assert put.returncode == 5 and "read-only" in put.stderr


def test_read_only_open_refuses_appends_in_the_library(tmp_path: Path) -> None:
    settings = populated(tmp_path / "s")
    with open_store(settings, read_only=True) as store:
        assert verify_store(store).ok
        with pytest.raises(ReadOnlyStoreError):
            store.append([NewRecord(type="u.x@1", actor="a", privacy="private", payload={})])
        with pytest.raises(ReadOnlyStoreError):
            store.cas.put(b"new")


# --- deleted furniture is integrity, and init never re-creates it ---------------------------------


@pytest.mark.parametrize("removed", ["versioning/data/oci-layout", "versioning/agent-state"])
def test_deleted_layout_is_reported_and_init_does_not_recreate_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, removed: str
) -> None:
    settings = populated(tmp_path / "s")
    target = tmp_path / "s" / removed
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4, doc
    assert "not a regular file" in message(doc) or "not a plain folder" in message(doc)
    if removed.endswith("agent-state"):
        assert "object missing from agent-state" in message(doc)  # the run log the ledger points at
    init_store(settings).close()
    assert not target.exists()
    assert verify_cli(settings, monkeypatch)[0] == 4


def test_a_deleted_store_marker_is_integrity_and_init_restores_it_from_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = populated(tmp_path / "s")
    marker = tmp_path / "s" / "reviewtrail-store.json"
    original = json.loads(marker.read_text())
    marker.unlink()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "marker" in message(doc) and "is missing" in message(doc)
    with init_store(settings) as store:
        assert store.store_id == original["storeId"]
    assert json.loads(marker.read_text())["identity"] == original["identity"]
    assert verify_cli(settings, monkeypatch)[0] == 0


def test_a_workspace_swapped_for_a_symlink_is_never_run_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.provenance.runs import create_session, run_code

    settings = populated(tmp_path / "s")
    with open_store(settings) as store:
        session = create_session(store)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(session.workspace)
    session.workspace.symlink_to(outside)
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "is a symlink" in message(doc) and session.session_id in message(doc)
    with open_store(settings) as store, pytest.raises(IntegrityError, match="symlink"):
        run_code(store, session_id=session.session_id, code="open('x','w').write('1')", lang="python")
    assert list(outside.iterdir()) == []


def test_install_helper_refuses_a_missing_project_dir(tmp_path: Path) -> None:
    result = runner.invoke(app, ["trace", "install-helper", "--project-dir", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert not (tmp_path / "missing").exists()


# --- more the campaign found ------------------------------------------------------------------------


def test_a_payload_nested_too_deeply_is_a_problem_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    conn = _db(settings)
    conn.execute("DROP TRIGGER rt_records_no_update")
    conn.execute("UPDATE rt_records SET payload = ? WHERE seq = 3", (b"[" * 200_000 + b"]" * 200_000,))
    conn.commit()
    conn.close()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "seq 3" in message(doc) and "not valid JSON" in message(doc)


@pytest.mark.parametrize("table", ["rt_records", "rt_p_cas_refs"])
def test_a_trigger_that_is_not_ours_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str) -> None:
    settings = populated(tmp_path / "s")
    conn = _db(settings)
    conn.execute(f"CREATE TRIGGER sneaky AFTER INSERT ON {table} BEGIN DELETE FROM rt_p_supersessions; END")
    conn.commit()
    conn.close()
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and f"trigger sneaky on {table} is not reviewtrail's own" in message(doc)


def test_a_pool_folder_moved_out_and_symlinked_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    pool = tmp_path / "s" / "versioning" / "agent-state"
    shutil.move(str(pool), str(tmp_path / "agent-state-elsewhere"))
    pool.symlink_to(tmp_path / "agent-state-elsewhere")
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "agent-state: the pool folder is a symlink" in message(doc)


def test_arguments_that_are_not_utf8_are_refused_before_anything_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    settings = populated(tmp_path / "s")
    exe = str(Path(sys.executable).parent / "reviewtrail")
    env = {**os.environ, "REVIEWTRAIL_STORE": str(settings.store), "REVIEWTRAIL_DATABASE_URL": settings.database_url}
    bad = os.fsdecode(b"name-\xff")
    for args in (["artifact", "show", bad], ["ledger", "tail", "--subject", bad], ["run", "--env", f"K={bad}"]):
        out = subprocess.run([exe, *args], capture_output=True, env=env, check=False)
        assert out.returncode == 2, (args, out.stderr)
        assert b"not UTF-8" in out.stderr and b"Traceback" not in out.stderr
    assert not (settings.store / "runs-pending").exists() or not any((settings.store / "runs-pending").iterdir())


def test_a_payload_with_a_repeated_key_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(settings.store))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", settings.database_url)
    args = ["ledger", "append", "--type", "u.x@1", "--actor", "a", "--privacy", "private"]
    result = runner.invoke(app, [*args, "--payload", '{"a": 1, "a": 2}'])
    assert result.exit_code == 2 and "appears twice" in result.stderr
    with open_store(settings) as store:
        head = store.ledger.head()
        assert head is not None and head.seq == 4


def test_a_store_folder_swapped_for_a_file_is_integrity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = populated(tmp_path / "s")
    ingest = tmp_path / "s" / "versioning" / "data" / "ingest"
    shutil.rmtree(ingest)
    ingest.write_text("not a folder")
    (tmp_path / "new.txt").write_text("bytes")
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(settings.store))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", settings.database_url)
    result = runner.invoke(app, ["cas", "put", str(tmp_path / "new.txt")])
    assert result.exit_code == 4 and "replaced by something else" in result.stderr
    code, doc = verify_cli(settings, monkeypatch)
    assert code == 4 and "ingest is not a plain folder" in message(doc)
