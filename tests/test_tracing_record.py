"""Writing traces: layout, modes, error status, run rule, ledger link, schema verification."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from reviewtrail.app import ProjectStores, init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.custody import record_call, trace_review, traced_review
from reviewtrail.tracing.files import ReviewCall, verify_traces
from reviewtrail.verify import verify_store

ENV: dict[str, str] = {}


def call(**kw: object) -> ReviewCall:
    fields: dict[str, object] = {
        "skill": "auto-review-loop",
        "purpose": "round-1-review",
        "prompt": "Please review section 3.",
        "response": "Score: 6/10\n\nVerdict: almost.\r\nTrailing bytes \xe2\x80\x94 kept.".encode(),
        "backend": "claude",
        "tool": "mcp__claude__review",
        "executor": "codex",
        "executor_model": "gpt-6-astra",
        "requested_reviewer_model": "claude-opus-4",
        "reported_reviewer_model": "claude-opus-4-1",
        "status": "ok",
        "verdict": "almost",
        "review_completed": True,
        "review_scope_complete": True,
        "review_positive": True,
        "files_referenced": ["paper/sections/3_method.tex"],
        "thread_id": "thread-1",
        "agent_id": "019d8fe0-b25d",
    }
    fields.update(kw)
    return ReviewCall(**fields)  # type: ignore[arg-type]


def read(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text())
    assert isinstance(doc, dict)
    return doc


def test_full_mode_layout_and_fields(tmp_path: Path) -> None:
    c = call()
    result = record_call(c, project_dir=tmp_path, env=ENV)
    run = tmp_path / ".aris" / "traces" / "auto-review-loop" / result.run_id  # type: ignore[operator]
    assert result.run_id is not None and result.run_id.endswith("_run01")
    assert sorted(p.name for p in run.iterdir()) == [
        "001-round-1-review.meta.json",
        "001-round-1-review.request.json",
        "001-round-1-review.response.md",
        "run.meta.json",
    ]
    assert (run / "001-round-1-review.response.md").read_bytes() == c.response
    request = read(run / "001-round-1-review.request.json")
    for key in (
        "call_number", "purpose", "timestamp", "tool", "model", "effort", "backend", "executor_model",
        "executor_family", "requested_reviewer_model", "reported_reviewer_model", "reviewer_model",
        "reviewer_model_source", "review_independence", "acceptance_status", "review_completed",
        "review_scope_complete", "verdict", "files_referenced", "prompt", "review_positive",
    ):  # fmt: skip
        assert key in request, key
    assert request["prompt"] == "Please review section 3."
    assert request["reviewer_model_source"] == "backend-reported"
    assert request["acceptance_status"] == "accepted"
    meta = read(run / "001-round-1-review.meta.json")
    for key in (
        "call_number", "purpose", "timestamp", "agent_id", "model", "reviewer_model", "reviewer_model_source",
        "requested_reviewer_model", "reported_reviewer_model", "model_family", "review_completed",
        "review_scope_complete", "verdict", "review_independence", "acceptance_status", "duration_ms", "status",
        "review_positive",
    ):  # fmt: skip
        assert key in meta, key
    assert meta["model_family"] == "anthropic" and meta["status"] == "ok"
    run_meta = read(run / "run.meta.json")
    assert run_meta["skill"] == "auto-review-loop" and run_meta["run_id"] == result.run_id
    assert run_meta["executor_family"] == "openai" and run_meta["executor_model_source"] == "caller-declared"
    events = (tmp_path / ".aris" / "meta" / "events.jsonl").read_text().splitlines()
    assert len(events) == 1
    event = json.loads(events[0])
    assert event["event"] == "review_trace" and event["trace_path"] == f".aris/traces/auto-review-loop/{result.run_id}/"
    assert event["agent_id"] == "019d8fe0-b25d" and event["status"] == "ok"
    assert verify_traces(tmp_path)[1] == []


def test_meta_mode_keeps_no_text_anywhere(tmp_path: Path) -> None:
    c = call(prompt="SECRET PROMPT TEXT", response=b"SECRET RESPONSE TEXT")
    result = record_call(c, project_dir=tmp_path, mode="meta", env=ENV)
    run = result.run_path
    assert run is not None and result.response_path is None
    names = sorted(p.name for p in run.iterdir())
    assert "001-round-1-review.response.md" not in names
    for path in [*run.iterdir(), tmp_path / ".aris" / "meta" / "events.jsonl"]:
        text = path.read_text()
        assert "SECRET" not in text, path
    request = read(run / "001-round-1-review.request.json")
    assert "prompt" not in request and request["prompt_bytes"] == len("SECRET PROMPT TEXT")
    assert isinstance(request["prompt_sha256"], str) and len(request["prompt_sha256"]) == 64
    meta = read(run / "001-round-1-review.meta.json")
    assert meta["response_bytes"] == len(b"SECRET RESPONSE TEXT") and meta["trace_mode"] == "meta"
    # assurance labels are kept in meta mode too
    assert meta["acceptance_status"] == "accepted" and request["review_independence"] == "cross-family"
    assert verify_traces(tmp_path)[1] == []


def test_off_mode_writes_nothing(tmp_path: Path) -> None:
    for kwargs in ({"mode": "off"}, {"skill_args": "go\n--- trace: off\n"}, {"env": {"ARIS_TRACE_MODE": "off"}}):
        result = record_call(call(), project_dir=tmp_path, **kwargs)  # type: ignore[arg-type]
        assert result.mode == "off" and result.run_id is None
    assert not (tmp_path / ".aris").exists()


def test_bad_names_write_nothing(tmp_path: Path) -> None:
    for bad in ({"skill": "../escape"}, {"purpose": "a/b"}, {"purpose": ".."}, {"status": ""}, {"duration_ms": -1}):
        with pytest.raises(InvalidInputError):
            record_call(call(**bad), project_dir=tmp_path, env=ENV)
    assert not (tmp_path / ".aris").exists()
    assert not (tmp_path.parent / "escape").exists()


def test_context_manager_measures_and_keeps_errors(tmp_path: Path) -> None:
    with (
        pytest.raises(TimeoutError),
        trace_review(
            "auto-review-loop", "round-2-review", project_dir=tmp_path, prompt="p", executor_model="gpt-5"
        ) as c,
    ):
        c.review_completed = c.review_positive = c.review_scope_complete = True
        c.reported_reviewer_model = "claude-opus-4"
        c.response = "partial answer"
        time.sleep(0.02)
        raise TimeoutError("reviewer timed out")
    [meta_path] = (tmp_path / ".aris" / "traces" / "auto-review-loop").glob("*/001-round-2-review.meta.json")
    meta = read(meta_path)
    assert meta["status"] == "error"
    assert meta["error"] == {"type": "TimeoutError", "message": "reviewer timed out"}
    assert meta["review_completed"] is False and meta["review_positive"] is False
    assert meta["review_scope_complete"] is False
    assert meta["acceptance_status"] == "provisional"
    assert isinstance(meta["duration_ms"], int) and meta["duration_ms"] >= 20
    assert meta_path.with_name("001-round-2-review.response.md").read_bytes() == b"partial answer"


def test_context_manager_success_and_decorator(tmp_path: Path) -> None:
    with trace_review("critique", "first", project_dir=tmp_path, prompt="p", executor_model="gpt-5") as c:
        c.response = b"fine"
        c.reported_reviewer_model = "grok-4"
        c.verdict = "clean"
    [meta_path] = (tmp_path / ".aris" / "traces" / "critique").glob("*/001-first.meta.json")
    assert read(meta_path)["status"] == "ok" and read(meta_path)["verdict"] == "clean"

    @traced_review("critique", "second", project_dir=tmp_path, executor_model="gpt-5")
    def review(prompt: str) -> str:
        return f"reviewed: {prompt}"

    assert review("the draft") == "reviewed: the draft"
    [resp] = (tmp_path / ".aris" / "traces" / "critique").glob("*/002-second.response.md")
    assert resp.read_text() == "reviewed: the draft"
    assert read(resp.with_name("002-second.request.json"))["prompt"] == "the draft"


def test_run_rule(tmp_path: Path) -> None:
    env = {"ARIS_TRACE_RUN_IDLE_MINUTES": "30"}
    first = record_call(call(thread_id="A"), project_dir=tmp_path, env=env)
    same = record_call(call(purpose="round-2-review", thread_id="B"), project_dir=tmp_path, env=env)
    assert (same.run_id, same.call_number) == (first.run_id, 2), "recent, same executor and backend: joins"
    other_backend = record_call(call(backend="grok", thread_id="C"), project_dir=tmp_path, env=env)
    assert other_backend.run_id != first.run_id and other_backend.run_id.endswith("_run02")  # type: ignore[union-attr]
    continuation = record_call(call(purpose="follow-up", thread_id="A", backend="grok"), project_dir=tmp_path, env=env)
    assert continuation.run_id == first.run_id, "a thread's continuation stays with its thread"
    explicit = record_call(call(thread_id=None), project_dir=tmp_path, env=env, run_id=first.run_id)
    assert explicit.run_id == first.run_id and explicit.call_number == 4
    idle = record_call(call(thread_id=None), project_dir=tmp_path, env={"ARIS_TRACE_RUN_IDLE_MINUTES": "0"})
    assert idle.run_id.endswith("_run03")  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError):
        record_call(call(), project_dir=tmp_path, env=env, run_id="../../x")
    assert verify_traces(tmp_path)[1] == []


def test_traces_are_recorded_in_the_store_when_one_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REVIEWTRAIL_STORE", raising=False)
    monkeypatch.delenv("REVIEWTRAIL_DATABASE_URL", raising=False)
    settings = Settings(
        store=tmp_path / ".reviewtrail", database_url=f"sqlite:///{tmp_path / '.reviewtrail' / 'ledger.sqlite'}"
    )
    init_store(settings).close()
    c = call()
    result = record_call(c, project_dir=tmp_path, store=ProjectStores())
    assert result.ledger_record_id is not None
    record_call(call(purpose="meta-only", prompt="hidden", response=b"hidden too"), project_dir=tmp_path, mode="meta",
                store=ProjectStores())  # fmt: skip
    with open_store(settings) as store:
        full, meta_only = store.ledger.read(type="trace.review-call")
        payload = full.payload_value
        assert full.subject == f"trace:auto-review-loop/{result.run_id}"
        assert store.cas.read(payload["response"]["digest"]) == c.response
        assert payload["response"]["pool"] == "agent-state"
        assert store.cas.read(payload["prompt"]["digest"]) == b"Please review section 3."
        assert payload["meta"]["acceptance_status"] == "accepted"
        assert "prompt" not in meta_only.payload_value and "response" not in meta_only.payload_value
        assert b"hidden" not in meta_only.payload
        assert verify_store(store).ok
        # tampering with the stored response is caught by reviewtrail verify
        ref = payload["response"]
        path = store.root / "versioning" / "agent-state" / "blobs" / "sha256" / ref["digest"].split(":")[1]  # type: ignore[operator]
        path.chmod(0o644)
        path.write_bytes(b"forged review")
        assert not verify_store(store).ok


def test_verify_catches_forged_labels_and_changed_responses(tmp_path: Path) -> None:
    result = record_call(call(reported_reviewer_model=None), project_dir=tmp_path, env=ENV)
    assert result.acceptance_status == "provisional"
    assert result.meta_path is not None and result.response_path is not None
    meta = read(result.meta_path)
    meta["acceptance_status"] = "accepted"
    result.meta_path.write_text(json.dumps(meta))
    problems = verify_traces(tmp_path)[1]
    assert any("acceptance_status" in p for p in problems)
    result.response_path.write_bytes(b"edited after the fact")
    problems = verify_traces(tmp_path)[1]
    assert any("response_sha256" in p for p in problems)
    meta["unexpected"] = 1
    result.meta_path.write_text(json.dumps(meta))
    assert any("unexpected" in p for p in verify_traces(tmp_path)[1])
    events = tmp_path / ".aris" / "meta" / "events.jsonl"
    with events.open("a") as fh:
        fh.write('{"event": "something-else"}\n')
    assert any("events.jsonl line 2" in p for p in verify_traces(tmp_path)[1])


def test_schemas_are_shipped_and_valid() -> None:
    from jsonschema import Draft202012Validator

    from reviewtrail.tracing.files import load_schema

    for kind in ("run.meta", "request", "meta", "event"):
        Draft202012Validator.check_schema(load_schema(kind))


def test_project_root_is_the_git_top_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    result = record_call(call(), env=ENV)
    assert result.run_path is not None and result.run_path.is_relative_to(tmp_path / ".aris" / "traces")
    assert not (sub / ".aris").exists()
    os.chdir(tmp_path)


def test_wrong_types_are_rejected_before_anything_is_written(tmp_path: Path) -> None:
    for bad in ({"response": 42}, {"prompt": b"bytes"}, {"verdict": 7}, {"files_referenced": ["ok", ""]}):
        with pytest.raises(InvalidInputError):
            record_call(call(**bad), project_dir=tmp_path, env=ENV)
    assert not (tmp_path / ".aris").exists()
    text = record_call(call(response="plain text"), project_dir=tmp_path, env=ENV)
    assert text.response_path is not None and text.response_path.read_bytes() == b"plain text"


def test_an_unreachable_store_is_reported_after_the_trace_is_safe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.cas import FilesystemCas
    from reviewtrail.errors import BackendUnavailableError

    FilesystemCas(tmp_path / ".reviewtrail", create=True)
    (tmp_path / ".reviewtrail" / "reviewtrail-store.json").write_text('{"format": 1}')
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / ".reviewtrail"))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    with pytest.raises(BackendUnavailableError, match=r"trace written to .* but it was not recorded"):
        record_call(call(), project_dir=tmp_path, store=ProjectStores())
    assert verify_traces(tmp_path)[1] == []


def test_trace_verify_recomputes_every_label(tmp_path: Path) -> None:
    result = record_call(call(reported_reviewer_model=None), project_dir=tmp_path, env=ENV)
    assert result.meta_path is not None and result.request_path is not None
    clean = read(result.meta_path)
    for key, forged in (
        ("reviewer_model_source", "backend-reported"),
        ("independence_verified", True),
        ("model_family", "xai"),
        ("review_independence", "same-family"),
    ):
        meta = dict(clean)
        meta[key] = forged
        result.meta_path.write_text(json.dumps(meta))
        problems = verify_traces(tmp_path)[1]
        assert any(key in p for p in problems), key
    result.meta_path.write_text(json.dumps(clean))
    assert verify_traces(tmp_path)[1] == []


def test_an_executor_that_cannot_be_a_ledger_actor_is_rejected_first(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as err:
        record_call(call(executor="codex\nx"), project_dir=tmp_path, env=ENV)
    assert err.value.field == "executor"
    assert not (tmp_path / ".aris").exists()
