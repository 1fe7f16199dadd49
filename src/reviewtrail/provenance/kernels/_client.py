"""Clients of kernel hosts (:mod:`._host`): run code in a session's persistent kernel,
list the store's kernels, stop them.

:func:`run_in_kernel` connects to the kernel's host, starting one (detached: its own session
and process group, standard input ``/dev/null``, output to ``NAME.log``) when none is alive,
sends the run and returns the answer. The host records the run through the library, so the
record carries ``kernelMode: persistent`` and the kernel's ``kernelId``. The command that
starts a host is the caller's (``host_command``): the host opens the store itself, which only
the layers above this package may do.
"""

from __future__ import annotations

import base64
import contextlib
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from reviewtrail.errors import BackendUnavailableError, InvalidInputError, NotFoundError
from reviewtrail.provenance.kernels._files import (
    KernelFiles,
    connect,
    kernel_entries,
    kernel_files,
    lock_held,
    make_private_folder,
    pid_alive,
    read_meta,
    take_lock,
)
from reviewtrail.provenance.kernels._host import KernelHostConfig
from reviewtrail.provenance.kernels._protocol import (
    DEFAULT_IDLE_MINUTES,
    KernelSettings,
    check_idle_minutes,
    check_kernel_name,
    decode_message,
    encode_message,
    error_from_json,
)
from reviewtrail.provenance.records._storage_errors import refuse_read_only
from reviewtrail.provenance.runs._request import RunRequest
from reviewtrail.provenance.runs._sessions import require_live_session
from reviewtrail.provenance.sandbox._input import check_sandbox_input
from reviewtrail.store import Store

__all__ = ["KernelAnswer", "KernelEntry", "list_kernels", "run_in_kernel", "stop_kernels"]

_START_WAIT = 120.0  # seconds for a host to start (its kernel has 30 s), or for a busy start by another client
_PING_WAIT = 5.0
_STOP_WAIT = 60.0
_POLL = 0.05


@dataclass(frozen=True)
class KernelAnswer:
    """A run evaluated by a kernel host: the record as ``reviewtrail run --json`` prints it,
    what the code wrote, and whether this run started the kernel."""

    record: dict[str, Any]
    stdout: bytes
    stderr: bytes
    kernel_id: str
    started: bool

    @property
    def status(self) -> str:
        return str(self.record.get("status"))


@dataclass(frozen=True)
class KernelEntry:
    """A kernel of the store as ``kernel ls`` shows it. ``state``: ``alive`` (its host answers),
    ``stale`` (its host is gone or does not answer; ``detail`` says which)."""

    name: str
    session_id: str
    kernel_id: str | None
    lang: str | None
    pid: int | None
    state: str
    started_at: str | None
    last_used_at: str | None
    idle_minutes: float | None
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sessionId": self.session_id,
            "kernelId": self.kernel_id,
            "lang": self.lang,
            "pid": self.pid,
            "state": self.state,
            "startedAt": self.started_at,
            "lastUsedAt": self.last_used_at,
            "idleMinutes": self.idle_minutes,
            "detail": self.detail,
        }


# --- talking to a host ---------------------------------------------------------------------------
def _exchange(
    sock: socket.socket, request: dict[str, Any], cancel: threading.Event | None = None, timeout: float | None = None
) -> dict[str, Any] | None:
    """Send one request, read its answer (None: the host closed the connection without one).
    ``cancel`` set: the host is told (our end of the connection is shut), the answer still read."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with sock:
        sock.settimeout(timeout)
        sock.sendall(encode_message(request))
        data = bytearray()
        shut = False
        while True:
            if cancel is not None and cancel.is_set() and not shut:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_WR)
                shut = True
            waits = [0.1] if cancel is not None else []
            if deadline is not None:
                waits.append(max(0.0, deadline - time.monotonic()))
            ready, _, _ = select.select([sock], [], [], min(waits) if waits else None)
            if not ready:
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                continue
            try:
                chunk = sock.recv(1 << 16)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                break
            data += chunk
    return decode_message(bytes(data)) if data else None


def _ping(files: KernelFiles) -> dict[str, Any] | None:
    """The host's metadata as it answers a ping, or None when it does not answer."""
    sock = connect(files, timeout=_PING_WAIT)
    if sock is None:
        return None
    try:
        answer = _exchange(sock, {"op": "ping"}, timeout=_PING_WAIT)
    except (OSError, InvalidInputError):
        return None
    kernel = answer.get("kernel") if answer is not None and answer.get("ok") else None
    return kernel if isinstance(kernel, dict) else None


