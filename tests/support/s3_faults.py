"""A loopback HTTP proxy in front of a real S3 server that answers the first requests with an error.

It stands for a bucket that answers 500/503 for a while: the first ``failures`` requests get
``status`` with an S3 error body (``code``), every later one is forwarded to the server as it
came (the Host header included, so the client's signature still holds) and its answer returned.
:meth:`FaultyProxy.fail_next` starts another bad period: the next requests, whatever they are,
get the given answers in turn.
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

__all__ = ["FaultyProxy"]

_HOP = {"connection", "keep-alive", "transfer-encoding", "expect", "proxy-connection", "upgrade"}


class FaultyProxy:
    """``with FaultyProxy(upstream, failures=2) as proxy:`` then point the client at ``proxy.endpoint``."""

    def __init__(self, upstream: str, *, failures: int, status: int = 503, code: str = "SlowDown") -> None:
        self.upstream = urlsplit(upstream)
        self.failures = failures
        self.status = status
        self.code = code
        self.requests = 0
        self.refused = 0
        self._answers = [(status, code)]
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(self, count: int, answers: list[tuple[int, str]]) -> None:
        """Answer the next ``count`` requests with errors: ``answers`` (status, S3 error code) in turn."""
        with self._lock:
            self.failures = self.refused + count
            self._answers = list(answers)

    def _refuse_now(self) -> tuple[int, str] | None:
        """The error to answer this request with, or None to forward it."""
        with self._lock:
            self.requests += 1
            if self.refused < self.failures:
                self.refused += 1
                return self._answers[self.refused % len(self._answers)]
            return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def _body(self) -> bytes:
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def _answer(self) -> None:
                body = self._body()
                refusal = proxy._refuse_now()
                if refusal is not None:
                    status, code = refusal
                    error = (
                        f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                        f"<Message>injected by the test proxy</Message></Error>"
                    ).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(error)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(error)
                    return
                conn = http.client.HTTPConnection(proxy.upstream.hostname or "", proxy.upstream.port, timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    response = conn.getresponse()
                    data = response.read()
                finally:
                    conn.close()
                self.send_response(response.status)
                head = self.command == "HEAD"  # no body, but the object's length
                for key, value in response.getheaders():
                    if key.lower() not in _HOP and (head or key.lower() != "content-length"):
                        self.send_header(key, value)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _answer

        return Handler

    def __enter__(self) -> FaultyProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
