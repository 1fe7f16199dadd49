"""Run code once under bubblewrap and report exactly what happened (seed §2).

This module only executes; recording the result (CAS, ledger) is the caller's job.

The sandbox is a fresh root: ``/usr`` and a short list of ``/etc`` entries (:data:`ETC_ENTRIES`)
read-only, ``/bin``, ``/lib``... as on the host (symlinks into ``/usr`` or read-only binds),
``/proc``, a minimal ``/dev``, a private tmpfs ``/tmp``, the workspace read-write at
``/workspace``, and the root itself remounted read-only. All namespaces are unshared
(``--unshare-all``: user, pid, ipc, uts, cgroup and network); ``network="allowlist"`` adds
``--share-net``, i.e. the host's network namespace: which hosts are allowed is *not*
enforced by bubblewrap but by the policy revision the caller records with the run.
All capabilities are dropped, the code runs in its own session (``--new-session``) and
dies with its parent (``--die-with-parent``).

Environment: ``--clearenv``, then exactly :func:`effective_env` (the caller's variables
over :data:`BASE_ENV`). bubblewrap itself adds ``PWD`` (the working directory, set by
``--chdir``) and bash adds ``SHLVL``; ``LANG=C.UTF-8`` by default keeps Python's locale
coercion from adding ``LC_CTYPE``. The snapshot in :attr:`SandboxResult.env` is not this
plan but what the code's own process saw: the launcher captures ``os.environ`` (python)
or the exported variables (bash) and the working directory inside the process, after
interpreter start-up and just before the code runs, and writes them to a pipe the host
reads. No snapshot (``None``, working directory ``"unavailable"``) means the code never
started.

A timeout or a set ``cancel`` event kills bubblewrap's process group with SIGKILL; the
sandbox's pid namespace dies with it, so nothing the code started survives. Such a run
is ``"cancelled"`` (``timed_out`` tells which) and has no exit code. Otherwise the exit code
is the code's (128 + N when a signal N killed it, as bubblewrap reports); non-zero is
``"failed"``. Each output stream keeps its first ``max_output`` bytes; the rest is read and
dropped so the code never blocks.
"""

from __future__ import annotations

import contextlib
import math
import os
import posixpath
import re
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from reviewtrail.errors import BackendUnavailableError, InvalidInputError, NotFoundError

__all__ = [
    "BASE_ENV",
    "DEFAULT_MAX_OUTPUT",
    "ETC_ENTRIES",
    "SANDBOX_WORKSPACE",
    "SandboxRequest",
    "SandboxResult",
    "bwrap_available",
    "effective_env",
    "run_sandboxed",
]

Language = Literal["python", "bash"]
Network = Literal["none", "allowlist"]
Status = Literal["succeeded", "failed", "cancelled"]

SANDBOX_WORKSPACE = "/workspace"
DEFAULT_MAX_OUTPUT = 10 * 1024 * 1024
PYTHON = "/usr/bin/python3"
BASH = "/bin/bash"
# Set unless the caller's env overrides them; documented in the module docstring.
BASE_ENV: Mapping[str, str] = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": SANDBOX_WORKSPACE, "LANG": "C.UTF-8"}
# /etc entries the interpreters, the dynamic linker, name lookup and TLS need (read-only, when present).
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf", "passwd",
               "group", "hosts", "host.conf", "resolv.conf", "gai.conf", "protocols", "services", "ssl",
               "ca-certificates", "mime.types", "python3", "python3.11")  # fmt: skip
_ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POLL = 0.05  # seconds between checks of the cancel event
_GRACE = 5.0  # seconds to wait for the output pipes to close after the sandbox is gone
_REPORT_LIMIT = 64 * 1024 * 1024

# Both launchers read the code from <code fd>, then write the report to <report fd> and close it:
# the working directory, NUL, one NAME=value NUL per variable, and a final NUL (an empty record).
# Python: ``python3 -c _PY_LAUNCHER <report fd> <code fd>``; only os and sys are loaded before the code.
_PY_LAUNCHER = """\
import os, sys
_r, _c = int(sys.argv[1]), int(sys.argv[2])
with os.fdopen(_c, "rb") as _f:
    _src = _f.read()
with os.fdopen(_r, "wb") as _f:
    _f.write(b"\\0".join([os.getcwdb(), *(k + b"=" + v for k, v in os.environb.items())]) + b"\\0\\0")
_m = type(sys)("__main__")
sys.modules["__main__"] = _m
sys.argv = ["-c"]
try:
    exec(compile(_src, "<sandbox>", "exec"), _m.__dict__)
except SystemExit:
    raise
except BaseException as _e:
    import traceback
    traceback.print_exception(type(_e), _e, _e.__traceback__.tb_next if _e.__traceback__ else None)
    sys.exit(1)
"""

