"""A loopback HTTP server that speaks the OpenAI and Anthropic wire formats, for the real SDK clients.

Each test queues the replies a path will give (:meth:`WireServer.queue`), points a client at
``base_url`` and reads back what crossed the wire (:attr:`WireServer.exchanges`): the request body as
received and the JSON the server sent (the body, or the data of every server-sent event). Shapes follow
the SDKs' own types (``openai.types.chat.ChatCompletion``/``ChatCompletionChunk``,
``openai.types.responses.Response`` and its ``response.*`` events, ``anthropic.types.Message`` and its
``message_start``/``content_block_*``/``message_delta``/``message_stop`` events).

Streams go out as chunked HTTP/1.1 bodies, one event per chunk, flushed; a reply can stop after some
events and wait (``hold_after``), so a client can abandon it midway.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Exchange",
    "Reply",
    "WireServer",
    "anthropic_error",
    "chat_chunks",
    "chat_completion",
    "message",
    "message_events",
    "openai_error",
    "response_events",
    "response_object",
]

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"
CREATED = 1_760_000_000


@dataclass
class Reply:
    """One answer: a JSON body, or server-sent events ``(event name or None, data)`` where data is a
    JSON value or the literal text ``[DONE]``."""

    status: int = 200
    body: Any = None
    events: list[tuple[str | None, Any]] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hold_after: int | None = None  # stop after this many events until ``release`` is set
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class Exchange:
    """A request as received and what was sent back."""

    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    sent: Any  # the JSON body, or the list of event data values (``[DONE]`` included as text)
    finished: bool = False  # every byte of the reply was written

    def json(self) -> Any:
        return json.loads(self.body)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that left (a stream it stopped reading)
            super().handle_error(request, client_address)


class WireServer:
    def __init__(self) -> None:
        self._replies: dict[str, deque[Reply]] = defaultdict(deque)
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    def queue(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self._replies[path].extend(replies)

    def exchanges_of(self, path: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.path == path]

    def start(self) -> WireServer:
        wire = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in separate writes: no 40 ms delayed-ACK stall

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                path = self.path.split("?", 1)[0]
                with wire._lock:
                    queued = wire._replies[path]
                    reply = queued.popleft() if queued else Reply(500, openai_error("no reply queued", "test_error"))
                sent = reply.body if reply.events is None else [data for _, data in reply.events]
                exchange = Exchange(path, {k.lower(): v for k, v in self.headers.items()}, body, reply.status, sent)
                with wire._lock:
                    wire.exchanges.append(exchange)
                try:
                    if reply.events is None:
                        self._send_json(reply)
                    else:
                        self._send_events(reply)
                    exchange.finished = True
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _send_json(self, reply: Reply) -> None:
                data = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _send_events(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.send_header("cache-control", "no-cache")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                assert reply.events is not None
                for number, (event, data) in enumerate(reply.events):
                    if reply.hold_after is not None and number == reply.hold_after:
                        reply.release.wait(timeout=30)
                    text = data if isinstance(data, str) else json.dumps(data)
                    frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
                    self._chunk(frame.encode())
                self._chunk(b"")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="llm-wire", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def wait_finished(self, exchange: Exchange, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not exchange.finished and time.monotonic() < deadline:
            time.sleep(0.01)


# --- OpenAI -----------------------------------------------------------------------------------


def openai_error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def chat_usage(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def chat_completion(
    text: str, *, model: str, id: str = "chatcmpl-1", usage: dict[str, Any] | None = None, finish: str = "stop"
) -> dict[str, Any]:
    return {
        "id": id,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None, "annotations": []},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": usage if usage is not None else chat_usage(21, 9),
        "service_tier": "default",
        "system_fingerprint": "fp_wire",
    }


def chat_chunks(
    pieces: list[str],
    *,
    model: str,
    id: str = "chatcmpl-2",
    usage: dict[str, Any] | None = None,
    finish: str = "stop",
) -> list[tuple[str | None, Any]]:
    """The chunks of a streamed chat completion; with ``usage``, the last one before ``[DONE]`` carries
    it with no choices (as when ``stream_options.include_usage`` is set)."""

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> tuple[None, dict[str, Any]]:
        body = {
            "id": id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": "fp_wire",
            "choices": choices,
        }
        return None, {**body, **extra}

    def delta(content: dict[str, Any], reason: str | None = None) -> list[dict[str, Any]]:
        return [{"index": 0, "delta": content, "logprobs": None, "finish_reason": reason}]

    events = [chunk(delta({"role": "assistant", "content": "", "refusal": None}))]
    events += [chunk(delta({"content": piece})) for piece in pieces]
    events.append(chunk(delta({}, finish)))
    if usage is not None:
        events.append(chunk([], usage=usage))
    events.append((None, "[DONE]"))
    return events


def responses_usage(input_tokens: int, output_tokens: int, cached: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def response_object(
    text: str | None,
    *,
    model: str,
    id: str = "resp_1",
    usage: dict[str, Any] | None = None,
    status: str = "completed",
) -> dict[str, Any]:
    output = (
        []
        if text is None
        else [
            {
                "id": "msg_out_1",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
            }
        ]
    )
    return {
        "id": id,
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def response_events(
    pieces: list[str], *, model: str, id: str = "resp_2", usage: dict[str, Any] | None = None
) -> list[tuple[str | None, Any]]:
    """The events of a streamed response: created, in_progress, the message and its text deltas, completed."""
    text = "".join(pieces)
    begun = response_object(None, model=model, id=id, status="in_progress")
    item = {"id": "msg_out_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    done_part = {**part, "text": text}
    done_item = {**item, "status": "completed", "content": [done_part]}
    bodies: list[dict[str, Any]] = [
        {"type": "response.created", "response": begun},
        {"type": "response.in_progress", "response": begun},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {
            "type": "response.content_part.added",
            "item_id": "msg_out_1",
            "output_index": 0,
            "content_index": 0,
            "part": part,
        },
        *(
            {
                "type": "response.output_text.delta",
                "item_id": "msg_out_1",
                "output_index": 0,
                "content_index": 0,
                "delta": piece,
                "logprobs": [],
            }
            for piece in pieces
        ),
        {
            "type": "response.output_text.done",
            "item_id": "msg_out_1",
            "output_index": 0,
            "content_index": 0,
            "text": text,
            "logprobs": [],
        },
        {
            "type": "response.content_part.done",
            "item_id": "msg_out_1",
            "output_index": 0,
            "content_index": 0,
            "part": done_part,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {"type": "response.completed", "response": response_object(text, model=model, id=id, usage=usage)},
    ]
    return [(body["type"], {**body, "sequence_number": n}) for n, body in enumerate(bodies)]


# --- Anthropic --------------------------------------------------------------------------------


def anthropic_error(message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_wire"}


def message_usage(input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def message(
    text: str, *, model: str, id: str = "msg_1", usage: dict[str, Any] | None = None, stop: str = "end_turn"
) -> dict[str, Any]:
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage if usage is not None else message_usage(25, 11),
    }


def message_events(
    pieces: list[str],
    *,
    model: str,
    id: str = "msg_2",
    input_tokens: int = 25,
    output_tokens: int = 11,
    cache_read: int = 0,
    stop: str = "end_turn",
) -> list[tuple[str | None, Any]]:
    """The events of a streamed message: the start carries the input tokens (and 1 output token), the
    ``message_delta`` the stop reason and the cumulative output tokens."""
    start = {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": message_usage(input_tokens, 1, cache_read=cache_read),
    }
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        ("ping", {"type": "ping"}),
    ]
    events += [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
        )
        for piece in pieces
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


# --- what the store holds ---------------------------------------------------------------------


@dataclass(frozen=True)
class StoredCall:
    """One recorded call: its manifest and usage payloads (wire form) and the CAS objects they name."""

    manifest: dict[str, Any]
    usage: dict[str, Any]
    manifest_id: str
    manifest_hash: str
    messages: Any
    system: bytes | None
    response: str
    tool_calls: Any = None  # the JSON of the manifest's ``toolCalls`` object, None when it names none


def stored_calls(store: Any) -> list[StoredCall]:
    """Every prompt manifest in ``store``, oldest first, with its usage record and its CAS objects."""
    from reviewtrail.models import MANIFEST_TYPE, USAGE_TYPE

    usages = {env.payload_value["manifestId"]: env.payload_value for env in store.ledger.read(type=USAGE_TYPE)}
    calls = []
    for env in store.ledger.read(type=MANIFEST_TYPE):
        manifest = env.payload_value
        system = manifest.get("systemPrompt")
        calls.append(
            StoredCall(
                manifest=manifest,
                usage=usages[env.id],
                manifest_id=env.id,
                manifest_hash=env.payload_hash,
                messages=json.loads(store.cas.read(_ref(manifest["inputMessages"]))),
                system=None if system is None else store.cas.read(_ref(system)),
                response=store.cas.read(_ref(manifest["response"])).decode("utf-8"),
                tool_calls=json.loads(store.cas.read(_ref(manifest["toolCalls"]))) if "toolCalls" in manifest else None,
            )
        )
    return calls


def _ref(doc: dict[str, Any]) -> Any:
    from reviewtrail.cas import CasRef

    return CasRef.model_validate(doc)


@dataclass
class Project:
    """A project folder with its own store (created), and the settings that find it."""

    root: Any
    env: dict[str, str]
    store: Any

    def cli_env(self) -> dict[str, str]:
        import os

        base = {k: v for k, v in os.environ.items() if not k.startswith(("ARIS_", "REVIEWTRAIL_"))}
        return {**base, **self.env}


def open_project(root: Any) -> Project:
    from reviewtrail import app
    from reviewtrail.config import load_settings

    env = {"REVIEWTRAIL_STORE": str(root / ".reviewtrail")}
    return Project(root, env, app.init_store(load_settings(env, cwd=root)))


# --- fixtures: ``wire = pytest.fixture(wire_server)``, ``project = pytest.fixture(project_with_store)`` --


def wire_server() -> Iterator[WireServer]:
    """A started wire server, stopped after the test."""
    server = WireServer().start()
    yield server
    server.stop()


def project_with_store(tmp_path: Any) -> Iterator[Project]:
    """A project folder in ``tmp_path`` with its store, closed after the test."""
    opened = open_project(tmp_path)
    yield opened
    opened.store.close()
