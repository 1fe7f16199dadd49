"""The model-backend contract: what every model backend does, whatever it talks to.

A backend joins with one subclass of :class:`ModelBackendContract` that implements
``make_backend`` (a backend whose calls answer :data:`ANSWER`), ``make_failing_backend`` (one
whose next call fails) and ``requests_seen`` (how many requests reached the model). A
backend that speaks HTTP subclasses :class:`HttpModelBackendContract` instead and
implements only ``make_http_backend(url)``: the contract runs a loopback HTTP server that
stands in for the real API (``tests/support/fake_llm_server.py``) and makes it fail in
every way the real one can.
"""

from __future__ import annotations

import abc
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from reviewtrail.app import init_store
from reviewtrail.canonical import canonical_json
from reviewtrail.config import Settings
from reviewtrail.errors import EXIT_BACKEND, BackendUnavailableError, InvalidInputError
from reviewtrail.models import MANIFEST_TYPE, USAGE_TYPE, ModelBackend, RetryPolicy, invoke
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from support.fake_llm_server import FakeLLMServer

__all__ = ["ANSWER", "KEY", "MESSAGES", "SYSTEM", "HttpModelBackendContract", "ModelBackendContract", "no_sleep"]

KEY = "sk-test-3f9c0a7d-never-print-me"
ANSWER = "The claim holds: 2 + 2 = 4."
MESSAGES = [{"role": "user", "content": "Does the table in section 3 support the claim that 2 + 2 = 4?"}]
SYSTEM = "You are a careful reviewer. Answer in one sentence."

MALFORMED_MESSAGES = [
    pytest.param([{"content": "no role"}], id="no-role"),
    pytest.param([{"role": "user"}], id="no-content"),
    pytest.param(["just a string"], id="string-item"),
    pytest.param("not a list", id="not-a-list"),
    pytest.param([{"role": "user", "content": float("nan")}], id="nan-content"),
]

BAD_INVOKE_ARGUMENTS = [
    pytest.param({"call_type": "chat-legacy"}, id="retired-call-type"),
    pytest.param({"actor": ""}, id="empty-actor"),
    pytest.param({"privacy": "secret"}, id="unknown-privacy"),
    pytest.param({"redaction_status": "done"}, id="unknown-redaction-status"),
    pytest.param({"skill_refs": [{"id": "x", "contentHash": "md5:abc"}]}, id="skill-ref-not-sha256"),
    pytest.param({"settings": {"temperature": float("inf")}}, id="infinite-setting"),
]

# Bodies neither API ever answers with: each must be a clean BackendUnavailableError.
UNEXPECTED_BODIES = [
    pytest.param({"model": "m"}, id="no-answer"),
    pytest.param({"choices": [{}]}, id="empty-choice"),
    pytest.param([1, 2], id="a-list"),
    pytest.param({"content": "text"}, id="content-not-a-list"),
]


def no_sleep(seconds: float) -> None:
    """Retries of 429 and 5xx answers wait through this: the tests never wait."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def new_store(root: Path) -> Store:
    """A new store under ``root``, as the application opens it (its record types validated)."""
    return init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))


def nothing_written(store: Store) -> bool:
    """Only the store's identity record (appended by init) is in the ledger."""
    head = store.ledger.head()
    return head is not None and head.seq == 1 and head.type == "store.identity@1"


class ModelBackendContract(abc.ABC):
    """Every model backend passes these tests. Subclass it as ``Test<Backend>Backend``."""

    #: Part of the message of the error the failing backend raises.
    failure_message: ClassVar[str]

    @abc.abstractmethod
    def make_backend(self) -> ModelBackend:
        """A backend whose every call answers :data:`ANSWER`."""

    @abc.abstractmethod
    def make_failing_backend(self) -> ModelBackend:
        """A backend whose next call fails with :class:`BackendUnavailableError`."""

    @abc.abstractmethod
    def requests_seen(self, backend: ModelBackend) -> int:
        """How many requests reached the model behind ``backend`` so far."""

    # --- plumbing -------------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _contract_resources(self, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.request = request
        self.tmp_path = tmp_path

    @pytest.fixture
    def store(self, _contract_resources: None) -> Iterator[Store]:
        with new_store(self.tmp_path / "store") as s:
            yield s

    # --- one call -------------------------------------------------------------------------
    def test_is_a_model_backend(self) -> None:
        backend = self.make_backend()
        assert isinstance(backend, ModelBackend)
        assert isinstance(backend.model, str) and backend.model
        assert isinstance(backend.endpoint_host, str) and backend.endpoint_host
        assert backend.provider is None or isinstance(backend.provider, str)

    def test_answers_a_conversation(self) -> None:
        backend = self.make_backend()
        completion = backend.complete(MESSAGES, system=SYSTEM, settings={"temperature": 0})
        assert completion.text == ANSWER
        assert completion.settings["temperature"] == 0
        assert self.requests_seen(backend) == 1

    @pytest.mark.parametrize("messages", MALFORMED_MESSAGES)
    def test_malformed_messages_are_refused_before_sending(self, messages: Any) -> None:
        backend = self.make_backend()
        with pytest.raises(InvalidInputError):
            backend.complete(messages)
        assert self.requests_seen(backend) == 0

    @pytest.mark.parametrize("bad", [{"model": "x"}, {"messages": []}], ids=["model", "messages"])
    def test_backend_owned_settings_are_refused(self, bad: dict[str, Any]) -> None:
        backend = self.make_backend()
        with pytest.raises(InvalidInputError):
            backend.complete(MESSAGES, settings=bad)
        assert self.requests_seen(backend) == 0

    # --- invoke: the call recorded in a real store ----------------------------------------
    def test_invoke_records_the_call(self, store: Store) -> None:
        backend = self.make_backend()
        result = invoke(store, backend, MESSAGES, system=SYSTEM)
        m_env, u_env = result.manifest_envelope, result.usage_envelope
        assert (m_env.type, u_env.type) == (MANIFEST_TYPE, USAGE_TYPE)
        assert u_env.seq == m_env.seq + 1 and u_env.prev_hash == m_env.hash
        manifest = result.manifest
        assert (manifest.model, manifest.endpoint_host) == (backend.model, backend.endpoint_host)
        assert manifest.system_prompt is not None
        assert store.cas.read(manifest.system_prompt) == SYSTEM.encode()
        assert store.cas.read(manifest.input_messages) == canonical_json(MESSAGES)
        assert store.cas.read(manifest.response) == ANSWER.encode()
        assert result.usage.manifest_id == m_env.id
        report = verify_store(store)
        assert report.ok, report.problems

    def test_failed_call_appends_nothing(self, store: Store) -> None:
        with pytest.raises(BackendUnavailableError, match=self.failure_message):
            invoke(store, self.make_failing_backend(), MESSAGES, system=SYSTEM)
        assert nothing_written(store)
        assert list(store.cas.iter_objects()) == []

    @pytest.mark.parametrize("kwargs", BAD_INVOKE_ARGUMENTS)
    def test_invoke_checks_inputs_before_calling(self, store: Store, kwargs: dict[str, Any]) -> None:
        backend = self.make_backend()
        with pytest.raises(InvalidInputError):
            invoke(store, backend, MESSAGES, **kwargs)
        assert self.requests_seen(backend) == 0
        assert nothing_written(store)


