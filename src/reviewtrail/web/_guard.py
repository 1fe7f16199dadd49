"""What every response of the inspector carries, and what it refuses before any route runs.

- Security headers on every response, pages, static files and errors alike: a Content Security
  Policy without inline script (``script-src 'self'``) or framing (``frame-ancestors 'none'``),
  ``X-Frame-Options: DENY``, ``X-Content-Type-Options: nosniff``, ``Referrer-Policy:
  no-referrer``, and ``Cache-Control: no-store`` (review content stays out of caches).
- Read-only: a method other than GET or HEAD is answered 405 (``Allow: GET, HEAD``) before any
  route runs, so no handler ever sees it; the one exception is POST on a write route, and only
  when the review capability is configured (``write_routes``).
- A ``Host`` header that is not the loopback address the server listens on (or ``localhost``) is
  answered 400, so a page elsewhere cannot reach the inspector through a name it re-points at
  127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request

__all__ = ["READ_METHODS", "SECURITY_HEADERS", "Guard", "bounded_body", "plain_response", "with_headers"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

READ_METHODS = frozenset({"GET", "HEAD"})

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("content-security-policy", CSP),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cache-control", "no-store"),
)
_HEADERS = [(name.encode(), value.encode()) for name, value in SECURITY_HEADERS]


def with_headers(send: Send, headers: list[tuple[bytes, bytes]]) -> Send:
    """``send``, with ``headers`` put on every response start in place of any of the same names."""
    names = {name for name, _ in headers}

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
            message["headers"] = kept + headers
        await send(message)

    return send_with_headers


def host_name(header: str) -> str:
    """The host of a ``Host`` header, without its port (``[::1]:8765`` gives ``[::1]``)."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[: text.find("]") + 1] if "]" in text else text
    return text.split(":", 1)[0]


class Guard:
    """ASGI middleware: the headers, the method gate and the host check above."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str], write_routes: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.hosts = hosts
        self.write_routes = write_routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        send_with_headers = with_headers(send, _HEADERS)

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if host_name(headers.get("host", "")) not in self.hosts:
            await plain_response(
                send_with_headers, 400, "this inspector answers only requests addressed to its loopback address"
            )
            return
        writable = scope["path"] in self.write_routes
        if scope["method"] not in READ_METHODS and not (writable and scope["method"] == "POST"):
            extra = [(b"allow", b"POST" if writable else b"GET, HEAD")]
            await plain_response(send_with_headers, 405, "read-only: this inspector answers GET and HEAD only", extra)
            return
        await self.app(scope, receive, send_with_headers)


async def plain_response(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    """Answer ``status`` with ``text`` as plain text (and the ``extra`` headers), from middleware."""
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})


async def bounded_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None once it passes ``limit`` bytes (declared or read: nothing
    past the limit is read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
