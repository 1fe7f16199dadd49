"""Configuration is read once, at the edge: the loader in ``reviewtrail.config`` (and the command
line's own options) read the environment; domain functions take the values from their callers.
Every environment variable the code reads is documented in the README."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings, TraceSettings, load_settings, reviewer_settings
from reviewtrail.errors import ConfigError
from reviewtrail.store import Store

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "reviewtrail"
_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_ENV_OBJECTS = {"env", "environ", "os.environ", "os.environb"}
# Modules allowed to read the process environment: the loader, the command line (the edge),
# and the launcher that runs inside the sandbox (it reports what the sandboxed code saw).
_EDGE = ("config.py", "cli/", "provenance/sandbox/_launch.py")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _names_read(tree: ast.AST) -> set[str]:
    """Variable names read: ``env.get("X")``, ``env["X"]``, ``os.getenv("X")``, helpers called with
    the environment and names (``_env(env, "X", "Y")``), and typer's ``envvar="X"``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        key = node.slice if isinstance(node, ast.Subscript) and _dotted(node.value) in _ENV_OBJECTS else None
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.add(key.value)
        if not isinstance(node, ast.Call):
            continue
        func = _dotted(node.func)
        args = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        gives_env = any(_dotted(a) in _ENV_OBJECTS for a in node.args)
        if func in {f"{o}.get" for o in _ENV_OBJECTS} | {"os.getenv"} or gives_env:
            found.update(a for a in args if _NAME.fullmatch(a))
        found.update(
            k.value.value
            for k in node.keywords
            if k.arg == "envvar" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
        )
    return found


def variables_read() -> dict[str, set[str]]:
    """Each environment variable the package reads, with the modules that read it."""
    out: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == "provenance/sandbox/_launch.py":
            continue  # runs inside the sandbox: what it reads is the sandboxed code's environment
        for name in _names_read(ast.parse(path.read_text(encoding="utf-8"))):
            out.setdefault(name, set()).add(rel)
    return out


def test_the_scan_finds_the_variables_it_is_meant_to_find() -> None:
    found = variables_read()
    for name in (
        "REVIEWTRAIL_STORE",
        "REVIEWTRAIL_DATABASE_URL",
        "REVIEWTRAIL_REVIEWER",
        "REVIEWTRAIL_REVIEWER_BACKEND",
        "REVIEWTRAIL_EXECUTOR_MODEL",
        "REVIEWTRAIL_PROJECT",
        "ARIS_TRACE_MODE",
        "ARIS_TRACE_RUN_ID",
        "ARIS_TRACE_RUN_IDLE_MINUTES",
        "ARIS_REPO",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
        "OPENAI_API_KEY",
    ):
        assert name in found, name
    sample = ast.parse('env.get("A_B")\nos.environ["C_D"]\n_env(env, "E_F", "G_H")\nOption(envvar="I_J")\nf("K_L")')
    assert _names_read(sample) == {"A_B", "C_D", "E_F", "G_H", "I_J"}


def test_only_the_edge_reads_the_process_environment() -> None:
    readers = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(_EDGE):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _dotted(node) in {"os.environ", "os.environb", "os.getenv"}:
                readers.append(f"{rel}:{getattr(node, 'lineno', '?')}")
    assert readers == []


def test_settings_hold_everything_the_environment_configures(tmp_path: Path) -> None:
    env = {
        "REVIEWTRAIL_REVIEWER": "smart",
        "REVIEWTRAIL_REVIEWER_BACKEND": "openai",
        "REVIEWTRAIL_REVIEWER_MODEL": "gpt-4o-mini",
        "REVIEWTRAIL_REVIEWER_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY": "sk-never-shown",
        "ANTHROPIC_API_KEY": "ak-never-shown",
        "REVIEWTRAIL_EXECUTOR_MODEL": "gpt-5",
        "ARIS_TRACE_MODE": "meta",
        "ARIS_TRACE_RUN_ID": "2026-04-15_run01",
        "ARIS_TRACE_RUN_IDLE_MINUTES": "5",
        "ARIS_REPO": "/opt/aris",
        "HOME": "/home/someone",
        "REVIEWTRAIL_PROJECT": "paper",
    }
    s = load_settings(env=env, cwd=tmp_path)
    assert s.reviewer == ReviewerSettings(
        tier="smart",
        backend="openai",
        model="gpt-4o-mini",
        base_url="http://127.0.0.1:9/v1",
        openai_api_key="sk-never-shown",
        anthropic_api_key="ak-never-shown",
        executor_model="gpt-5",
    )
    assert s.trace == TraceSettings(
        mode="meta", run_id="2026-04-15_run01", run_idle_minutes="5", aris_repo="/opt/aris", home="/home/someone"
    )
    assert s.project == "paper"
    assert s.trace.environ() == {k: v for k, v in env.items() if k.startswith("ARIS_") or k == "HOME"}
    assert "never-shown" not in repr(s)
    empty = load_settings(env={}, cwd=tmp_path)
    assert empty.reviewer == ReviewerSettings() and empty.trace == TraceSettings() and empty.project is None
    assert empty.trace.environ() == {}


