"""Usage and cost of model calls: token counts read by genai-prices' own extraction, the cache
split priced at its real rates (Anthropic 1-hour cache writes cost 2x base input, 5-minute ones
1.25x), and records that carry enough to be re-priced and audited.

The HTTP backends are exercised against the local stand-in server (tests/support/fake_llm_server.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import extract_usage
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import NewRecord
from reviewtrail.models import (
    MANIFEST_TYPE,
    USAGE_TYPE,
    AnthropicBackend,
    Cost,
    ModelInvocationUsage,
    OpenAICompatibleBackend,
    PromptManifest,
    ScriptedBackend,
    TokenUsage,
    extract_tokens,
    invoke,
    price,
    reprice,
)
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from support.fake_llm_server import FakeLLMServer

KEY = "sk-test-usage-0000"
MESSAGES = [{"role": "user", "content": "Summarise section 2."}]

# A real Messages API usage block (shape as Anthropic returns it with prompt caching on, both TTLs).
ANTHROPIC_USAGE: dict[str, Any] = {
    "input_tokens": 20,
    "cache_creation_input_tokens": 3000,
    "cache_read_input_tokens": 1000,
    "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000},
    "output_tokens": 400,
    "service_tier": "standard",
}

# Published Claude Sonnet 4.5 rates, USD per million tokens: base input 3, 5-minute cache write
# 3.75 (1.25x), 1-hour cache write 6 (2x), cache read 0.30 (0.1x), output 15.
SONNET_45_EXPECTED = (
    Decimal(20) * 3
    + Decimal(1000) * Decimal("3.75")
    + Decimal(2000) * 6
    + Decimal(1000) * Decimal("0.30")
    + Decimal(400) * 15
) / 1_000_000
# What pricing every cache write at the 5-minute rate gives (the 1-hour writes under-priced).
SONNET_45_ALL_5M = (
    Decimal(20) * 3 + Decimal(3000) * Decimal("3.75") + Decimal(1000) * Decimal("0.30") + Decimal(400) * 15
) / 1_000_000


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


# --- extraction -------------------------------------------------------------------------------


def test_anthropic_cache_split_is_read_from_the_response(server: FakeLLMServer) -> None:
    server.usage_anthropic = ANTHROPIC_USAGE
    completion = AnthropicBackend(KEY, "claude-sonnet-4-5", base_url=server.url).complete(MESSAGES)
    assert completion.input_tokens == 4020  # every input token, cached ones included
    assert completion.output_tokens == 400
    assert completion.cache_read_tokens == 1000
    assert completion.cache_write_tokens == 3000
    assert (completion.cache_write_5m_tokens, completion.cache_write_1h_tokens) == (1000, 2000)
    assert completion.response_id == "msg_local_1"
    assert completion.finish_reason == "end_turn"


def test_openai_compatible_usage_details_are_read(server: FakeLLMServer) -> None:
    # Some OpenAI-compatible gateways report prompt-cache writes next to cached reads.
    server.usage_openai = {
        "prompt_tokens": 500,
        "completion_tokens": 40,
        "total_tokens": 540,
        "prompt_tokens_details": {"cached_tokens": 300, "cache_write_tokens": 150},
        "completion_tokens_details": {"reasoning_tokens": 10},
    }
    completion = OpenAICompatibleBackend(f"{server.url}/v1", KEY, "llama-3-70b").complete(MESSAGES)
    assert (completion.input_tokens, completion.output_tokens) == (500, 40)
    assert (completion.cache_read_tokens, completion.cache_write_tokens) == (300, 150)
    assert (completion.cache_write_5m_tokens, completion.cache_write_1h_tokens) == (None, None)
    assert completion.response_id == "chatcmpl-local-1"
    assert completion.finish_reason == "stop"


def test_usage_of_a_model_no_price_list_knows_is_still_read(server: FakeLLMServer) -> None:
    server.usage_openai = {"prompt_tokens": 9, "completion_tokens": 3}
    completion = OpenAICompatibleBackend(f"{server.url}/v1", None, "my-local-finetune").complete(MESSAGES)
    assert (completion.input_tokens, completion.output_tokens) == (9, 3)


_count = st.integers(min_value=0, max_value=10**7)


@st.composite
def anthropic_usage(draw: st.DrawFn) -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": draw(_count), "output_tokens": draw(_count)}
    if draw(st.booleans()):
        usage["cache_read_input_tokens"] = draw(_count)
    split = draw(st.sampled_from(["none", "total", "both"]))
    if split != "none":
        five, hour = draw(_count), draw(_count)
        usage["cache_creation_input_tokens"] = five + hour
        if split == "both":
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": hour}
    return usage


@given(anthropic_usage())
def test_anthropic_counts_agree_with_genai_prices_extraction(usage: dict[str, Any]) -> None:
    body = {"id": "msg_1", "model": "claude-sonnet-4-5", "usage": usage, "content": [], "stop_reason": "end_turn"}
    ours = extract_tokens(body, "anthropic")
    theirs = extract_usage(body, provider_id="anthropic").usage
    assert ours.input_tokens == theirs.input_tokens
    assert ours.output_tokens == theirs.output_tokens
    assert (ours.cache_read_tokens or 0) == theirs.cache_read_tokens
    assert (ours.cache_write_tokens or 0) == theirs.cache_write_tokens
    assert (ours.cache_write_5m_tokens or 0) == theirs.reported_value("cache_write_5m_tokens")
    assert (ours.cache_write_1h_tokens or 0) == theirs.reported_value("cache_write_1h_tokens")


@given(
    st.fixed_dictionaries(
        {"prompt_tokens": _count, "completion_tokens": _count},
        optional={"prompt_tokens_details": st.fixed_dictionaries({}, optional={"cached_tokens": _count})},
    )
)
def test_openai_counts_agree_with_genai_prices_extraction(usage: dict[str, Any]) -> None:
    body = {"id": "c1", "model": "gpt-4o", "usage": usage, "choices": []}
    ours = extract_tokens(body, "openai-chat")
    theirs = extract_usage(body, provider_id="openai", api_flavor="chat").usage
    assert (ours.input_tokens, ours.output_tokens) == (theirs.input_tokens, theirs.output_tokens)
    assert (ours.cache_read_tokens or 0) == theirs.cache_read_tokens


@pytest.mark.parametrize(
    "usage",
    [
        None,
        "12 tokens",
        {},
        {"output_tokens": 5},  # input count missing
        {"input_tokens": -1, "output_tokens": 5},
        {"input_tokens": "12", "output_tokens": 5},
        {"input_tokens": True, "output_tokens": 5},
        {"input_tokens": 1.5, "output_tokens": 5},
    ],
)
def test_unusable_usage_is_unknown_not_guessed(usage: Any) -> None:
    tokens = extract_tokens({"model": "claude-sonnet-4-5", "usage": usage}, "anthropic")
    assert (tokens.input_tokens, tokens.output_tokens, tokens.cache_read_tokens) == (None, None, None)


def test_unknown_response_format_is_refused() -> None:
    with pytest.raises(ValueError, match="response format"):
        extract_tokens({}, "gemini")  # type: ignore[arg-type]


# --- prices -----------------------------------------------------------------------------------


def test_one_hour_cache_writes_are_priced_at_twice_base_input() -> None:
    at = datetime(2025, 11, 1, tzinfo=UTC)
    cost = price(
        "anthropic",
        "claude-sonnet-4-5",
        4020,
        400,
        cache_read_tokens=1000,
        cache_write_tokens=3000,
        cache_write_5m_tokens=1000,
        cache_write_1h_tokens=2000,
        at=at,
    )
    assert cost == Cost(amount=format(SONNET_45_EXPECTED.normalize(), "f"), source="genai-prices")
    assert cost.amount == "0.02211"
    # Priced as if every write were a 5-minute one, the call comes out about a fifth too low.
    assert SONNET_45_EXPECTED * Decimal("0.81") > SONNET_45_ALL_5M


def test_invoke_prices_anthropic_one_hour_cache_writes(server: FakeLLMServer, store: Store) -> None:
    server.usage_anthropic = ANTHROPIC_USAGE
    result = invoke(store, AnthropicBackend(KEY, "claude-sonnet-4-5", base_url=server.url), MESSAGES)
    assert result.manifest.cost.amount == "0.02211"
    assert result.usage.cost == result.manifest.cost


def test_cache_split_that_does_not_add_up_is_not_priced() -> None:
    bad = price(
        "anthropic",
        "claude-sonnet-4-5",
        100,
        10,
        cache_write_tokens=50,
        cache_write_5m_tokens=40,
        cache_write_1h_tokens=40,
    )
    assert bad == Cost.unknown()


# --- records ----------------------------------------------------------------------------------


def test_manifest_records_cache_split_models_response_id_and_finish_reason(server: FakeLLMServer, store: Store) -> None:
    server.usage_anthropic = ANTHROPIC_USAGE
    server.reported_model = "claude-sonnet-4-5-20250929"
    result = invoke(store, AnthropicBackend(KEY, "claude-sonnet-4-5", base_url=server.url), MESSAGES)
    manifest = result.manifest
    assert manifest.provider == "anthropic"
    assert (manifest.requested_model, manifest.reported_model) == ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929")
    assert manifest.model == "claude-sonnet-4-5-20250929"
    assert (manifest.response_id, manifest.finish_reason) == ("msg_local_1", "end_turn")
    wire = result.manifest_envelope.payload_value
    assert wire["usage"] == {
        "inputTokens": 4020,
        "outputTokens": 400,
        "totalTokens": 4420,
        "cacheReadTokens": 1000,
        "cacheWriteTokens": 3000,
        "cacheWrite5mTokens": 1000,
        "cacheWrite1hTokens": 2000,
    }
    assert (wire["requestedModel"], wire["reportedModel"]) == ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929")
    assert (wire["responseId"], wire["finishReason"], wire["provider"]) == ("msg_local_1", "end_turn", "anthropic")
    # The usage record carries the same token split (and still no text).
    assert result.usage_envelope.payload_value["usage"] == wire["usage"]
    assert verify_store(store).ok


def test_a_record_can_be_repriced_from_what_it_holds(server: FakeLLMServer, store: Store) -> None:
    server.usage_anthropic = ANTHROPIC_USAGE
    result = invoke(store, AnthropicBackend(KEY, "claude-sonnet-4-5", base_url=server.url), MESSAGES)
    stored = PromptManifest.read(store.ledger.get(result.manifest_envelope.id).payload_value)
    assert reprice(stored) == stored.cost == Cost(amount="0.02211", source="genai-prices")
    # An earlier moment picks the prices then in force: the record's own time is what counts.
    assert reprice(stored, at=stored.started_at) == stored.cost


def test_reprice_of_a_record_without_provider_is_unknown(store: Store) -> None:
    result = invoke(store, ScriptedBackend(["ok"]), MESSAGES)
    assert result.manifest.provider is None
    assert reprice(result.manifest) == Cost.unknown()


def _old_manifest(store: Store) -> dict[str, Any]:
    text = store.cas.put(b"Fine.", pool="agent-state", media_type="text/plain").to_json()
    messages = store.cas.put(b"[]", pool="agent-state", media_type="application/json").to_json()
    return {
        "model": "gpt-4o",
        "endpointHost": "api.openai.com",
        "systemPrompt": None,
        "inputMessages": messages,
        "response": text,
        "skillRefs": [],
        "specialist": None,
        "usage": {"inputTokens": 12, "outputTokens": 5, "totalTokens": 17},
        "cost": {"amount": "0.00008", "currency": "USD", "source": "genai-prices"},
        "runtimeSettings": {},
        "redactionStatus": "not-applied",
        "sessionId": None,
        "startedAt": "2024-05-01T10:00:00.000000Z",
        "endedAt": "2024-05-01T10:00:01.000000Z",
        "callType": "task",
    }


def test_records_written_before_the_new_fields_stay_readable_and_round_trip(store: Store) -> None:
    old = _old_manifest(store)
    manifest = PromptManifest.read(old)
    assert (manifest.provider, manifest.requested_model, manifest.response_id, manifest.attempts) == (
        None,
        None,
        None,
        None,
    )
    assert manifest.usage.cache_write_1h_tokens is None
    # Read and written back, an old record is exactly what it was.
    assert manifest.payload_json() == old
    [env] = store.append([NewRecord(type=MANIFEST_TYPE, actor="old-writer", privacy="private", payload=old)])
    assert PromptManifest.read(env.payload_value).usage.input_tokens == 12
    assert reprice(manifest) == Cost.unknown()  # no provider recorded: never guessed


@pytest.mark.parametrize(
    "change",
    [
        {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2, "cacheWrite1hTokens": -5}},
        {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2, "cacheReadTokens": "3"}},
        {"responseId": ""},
        {"finishReason": 7},
        {"provider": ""},
        {"requestedModel": ""},
    ],
)
def test_new_fields_are_checked(store: Store, change: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        store.append(
            [NewRecord(type=MANIFEST_TYPE, actor="x", privacy="private", payload=_old_manifest(store) | change)]
        )


def test_usage_record_cache_split_is_optional_and_checked() -> None:
    doc = {
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7, "cacheReadTokens": 2},
        "cost": {"amount": None, "currency": "USD", "source": "unknown"},
        "startedAt": "2024-05-01T10:00:00.000000Z",
        "endedAt": "2024-05-01T10:00:01.500000Z",
        "durationMs": 1500,
        "manifestId": "0190c0de-0000-7000-8000-000000000001",
        "manifestHash": "ef" * 32,
        "callType": "task",
    }
    usage = ModelInvocationUsage.read(doc)
    assert usage.usage.cache_read_tokens == 2 and usage.usage.cache_write_tokens is None
    assert usage.payload_json() == doc
    with pytest.raises(InvalidInputError):
        TokenUsage.read({"cacheWrite5mTokens": -1})
    assert USAGE_TYPE == "provenance.model-usage@1"


@given(
    st.integers(min_value=0, max_value=50_000),
    st.integers(min_value=0, max_value=50_000),
    st.integers(min_value=0, max_value=50_000),
    st.integers(min_value=0, max_value=50_000),
    st.integers(min_value=0, max_value=20_000),
)
def test_sonnet_45_price_follows_the_published_rates(uncached: int, read: int, five: int, hour: int, out: int) -> None:
    cost = price(
        "anthropic",
        "claude-sonnet-4-5",
        uncached + read + five + hour,
        out,
        cache_read_tokens=read,
        cache_write_tokens=five + hour,
        cache_write_5m_tokens=five,
        cache_write_1h_tokens=hour,
        at=datetime(2025, 11, 1, tzinfo=UTC),
    )
    rates = uncached * 3 + read * Decimal("0.30") + five * Decimal("3.75") + hour * 6 + out * 15
    assert cost.source == "genai-prices" and cost.amount is not None
    assert Decimal(cost.amount) == rates / 1_000_000


@given(
    st.fixed_dictionaries(
        {},
        optional={
            key: st.integers(min_value=0, max_value=10**9)
            for key in (
                "inputTokens",
                "outputTokens",
                "totalTokens",
                "cacheReadTokens",
                "cacheWriteTokens",
                "cacheWrite5mTokens",
                "cacheWrite1hTokens",
            )
        },
    )
)
def test_token_usage_round_trips_and_leaves_out_unreported_cache_counts(doc: dict[str, Any]) -> None:
    usage = TokenUsage.read(doc)
    dumped = usage.to_json()
    assert TokenUsage.read(dumped) == usage
    for key in ("inputTokens", "outputTokens", "totalTokens"):
        assert dumped[key] == doc.get(key)  # the original three are always written
    for key in ("cacheReadTokens", "cacheWriteTokens", "cacheWrite5mTokens", "cacheWrite1hTokens"):
        assert dumped.get(key, "absent") == doc.get(key, "absent")