class HttpModelBackendContract(ModelBackendContract):
    """The model-backend contract for an HTTP API, run against a loopback stand-in for it."""

    failure_message = "HTTP 503"

    @abc.abstractmethod
    def make_http_backend(self, url: str, **options: Any) -> ModelBackend:
        """A backend of this kind for the API at ``url`` (``http://127.0.0.1:<port>``) with
        :data:`KEY`, waiting between retries through :func:`no_sleep`; ``options`` (such as
        ``timeout``) go to its constructor."""

    @pytest.fixture(autouse=True)
    def _loopback_server(self) -> Iterator[FakeLLMServer]:
        self.server = FakeLLMServer().start()
        self.server.answer = ANSWER
        yield self.server
        self.server.stop()

    def make_backend(self) -> ModelBackend:
        return self.make_http_backend(self.server.url)

    def make_failing_backend(self) -> ModelBackend:
        for _ in range(RetryPolicy().max_attempts):  # a 5xx is retried: fail every attempt
            self.server.fail_next(503, {"error": {"message": "overloaded"}})
        return self.make_backend()

    def requests_seen(self, backend: ModelBackend) -> int:
        return len(self.server.received)

    def test_streaming_is_refused(self) -> None:
        with pytest.raises(InvalidInputError):
            self.make_backend().complete(MESSAGES, settings={"stream": True})
        assert self.server.received == []

    def test_the_key_is_never_in_repr(self) -> None:
        assert KEY not in repr(self.make_backend())

    def test_http_error_status_is_backend_unavailable_without_the_key(self) -> None:
        for _ in range(RetryPolicy().max_attempts):  # a 5xx is retried: fail every attempt
            self.server.fail_next(500, {"error": {"message": f"upstream exploded while using key {KEY}"}})
        with pytest.raises(BackendUnavailableError) as info:
            self.make_backend().complete(MESSAGES)
        message = str(info.value)
        assert "HTTP 500" in message and "upstream exploded" in message
        assert KEY not in message
        assert info.value.exit_code == EXIT_BACKEND == 5

    def test_unauthorized_is_backend_unavailable(self) -> None:
        self.server.fail_next(401, b"<html>Unauthorized</html>", content_type="text/html")
        with pytest.raises(BackendUnavailableError, match="HTTP 401: <html>Unauthorized</html>"):
            self.make_backend().complete(MESSAGES)

    def test_bad_json_is_backend_unavailable(self) -> None:
        self.server.fail_next(200, b"{not json", content_type="application/json")
        with pytest.raises(BackendUnavailableError, match="not JSON"):
            self.make_backend().complete(MESSAGES)

    @pytest.mark.parametrize("body", UNEXPECTED_BODIES)
    def test_unexpected_shape_is_backend_unavailable(self, body: Any) -> None:
        self.server.fail_next(200, json.dumps(body).encode())
        with pytest.raises(BackendUnavailableError):
            self.make_backend().complete(MESSAGES)

    def test_connection_refused_is_backend_unavailable(self) -> None:
        backend = self.make_http_backend(f"http://127.0.0.1:{free_port()}")
        with pytest.raises(BackendUnavailableError, match="cannot reach") as info:
            backend.complete(MESSAGES)
        assert KEY not in str(info.value)

    def test_timeout_is_backend_unavailable(self) -> None:
        self.server.fail_next(200, b"{}", delay=1.0)
        backend = self.make_http_backend(self.server.url, timeout=0.2)
        with pytest.raises(BackendUnavailableError, match=r"did not answer within 0\.2 s"):
            backend.complete(MESSAGES)
