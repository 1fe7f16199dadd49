"""Limits the kernel enforces from outside the sandbox (a control group per run): code that kills its
own supervisor, shares memory or fills its tmpfs still cannot pass --max-memory or --max-procs."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import need, use_store
from reviewtrail.app import init_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.errors import EXIT_BACKEND, BackendUnavailableError
from reviewtrail.provenance.runs import create_session, run_code
from reviewtrail.provenance.sandbox import ResourceLimits, _cgroup
from reviewtrail.provenance.sandbox._bwrap import bwrap_available
from reviewtrail.provenance.sandbox._cgroup import CGROUP_V1, RunCgroup, cgroup_support, create_run_cgroup
from support.sandbox import processes_with, run

MiB = 1 << 20

# Finds the supervisor (``/usr/bin/python3 -S -c ...`` in a bash run, ``/usr/bin/python3 -c ...``
# otherwise) among the sandbox's processes and SIGKILLs it, as hostile code would.
KILL_SUPERVISOR_BASH = r"""for p in /proc/[0-9]*; do
  c=$(tr "\0" " " < $p/cmdline 2>/dev/null)
  case $c in "/usr/bin/python3 -S -c"*|"/usr/bin/python3 -c"*) kill -9 ${p#/proc/} && echo killed-supervisor;; esac
done
sleep 0.2
"""
SHARED_MMAP_PY = (
    "import mmap\nm = mmap.mmap(-1, 1 << 30)\nfor i in range(0, 1 << 30, 4096):\n    m[i] = 1\nprint('survived')"
)
SHARED_MMAP_BASH = f"python3 -c {shlex.quote(SHARED_MMAP_PY)}; echo survived"
TMPFS_BASH = "for i in 1 2 3 4; do head -c 250M /dev/zero > /tmp/f$i || echo fail; done; echo survived"
TMPFS_PY = "for i in range(4):\n    open(f'/tmp/f{i}', 'wb').write(b'x' * (250 << 20))\nprint('survived')"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    need(cgroup_support() is None, f"no control group can be made here: {cgroup_support()}")
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[RunCgroup]:
    """Every run group the test makes (the real function, watched), to check each is removed."""
    groups: list[RunCgroup] = []
    real = _cgroup.create_run_cgroup

    def watched(limits: ResourceLimits, name: str | None = None) -> RunCgroup | None:
        group = real(limits, name)
        if group is not None:
            groups.append(group)
        return group

    monkeypatch.setattr(_cgroup, "create_run_cgroup", watched)
    return groups


def left(groups: list[RunCgroup]) -> list[Path]:
    """The folders of ``groups`` still there (none once their runs have ended)."""
    assert groups, "no run group was made"
    return [path for g in groups for path in g.groups.values() if path.exists()]


# --- memory that RLIMIT_DATA and the supervisor's count do not see -------------------------------------
@pytest.mark.parametrize(
    "lang, code",
    [("python", SHARED_MMAP_PY), ("bash", SHARED_MMAP_BASH), ("python", TMPFS_PY), ("bash", TMPFS_BASH)],
    ids=["mmap-python", "mmap-bash", "tmpfs-python", "tmpfs-bash"],
)
def test_shared_memory_and_tmpfs_count_against_max_memory(
    ws: Path, made: list[RunCgroup], lang: str, code: str
) -> None:
    r = run(ws, code, lang, limits=ResourceLimits(max_memory=256 * MiB))
    assert (r.status, r.limit_exceeded) == ("failed", "memory"), (r.stdout, r.stderr, r.error)
    assert b"survived" not in r.stdout
    assert r.error and "--max-memory 256M" in r.error
    assert r.enforced_by["memory"] == CGROUP_V1 and r.enforced_by["procs"] == CGROUP_V1
    assert left(made) == []


# --- code that kills its own supervisor ---------------------------------------------------------------
def test_killing_the_supervisor_does_not_lift_max_procs(ws: Path, made: list[RunCgroup]) -> None:
    marker = f"{uuid.uuid4().int % 1000}.{uuid.uuid4().int % 1000}"
    code = KILL_SUPERVISOR_BASH + f"for i in $(seq 150); do sleep 3{marker} & done; wait; echo survived"
    r = run(ws, code, "bash", limits=ResourceLimits(max_procs=40))
    assert r.stdout.startswith(b"killed-supervisor"), (r.stdout, r.stderr)
    assert (r.status, r.limit_exceeded, r.exit_code) == ("failed", "procs", 137), (r.stdout, r.stderr, r.error)
    assert b"survived" not in r.stdout
    assert processes_with(f"sleep\x003{marker}") == []  # every process of the sandbox is gone
    assert left(made) == []


@pytest.mark.parametrize("lang", ["bash", "python"])
def test_killing_the_supervisor_does_not_lift_max_memory(ws: Path, lang: str) -> None:
    if lang == "bash":
        code = KILL_SUPERVISOR_BASH + SHARED_MMAP_BASH
    else:  # the python code's own parent is the supervisor
        code = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + SHARED_MMAP_PY
    r = run(ws, code, lang, limits=ResourceLimits(max_memory=512 * MiB))
    # Killing the python supervisor ends the sandbox (it is bubblewrap's one child); either way the
    # code never holds the memory and the run fails.
    assert r.status == "failed" and b"survived" not in r.stdout, (r.stdout, r.stderr, r.error)
    if lang == "bash":
        assert r.limit_exceeded == "memory" and r.stdout.startswith(b"killed-supervisor")


def test_a_run_within_its_limits_is_untouched(ws: Path) -> None:
    r = run(ws, "for i in $(seq 10); do sleep 0.1 & done; wait; head -c 50M /dev/zero > /tmp/f; echo ok", "bash",
            limits=ResourceLimits(max_memory=256 * MiB, max_procs=20))  # fmt: skip
    assert (r.status, r.limit_exceeded, r.stdout) == ("succeeded", None, b"ok\n"), (r.stderr, r.error)
    assert r.enforced_by == {
        "memory": CGROUP_V1,
        "procs": CGROUP_V1,
        "file-size": "rlimit-fsize",
        "output": "host",
        "time": "host-timer+rlimit-cpu",
    }


def test_the_groups_hold_the_limits_and_are_removed() -> None:
    need(cgroup_support() is None, f"no control group can be made here: {cgroup_support()}")
    group = create_run_cgroup(ResourceLimits(max_memory=300 * MiB, max_procs=12), name=f"t-{uuid.uuid4().hex}")
    assert group is not None
    try:
        assert int((group.groups["memory"] / "memory.limit_in_bytes").read_text()) == 300 * MiB
        assert int((group.groups["pids"] / "pids.max").read_text()) == 12 + _cgroup.OWN_PROCESSES
        assert "oom_kill_disable 1" in (group.groups["memory"] / "memory.oom_control").read_text().splitlines()
        assert group.exceeded() is None
    finally:
        group.close()
    assert not group.groups["memory"].exists() and not group.groups["pids"].exists()


def test_a_process_past_the_limit_is_held_not_killed_until_the_host_kills_the_group() -> None:
    """The kernel holds a process at the limit (no OOM kill that a shell could outlive); the host sees
    it at once, keeps seeing it, and closing the group kills it."""
    need(cgroup_support() is None, f"no control group can be made here: {cgroup_support()}")
    group = create_run_cgroup(ResourceLimits(max_memory=64 * MiB, max_procs=8), name=f"t-{uuid.uuid4().hex}")
    assert group is not None
    hog = "import sys\nb = bytearray(200 << 20)\nprint('survived')"
    proc = subprocess.Popen(group.wrap([sys.executable, "-c", hog]), stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while group.exceeded() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert group.exceeded() == "memory"
        time.sleep(0.2)
        assert proc.poll() is None  # held at the limit, alive: nothing it runs next can run
        assert group.exceeded() == "memory"  # still seen, after the kernel's own flag is read
    finally:
        group.close()
    out, _ = proc.communicate(timeout=10)
    assert (proc.returncode, out) == (-signal.SIGKILL, b"")
    assert not group.groups["memory"].exists()


def test_a_persistent_kernel_is_held_by_its_group(ws: Path, made: list[RunCgroup]) -> None:
    from reviewtrail.provenance.kernels._kernels import ShellKernel

    with ShellKernel(ws, limits=ResourceLimits(max_memory=256 * MiB)) as k:
        assert k.evaluate("echo up", 10).status == "succeeded"
        r = k.evaluate(SHARED_MMAP_BASH, 30)  # shared pages: not in the supervisor's private count
        assert (r.status, r.limit_exceeded) == ("failed", "memory"), (r.stdout, r.stderr, r.error)
        assert not k.alive and r.enforced_by["memory"] == CGROUP_V1
    assert left(made) == []


# --- where no group can be made --------------------------------------------------------------------------
@pytest.fixture
def no_cgroups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A host without control groups, made by pointing the cgroup root at an empty folder (the one
    part of these tests that is not the real mechanism)."""
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    empty = tmp_path / "no-cgroup-fs"
    empty.mkdir()
    monkeypatch.setattr(_cgroup, "_ROOT", empty)
    return empty


def test_limits_the_kernel_cannot_hold_refuse_the_run_before_it_starts(tmp_path: Path, no_cgroups: Path) -> None:
    store = init_store(Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'l.sqlite'}"))
    try:
        session = create_session(store)
        before = store.ledger.head()
        with pytest.raises(BackendUnavailableError) as err:
            run_code(store, session_id=session.session_id, code="print('hi')", lang="python")
        assert err.value.exit_code == EXIT_BACKEND and err.value.field == "limits"
        assert "--weak-limits" in str(err.value) and "cgroup" in str(err.value)
        assert store.ledger.head() == before  # nothing recorded, nothing ran
        weak = run_code(
            store, session_id=session.session_id, code="print('hi')", lang="python", limits=ResourceLimits(weak=True)
        )
        assert weak.run.status == "succeeded"
        assert weak.run.enforced_by is not None
        assert weak.run.enforced_by["memory"] == "supervisor+rlimit-as"
        assert weak.run.enforced_by["procs"] == "supervisor+rlimit-nproc"
    finally:
        store.close()


def test_the_cli_exits_5_without_weak_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_cgroups: Path) -> None:
    use_store(tmp_path, monkeypatch)
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    refused = runner.invoke(app, ["run", "-c", "print('hi')"])
    assert refused.exit_code == EXIT_BACKEND and "--weak-limits" in refused.stderr, refused.stderr
    accepted = runner.invoke(app, ["run", "-c", "print('hi')", "--weak-limits", "--json"])
    assert accepted.exit_code == 0, accepted.stderr
    assert json.loads(accepted.stdout)["enforcedBy"]["memory"] == "supervisor+rlimit-as"


