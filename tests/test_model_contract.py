"""One contract every model backend passes: scripted, OpenAI-compatible and Anthropic.

The tests themselves are in ``tests/contracts/models.py``; each class here is one backend.
The HTTP backends are tested against a real HTTP server on 127.0.0.1 that stands in for the
APIs (they cannot be reached from here); each backend's own wire format is pinned in
``tests/test_models.py``.
"""

from __future__ import annotations

from typing import Any

from contracts.models import (
    ANSWER,
    KEY,
    HttpModelBackendContract,
    ModelBackendContract,
    no_sleep,
)
from reviewtrail.models import AnthropicBackend, ModelBackend, OpenAICompatibleBackend, ScriptedBackend


class TestScriptedBackend(ModelBackendContract):
    failure_message = "scripted backend has no answer for call 1"

    def make_backend(self) -> ModelBackend:
        return ScriptedBackend(lambda messages, system: ANSWER)

    def make_failing_backend(self) -> ModelBackend:
        return ScriptedBackend([])

    def requests_seen(self, backend: ModelBackend) -> int:
        assert isinstance(backend, ScriptedBackend)
        return len(backend.calls)


class TestOpenAICompatibleBackend(HttpModelBackendContract):
    def make_http_backend(self, url: str, **options: Any) -> ModelBackend:
        return OpenAICompatibleBackend(f"{url}/v1", KEY, "gpt-4o", sleep=no_sleep, **options)


class TestAnthropicBackend(HttpModelBackendContract):
    def make_http_backend(self, url: str, **options: Any) -> ModelBackend:
        return AnthropicBackend(KEY, "claude-x", base_url=url, sleep=no_sleep, **options)
