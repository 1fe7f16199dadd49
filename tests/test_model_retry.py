"""Retries of model calls: 429 and 5xx answers are retried with exponential backoff that honours
``Retry-After`` (delta-seconds and HTTP-date), within a bounded wait and number of attempts, and
every attempt is recorded on the prompt manifest.

A real HTTP server on 127.0.0.1 (in a thread) answers from a script of (status, headers) and
records each request. The backends get a sleep function that only notes what it was asked to
wait, and a fixed clock: nothing here waits or measures time.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.errors import BackendUnavailableError, ConfigError
from reviewtrail.models import (
    AnthropicBackend,
    HttpAttempt,
    ModelBackend,
    OpenAICompatibleBackend,
    RetryPolicy,
    invoke,
    parse_retry_after,
    retry_wait,
)
from reviewtrail.store import Store
from reviewtrail.verify import verify_store

KEY = "sk-test-retry-4b1d"
MESSAGES = [{"role": "user", "content": "Is the ablation in table 2 fair?"}]
NOW = datetime(2026, 10, 21, 7, 27, 30, tzinfo=UTC)
EXACT = RetryPolicy(jitter=0.0)  # backoff without its random part, so waits are exact


class ScriptedServer:
    """Answers each request with the next scripted (status, headers), then with a success."""

    def __init__(self) -> None:
        self.script: deque[tuple[int, dict[str, str]]] = deque()
        self.paths: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with server._lock:
                    server.paths.append(self.path)
                    status, headers = server.script.popleft() if server.script else (200, {})
                body = server._body(self.path, status)
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def answer(self, *steps: tuple[int, dict[str, str]]) -> None:
        self.script.extend(steps)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @staticmethod
    def _body(path: str, status: int) -> bytes:
        if status >= 400:
            return json.dumps({"error": {"message": f"status {status}, slow down"}}).encode()
        if path.endswith("/chat/completions"):
            doc: dict[str, Any] = {
                "id": "chatcmpl-r1",
                "model": "gpt-4o",
                "choices": [{"message": {"content": "Fair enough."}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 3},
            }
        else:
            doc = {
                "id": "msg_r1",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Fair enough."}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 12, "output_tokens": 3},
            }
        return json.dumps(doc).encode()


class Sleeps(list[float]):
    """A sleep function that records the waits asked of it instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    yield srv
    srv.stop()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    root = tmp_path / "store"
    with init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as s:
        yield s


def openai(url: str, sleeps: Sleeps, retry: RetryPolicy = EXACT) -> OpenAICompatibleBackend:
    return OpenAICompatibleBackend(f"{url}/v1", KEY, "gpt-4o", retry=retry, sleep=sleeps, clock=lambda: NOW)


def anthropic(url: str, sleeps: Sleeps, retry: RetryPolicy = EXACT) -> AnthropicBackend:
    return AnthropicBackend(KEY, "claude-sonnet-4-5", base_url=url, retry=retry, sleep=sleeps, clock=lambda: NOW)


# --- against the loopback server ----------------------------------------------------------------


def test_429_with_retry_after_seconds_then_success(server: ScriptedServer) -> None:
    server.answer((429, {"Retry-After": "7"}))
    sleeps = Sleeps()
    completion = openai(server.url, sleeps).complete(MESSAGES)
    assert completion.text == "Fair enough."
    assert sleeps == [7.0]
    assert server.paths == ["/v1/chat/completions"] * 2
    assert completion.attempts == (HttpAttempt(status=429, retry_after="7", wait_ms=7000), HttpAttempt(status=200))


def test_retry_after_http_date_is_waited_until(server: ScriptedServer) -> None:
    server.answer((503, {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}))  # 30 s after NOW
    sleeps = Sleeps()
    completion = anthropic(server.url, sleeps).complete(MESSAGES)
    assert sleeps == [30.0]
    assert [a.status for a in completion.attempts] == [503, 200]
    assert completion.attempts[0].wait_ms == 30_000
    assert server.paths == ["/v1/messages"] * 2


