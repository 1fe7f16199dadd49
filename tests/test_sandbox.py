"""The bubblewrap runner and persistent kernels, against real bubblewrap: isolation is proven, not assumed."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import need
from reviewtrail.errors import BackendUnavailableError, InvalidInputError, NotFoundError
from reviewtrail.provenance.kernels import _kernels
from reviewtrail.provenance.kernels._kernels import PythonKernel, ShellKernel
from reviewtrail.provenance.sandbox import _bwrap
from reviewtrail.provenance.sandbox._bwrap import bwrap_available
from reviewtrail.provenance.sandbox._plan import BASE_ENV, SandboxRequest, SandboxResult, effective_env
from reviewtrail.provenance.sandbox._sandbox import run_sandboxed

SNAPSHOT_PY = "import json, os\nprint(json.dumps({'cwd': os.getcwd(), 'env': dict(os.environ)}))\n"
# What a bash child process sees, NUL-separated; bash adds `_` (the command's path) for children only.
SNAPSHOT_SH = "pwd -P; env -0"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    path = tmp_path / "ws"
    (path / "sub").mkdir(parents=True)
    return path


def run(ws: Path, code: str, lang: str = "python", **kw: Any) -> SandboxResult:
    kw.setdefault("env", {})
    kw.setdefault("timeout", 20.0)
    return run_sandboxed(SandboxRequest(code=code, lang=lang, workspace=ws, **kw))  # type: ignore[arg-type]


def shell_snapshot(stdout: bytes) -> tuple[str, dict[str, str]]:
    cwd, _, rest = stdout.decode().partition("\n")
    env = dict(e.split("=", 1) for e in rest.split("\0") if e)
    env.pop("_", None)
    return cwd, env


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def accepted(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


CONNECT_PY = """\
import socket
for host, port in [("127.0.0.1", {port}), ("1.1.1.1", 53), ("1.1.1.1", 443)]:
    try:
        socket.create_connection((host, port), timeout=3).close()
        print(host, "connected")
    except OSError as exc:
        print(host, "blocked", type(exc).__name__)
"""


# --- isolation ---------------------------------------------------------------------------------
def test_no_network_in_mode_none(ws: Path, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    r = run(ws, CONNECT_PY.format(port=port))
    assert r.status == "succeeded", r.stderr
    lines = r.stdout.decode().splitlines()
    assert len(lines) == 3 and all(" blocked " in line for line in lines), lines
    sh = run(ws, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected", "bash")
    assert sh.status == "failed" and b"connected" not in sh.stdout
    time.sleep(0.1)
    assert not accepted(listener)
    # the sandbox has its own network namespace: only a loopback device
    r = run(ws, "cat /proc/net/dev", "bash")
    devices = {line.split(":")[0].strip() for line in r.stdout.decode().splitlines()[2:]}
    assert devices == {"lo"}


def test_only_injected_variables_are_visible(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RT_SECRET", "s3cret-" + uuid.uuid4().hex)
    secret = os.environ["RT_SECRET"]
    injected = {"INJECTED": "yes", "WITH_SPACE": "a b\nc"}
    r = run(ws, SNAPSHOT_PY, env=injected)
    printed = json.loads(r.stdout)
    assert printed["env"] == r.env == {**BASE_ENV, **injected, "PWD": "/workspace"}
    assert "RT_SECRET" not in printed["env"]
    # not anywhere in the sandbox either: no process's environment or command line holds it
    scan = "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n'"
    assert secret.encode() not in run(ws, scan, "bash").stdout
    sh = run(ws, SNAPSHOT_SH, "bash", env=injected)
    assert shell_snapshot(sh.stdout)[1] == sh.env == {**effective_env(injected), "PWD": "/workspace", "SHLVL": "1"}


def test_callers_can_override_the_base_variables(ws: Path) -> None:
    r = run(ws, SNAPSHOT_PY, env={"PATH": "/usr/bin", "HOME": "/tmp", "LANG": "C.UTF-8"})
    assert r.env == {"PATH": "/usr/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PWD": "/workspace"}


def test_writes_outside_the_workspace_fail(ws: Path, tmp_path: Path) -> None:
    marker = f"rt-{uuid.uuid4().hex}"
    code = f"""
