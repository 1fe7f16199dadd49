"""``reviewtrail run --kernel NAME`` and ``reviewtrail kernel ls|stop``, through the real
``reviewtrail`` executable: a session's kernel keeps its state across commands in a host process
of its own, and every run it evaluates is recorded with ``kernelMode: persistent`` and the
kernel's ``kernelId``. Each test's fixture stops every host of its store and fails when one is
left running."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import need, use_store
from reviewtrail.provenance.sandbox._bwrap import bwrap_available

REVIEWTRAIL = str(Path(sys.executable).parent / "reviewtrail")
HOST_MODULE = b"reviewtrail.cli.runs._kernel_host"


def rt(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``reviewtrail ARGS`` in a process of its own: (exit code, stdout, stderr)."""
    done = subprocess.run(
        [REVIEWTRAIL, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300
    )
    return done.returncode, done.stdout, done.stderr


def rt_json(*args: str) -> Any:
    code, out, err = rt(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def hosts_of(store: Path) -> list[int]:
    """Pids of the kernel host processes (alive, not zombies) serving ``store``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if HOST_MODULE in cmdline and f"REVIEWTRAIL_STORE={store}".encode() in environ and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return sorted(found)


def wait_for(check: Callable[[], bool], what: str, limit: float = 90.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    use_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT")
    code, _, err = rt("init")
    assert code == 0, err
    yield tmp_path
    store = tmp_path / "store"
    if store.is_dir():
        rt("kernel", "stop", "--all")
    left = hosts_of(store)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "kernel hosts were left running"


def new_session() -> str:
    code, out, err = rt("session", "new")
    assert code == 0, err
    return out.strip()


def record(run_id: str) -> dict[str, Any]:
    shown = rt_json("ledger", "show", run_id)
    assert shown["type"] == "provenance.execution-run@1"
    payload: dict[str, Any] = shown["payload"]
    return payload


def head_seq() -> int:
    tail = rt_json("ledger", "tail", "-n", "1")
    return int(tail[-1]["seq"])


def kernel_files(project: Path, session: str, name: str) -> dict[str, Path]:
    folder = project / "store" / "kernels" / session
    return {kind: folder / f"{name}.{kind}" for kind in ("sock", "json", "lock", "log")}


# --- state across commands, and what the records say ------------------------------------------------
def test_a_python_kernel_keeps_state_across_runs_and_both_records_name_it(project: Path) -> None:
    session = new_session()
    code, out, err = rt("run", "--session", session, "--kernel", "main", "-c", "x = 41", "--json")
    assert code == 0, err
    first = json.loads(out)
    assert "started kernel main" in err
    code, out, err = rt("run", "--session", session, "--kernel", "main", "-c", "print(x + 1)")
    assert code == 0, err
    assert out.startswith("42\n")  # what the code wrote, then the summary, as a one-shot run prints
    summary = out.splitlines()[-1]
    assert summary.startswith("run ") and f"in session {session}: succeeded (exit 0)" in summary
    assert "started kernel" not in err, "the second run used the running kernel"
    second_id = summary.split()[1]
    code, out, err = rt("run", "--session", session, "-c", "print('one-shot')", "--json")
    assert code == 0, err
    one_shot = json.loads(out)

    runs = [record(first["recordId"]), record(second_id), record(one_shot["recordId"])]
    assert [r["kernelMode"] for r in runs] == ["persistent", "persistent", "one-shot"]
    assert runs[0]["kernelId"] == runs[1]["kernelId"] and runs[0]["kernelId"]
    assert runs[2]["kernelId"] is None
    assert runs[0]["toolName"] == runs[1]["toolName"] == "reviewtrail.kernel.python"
    assert {k: first[k] for k in runs[0]} == runs[0]  # printed as recorded
    [listed] = rt_json("kernel", "ls")
    assert listed["kernelId"] == runs[0]["kernelId"] and listed["state"] == "alive"


def test_a_bash_kernel_keeps_its_directory_and_exported_variables(project: Path) -> None:
    session = new_session()
    common = ("run", "--session", session, "--kernel", "sh", "--lang", "bash")
    code, _, err = rt(*common, "-c", "mkdir -p data && cd data && export LEVEL=7 && echo hi > note.txt")
    assert code == 0, err
    code, out, err = rt(*common, "-c", "echo $LEVEL; pwd", "--json")
    assert code == 0, err
    run = json.loads(out)
    assert run["workingDirectory"] == "/workspace/data" and run["kernelMode"] == "persistent"
    code, out, _ = rt("cas", "cat", run["stdout"]["digest"])
    assert out == "7\n/workspace/data\n"
    [listed] = rt_json("kernel", "ls", "--session", session)
    assert (listed["name"], listed["lang"], listed["kernelId"]) == ("sh", "bash", run["kernelId"])


def test_two_first_runs_at_once_start_one_kernel(project: Path) -> None:
    session = new_session()
    clients = [
        subprocess.Popen(
            [REVIEWTRAIL, "run", "--session", session, "--kernel", "k", "-c", "print(1)", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    answers = [c.communicate(timeout=300) for c in clients]
    assert [c.returncode for c in clients] == [0, 0], [a[1] for a in answers]
    kernels = {json.loads(out)["kernelId"] for out, _ in answers}
    assert len(kernels) == 1
    assert sum(b"started kernel k" in err for _, err in answers) == 1
    assert len(hosts_of(project / "store")) == 1


# --- kernel ls and kernel stop ------------------------------------------------------------------------
def test_kernel_ls_shows_it_alive_and_stop_ends_it_and_the_next_run_starts_afresh(project: Path) -> None:
    session = new_session()
    code, out, err = rt("run", "--session", session, "--kernel", "main", "-c", "x = 1", "--json")
    assert code == 0, err
    old_kernel = json.loads(out)["kernelId"]
    [entry] = rt_json("kernel", "ls")
    assert entry["name"] == "main" and entry["sessionId"] == session and entry["lang"] == "python"
    assert entry["state"] == "alive" and entry["kernelId"] == old_kernel
    assert entry["startedAt"] <= entry["lastUsedAt"] and entry["idleMinutes"] == 30
    pid = entry["pid"]
    assert hosts_of(project / "store") == [pid]
    files = kernel_files(project, session, "main")
    assert oct(files["sock"].stat().st_mode & 0o777) == "0o600"
    assert oct(files["sock"].parent.stat().st_mode & 0o777) == "0o700"
    code, out, _ = rt("kernel", "ls")
    assert code == 0 and "main" in out and "alive" in out and str(pid) in out

    stopped = rt_json("kernel", "stop", "main", "--session", session)
    assert [(e["name"], e["state"], e["kernelId"]) for e in stopped] == [("main", "alive", old_kernel)]
    assert not pid_alive(pid), "kernel stop returns once the host is gone"
    assert not files["sock"].exists() and not files["json"].exists()
    assert rt_json("kernel", "ls") == []
    code, _, err = rt("kernel", "stop", "main", "--session", session)
    assert code == 3 and "no kernel main" in err

    code, out, err = rt("run", "--session", session, "--kernel", "main", "-c", "print(x)", "--json")
    assert code == 7, "a new kernel: x is gone"
    fresh = json.loads(out)
    assert fresh["status"] == "failed" and "NameError" in rt("cas", "cat", fresh["stderr"]["digest"])[1]
    assert fresh["kernelMode"] == "persistent" and fresh["kernelId"] not in (None, old_kernel)
    [entry] = rt_json("kernel", "ls")
    assert entry["kernelId"] == fresh["kernelId"] and entry["pid"] != pid


def test_a_killed_host_is_stale_and_the_next_run_replaces_it(project: Path) -> None:
    session = new_session()
    code, out, err = rt("run", "--session", session, "--kernel", "main", "-c", "x = 1", "--json")
    assert code == 0, err
    old_kernel = json.loads(out)["kernelId"]
    [entry] = rt_json("kernel", "ls")
    os.kill(entry["pid"], signal.SIGKILL)
    wait_for(lambda: not pid_alive(entry["pid"]), "the killed host to be gone")
    [stale] = rt_json("kernel", "ls")
    assert stale["state"] == "stale" and stale["kernelId"] == old_kernel and "gone" in stale["detail"]
    code, out, _ = rt("kernel", "ls")
    assert "stale" in out

    code, out, err = rt("run", "--session", session, "--kernel", "main", "-c", "x = 2\nprint(x)", "--json")
    assert code == 0, err
    replaced = json.loads(out)
    assert replaced["kernelId"] != old_kernel and "started kernel main" in err
    [entry] = rt_json("kernel", "ls")
    assert entry["state"] == "alive" and entry["kernelId"] == replaced["kernelId"]

    # a stale entry is removed by kernel stop
    os.kill(entry["pid"], signal.SIGKILL)
    wait_for(lambda: not pid_alive(entry["pid"]), "the killed host to be gone")
    stopped = rt_json("kernel", "stop", "--all")
    assert [(e["name"], e["state"]) for e in stopped] == [("main", "stale")]
    files = kernel_files(project, session, "main")
    assert not files["sock"].exists() and not files["json"].exists()
    assert rt_json("kernel", "ls") == []


@pytest.mark.slow
def test_a_run_whose_host_is_killed_is_recorded_by_verify_repair(project: Path) -> None:
    session = new_session()
    code, out, err = rt("run", "--session", session, "--kernel", "main", "--lang", "bash", "-c", "true", "--json")
    assert code == 0, err
    kernel_id = json.loads(out)["kernelId"]
    [entry] = rt_json("kernel", "ls")
    pending = project / "store" / "runs-pending"
    script = "echo hi > w.txt; sleep 300"
    client = subprocess.Popen(
        [REVIEWTRAIL, "run", "--session", session, "--kernel", "main", "--lang", "bash", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for(lambda: (project / "store" / "workspaces" / session / "w.txt").exists(), "the run to start")
    [marker] = list(pending.glob("*.json"))
    os.kill(entry["pid"], signal.SIGKILL)
    _, err_bytes = client.communicate(timeout=120)
    assert client.returncode == 5 and b"ended without answering" in err_bytes
    code, out, _ = rt("verify")
    assert code == 4 and "was interrupted" in out
    code, out, err = rt("verify", "--repair")
    assert "repaired: run " in out and "recorded as failed (interrupted), 1 file(s) credited" in out, out + err
    code, out, err = rt("verify")
    assert code == 0, out + err
    run = record(marker.stem)
    assert run["status"] == "failed" and "interrupted" in run["error"]
    assert run["kernelMode"] == "persistent" and run["kernelId"] == kernel_id
    assert run["toolName"] == "reviewtrail.kernel.bash" and run["createdFiles"] == ["w.txt"]
    assert not marker.exists()


def test_ctrl_c_cancels_the_run_which_is_recorded_and_ends_the_kernel(project: Path) -> None:
    session = new_session()
    code, _, err = rt("run", "--session", session, "--kernel", "main", "-c", "x = 1")
    assert code == 0, err
    [entry] = rt_json("kernel", "ls")
    client = subprocess.Popen(
        [REVIEWTRAIL, "run", "--session", session, "--kernel", "main", "-c", "import time\ntime.sleep(300)", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for(lambda: any((project / "store" / "runs-pending").glob("*.json")), "the run to start")
    client.send_signal(signal.SIGINT)
    out, _ = client.communicate(timeout=120)
    assert client.returncode == 7
    run = json.loads(out)
    assert run["status"] == "cancelled" and run["kernelMode"] == "persistent"
    assert record(run["recordId"])["status"] == "cancelled"
    wait_for(lambda: not pid_alive(entry["pid"]), "the host of the ended kernel to stop")
    assert rt_json("kernel", "ls") == []


# --- the host stops by itself ---------------------------------------------------------------------
def test_a_host_stops_when_its_session_is_removed(project: Path) -> None:
    session = new_session()
    code, _, err = rt("run", "--session", session, "--kernel", "main", "-c", "x = 1")
    assert code == 0, err
    [entry] = rt_json("kernel", "ls")
    code, _, err = rt("session", "rm", session)
    assert code == 0, err
    wait_for(lambda: not pid_alive(entry["pid"]), "the host to stop")
    assert not kernel_files(project, session, "main")["sock"].exists()
    assert "its session was removed" in kernel_files(project, session, "main")["log"].read_text()
    before = head_seq()
    code, _, err = rt("run", "--session", session, "--kernel", "main", "-c", "print(x)")
    assert code == 6 and "error: session:" in err and "deleted" in err
    assert head_seq() == before and rt_json("kernel", "ls") == []


def test_a_host_stops_when_idle_or_when_its_store_goes_away(project: Path) -> None:
    session = new_session()
    code, _, err = rt("run", "--session", session, "--kernel", "idle", "--idle-minutes", "0.02", "-c", "x = 1")
    assert code == 0, err
    match = re.search(r"host pid (\d+)", err)
    assert match is not None, err
    wait_for(lambda: not pid_alive(int(match.group(1))), "the idle host to stop")
    assert "idle for 0.02 minute(s)" in kernel_files(project, session, "idle")["log"].read_text()
    assert rt_json("kernel", "ls") == []

    code, _, err = rt("run", "--session", session, "--kernel", "kept", "-c", "x = 1")
    assert code == 0, err
    [entry] = rt_json("kernel", "ls")
    shutil.rmtree(project / "store")
    wait_for(lambda: not pid_alive(entry["pid"]), "the host of a removed store to stop")


# --- refusals: named, documented exit codes, nothing recorded ---------------------------------------
def test_bad_inputs_are_refused_and_record_nothing(project: Path) -> None:
    session = new_session()
    code, _, err = rt("run", "--session", session, "--kernel", "main", "-c", "x = 1", "--env", "TOKEN=hunter2")
    assert code == 0, err
    [entry] = rt_json("kernel", "ls")
    before = head_seq()
    base = ("run", "--session", session, "--kernel", "main", "--env", "TOKEN=hunter2", "-c", "print(x)")
    refusals = [
        (("run", "--session", session, "--kernel", "../up", "-c", "1"), 2, "error: kernel:"),
        (("run", "--session", session, "--kernel", "", "-c", "1"), 2, "error: kernel:"),
        (("run", "--kernel", "main", "-c", "1"), 2, "error: session: --kernel needs --session"),
        ((*base, "--cwd", "/workspace/d"), 2, "error: cwd:"),
        (("run", "--session", session, "-c", "1", "--idle-minutes", "5"), 2, "error: idle_minutes:"),
        ((*base, "--idle-minutes", "0"), 2, "error: idle_minutes:"),
        (("run", "--session", "not-a-session", "--kernel", "main", "-c", "1"), 2, "error: session:"),
        (("run", "--session", "01a23587-3b98-7dfe-a417-61b1ff028746", "--kernel", "k", "-c", "1"), 3, "no session"),
        ((*base, "--max-memory", "1G"), 6, "error: max_memory: kernel main"),
        ((*base, "--lang", "bash"), 6, "--lang python, this run asks for bash"),
        (("run", "--session", session, "--kernel", "main", "--env", "TOKEN=other", "-c", "1"), 6, "error: env:"),
        (("run", "--session", session, "--kernel", "main", "-c", "1"), 6, "error: env:"),
        ((*base, "--network", "allowlist", "--allow", "example.org"), 6, "error: network:"),
        ((*base, "--idle-minutes", "5"), 6, "error: idle_minutes:"),
        (("kernel", "stop", "../up"), 2, "error: kernel:"),
        (("kernel", "stop"), 2, "error: kernel: give a kernel NAME or --all"),
        (("kernel", "stop", "main", "--all"), 2, "error: kernel:"),
        (("kernel", "stop", "other"), 3, "no kernel other"),
        (("kernel", "ls", "--session", "not-a-session"), 2, "error: session:"),
    ]
    for args, want, message in refusals:
        code, _, err = rt(*args)
        assert (code, message in err) == (want, True), (args, code, err)
        assert "hunter2" not in err and "TOKEN=other" not in err, "--env values are never shown"
    assert head_seq() == before, "nothing was recorded"
    assert [e["pid"] for e in rt_json("kernel", "ls")] == [entry["pid"]], "the kernel is still the same"
    code, out, err = rt(*base)
    assert (code, out.splitlines()[0]) == (0, "1"), err

    removed = new_session()
    code, _, err = rt("session", "rm", removed)
    assert code == 0, err
    code, _, err = rt("run", "--session", removed, "--kernel", "main", "-c", "1")
    assert code == 6 and "was deleted" in err
    assert not (project / "store" / "kernels" / removed).exists(), "no host was started"


# --- the rules, without a host -------------------------------------------------------------------
def test_the_first_option_that_differs_is_named_and_env_values_never_are() -> None:
    from reviewtrail.provenance.kernels._protocol import KernelSettings, settings_difference
    from reviewtrail.provenance.sandbox import ResourceLimits

    started = KernelSettings("python", {"TOKEN": "hunter2"}, "none", (), {}, ResourceLimits())
    assert settings_difference(started, started) is None
    assert settings_difference(started, KernelSettings.from_json(started.to_json())) is None
    option, detail = settings_difference(started, KernelSettings("python", {"TOKEN": "x"})) or ("", "")
    assert option == "--env" and "hunter2" not in detail and "TOKEN" in detail
    option, detail = settings_difference(started, KernelSettings("bash", {})) or ("", "")
    assert option == "--lang" and "python" in detail and "bash" in detail
    later = KernelSettings("python", {"TOKEN": "hunter2"}, limits=ResourceLimits(max_procs=8, max_memory=1 << 30))
    assert settings_difference(started, later) == (
        "--max-memory",
        "it was started with --max-memory 2G, this run asks for 1G",
    )
    weak = KernelSettings("python", {"TOKEN": "hunter2"}, limits=ResourceLimits(weak=True))
    assert (settings_difference(started, weak) or ("",))[0] == "--weak-limits"


def test_a_hosts_error_is_raised_again_as_the_same_error() -> None:
    from reviewtrail.errors import ConflictError, NotFoundError, ReviewtrailError
    from reviewtrail.provenance.kernels._protocol import error_from_json, error_to_json

    for exc in (ConflictError("it differs", field="max_memory"), NotFoundError("no session x", field="session")):
        again = error_from_json(json.loads(json.dumps(error_to_json(exc))))
        assert (type(again), str(again), again.field, again.exit_code) == (
            type(exc),
            str(exc),
            exc.field,
            exc.exit_code,
        )
    odd = error_from_json({"type": "SystemExit", "message": "m", "field": None, "exitCode": 9})
    assert type(odd) is ReviewtrailError and odd.exit_code == 9


@pytest.mark.parametrize("name", ["main", "a", "k-1_2.x", "A" * 64])
def test_kernel_names_that_are_accepted(name: str) -> None:
    from reviewtrail.provenance.kernels._protocol import check_kernel_name

    assert check_kernel_name(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", "../x", "a/b", "-a", ".hidden", "a b", "A" * 65, "é", "a\n"])
def test_kernel_names_that_are_refused(name: str) -> None:
    from reviewtrail.errors import InvalidInputError
    from reviewtrail.provenance.kernels._protocol import check_kernel_name

    with pytest.raises(InvalidInputError) as caught:
        check_kernel_name(name)
    assert caught.value.field == "kernel"