def test_the_cli_records_the_kernel_as_enforcer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ws: Path) -> None:
    use_store(tmp_path, monkeypatch)
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    r = runner.invoke(app, ["run", "--lang", "bash", "-c", SHARED_MMAP_BASH, "--max-memory", "256M", "--json"])
    assert r.exit_code == 7, r.stderr
    doc = json.loads(r.stdout)
    assert doc["limitExceeded"] == "memory" and doc["enforcedBy"]["memory"] == CGROUP_V1


def test_python_forking_past_max_procs_is_stopped(ws: Path, made: list[RunCgroup]) -> None:
    code = (
        "import os, time\n"
        "for _ in range(150):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(5)\n"
        "            os._exit(0)\n"
        "    except OSError:\n"
        "        pass\n"
        "time.sleep(1)\n"
        "print('survived')\n"
    )
    r = run(ws, code, limits=ResourceLimits(max_procs=40))
    assert (r.status, r.limit_exceeded) == ("failed", "procs"), (r.stdout, r.stderr, r.error)
    assert b"survived" not in r.stdout
    assert left(made) == []


@pytest.mark.parametrize("lang", ["python", "bash"])
def test_without_a_group_the_address_space_limit_counts_shared_memory(
    tmp_path: Path, no_cgroups: Path, lang: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    code = SHARED_MMAP_PY if lang == "python" else f"python3 -c {shlex.quote(SHARED_MMAP_PY)}"
    r = run(ws, code, lang, limits=ResourceLimits(max_memory=256 * MiB, weak=True))
    assert r.status == "failed" and b"survived" not in r.stdout, (r.stdout, r.stderr, r.error)
    assert r.enforced_by["memory"] == "supervisor+rlimit-as"
    ok = run(ws, "b = bytearray(64 << 20)\nprint('ok')", limits=ResourceLimits(max_memory=256 * MiB, weak=True))
    assert (ok.status, ok.stdout) == ("succeeded", b"ok\n"), (ok.stderr, ok.error)


def test_a_group_that_cannot_be_set_up_is_exit_5_and_leaves_no_group() -> None:
    need(cgroup_support() is None, f"no control group can be made here: {cgroup_support()}")
    parents, _ = _cgroup._parents()
    assert parents is not None
    label = f"t-{uuid.uuid4().hex}"
    blocker = parents["pids"] / label  # the pids group's name is taken: its mkdir fails after memory's
    blocker.mkdir()
    try:
        with pytest.raises(BackendUnavailableError) as err:
            create_run_cgroup(ResourceLimits(max_memory=64 * MiB, max_procs=4), name=label)
        assert err.value.exit_code == EXIT_BACKEND and err.value.field == "limits"
        assert "nothing ran" in str(err.value)
        assert not (parents["memory"] / label).exists()  # the group made before the failure is gone
    finally:
        blocker.rmdir()


def test_stale_empty_groups_are_swept_and_live_or_recent_ones_kept() -> None:
    need(cgroup_support() is None, f"no control group can be made here: {cgroup_support()}")
    parents, _ = _cgroup._parents()
    assert parents is not None
    memory = parents["memory"]
    stale, recent, busy = (memory / f"t-{kind}-{uuid.uuid4().hex}" for kind in ("stale", "recent", "busy"))
    for group in (stale, recent, busy):
        group.mkdir()
    old = time.time() - 2 * _cgroup._STALE
    os.utime(stale, (old, old))
    os.utime(busy, (old, old))
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        (busy / "cgroup.procs").write_text(str(sleeper.pid))
        group = create_run_cgroup(ResourceLimits(max_memory=64 * MiB, max_procs=4))
        assert group is not None
        group.close()
        assert not stale.exists()  # an empty group left by a killed reviewtrail, older than a minute
        assert recent.exists()  # just made: its sandbox may not have joined yet
        assert busy.exists()  # a process still runs in it
    finally:
        sleeper.kill()
        sleeper.wait()
        _cgroup._empty(busy)
        for group in (stale, recent, busy):
            _cgroup._remove(group)
