"""Persistent kernels: one long-lived python or bash worker inside ONE bubblewrap sandbox.

The sandbox is the one :mod:`reviewtrail.provenance.sandbox._sandbox` builds (same mounts, namespaces, ``--clearenv`` +
:func:`effective_env`), with the workspace's root as the starting directory. The worker's
stdin is ``/dev/null``; code and results travel over two extra pipes:

* python: the host sends ``[4-byte big-endian length][JSON {"code", "sentinel"}]``; the
  worker runs the code with ``exec`` in one ``__main__`` namespace kept across evaluations
  and answers with a frame ``{"exit_code", "cwd", "env"}`` (``os.getcwd()`` and
  ``dict(os.environ)`` observed at the end of the evaluation). An exception is exit code 1
  with its traceback on stderr; ``SystemExit`` gives its code; the kernel carries on.
* bash: the request pipe is bash's script, so every evaluation runs at the top level of
  one shell (``cd``, variables, functions persist). The host writes ``eval '<code>'``
  followed by a call that reports ``$?``, ``pwd -P`` and the exported variables as
  NUL-separated records ending with an empty record. ``exit`` (or ``exec``) ends the kernel.

Before it answers, the worker writes a per-evaluation random sentinel to its original
stdout and stderr; the host attributes everything before it to that evaluation (keeping at
most ``max_output`` bytes per stream). Output that background processes write between
evaluations is dropped. A timeout or cancellation kills the whole sandbox: the result is
``"cancelled"`` and any later :meth:`evaluate` raises :class:`BackendUnavailableError`.

The worker runs under the same supervisor as one-shot runs (:mod:`reviewtrail.provenance.sandbox._launch`):
memory, process and file-size limits hold for the kernel's whole life (a hit kills the
kernel, and the evaluation is ``"failed"`` with the limit named); CPU time is bounded by each
evaluation's timeout only. In allowlist mode one proxy serves the kernel for its life; each
evaluation records the decisions made while it ran.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

from reviewtrail.errors import BackendUnavailableError
from reviewtrail.provenance.sandbox._bwrap import (
    host_workspace,
    kill_sandbox,
    require_bwrap,
    sandbox_options,
    start_sandbox,
)
from reviewtrail.provenance.sandbox._cgroup import CGROUP_V1, run_cgroup
from reviewtrail.provenance.sandbox._drain import Drain
from reviewtrail.provenance.sandbox._input import SANDBOX_WORKSPACE, Network, check_sandbox_input
from reviewtrail.provenance.sandbox._launch import (
    BASH,
    BASH_BOOTSTRAP,
    BRIDGE_PORT,
    PY_WORKER,
    PYTHON,
    supervisor_command,
)
from reviewtrail.provenance.sandbox._limits import (
    DEFAULT_LIMITS,
    LimitName,
    ResourceLimits,
    enforcement,
    limit_outcome,
    reported_limit,
)
from reviewtrail.provenance.sandbox._netproxy import NetProxy
from reviewtrail.provenance.sandbox._plan import DEFAULT_MAX_OUTPUT, SandboxResult, Status, effective_env

__all__ = ["PythonKernel", "ShellKernel"]

_POLL = 0.05
_WATCH = 0.02  # seconds between reads of the kernel's control groups while it runs code
_GRACE = 5.0
_START_TIMEOUT = 30.0


class _Kernel:
    """The plumbing both kernels share: the sandbox, the output drains, the reply reader."""

    lang: ClassVar[str]

    def __init__(
        self,
        workspace: Path,
        env: Mapping[str, str] | None = None,
        network: Network = "none",
        *,
        max_output: int = DEFAULT_MAX_OUTPUT,
        allowlist: Sequence[str] = (),
        resolve: Mapping[str, str] | None = None,
        limits: ResourceLimits = DEFAULT_LIMITS,
    ) -> None:
        policy = check_sandbox_input(
            env=env or {}, network=network, max_output=max_output, allowlist=tuple(allowlist), resolve=resolve
        ).policy
        bwrap = require_bwrap()
        self.kernel_id = str(uuid.uuid4())
        self.workspace = workspace
        self.network: Network = network
        self.max_output = max_output
        self._dead: str | None = None
        self._lock = threading.Lock()
        self._replies: queue.Queue[bytes | None] = queue.Queue()
        self.limits = limits
        root = host_workspace(workspace)
        self._cgroup = run_cgroup(limits)
        try:
            self._proxy = None if policy is None else NetProxy(policy).start()
        except BaseException:
            self._close_cgroup()
            raise
        proxy_dir = self._proxy.directory if self._proxy is not None else None
        options = sandbox_options(root, SANDBOX_WORKSPACE, effective_env(env or {}, network), proxy_dir)
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        control_r, control_w = os.pipe()
        port = BRIDGE_PORT if policy is not None else 0
        command = supervisor_command(
            control_w,
            port,
            limits,
            0,
            (req_r, resp_w),
            ["exec", *self._command(req_r, resp_w)],
            address_space=self._cgroup is None,
        )
        try:
            self._proc, out_fd, err_fd, self.argv = start_sandbox(
                bwrap, options, command, (req_r, resp_w, control_w), self._cgroup.wrap if self._cgroup else None
            )
        except BaseException:
            for fd in (req_w, resp_r, control_r):
                os.close(fd)
            if self._proxy is not None:
                self._proxy.close()
            self._close_cgroup()
            raise
        finally:
            for fd in (req_r, resp_w, control_w):
                os.close(fd)
        self._requests = req_w
        self._control = Drain(control_r, f"kernel-{self.kernel_id}-control", 4096)
        # Captures open from the start, so what the sandbox says while starting is kept for the check below.
        self._out = Drain(out_fd, f"kernel-{self.kernel_id}-stdout", max_output)
        self._err = Drain(err_fd, f"kernel-{self.kernel_id}-stderr", max_output)
        threading.Thread(target=self._read_replies, args=(resp_r,), daemon=True).start()
        self._bootstrap()
        first = self._evaluate("", _START_TIMEOUT, None, keep=True)
        if first.status != "succeeded":
            self.close()
            detail = (first.error or "") + " " + first.stderr.decode("utf-8", "replace").strip()
            raise BackendUnavailableError(f"the {self.lang} kernel did not start: {detail.strip()}", field="kernel")

    # --- per-language hooks ----------------------------------------------------------------------
    def _command(self, requests: int, replies: int) -> list[str]:
        raise NotImplementedError

    def _bootstrap(self) -> None:
        """Anything to send before the first evaluation."""

    def _request(self, code: str, sentinel: str) -> bytes:
        raise NotImplementedError

    def _split(self, buf: bytearray) -> bytes | None:
        """Remove and return one complete reply frame from ``buf``, or None."""
        raise NotImplementedError

    def _parse(self, frame: bytes) -> tuple[int, str, dict[str, str]]:
        raise NotImplementedError

    def _frame_limit(self, frame: bytes) -> LimitName | None:
        """A limit the worker itself saw (python: an uncaught MemoryError)."""
        return None

    # --- plumbing ------------------------------------------------------------------------------
    def _read_replies(self, fd: int) -> None:
        buf = bytearray()
        try:
            while chunk := os.read(fd, 1 << 16):
                buf += chunk
                while (frame := self._split(buf)) is not None:
                    self._replies.put(frame)
        finally:
            os.close(fd)
            self._replies.put(None)

    def _send(self, data: bytes) -> bool:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._requests, view) :]
        except BrokenPipeError:
            return False
        return True

    def _await_reply(self, deadline: float, cancel: threading.Event | None) -> tuple[str, bytes | None]:
        while True:
            if cancel is not None and cancel.is_set():
                return "cancelled", None
            if self._cgroup is not None and self._cgroup.exceeded() is not None:
                return "limit", None  # the kernel holds the worker at its limit: killed below
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout", None
            step = remaining if cancel is None else min(remaining, _POLL)
            try:
                frame = self._replies.get(timeout=step if self._cgroup is None else min(step, _WATCH))
            except queue.Empty:
                continue
            return ("replied", frame) if frame is not None else ("exited", None)

    def _kill(self, reason: str) -> None:
        self._dead = reason
        kill_sandbox(self._proc)
        os.close(self._requests)

    def _reap(self) -> None:
        """The worker stopped answering (it exited, or exec'd something else): make sure it is gone."""
        try:
            self._proc.wait(_GRACE)
        except subprocess.TimeoutExpired:
            kill_sandbox(self._proc)
        self._dead = f"exited with status {self._proc.returncode}"
        os.close(self._requests)

    # --- public API ------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self._dead is None

    def evaluate(self, code: str, timeout: float, *, cancel: threading.Event | None = None) -> SandboxResult:
        """Run ``code`` in the kernel; state persists. A timeout or cancellation kills the kernel."""
        check_sandbox_input(code=code, timeout=timeout)
        return self._evaluate(code, timeout, cancel)

    def _evaluate(
        self, code: str, timeout: float, cancel: threading.Event | None, *, keep: bool = False
    ) -> SandboxResult:
        with self._lock:
            if self._dead is not None:
                raise BackendUnavailableError(f"kernel {self.kernel_id} is dead ({self._dead})", field="kernel")
            sentinel = f"<<reviewtrail-eval-{uuid.uuid4().hex}>>"
            self._out.begin(self.max_output, sentinel.encode(), keep=keep)
            self._err.begin(self.max_output, sentinel.encode(), keep=keep)
            started_at = datetime.now(UTC)
            deadline = time.monotonic() + timeout
            if self._send(self._request(code, sentinel)):
                outcome, frame = self._await_reply(deadline, cancel)
            else:
                outcome, frame = "exited", None
            if outcome in ("timeout", "cancelled"):
                self._kill("timed out" if outcome == "timeout" else "cancelled")
            elif outcome == "limit" and self._cgroup is not None:
                self._kill(f"hit its {self._cgroup.exceeded()} limit")
            elif outcome == "exited":
                self._reap()
            ended_at = datetime.now(UTC)
            self._out.wait(_GRACE)
            self._err.wait(_GRACE)
            stdout, stdout_truncated = self._out.take()
            stderr, stderr_truncated = self._err.take()
            status: Status = "cancelled"
            exit_code: int | None = None
            cwd, env, error = "unavailable", None, None
            limit: LimitName | None = "time" if outcome == "timeout" else None
            if outcome == "exited":
                self._control.wait(_GRACE)
                limit = reported_limit(self._control.take()[0])
            if frame is not None:
                exit_code, cwd, env = self._parse(frame)
                limit = self._frame_limit(frame)
                status = "succeeded" if exit_code == 0 else "failed"
            elif outcome == "exited":
                status, exit_code, error = "failed", self._proc.returncode, f"the kernel {self._dead}"
            elif outcome == "limit":
                status, exit_code = "failed", 128 + 9
            elif outcome == "timeout":
                error = f"timed out after {timeout:g} s; the kernel was killed"
            else:
                error = "cancelled; the kernel was killed"
            if self._cgroup is not None:
                # The kernel's account first: a worker's own report, the code could forge.
                enforced = self._cgroup.exceeded()
                self._cgroup.settle()
                if enforced is not None:
                    limit = enforced
                    if self._dead is None:  # a hit kills the kernel, as the supervisor's does
                        self._kill(f"hit its {enforced} limit")
                    status = "failed" if status == "succeeded" else status
            truncated = stdout_truncated or stderr_truncated
            status, limit, error = limit_outcome(
                status, limit, error, truncated, self.limits, self.max_output, timeout, exit_code
            )
            decisions, dropped = self._proxy.take_decisions() if self._proxy is not None else ([], 0)
            return SandboxResult(
                status=status,
                exit_code=exit_code,
                stdout=stdout,
                stderr=stderr,
                stdout_truncated=stdout_truncated,
                stderr_truncated=stderr_truncated,
                started_at=started_at,
                ended_at=ended_at,
                working_directory=cwd,
                env=env,
                timed_out=outcome == "timeout",
                error=error,
                argv=list(self.argv),
                limit_exceeded=limit,
                network_decisions=decisions,
                network_decisions_dropped=dropped,
                enforced_by=enforcement(CGROUP_V1 if self._cgroup is not None else None),
            )

    def close(self) -> None:
        """End the worker (EOF on its request pipe, then SIGKILL after a grace period)."""
        try:
            self._close()
        finally:
            if self._proxy is not None:
                self._proxy.close()
            self._close_cgroup()

    def _close_cgroup(self) -> None:
        if self._cgroup is not None:
            self._cgroup.close()
            self._cgroup = None

    def _close(self) -> None:
        with self._lock:
            if self._dead is not None:
                if self._proc.returncode is None:
                    kill_sandbox(self._proc)
                return
            self._dead = "closed"
            os.close(self._requests)
            try:
                self._proc.wait(_GRACE)
            except subprocess.TimeoutExpired:
                kill_sandbox(self._proc)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class PythonKernel(_Kernel):
    """A persistent ``/usr/bin/python3`` whose globals survive between evaluations."""

    lang = "python"

    def _command(self, requests: int, replies: int) -> list[str]:
        return [PYTHON, "-c", PY_WORKER, str(requests), str(replies)]

    def _request(self, code: str, sentinel: str) -> bytes:
        body = json.dumps({"code": code, "sentinel": sentinel}).encode()
        return len(body).to_bytes(4, "big") + body

    def _split(self, buf: bytearray) -> bytes | None:
        if len(buf) < 4 or len(buf) < 4 + (size := int.from_bytes(buf[:4], "big")):
            return None
        frame = bytes(buf[4 : 4 + size])
        del buf[: 4 + size]
        return frame

    def _parse(self, frame: bytes) -> tuple[int, str, dict[str, str]]:
        doc = json.loads(frame)
        return int(doc["exit_code"]), str(doc["cwd"]), {str(k): str(v) for k, v in doc["env"].items()}

    def _frame_limit(self, frame: bytes) -> LimitName | None:
        return "memory" if json.loads(frame).get("limit") == "memory" else None


class ShellKernel(_Kernel):
    """A persistent ``/bin/bash``: working directory, variables and functions survive."""

    lang = "bash"

    def _command(self, requests: int, replies: int) -> list[str]:
        self._fds = (requests, replies)
        return [BASH, "--noprofile", "--norc", f"/dev/fd/{requests}"]

    def _bootstrap(self) -> None:
        requests, replies = self._fds
        self._send(BASH_BOOTSTRAP.format(req=requests, resp=replies).encode())

    def _request(self, code: str, sentinel: str) -> bytes:
        quoted = "'" + code.replace("'", "'\\''") + "'"
        return f"eval {quoted}\n__rt_end $? '{sentinel}'\n".encode("utf-8", "surrogateescape")

    def _split(self, buf: bytearray) -> bytes | None:
        end = buf.find(b"\0\0")
        if end < 0:
            return None
        frame = bytes(buf[:end])
        del buf[: end + 2]
        return frame

    def _parse(self, frame: bytes) -> tuple[int, str, dict[str, str]]:
        status, cwd, *entries = frame.decode("utf-8", "surrogateescape").split("\0")
        return int(status), cwd, dict(entry.split("=", 1) for entry in entries if "=" in entry)