import os
for target in ["/usr/{marker}", "/etc/{marker}", "/{marker}", "/home/{marker}", "/proc/{marker}"]:
    try:
        open(target, "w").close()
        print(target, "written")
    except OSError as exc:
        print(target, "refused", exc.errno)
open("/tmp/{marker}", "w").write("inside")
print("tmp", os.listdir("/tmp"))
print("host", os.path.exists({str(tmp_path)!r}))
"""
    r = run(ws, code)
    assert r.status == "succeeded", r.stderr
    out = r.stdout.decode()
    assert "written" not in out and out.count("refused") == 5
    assert f"tmp ['{marker}']" in out  # a private, empty tmpfs
    assert "host False" in out  # the host's folders are not there
    assert not Path("/tmp", marker).exists()
    assert not Path("/usr", marker).exists() and not Path("/etc", marker).exists()


def test_workspace_files_appear_on_the_host(ws: Path) -> None:
    r = run(ws, "open('out.txt', 'w').write('from the sandbox')\n", cwd="sub")
    assert r.status == "succeeded"
    assert (ws / "sub" / "out.txt").read_text() == "from the sandbox"
    r = run(ws, "echo shell > made-by-bash.txt", "bash")
    assert (ws / "made-by-bash.txt").read_text() == "shell\n"


def test_no_capabilities_own_pid_namespace_and_hostname(ws: Path) -> None:
    code = "grep CapEff /proc/self/status; hostname; ls /proc | grep -c '^[0-9]'"
    r = run(ws, code, "bash")
    cap, host, pids = r.stdout.decode().split("\n")[:3]
    assert cap.split() == ["CapEff:", "0000000000000000"]
    assert host == "sandbox"
    assert int(pids) < 10


# --- what is recorded ----------------------------------------------------------------------------
@pytest.mark.parametrize("cwd", ["/workspace", "sub", "/workspace/sub", "sub/../sub/"])
def test_recorded_directory_and_env_are_what_python_saw(ws: Path, cwd: str) -> None:
    r = run(ws, SNAPSHOT_PY, env={"A": "1"}, cwd=cwd)
    printed = json.loads(r.stdout)
    assert (r.working_directory, r.env) == (printed["cwd"], printed["env"])
    assert r.working_directory == ("/workspace" if cwd == "/workspace" else "/workspace/sub")


@pytest.mark.parametrize("cwd", ["/workspace", "sub"])
def test_recorded_directory_and_env_are_what_bash_saw(ws: Path, cwd: str) -> None:
    r = run(ws, SNAPSHOT_SH, "bash", env={"A": "1"}, cwd=cwd)
    assert (r.working_directory, r.env) == shell_snapshot(r.stdout)
    assert r.working_directory.startswith("/workspace")


def test_python_locale_coercion_is_captured_as_seen(ws: Path) -> None:
    r = run(ws, SNAPSHOT_PY, env={"LANG": "C"})
    printed = json.loads(r.stdout)
    assert r.env == printed["env"]
    assert r.env is not None and r.env.get("LC_CTYPE") == "C.UTF-8"  # Python added it; the record says so


@pytest.mark.parametrize("cwd", ["..", "../etc", "/etc", "/workspace/../tmp", "sub/../../x", "/workspace2", ""])
def test_cwd_must_stay_in_the_workspace(ws: Path, cwd: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        run(ws, "", cwd=cwd)
    assert err.value.field == "cwd"


def test_a_missing_cwd_fails_before_running(ws: Path) -> None:
    r = run(ws, "open('/workspace/ran', 'w')", cwd="missing")
    assert (r.status, r.exit_code, r.working_directory, r.env) == ("failed", None, "unavailable", None)
    assert r.error and "before the code ran" in r.error
    assert not (ws / "ran").exists()


# --- outcomes --------------------------------------------------------------------------------
def test_success_and_failure(ws: Path) -> None:
    ok = run(ws, "print('hi')")
    assert (ok.status, ok.exit_code, ok.stdout, ok.error, ok.timed_out) == ("succeeded", 0, b"hi\n", None, False)
    assert ok.started_at <= ok.ended_at and ok.argv[0].endswith("bwrap")
    assert run(ws, "import sys; sys.exit(3)").exit_code == 3
    boom = run(ws, "x = 1\nraise ValueError('boom')")
    assert (boom.status, boom.exit_code) == ("failed", 1)
    assert boom.stderr.startswith(b"Traceback") and b'File "<sandbox>", line 2' in boom.stderr
    assert b"ValueError: boom" in boom.stderr
    sh = run(ws, "echo out; echo err >&2; exit 5", "bash")
    assert (sh.status, sh.exit_code, sh.stdout, sh.stderr) == ("failed", 5, b"out\n", b"err\n")
    assert run(ws, "").status == run(ws, "", "bash").status == "succeeded"
    assert run(ws, "print(__name__)").stdout == b"__main__\n"


def test_timeout_kills_everything(ws: Path) -> None:
    code = "(while true; do echo t >> tick; sleep 0.05; done) & disown; setsid sleep 100 & echo started; sleep 100"
    t0 = time.monotonic()
    r = run(ws, code, "bash", timeout=1.0)
    assert time.monotonic() - t0 < 4
    assert (r.status, r.timed_out, r.exit_code) == ("cancelled", True, None)
    assert r.stdout == b"started\n" and r.error and "timed out" in r.error
    assert r.env is not None  # the code did start
    size = (ws / "tick").stat().st_size
    time.sleep(0.4)
    assert (ws / "tick").stat().st_size == size  # the background loop died with the sandbox


def test_cancel_event(ws: Path) -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    t0 = time.monotonic()
    r = run_sandboxed(SandboxRequest("import time; time.sleep(60)", "python", ws, {}, 60.0), cancel=cancel)
    assert time.monotonic() - t0 < 3
    assert (r.status, r.timed_out, r.exit_code) == ("cancelled", False, None)


@pytest.mark.parametrize(
    "lang, code",
    [
        ("python", "import sys\nsys.stdout.write('o' * 5_000_000)\nsys.stderr.write('e' * 5_000_000)"),
        ("bash", "head -c 5000000 /dev/zero | tr '\\0' o; head -c 5000000 /dev/zero | tr '\\0' e >&2"),
    ],
)
def test_output_is_bounded_and_the_code_never_blocks(ws: Path, lang: str, code: str) -> None:
    t0 = time.monotonic()
    r = run(ws, code, lang, max_output=1000)
    assert time.monotonic() - t0 < 10
    assert (r.status, r.exit_code, r.limit_exceeded) == ("failed", 0, "output")
    assert r.error and "--max-output" in r.error
    assert (r.stdout, r.stderr) == (b"o" * 1000, b"e" * 1000)
    assert r.stdout_truncated and r.stderr_truncated


def test_output_at_the_limit_is_not_truncated(ws: Path) -> None:
    r = run(ws, "print('x' * 999)", max_output=1000)
    assert (len(r.stdout), r.stdout_truncated, r.status, r.limit_exceeded) == (1000, False, "succeeded", None)
    assert not run(ws, "", max_output=0).stdout_truncated


def test_invalid_requests(ws: Path) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"lang": "ruby"}, "lang"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"env": {"BAD-NAME": "x"}}, "env"),
        ({"env": {"A": "x\x00y"}}, "env"),
        ({"code": "print(1)\x00"}, "code"),
        ({"network": "host"}, "network"),
        ({"max_output": -1}, "max_output"),
    ]
    for change, field in cases:
        args: dict[str, Any] = {"code": "", "lang": "python", "workspace": ws, "env": {}, "timeout": 5.0, **change}
        with pytest.raises(InvalidInputError) as err:
            run_sandboxed(SandboxRequest(**args))
        assert err.value.field == field, change
    with pytest.raises(NotFoundError):
        run(ws / "nope", "")


def test_missing_bubblewrap(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bwrap, "bwrap_path", lambda: None)
    assert not bwrap_available()
    with pytest.raises(BackendUnavailableError, match=r"bubblewrap \(bwrap\) is not installed or not on PATH"):
        run(ws, "")


def test_host_process_table_does_not_show_injected_values(ws: Path) -> None:
    seen: list[bytes] = []

    def scan() -> None:
        time.sleep(0.3)
        for pid in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                seen.append(Path("/proc", pid, "cmdline").read_bytes())

    t = threading.Thread(target=scan)
    t.start()
    r = run(ws, "sleep 0.8", "bash", env={"TOKEN": "visible-only-inside"})
    t.join()
    assert any(c == b"sleep\x000.8\x00" for c in seen)  # the scan ran while the sandbox was up
    assert not any(b"visible-only-inside" in c for c in seen)  # options travel through --args <memfd>
    at = r.argv.index("TOKEN")
    assert r.argv[at - 1 : at + 2] == ["--setenv", "TOKEN", "visible-only-inside"]  # the record has them


# --- persistent kernels ----------------------------------------------------------------------------
def test_python_kernel_keeps_state_and_reports_the_end_of_each_evaluation(ws: Path) -> None:
    with PythonKernel(ws, {"A": "1"}) as k:
        uuid.UUID(k.kernel_id)
        first = k.evaluate("x = 1\nprint('one')", 10)
        assert (first.status, first.exit_code, first.stdout) == ("succeeded", 0, b"one\n")
        assert first.working_directory == "/workspace"
        assert first.env == {**effective_env({"A": "1"}), "PWD": "/workspace"}
        second = k.evaluate("import os\nprint(x + 1)\nos.chdir('sub')\nos.environ['B'] = '2'", 10)
        assert second.stdout == b"2\n"  # only this evaluation's output
        assert second.working_directory == "/workspace/sub"
        assert second.env is not None and second.env["B"] == "2"
        printed = k.evaluate(SNAPSHOT_PY, 10)
        assert (printed.working_directory, printed.env) == tuple(json.loads(printed.stdout).values())
        boom = k.evaluate("del x\nx", 10)
        assert (boom.status, boom.exit_code) == ("failed", 1) and b"NameError" in boom.stderr
        assert k.evaluate("import sys; sys.exit(4)", 10).exit_code == 4
        sub = k.evaluate("import subprocess; subprocess.run(['echo', 'child'])", 10)
        assert sub.stdout == b"child\n"
        again = k.evaluate("print(os.getcwd())", 10)
        assert (again.status, again.stdout) == ("succeeded", b"/workspace/sub\n")


def test_shell_kernel_keeps_state_and_reports_the_end_of_each_evaluation(ws: Path) -> None:
    with ShellKernel(ws, {"A": "1"}) as k:
        r = k.evaluate("export E=1; plain=2; f() { echo fn; }", 10)
        assert (r.status, r.exit_code, r.working_directory) == ("succeeded", 0, "/workspace")
        assert r.env == {**effective_env({"A": "1"}), "E": "1", "PWD": "/workspace", "SHLVL": "1"}
        r = k.evaluate("cd sub; echo $E $plain; f", 10)
        assert (r.stdout, r.working_directory) == (b"1 2\nfn\n", "/workspace/sub")
        assert r.env is not None and r.env["PWD"] == "/workspace/sub" and "plain" not in r.env
        r = k.evaluate(SNAPSHOT_SH, 10)
        assert (r.working_directory, r.env) == shell_snapshot(r.stdout)
        r = k.evaluate("echo err >&2; false", 10)
        assert (r.status, r.exit_code, r.stderr) == ("failed", 1, b"err\n")
        r = k.evaluate('echo "it\'s $E"; (exit 7)', 10)
        assert (r.status, r.exit_code, r.stdout) == ("failed", 7, b"it's 1\n")
        assert k.evaluate("break; continue; echo still", 10).stdout == b"still\n"
        assert k.evaluate("pwd", 10).stdout == b"/workspace/sub\n"


def test_kernels_bound_output_and_carry_on(ws: Path) -> None:
    with PythonKernel(ws, max_output=1000) as k:
        r = k.evaluate("import sys; sys.stdout.write('o' * 5_000_000)", 20)
        assert (len(r.stdout), r.stdout_truncated) == (1000, True)
        assert k.evaluate("print('next')", 10).stdout == b"next\n"
    with ShellKernel(ws, max_output=1000) as k:
        r = k.evaluate("head -c 5000000 /dev/zero | tr '\\0' e >&2", 20)
        assert (len(r.stderr), r.stderr_truncated, r.stdout_truncated) == (1000, True, False)
        assert k.evaluate("echo next", 10).stdout == b"next\n"


@pytest.mark.parametrize("kind", [PythonKernel, ShellKernel])
def test_kernel_timeout_kills_it(ws: Path, kind: type[PythonKernel] | type[ShellKernel]) -> None:
    slow = "import time; print('begun', flush=True); time.sleep(60)" if kind is PythonKernel else "echo begun; sleep 60"
    with kind(ws) as k:
        t0 = time.monotonic()
        r = k.evaluate(slow, 0.5)
        assert time.monotonic() - t0 < 4
        assert (r.status, r.timed_out, r.exit_code, r.stdout) == ("cancelled", True, None, b"begun\n")
        assert not k.alive
        with pytest.raises(BackendUnavailableError, match="dead"):
            k.evaluate("1", 5)


def test_kernel_cancel_and_exit(ws: Path) -> None:
    with PythonKernel(ws) as k:
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        r = k.evaluate("import time; time.sleep(60)", 60, cancel=cancel)
        assert (r.status, r.timed_out) == ("cancelled", False) and not k.alive
    with ShellKernel(ws) as k:
        r = k.evaluate("echo bye; exit 3", 10)
        assert (r.status, r.exit_code, r.stdout) == ("failed", 3, b"bye\n") and not k.alive
        with pytest.raises(BackendUnavailableError):
            k.evaluate("true", 5)
    with PythonKernel(ws) as k:
        r = k.evaluate("import os; os._exit(9)", 10)
        assert (r.status, r.exit_code) == ("failed", 9) and not k.alive


def test_kernels_are_isolated_too(ws: Path, listener: socket.socket, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RT_SECRET", "kernel-secret")
    with PythonKernel(ws, {"ONLY": "this"}) as k:
        r = k.evaluate(CONNECT_PY.format(port=listener.getsockname()[1]), 20)
        assert r.stdout.decode().count("blocked") == 3
        assert r.env is not None and "RT_SECRET" not in r.env and r.env["ONLY"] == "this"
        assert k.evaluate("open('/usr/x', 'w')", 5).status == "failed"
    with ShellKernel(ws) as k:
        assert k.evaluate("echo $RT_SECRET; touch /etc/x", 5).stdout == b"\n"
    assert not accepted(listener)


@pytest.mark.parametrize("kind", [PythonKernel, ShellKernel])
def test_a_kernel_that_cannot_start_says_why(
    ws: Path, kind: type[PythonKernel] | type[ShellKernel], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_kernels, "SANDBOX_WORKSPACE", "/workspace/missing")
    with pytest.raises(BackendUnavailableError, match=r"did not start.*chdir to /workspace/missing"):
        kind(ws)


def test_killed_by_a_signal_is_128_plus_the_signal(ws: Path) -> None:
    r = run(ws, "kill -9 $$", "bash")
    assert (r.status, r.exit_code) == ("failed", 137)
