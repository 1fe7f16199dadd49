"""The limits of :mod:`._limits` on a running uvicorn server, the inspector's and the proxy's alike.

- :func:`limited_protocol`: uvicorn's httptools protocol with a header timeout (from the
  connection's start, or a request's first byte; uvicorn has none), a body timeout, a cap on an
  unfinished head, and the connection caps checked as a connection is made: one past a cap is
  answered 503 with ``Retry-After`` and closed. The idle keep-alive timeout is uvicorn's own
  (``timeout_keep_alive``).
- :class:`QuietDisconnects`: the ASGI application, with a client that goes away before its
  request is read logged as one line, never a traceback.
- :func:`budget_logs`: uvicorn's log lines, at most so many per client (:class:`._limits.LogBudget`).
- :func:`run_limited`: uvicorn serving an application with all three.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import resource
import socket
import time
from collections.abc import Mapping
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.utils import get_remote_addr

from reviewtrail.web._guard import ASGIApp, Receive, Scope, Send
from reviewtrail.web._limits import ConnectionBook, Limits, LogBudget, client_key, limits_from_env

__all__ = ["QuietDisconnects", "budget_logs", "limited_protocol", "run_limited", "server_limits"]

LOGGER = "uvicorn.error"
_task_client: contextvars.ContextVar[str | None] = contextvars.ContextVar("reviewtrail_web_client", default=None)
_callback_client: list[str | None] = [None]  # the client whose connection callback is running


def server_limits(env: Mapping[str, str]) -> Limits:
    """The limits ``env`` sets, under this process's descriptor limit (RLIMIT_NOFILE)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return limits_from_env(env, -1 if soft == resource.RLIM_INFINITY else soft)


def _answer(status: bytes, text: bytes, extra: bytes = b"") -> bytes:
    body = text + b"\n"
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\nconnection: close\r\n"
        + extra
        + b"\r\n"
        + body
    )


_TIMED_OUT = _answer(b"408 Request Timeout", b"the request was not received in time")
_TOO_LARGE = _answer(b"431 Request Header Fields Too Large", b"the request head is too large")


def limited_protocol(limits: Limits) -> type[asyncio.Protocol]:
    """A uvicorn protocol class (``uvicorn.Config(http=...)``) holding ``limits``, with its own
    book of the connections held (one per server process)."""
    book = ConnectionBook(limits.max_connections, limits.max_per_client)
    lingering: set[asyncio.BaseTransport] = set()
    busy = _answer(
        b"503 Service Unavailable",
        b"too many connections: try again later",
        b"retry-after: " + str(limits.retry_after).encode() + b"\r\n",
    )

    class LimitedProtocol(HttpToolsProtocol):
        _client_key = "-"
        _admitted = False
        _timer: asyncio.TimerHandle | None = None
        _awaiting_head = True
        _head_bytes = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            remote = get_remote_addr(transport)
            self._client_key = client_key(remote[0] if remote else None)
            self._admitted = book.admit(self._client_key)
            if not self._admitted:
                self.transport = transport
                self._refuse(transport)
                return
            super().connection_made(transport)
            self._arm(limits.header_timeout, self._head_timed_out)

        def _refuse(self, transport: asyncio.Transport) -> None:
            """503 with Retry-After; the connection kept a moment (its request read and dropped)
            so the client reads the answer, unless too many refused ones are kept already."""
            transport.write(busy)
            if len(lingering) >= limits.lingering or not transport.can_write_eof():
                transport.close()
                return
            lingering.add(transport)
            transport.write_eof()
            self.loop.call_later(1.0, transport.close)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if not self._admitted:
                lingering.discard(self.transport)
                return
            book.release(self._client_key)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if not self._admitted:
                return
            if self._awaiting_head:
                self._head_bytes += len(data)
                if self._timer is None:
                    self._arm(limits.header_timeout, self._head_timed_out)
            _callback_client[0] = self._client_key
            try:
                super().data_received(data)
            finally:
                _callback_client[0] = None
            if self._awaiting_head and self._head_bytes > limits.max_header_bytes and not self.transport.is_closing():
                self._disarm()
                self.transport.write(_TOO_LARGE)
                self.transport.close()

        def on_headers_complete(self) -> None:
            self._awaiting_head = False
            self._arm(limits.body_timeout, self._body_timed_out)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()
            self._awaiting_head = True
            self._head_bytes = 0
            super().on_message_complete()

        def _arm(self, seconds: float, then: Any) -> None:
            self._disarm()
            self._timer = self.loop.call_later(seconds, then)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _head_timed_out(self) -> None:
            self._timer = None
            if self.transport.is_closing():
                return
            if self.cycle is not None and not self.cycle.response_complete:  # a pipelined head waits
                self._arm(limits.header_timeout, self._head_timed_out)  # while the server answers
                return
            if self._head_bytes:  # a request begun and not finished: say why it ends
                self.transport.write(_TIMED_OUT)
            self.transport.close()

        def _body_timed_out(self) -> None:
            self._timer = None
            if self.transport.is_closing():
                return
            cycle = self.cycle
            if cycle is not None and not cycle.response_started:
                self.transport.write(_TIMED_OUT)
            if cycle is not None:  # the application is told the client is gone, and writes no more
                cycle.disconnected = True
                cycle.message_event.set()
            self.transport.close()

    return LimitedProtocol


def run_limited(app: ASGIApp, limits: Limits, sock: socket.socket) -> None:
    """Serve ``app`` with uvicorn on the listening ``sock`` under ``limits``, until SIGINT or
    SIGTERM: the limited protocol, clients that go away logged as one line, and uvicorn's log
    lines bounded per client. The inspector and the proxy both run this way."""
    import uvicorn

    config = uvicorn.Config(
        QuietDisconnects(app),
        http=limited_protocol(limits),
        timeout_keep_alive=limits.idle_timeout,
        ws="none",
        log_level="warning",
        access_log=False,
        server_header=False,
        lifespan="off",
        workers=1,
    )
    budget_logs()  # after uvicorn.Config, which sets up uvicorn's logging
    uvicorn.Server(config).run(sockets=[sock])


class QuietDisconnects:
    """ASGI middleware: a client that goes away before its request is read ends the request with
    one log line (:func:`budget_logs` bounds how many), not a traceback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import ClientDisconnect

        client = scope.get("client")
        _task_client.set(client_key(client[0] if client else None))
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            path = scope.get("path", "")
            logging.getLogger(LOGGER).warning(
                "%s %s: the client went away before its request was read", scope.get("method", "-"), path
            )


class _Budget(logging.Filter):
    """Drops a client's log lines past its :class:`LogBudget`, and says how many were dropped."""

    def __init__(self, budget: LogBudget) -> None:
        super().__init__()
        self.budget = budget

    def filter(self, record: logging.LogRecord) -> bool:
        client = _callback_client[0] or _task_client.get() or "-"
        allowed, dropped = self.budget.allow(client, time.monotonic())
        if not allowed:
            return False
        note = f" [client {client}]"
        if dropped:
            note += f" ({dropped} earlier lines from this client suppressed)"
        record.msg = f"{record.msg}{note.replace('%', '%%') if record.args else note}"
        return True


def budget_logs(budget: LogBudget | None = None) -> None:
    """Bound the lines uvicorn logs for any one client (call once uvicorn has set up its logging)."""
    logger = logging.getLogger(LOGGER)
    if not any(isinstance(f, _Budget) for f in logger.filters):
        logger.addFilter(_Budget(budget or LogBudget()))
