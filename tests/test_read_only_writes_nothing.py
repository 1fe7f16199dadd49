"""A read-only store writes nothing anywhere: ``trace save`` and ``run`` on a store that cannot be
written exit 5 (saying the store is read-only) before they write a trace file, a pending marker, a
session workspace, a lock, a CAS object or a ledger row.

The store is made read-only two ways, as the existing read-only tests do and as issue 17 did:
a read-only bind mount (bubblewrap ``--ro-bind``: the kernel refuses every write, root included)
and file modes with the DAC capabilities dropped (``chmod -R a-w`` and ``setpriv`` taking
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER away; as root, modes alone bind nothing).
In the second, this process keeps the store open, as another reader would, so its ledger can be
read without writing its shared-memory file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import need
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.provenance.runs import create_session

EXE = str(Path(sys.executable).parent / "reviewtrail")
DROP_DAC = ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search,-fowner"]
TRACE_SAVE = [
    "trace", "save", "--skill", "probe", "--purpose", "round", "--backend", "grok", "--tool", "mcp__grok__grok",
    "--executor", "codex", "--executor-model", "gpt-5", "--requested-reviewer-model", "grok-4",
    "--reported-reviewer-model", "grok-4", "--prompt", "Review the method.", "--response", "Score: 6/10.",
    "--status", "ok", "--verdict", "ready", "--review-completed", "--trace-mode", "full",
]  # fmt: skip


def _snapshot(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every path under ``root``: its kind, size and (files) the SHA-256 of its bytes."""
    out: dict[str, tuple[str, int, str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            out[rel] = ("other", 0, "")
        elif path.is_dir():
            out[rel] = ("dir", 0, "")
        else:
            data = path.read_bytes()
            out[rel] = ("file", len(data), hashlib.sha256(data).hexdigest())
    return out


class Project:
    """A project folder with its store at ``.reviewtrail`` (SQLite ledger inside) and one session."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = root / ".reviewtrail"
        self.settings = Settings(store=self.store, database_url=f"sqlite:///{self.store / 'ledger.sqlite'}")
        init_store(self.settings).close()
        with open_store(self.settings) as store:
            self.session = create_session(store).session_id

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "ARIS_"))}
        return {**keep, "REVIEWTRAIL_STORE": str(self.store), "REVIEWTRAIL_DATABASE_URL": self.settings.database_url}


@pytest.fixture
def read_only(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Project, list[str]]]:
    """A project whose store is read-only, and the command prefix that runs reviewtrail on it."""
    project = Project(tmp_path / "project")
    if request.param == "ro-bind":
        need(shutil.which("bwrap") is not None, "bubblewrap is needed to mount the store read-only")
        store = str(project.store)
        yield project, ["bwrap", "--dev-bind", "/", "/", "--ro-bind", store, store, "--chdir", str(project.root), EXE]
        return
    need(shutil.which("setpriv") is not None, "setpriv is needed to drop the DAC capabilities")
    with open_store(project.settings):  # a reader holds the store open (its WAL index stays)
        subprocess.run(["chmod", "-R", "a-w", str(project.store)], check=True)
        try:
            yield project, [*DROP_DAC, EXE]
        finally:
            subprocess.run(["chmod", "-R", "u+w", str(project.store)], check=True)


def _run(prefix: list[str], project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *args], capture_output=True, text=True, env=project.env(), cwd=project.root, timeout=120, check=False
    )


@pytest.mark.parametrize("read_only", ["ro-bind", "dac-dropped"], indirect=True)
def test_trace_save_on_a_read_only_store_writes_no_trace_file(read_only: tuple[Project, list[str]]) -> None:
    project, prefix = read_only
    before = _snapshot(project.root)
    done = _run(prefix, project, *TRACE_SAVE, "--project-dir", str(project.root))
    assert done.returncode == 5, done.stdout + done.stderr
    assert "read-only" in done.stderr
    assert not (project.root / ".aris").exists(), sorted(p.name for p in (project.root / ".aris").rglob("*"))
    assert _snapshot(project.root) == before


# Under a read-only mount a run already stopped at its first mkdir (exit 5, nothing written); with
# the DAC capabilities dropped it stopped there too, as "Permission denied", exit 1.
@pytest.mark.parametrize("read_only", ["dac-dropped"], indirect=True)
@pytest.mark.parametrize("in_session", [False, True], ids=["new-session", "existing-session"])
def test_run_on_a_read_only_store_exits_5_and_writes_nothing(
    read_only: tuple[Project, list[str]], in_session: bool
) -> None:
    project, prefix = read_only
    need(shutil.which("bwrap") is not None, "bubblewrap is needed to run code")
    before = _snapshot(project.root)
    session = ["--session", project.session] if in_session else []
    done = _run(prefix, project, "run", *session, "--weak-limits", "-c", "open('out.txt', 'w').write('hi')")
    assert done.returncode == 5, done.stdout + done.stderr
    assert "read-only" in done.stderr
    assert _snapshot(project.root) == before


def test_a_read_only_store_nobody_holds_open_is_still_read(tmp_path: Path) -> None:
    """No reader keeps the ledger's WAL index: the read-only open cannot create it, and reads it
    immutable instead of failing (it said 'attempt to write a readonly database', exit 5)."""
    need(shutil.which("setpriv") is not None, "setpriv is needed to drop the DAC capabilities")
    project = Project(tmp_path / "project")
    subprocess.run(["chmod", "-R", "a-w", str(project.store)], check=True)
    try:
        before = _snapshot(project.root)
        tail = _run([*DROP_DAC, EXE], project, "ledger", "tail", "-n", "5", "--json")
        assert tail.returncode == 0, tail.stderr
        assert "store.identity@1" in {r["type"] for r in json.loads(tail.stdout)}
        checked = _run([*DROP_DAC, EXE], project, "verify", "--json")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert _snapshot(project.root) == before
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(project.store)], check=True)
