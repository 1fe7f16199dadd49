"""reviewtrail.models: each backend's wire format, prices, and the records every model call yields.

What every backend must do (refusing bad input before sending, failing cleanly, recording a
call) is the model-backend contract: ``tests/contracts/models.py``, run per backend by
``tests/test_model_contract.py``.

The OpenAI and Anthropic APIs cannot be reached from here; the HTTP backends are tested
against a real local HTTP server on 127.0.0.1 (tests/support/fake_llm_server.py) that is a
stand-in for them: it speaks their request and response formats and records what it got.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reviewtrail.app import init_store, payload_schemas
from reviewtrail.canonical import canonical_json
from reviewtrail.config import Settings
from reviewtrail.errors import BackendUnavailableError, ConfigError, InvalidInputError
from reviewtrail.ledger import NewRecord
from reviewtrail.models import (
    MANIFEST_TYPE,
    USAGE_TYPE,
    AnthropicBackend,
    Cost,
    ModelBackend,
    ModelInvocationUsage,
    OpenAICompatibleBackend,
    PromptManifest,
    ScriptedBackend,
    SkillRef,
    invoke,
    price,
)
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from support.fake_llm_server import FakeLLMServer

KEY = "sk-test-3f9c0a7d-never-print-me"
MESSAGES = [{"role": "user", "content": "Does the table in section 3 support the claim that 2 + 2 = 4?"}]
SYSTEM = "You are a careful reviewer. Answer in one sentence."


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    srv = FakeLLMServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    root = tmp_path / "store"
    with init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as s:
        yield s


# --- OpenAI-compatible backend ----------------------------------------------------------------


def test_openai_sends_chat_completions_request(server: FakeLLMServer) -> None:
    server.reported_model = "gpt-4o-2024-08-06"
    with OpenAICompatibleBackend(f"{server.url}/v1/", KEY, "gpt-4o") as backend:
        completion = backend.complete(MESSAGES, system=SYSTEM, settings={"temperature": 0.2, "max_tokens": 64})
    [req] = server.received
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.json() == {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": SYSTEM}, *MESSAGES],
        "temperature": 0.2,
        "max_tokens": 64,
    }
    assert completion.text == server.answer
    assert completion.model_reported == "gpt-4o-2024-08-06"
    assert (completion.input_tokens, completion.output_tokens) == (12, 5)
    assert completion.settings == {"temperature": 0.2, "max_tokens": 64}
    assert completion.raw["id"] == "chatcmpl-local-1"


def test_openai_endpoint_and_provider() -> None:
    local = OpenAICompatibleBackend("http://127.0.0.1:8080/v1", None, "llama-3")
    assert (local.endpoint_host, local.provider, local.base_url) == ("127.0.0.1:8080", None, "http://127.0.0.1:8080/v1")
    official = OpenAICompatibleBackend("https://api.openai.com/v1", KEY, "gpt-4o")
    assert (official.endpoint_host, official.provider) == ("api.openai.com", "openai")
    named = OpenAICompatibleBackend("https://openrouter.ai/api/v1", KEY, "openai/gpt-4o", provider="openrouter")
    assert named.provider == "openrouter"
    assert KEY not in repr(official) and KEY not in repr(AnthropicBackend(KEY, "claude-x"))
    assert isinstance(official, ModelBackend)


def test_openai_without_key_sends_no_authorization(server: FakeLLMServer) -> None:
    OpenAICompatibleBackend(f"{server.url}/v1", None, "local-model").complete(MESSAGES)
    [req] = server.received
    assert "authorization" not in req.headers
    assert req.json()["messages"] == MESSAGES


def test_openai_reads_cached_tokens_and_content_parts(server: FakeLLMServer) -> None:
    server.usage_openai = {"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 80}}
    completion = OpenAICompatibleBackend(f"{server.url}/v1", KEY, "gpt-4o").complete(MESSAGES)
    assert (completion.input_tokens, completion.cache_read_tokens) == (100, 80)
    server.fail_next(
        200,
        {
            "model": "m",
            "choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}],
        },
    )
    completion = OpenAICompatibleBackend(f"{server.url}/v1", KEY, "m").complete(MESSAGES)
    assert completion.text == "ab"
    assert (completion.input_tokens, completion.output_tokens) == (None, None)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/v1",
        "ftp://user:pw@example.com",
        "not a url",
        "https://user:pw@example.com/v1",
        "https://example.com/v1?key=x",
        "/v1",
    ],
)
def test_bad_base_urls_are_refused(url: str) -> None:
    with pytest.raises(ConfigError) as info:
        OpenAICompatibleBackend(url, KEY, "gpt-4o")
    assert "pw@" not in str(info.value)


# --- Anthropic backend ------------------------------------------------------------------------


def test_anthropic_sends_messages_request(server: FakeLLMServer) -> None:
    backend = AnthropicBackend(KEY, "claude-sonnet-4-5", base_url=server.url)
    completion = backend.complete(MESSAGES, system=SYSTEM, settings={"temperature": 0})
    [req] = server.received
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == KEY
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    assert req.json() == {
        "model": "claude-sonnet-4-5",
        "messages": MESSAGES,
        "system": SYSTEM,
        "max_tokens": 1024,
        "temperature": 0,
    }
    assert completion.text == server.answer
    assert completion.model_reported == "claude-sonnet-4-5"
    assert (completion.input_tokens, completion.output_tokens) == (12, 5)
    assert completion.settings == {"max_tokens": 1024, "temperature": 0}
    assert backend.provider == "anthropic" and backend.endpoint_host == server.url.removeprefix("http://")


def test_anthropic_counts_cached_input_and_omits_absent_system(server: FakeLLMServer) -> None:
    server.usage_anthropic = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": 300,
        "output_tokens": 4,
    }
    completion = AnthropicBackend(KEY, "claude-sonnet-4-5", base_url=server.url).complete(
        MESSAGES, settings={"max_tokens": 10}
    )
    assert "system" not in server.received[0].json()
    assert server.received[0].json()["max_tokens"] == 10
    assert (completion.input_tokens, completion.cache_write_tokens, completion.cache_read_tokens) == (510, 200, 300)


def test_anthropic_needs_a_key() -> None:
    with pytest.raises(ConfigError):
        AnthropicBackend("", "claude-sonnet-4-5")


# --- scripted backend -------------------------------------------------------------------------


def test_scripted_backend_answers_in_order_then_runs_out() -> None:
    backend = ScriptedBackend(["first", "second"])
    assert backend.endpoint_host == "scripted.local" and backend.model == "scripted-model"
    assert backend.provider is None
    assert backend.complete(MESSAGES).text == "first"
    second = backend.complete(MESSAGES, system="s", settings={"temperature": 1})
    assert (second.text, second.model_reported, second.input_tokens, second.output_tokens) == (
        "second",
        "scripted-model",
        None,
        None,
    )
    assert [c.system for c in backend.calls] == [None, "s"]
    assert backend.calls[1].settings == {"temperature": 1}
    with pytest.raises(BackendUnavailableError, match="scripted backend has no answer for call 3"):
        backend.complete(MESSAGES)


def test_scripted_backend_with_a_responder() -> None:
    backend = ScriptedBackend(lambda messages, system: f"{system}|{messages[-1]['content']}", model="demo-model")
    assert backend.complete([{"role": "user", "content": "hi"}], system="sys").text == "sys|hi"
    assert backend.model == "demo-model"
    assert isinstance(backend, ModelBackend)


# --- prices -----------------------------------------------------------------------------------


def test_price_of_known_models() -> None:
    # A fixed moment: genai-prices keeps prices by date, so these amounts do not drift.
    at = datetime(2025, 6, 1, tzinfo=UTC)
    assert price("openai", "gpt-4o", 1000, 500, at=at) == Cost(amount="0.0075", currency="USD", source="genai-prices")
    dated = price("openai", "gpt-4o-2024-08-06", 1_000_000, 0, at=at)
    assert dated.source == "genai-prices" and dated.amount == "2.5"
    anthropic = price("anthropic", "claude-3-5-sonnet-latest", 1000, 500)
    assert anthropic.source == "genai-prices" and anthropic.amount is not None
    cheaper = price("openai", "gpt-4o", 1000, 0, cache_read_tokens=800)
    assert cheaper.amount is not None and float(cheaper.amount) < float(price("openai", "gpt-4o", 1000, 0).amount or 0)


@pytest.mark.parametrize(
    "args",
    [
        (None, "gpt-4o", 10, 10),  # provider not known: no guessing from the model name
        ("openai", "no-such-model-xyz", 10, 10),
        ("no-such-provider", "gpt-4o", 10, 10),
        ("openai", "gpt-4o", None, 10),
        ("openai", "gpt-4o", 10, None),
        ("openai", None, 10, 10),
        ("openai", "gpt-4o", -1, 10),
    ],
)
def test_unknown_price_stays_null(args: tuple[Any, ...]) -> None:
    assert price(*args) == Cost(amount=None, currency="USD", source="unknown")


def test_cost_never_mixes_unknown_and_amount() -> None:
    with pytest.raises(InvalidInputError):
        Cost(amount="0.1", source="unknown")
    with pytest.raises(InvalidInputError):
        Cost(amount=None, source="genai-prices")
    with pytest.raises(InvalidInputError):
        Cost(amount="1e-5", source="genai-prices")


# --- invoke: records in a real store ----------------------------------------------------------


def test_invoke_records_manifest_and_usage_atomically(server: FakeLLMServer, store: Store) -> None:
    batches: list[int] = []
    append = store.append

    def counting_append(records: Any) -> Any:
        batch = list(records)
        batches.append(len(batch))
        return append(batch)

    store.append = counting_append  # type: ignore[method-assign]
    backend = OpenAICompatibleBackend(f"{server.url}/v1", KEY, "gpt-4o", provider="openai")
    skill = SkillRef(id="reviewer-quick", content_hash="sha256:" + "ab" * 32, version="1.2.0", revision="r7")
    result = invoke(
        store,
        backend,
        MESSAGES,
        system=SYSTEM,
        settings={"temperature": 0.2, "max_tokens": 64},
        skill_refs=[skill, {"id": "citation", "contentHash": "sha256:" + "cd" * 32, "specialist": "citations"}],
        specialist="reviewer",
        session_id="sess-1",
        actor="agent:test",
    )
    assert batches == [2]
    m_env, u_env = result.manifest_envelope, result.usage_envelope
    assert (m_env.type, u_env.type) == (MANIFEST_TYPE, USAGE_TYPE)
    assert u_env.seq == m_env.seq + 1 and u_env.prev_hash == m_env.hash
    assert m_env.subject == u_env.subject == f"model-call:{m_env.id}"
    assert m_env.actor == "agent:test" and m_env.privacy == "private"

    manifest = PromptManifest.read(m_env.payload_value)
    assert manifest == result.manifest
    assert manifest.model == "gpt-4o" and manifest.endpoint_host == server.url.removeprefix("http://")
    assert manifest.runtime_settings == {"temperature": 0.2, "max_tokens": 64}
    assert manifest.redaction_status == "not-applied" and manifest.call_type == "task"
    assert manifest.session_id == "sess-1" and manifest.specialist == "reviewer"
    assert [r.id for r in manifest.skill_refs] == ["reviewer-quick", "citation"]
    assert manifest.usage.total_tokens == 17
    assert manifest.cost == price("openai", "gpt-4o", 12, 5)
    assert manifest.cost.source == "genai-prices"
    assert manifest.started_at <= manifest.ended_at

    # CAS references resolve to the exact bytes, in the agent-state pool.
    assert manifest.system_prompt is not None
    assert store.cas.read(manifest.system_prompt) == SYSTEM.encode()
    assert store.cas.read(manifest.input_messages) == canonical_json(MESSAGES)
    assert store.cas.read(manifest.response) == server.answer.encode()
    assert {r.pool for r in (manifest.system_prompt, manifest.input_messages, manifest.response)} == {"agent-state"}
    assert (manifest.system_prompt.media_type, manifest.input_messages.media_type, manifest.response.media_type) == (
        "text/plain",
        "application/json",
        "text/plain",
    )

    usage = ModelInvocationUsage.read(u_env.payload_value)
    assert usage.manifest_id == m_env.id and usage.manifest_hash == m_env.payload_hash
    assert usage.usage == manifest.usage and usage.cost == manifest.cost
    assert usage.call_type == "task" and usage.duration_ms >= 0
    for text in (SYSTEM, MESSAGES[0]["content"], server.answer, "careful reviewer", "2 + 2"):
        assert text.encode() not in u_env.payload
    assert b'"size":' not in u_env.payload  # no CAS reference either: only the manifest holds those
    assert set(u_env.payload_value) == {
        "usage",
        "cost",
        "startedAt",
        "endedAt",
        "durationMs",
        "manifestId",
        "manifestHash",
        "callType",
    }
    assert set(m_env.payload_value) == {
        "model",
        "endpointHost",
        "systemPrompt",
        "inputMessages",
        "response",
        "skillRefs",
        "specialist",
        "usage",
        "cost",
        "runtimeSettings",
        "redactionStatus",
        "sessionId",
        "startedAt",
        "endedAt",
        "callType",
        "provider",
        "requestedModel",
        "reportedModel",
        "responseId",
        "finishReason",
        "attempts",
    }
    assert m_env.payload_value["skillRefs"][1] == {
        "id": "citation",
        "contentHash": "sha256:" + "cd" * 32,
        "version": None,
        "revision": None,
        "specialist": "citations",
    }
    assert m_env.payload_value["startedAt"].endswith("Z")

    report = verify_store(store)
    assert report.ok, report.problems
    assert report.refs_checked == 3


def test_invoke_with_scripted_backend_records_unknown_cost(store: Store) -> None:
    backend = ScriptedBackend(["Looks right."])
    result = invoke(store, backend, MESSAGES, call_type="paper-vision")
    manifest, usage = result.manifest, result.usage
    assert manifest.endpoint_host == "scripted.local" and manifest.model == "scripted-model"
    assert manifest.system_prompt is None and m_payload(result)["systemPrompt"] is None
    assert manifest.cost == Cost(amount=None, source="unknown")
    assert m_payload(result)["cost"] == {"amount": None, "currency": "USD", "source": "unknown"}
    assert m_payload(result)["usage"] == {"inputTokens": None, "outputTokens": None, "totalTokens": None}
    assert usage.cost.amount is None and usage.call_type == "paper-vision"
    assert result.completion.text == "Looks right."
    assert store.cas.read(manifest.response) == b"Looks right."
    assert verify_store(store).ok


def m_payload(result: Any) -> dict[str, Any]:
    return dict(result.manifest_envelope.payload_value)


def test_invoke_anthropic_prices_cached_tokens(server: FakeLLMServer, store: Store) -> None:
    server.usage_anthropic = {"input_tokens": 10, "cache_read_input_tokens": 990, "output_tokens": 20}
    result = invoke(store, AnthropicBackend(KEY, "claude-3-5-sonnet-latest", base_url=server.url), MESSAGES)
    assert result.manifest.usage.input_tokens == 1000
    assert result.manifest.runtime_settings == {"max_tokens": 1024}
    expected = price("anthropic", "claude-3-5-sonnet-latest", 1000, 20, cache_read_tokens=990)
    assert result.manifest.cost == expected and expected.source == "genai-prices"
    assert KEY.encode() not in result.manifest_envelope.payload


# --- records ----------------------------------------------------------------------------------


def usage_doc(call_type: str) -> dict[str, Any]:
    return {
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
        "cost": {"amount": None, "currency": "USD", "source": "unknown"},
        "startedAt": "2024-05-01T10:00:00.000000Z",
        "endedAt": "2024-05-01T10:00:01.500000Z",
        "durationMs": 1500,
        "manifestId": "0190c0de-0000-7000-8000-000000000001",
        "manifestHash": "ef" * 32,
        "callType": call_type,
    }


def test_old_call_types_stay_readable(store: Store) -> None:
    usage = ModelInvocationUsage.read(usage_doc("chat-legacy"))
    assert usage.call_type == "chat-legacy"
    assert usage.started_at == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert usage.payload_json() == usage_doc("chat-legacy")
    # A stored record of an older call type passes the ledger's payload validation too.
    [env] = store.append(
        [NewRecord(type=USAGE_TYPE, actor="old-writer", privacy="private", payload=usage_doc("chat-legacy"))]
    )
    assert ModelInvocationUsage.read(env.payload_value).call_type == "chat-legacy"


def test_records_reject_bad_payloads(store: Store) -> None:
    bad = usage_doc("task") | {"manifestHash": "not-a-hash"}
    with pytest.raises(InvalidInputError, match="manifestHash"):
        store.append([NewRecord(type=USAGE_TYPE, actor="x", privacy="private", payload=bad)])
    with pytest.raises(InvalidInputError):
        store.append(
            [NewRecord(type=USAGE_TYPE, actor="x", privacy="private", payload=usage_doc("task") | {"prompt": "hi"})]
        )
    naive = usage_doc("task") | {"startedAt": "2024-05-01T10:00:00"}
    with pytest.raises(InvalidInputError):
        ModelInvocationUsage.read(naive)


def test_schemas_are_generated_with_wire_names() -> None:
    schemas = payload_schemas()
    assert "callType" in schemas[USAGE_TYPE]["properties"]
    assert {"systemPrompt", "inputMessages", "skillRefs", "redactionStatus"} <= set(
        schemas[MANIFEST_TYPE]["properties"]
    )
