"""``reviewtrail run`` when things go wrong: killed mid-run, a full disk, no bubblewrap, two runs at once."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import need, use_store
from reviewtrail.app import open_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.errors import BackendUnavailableError
from reviewtrail.provenance.runs import (
    create_session,
    pending_run_problems,
    pending_runs,
    repair_pending_runs,
    run_code,
)
from reviewtrail.provenance.runs._pending import session_lock, write_marker
from reviewtrail.provenance.runs._snapshot import snapshot
from reviewtrail.provenance.sandbox._bwrap import bwrap_available
from reviewtrail.store import Store
from support.sandbox import processes_with


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    use_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT")
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    return tmp_path


@pytest.fixture
def store(project: Path) -> Iterator[Store]:
    s = open_store(Settings(store=project / "store", database_url=f"sqlite:///{project / 'store' / 'ledger.sqlite'}"))
    yield s
    s.close()


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def wait_for(check: object, what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


# --- kill -9 mid-run -------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_killed_run_leaves_a_marker_that_repair_records(project: Path, store: Store) -> None:
    session = create_session(store)
    token = uuid.uuid4().hex
    marker = f"rt-sleep-{token}"
    (session.workspace / "old.txt").write_text("before the run")
    # The marker is put together inside the sandbox, so only the sandboxed shell's command line
    # holds it (not the recorder's own -c argument); `; :` keeps the shell alive around sleep.
    code = (
        "open('made.txt', 'w').write('partial work')\nimport subprocess\n"
        f"subprocess.run(['sh', '-c', 'sleep 600; :', 'rt-sleep-' + '{token}'])"
    )
    proc = cli("run", "--session", session.session_id, "-c", code)
    wait_for(lambda: (session.workspace / "made.txt").exists() and processes_with(marker), "the run to start")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    wait_for(lambda: not processes_with(marker), "the sandbox to die with the recorder")  # --die-with-parent

    [pending] = pending_runs(store)
    assert pending.session_id == session.session_id and pending.path.exists()
    doc = json.loads(pending.path.read_text())
    assert doc["before"] == {"old.txt": {"digest": snapshot(session.workspace)["old.txt"].sha256, "size": 14}}
    [problem] = pending_run_problems(store)
    assert pending.run_id in problem and "interrupted" in problem and "verify --repair" in problem
    assert not store.ledger.rows("prov_runs", run_id=pending.run_id)

    [line] = repair_pending_runs(store)
    assert "recorded as failed" in line and "1 file(s)" in line
    [row] = store.ledger.rows("prov_runs", run_id=pending.run_id)
    run = store.ledger.get(row["record_id"]).payload_value
    assert run["status"] == "failed" and run["error"].startswith("interrupted: the recording process died")
    assert run["createdFiles"] == ["made.txt"] and run["modifiedFiles"] == []
    assert run["startedAt"] == pending.started_at and run["code"]["size"] == len(code.encode())
    derivations = [e.payload_value for e in store.ledger.read(type="provenance.artifact-derivation@1")]
    assert [(d["path"], d["executionRunIds"]) for d in derivations] == [("made.txt", [pending.run_id])]
    assert pending_runs(store) == [] and pending_run_problems(store) == [] and repair_pending_runs(store) == []


def test_repair_leaves_a_run_in_progress_alone_and_clears_recorded_ones(store: Store) -> None:
    session = create_session(store)
    path = write_marker(store, "01900000-0000-7000-8000-000000000001", session.session_id, "2026-01-01T00:00:00Z", {})
    with session_lock(store, session.session_id):  # a run in progress holds its session's lock
        assert pending_run_problems(store) == []
        assert repair_pending_runs(store) == [
            f"run {path.stem} in session {session.session_id}: still running; left alone"
        ]
        assert path.exists()
    out = run_code(store, session_id=session.session_id, code="true", lang="bash")
    path.unlink()
    write_marker(store, out.run.run_id, session.session_id, out.run.started_at, {})  # its run did get recorded
    assert repair_pending_runs(store) == [f"run {out.run.run_id}: already recorded; removed its marker"]
    assert pending_runs(store) == []
    (store.root / "runs-pending" / "x.json").write_text("{torn")  # type: ignore[operator]
    [problem] = pending_run_problems(store)
    assert "cannot be read" in problem


def test_a_normal_run_leaves_no_marker(store: Store) -> None:
    session = create_session(store)
    run_code(store, session_id=session.session_id, code="import sys; sys.exit(3)", lang="python")
    assert pending_runs(store) == [] and list((store.root / "runs-pending").iterdir()) == []  # type: ignore[operator]


# --- a full disk ----------------------------------------------------------------------------------------
def test_disk_full_while_recording_is_a_clear_error_and_repair_records_the_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.cas import FilesystemCas

    runner = CliRunner()
    sid = runner.invoke(app, ["session", "new"]).stdout.strip()
    real = FilesystemCas.put_stream

    def full(self: FilesystemCas, *args: object, **kw: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device", str(project / "store" / "blobs"))

    monkeypatch.setattr(FilesystemCas, "put_stream", full)
    r = runner.invoke(app, ["run", "--session", sid, "-c", "open('out.txt', 'w').write('result')"])
    assert r.exit_code == 5, (r.stdout, r.stderr, r.exception)
    assert r.stderr.startswith("error: storage: no space left on the device while recording run ")
    assert "Traceback" not in r.stderr and "verify --repair" in r.stderr
    assert isinstance(r.exception, SystemExit)  # handled: the documented error, no crash
    monkeypatch.setattr(FilesystemCas, "put_stream", real)
    with open_store() as store:
        [pending] = pending_runs(store)
        [line] = repair_pending_runs(store)
        assert "1 file(s)" in line
        [row] = store.ledger.rows("prov_runs", run_id=pending.run_id)
        assert store.ledger.get(row["record_id"]).payload_value["createdFiles"] == ["out.txt"]


def test_disk_full_before_the_code_runs(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.provenance.runs import _pending

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_pending.os, "fsync", full)
    r = CliRunner().invoke(app, ["run", "-c", "open('out.txt', 'w').write('x')"])
    assert r.exit_code == 5 and "the code did not run" in r.stderr, r.stderr
    assert not list((project / "store" / "workspaces").glob("*/out.txt"))


# --- no bubblewrap ------------------------------------------------------------------------------------------
def test_missing_bwrap_is_exit_5_with_one_clear_message(project: Path, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = cli("run", "-c", "print('hi')", env={"PATH": str(empty)})
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 5, err
    assert err.decode().splitlines() == [
        "error: sandbox: bubblewrap (bwrap) is not installed or not on PATH; install the bubblewrap package"
    ]
    assert out == b""
    with open_store() as store:
        assert store.ledger.rows("prov_runs") == [] and store.ledger.rows("prov_sessions") == []


def test_missing_bwrap_in_the_library_records_nothing(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    session = create_session(store)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(BackendUnavailableError) as err:
        run_code(store, session_id=session.session_id, code="true", lang="bash")
    assert str(err.value).count("sandbox:") == 1 and store.ledger.rows("prov_runs") == []


# --- two runs in one session ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_parallel_runs_in_one_session_are_credited_only_with_their_own_files(project: Path, store: Store) -> None:
    need(shutil.which("sleep") is not None, "sleep")
    session = create_session(store)
    ws = session.workspace
    first = cli("run", "--session", session.session_id, "--json", "-c",
                "open('a.txt', 'w').write('A')\nimport time\ntime.sleep(2)")  # fmt: skip
    wait_for(lambda: (ws / "a.txt").exists(), "the first run to write a.txt")
    second = cli("run", "--session", session.session_id, "--json", "-c", "open('b.txt', 'w').write('B')")
    out1, err1 = first.communicate(timeout=120)
    out2, err2 = second.communicate(timeout=120)
    assert first.returncode == second.returncode == 0, (err1, err2)
    one, two = json.loads(out1), json.loads(out2)
    assert (one["createdFiles"], two["createdFiles"]) == (["a.txt"], ["b.txt"])
    assert b"waiting for the run in progress in session" in err2
    paths = {}
    for env in store.ledger.read(type="provenance.artifact-derivation@1"):
        paths[env.payload_value["path"]] = env.payload_value["executionRunIds"]
    assert paths == {"a.txt": [one["runId"]], "b.txt": [two["runId"]]}


def test_a_session_removed_while_a_run_waits_for_the_lock_is_not_run_in(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`session rm` can win the session lock between run_code's first liveness check and its own
    lock: the run must then refuse, not run in (and record into) a deleted workspace."""
    import reviewtrail.provenance.runs._runs as runs
    from reviewtrail.errors import ReviewtrailError
    from reviewtrail.provenance.runs import delete_session, run_code

    session = create_session(store)
    real = runs.require_live_session
    calls = {"n": 0}

    def check_then_lose_the_race(s: Store, session_id: str):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        live = real(s, session_id)
        if calls["n"] == 1:
            delete_session(s, session_id)
        return live

    monkeypatch.setattr(runs, "require_live_session", check_then_lose_the_race)
    before = store.ledger.head()
    with pytest.raises(ReviewtrailError, match="deleted"):
        run_code(store, session_id=session.session_id, code="open('x.txt','w').write('1')", lang="python")
    assert calls["n"] == 2
    deletion = store.ledger.head()
    assert deletion is not None and before is not None and deletion.seq == before.seq + 1  # only the deletion
    assert not session.workspace.exists() and pending_runs(store) == []
