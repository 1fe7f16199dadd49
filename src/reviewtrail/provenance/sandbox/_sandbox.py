"""Run code once under bubblewrap and report exactly what happened (docs/architecture.md,
"Provenance").

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

The sandbox's command is the supervisor of :mod:`._launch`, which sets the
resource limits (:mod:`._limits`), enforces the process and memory counts, and runs the code.

This module handles the processes; what it runs is built without I/O in :mod:`._plan`
(request, environment, command, status rule), from inputs checked by :mod:`._input`.

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
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from reviewtrail.provenance.sandbox._bwrap import (
    host_workspace,
    kill_sandbox,
    memfd,
    require_bwrap,
    sandbox_options,
    start_sandbox,
)
from reviewtrail.provenance.sandbox._cgroup import CGROUP_V1, RunCgroup, run_cgroup
from reviewtrail.provenance.sandbox._drain import Drain
from reviewtrail.provenance.sandbox._input import check_code
from reviewtrail.provenance.sandbox._limits import LimitName, enforcement, reported_limit
from reviewtrail.provenance.sandbox._netproxy import NetProxy
from reviewtrail.provenance.sandbox._plan import (
    Outcome,
    SandboxRequest,
    SandboxResult,
    effective_env,
    parse_report,
    run_status,
    sandbox_command,
)

__all__ = [
    "read_available",
    "run_sandboxed",
]

_POLL = 0.05  # seconds between checks of the cancel event
_WATCH = 0.02  # seconds between reads of the run's control groups (a limit the kernel enforced)
_GRACE = 5.0  # seconds to wait for the output pipes to close after the sandbox is gone
_REPORT_LIMIT = 64 * 1024 * 1024


def _wait(
    proc: subprocess.Popen[bytes],
    deadline: float,
    cancel: threading.Event | None,
    watch: Callable[[], LimitName | None] | None = None,
) -> Outcome:
    """Wait for the sandbox to exit; ``"exited"``, ``"timeout"``, ``"cancelled"`` or ``"limit"``
    (``watch``, asked every :data:`_WATCH` s, named a limit the kernel enforced)."""
    try:
        pidfd: int | None = os.pidfd_open(proc.pid)
    except OSError:  # Linux < 5.3: poll
        pidfd = None
    try:
        while True:
            if cancel is not None and cancel.is_set():
                return "cancelled"
            if watch is not None and watch() is not None:
                return "limit"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            step = remaining if cancel is None else min(remaining, _POLL)
            step = step if watch is None else min(step, _WATCH)
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
    cgroup = run_cgroup(req.limits)
    try:
        proxy = start_proxy(req)
        try:
            return _run(req, bwrap, source, workspace, proxy, cancel, cgroup)
        finally:
            if proxy is not None:
                proxy.close()
    finally:
        if cgroup is not None:
            cgroup.close()


def _run(
    req: SandboxRequest, bwrap: str, source: bytes, workspace: Path, proxy: NetProxy | None,
    cancel: threading.Event | None, cgroup: RunCgroup | None = None,
) -> SandboxResult:  # fmt: skip
    env = effective_env(req.env, req.network)
    options = sandbox_options(workspace, req.sandbox_cwd, env, proxy.directory if proxy else None)
    report_r, report_w = os.pipe()
    control_r, control_w = os.pipe()
    code_fd = memfd("sandbox-code", source)
    started_at = datetime.now(UTC)
    deadline = time.monotonic() + req.timeout
    command = sandbox_command(req, control_w, report_w, code_fd, address_space=cgroup is None)
    try:
        proc, out_fd, err_fd, argv = start_sandbox(
            bwrap, options, command, (report_w, code_fd, control_w), cgroup.wrap if cgroup else None
        )
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
        outcome = _wait(proc, deadline, cancel, cgroup.exceeded if cgroup else None)
    finally:
        if proc.returncode is None:
            kill_sandbox(proc)
    ended_at = datetime.now(UTC)
    for drain in (report, out, err):
        drain.wait(_GRACE)
    stdout, stdout_truncated = out.take()
    stderr, stderr_truncated = err.take()
    seen = parse_report(report.take()[0])
    # The kernel's account first: what the in-sandbox supervisor reports, the code could forge.
    reported = reported_limit(read_available(control_r))
    kernel_limit = cgroup.exceeded() if cgroup is not None else None
    status, exit_code, limit, error = run_status(
        req, outcome, started=seen is not None, returncode=proc.returncode, stderr=stderr,
        truncated=stdout_truncated or stderr_truncated, limit=kernel_limit or reported,
    )  # fmt: skip
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
        enforced_by=enforcement(CGROUP_V1 if cgroup is not None else None),
    )