# Bash: ``bash -c _BASH_LAUNCHER bash <report fd> <code fd>``.
_BASH_LAUNCHER = """\
IFS= read -r -d '' __rt_code <&"$2"
{ printf '%s\\0' "$(pwd -P)"
  for __rt_n in $(compgen -e); do [[ -n ${!__rt_n+x} ]] && printf '%s=%s\\0' "$__rt_n" "${!__rt_n}"; done
  printf '\\0'; } >&"$1"
eval "exec $1>&- $2<&-"
unset __rt_n
set --
eval "unset __rt_code
$__rt_code"
"""


@dataclass(frozen=True)
class SandboxRequest:
    """One execution. ``env`` holds the only variables injected (over :data:`BASE_ENV`)."""

    code: str
    lang: Language
    workspace: Path
    env: Mapping[str, str]
    timeout: float
    network: Network = "none"
    max_output: int = DEFAULT_MAX_OUTPUT
    cwd: str = SANDBOX_WORKSPACE

    def __post_init__(self) -> None:
        if self.lang not in ("python", "bash"):
            raise InvalidInputError(f"{self.lang!r} is not a supported language; use python or bash", field="lang")
        check_code(self.code)
        check_env(self.env)
        check_timeout(self.timeout)
        check_network(self.network)
        if isinstance(self.max_output, bool) or not isinstance(self.max_output, int) or self.max_output < 0:
            raise InvalidInputError("must be a byte count >= 0", field="max_output")
        sandbox_cwd(self.cwd)

    @property
    def sandbox_cwd(self) -> str:
        """``cwd`` as an absolute, normalized path inside the sandbox."""
        return sandbox_cwd(self.cwd)


@dataclass(frozen=True)
class SandboxResult:
    """What happened. ``working_directory``/``env`` are reported by the code's own process."""

    status: Status
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    started_at: datetime
    ended_at: datetime
    working_directory: str
    env: dict[str, str] | None
    timed_out: bool
    error: str | None
    argv: list[str]


# --- validation ------------------------------------------------------------------------------
def check_code(code: str) -> bytes:
    """The code as UTF-8; NUL bytes and lone surrogates are rejected."""
    if "\x00" in code:
        raise InvalidInputError("contains a NUL byte", field="code")
    try:
        return code.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"is not valid Unicode text ({exc.reason})", field="code") from None


def check_env(env: Mapping[str, str]) -> None:
    for key, value in env.items():
        if not isinstance(key, str) or _ENV_NAME.fullmatch(key) is None:
            raise InvalidInputError(f"{key!r} is not a variable name", field="env")
        if not isinstance(value, str) or "\x00" in value:
            raise InvalidInputError(f"the value of {key} must be a string without NUL bytes", field="env")


def check_timeout(timeout: float) -> None:
    number = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if not (number and timeout > 0 and math.isfinite(timeout)):
        raise InvalidInputError("must be a finite number of seconds > 0", field="timeout")


def check_network(network: str) -> None:
    if network not in ("none", "allowlist"):
        raise InvalidInputError(f"{network!r} is not a network policy; use none or allowlist", field="network")


def sandbox_cwd(cwd: str) -> str:
    """Resolve ``cwd`` (absolute, or relative to /workspace) lexically; it must stay inside /workspace."""
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
        raise InvalidInputError("must be a path inside /workspace", field="cwd")
    path = posixpath.normpath(posixpath.join(SANDBOX_WORKSPACE, cwd))
    if path != SANDBOX_WORKSPACE and not path.startswith(SANDBOX_WORKSPACE + "/"):
        raise InvalidInputError(f"{cwd!r} is outside /workspace", field="cwd")
    return path


