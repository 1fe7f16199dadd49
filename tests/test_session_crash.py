"""``session rm`` and ``session new`` when the process dies or the disk is full half way."""

from __future__ import annotations

import errno
import json
import pathlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import init_cli_store, open_cli_store
from conftest import run_wide as run
from reviewtrail.app import open_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.provenance.catalog import SESSION, SESSION_DELETED
from reviewtrail.store import Store

runner = CliRunner()


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no handler sees it."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return init_cli_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT")


def _deletions(project: Path, sid: str) -> int:
    with open_cli_store(project) as store:
        return len(list(store.ledger.read(type=SESSION_DELETED, subject=f"session:{sid}")))


def _session_with_files(project: Path) -> tuple[str, Path]:
    code, out, err = run("session", "new", "--json")
    assert code == 0, err
    doc = json.loads(out)
    workspace = Path(doc["workspace"])
    for i in range(5):
        (workspace / f"d{i}").mkdir()
        for j in range(3):
            (workspace / f"d{i}" / f"f{j}.txt").write_text("x")
    return doc["sessionId"], workspace


def _kill_rmtree_midway(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process dies after removing part of the workspace."""
    real = shutil.rmtree

    def dying(path: Any, *args: Any, **kwargs: Any) -> None:
        real(Path(path) / "d0")
        raise Killed

    monkeypatch.setattr(shutil, "rmtree", dying)


def test_a_killed_session_rm_is_finished_by_running_it_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sid, workspace = _session_with_files(project)
    with monkeypatch.context() as m:
        _kill_rmtree_midway(m)
        with pytest.raises(Killed):
            runner.invoke(app, ["session", "rm", sid], catch_exceptions=False)
    assert workspace.is_dir() and not (workspace / "d0").exists(), "the crash left part of the workspace"

    code, out, err = run("session", "rm", sid)
    assert code == 0, err
    assert "finished" in out and sid in out
    assert not workspace.exists()
    assert _deletions(project, sid) == 1, "the deletion is recorded once"
    # Now it is fully deleted: a third rm is a conflict, as before.
    code, _, err = run("session", "rm", sid)
    assert code == 6 and "already deleted" in err


def test_a_crash_before_the_deletion_record_leaves_a_live_session(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid, workspace = _session_with_files(project)
    import reviewtrail.store as store_module

    def dying(self: Store, records: Any) -> Any:
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(store_module.Store, "append", dying)
        with pytest.raises(Killed):
            runner.invoke(app, ["session", "rm", sid], catch_exceptions=False)
    assert (workspace / "d0" / "f0.txt").is_file(), "nothing is removed before the deletion is recorded"
    assert _deletions(project, sid) == 0
    assert run("session", "rm", sid)[0] == 0
    assert not workspace.exists() and _deletions(project, sid) == 1


def test_verify_finds_and_finishes_unfinished_removals(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.provenance.runs import finish_session_removals, unfinished_session_removals

    sid, workspace = _session_with_files(project)
    other, other_workspace = _session_with_files(project)
    with monkeypatch.context() as m:
        _kill_rmtree_midway(m)
        with pytest.raises(Killed):
            runner.invoke(app, ["session", "rm", sid], catch_exceptions=False)
    with open_cli_store(project) as store:
        [problem] = unfinished_session_removals(store)
        assert sid in problem and "verify --repair" in problem
        [done] = finish_session_removals(store)
        assert sid in done
        assert unfinished_session_removals(store) == []
        assert finish_session_removals(store) == []
    assert not workspace.exists() and other_workspace.is_dir(), "only the deleted session's workspace goes"
    assert _deletions(project, sid) == 1 and _deletions(project, other) == 0


def test_a_workspace_that_cannot_be_removed_is_a_clear_error(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sid, workspace = _session_with_files(project)

    def refusing(path: Any, *args: Any, **kwargs: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(Path(path) / "d1"))

    with monkeypatch.context() as m:
        m.setattr(shutil, "rmtree", refusing)
        code, _, err = run("session", "rm", sid)
    assert code == 5, err
    assert "Traceback" not in err and "session rm" in err and "Permission denied" in err
    assert _deletions(project, sid) == 1
    assert run("session", "rm", sid)[0] == 0 and not workspace.exists()
    assert _deletions(project, sid) == 1


def test_disk_full_during_session_new_is_a_documented_error(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = pathlib.Path.mkdir

    def full(self: Path, *args: Any, **kwargs: Any) -> None:
        if "workspaces" in self.parts:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        real(self, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(pathlib.Path, "mkdir", full)
        code, out, err = run("session", "new", "--json")
    assert code == 5, err
    assert "no space left" in err.lower() and "Traceback" not in err
    assert json.loads(out)["error"]["type"] == "StorageFullError"
    with open_cli_store(project) as store:
        assert list(store.ledger.read(type=SESSION)) == []


def test_a_read_only_folder_left_by_a_run_does_not_block_removal(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid, workspace = _session_with_files(project)
    locked = workspace / "d1"
    locked.chmod(0o500)
    outside = project / "outside"
    outside.mkdir(mode=0o500)
    (workspace / "d2" / "link").symlink_to(outside)
    real = shutil.rmtree

    def as_a_non_root_user(path: Any, *args: Any, **kwargs: Any) -> None:
        # Root may delete inside a read-only folder; an ordinary user may not.
        if not locked.stat().st_mode & 0o200:
            raise PermissionError(errno.EACCES, "Permission denied", str(locked / "f0.txt"))
        real(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", as_a_non_root_user)
    code, _, err = run("session", "rm", sid)
    assert code == 0, err
    assert not workspace.exists()
    assert outside.stat().st_mode & 0o777 == 0o500, "a symlink out of the workspace is never followed"


def test_rm_waits_for_an_interrupted_run_to_be_recorded(project: Path) -> None:
    sid, workspace = _session_with_files(project)
    folder = project / "store" / "runs-pending"
    folder.mkdir()
    run_id = "01a22d6a-0000-7000-8000-00000000beef"
    marker = folder / f"{run_id}.json"
    doc = {"runId": run_id, "sessionId": sid, "startedAt": "2026-11-30T17:00:00.000Z", "before": {}}
    marker.write_text(json.dumps(doc))
    code, _, err = run("session", "rm", sid)
    assert code == 6 and run_id in err and "verify --repair" in err
    assert workspace.is_dir() and _deletions(project, sid) == 0, "the workspace stays for the repair to read"
    marker.unlink()
    assert run("session", "rm", sid)[0] == 0 and not workspace.exists()


def test_a_workspace_folder_with_no_session_record_is_noted_and_repaired(tmp_path: Path) -> None:
    import os

    from reviewtrail.app import init_store
    from reviewtrail.audit import AuditOptions, audit

    root = tmp_path / "store"
    settings = Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    init_store(settings).close()
    orphan = root / "workspaces" / "01a20000-0000-7000-8000-00000000abcd"  # a killed `session new`
    orphan.mkdir(parents=True)
    with open_store(settings) as store:
        report = audit(store, AuditOptions(repair=True))
        assert report.ok and any(orphan.name in n for n in report.notes)
        assert orphan.exists() and report.repairs == []  # too fresh: it may be a `session new` in progress
        os.utime(orphan, (1_000_000, 1_000_000))
        report = audit(store, AuditOptions(repair=True))
        assert report.repairs == [f"removed workspaces/{orphan.name}, an empty folder no session record names"]
        assert not orphan.exists() and audit(store, AuditOptions()).notes == []
