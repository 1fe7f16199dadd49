"""Properties of the drop-in's rules and parsers: declared claims, the manifest line, the bound verdict."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.tracing.files import ReviewCall, iter_runs
from reviewtrail.tracing.files._helper import aris_repo, manifest_repo_root, shell_quote
from reviewtrail.tracing.native._native_evidence import bound_verdict

MODELS = st.sampled_from(["gpt-5.4", "codex", "claude-opus-4", "gemini-2.5-pro", "grok-4", "mystery", None])
CLAIMS = st.one_of(st.none(), st.text(max_size=12), st.sampled_from(["openai", "anthropic", "true", "unverified"]))


@given(MODELS, MODELS, st.booleans(), CLAIMS, CLAIMS, CLAIMS, st.sampled_from(["codex", "copilot", "manual", None]))
def test_declared_claims_never_change_a_label(
    executor: str | None,
    reviewer: str | None,
    positive: bool,
    ef: str | None,
    rf: str | None,
    iv: str | None,
    backend: str | None,
) -> None:
    facts = {
        "skill": "s", "purpose": "p", "executor_model": executor, "reported_reviewer_model": reviewer,
        "review_completed": True, "review_scope_complete": True, "review_positive": positive, "backend": backend,
    }  # fmt: skip
    plain = ReviewCall(**facts).assurance()  # type: ignore[arg-type]
    claimed = ReviewCall(
        **facts,  # type: ignore[arg-type]
        declared_executor_family=ef,
        declared_reviewer_family=rf,
        declared_independence_verified=iv,
    )
    assert claimed.assurance() == plain
    mismatches = claimed.declared_mismatches()
    assert ("executor_family" in mismatches) == (
        ef is not None and ef.strip().lower() != plain.identity.executor_family
    )
    assert ("reviewer_family" in mismatches) == (rf is not None and rf.strip().lower() != plain.identity.model_family)


@given(st.text(alphabet=st.characters(blacklist_characters="\t\n\x00"), min_size=1, max_size=40))
def test_manifest_repo_root_is_the_second_field_of_the_first_repo_root_line(path: str) -> None:
    text = f"version\t2\nrepo_root\t{path}\trest\nrepo_root\t/other\n"
    assert manifest_repo_root(text) == path
    assert manifest_repo_root(text.replace("repo_root", "repo_rooted")) == ""


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40))
def test_a_pointer_file_is_read_as_the_shell_reads_it(path: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / ".aris").mkdir()
        (home / ".aris" / "repo").write_bytes((path + "\n\n").encode("utf-8", "surrogatepass"))
        repo = aris_repo(home / "no-project", {"HOME": str(home)})
    assert repo == (path + "\n\n").rstrip("\n")  # "$(cat ~/.aris/repo)" drops trailing newlines only


@given(st.sampled_from(["ready", "almost", "not ready", "NOT   Ready"]), st.sampled_from(["", "- ", "* ", "  "]))
def test_bound_verdict_reads_one_anchored_line(verdict: str, bullet: str) -> None:
    body = f"Summary\n{bullet}Verdict: {verdict}\n- Score: 7/10\n"
    assert bound_verdict(body.encode()) == " ".join(verdict.lower().split())
    assert bound_verdict((body + "Verdict: ready\n").encode()) is None  # two lines: none is bound
    assert bound_verdict(b"The verdict: ready, mostly") is None


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30))
def test_shell_quote_round_trips_through_sh(text: str) -> None:
    out = subprocess.run(["sh", "-c", f"printf %s {shell_quote(text)}"], capture_output=True, check=True).stdout
    assert out.decode("utf-8", "surrogateescape") == text


def test_every_reference_flag_goes_through_the_installed_helper(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "reviewtrail"
    assert (
        subprocess.run([str(exe), "trace", "install-helper", "--project-dir", str(tmp_path)], check=False).returncode
        == 0
    )
    (tmp_path / "p.txt").write_text("prompt")
    (tmp_path / "r.md").write_text("Score: 7/10")
    args = [
        "--skill", "auto-review-loop", "--purpose", "round-1-review", "--model", "gpt-5.4", "--effort", "xhigh",
        "--fallback-reason", "none", "--status", "ok", "--thread-id", "th-9", "--prompt-file", "p.txt",
        "--response-file", "r.md", "--trace-mode", "full", "--backend", "codex", "--tool", "mcp__codex__codex",
        "--executor", "claude-code", "--executor-model", "claude-opus-4", "--executor-family", "anthropic",
        "--reviewer-profile", "default", "--reviewer-family", "openai", "--requested-reviewer-model", "gpt-5.4",
        "--reported-reviewer-model", "gpt-5.4", "--independence-verified", "unverified", "--memory-hash", "m1",
        "--verdict", "ready", "--review-completed", "--review-scope-complete", "--review-positive",
        "--project-dir", str(tmp_path),
    ]  # fmt: skip
    proc = subprocess.run(
        ["bash", str(tmp_path / ".aris" / "tools" / "save_trace.sh"), *args],
        cwd=tmp_path, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [run] = list(iter_runs(tmp_path, "auto-review-loop"))
    meta = run.calls[0].meta
    assert meta is not None
    assert meta["acceptance_status"] == "accepted" and meta["declared_mismatches"] == []
    assert meta["memory_hash"] == "m1" and meta["reviewer_profile"] == "default"


@pytest.mark.parametrize("flag", ["--native-evidence", "--independence-verified", "--fallback-reason"])
def test_reference_flags_take_a_value(tmp_path: Path, flag: str) -> None:
    exe = Path(sys.executable).parent / "reviewtrail"
    proc = subprocess.run(
        [str(exe), "trace", "save", "--skill", "s", "--purpose", "p", flag], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and flag in proc.stderr
