"""``trace save`` as a true drop-in for the reference ``save_trace.sh``.

Cases marked "reference" reproduce the public ARIS test suites (``tests/test_review_gate.py``,
``tests/test_http_reviewer_review_gate.py``, ``tests/test_http_reviewer_provenance_alignment.py``)
in reviewtrail's terms: the gate's stop/continue decision becomes the trace's
``acceptance_status`` and ``review_independence``.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_cli as run
from reviewtrail.tracing.files import iter_runs, verify_traces
from reviewtrail.tracing.rules import assess, model_family


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ARIS_TRACE_MODE", raising=False)
    monkeypatch.delenv("ARIS_REPO", raising=False)
    monkeypatch.delenv("ARIS_TRACE_RUN_ID", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def save(project: Path, *args: str) -> tuple[int, dict[str, object], str]:
    code, out, err = run("trace", "save", *args, "--project-dir", str(project), "--json")
    return code, (json.loads(out) if code == 0 else {}), err


def docs(result: dict[str, object]) -> tuple[dict[str, object], dict[str, object]]:
    request = json.loads(Path(str(result["request_path"])).read_text())
    meta = json.loads(Path(str(result["meta_path"])).read_text())
    return request, meta


POSITIVE = [
    "--status",
    "ok",
    "--verdict",
    "ready",
    "--review-completed",
    "--review-scope-complete",
    "--review-positive",
]


def positive_call(backend: str, executor_model: str, reviewer: str, *, reported: bool = True) -> list[str]:
    identity = ["--reported-reviewer-model", reviewer] if reported else ["--requested-reviewer-model", reviewer]
    return [
        "--skill", "auto-review-loop", "--purpose", "round-1-review", "--backend", backend,
        "--executor", "claude-code", "--executor-model", executor_model, *identity, "--response", "Score: 8/10",
        *POSITIVE,
    ]  # fmt: skip


# --- 1. the installed helper runs without reviewtrail on PATH -----------------------------------


def _shells() -> list[str]:
    return ["bash", "dash"]


@pytest.mark.parametrize("shell", _shells())
def test_installed_helper_works_without_reviewtrail_on_path(project: Path, shell: str) -> None:
    path = shutil.which(shell)
    assert path is not None, f"{shell} is needed to test the helper under it"
    assert run("trace", "install-helper", "--project-dir", str(project))[0] == 0
    helper = project / ".aris" / "tools" / "save_trace.sh"
    bare = "/usr/bin:/bin"
    assert subprocess.run(["sh", "-c", "command -v reviewtrail"], env={"PATH": bare}, check=False).returncode != 0
    proc = subprocess.run(
        [path, str(helper), "--skill", "research-review", "--purpose", "initial-review", "--prompt", "p",
         "--response", "r", "--project-dir", str(project)],
        cwd=project, capture_output=True, text=True, env={"PATH": bare, "HOME": str(project)}, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [run_] = list(iter_runs(project, "research-review"))
    assert run_.calls[0].response_text() == "r"


def test_helper_quotes_an_executable_path_with_spaces_and_quotes(tmp_path: Path) -> None:
    from reviewtrail.tracing.files._helper import helper_script

    odd = tmp_path / "it's a dir" / "reviewtrail"
    odd.parent.mkdir()
    odd.write_text('#!/bin/sh\necho "ran: $*"\n')
    odd.chmod(0o755)
    script = tmp_path / "save_trace.sh"
    script.write_text(helper_script(str(odd)))
    for shell in _shells():
        proc = subprocess.run(
            [shell, str(script), "--skill", "s"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"},
            check=False,
        )  # fmt: skip
        assert proc.returncode == 0 and proc.stdout == "ran: trace save --skill s\n", (shell, proc.stderr)
    proc = subprocess.run(
        ["sh", str(script), "x"], capture_output=True, text=True, check=False,
        env={"PATH": "/usr/bin:/bin", "REVIEWTRAIL_BIN": str(odd)},
    )  # fmt: skip
    assert proc.stdout == "ran: trace save x\n"


# --- 2. every reference flag is accepted ---------------------------------------------------------


def test_reference_flags_are_recorded_in_request_and_meta(project: Path) -> None:
    code, result, err = save(
        project, *positive_call("codex", "claude-sonnet-4.5", "gpt-5.4"),
        "--fallback-reason", "primary reviewer timed out", "--reviewer-profile", "strict-methods",
        "--memory-hash", "sha256:abc123",
    )  # fmt: skip
    assert code == 0, err
    request, meta = docs(result)
    for doc in (request, meta):
        assert doc["fallback_reason"] == "primary reviewer timed out"
        assert doc["reviewer_profile"] == "strict-methods"
        assert doc["memory_hash"] == "sha256:abc123"
    assert verify_traces(project)[1] == []


def test_absent_reference_fields_are_null(project: Path) -> None:
    code, result, err = save(project, "--skill", "s", "--purpose", "p", "--response", "x")
    assert code == 0, err
    request, meta = docs(result)
    for doc in (request, meta):
        assert doc["fallback_reason"] is None and doc["reviewer_profile"] is None and doc["memory_hash"] is None
        assert doc["native_evidence_id"] is None and doc["native_evidence_path"] is None


def test_declared_families_are_claims_that_never_override_the_rules(project: Path) -> None:
    """reference: test_gate_does_not_accept_caller_supplied_family_labels."""
    code, result, err = save(
        project, *positive_call("codex", "gpt-5.4", "gpt-5.6-sol"),
        "--executor-family", "anthropic", "--reviewer-family", "openai", "--independence-verified", "true",
    )  # fmt: skip
    assert code == 0, err
    request, meta = docs(result)
    for doc in (request, meta):
        assert doc["executor_family"] == "openai"
        assert doc["review_independence"] == "same-family" and doc["acceptance_status"] == "provisional"
        assert doc["independence_verified"] is False
        assert doc["declared_executor_family"] == "anthropic"
        assert doc["declared_reviewer_family"] == "openai"
        assert doc["declared_independence_verified"] == "true"
        assert doc["declared_mismatches"] == ["executor_family", "independence_verified"]
    assert "executor family 'anthropic'" in err and "independence" in err
    assert verify_traces(project)[1] == []
    # the pure rule takes no family labels at all
    assert not {"executor_family", "reviewer_family", "independence_verified"} & set(
        inspect.signature(assess).parameters
    )


def test_matching_declared_claims_note_no_mismatch(project: Path) -> None:
    code, result, err = save(
        project, *positive_call("codex", "claude-sonnet-4.5", "gpt-5.4"),
        "--executor-family", "Anthropic", "--reviewer-family", "openai", "--independence-verified", "unverified",
    )  # fmt: skip
    assert code == 0, err
    request, meta = docs(result)
    assert request["declared_mismatches"] == [] and meta["declared_mismatches"] == []
    assert "warning" not in err


def test_identity_validated_flag_alone_grants_nothing(project: Path) -> None:
    code, result, err = save(
        project, *positive_call("codex", "claude-sonnet-4.5", "gpt-5.4", reported=False), "--identity-validated"
    )
    assert code == 0, err
    _, meta = docs(result)
    assert meta["acceptance_status"] == "provisional" and meta["independence_verified"] is False
    assert meta["identity_validated"] is False


# --- 3. compatibility Copilot drive mode is never accepted ----------------------------------------


@pytest.mark.parametrize("executor_model", ["claude-sonnet-4.5", "gemini-3.1-pro", "gpt-5.4"])
def test_copilot_drive_mode_is_never_accepted(project: Path, executor_model: str) -> None:
    """reference: test_copilot_positive_escalates_to_policy_finalizer (a positive copilot round never stops)."""
    reviewer = "claude-opus-4" if executor_model.startswith("gpt") else "gpt-5.4"
    for backend in ("copilot", "Copilot"):
        code, result, err = save(project, *positive_call(backend, executor_model, reviewer))
        assert code == 0, err
        request, meta = docs(result)
        assert meta["review_independence"] == "cross-family"
        assert result["acceptance_status"] == request["acceptance_status"] == meta["acceptance_status"] == "provisional"
    assert verify_traces(project)[1] == []


def test_trace_verify_recomputes_copilot_as_provisional(project: Path) -> None:
    code, result, err = save(project, *positive_call("copilot", "claude-sonnet-4.5", "gpt-5.4"))
    assert code == 0, err
    meta_path = Path(str(result["meta_path"]))
    meta = json.loads(meta_path.read_text())
    meta["acceptance_status"] = "accepted"
    meta_path.write_text(json.dumps(meta))
    assert any("acceptance_status" in p for p in verify_traces(project)[1])


@given(
    st.sampled_from(["ok", "success", "completed", "fallback_used", "error"]),
    st.booleans(), st.booleans(), st.booleans(), st.booleans(),
    st.sampled_from(["gpt-5.4", "claude-opus-4", "gemini-2.5-pro", "grok-4", None]),
    st.sampled_from(["gpt-5.4", "claude-opus-4", "gemini-2.5-pro", "grok-4", None]),
)  # fmt: skip
def test_copilot_backend_is_provisional_whatever_else_holds(
    status: str,
    completed: bool,
    scope: bool,
    positive: bool,
    validated: bool,
    executor: str | None,
    reviewer: str | None,
) -> None:
    a = assess(
        executor_model=executor,
        requested_reviewer_model=None,
        reported_reviewer_model=reviewer,
        status=status,
        review_completed=completed,
        review_scope_complete=scope,
        review_positive=positive,
        identity_validated=validated,
        backend="copilot",
    )
    assert a.acceptance_status == "provisional"


# --- 4. model families follow the reference gate's table ------------------------------------------

REFERENCE_FAMILY_CASES = [
    # test_review_gate.py::test_model_family_is_derived_fail_closed
    ("gpt-5.4", "openai"),
    ("claude-sonnet-4.5", "anthropic"),
    ("gemini-3.1-pro", "google"),
    ("mystery-model", "unknown"),
    ("gpt-5.4-claude", "unknown"),
    # test_http_reviewer_review_gate.py::test_review_gate_recognizes_http_provider_families
    ("shangtang-glm", "zhipu"),
    ("GLM-5", "zhipu"),
    ("MiniMax-M2.7", "minimax"),
    ("kimi-k2.5", "moonshot"),
    ("qwen3.6-plus", "qwen"),
    ("mimo-v2.5-pro", "xiaomi"),
    ("doubao-pro-4k", "bytedance"),
    ("grok-4", "xai"),
    ("llama-4", "meta"),
    ("mistral-large", "mistral"),
    # test_http_reviewer_provenance_alignment.py
    ("glm-5", "zhipu"),
    ("zhipu/glm-4.5", "zhipu"),
    ("mimo-v2", "xiaomi"),
    ("xiaomi/mimo", "xiaomi"),
    ("doubao-1.5-pro", "bytedance"),
    ("volcengine/doubao", "bytedance"),
    ("ollama/deepseek-r1", "deepseek"),
    ("meta/llama-3.3", "meta"),
    ("claude-gpt-4", "unknown"),
]

# Host and tool names in the reference gate's table that stand for one vendor's models.
TABLE_HOST_CASES = [
    ("codex", "openai"),
    ("Codex", "openai"),
    ("oracle", "openai"),
    ("oracle-pro", "openai"),
    ("openrouter/oracle-pro", "openai"),
    ("volcengine", "bytedance"),
    ("codex-claude", "unknown"),  # exactly one family, or unknown
    ("oracle-gemini", "unknown"),
    ("oracles-7b", "unknown"),  # word boundaries still hold
    ("mycodex", "unknown"),
]


@pytest.mark.parametrize(("name", "family"), REFERENCE_FAMILY_CASES)
def test_reference_family_cases(name: str, family: str) -> None:
    assert model_family(name) == family


@pytest.mark.parametrize(("name", "family"), TABLE_HOST_CASES)
def test_host_and_tool_names_of_one_vendor(name: str, family: str) -> None:
    assert model_family(name) == family


def test_codex_executor_against_a_claude_reviewer_is_cross_family(project: Path) -> None:
    code, result, err = save(project, *positive_call("claude", "codex", "claude-opus-4-1"))
    assert code == 0, err
    _, meta = docs(result)
    assert meta["executor_family"] == "openai" and meta["review_independence"] == "cross-family"
    assert meta["acceptance_status"] == "accepted"


@given(st.sampled_from(["openrouter/", "ollama/", "bedrock/", "azure/"]), st.sampled_from(TABLE_HOST_CASES))
def test_route_prefixes_never_decide(route: str, case: tuple[str, str]) -> None:
    name, family = case
    assert model_family(route + name) == model_family(name) == family


# independence and acceptance: review_gate transitions in trace terms


@pytest.mark.parametrize(
    ("backend", "executor", "reviewer", "reported", "independence", "acceptance"),
    [
        # test_codex_finalizer_positive_stops_but_identity_remains_declared: requested-only identity stays provisional
        ("codex", "claude-sonnet-4.5", "gpt-5.6-sol", False, "cross-family", "provisional"),
        ("codex", "claude-sonnet-4.5", "gpt-5.6-sol", True, "cross-family", "accepted"),
        # test_same_family_finalizer_fails_closed
        ("codex", "gpt-5.4", "gpt-5.6-sol", True, "same-family", "provisional"),
        # test_manual_finalizer_requires_reported_identity (missing / present)
        ("manual", "gpt-5.4", "claude-sonnet-4.5", False, "cross-family", "provisional"),
        ("manual", "gpt-5.4", "claude-sonnet-4.5", True, "cross-family", "accepted"),
        # test_explicit_manual_positive_still_rejects_same_family
        ("manual", "gpt-5.4", "gpt-5.6-sol", True, "same-family", "provisional"),
        # test_http_reviewer_review_gate.py: llm-chat cross / same / unknown family
        ("llm-chat", "shangtang-glm", "gemini-2.5-pro", True, "cross-family", "accepted"),
        ("llm-chat", "shangtang-glm", "zhipu-glm", True, "same-family", "provisional"),
        ("llm-chat", "shangtang-glm", "mystery-reviewer", True, "unknown", "provisional"),
        # test_copilot_positive_fails_closed_for_unknown_executor
        ("copilot", "mystery-model", "gpt-5.4", True, "unknown", "provisional"),
    ],
)
def test_reference_gate_cases_in_trace_terms(
    project: Path, backend: str, executor: str, reviewer: str, reported: bool, independence: str, acceptance: str
) -> None:
    code, result, err = save(project, *positive_call(backend, executor, reviewer, reported=reported))
    assert code == 0, err
    _, meta = docs(result)
    assert (meta["review_independence"], meta["acceptance_status"]) == (independence, acceptance)
    assert meta["independence_verified"] is False  # a family relation alone never verifies independence


@pytest.mark.parametrize("verdict", ["ready", "almost", "not ready"])
def test_raw_verdict_never_implies_positivity(project: Path, verdict: str) -> None:
    """reference: test_high_score_not_ready_does_not_stop; the trace never infers the skill's gate."""
    args = [a for a in positive_call("codex", "claude-sonnet-4.5", "gpt-5.4") if a != "--review-positive"]
    args[args.index("--verdict") + 1] = verdict
    code, result, err = save(project, *args)
    assert code == 0, err
    assert result["acceptance_status"] == "provisional"


