"""``reviewtrail run | session | artifact | provenance`` end to end on a real store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import init_cli_store, need
from conftest import run_wide as run
from contracts.store_backend import StoreBackend


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    return init_cli_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT")


@pytest.fixture
def backend_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_backend: StoreBackend) -> Path:
    """:func:`project` in each ``store_backend`` configuration."""
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    return init_cli_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT", backend=store_backend)


def test_session_run_declare_diff_provenance(backend_project: Path, store_backend: StoreBackend) -> None:
    """Provenance end to end, in the embedded store and on PostgreSQL with the objects in S3."""
    project = backend_project
    code, sid, _ = run("session", "new", "--project", "p1")
    sid = sid.strip()
    assert code == 0
    code, out, err = run("run", "--session", sid, "-c", "open('a.txt','w').write('one\\n')", "--env", "X=1", "--json")
    assert code == 0, err
    record = json.loads(out)
    assert record["status"] == "succeeded" and record["createdFiles"] == ["a.txt"] and record["sandbox"] == "bubblewrap"
    assert record["workingDirectory"] == "/workspace" and record["envSnapshot"]["pool"] == "agent-state"
    assert run("artifact", "declare", "a", "--session", sid, "--path", "a.txt")[0] == 0
    (project / "script.sh").write_text("echo two >> a.txt\n")
    assert run("run", "script.sh", "--session", sid, "--lang", "bash")[0] == 0
    assert run("artifact", "declare", "a", "--session", sid, "--path", "a.txt", "--json")[0] == 0
    code, out, _ = run("artifact", "diff", "a@1", "a@2", "--project", "p1")
    assert code == 0 and "+two" in out
    code, out, _ = run("artifact", "show", "a", "--project", "p1", "--json")
    versions = json.loads(out)
    assert [v["version"] for v in versions] == [1, 2]
    assert run("cas", "cat", versions[1]["content"]["digest"])[1] == "one\ntwo\n"  # read back from where it was put
    code, out, _ = run("provenance", "a@2", "--project", "p1")
    assert code == 0 and "execution_run" in out and "cwd=/workspace" in out
    for fmt in ("json", "prov", "in-toto"):
        code, out, _ = run("provenance", "a", "--project", "p1", "--format", fmt)
        assert code == 0 and json.loads(out)
    assert run("session", "rm", sid)[0] == 0
    code, out, _ = run("provenance", "a@1", "--project", "p1")
    assert "source session deleted" in out
    code, out, _ = run("verify")
    assert code == 0, out
    # the files' bytes, the environment snapshot and the run's outputs are where the configuration keeps objects
    store_backend.check_objects(record["envSnapshot"]["digest"], *(v["content"]["digest"] for v in versions))


def test_run_errors_and_exit_codes(project: Path) -> None:
    code, _, err = run("run", "-c", "import sys; sys.exit(4)")
    assert code == 7
    code, _, err = run("run", "-c", "x", "--lang", "ruby")
    assert code == 2 and "lang" in err
    code, _, err = run("run", "missing.py")
    assert code == 2 and "missing.py" in err
    code, _, err = run("run", "-c", "print(1)", "--cwd", "/workspace/../etc")
    assert code == 2 and "cwd" in err
    code, _, _ = run("run", "-c", "import time; time.sleep(10)", "--timeout", "0.3")
    assert code == 7
    code, _, err = run("run", "-c", "1", "--env", "NOEQUALS")
    assert code == 2
    code, _, _ = run("artifact", "show", "nope")
    assert code == 3
    code, _, _ = run("provenance", "nope@x")
    assert code == 2
    (project / "img.bin").write_bytes(b"\x00\x01")
    run("artifact", "upload", "img", "img.bin")
    run("artifact", "upload", "img", "img.bin")
    code, _, err = run("artifact", "diff", "img@1", "img@2")
    assert code == 2 and "mediaType" in err


def test_a_name_only_other_projects_hold_says_to_pass_project_and_names_them(project: Path) -> None:
    (project / "data.csv").write_text("a,b\n1,2\n")
    for name in ("paper-42", "paper-7"):
        code, _, err = run("artifact", "upload", "results.csv", "data.csv", "--project", name)
        assert code == 0, err
    code, _, err = run("provenance", "results.csv")
    assert code == 3
    text = " ".join(err.split())
    assert "no artifact 'results.csv' in project default" in text
    assert "paper-42, paper-7" in text and "--project" in text and "REVIEWTRAIL_PROJECT" in text
    code, _, err = run("provenance", "never-uploaded.csv")
    assert code == 3 and "--project" not in err  # no project holds it: nothing to point at