def effective_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables set after ``--clearenv``: :data:`BASE_ENV` overridden by ``env``."""
    return {**BASE_ENV, **env}


# --- bubblewrap --------------------------------------------------------------------------------
def bwrap_path() -> str | None:
    return shutil.which("bwrap") or (None if not os.access("/usr/bin/bwrap", os.X_OK) else "/usr/bin/bwrap")


def bwrap_available() -> bool:
    return bwrap_path() is not None


def require_bwrap() -> str:
    path = bwrap_path()
    if path is None:
        raise BackendUnavailableError("bubblewrap is not installed", field="sandbox")
    return path


def host_workspace(workspace: Path) -> Path:
    if not workspace.exists():
        raise NotFoundError(f"{workspace} does not exist", field="workspace")
    if not workspace.is_dir():
        raise InvalidInputError(f"{workspace} is not a directory", field="workspace")
    return workspace.resolve()


def sandbox_options(workspace: Path, cwd: str, env: Mapping[str, str], network: Network) -> list[str]:
    """bwrap's options (everything before the command) for one sandbox."""
    opts = ["--unshare-all", *(["--share-net"] if network == "allowlist" else [])]
    opts += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    opts += ["--ro-bind", "/usr", "/usr"]
    for name in _ROOT_LINKS:
        host = Path("/", name)
        if host.is_symlink():
            opts += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            opts += ["--ro-bind", str(host), f"/{name}"]
    for entry in ETC_ENTRIES:
        if os.path.exists(f"/etc/{entry}"):
            opts += ["--ro-bind", f"/etc/{entry}", f"/etc/{entry}"]
    opts += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # noqa: S108 - the sandbox's own private /tmp
    opts += ["--bind", str(workspace), SANDBOX_WORKSPACE, "--remount-ro", "/", "--chdir", cwd, "--clearenv"]
    for key, value in env.items():
        opts += ["--setenv", key, value]
    return opts


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def start_sandbox(
    bwrap: str, options: Sequence[str], command: Sequence[str], pass_fds: Sequence[int]
) -> tuple[subprocess.Popen[bytes], int, int, list[str]]:
    """Start bwrap in a new process group; return it, the stdout and stderr read ends and the argv.

    The options travel through ``--args <memfd>`` so injected values never appear in the
    host's process table; the returned argv is the full, equivalent command line.
    """
    args_fd = _memfd("bwrap-args", b"".join(o.encode("utf-8", "surrogateescape") + b"\0" for o in options))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [bwrap, "--args", str(args_fd), *command],
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            pass_fds=(args_fd, *pass_fds),
            start_new_session=True,
            env={},
        )
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        for fd in (args_fd, out_w, err_w):
            os.close(fd)
    return proc, out_r, err_r, [bwrap, *options, *command]