# --- 5. thread continuation reads thread_id from meta files ---------------------------------------


def _reference_run(project: Path, skill: str, run_id: str, thread: str) -> Path:
    """A run folder exactly as the reference save_trace.sh writes it (thread_id only in the meta file)."""
    run = project / ".aris" / "traces" / skill / run_id
    run.mkdir(parents=True)
    (run / "run.meta.json").write_text(
        json.dumps(
            {"skill": skill, "run_id": run_id, "started_at": "2026-04-14T09:00:00Z", "project_dir": str(project)},
            indent=2,
        )
        + "\n"
    )
    request = {
        "call_number": 1, "purpose": "round-1-review", "timestamp": "2026-04-14T09:00:05Z", "tool": "mcp__codex__codex",
        "model": "gpt-5.4", "effort": "xhigh", "fallback_reason": "", "status": "ok", "prompt": "Review this\n",
    }  # fmt: skip
    (run / "001-round-1-review.request.json").write_text(json.dumps(request, indent=2, ensure_ascii=False))
    (run / "001-round-1-review.response.md").write_text("Score: 5/10")
    meta = {
        "call_number": 1, "purpose": "round-1-review", "timestamp": "2026-04-14T09:00:05Z", "thread_id": thread,
        "model": "gpt-5.4", "effort": "xhigh", "fallback_reason": "", "status": "ok",
    }  # fmt: skip
    (run / "001-round-1-review.meta.json").write_text(json.dumps(meta, indent=2))
    return run


