"""Run code once under bubblewrap and report exactly what happened (seed §2).

This module only executes; recording the result (CAS, ledger) is the caller's job.

The sandbox is a fresh root: ``/usr`` and a short list of ``/etc`` entries (:data:`ETC_ENTRIES`)
read-only, ``/bin``, ``/lib``... as on the host (symlinks into ``/usr`` or read-only binds),
``/proc``, a minimal ``/dev``, a private tmpfs ``/tmp``, the workspace read-write at
``/workspace``, and the root itself remounted read-only. All namespaces are unshared
(``--unshare-all``: user, pid, ipc, uts, cgroup and network), in both network modes: with
``network="none"`` the sandbox has only its own loopback; with ``network="allowlist"`` its
one way out is the host's filtering proxy (:mod:`._netproxy`), whose Unix socket is bound
read-only at ``/run/rt-proxy`` and bridged to ``127.0.0.1:3128`` inside, with
``HTTP_PROXY``/``HTTPS_PROXY``/``http_proxy``/``https_proxy``/``ALL_PROXY`` pointing there
(:data:`PROXY_ENV`). The host's loopback, abstract Unix sockets and other services are
never reachable.
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

The sandbox's command is the supervisor of :mod:`._sandbox_launch`, which sets the
resource limits (:mod:`._limits`), enforces the process and memory counts, and runs the code.

A timeout or a set ``cancel`` event kills bubblewrap's process group with SIGKILL; the
sandbox's pid namespace dies with it, so nothing the code started survives. Such a run
is ``"cancelled"`` (``timed_out`` tells which; a timeout is also ``limit_exceeded="time"``)
and has no exit code. Otherwise the exit code is the code's (128 + N when a signal N killed
it); non-zero is ``"failed"``. Each output stream keeps its first ``max_output`` bytes; the
rest is read and dropped so the code never blocks, and the run is ``"failed"`` with
``limit_exceeded="output"``. A run that hits another limit is ``"failed"`` with the limit named.
"""

from __future__ import annotations

import contextlib
import math
import os
import posixpath
import re
import select
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from reviewtrail.errors import InvalidInputError
from reviewtrail.provenance._limits import (
    DEFAULT_LIMITS,
    LimitName,
    ResourceLimits,
    limit_outcome,
    reported_limit,
)
from reviewtrail.provenance._netproxy import NetProxy
from reviewtrail.provenance._netproxy_rules import NetPolicy
from reviewtrail.provenance._sandbox_bwrap import (
    ETC_ENTRIES,
    SANDBOX_WORKSPACE,
    bwrap_available,
    bwrap_path,
    host_workspace,
    kill_sandbox,
    memfd,
    require_bwrap,
    sandbox_options,
    start_sandbox,
)
from reviewtrail.provenance._sandbox_drain import Drain
from reviewtrail.provenance._sandbox_launch import BRIDGE_PORT, bash_command, supervisor_command

__all__ = [
    "BASE_ENV",
    "DEFAULT_MAX_OUTPUT",
    "ETC_ENTRIES",
    "PROXY_ENV",
    "SANDBOX_WORKSPACE",
    "SandboxRequest",
    "SandboxResult",
    "bwrap_available",
    "bwrap_path",
    "effective_env",
    "host_workspace",
    "kill_sandbox",
    "require_bwrap",
    "run_sandboxed",
    "sandbox_options",
    "start_sandbox",
]

Language = Literal["python", "bash"]
Network = Literal["none", "allowlist"]
Status = Literal["succeeded", "failed", "cancelled"]

DEFAULT_MAX_OUTPUT = 10 * 1024 * 1024
BASH = "/bin/bash"
# Set unless the caller's env overrides them; documented in the module docstring.
BASE_ENV: Mapping[str, str] = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": SANDBOX_WORKSPACE, "LANG": "C.UTF-8"}
_PROXY_URL = f"http://127.0.0.1:{BRIDGE_PORT}"
# Set in allowlist mode (over BASE_ENV, under the caller's variables): the bridge to the host proxy.
PROXY_ENV: Mapping[str, str] = {name: _PROXY_URL for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                                                "https_proxy", "ALL_PROXY", "all_proxy")}  # fmt: skip
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POLL = 0.05  # seconds between checks of the cancel event
_GRACE = 5.0  # seconds to wait for the output pipes to close after the sandbox is gone
_REPORT_LIMIT = 64 * 1024 * 1024


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
    allowlist: tuple[str, ...] = ()
    resolve: Mapping[str, str] = field(default_factory=dict)
    limits: ResourceLimits = DEFAULT_LIMITS

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
        net_policy(self.network, self.allowlist, self.resolve)
        if not isinstance(self.limits, ResourceLimits):
            raise InvalidInputError("must be ResourceLimits", field="limits")

    @property
    def policy(self) -> NetPolicy | None:
        return net_policy(self.network, self.allowlist, self.resolve)

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
    limit_exceeded: LimitName | None = None
    network_decisions: list[dict[str, object]] = field(default_factory=list)
    network_decisions_dropped: int = 0


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


