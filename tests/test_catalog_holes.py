"""Artifact declare and upload: interrupted runs, missing lineage, full disks, bad names, lost projection rows."""

from __future__ import annotations

import errno
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import init_cli_store, need, open_cli_store
from conftest import run_wide as run
from reviewtrail.cas._filesystem import FilesystemCas
from reviewtrail.provenance.artifacts import declare_artifact
from reviewtrail.provenance.catalog import ARTIFACT_VERSION
from reviewtrail.provenance.records._records import artifact_id_for
from reviewtrail.provenance.runs import pending_runs, repair_pending_runs, run_code
from reviewtrail.provenance.runs._pending import session_locked

RUN_ID = "01a22d6a-0000-7000-8000-00000000abcd"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return init_cli_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT")


def _objects(project: Path) -> int:
    with open_cli_store(project) as store:
        return sum(1 for _ in store.cas.iter_objects())


def _versions_recorded(project: Path, name: str) -> list[int]:
    with open_cli_store(project) as store:
        subject = f"artifact:{artifact_id_for('default', name)}"
        return [e.payload_value["version"] for e in store.ledger.read(type=ARTIFACT_VERSION, subject=subject)]


def _session(project: Path) -> tuple[str, Path]:
    code, out, err = run("session", "new", "--json")
    assert code == 0, err
    doc = json.loads(out)
    return doc["sessionId"], Path(doc["workspace"])


def _pending_marker(project: Path, session_id: str, run_id: str = RUN_ID) -> Path:
    """What ``reviewtrail run`` leaves behind when it is killed before recording the run."""
    folder = project / "store" / "runs-pending"
    folder.mkdir(exist_ok=True)
    marker = folder / f"{run_id}.json"
    doc = {"runId": run_id, "sessionId": session_id, "startedAt": "2026-11-30T17:00:00.000Z", "before": {}}
    marker.write_text(json.dumps(doc))
    return marker


# --- a killed run ------------------------------------------------------------------------------


def test_declare_refuses_while_a_run_of_the_session_is_pending(project: Path) -> None:
    sid, workspace = _session(project)
    (workspace / "half.txt").write_text("half written by a killed run")
    marker = _pending_marker(project, sid)
    before = _objects(project)

    code, _, err = run("artifact", "declare", "half", "--session", sid, "--path", "half.txt")
    assert code == 6, err
    assert RUN_ID in err and "verify --repair" in err
    assert _objects(project) == before, "nothing is stored"
    assert _versions_recorded(project, "half") == []

    # a pending run of another session does not block this one
    other, other_workspace = _session(project)
    (other_workspace / "ok.txt").write_text("ok")
    assert run("artifact", "declare", "ok", "--session", other, "--path", "ok.txt")[0] == 0

    marker.unlink()  # what `verify --repair` does once it has dealt with the run
    assert run("artifact", "declare", "half", "--session", sid, "--path", "half.txt")[0] == 0