@given(env_tier=st.sampled_from(["", " ", "quick", " Deep ", "off", "ultra"]), file_tier=st.none() | st.text())
def test_the_environment_tier_wins_over_the_file_unless_blank(env_tier: str, file_tier: str | None) -> None:
    tier = reviewer_settings({"REVIEWTRAIL_REVIEWER": env_tier}, file_tier).tier
    assert tier == (env_tier if env_tier.strip() else file_tier)
    assert reviewer_settings({}, file_tier).tier == file_tier


def test_the_file_tier_is_read_with_the_rest(tmp_path: Path) -> None:
    from reviewtrail.reviewer import reviewer_tier

    (tmp_path / "reviewtrail.toml").write_text('reviewer = "Quick"\n')
    assert reviewer_tier(load_settings(env={}, cwd=tmp_path).reviewer) == "quick"
    assert reviewer_tier(load_settings(env={"REVIEWTRAIL_REVIEWER": "off"}, cwd=tmp_path).reviewer) is None
    with pytest.raises(ConfigError) as err:
        reviewer_tier(load_settings(env={"REVIEWTRAIL_REVIEWER": "ultra"}, cwd=tmp_path).reviewer)
    assert err.value.field == "REVIEWTRAIL_REVIEWER"
    assert reviewer_tier(None) is None and reviewer_tier(ReviewerSettings()) is None


# --- domain functions take their settings from the caller -----------------------------------------
@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    from reviewtrail.provenance.artifacts import upload_artifact

    monkeypatch.chdir(tmp_path)
    root = tmp_path / "store"
    s = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    (tmp_path / "r.md").write_text("Accuracy is 0.91.\n", encoding="utf-8")
    upload_artifact(s, name="r.md", file=tmp_path / "r.md", media_type="text/markdown")
    yield s  # type: ignore[misc]
    s.close()


def test_the_reviewer_ignores_the_process_environment(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.reviewer import review_artifact, review_checkpoint

    monkeypatch.setenv("REVIEWTRAIL_REVIEWER", "quick")
    assert review_checkpoint(store, "r.md") is None  # off: no settings were given
    with pytest.raises(ConfigError):
        review_artifact(store, "r.md")
    assert review_checkpoint(store, "r.md", settings=ReviewerSettings(tier="quick")) is not None


def test_smart_reviews_take_the_trace_mode_and_executor_model_from_the_caller(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.models import ScriptedBackend
    from reviewtrail.reviewer import review_artifact
    from reviewtrail.tracing.files import iter_runs

    ready = json.dumps({"verdict": "ready", "findings": []})
    monkeypatch.setenv("ARIS_TRACE_MODE", "off")  # the process environment is not the caller's settings
    monkeypatch.setenv("REVIEWTRAIL_EXECUTOR_MODEL", "from-the-environment")
    settings = ReviewerSettings(executor_model="gpt-5")
    with pytest.raises(ConfigError) as err:
        review_artifact(store, "r.md", tier="smart", settings=settings, trace=TraceSettings(mode="meta"),
                        backend=ScriptedBackend([ready]), project_dir=tmp_path)  # fmt: skip
    assert err.value.field == "ARIS_TRACE_MODE"
    outcome = review_artifact(
        store, "r.md", tier="smart", settings=settings, backend=ScriptedBackend([ready]), project_dir=tmp_path
    )
    assert outcome.run.trace_paths
    [meta] = [c.meta for r in iter_runs(tmp_path, "reviewer-specialist") for c in r.calls]
    assert meta is not None and meta["executor_model"] == "gpt-5"


def test_trace_recording_ignores_the_process_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.tracing.custody import record_call
    from reviewtrail.tracing.files import ReviewCall

    monkeypatch.setenv("ARIS_TRACE_MODE", "off")
    monkeypatch.setenv("ARIS_TRACE_RUN_ID", "2020-01-01_run07")
    call = ReviewCall(skill="s", purpose="p", prompt="x", response=b"y", executor="codex", backend="grok")
    result = record_call(call, project_dir=tmp_path)
    assert result.mode == "full" and result.run_id is not None and not result.run_id.endswith("_run07")
    assert record_call(call, project_dir=tmp_path, env={"ARIS_TRACE_MODE": "off"}).mode == "off"


def test_the_helper_resolver_takes_aris_repo_from_the_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.tracing.files import resolve_helper as resolve

    repo = tmp_path / "aris"
    (repo / "tools").mkdir(parents=True)
    (repo / "tools" / "save_trace.sh").write_text("#!/bin/sh\n")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("ARIS_REPO", str(repo))
    assert resolve(project) is None
    assert resolve(project, TraceSettings(aris_repo=str(repo)).environ()) == repo / "tools" / "save_trace.sh"
