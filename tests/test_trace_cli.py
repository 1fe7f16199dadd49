"""``reviewtrail trace``: the save_trace.sh drop-in, the helper chain, concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import run_cli as run
from reviewtrail.tracing.files import iter_runs, verify_traces

EXE = str(Path(sys.executable).parent / "reviewtrail")


SEED_EXAMPLE = [
    "--skill", "research-review", "--purpose", "initial-review", "--backend", "grok", "--tool", "mcp__grok__grok",
    "--executor", "codex", "--executor-model", "gpt-6-astra", "--requested-reviewer-model", "grok-4",
    "--reported-reviewer-model", "grok-4-0709", "--model", "grok-4-0709", "--effort", "high", "--thread-id", "th-1",
    "--status", "ok", "--verdict", "ready", "--review-completed", "--review-scope-complete", "--review-positive",
]  # fmt: skip


def test_save_with_the_seed_flags(trace_project: Path) -> None:
    project = trace_project
    (project / "p.txt").write_text("full prompt")
    (project / "r.md").write_bytes(b"full response\n\nno trailing newline")
    code, out, err = run(
        "trace", "save", *SEED_EXAMPLE, "--prompt-file", "p.txt", "--response-file", "r.md",
        "--files-referenced", "paper/3.tex,results/t1.csv", "--files-referenced", "extra.md",
        "--duration-ms", "1500", "--agent-id", "ag-1", "--project-dir", str(project), "--json",
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["acceptance_status"] == "accepted" and result["review_independence"] == "cross-family"
    request = json.loads(Path(result["request_path"]).read_text())
    assert request["files_referenced"] == ["paper/3.tex", "results/t1.csv", "extra.md"]
    assert request["prompt"] == "full prompt" and request["effort"] == "high" and request["thread_id"] == "th-1"
    assert Path(result["response_path"]).read_bytes() == b"full response\n\nno trailing newline"
    meta = json.loads(Path(result["meta_path"]).read_text())
    assert (
        meta["duration_ms"] == 1500 and meta["agent_id"] == "ag-1" and meta["reported_reviewer_model"] == "grok-4-0709"
    )


def test_save_rejects_bad_input_and_writes_nothing(trace_project: Path) -> None:
    project = trace_project
    base = ["trace", "save", "--project-dir", str(project)]
    assert run(*base, "--skill", "../up", "--purpose", "p")[0] == 2
    assert run(*base, "--skill", "s", "--purpose", "a/b")[0] == 2
    assert run(*base, "--skill", "s", "--purpose", "p", "--prompt", "x", "--prompt-file", "y")[0] == 2
    assert run(*base, "--skill", "s", "--purpose", "p", "--response-file", "missing.md")[0] == 2
    assert run(*base, "--skill", "s", "--purpose", "p", "--trace-mode", "loud")[0] == 2
    assert run(*base, "--skill", "s", "--purpose", "p", "--reviewer-kind", "oracle")[0] == 2
    (project / "bin.txt").write_bytes(b"\xff\xfe")
    code, _, err = run(*base, "--skill", "s", "--purpose", "p", "--prompt-file", "bin.txt")
    assert code == 2 and "prompt-file" in err
    assert not (project / ".aris").exists()


def test_sentinel_report_is_null_and_not_accepted(trace_project: Path) -> None:
    project = trace_project
    code, out, _ = run(
        "trace", "save", "--skill", "s", "--purpose", "p", "--executor-model", "gpt-5",
        "--requested-reviewer-model", "claude-opus-4", "--reported-reviewer-model", "UNKNOWN",
        "--response", "ok", "--review-completed", "--review-scope-complete", "--review-positive", "--json",
        "--project-dir", str(project),
    )  # fmt: skip
    assert code == 0
    meta = json.loads(Path(json.loads(out)["meta_path"]).read_text())
    assert meta["reported_reviewer_model"] is None and meta["reviewer_model_source"] == "requested"
    assert meta["acceptance_status"] == "provisional"


def test_error_status_is_kept(trace_project: Path) -> None:
    project = trace_project
    code, out, _ = run(
        "trace", "save", "--skill", "s", "--purpose", "p", "--status", "error", "--verdict", "ready",
        "--response", "stack trace...", "--json", "--project-dir", str(project),
    )  # fmt: skip
    meta = json.loads(Path(json.loads(out)["meta_path"]).read_text())
    assert code == 0 and meta["status"] == "error" and meta["verdict"] == "ready"
    assert meta["acceptance_status"] == "provisional"


def test_inline_off_in_skill_args(trace_project: Path) -> None:
    project = trace_project
    code, out, _ = run(
        "trace", "save", "--skill", "s", "--purpose", "p", "--response", "x", "--trace-mode", "full",
        "--skill-args", "review the paper\n--- trace: off", "--project-dir", str(project),
    )  # fmt: skip
    assert code == 0 and "nothing written" in out
    assert not (project / ".aris").exists()


def test_family_command() -> None:
    assert run("trace", "family", "deepseek-r1-distill-llama-70b")[1] == "unknown\n"
    assert run("trace", "family", "openrouter/anthropic/claude-sonnet-4")[1] == "anthropic\n"


def test_helper_install_and_resolver_chain(trace_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = trace_project
    assert run("trace", "resolve-helper", "--project-dir", str(project))[1] == "\n"
    aris_repo = project / "aris-repo"
    (aris_repo / "tools").mkdir(parents=True)
    (aris_repo / "tools" / "save_trace.sh").write_text("#!/bin/sh\n")
    monkeypatch.setenv("ARIS_REPO", str(aris_repo))
    assert run("trace", "resolve-helper", "--project-dir", str(project))[1].strip() == str(
        aris_repo / "tools" / "save_trace.sh"
    )
    (project / "tools").mkdir()
    (project / "tools" / "save_trace.sh").write_text("#!/bin/sh\n")
    assert run("trace", "resolve-helper", "--project-dir", str(project))[1].strip() == str(
        project / "tools" / "save_trace.sh"
    )
    code, out, _ = run("trace", "install-helper", "--project-dir", str(project))
    helper = project / ".aris" / "tools" / "save_trace.sh"
    assert code == 0 and out.strip() == str(helper) and os.access(helper, os.X_OK)
    assert run("trace", "resolve-helper", "--project-dir", str(project))[1].strip() == str(helper)
    helper.write_text("#!/bin/sh\necho custom\n")
    assert run("trace", "install-helper", "--project-dir", str(project))[0] == 6, "a different helper is not replaced"
    assert run("trace", "install-helper", "--project-dir", str(project), "--force")[0] == 0

    # the installed helper is a real drop-in: bash "$TRACE_HELPER" --flags...
    (project / "r.md").write_text("Score: 7/10")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", str(helper), *SEED_EXAMPLE, "--response-file", "r.md", "--prompt", "p", "--project-dir", str(project)],
        cwd=project, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [run_] = list(iter_runs(project, "research-review"))
    assert run_.calls[0].response_text() == "Score: 7/10"


@pytest.mark.slow
def test_fifty_concurrent_saves_into_one_skill(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [
                EXE,
                "trace",
                "save",
                "--skill",
                "auto-review-loop",
                "--purpose",
                f"call-{i % 5}",
                "--executor",
                "codex",
                "--backend",
                "codex",
                "--prompt",
                f"prompt {i}",
                "--response",
                f"response {i}",
                "--thread-id",
                f"t{i}",
                "--project-dir",
                str(tmp_path),
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(50)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    keys = {(r["run_id"], r["call_number"]) for r in results}
    assert len(keys) == 50, "no two processes share a run and call number"
    calls = [c for r in iter_runs(tmp_path, "auto-review-loop") for c in r.calls]
    assert len(calls) == 50 and all(c.complete for c in calls)
    responses = sorted(c.response_text() or "" for c in calls)
    assert responses == sorted(f"response {i}" for i in range(50))
    for c in calls:
        assert c.request is not None and c.request["prompt"] == f"prompt {c.response_text().split()[1]}"  # type: ignore[union-attr]
    events = (tmp_path / ".aris" / "meta" / "events.jsonl").read_text().splitlines()
    assert len(events) == 50 and len({json.loads(e)["thread_id"] for e in events}) == 50
    assert verify_traces(tmp_path)[1] == []
    leftovers = [p for p in (tmp_path / ".aris" / "traces" / "auto-review-loop").iterdir() if p.name.startswith(".tmp")]
    assert leftovers == []


def test_save_refuses_a_project_dir_that_is_missing_or_a_file(trace_project: Path) -> None:
    project = trace_project
    missing = project / "no" / "such" / "project"
    code, _, err = run(
        "trace", "save", "--skill", "s", "--purpose", "p", "--response", "x", "--project-dir", str(missing)
    )
    assert code == 2 and "project_dir" in err and "does not exist" in err
    assert not (project / "no").exists()
    (project / "a-file").write_text("x")
    code, _, err = run(
        "trace", "save", "--skill", "s", "--purpose", "p", "--response", "x", "--project-dir", str(project / "a-file")
    )
    assert code == 2 and "project_dir" in err and "not a folder" in err


@pytest.mark.parametrize("status", ["ok\nforged", "ok\r", "ok\x00", "ok\x1b[2J", "ok\x7f"])
def test_save_refuses_a_status_with_control_characters(trace_project: Path, status: str) -> None:
    project = trace_project
    code, _, err = run(
        "trace", "save", "--skill", "s", "--purpose", "p", "--response", "x", "--status", status,
        "--project-dir", str(project),
    )  # fmt: skip
    assert code == 2 and "status" in err
    assert not (project / ".aris").exists()


def test_a_rejected_run_id_leaves_no_folders(trace_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = trace_project
    for bad in ("../../x", "2026-04-15_run1", "run01"):
        code, _, err = run(
            "trace", "save", "--skill", "s", "--purpose", "p", "--response", "x", "--run-id", bad,
            "--project-dir", str(project),
        )  # fmt: skip
        assert code == 2 and "run" in err
    monkeypatch.setenv("ARIS_TRACE_RUN_ID", "bad")
    code, _, _ = run(
        "trace", "save", "--skill", "s", "--purpose", "p", "--response", "x", "--project-dir", str(project)
    )
    assert code == 2
    assert not (project / ".aris").exists()


@pytest.mark.parametrize("command", [["ls"], ["show", "s/2026-01-01_run01"], ["export-otel", "-o", "out.json"]])
def test_readers_refuse_a_project_dir_that_does_not_exist(tmp_path: Path, command: list[str]) -> None:
    from reviewtrail.cli._app import app as cli_app

    missing = str(tmp_path / "missing")
    result = CliRunner().invoke(cli_app, ["trace", *command, "--project-dir", missing])
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert not (tmp_path / "missing").exists()


def test_the_drop_in_helper_takes_an_empty_value_as_not_given(trace_project: Path) -> None:
    project = trace_project
    code, out, _ = run("trace", "install-helper", "--project-dir", str(project))
    assert code == 0
    helper = Path(out.strip())
    (project / "r.md").write_text("Score: 7/10")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    empty = [
        "--thread-id", "", "--agent-id", "", "--executor", "", "--reported-reviewer-model", "",
        "--fallback-reason", "", "--duration-ms", "", "--input-tokens=", "--native-evidence", "",
        "--files-referenced", "", "--status", "", "--reviewer-kind", "", "--prompt-file", "",
    ]  # fmt: skip
    base = ["--skill", "research-review", "--purpose", "initial-review", "--response-file", "r.md", "--prompt", "p"]
    proc = subprocess.run(
        ["bash", str(helper), *base, *empty, "--project-dir", str(project), "--json"],
        cwd=project, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    request = json.loads(Path(result["request_path"]).read_text())
    meta = json.loads(Path(result["meta_path"]).read_text())
    assert request.get("thread_id") is None and meta.get("agent_id") is None and meta.get("duration_ms") is None
    assert request["files_referenced"] == [] and meta["status"] == "ok"  # the defaults, as if not given
    # a required value given empty is still refused, naming it
    proc = subprocess.run(
        ["bash", str(helper), "--skill", "", "--purpose", "initial-review", "--prompt", "p", "--response", "r"],
        cwd=project, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "skill" in proc.stderr