def test_follow_up_joins_a_run_the_reference_helper_started(project: Path) -> None:
    _reference_run(project, "auto-review-loop", "2026-04-14_run01", "019d8fe0-aaaa")
    _reference_run(project, "auto-review-loop", "2026-04-14_run02", "019d8fe0-bbbb")
    code, result, err = save(
        project, "--skill", "auto-review-loop", "--purpose", "round-2-review", "--thread-id", "019d8fe0-aaaa",
        "--response", "Score: 7/10",
    )  # fmt: skip
    assert code == 0, err
    assert result["run_id"] == "2026-04-14_run01" and result["call_number"] == 2
    # a thread no run holds starts a new run of today
    code, result, err = save(
        project, "--skill", "auto-review-loop", "--purpose", "round-1-review", "--thread-id", "019d8fe0-cccc",
    )  # fmt: skip
    assert code == 0, err
    assert result["run_id"] not in ("2026-04-14_run01", "2026-04-14_run02")


def test_an_empty_reference_thread_id_joins_nothing(project: Path) -> None:
    _reference_run(project, "auto-review-loop", "2026-04-14_run01", "")
    code, result, err = save(project, "--skill", "auto-review-loop", "--purpose", "p", "--thread-id", "t-new")
    assert code == 0, err
    assert result["run_id"] != "2026-04-14_run01"