def kill_sandbox(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL bwrap's process group; the pid namespace and everything in it go with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


class Drain:
    """Reads one pipe on a daemon thread until EOF, keeping at most ``limit`` bytes per capture.

    A capture ends at EOF or, when it has a sentinel, where the sentinel appears in the
    stream (the sentinel is not kept, nor is anything after it). Bytes arriving while no
    capture is open are dropped.
    """

    def __init__(self, fd: int, name: str, limit: int | None = None) -> None:
        self._fd = fd
        self._cond = threading.Condition()
        self._eof = False
        self._open = False
        self._buf = bytearray()
        self._limit = 0
        self._truncated = False
        self._sentinel = b""
        self._tail = b""
        if limit is not None:
            self.begin(limit)
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def begin(self, limit: int, sentinel: bytes = b"", *, keep: bool = False) -> None:
        """Open a new capture; ``keep`` carries over what the previous one kept."""
        with self._cond:
            if not keep:
                self._buf, self._truncated = bytearray(), False
            self._limit, self._sentinel, self._tail, self._open = limit, sentinel, b"", not self._eof

    def wait(self, timeout: float) -> bool:
        """Whether the current capture ended (sentinel seen or EOF) within ``timeout`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._open, timeout)

    def take(self) -> tuple[bytes, bool]:
        with self._cond:
            return bytes(self._buf), self._truncated

    @property
    def eof(self) -> bool:
        with self._cond:
            return self._eof

    def _keep(self, data: bytes) -> None:
        room = self._limit - len(self._buf)
        self._buf += data[: max(room, 0)]
        self._truncated |= len(data) > room

    def _feed(self, chunk: bytes) -> None:
        if not self._open:
            return
        if not self._sentinel:
            self._keep(chunk)
            return
        data = self._tail + chunk
        at = data.find(self._sentinel)
        if at >= 0:
            self._keep(data[:at])
            self._tail, self._open = b"", False
            self._cond.notify_all()
            return
        cut = max(0, len(data) - len(self._sentinel) + 1)
        self._keep(data[:cut])
        self._tail = data[cut:]

    def _run(self) -> None:
        try:
            while chunk := os.read(self._fd, 1 << 16):
                with self._cond:
                    self._feed(chunk)
        finally:
            os.close(self._fd)
            with self._cond:
                if self._open:
                    self._keep(self._tail)
                self._eof, self._open = True, False
                self._cond.notify_all()


# --- one-shot runs -------------------------------------------------------------------------------
def _wait(proc: subprocess.Popen[bytes], deadline: float, cancel: threading.Event | None) -> str:
    """Wait for the sandbox to exit; ``"exited"``, ``"timeout"`` or ``"cancelled"``."""
    try:
        pidfd: int | None = os.pidfd_open(proc.pid)
    except OSError:  # Linux < 5.3: poll
        pidfd = None
    try:
        while True:
            if cancel is not None and cancel.is_set():
                return "cancelled"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            step = remaining if cancel is None else min(remaining, _POLL)
            if pidfd is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(step)
                    return "exited"
            elif select.select([pidfd], [], [], step)[0]:
                proc.wait()
                return "exited"
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _parse_report(data: bytes) -> tuple[str, dict[str, str]] | None:
    """The launcher's (cwd, env) report, or None if it never wrote a complete one."""
    if not data.endswith(b"\0\0"):
        return None
    cwd, *entries = data[:-2].decode("utf-8", "surrogateescape").split("\0")
    return cwd, dict(entry.split("=", 1) for entry in entries if "=" in entry)


def _command(lang: Language, report_fd: int, code_fd: int) -> list[str]:
    if lang == "python":
        return [PYTHON, "-c", _PY_LAUNCHER, str(report_fd), str(code_fd)]
    return [BASH, "--noprofile", "--norc", "-c", _BASH_LAUNCHER, "bash", str(report_fd), str(code_fd)]


def run_sandboxed(req: SandboxRequest, *, cancel: threading.Event | None = None) -> SandboxResult:
    """Run ``req.code`` once in a fresh sandbox and report what happened (see the module docs)."""
    bwrap = require_bwrap()
    source = check_code(req.code)
    options = sandbox_options(host_workspace(req.workspace), req.sandbox_cwd, effective_env(req.env), req.network)
    report_r, report_w = os.pipe()
    code_fd = _memfd("sandbox-code", source)
    started_at = datetime.now(UTC)
    deadline = time.monotonic() + req.timeout
    try:
        proc, out_fd, err_fd, argv = start_sandbox(bwrap, options, _command(req.lang, report_w, code_fd),
                                                   (report_w, code_fd))  # fmt: skip
    except BaseException:
        os.close(report_r)
        raise
    finally:
        os.close(report_w)
        os.close(code_fd)
    report = Drain(report_r, "sandbox-report", _REPORT_LIMIT)
    out = Drain(out_fd, "sandbox-stdout", req.max_output)
    err = Drain(err_fd, "sandbox-stderr", req.max_output)
    try:
        outcome = _wait(proc, deadline, cancel)
    finally:
        if proc.returncode is None:
            kill_sandbox(proc)
    ended_at = datetime.now(UTC)
    for drain in (report, out, err):
        drain.wait(_GRACE)
    stdout, stdout_truncated = out.take()
    stderr, stderr_truncated = err.take()
    seen = _parse_report(report.take()[0])
    status: Status
    exit_code: int | None = None
    error: str | None = None
    if outcome == "timeout":
        status, error = "cancelled", f"timed out after {req.timeout:g} s; the sandbox was killed"
    elif outcome == "cancelled":
        status, error = "cancelled", "cancelled; the sandbox was killed"
    elif seen is None:
        detail = stderr.decode("utf-8", "replace").strip().splitlines()
        status = "failed"
        error = f"the sandbox failed before the code ran (bwrap exit status {proc.returncode})" + (
            f": {detail[-1]}" if detail else ""
        )
    else:
        exit_code = proc.returncode
        status = "succeeded" if exit_code == 0 else "failed"
    return SandboxResult(
        status=status,
        exit_code=exit_code,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=stdout_truncated,
        stderr_truncated=stderr_truncated,
        started_at=started_at,
        ended_at=ended_at,
        working_directory=seen[0] if seen else "unavailable",
        env=seen[1] if seen else None,
        timed_out=outcome == "timeout",
        error=error,
        argv=argv,
    )