# --- starting a host -----------------------------------------------------------------------------
def _start_host(files: KernelFiles, config: KernelHostConfig, host_command: Sequence[str]) -> dict[str, Any] | None:
    """Start the kernel's host and wait until it is ready; its ready message, or None when another
    process holds the kernel's lock (a live host, or another client starting one)."""
    make_private_folder(files)
    lock = take_lock(files.lock)
    if lock is None:
        return None
    try:
        for stale in (files.socket, files.meta):  # no host holds the lock: whatever is left is a dead one's
            stale.unlink(missing_ok=True)
        ready_r, ready_w = os.pipe()
        log = os.open(files.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            proc = subprocess.Popen(
                list(host_command),
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=log,
                pass_fds=(lock, ready_w),
                start_new_session=True,
            )
        except BaseException:
            os.close(ready_r)
            raise
        finally:
            os.close(log)
            os.close(ready_w)
        with os.fdopen(ready_r, "rb") as ready:
            assert proc.stdin is not None
            with contextlib.suppress(BrokenPipeError), proc.stdin:
                proc.stdin.write(encode_message(replace(config, lock_fd=lock, ready_fd=ready_w).to_json()))
            return _await_ready(ready, proc, files)
    finally:
        os.close(lock)


def _await_ready(ready: Any, proc: subprocess.Popen[bytes], files: KernelFiles) -> dict[str, Any]:
    fd = ready.fileno()
    data = bytearray()
    deadline = time.monotonic() + _START_WAIT
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise BackendUnavailableError(
                f"kernel {files.name}: its host did not start within {_START_WAIT:g} s (killed); see {files.log}",
                field="kernel",
            )
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        data += chunk
    doc = decode_message(bytes(data)) if data else None
    if doc is None or not doc.get("ok"):
        status = proc.wait()
        if doc is not None and isinstance(doc.get("error"), dict):
            raise error_from_json(doc["error"])
        raise BackendUnavailableError(
            f"kernel {files.name}: its host exited while starting (status {status}); see {files.log}", field="kernel"
        )
    return doc


# --- the public API ------------------------------------------------------------------------------
def run_in_kernel(
    store: Store,
    request: RunRequest,
    name: str,
    *,
    host_command: Sequence[str],
    idle_minutes: float | None = None,
    actor: str = "user",
    cancel: threading.Event | None = None,
    on_start: Callable[[str], None] | None = None,
) -> KernelAnswer:
    """Run ``request`` in kernel ``name`` of its session, starting the kernel's host (with
    ``host_command``, the request's settings and ``idle_minutes``, default 30) when none is alive.

    Refused before anything starts: a request without a session or with a ``cwd`` (exit 2), a
    bad name or input (exit 2), a read-only store (exit 5), a missing (3) or removed (6) session.
    A kernel started with other options refuses the run naming the first that differs (exit 6).
    ``cancel`` cancels the run (recorded as cancelled; the kernel ends). ``on_start`` is told
    when a new kernel was started."""
    check_kernel_name(name)
    if request.session_id is None:
        raise InvalidInputError(
            "--kernel needs --session: a kernel belongs to a session (make one with 'reviewtrail session new')",
            field="session",
        )
    if request.cwd != "/workspace":
        raise InvalidInputError("a kernel keeps its own working directory (cd inside it); --cwd is for one-shot runs",
                                field="cwd")  # fmt: skip
    if idle_minutes is not None:
        check_idle_minutes(idle_minutes)
    check_sandbox_input(lang=request.lang, code=request.code, env=request.env, timeout=request.timeout,
                        network=request.network, allowlist=request.allowlist, resolve=request.resolve)  # fmt: skip
    refuse_read_only(store, "a run")
    require_live_session(store, request.session_id)
    files = kernel_files(store, request.session_id, name)
    settings = KernelSettings(request.lang, request.env, request.network, request.allowlist, request.resolve,
                              request.limits)  # fmt: skip
    assert store.root is not None  # kernel_files checked it
    config = KernelHostConfig(store.root, request.session_id, name, settings,
                              idle_minutes or DEFAULT_IDLE_MINUTES, actor, -1, -1)  # fmt: skip
    message = {"op": "run", "code": request.code, "timeout": request.timeout, "actor": actor,
               "settings": settings.to_json(), "idleMinutes": idle_minutes}  # fmt: skip
    return _run(files, config, message, host_command, cancel, on_start)


def _run(
    files: KernelFiles,
    config: KernelHostConfig,
    message: dict[str, Any],
    host_command: Sequence[str],
    cancel: threading.Event | None,
    on_start: Callable[[str], None] | None,
) -> KernelAnswer:
    deadline = time.monotonic() + _START_WAIT
    started = False
    while True:
        sock = connect(files)
        if sock is None:
            ready = _start_host(files, config, host_command)
            if ready is not None:
                started = True
                if on_start is not None:
                    on_start(
                        f"started kernel {files.name} ({ready['kernelId']}, {config.settings.lang}) of session "
                        f"{files.session_id}, host pid {ready['pid']}; 'reviewtrail kernel stop {files.name} "
                        f"--session {files.session_id}' stops it"
                    )
                sock = connect(files)
        if sock is not None:
            answer = _exchange(sock, message, cancel)
            if answer is None:
                if cancel is not None and cancel.is_set():
                    raise KeyboardInterrupt  # cancelled before the kernel took it: nothing ran
                raise BackendUnavailableError(
                    f"kernel {files.name}: its host ended without answering (killed?); a run it had started is "
                    "recorded by 'reviewtrail verify --repair'",
                    field="kernel",
                )
            if answer.get("ok"):
                return KernelAnswer(
                    record=answer["outcome"],
                    stdout=base64.b64decode(answer.get("stdout", "")),
                    stderr=base64.b64decode(answer.get("stderr", "")),
                    kernel_id=str(answer["kernelId"]),
                    started=started,
                )
            if not answer.get("retry"):
                raise error_from_json(answer.get("error") or {})
        if time.monotonic() > deadline:
            raise BackendUnavailableError(
                f"kernel {files.name}: no host answered or started within {_START_WAIT:g} s; see {files.log}",
                field="kernel",
            )
        time.sleep(_POLL)


def _entry(files: KernelFiles, meta: dict[str, Any] | None, state: str, detail: str | None) -> KernelEntry:
    m = meta or {}

    def text(key: str) -> str | None:
        value = m.get(key)
        return value if isinstance(value, str) else None

    pid, idle = m.get("pid"), m.get("idleMinutes")
    return KernelEntry(
        name=files.name,
        session_id=files.session_id,
        kernel_id=text("kernelId"),
        lang=text("lang"),
        pid=pid if isinstance(pid, int) else None,
        state=state,
        started_at=text("startedAt"),
        last_used_at=text("lastUsedAt"),
        idle_minutes=float(idle) if isinstance(idle, (int, float)) else None,
        detail=detail,
    )


def _look(files: KernelFiles) -> KernelEntry:
    meta = read_meta(files.meta)
    pid = (meta or {}).get("pid")
    if not lock_held(files.lock) or not isinstance(pid, int) or not pid_alive(pid):
        return _entry(files, meta, "stale", f"its host (pid {pid}) is gone")
    answered = _ping(files)
    if answered is None or answered.get("kernelId") != (meta or {}).get("kernelId"):
        return _entry(files, meta, "stale", "its host does not answer on its socket")
    return _entry(files, answered, "alive", None)


def list_kernels(store: Store, session_id: str | None = None) -> list[KernelEntry]:
    """The store's kernels (of ``session_id`` when given), each alive or stale."""
    return [_look(files) for files in kernel_entries(store, session_id)]


def stop_kernels(
    store: Store, name: str | None = None, *, session_id: str | None = None, every: bool = False
) -> list[KernelEntry]:
    """Stop kernel ``name`` (of ``session_id``; without it, the one kernel of that name), or
    ``every`` kernel (of ``session_id`` when given). A live host is asked to stop and waited for;
    a stale entry is removed. What each was before, in order."""
    if (name is None) == (not every):
        raise InvalidInputError("give a kernel NAME or --all (not both)", field="kernel")
    entries = kernel_entries(store, session_id)
    if name is not None:
        check_kernel_name(name)
        entries = [files for files in entries if files.name == name]
        where = f" in session {session_id}" if session_id else ""
        if not entries:
            raise NotFoundError(f"no kernel {name}{where} (see 'reviewtrail kernel ls')", field="kernel")
        sessions = sorted({files.session_id for files in entries})
        if len(sessions) > 1:
            raise InvalidInputError(
                f"kernel {name} is in sessions {', '.join(sessions)}: give --session", field="session"
            )
    return [_stop(files) for files in entries]


def _stop(files: KernelFiles) -> KernelEntry:
    before = _look(files)
    lock = take_lock(files.lock)
    if lock is not None:  # no host: remove what a dead one left
        try:
            for path in (files.socket, files.meta, files.lock):
                path.unlink(missing_ok=True)
        finally:
            os.close(lock)
        return before
    sock = connect(files, timeout=_STOP_WAIT)
    answer = _exchange(sock, {"op": "stop"}, timeout=_STOP_WAIT) if sock is not None else None
    if answer is None or not answer.get("ok"):
        raise BackendUnavailableError(
            f"kernel {files.name} of session {files.session_id}: its host (pid {before.pid}) holds the kernel's lock "
            f"but does not answer a stop; see {files.log}, or end the process",
            field="kernel",
        )
    deadline = time.monotonic() + _STOP_WAIT
    while lock_held(files.lock) or (before.pid is not None and pid_alive(before.pid)):
        if time.monotonic() > deadline:
            raise BackendUnavailableError(
                f"kernel {files.name} of session {files.session_id}: its host (pid {before.pid}) agreed to stop but "
                f"is still running after {_STOP_WAIT:g} s; see {files.log}",
                field="kernel",
            )
        time.sleep(_POLL)
    return before