def test_declaring_bytes_no_recorded_run_wrote_carries_a_warning(project: Path) -> None:
    sid, workspace = _session(project)
    (workspace / "by-hand.csv").write_text("a,b\n1,2\n")
    code, out, err = run("artifact", "declare", "table", "--session", sid, "--path", "by-hand.csv", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["version"] == 1 and doc["derivationIds"] == []
    [warning] = doc["warnings"]
    assert "no recorded run wrote these bytes" in warning and "by-hand.csv" in warning
    assert "warning: no recorded run wrote these bytes" in err

    code, out, err = run("artifact", "declare", "table", "--session", sid, "--path", "by-hand.csv")
    assert code == 0 and "table@2" in out and "warning: no recorded run" in err

    code, out, _ = run("provenance", "table@2")
    assert code == 0 and "no recorded run wrote" in out, "the lineage says so too, later"


def test_bytes_a_recorded_run_wrote_carry_no_warning(project: Path) -> None:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    sid, workspace = _session(project)
    with open_cli_store(project) as store:
        run_code(store, session_id=sid, code="open('r.txt','w').write('from a run')", lang="python")
        clean = declare_artifact(store, session_id=sid, name="r", path="r.txt")
        assert clean.warnings == [] and clean.version.derivation_ids
        assert clean.to_json()["warnings"] == []
        (workspace / "r.txt").write_text("edited outside any run")
        edited = declare_artifact(store, session_id=sid, name="r", path="r.txt")
        assert edited.version.derivation_ids == [] and len(edited.warnings) == 1


def _wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + 60
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.mark.slow
def test_after_a_killed_run_declare_is_refused_until_the_repair_then_has_lineage(project: Path) -> None:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    sid, workspace = _session(project)
    # The code writes a file, says it is ready, then sleeps until the recorder is killed.
    code = "open('made.txt', 'w').write('partial')\nopen('ready', 'w').close()\nimport time\ntime.sleep(600)"
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", "run", "--session", sid, "-c", code],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: (workspace / "ready").exists(), "the run to start")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with open_cli_store(project) as store:
        _wait_for(lambda: not session_locked(store, sid), "the killed run's lock to go")

    code_, _, err = run("artifact", "declare", "made", "--session", sid, "--path", "made.txt")
    assert code_ == 6 and "interrupted" in err and "verify --repair" in err
    with open_cli_store(project) as store:
        [pending] = pending_runs(store)
        assert pending.run_id in err
        assert len(repair_pending_runs(store)) == 1
    code_, out, err = run("artifact", "declare", "made", "--session", sid, "--path", "made.txt", "--json")
    assert code_ == 0, err
    doc = json.loads(out)
    assert doc["warnings"] == [] and len(doc["derivationIds"]) == 1, "the repaired run is its lineage"
    assert "warning:" not in err


# --- a full disk ----------------------------------------------------------------------------------


def _disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(self: FilesystemCas, pool: Any, stream: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device", str(self._ingest(pool) / "put-x"))

    monkeypatch.setattr(FilesystemCas, "_stage_stream", full)


def test_disk_full_during_declare_and_upload_is_a_documented_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid, workspace = _session(project)
    (workspace / "big.bin").write_bytes(b"x" * 1000)
    (project / "up.bin").write_bytes(b"y" * 1000)
    with monkeypatch.context() as m:
        _disk_full(m)
        code, out, err = run("artifact", "declare", "big", "--session", sid, "--path", "big.bin", "--json")
        assert code == 5, err
        assert "no space left" in err.lower() and "Traceback" not in err
        assert json.loads(out)["error"] == {
            "type": "StorageFullError",
            "field": "path",
            "message": json.loads(out)["error"]["message"],
            "exitCode": 5,
        }
        code, _, err = run("artifact", "upload", "up", "up.bin")
        assert code == 5, err
        assert "no space left" in err.lower() and "Traceback" not in err
    assert _versions_recorded(project, "big") == [] and _versions_recorded(project, "up") == []


# --- names checked before bytes are stored ----------------------------------------------------------


def test_a_rejected_name_stores_no_bytes(project: Path) -> None:
    (project / "data.csv").write_text("never stored\n")
    sid, workspace = _session(project)
    (workspace / "w.txt").write_text("never stored either\n")
    before = _objects(project)
    for bad in ("a@b", "tab\tname", "x" * 300):
        code, _, err = run("artifact", "upload", bad, "data.csv")
        assert code == 2 and "name" in err, err
        code, _, err = run("artifact", "declare", bad, "--session", sid, "--path", "w.txt")
        assert code == 2 and "name" in err, err
    code, _, err = run("artifact", "upload", "ok", "data.csv", "--project", "no spaces allowed")
    assert code == 2 and "project" in err
    code, _, err = run("artifact", "upload", "ok", "data.csv", "--origin", "llm_declared")
    assert code == 2 and "origin" in err
    assert _objects(project) == before, "a rejected upload leaves no blob behind"


# --- version numbers ---------------------------------------------------------------------------------


def test_a_deleted_projection_row_never_lets_a_version_number_be_reused(project: Path) -> None:
    for i in (1, 2):
        (project / "f.txt").write_text(f"version {i}\n")
        assert run("artifact", "upload", "f", "f.txt")[0] == 0
    db = sqlite3.connect(project / "store" / "ledger.sqlite")
    with db:
        deleted = db.execute(
            "DELETE FROM rt_p_prov_artifact_versions WHERE artifact_id = ? AND version = 2",
            (artifact_id_for("default", "f"),),
        ).rowcount
    db.close()
    assert deleted == 1

    (project / "f.txt").write_text("version 3\n")
    code, out, err = run("artifact", "upload", "f", "f.txt", "--json")
    assert code == 0, err
    assert json.loads(out)["version"] == 3
    assert _versions_recorded(project, "f") == [1, 2, 3], "each number is in the chain once"


def test_declare_refuses_while_a_run_is_in_progress(project: Path) -> None:
    from reviewtrail.provenance.runs._pending import session_lock

    sid, workspace = _session(project)
    (workspace / "busy.txt").write_text("being written")
    marker = _pending_marker(project, sid)
    with open_cli_store(project) as store, session_lock(store, sid):  # what a run holds while it runs
        code, _, err = run("artifact", "declare", "busy", "--session", sid, "--path", "busy.txt")
        assert code == 6 and "in progress" in err and RUN_ID in err
        assert "verify --repair" not in err, "a run in progress needs no repair"
        code, _, err = run("session", "rm", sid)
        assert code == 6 and "in progress" in err
    marker.unlink()  # the run was recorded and removed its marker
    assert run("artifact", "declare", "busy", "--session", sid, "--path", "busy.txt")[0] == 0
    assert run("session", "rm", sid)[0] == 0