# --- 6. resolve-helper follows the whole reference chain ------------------------------------------


def _helper_at(root: Path) -> Path:
    helper = root / "tools" / "save_trace.sh"
    helper.parent.mkdir(parents=True, exist_ok=True)
    helper.write_text("#!/bin/sh\n")
    return helper


def resolve(project: Path) -> str:
    code, out, err = run("trace", "resolve-helper", "--project-dir", str(project))
    assert code == 0, err
    return out.strip()


def test_resolver_reads_the_repo_root_in_the_install_manifest(project: Path) -> None:
    repo = project / "aris-checkout"
    helper = _helper_at(repo)
    (project / ".aris").mkdir()
    (project / ".aris" / "installed-skills.txt").write_text(
        f"# ARIS install manifest\nversion\t2\nrepo_root\t{repo}\nskill\tauto-review-loop\t{repo}/skills/x\n"
    )
    assert resolve(project) == str(helper)


def test_resolver_reads_the_home_pointer(project: Path) -> None:
    repo = project / "global-checkout"
    helper = _helper_at(repo)
    (project / "home" / ".aris").mkdir(parents=True)
    (project / "home" / ".aris" / "repo").write_text(f"{repo}\n")
    assert resolve(project) == str(helper)


def test_resolver_order_env_then_manifest_then_pointer(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_helper = _helper_at(project / "env-repo")
    manifest_helper = _helper_at(project / "manifest-repo")
    pointer_helper = _helper_at(project / "pointer-repo")
    (project / ".aris").mkdir()
    (project / ".aris" / "installed-skills.txt").write_text(f"repo_root\t{project / 'manifest-repo'}\n")
    (project / "home" / ".aris").mkdir(parents=True)
    (project / "home" / ".aris" / "repo").write_text(str(project / "pointer-repo"))
    monkeypatch.setenv("ARIS_REPO", str(project / "env-repo"))
    assert resolve(project) == str(env_helper)
    monkeypatch.delenv("ARIS_REPO")
    assert resolve(project) == str(manifest_helper)
    # a manifest without a repo_root line falls through to the pointer
    (project / ".aris" / "installed-skills.txt").write_text("version\t2\n")
    assert resolve(project) == str(pointer_helper)
    # an ARIS_REPO without the helper does not fall back to the pointer: the reference chain stops there
    monkeypatch.setenv("ARIS_REPO", str(project / "empty-repo"))
    assert resolve(project) == ""
    monkeypatch.delenv("ARIS_REPO")
    # project-local helpers come first
    local = _helper_at(project)
    assert resolve(project) == str(local)
    assert manifest_helper.exists() and pointer_helper.exists() and os.path.exists(env_helper)


# --- 7. duration_ms is null when no duration is given ---------------------------------------------


def test_duration_is_null_when_not_given(project: Path) -> None:
    code, result, err = save(project, "--skill", "s", "--purpose", "p", "--response", "x")
    assert code == 0, err
    _, meta = docs(result)
    assert meta["duration_ms"] is None
    assert verify_traces(project)[1] == []
    code, result, err = save(project, "--skill", "s", "--purpose", "p", "--duration-ms", "0")
    assert docs(result)[1]["duration_ms"] == 0