def test_retry_after_date_already_past_retries_at_once(server: ScriptedServer) -> None:
    server.answer((429, {"Retry-After": "Wed, 21 Oct 2026 07:00:00 GMT"}))
    sleeps = Sleeps()
    openai(server.url, sleeps).complete(MESSAGES)
    assert sleeps == [0.0]


@pytest.mark.parametrize("header", [{}, {"Retry-After": "soon"}, {"Retry-After": "-3"}, {"Retry-After": "1.5"}])
def test_5xx_without_usable_retry_after_backs_off_exponentially(server: ScriptedServer, header: dict[str, str]) -> None:
    server.answer((500, header), (502, header), (503, header))
    sleeps = Sleeps()
    completion = openai(server.url, sleeps).complete(MESSAGES)
    assert sleeps == [1.0, 2.0, 4.0]
    assert [a.status for a in completion.attempts] == [500, 502, 503, 200]
    assert [a.wait_ms for a in completion.attempts] == [1000, 2000, 4000, None]


def test_gives_up_after_the_last_attempt(server: ScriptedServer) -> None:
    server.answer(*[(503, {})] * 4)
    sleeps = Sleeps()
    with pytest.raises(BackendUnavailableError) as info:
        anthropic(server.url, sleeps).complete(MESSAGES)
    message = str(info.value)
    assert "HTTP 503" in message and "4 attempts" in message and "slow down" in message
    assert KEY not in message
    assert len(server.paths) == 4 and sleeps == [1.0, 2.0, 4.0]


def test_retry_after_beyond_the_longest_wait_is_not_waited(server: ScriptedServer) -> None:
    server.answer((429, {"Retry-After": "3600"}))
    sleeps = Sleeps()
    with pytest.raises(BackendUnavailableError, match=r"HTTP 429.*asked to wait 3600 s, more than the 60 s allowed"):
        openai(server.url, sleeps).complete(MESSAGES)
    assert sleeps == [] and len(server.paths) == 1


