"""``--native-evidence``: host-session evidence for native host reviewers (``--backend copilot-native``).

The fixtures build a Copilot session event log and an evidence artifact exactly as the reference
``copilot_native_evidence.py verify`` writes them; the cases reproduce the public ARIS suites
(``tests/test_copilot_native_evidence.py`` and the native cases of ``tests/test_review_gate.py``).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reviewtrail.cli._app import app
from reviewtrail.tracing.files import verify_traces

runner = CliRunner()
CHALLENGE_SCHEMA = "aris.copilot-native.challenge/v1"
EVIDENCE_SCHEMA = "aris.copilot-native.evidence/v1"
NONCE = "n0nce-abcdefghijklmnop"
BINDING = "run_20260715_native_0123456789"


def _ts() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _event(kind: str, event_id: str, data: dict[str, Any], *, agent_id: str | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {"type": kind, "id": event_id, "timestamp": _ts(), "parentId": None, "data": data}
    if agent_id is not None:
        value["agentId"] = agent_id
    return value


def _events(workspace: Path, executor: str, reviewer: str, response: str) -> list[dict[str, Any]]:
    marker = json.dumps({"binding": BINDING, "schema": CHALLENGE_SCHEMA, "status": "marker"}, sort_keys=True)
    call = "native-review-call"
    return [
        _event("session.start", "session-start", {"sessionId": "session-123", "producer": "copilot",
               "context": {"cwd": str(workspace.resolve())}}),
        _event("tool.execution_start", "challenge-event", {"toolCallId": "challenge-call", "toolName": "bash",
               "arguments": {"command": f"BINDING='{BINDING}'; python3 copilot_native_evidence.py marker"},
               "model": executor}),
        _event("tool.execution_complete", "challenge-complete", {"toolCallId": "challenge-call", "success": True,
               "model": executor, "result": {"content": marker + "\n<shellId: 0 completed with exit code 0>"}}),
        _event("tool.execution_start", "native-invocation", {"toolCallId": call, "toolName": "task",
               "arguments": {"agent_type": "rubber-duck", "prompt": f"Review files.\nARIS_REVIEW_NONCE={NONCE}\n"},
               "model": executor}),
        _event("subagent.started", "native-started", {"toolCallId": call, "agentName": "rubber-duck",
               "model": reviewer}, agent_id=call),
        _event("subagent.completed", "native-completed", {"toolCallId": call, "agentName": "rubber-duck",
               "model": reviewer}, agent_id=call),
        _event("tool.execution_complete", "native-tool-complete", {"toolCallId": call, "success": True,
               "model": executor, "result": {"content": response}}),
    ]  # fmt: skip


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_evidence(
    root: Path,
    *,
    executor: str = "claude-sonnet-4.6",
    reviewer: str = "gpt-5.5",
    response: str = "- Score: 8/10\n- Verdict: ready\n- Weaknesses: none",
) -> tuple[Path, Path, dict[str, Any]]:
    """(evidence path, session events path, evidence doc) as the reference ``verify`` writes them."""
    workspace = root / "workspace"
    workspace.mkdir(exist_ok=True)
    log = root / "session-state" / "session-123" / "events.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    raw = "".join(json.dumps(e) + "\n" for e in _events(workspace, executor, reviewer, response)).encode()
    log.write_bytes(raw)
    response_path = workspace / "review-stage" / "response.md"
    response_path.parent.mkdir(exist_ok=True)
    response_path.write_bytes(response.encode())
    families = {"claude-sonnet-4.6": "anthropic", "gpt-5.5": "openai", "gpt-5.4": "openai"}
    doc: dict[str, Any] = {
        "schema": EVIDENCE_SCHEMA, "status": "verified", "reason": "host-event-verified-cross-family",
        "verified_at": _ts(), "binding": BINDING, "nonce": NONCE, "cwd": str(workspace.resolve()),
        "session_id": "session-123", "session_events": str(log.resolve()),
        "challenge_event_id": "challenge-event", "challenge_completion_event_id": "challenge-complete",
        "challenge_tool_call_id": "challenge-call", "tool_call_id": "native-review-call", "agent_name": "rubber-duck",
        "executor_model": executor, "executor_model_source": "host-session-event",
        "executor_family": families[executor], "reviewer_model": reviewer,
        "reviewer_model_source": "host-session-event", "reviewer_family": families[reviewer],
        "family_relation": "different" if families[executor] != families[reviewer] else "same",
        "independence_verified": families[executor] != families[reviewer],
        "response_path": str(response_path.resolve()), "response_sha256": _sha(response.encode()),
        "event_prefix_bytes": len(raw), "event_prefix_sha256": _sha(raw),
    }  # fmt: skip
    if families[executor] == families[reviewer]:
        doc["status"], doc["reason"] = "rejected", "same-model-family"
    doc["evidence_id"] = evidence_id(doc)
    path = workspace / "review-stage" / "evidence.json"
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return path, log, doc


def evidence_id(doc: dict[str, Any]) -> str:
    keys = ("session_id", "challenge_event_id", "tool_call_id", "executor_model", "reviewer_model")
    fields = {k: doc.get(k) for k in (*keys, "response_sha256", "event_prefix_sha256")}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return f"cne_{_sha(canonical)[:32]}"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ARIS_TRACE_MODE", raising=False)
    monkeypatch.delenv("ARIS_TRACE_RUN_ID", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def save(project: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, ["trace", "save", *args, "--project-dir", str(project), "--json"])
    return result.exit_code, (json.loads(result.stdout) if result.exit_code == 0 else {}), result.stderr


def docs(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return json.loads(Path(result["request_path"]).read_text()), json.loads(Path(result["meta_path"]).read_text())


NATIVE = ["--skill", "auto-review-loop", "--purpose", "round-1-review", "--backend", "copilot-native"]
DONE = ["--review-completed", "--review-scope-complete", "--review-positive"]


def test_save_uses_only_validated_native_model_provenance(project: Path) -> None:
    """reference: test_save_trace_uses_only_validated_native_model_provenance (+ the gate's native positive stop)."""
    path, _, doc = make_evidence(project)
    code, result, err = save(
        project, *NATIVE, "--native-evidence", str(path), "--prompt", "review paths directly", "--verdict", "ready",
        *DONE,
    )  # fmt: skip
    assert code == 0, err
    request, meta = docs(result)
    assert request["backend"] == "copilot-native"
    assert request["tool"] == "task(agent_type=rubber-duck)" and request["executor"] == "copilot"
    assert request["executor_model"] == "claude-sonnet-4.6" and request["model"] == "gpt-5.5"
    assert request["executor_model_source"] == "host-session-event"
    assert request["reviewer_model_source"] == "host-session-event"
    assert request["reported_reviewer_model"] == "gpt-5.5"
    assert request["independence_verified"] is True
    assert request["native_evidence_id"] == meta["native_evidence_id"] == doc["evidence_id"]
    assert request["native_evidence_path"] == str(path.resolve())
    assert meta["identity_validated"] is True and meta["acceptance_status"] == "accepted"
    assert Path(result["response_path"]).read_text() == "- Score: 8/10\n- Verdict: ready\n- Weaknesses: none"
    assert verify_traces(project)[1] == []


def test_native_negative_round_keeps_verified_identity_but_stays_provisional(project: Path) -> None:
    """reference: test_native_copilot_negative_continues_on_native_backend."""
    path, _, _ = make_evidence(project, response="Score: 5/10\nVerdict: not ready")
    code, result, err = save(
        project, *NATIVE, "--native-evidence", str(path), "--verdict", "not ready", "--review-completed",
        "--review-scope-complete",
    )  # fmt: skip
    assert code == 0, err
    _, meta = docs(result)
    assert meta["independence_verified"] is True and meta["acceptance_status"] == "provisional"


def test_successful_native_trace_requires_evidence(project: Path) -> None:
    """reference: test_save_trace_rejects_native_backend_without_evidence; test_native_copilot_missing_evidence."""
    code, _, err = save(project, *NATIVE, "--verdict", "ready", *DONE)
    assert code == 2 and "--native-evidence" in err
    assert not (project / ".aris").exists()


def test_failed_native_dispatch_is_recorded_without_claiming_evidence(project: Path) -> None:
    """reference: test_save_trace_records_failed_native_dispatch_without_claiming_evidence."""
    code, result, err = save(
        project, "--skill", "auto-review-loop", "--purpose", "round-1-native-dispatch", "--backend", "copilot-native",
        "--status", "error", "--fallback-reason", "rubber-duck is not exposed by this Copilot session",
        "--response", "Unknown agent_type: rubber-duck",
    )  # fmt: skip
    assert code == 0, err
    request, meta = docs(result)
    assert request["backend"] == "copilot-native" and meta["status"] == "error"
    assert request["native_evidence_id"] is None and request["native_evidence_path"] is None
    assert request["executor_model_source"] == "unavailable"
    assert request["reviewer_model_source"] == "unavailable"
    assert request["independence_verified"] is False and meta["identity_validated"] is False
    assert request["fallback_reason"] == "rubber-duck is not exposed by this Copilot session"


def test_native_evidence_cannot_be_attached_to_another_backend(project: Path) -> None:
    """reference: test_native_evidence_cannot_be_attached_to_another_backend."""
    path, _, _ = make_evidence(project)
    code, _, err = save(project, "--skill", "s", "--purpose", "p", "--backend", "codex", "--native-evidence", str(path))
    assert code == 2 and "copilot-native" in err
    assert not (project / ".aris").exists()


@pytest.mark.parametrize("verdict", ["almost", "not ready"])
def test_declared_verdict_must_match_the_bound_response(project: Path, verdict: str) -> None:
    """reference: test_native_copilot_declared_assessment_must_match_bound_response (verdict cases)."""
    path, _, _ = make_evidence(project)
    code, _, err = save(project, *NATIVE, "--native-evidence", str(path), "--verdict", verdict, *DONE)
    assert code == 2 and "verdict" in err


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--executor-model", "gpt-5.4"), ("--reported-reviewer-model", "claude-opus-4"), ("--model", "gpt-4o")],
)
def test_caller_models_must_agree_with_the_evidence(project: Path, flag: str, value: str) -> None:
    path, _, _ = make_evidence(project)
    code, _, err = save(project, *NATIVE, "--native-evidence", str(path), flag, value)
    assert code == 2 and "disagrees with the host-session evidence" in err


