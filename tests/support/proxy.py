"""The public proxy in tests: ``reviewtrail proxy`` started as a real process, a recording
stand-in for the inspector behind it, and a login through a real OIDC provider with httpx.

:class:`Recorder` is a small HTTP server on 127.0.0.1 that keeps every request it receives
(method, path with query, headers, body). Without a target it answers itself, as an inspector
would (with the inspector's security headers, and a cookie and hop-by-hop headers the proxy must
not pass back); with a target it forwards each request there, ``Host`` unchanged, and returns the
answer (the recording front of the OIDC provider).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from support.web import Inspector, ServerOutput, announcing, running_inspector

__all__ = [
    "INSPECTOR_HEADERS",
    "Proxy",
    "Recorded",
    "Recorder",
    "basic_header",
    "login",
    "recording",
    "running_proxy",
    "write_secret",
]

# What the stand-in answers with, as the inspector's Guard would, and what must not come back.
INSPECTOR_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Set-Cookie": "inspector=leaked; Path=/",
    "Keep-Alive": "timeout=5",
    "X-Upstream-Private": "dropped-by-connection",
    "Connection": "X-Upstream-Private",
}


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        return ", ".join(values) if values else None

    def text(self) -> str:
        """Everything received, as one string to search for secrets."""
        return "\n".join([self.method, self.path, *(f"{k}: {v}" for k, v in self.headers), self.body.decode("latin-1")])


@dataclass
class Recorder:
    server: ThreadingHTTPServer
    target: str | None = None
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def received(self) -> list[Recorded]:
        with self.lock:
            return list(self.requests)

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


def _handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with recorder.lock:
                recorder.requests.append(Recorded(self.command, self.path, list(self.headers.items()), body))
            if recorder.target is None:
                self._answer(body)
            else:
                self._forward(body)

        def _answer(self, body: bytes) -> None:
            if self.command == "POST":
                status, payload = 201, json.dumps({"recorded": True, "echo": json.loads(body or b"null")}).encode()
            else:
                status, payload = 200, json.dumps({"inspector": True, "path": self.path}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in INSPECTOR_HEADERS.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _forward(self, body: bytes) -> None:
            assert recorder.target is not None
            parts = urlsplit(recorder.target)
            connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in {"connection", "content-length"}}
            connection.request(self.command, self.path, body=body or None, headers=headers)
            response = connection.getresponse()
            payload = response.read()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in {"connection", "transfer-encoding", "content-length", "keep-alive"}:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            connection.close()

        do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _any

    return Handler


@contextmanager
def recording(target: str | None = None) -> Iterator[Recorder]:
    """A :class:`Recorder` on 127.0.0.1 (a free port), answering itself or forwarding to ``target``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    recorder = Recorder(server, target)
    server.RequestHandlerClass = _handler(recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def write_secret(path: Path, data: bytes, mode: int = 0o600) -> Path:
    """A secret file at ``path`` with ``mode``."""
    path.write_bytes(data)
    path.chmod(mode)
    return path


def basic_header(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@dataclass(frozen=True)
class Proxy:
    url: str  # no trailing slash
    announced: dict[str, Any]
    process: subprocess.Popen[str]
    output: ServerOutput  # its standard error


def proxy_command(inspector: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "reviewtrail", "proxy", "--port", "0", "--json", "--inspector", inspector, *args]


@contextmanager
def running_proxy(inspector: str, env: dict[str, str], cwd: Path) -> Iterator[Proxy]:
    """``reviewtrail proxy --port 0 --json --inspector INSPECTOR`` with ``env`` added to this
    process's environment (every ``REVIEWTRAIL_PROXY_*`` variable of it removed first), stopped
    (SIGTERM) on exit."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_PROXY_")}
    full.pop("REVIEWTRAIL_REVIEW_CAPABILITY_FILE", None)
    full.update(env)
    with announcing(proxy_command(inspector), full, cwd, "the proxy") as (process, announced, output):
        yield Proxy(announced["url"].rstrip("/"), announced, process, output)


@contextmanager
def login(proxy: str, subject: str, next_path: str = "/") -> Iterator[httpx.Client]:
    """A browser (an httpx client with a cookie jar) signed in at ``proxy`` as ``subject`` through
    the OIDC provider the proxy is configured with: the proxy's login redirect, the provider's
    authorization page, its form posted with ``sub``, the proxy's callback. Closed on exit."""
    with httpx.Client(timeout=30, follow_redirects=False) as browser:
        _sign_in(browser, proxy, subject, next_path)
        yield browser


def _sign_in(browser: httpx.Client, proxy: str, subject: str, next_path: str) -> None:
    start = browser.get(f"{proxy}/auth/login", params={"next": next_path})
    assert start.status_code == 303, (start.status_code, start.text)
    authorize = start.headers["location"]
    page = browser.get(authorize)
    assert page.status_code == 200, (page.status_code, page.text)
    chosen = browser.post(authorize, data={"sub": subject})
    assert chosen.status_code in {302, 303}, (chosen.status_code, chosen.text)
    back = browser.get(chosen.headers["location"])
    assert back.status_code == 303, (back.status_code, back.text)
    assert back.headers["location"] == next_path


@contextmanager
def writing_team(root: Path, allow: str) -> Iterator[tuple[Inspector, Proxy]]:
    """The inspector over the store ``new_store(root)`` made, with a review capability; an OIDC
    provider; and the proxy before the inspector, allowing the subjects ``allow`` (comma-separated)
    to write. Each stopped on exit."""
    from reviewtrail.web import new_capability
    from reviewtrail.web._capability import CAPABILITY_FILE_ENV
    from support.oidc import running_oidc_mock

    key = root / "review.key"
    new_capability(key)
    env = {
        "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID": "reviewtrail-proxy",
        "REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET": "client-secret-value",
        "REVIEWTRAIL_PROXY_ALLOW": allow,
        "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(write_secret(root / "proxy.secret", b"s" * 48)),
        CAPABILITY_FILE_ENV: str(key),
    }
    with (
        running_inspector(root, env={CAPABILITY_FILE_ENV: str(key)}) as inspector,
        running_oidc_mock() as provider,
        running_proxy(inspector.url.rstrip("/"), env | {"REVIEWTRAIL_PROXY_OIDC_ISSUER": provider}, root) as proxy,
    ):
        yield inspector, proxy