def test_backoff_is_capped_at_the_longest_wait(server: ScriptedServer) -> None:
    server.answer(*[(500, {})] * 5)
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=6, base_delay=2.0, max_delay=10.0, jitter=0.0)
    openai(server.url, sleeps, retry=policy).complete(MESSAGES)
    assert sleeps == [2.0, 4.0, 8.0, 10.0, 10.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_other_client_errors_are_not_retried(server: ScriptedServer, status: int) -> None:
    server.answer((status, {"Retry-After": "1"}))
    sleeps = Sleeps()
    with pytest.raises(BackendUnavailableError, match=f"HTTP {status}"):
        openai(server.url, sleeps).complete(MESSAGES)
    assert sleeps == [] and len(server.paths) == 1


def test_one_attempt_policy_never_retries(server: ScriptedServer) -> None:
    server.answer((503, {"Retry-After": "1"}))
    sleeps = Sleeps()
    with pytest.raises(BackendUnavailableError, match="HTTP 503"):
        openai(server.url, sleeps, retry=RetryPolicy(max_attempts=1)).complete(MESSAGES)
    assert sleeps == [] and len(server.paths) == 1


def test_default_backoff_has_bounded_jitter(server: ScriptedServer) -> None:
    server.answer((500, {}), (500, {}))
    sleeps = Sleeps()
    default = RetryPolicy()
    openai(server.url, sleeps, retry=default).complete(MESSAGES)
    assert len(sleeps) == 2
    assert default.base_delay * (1 - default.jitter) <= sleeps[0] <= default.base_delay
    assert 2 * default.base_delay * (1 - default.jitter) <= sleeps[1] <= 2 * default.base_delay


def test_invoke_records_every_attempt_on_the_manifest(server: ScriptedServer, store: Store) -> None:
    server.answer((429, {"Retry-After": "2"}), (502, {}))
    sleeps = Sleeps()
    result = invoke(store, openai(server.url, sleeps), MESSAGES)
    assert result.manifest_envelope.payload_value["attempts"] == [
        {"status": 429, "retryAfter": "2", "waitMs": 2000},
        {"status": 502, "waitMs": 2000},
        {"status": 200},
    ]
    assert [a.status for a in result.manifest.attempts or ()] == [429, 502, 200]
    assert sleeps == [2.0, 2.0]
    assert verify_store(store).ok


def test_calls_without_retries_record_their_one_attempt(server: ScriptedServer, store: Store) -> None:
    result = invoke(store, anthropic(server.url, Sleeps()), MESSAGES)
    assert result.manifest_envelope.payload_value["attempts"] == [{"status": 200}]


def test_a_call_that_fails_after_retries_records_nothing(server: ScriptedServer, store: Store) -> None:
    server.answer(*[(429, {"Retry-After": "1"})] * 4)
    sleeps = Sleeps()
    with pytest.raises(BackendUnavailableError, match="4 attempts"):
        invoke(store, openai(server.url, sleeps), MESSAGES)
    head = store.ledger.head()
    assert head is not None and head.seq == 1 and list(store.cas.iter_objects()) == []
    assert sleeps == [1.0, 1.0, 1.0]


def test_backends_still_satisfy_the_protocol(server: ScriptedServer) -> None:
    for backend in (openai(server.url, Sleeps()), anthropic(server.url, Sleeps())):
        assert isinstance(backend, ModelBackend)


# --- the rules ----------------------------------------------------------------------------------


@given(st.integers(min_value=0, max_value=10**9))
def test_retry_after_delta_seconds(seconds: int) -> None:
    assert parse_retry_after(str(seconds), now=NOW) == float(seconds)


@given(st.integers(min_value=-(10**6), max_value=10**6))
def test_retry_after_http_date(offset: int) -> None:
    moment = NOW + timedelta(seconds=offset)
    assert parse_retry_after(format_datetime(moment, usegmt=True), now=NOW) == float(max(offset, 0))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Sunday, 21-Oct-26 07:28:00 GMT", 30.0),  # RFC 850 form
        ("Wed Oct 21 07:28:00 2026", 30.0),  # asctime form
        (" 12 ", 12.0),
        ("", None),
        ("soon", None),
        ("-1", None),
        ("1.5", None),
        ("1e3", None),
        ("+5", None),
        ("٣", None),  # a non-ASCII digit is not delta-seconds
    ],
)
def test_retry_after_forms(value: str, expected: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == expected


@given(
    st.integers(min_value=1, max_value=30),
    st.floats(min_value=0.0, max_value=0.999),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_backoff_waits_are_bounded_and_grow(retry_number: int, u: float, jitter: float) -> None:
    policy = RetryPolicy(max_attempts=20, base_delay=0.5, max_delay=20.0, jitter=jitter)
    wait = retry_wait(policy, retry_number, None, now=NOW, u=u)
    assert wait is not None and 0.0 <= wait <= policy.max_delay
    ceiling = min(policy.base_delay * 2 ** (retry_number - 1), policy.max_delay)
    assert ceiling * (1 - jitter) - 1e-9 <= wait <= ceiling
    later = retry_wait(policy, retry_number + 1, None, now=NOW, u=u)
    assert later is not None and later >= wait


@given(st.integers(min_value=0, max_value=10**6), st.floats(min_value=0.0, max_value=0.999))
def test_server_wait_is_kept_exactly_or_refused(seconds: int, u: float) -> None:
    wait = retry_wait(EXACT, 1, str(seconds), now=NOW, u=u)
    assert wait == (float(seconds) if seconds <= EXACT.max_delay else None)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_attempts": 0}, "retry.max_attempts"),
        ({"max_attempts": 21}, "retry.max_attempts"),
        ({"base_delay": -1.0}, "retry.base_delay"),
        ({"max_delay": float("inf")}, "retry.max_delay"),
        ({"base_delay": 5.0, "max_delay": 1.0}, "retry.max_delay"),
        ({"jitter": 1.5}, "retry.jitter"),
        ({"jitter": float("nan")}, "retry.jitter"),
    ],
)
def test_retry_policy_is_checked(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        RetryPolicy(**kwargs)
    assert info.value.field == field