def test_a_response_that_differs_from_the_bound_one_is_refused(project: Path) -> None:
    path, _, _ = make_evidence(project)
    code, _, err = save(project, *NATIVE, "--native-evidence", str(path), "--response", "something else")
    assert code == 2 and "response" in err


def _validate(path: Path) -> Any:
    from reviewtrail.tracing.native import validate_native_evidence

    return validate_native_evidence(path)


def test_evidence_validation_detects_event_prefix_tampering(tmp_path: Path) -> None:
    """reference: test_evidence_validation_detects_event_prefix_tampering."""
    from reviewtrail.errors import IntegrityError

    path, log, _ = make_evidence(tmp_path)
    log.write_bytes(log.read_bytes().replace(b'"producer": "copilot"', b'"producer": "tampered"', 1))
    with pytest.raises(IntegrityError, match="prefix was modified"):
        _validate(path)


def test_appending_later_session_events_does_not_invalidate(tmp_path: Path) -> None:
    """reference: test_appending_later_session_events_does_not_invalidate_bound_prefix."""
    path, log, doc = make_evidence(tmp_path)
    with log.open("a") as fh:
        fh.write(json.dumps(_event("assistant.turn_end", "later", {"turnId": "0"})) + "\n")
    assert _validate(path).evidence_id == doc["evidence_id"]


