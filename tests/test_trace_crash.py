"""Interrupted and failed trace saves: a killed save is noticed and repaired, a full disk leaves nothing."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reviewtrail.app import init_store, open_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings, sqlite_url
from reviewtrail.errors import StorageFullError
from reviewtrail.store import Store
from reviewtrail.tracing.custody import record_call, repair_trace_links, trace_ledger_problems
from reviewtrail.tracing.files import ReviewCall, _writer, iter_runs, verify_traces

EXE = str(Path(sys.executable).parent / "reviewtrail")
SKILL = "auto-review-loop"


def call(**kw: object) -> ReviewCall:
    fields: dict[str, object] = {
        "skill": SKILL,
        "purpose": "round-1-review",
        "prompt": "Please review.",
        "response": b"Verdict: almost\n",
        "executor": "codex",
        "backend": "claude",
        "status": "ok",
    }
    fields.update(kw)
    return ReviewCall(**fields)  # type: ignore[arg-type]


def settings_for(project: Path) -> Settings:
    """The default store of the project, as a ``trace save`` started in it finds it."""
    return Settings(store=project / ".reviewtrail", database_url=sqlite_url(project / ".reviewtrail"))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("ARIS_TRACE_MODE", "ARIS_TRACE_RUN_ID", "REVIEWTRAIL_STORE", "REVIEWTRAIL_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def store(project: Path) -> Iterator[Store]:
    init_store(settings_for(project)).close()
    with open_store(settings_for(project)) as s:
        yield s


def skill_dir(project: Path) -> Path:
    return project / ".aris" / "traces" / SKILL


def runs(project: Path) -> list[Path]:
    base = skill_dir(project)
    return sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def start_save(project: Path, size: int) -> subprocess.Popen[bytes]:
    (project / "big.md").write_bytes(b"review text line\n" * (size // 17))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "ARIS_"))}
    return subprocess.Popen(
        [EXE, "trace", "save", "--skill", SKILL, "--purpose", "round-1-review", "--executor", "codex",
         "--backend", "claude", "--prompt", "Please review.", "--response-file", "big.md",
         "--project-dir", str(project)],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    """Stop the process as soon as ``ready()`` holds, then kill it. The test fails if it finished first."""
    while not ready():
        assert proc.poll() is None, f"the save finished before the kill point: {proc.communicate()}"
    os.kill(proc.pid, signal.SIGSTOP)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL


@pytest.mark.slow
def test_a_save_killed_after_its_files_is_reported_and_repaired(project: Path, store: Store) -> None:
    first = record_call(call(), project_dir=project, store=store)
    assert first.run_path is not None and first.ledger_record_id is not None
    proc = start_save(project, 64 * 1024 * 1024)
    meta = first.run_path / "002-round-1-review.meta.json"
    kill_when(proc, meta.exists)
    # the call's files are all there, but its ledger record was never appended
    found = trace_ledger_problems(store, project)
    assert found and any("002-round-1-review" in p and "interrupted" in p for p in found), found
    actions = repair_trace_links(store, project)
    assert any("002-round-1-review" in a for a in actions), actions
    assert trace_ledger_problems(store, project) == []
    assert verify_traces(project)[1] == []
    records = list(store.ledger.read(type="trace.review-call@1"))
    assert [r.payload_value["meta"]["call_number"] for r in records] == [1, 2]
    assert store.cas.read(records[1].payload_value["response"]["digest"]) == (project / "big.md").read_bytes()
    again = record_call(call(), project_dir=project, store=store)
    assert again.run_id == first.run_id and again.call_number == 3
    assert trace_ledger_problems(store, project) == [] and repair_trace_links(store, project) == []


@pytest.mark.slow
def test_a_save_killed_as_its_run_folder_appears_is_reported_and_repaired(project: Path, store: Store) -> None:
    proc = start_save(project, 64 * 1024 * 1024)
    kill_when(proc, lambda: bool(runs(project)))
    found = trace_ledger_problems(store, project)
    assert found and all("interrupted" in p for p in found), found
    actions = repair_trace_links(store, project)
    assert actions, "repair did nothing"
    assert trace_ledger_problems(store, project) == []
    assert runs(project) == []  # the run the killed save started holds no call: removed
    assert verify_traces(project)[1] == []
    result = record_call(call(), project_dir=project, store=store)
    assert result.run_id is not None and result.run_id.endswith("_run01") and result.call_number == 1
    assert trace_ledger_problems(store, project) == []


def no_space(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("target", ["write_new", "_stage"])
def test_a_full_disk_leaves_no_run_folder_and_later_saves_start_cleanly(
    project: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    with monkeypatch.context() as m:
        m.setattr(_writer, target, no_space)
        with pytest.raises(StorageFullError) as err:
            record_call(call(), project_dir=project, env={})
    assert "no space" in str(err.value).lower()
    assert runs(project) == []
    assert not [p for p in skill_dir(project).iterdir() if p.name.startswith(".tmp")]
    result = record_call(call(executor=None, backend=None), project_dir=project, env={})
    assert result.run_id is not None and result.run_id.endswith("_run01") and result.call_number == 1
    assert (project / ".aris" / "traces" / SKILL / result.run_id / "run.meta.json").is_file()
    assert verify_traces(project)[1] == []


def test_a_full_disk_in_a_joined_run_removes_only_this_calls_files(
    project: Path, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    first = record_call(call(), project_dir=project, store=store)
    assert first.run_path is not None
    before = sorted(p.name for p in first.run_path.iterdir())
    real_link = os.link
    calls = {"n": 0}

    def link_then_fail(src: Any, dst: Any, *a: Any, **kw: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the request is linked, the response is not
            raise OSError(errno.ENOSPC, "No space left on device")
        real_link(src, dst, *a, **kw)

    with monkeypatch.context() as m:
        m.setattr(_writer.os, "link", link_then_fail)
        with pytest.raises(StorageFullError):
            record_call(call(purpose="round-2-review"), project_dir=project, store=store)
    assert sorted(p.name for p in first.run_path.iterdir()) == before
    assert trace_ledger_problems(store, project) == []
    again = record_call(call(purpose="round-2-review"), project_dir=project, store=store)
    assert again.run_id == first.run_id and again.call_number == 2


def test_a_full_disk_when_appending_the_event_line_leaves_no_partial_line(
    project: Path, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    record_call(call(), project_dir=project, store=store)
    events = project / ".aris" / "meta" / "events.jsonl"
    before = events.read_bytes()
    real_write = os.write

    def half_then_fail(fd: int, data: Any) -> int:
        if bytes(data).startswith(b'{"event"'):
            real_write(fd, bytes(data)[:10])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    with monkeypatch.context() as m:
        m.setattr(_writer.os, "write", half_then_fail)
        with pytest.raises(StorageFullError):
            record_call(call(purpose="round-2-review"), project_dir=project, store=store)
    assert events.read_bytes() == before
    # the call's files were kept: it is unrecorded, which verify reports and repair completes
    assert any("interrupted" in p for p in trace_ledger_problems(store, project))
    assert repair_trace_links(store, project)
    assert trace_ledger_problems(store, project) == []
    assert len(events.read_bytes().splitlines()) == 2
    assert verify_traces(project)[1] == []


def test_cli_disk_full_is_a_clear_error_with_exit_5(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_writer, "_stage", no_space)
    result = CliRunner().invoke(
        app, ["trace", "save", "--skill", SKILL, "--purpose", "p", "--response", "x", "--project-dir", str(project)]
    )
    assert result.exit_code == 5, result.output
    assert "no space" in result.stderr.lower() and "Traceback" not in result.output
    assert runs(project) == []


def test_a_run_folder_left_without_run_meta_is_completed_when_joined(project: Path) -> None:
    (skill_dir(project) / "2026-04-15_run01").mkdir(parents=True)
    result = record_call(call(), project_dir=project, env={}, run_id="2026-04-15_run01")
    assert result.run_path is not None and (result.run_path / "run.meta.json").is_file()
    assert verify_traces(project)[1] == []


def test_repair_without_problems_does_nothing(project: Path, store: Store) -> None:
    record_call(call(), project_dir=project, store=store)
    assert repair_trace_links(store, project) == []
    assert [r.run_id for r in iter_runs(project)] and trace_ledger_problems(store, project) == []


def test_a_save_in_progress_is_not_reported_nor_repaired(project: Path, store: Store) -> None:
    from reviewtrail.tracing.files._pending import PendingMarker

    first = record_call(call(), project_dir=project, store=store)
    assert first.run_id is not None
    marker = PendingMarker(project, SKILL, "round-2-review")
    marker.claim(first.run_id, 2, False)  # as a running save does before writing call 002
    (skill_dir(project) / first.run_id / "002-round-2-review.request.json").write_text("{}")
    assert trace_ledger_problems(store, project) == []
    assert repair_trace_links(store, project) == []
    marker.release()  # its process is gone: now it is an interrupted save, with an incomplete call
    found = trace_ledger_problems(store, project)
    assert len(found) == 1 and "002-round-2-review" in found[0] and "incomplete" in found[0], found
    # The save died before its meta file (its commit point): repair sets the partial call aside,
    # byte for byte, instead of leaving verify failing for ever or deleting what was written.
    [action] = repair_trace_links(store, project)
    assert "incomplete" in action and "set aside" in action, action
    aside = project / ".aris" / "meta" / "incomplete" / SKILL / first.run_id / "002-round-2-review.request.json"
    assert aside.read_text() == "{}"
    assert not (skill_dir(project) / first.run_id / "002-round-2-review.request.json").exists()
    assert trace_ledger_problems(store, project) == []
    assert verify_traces(project)[1] == []
    assert repair_trace_links(store, project) == []  # nothing left to do


def test_repair_does_not_record_a_call_that_fails_the_checks(
    project: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.errors import BackendUnavailableError
    from reviewtrail.tracing.custody import _ledger_link

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise BackendUnavailableError("database is down", field="database_url")

    with monkeypatch.context() as m:
        m.setattr(_ledger_link, "append_trace_record", unreachable)
        with pytest.raises(BackendUnavailableError, match="verify --repair"):
            record_call(call(reported_reviewer_model=None), project_dir=project, store=store)
    [run] = runs(project)
    meta = run / "001-round-1-review.meta.json"
    meta.write_text(meta.read_text().replace('"provisional"', '"accepted"'))
    found = trace_ledger_problems(store, project)
    assert any("unrecorded" in p and "interrupted" in p for p in found), found
    assert repair_trace_links(store, project) == []
    assert list(store.ledger.read(type="trace.review-call@1")) == []
    meta.write_text(meta.read_text().replace('"accepted"', '"provisional"'))
    assert repair_trace_links(store, project)
    [record] = store.ledger.read(type="trace.review-call@1")
    assert record.payload_value["recovered"] is True
    assert trace_ledger_problems(store, project) == []