def net_policy(network: str, allowlist: Sequence[str], resolve: Mapping[str, str]) -> NetPolicy | None:
    """The allowlist policy, or None in mode ``none`` (where an allowlist is an error)."""
    if isinstance(allowlist, str):
        raise InvalidInputError("must be a list of host or host:port entries", field="allow")
    if network != "allowlist":
        if allowlist or resolve:
            raise InvalidInputError("--allow and --allow-resolve need --network allowlist", field="allow")
        return None
    return NetPolicy.parse(allowlist, resolve)


def sandbox_cwd(cwd: str) -> str:
    """Resolve ``cwd`` (absolute, or relative to /workspace) lexically; it must stay inside /workspace."""
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
        raise InvalidInputError("must be a path inside /workspace", field="cwd")
    path = posixpath.normpath(posixpath.join(SANDBOX_WORKSPACE, cwd))
    if path != SANDBOX_WORKSPACE and not path.startswith(SANDBOX_WORKSPACE + "/"):
        raise InvalidInputError(f"{cwd!r} is outside /workspace", field="cwd")
    return path


def effective_env(env: Mapping[str, str], network: Network = "none") -> dict[str, str]:
    """The variables set after ``--clearenv``: :data:`BASE_ENV` (and :data:`PROXY_ENV` in
    allowlist mode) overridden by ``env``."""
    return {**BASE_ENV, **(PROXY_ENV if network == "allowlist" else {}), **env}


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


def _command(req: SandboxRequest, control_fd: int, report_fd: int, code_fd: int) -> list[str]:
    """Python: the supervisor runs the code in its child. Bash without network: bash is the command and
    starts the supervisor in the background. Bash with the proxy: the supervisor (and its bridge) first."""
    cpu = math.ceil(req.timeout)
    if req.lang == "bash" and req.network == "none":
        return bash_command(report_fd, code_fd, control_fd, req.limits, cpu)
    mode = ["py", str(report_fd), str(code_fd)]
    if req.lang == "bash":
        mode = ["exec", *bash_command(report_fd, code_fd, None, req.limits, cpu)]
    port = BRIDGE_PORT if req.network == "allowlist" else 0
    return supervisor_command(control_fd, port, req.limits, cpu, (report_fd, code_fd), mode)


def read_available(fd: int, limit: int = 4096) -> bytes:
    """What is in the pipe now (the sandbox is gone; a writer that somehow lingers is not waited for); closes it."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while len(data) < limit and (chunk := os.read(fd, limit)):
            data += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
    return data[:limit]


def start_proxy(req: SandboxRequest) -> NetProxy | None:
    policy = req.policy
    return None if policy is None else NetProxy(policy).start()


def run_sandboxed(req: SandboxRequest, *, cancel: threading.Event | None = None) -> SandboxResult:
    """Run ``req.code`` once in a fresh sandbox and report what happened (see the module docs)."""
    bwrap = require_bwrap()
    source = check_code(req.code)
    workspace = host_workspace(req.workspace)
    proxy = start_proxy(req)
    try:
        return _run(req, bwrap, source, workspace, proxy, cancel)
    finally:
        if proxy is not None:
            proxy.close()


def _run(
    req: SandboxRequest, bwrap: str, source: bytes, workspace: Path, proxy: NetProxy | None,
    cancel: threading.Event | None,
) -> SandboxResult:  # fmt: skip
    env = effective_env(req.env, req.network)
    options = sandbox_options(workspace, req.sandbox_cwd, env, proxy.directory if proxy else None)
    report_r, report_w = os.pipe()
    control_r, control_w = os.pipe()
    code_fd = memfd("sandbox-code", source)
    started_at = datetime.now(UTC)
    deadline = time.monotonic() + req.timeout
    command = _command(req, control_w, report_w, code_fd)
    try:
        proc, out_fd, err_fd, argv = start_sandbox(bwrap, options, command, (report_w, code_fd, control_w))
    except BaseException:
        os.close(report_r)
        os.close(control_r)
        raise
    finally:
        for fd in (report_w, code_fd, control_w):
            os.close(fd)
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
    limit = reported_limit(read_available(control_r))
    status: Status
    exit_code: int | None = None
    error: str | None = None
    if outcome == "timeout":
        status, error, limit = "cancelled", f"timed out after {req.timeout:g} s; the sandbox was killed", "time"
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
    truncated = stdout_truncated or stderr_truncated
    status, limit, error = limit_outcome(
        status, limit, error, truncated, req.limits, req.max_output, req.timeout, exit_code
    )
    decisions, dropped = proxy.take_decisions() if proxy is not None else ([], 0)
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
        limit_exceeded=limit,
        network_decisions=decisions,
        network_decisions_dropped=dropped,
    )