def test_rejected_same_family_evidence_is_not_verified(tmp_path: Path) -> None:
    """reference: test_verify_rejects_same_family_but_keeps_audit_artifacts (the validate step)."""
    from reviewtrail.errors import InvalidInputError

    path, _, _ = make_evidence(tmp_path, executor="gpt-5.4", reviewer="gpt-5.5")
    with pytest.raises(InvalidInputError, match="not verified"):
        _validate(path)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("reviewer_model", "claude-opus-4", "model"),
        ("executor_model", "gpt-5-mini", "challenge"),  # the challenge event holds the host-reported executor
        ("evidence_id", "cne_" + "0" * 32, "evidence id"),
        ("schema", "aris.copilot-native.evidence/v0", "schema"),
        ("agent_name", "code-review", "rubber-duck"),
        ("family_relation", "unknown", "family"),
        ("nonce", "another-nonce-value", "lifecycle"),
    ],
)
def test_edited_evidence_fields_fail_validation(tmp_path: Path, field: str, value: str, message: str) -> None:
    from reviewtrail.errors import ReviewtrailError

    path, _, doc = make_evidence(tmp_path)
    doc[field] = value
    if field != "evidence_id":
        doc["evidence_id"] = evidence_id(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ReviewtrailError, match=message):
        _validate(path)


def test_a_changed_response_artifact_fails_validation(tmp_path: Path) -> None:
    from reviewtrail.errors import IntegrityError

    path, _, doc = make_evidence(tmp_path)
    Path(doc["response_path"]).write_text("Score: 10/10\nVerdict: ready")
    with pytest.raises(IntegrityError, match="response"):
        _validate(path)


def test_a_failed_subagent_lifecycle_fails_validation(tmp_path: Path) -> None:
    path, log, doc = make_evidence(tmp_path)
    lines = log.read_bytes().splitlines(keepends=True)
    failed = json.dumps(_event("subagent.failed", "x", {"toolCallId": "native-review-call"})).encode() + b"\n"
    raw = b"".join([*lines[:-1], failed, lines[-1]])
    log.write_bytes(raw)
    doc["event_prefix_bytes"], doc["event_prefix_sha256"] = len(raw), _sha(raw)
    doc["evidence_id"] = evidence_id(doc)
    path.write_text(json.dumps(doc))
    from reviewtrail.errors import ReviewtrailError

    with pytest.raises(ReviewtrailError, match="failed"):
        _validate(path)


def test_a_symlinked_evidence_file_is_refused(tmp_path: Path) -> None:
    from reviewtrail.errors import InvalidInputError

    path, _, _ = make_evidence(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(path)
    with pytest.raises(InvalidInputError, match="symlink"):
        _validate(link)
