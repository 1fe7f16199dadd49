"""A kernel host: the process that keeps one session's persistent kernel between commands.

``reviewtrail run --kernel NAME`` is one process per run, so the kernel lives in a process of
its own, started (detached) by the first such run (:mod:`._client`). The host opens the
store with the same settings, starts a :class:`~._session_kernel.SessionKernel` with the first
run's options, listens on ``<store>/kernels/<session>/NAME.sock`` (:mod:`._files`) and
evaluates one run at a time, each recorded by the library (``kernelMode: persistent`` and the
kernel's ``kernelId``). Requests and answers are in :mod:`._protocol`.

It stops, removing its socket, metadata and lock file, when asked (``reviewtrail kernel stop``
or SIGTERM; a run in progress is cancelled and recorded as such), when it has been idle for its
``--idle-minutes``, when its kernel ends (a timeout, a limit, a cancelled run, ``exit``), when
its session is removed or its store goes away, or when its socket is removed. A host that is
killed leaves its files behind: a stale entry that ``kernel ls`` shows and the next run
replaces, and, if it was evaluating, the run's pending marker, which ``verify --repair``
records as interrupted, as for a killed one-shot run.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewtrail.config import STORE_MARKER
from reviewtrail.errors import (
    BackendUnavailableError,
    ConfigError,
    ConflictError,
    InvalidInputError,
    ReviewtrailError,
)
from reviewtrail.ledger import format_time
from reviewtrail.provenance.kernels._files import (
    KernelFiles,
    kernel_files,
    make_private_folder,
    short_address,
    write_meta,
)
from reviewtrail.provenance.kernels._protocol import (
    MAX_REQUEST,
    KernelSettings,
    check_idle_minutes,
    check_kernel_name,
    decode_message,
    encode_message,
    error_to_json,
    settings_difference,
)
from reviewtrail.provenance.kernels._session_kernel import SessionKernel
from reviewtrail.provenance.records._storage_errors import refuse_read_only
from reviewtrail.provenance.runs._sessions import get_session
from reviewtrail.store import Store

__all__ = ["KernelHostConfig", "serve_kernel_host"]

_TICK = 0.5  # seconds between the host's checks (stop asked, idle, socket, store)
_SESSION_EVERY = 2.0  # seconds between checks that the session is still there
_REQUEST_TIMEOUT = 30.0  # to send a request line once connected
_JOIN = 10.0


@dataclass(frozen=True)
class KernelHostConfig:
    """What the client that starts a host tells it (on its standard input, never on its command
    line: ``--env`` values may be secrets): the store, the kernel, its settings, and the two file
    descriptors it inherits: the kernel's lock (held) and the pipe to report readiness on."""

    store: Path
    session_id: str
    name: str
    settings: KernelSettings
    idle_minutes: float
    actor: str
    lock_fd: int
    ready_fd: int

    def to_json(self) -> dict[str, Any]:
        return {
            "store": str(self.store),
            "sessionId": self.session_id,
            "name": self.name,
            "settings": self.settings.to_json(),
            "idleMinutes": self.idle_minutes,
            "actor": self.actor,
            "lockFd": self.lock_fd,
            "readyFd": self.ready_fd,
        }

    @classmethod
    def from_bytes(cls, data: bytes) -> KernelHostConfig:
        doc = decode_message(data)
        try:
            return cls(
                store=Path(str(doc["store"])),
                session_id=str(doc["sessionId"]),
                name=check_kernel_name(str(doc["name"])),
                settings=KernelSettings.from_json(doc["settings"]),
                idle_minutes=check_idle_minutes(doc["idleMinutes"]),
                actor=str(doc.get("actor", "user")),
                lock_fd=int(doc["lockFd"]),
                ready_fd=int(doc["readyFd"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InvalidInputError):
                raise
            raise InvalidInputError(f"not a kernel host configuration: {exc!r}", field="kernel") from None


def _log(message: str) -> None:
    print(f"{format_time(datetime.now(UTC))} [{os.getpid()}] {message}", file=sys.stderr, flush=True)


def _report(config: KernelHostConfig, doc: dict[str, Any]) -> None:
    """Tell the starting client (once) that the host is ready, or why it is not."""
    with contextlib.suppress(OSError):
        os.write(config.ready_fd, encode_message(doc))
    with contextlib.suppress(OSError):
        os.close(config.ready_fd)


def serve_kernel_host(open_store: Callable[[], Store], config: KernelHostConfig) -> int:
    """Run a kernel host until it stops; its exit status. A failure to start (the store, the
    session, the sandbox, the limits) is reported to the client that started it, with its exit code."""
    _log(f"kernel {config.name} of session {config.session_id}: starting ({config.settings.lang})")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        store = open_store()
    except ReviewtrailError as exc:
        return _failed(config, exc)
    with store:
        try:
            host = _KernelHost(store, config)
        except ReviewtrailError as exc:
            return _failed(config, exc)
        except OSError as exc:
            return _failed(config, BackendUnavailableError(f"the kernel host could not start: {exc}", field="kernel"))
        signal.signal(signal.SIGTERM, lambda *_: host.stop("asked to stop (SIGTERM)"))
        _report(config, {"ok": True, "kernelId": host.kernel.kernel_id, "pid": os.getpid()})
        _log(f"kernel {config.name}: ready, kernel id {host.kernel.kernel_id}")
        return host.serve()


def _failed(config: KernelHostConfig, exc: ReviewtrailError) -> int:
    _log(f"kernel {config.name}: did not start: {exc}")
    _report(config, {"ok": False, "error": error_to_json(exc)})
    return exc.exit_code


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return bool(uid == os.getuid())


def _read_line(conn: socket.socket) -> bytes:
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise InvalidInputError("the request ended before its end of line", field="kernel")
        data += chunk
        if len(data) > MAX_REQUEST:
            raise InvalidInputError(f"a request is at most {MAX_REQUEST} bytes", field="kernel")
    return bytes(data)


class _KernelHost:
    def __init__(self, store: Store, config: KernelHostConfig) -> None:
        self.store = store
        self.config = config
        self.files: KernelFiles = kernel_files(store, config.session_id, config.name)
        if store.root is None or store.root.resolve() != config.store.resolve():
            raise ConfigError(f"the store opened here is not {config.store}", field="store")
        refuse_read_only(store, "a kernel's runs")
        s = config.settings
        self.kernel = SessionKernel(
            store, config.session_id, s.lang, env=s.env, network=s.network,  # type: ignore[arg-type]
            allowlist=s.allowlist, resolve=s.resolve, limits=s.limits, actor=config.actor,
        )  # fmt: skip
        self._stop_reason: str | None = None
        self._stopped = threading.Event()
        self._eval_lock = threading.Lock()
        self._store_lock = threading.Lock()
        # Guards the counter and the current cancel event below; re-entrant: SIGTERM's handler takes it.
        self._state = threading.RLock()
        self._connections = 0
        self._threads: set[threading.Thread] = set()
        self._cancel: threading.Event | None = None
        self._started = format_time(datetime.now(UTC))
        self._last_used = self._started
        self._last_used_at = time.monotonic()
        self._session_checked = time.monotonic()
        try:
            make_private_folder(self.files)
            self.listener, self._socket_id = self._bind()
            self._write_meta()
        except BaseException:
            self.kernel.close()
            raise

    # --- the socket and the metadata ---------------------------------------------------------------
    def _bind(self) -> tuple[socket.socket, tuple[int, int]]:
        with contextlib.suppress(FileNotFoundError):
            self.files.socket.unlink()  # a dead host's: the lock this host holds says so
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        old = os.umask(0o177)
        try:
            with short_address(self.files.socket) as address:
                sock.bind(address)
        except BaseException:
            sock.close()
            raise
        finally:
            os.umask(old)
        os.chmod(self.files.socket, 0o600)
        sock.listen(16)
        sock.settimeout(_TICK)
        info = os.stat(self.files.socket)
        return sock, (info.st_dev, info.st_ino)

    def meta(self) -> dict[str, Any]:
        return {
            "name": self.config.name,
            "sessionId": self.config.session_id,
            "kernelId": self.kernel.kernel_id,
            "lang": self.config.settings.lang,
            "network": self.config.settings.network,
            "pid": os.getpid(),
            "startedAt": self._started,
            "lastUsedAt": self._last_used,
            "idleMinutes": self.config.idle_minutes,
            "log": str(self.files.log),
        }

    def _write_meta(self) -> None:
        write_meta(self.files.meta, self.meta())

    def _socket_is_ours(self) -> bool:
        try:
            info = os.stat(self.files.socket, follow_symlinks=False)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == self._socket_id

    # --- the main loop -----------------------------------------------------------------------------
    def stop(self, reason: str) -> None:
        """Stop after the current request: a run in progress is cancelled."""
        with self._state:
            if self._stop_reason is None:
                self._stop_reason = reason
            if self._cancel is not None:
                self._cancel.set()

    def serve(self) -> int:
        try:
            while self._stop_reason is None:
                self._accept()
                self._check()
        finally:
            self._shutdown()
        return 0

    def _accept(self) -> bool:
        """Take one connection (waiting at most a tick) and answer it in a thread of its own."""
        try:
            conn, _ = self.listener.accept()
        except (TimeoutError, BlockingIOError):
            return False
        with self._state:
            self._connections += 1
        thread = threading.Thread(target=self._handle, args=(conn,), daemon=True)
        self._threads = {t for t in self._threads if t.is_alive()} | {thread}
        thread.start()
        return True

    def _check(self) -> None:
        reason = None
        if not self.kernel.kernel.alive:
            reason = "its kernel ended"
        elif not (self.config.store / STORE_MARKER).exists():
            reason = "its store is gone"
        elif not self._socket_is_ours():
            reason = "its socket was removed"
        with self._state:
            idle = self._connections == 0 and self._cancel is None
        if reason is None and idle and time.monotonic() - self._last_used_at > self.config.idle_minutes * 60:
            reason = f"idle for {self.config.idle_minutes:g} minute(s)"
        if reason is None and idle and time.monotonic() - self._session_checked > _SESSION_EVERY:
            reason = self._session_gone()
        if reason is not None:
            self.stop(reason)

    def _session_gone(self) -> str | None:
        if not self._store_lock.acquire(blocking=False):
            return None
        try:
            self._session_checked = time.monotonic()
            info = get_session(self.store, self.config.session_id)
        except ReviewtrailError as exc:
            return f"its session cannot be read: {exc}"
        finally:
            self._store_lock.release()
        if info.deleted:
            return "its session was removed"
        return None if info.workspace.is_dir() else "its session's workspace is gone"

    def _shutdown(self) -> None:
        _log(f"kernel {self.config.name}: stopping: {self._stop_reason}")
        if self._socket_is_ours():
            with contextlib.suppress(OSError):
                self.files.socket.unlink()
        self.listener.setblocking(False)
        with contextlib.suppress(OSError):
            while self._accept():  # connections already queued are answered (a run: "retry", on a new host)
                pass
        self.listener.close()
        with self._eval_lock:  # the run in progress (cancelled) is recorded and answered first
            self.kernel.close()
            with contextlib.suppress(OSError):
                self.files.meta.unlink()
        self._stopped.set()
        for thread in list(self._threads):
            thread.join(_JOIN)
        with contextlib.suppress(OSError):
            held, now = os.fstat(self.config.lock_fd), os.stat(self.files.lock, follow_symlinks=False)
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                self.files.lock.unlink()  # while still holding it: the next host makes a new one
        _log(f"kernel {self.config.name}: stopped")

    # --- one connection ----------------------------------------------------------------------------
    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                if not _same_user(conn):
                    return
                conn.settimeout(_REQUEST_TIMEOUT)
                try:
                    request = decode_message(_read_line(conn))
                    conn.settimeout(None)
                    answer = self._answer(request, conn)
                except ReviewtrailError as exc:
                    answer = {"ok": False, "error": error_to_json(exc)}
                if answer is not None:
                    conn.sendall(encode_message(answer))
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        except OSError as exc:
            _log(f"a connection failed: {exc}")
        except Exception:  # a bug: logged, and the host carries on
            _log("a request failed:\n" + traceback.format_exc())
        finally:
            with self._state:
                self._connections -= 1

    def _answer(self, request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        op = request.get("op")
        if op == "ping":
            return {"ok": True, "kernel": self.meta()}
        if op == "stop":
            self.stop("asked to stop (reviewtrail kernel stop)")
            self._stopped.wait(_JOIN * 3)
            return {"ok": True, "kernel": self.meta()}
        if op == "run":
            return self._run(request, conn)
        raise InvalidInputError(f"unknown request {op!r}", field="kernel")

    def _run(self, request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        try:
            asked = KernelSettings.from_json(request["settings"])
            code, timeout = request["code"], float(request["timeout"])
            actor, idle = str(request.get("actor") or self.config.actor), request.get("idleMinutes")
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInputError(f"not a run request: {exc!r}", field="kernel") from None
        if not isinstance(code, str):
            raise InvalidInputError("the code is not text", field="code")
        cancel = threading.Event()
        threading.Thread(target=_watch, args=(conn, cancel), daemon=True).start()
        with self._eval_lock:
            if self._stop_reason is not None or not self.kernel.kernel.alive:
                self.stop("its kernel ended")
                return {"ok": False, "retry": True}
            if cancel.is_set():
                return None  # the client left before its turn: nothing ran
            self._refuse_other_settings(asked, idle)
            with self._state:
                self._cancel = cancel
            try:
                with self._store_lock:
                    outcome = self.kernel.evaluate(code, timeout, cancel=cancel, actor=actor)
            finally:
                with self._state:
                    self._cancel = None
                self._last_used, self._last_used_at = format_time(datetime.now(UTC)), time.monotonic()
                with contextlib.suppress(OSError):
                    self._write_meta()
                if not self.kernel.kernel.alive:
                    self.stop("its kernel ended")
            _log(f"run {outcome.envelope.id}: {outcome.run.status}")
            result = outcome.result
            return {
                "ok": True,
                "kernelId": self.kernel.kernel_id,
                "outcome": outcome.to_json(),
                "stdout": base64.b64encode(result.stdout if result else b"").decode("ascii"),
                "stderr": base64.b64encode(result.stderr if result else b"").decode("ascii"),
            }

    def _refuse_other_settings(self, asked: KernelSettings, idle: object) -> None:
        name, session = self.config.name, self.config.session_id
        where = f"kernel {name} of session {session} ({self.kernel.kernel_id})"
        then = (
            f"give the options it was started with, or stop it first ('reviewtrail kernel stop {name} "
            f"--session {session}')"
        )
        differs = settings_difference(self.config.settings, asked)
        if differs is not None:
            option, detail = differs
            raise ConflictError(f"{where}: {detail}; {then}", field=option.lstrip("-").replace("-", "_"))
        if idle is not None and idle != self.config.idle_minutes:
            raise ConflictError(
                f"{where}: it was started with --idle-minutes {self.config.idle_minutes:g}, this run asks for {idle}; "
                f"{then}",
                field="idle_minutes",
            )


def _watch(conn: socket.socket, cancel: threading.Event) -> None:
    """Cancel the run when its client goes away (Ctrl-C) before the answer."""
    try:
        data = conn.recv(1)
    except OSError:
        data = b""
    if not data:
        cancel.set()
