"""Trace files and event lines checked against their ``trace.review-call@1`` ledger records."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewtrail.app import init_store, open_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.ledger import NewRecord
from reviewtrail.store import Store
from reviewtrail.tracing.custody import TraceResult, record_call, trace_ledger_problems
from reviewtrail.tracing.files import ReviewCall, verify_traces
from reviewtrail.verify import verify_store

runner = CliRunner()


def call(**kw: object) -> ReviewCall:
    fields: dict[str, object] = {
        "skill": "auto-review-loop",
        "purpose": "round-1-review",
        "prompt": "Please review section 3.",
        "response": b"Score: 6/10\n\nVerdict: almost.\n",
        "backend": "claude",
        "executor": "codex",
        "executor_model": "gpt-6-astra",
        "requested_reviewer_model": "claude-opus-4",
        "reported_reviewer_model": "claude-opus-4-1",
        "status": "ok",
        "verdict": "almost",
        "thread_id": "thread-1",
    }
    fields.update(kw)
    return ReviewCall(**fields)  # type: ignore[arg-type]


def settings_for(project: Path) -> Settings:
    return Settings(store=project / ".reviewtrail", database_url=f"sqlite:///{project / '.reviewtrail' / 'ledger.db'}")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ARIS_TRACE_MODE", raising=False)
    monkeypatch.delenv("ARIS_TRACE_RUN_ID", raising=False)
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / ".reviewtrail"))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", f"sqlite:///{tmp_path / '.reviewtrail' / 'ledger.db'}")
    return tmp_path


@pytest.fixture
def store(project: Path) -> Iterator[Store]:
    init_store(settings_for(project)).close()
    with open_store(settings_for(project)) as s:
        yield s


def problems(store: Store, project: Path) -> list[str]:
    return trace_ledger_problems(store, project)


@pytest.fixture
def saved(project: Path, store: Store) -> tuple[TraceResult, TraceResult, TraceResult]:
    first = record_call(call(), project_dir=project, store=store)
    second = record_call(call(purpose="round-2-review", response=b"Score: 7/10\n"), project_dir=project, store=store)
    hidden = record_call(call(purpose="round-3-review", prompt="secret"), project_dir=project, mode="meta", store=store)
    assert first.ledger_record_id and second.ledger_record_id and hidden.ledger_record_id
    assert first.run_id == second.run_id == hidden.run_id
    return first, second, hidden


def test_untouched_traces_match_their_records(store: Store, project: Path, saved: tuple[TraceResult, ...]) -> None:
    assert problems(store, project) == []
    assert verify_traces(project)[1] == []
    assert verify_store(store).ok


def test_records_hold_the_digest_of_every_written_file_and_the_event_line(
    store: Store, project: Path, saved: tuple[TraceResult, ...]
) -> None:
    first = saved[0]
    assert first.run_path is not None
    records = list(store.ledger.read(type="trace.review-call@1"))
    payload = records[0].payload_value
    names = {"run.meta.json", "001-round-1-review.request.json", "001-round-1-review.response.md"}
    names.add("001-round-1-review.meta.json")
    assert set(payload["files"]) == names
    for name, digest in payload["files"].items():
        data = (first.run_path / name).read_bytes()
        assert digest == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    line = (project / ".aris" / "meta" / "events.jsonl").read_bytes().split(b"\n")[0]
    assert payload["event"] == {"sha256": hashlib.sha256(line).hexdigest(), "size": len(line)}
    # a joined run's later calls do not claim run.meta.json
    assert "run.meta.json" not in records[1].payload_value["files"]


@pytest.mark.parametrize(
    "name",
    [
        "run.meta.json",
        "001-round-1-review.request.json",
        "001-round-1-review.response.md",
        "001-round-1-review.meta.json",
        "003-round-3-review.request.json",
        "003-round-3-review.meta.json",
    ],
)
def test_an_edited_file_is_reported_by_name(
    store: Store, project: Path, saved: tuple[TraceResult, ...], name: str
) -> None:
    run = saved[0].run_path
    assert run is not None
    path = run / name
    original = path.read_bytes()
    # an edit a schema check cannot see: same keys and types, another value
    edited = original.replace(b"almost", b"ready!") if b"almost" in original else original.replace(b"codex", b"CODEX")
    assert edited != original
    path.write_bytes(edited)
    found = problems(store, project)
    assert len(found) == 1 and name in found[0] and "differs" in found[0], found
    path.write_bytes(original)
    assert problems(store, project) == []


def test_deleted_files_and_a_deleted_run_are_reported(
    store: Store, project: Path, saved: tuple[TraceResult, ...]
) -> None:
    first = saved[0]
    assert first.response_path is not None and first.run_path is not None
    first.response_path.unlink()
    found = problems(store, project)
    assert any("001-round-1-review.response.md" in p and "missing" in p for p in found), found
    for p in list(first.run_path.iterdir()):
        p.unlink()
    first.run_path.rmdir()
    found = problems(store, project)
    # every recorded file of the three calls is reported missing
    assert sum("missing" in p for p in found) == 4 + 3 + 2, found


def test_added_files_in_a_recorded_run_are_reported(
    store: Store, project: Path, saved: tuple[TraceResult, ...]
) -> None:
    run = saved[0].run_path
    assert run is not None
    forged = run / "004-round-4-review.meta.json"
    forged.write_bytes(
        (run / "001-round-1-review.meta.json").read_bytes().replace(b'"call_number": 1', b'"call_number": 4')
    )
    (run / "notes.txt").write_text("hello")
    found = problems(store, project)
    assert any("004-round-4-review.meta.json" in p and "not recorded" in p for p in found), found
    assert any("notes.txt" in p for p in found), found
    assert len(found) == 2


def test_event_lines_edited_deleted_and_added(store: Store, project: Path, saved: tuple[TraceResult, ...]) -> None:
    events = project / ".aris" / "meta" / "events.jsonl"
    original = events.read_bytes()
    lines = original.split(b"\n")
    assert len(lines) == 4 and lines[-1] == b""
    lines[1] = lines[1].replace(b'"status":"ok"', b'"status":"error"')
    events.write_bytes(b"\n".join(lines))
    found = problems(store, project)
    assert any("events.jsonl line 2" in p for p in found), found
    assert any("events.jsonl" in p and "round-2-review" in p and "no line" in p for p in found), found
    # deleted line
    events.write_bytes(b"\n".join([original.split(b"\n")[0], original.split(b"\n")[2], b""]))
    found = problems(store, project)
    assert len(found) == 1 and "round-2-review" in found[0] and "no line" in found[0], found
    # added (duplicated) line
    events.write_bytes(original + original.split(b"\n")[0] + b"\n")
    found = problems(store, project)
    assert len(found) == 1 and "events.jsonl line 4" in found[0], found
    events.write_bytes(original)
    assert problems(store, project) == []


def test_traces_written_without_a_store_are_not_reported(project: Path) -> None:
    early = record_call(call(), project_dir=project)
    assert early.ledger_record_id is None
    init_store(settings_for(project)).close()
    with open_store(settings_for(project)) as s:
        assert problems(s, project) == []
        other = record_call(call(skill="research-review"), project_dir=project, store=s)
        assert other.ledger_record_id is not None and problems(s, project) == []
        # a later call in the pre-store run is recorded; the earlier calls are not reported
        later = record_call(call(purpose="round-2-review"), project_dir=project, run_id=early.run_id, store=s)
        assert later.ledger_record_id is not None and later.call_number == 2
        assert problems(s, project) == []
        # but a record whose files are gone is a problem
        assert other.meta_path is not None
        other.meta_path.unlink()
        assert any("research-review" in p and "missing" in p for p in problems(s, project))


def test_records_without_file_digests_are_still_compared(store: Store, project: Path) -> None:
    """Records written before file digests were stored: meta, prompt and response are compared."""
    result = record_call(call(), project_dir=project, env={})
    assert result.meta_path is not None and result.request_path is not None and result.response_path is not None
    meta = json.loads(result.meta_path.read_text())
    c = call()
    payload = {
        "skill": "auto-review-loop",
        "run_id": result.run_id,
        "trace_path": f".aris/traces/auto-review-loop/{result.run_id}/",
        "meta": meta,
        "prompt": store.cas.put(b"Please review section 3.", pool="agent-state", media_type="text/plain").to_json(),
        "response": store.cas.put(c.response or b"", pool="agent-state", media_type="text/markdown").to_json(),
    }
    store.append(
        [NewRecord.make(type="trace.review-call@1", actor="codex", privacy="private", subject="t", payload=payload)]
    )
    assert problems(store, project) == []
    result.response_path.write_bytes(b"edited")
    assert any("response.md" in p and "differs" in p for p in problems(store, project))
    result.response_path.write_bytes(c.response or b"")
    result.meta_path.write_text(result.meta_path.read_text().replace('"almost"', '"ready"'))
    found = problems(store, project)
    assert any("meta.json" in p and "verdict" in p for p in found), found


def test_trace_verify_compares_with_the_ledger_when_a_store_exists(
    store: Store, project: Path, saved: tuple[TraceResult, ...]
) -> None:
    meta = saved[1].meta_path
    assert meta is not None
    meta.write_bytes(meta.read_bytes().replace(b'"almost"', b'"ready"'))
    assert verify_traces(project)[1] == []  # the schema and label rules cannot see it
    result = runner.invoke(app, ["trace", "verify", str(project), "--json"])
    assert result.exit_code == 4, result.output
    doc = json.loads(result.stdout)
    assert any("002-round-2-review.meta.json" in p for p in doc["problems"])


def test_a_record_with_a_path_outside_the_traces_is_a_problem_not_a_read(store: Store, project: Path) -> None:
    payload = {"skill": "../../etc", "run_id": "x", "trace_path": "../", "meta": {"call_number": 1, "purpose": "p"}}
    store.append(
        [NewRecord.make(type="trace.review-call@1", actor="a", privacy="private", subject="t", payload=payload)]
    )
    found = problems(store, project)
    assert len(found) == 1 and "skill" in found[0], found


def test_non_utf8_event_line_is_a_clear_problem(project: Path) -> None:
    record_call(call(), project_dir=project)
    events = project / ".aris" / "meta" / "events.jsonl"
    with events.open("ab") as fh:
        fh.write(b'{"event": "review_trace", "skill": "\xff\xfe"}\n')
    _checked, found = verify_traces(project)
    assert any("events.jsonl line 2" in p and "UTF-8" in p for p in found), found
    result = runner.invoke(app, ["trace", "verify", str(project)])
    assert result.exit_code == 4 and "line 2" in result.stdout and "Traceback" not in result.output
    init_store(settings_for(project)).close()
    with open_store(settings_for(project)) as s:
        # `reviewtrail verify` reports it too: an unreadable line is never left to a separate command
        assert problems(s, project) == [".aris/meta/events.jsonl line 2: not UTF-8 text (byte 0xff at column 37)"]


@pytest.mark.parametrize(
    "command",
    [
        ["ls"],
        ["show", "auto-review-loop/RUN"],
        ["divergence", "auto-review-loop/RUN"],
        ["diff", "auto-review-loop/RUN", "1", "1"],
        ["export-otel", "-o", "OUT"],
    ],
)
def test_readers_are_not_upset_by_a_non_utf8_event_line(project: Path, command: list[str]) -> None:
    """ls/show/diff/divergence/export-otel read the run folders only; a bad events.jsonl line does not stop them."""
    result = record_call(call(), project_dir=project)
    assert result.run_id is not None
    with (project / ".aris" / "meta" / "events.jsonl").open("ab") as fh:
        fh.write(b"\xff\xfe\n")
    args = [a.replace("RUN", result.run_id).replace("OUT", str(project / "spans.json")) for a in command]
    out = runner.invoke(app, ["trace", *args, "--project-dir", str(project)])
    assert out.exit_code == 0, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)


@pytest.mark.parametrize("what", ["response file", "skill folder", "copied run folder", "deep event line"])
def test_symlinks_copies_and_deep_lines_under_aris_are_reported(
    store: Store, project: Path, saved: tuple[TraceResult, ...], what: str
) -> None:
    import shutil

    run = saved[0].run_path
    assert run is not None
    outside = project / "elsewhere"
    outside.mkdir()
    if what == "response file":
        target = run / "001-round-1-review.response.md"
        (outside / "copy.md").write_bytes(target.read_bytes())
        target.unlink()
        target.symlink_to(outside / "copy.md")
        expected = "a symlink"
    elif what == "skill folder":
        skill = run.parent
        shutil.move(str(skill), str(outside / skill.name))
        skill.symlink_to(outside / skill.name)
        expected = "a symlink"
    elif what == "copied run folder":
        shutil.copytree(run, run.parent / (run.name[:-2] + "99"))
        expected = "after the store was created"
    else:
        with (project / ".aris" / "meta" / "events.jsonl").open("ab") as fh:
            fh.write(b"[" * 200_000 + b"]" * 200_000 + b"\n")
        expected = "nested too deeply"
    found = problems(store, project)
    assert any(expected in p for p in found), found
