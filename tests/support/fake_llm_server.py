"""A local stand-in for the OpenAI chat-completions and Anthropic Messages APIs.

The real APIs cannot be reached from the test machines, so this real HTTP server on
127.0.0.1 answers in their formats, records every request (headers and body) for the
tests to assert on, and can be told to fail (status, body, delay) for the next requests.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]  # lowercased names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Canned:
    status: int
    body: bytes
    content_type: str = "application/json"
    delay: float = 0.0


class FakeLLMServer:
    """Start with :meth:`start`, stop with :meth:`stop`; ``url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self) -> None:
        self.answer = "The claim holds: 2 + 2 = 4."
        self.reported_model: str | None = None  # default: echo the requested model
        self.usage_openai: dict[str, Any] = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
        self.usage_anthropic: dict[str, Any] = {"input_tokens": 12, "output_tokens": 5}
        self.received: list[Received] = []
        self._canned: deque[Canned] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control ---------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                received = Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with fake._lock:
                    fake.received.append(received)
                    canned = fake._canned.popleft() if fake._canned else None
                if canned is None:
                    canned = fake._default(received)
                if canned.delay:
                    time.sleep(canned.delay)
                try:
                    self.send_response(canned.status)
                    self.send_header("content-type", canned.content_type)
                    self.send_header("content-length", str(len(canned.body)))
                    self.end_headers()
                    self.wfile.write(canned.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(
        self, status: int, body: bytes | dict[str, Any], *, content_type: str = "application/json", delay: float = 0.0
    ) -> None:
        """Answer the next request with this status and body instead of the default."""
        raw = json.dumps(body).encode() if isinstance(body, dict) else body
        with self._lock:
            self._canned.append(Canned(status, raw, content_type, delay))

    # --- default answers --------------------------------------------------------------------
    def _default(self, req: Received) -> Canned:
        try:
            request = req.json()
        except ValueError:
            return Canned(400, b'{"error": {"message": "body is not JSON"}}')
        model = self.reported_model or request.get("model")
        if req.path.endswith("/chat/completions"):
            doc: dict[str, Any] = {
                "id": "chatcmpl-local-1",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": self.answer}, "finish_reason": "stop"}
                ],
                "usage": self.usage_openai,
            }
        elif req.path == "/v1/messages":
            doc = {
                "id": "msg_local_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": self.answer}],
                "stop_reason": "end_turn",
                "usage": self.usage_anthropic,
            }
        else:
            return Canned(404, b'{"error": {"message": "no such route"}}')
        return Canned(200, json.dumps(doc).encode())
