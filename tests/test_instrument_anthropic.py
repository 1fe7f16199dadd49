"""``reviewtrail.instrument`` on the real Anthropic SDK clients, pointed at a loopback server that speaks
the Messages wire format (JSON, and the ``message_start`` ... ``message_stop`` server-sent events).

What the store holds is compared with what crossed the wire; the wrapper's caller with a bare
client's on the same replies.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import anthropic
import pydantic
import pytest

import reviewtrail
from reviewtrail.models import price
from support.llm_wire import (
    MESSAGES,
    Project,
    Reply,
    WireServer,
    anthropic_error,
    message,
    message_events,
    message_usage,
    project_with_store,
    stored_calls,
    wire_server,
)

PROMPT = [{"role": "user", "content": "Does 2 + 2 = 4 hold? Answer in one line."}]
SYSTEM = "You review claims."


wire = pytest.fixture(wire_server)
project = pytest.fixture(project_with_store)


def bare(wire: WireServer, *, max_retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=wire.url, api_key="test-key", max_retries=max_retries)


def traced(wire: WireServer, project: Project, *, max_retries: int = 0) -> anthropic.Anthropic:
    client = bare(wire, max_retries=max_retries)
    return reviewtrail.instrument(client, store=project.store, project_dir=project.root, env=project.env)


def request(**extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 256, "messages": PROMPT, "system": SYSTEM, **extra}


def settings_of(received: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in received.items() if k not in ("model", "messages", "system")}


def text_sent(events: list[Any]) -> str:
    return "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")


def test_a_message_is_recorded_as_the_wire_carried_it(wire: WireServer, project: Project) -> None:
    usage = message_usage(100, 12, cache_read=60, cache_write=20)
    sent = message("It holds.", model="claude-sonnet-4-5-20250929", usage=usage)
    wire.queue(MESSAGES, Reply(body=sent), Reply(body=sent))
    options = request(stop_sequences=["\n\n"], metadata={"user_id": "u-1"}, extra_body={"temperature": 0.0})
    plain = bare(wire).messages.create(**options)
    answer = traced(wire, project).messages.create(**options)

    assert type(answer) is type(plain)
    assert answer.model_dump() == plain.model_dump()
    received = wire.exchanges_of(MESSAGES)[1].json()
    [call] = stored_calls(project.store)
    assert call.messages == received["messages"] == PROMPT
    assert call.system == received["system"].encode() == SYSTEM.encode()
    assert call.manifest["systemPrompt"]["mediaType"] == "text/plain"
    assert call.manifest["runtimeSettings"] == settings_of(received)
    assert call.manifest["runtimeSettings"]["temperature"] == 0.0  # sent through extra_body
    assert call.response == "It holds."
    assert call.manifest["requestedModel"] == "claude-sonnet-4-5"
    assert call.manifest["reportedModel"] == call.manifest["model"] == "claude-sonnet-4-5-20250929"
    assert call.manifest["responseId"] == "msg_1"
    assert call.manifest["finishReason"] == "end_turn"
    assert call.manifest["provider"] == "anthropic"
    # Anthropic reports the uncached input apart: every input token is counted, cached ones included.
    assert call.manifest["usage"] == {
        "inputTokens": 180,
        "outputTokens": 12,
        "totalTokens": 192,
        "cacheReadTokens": 60,
        "cacheWriteTokens": 20,
    }
    expected = price("anthropic", "claude-sonnet-4-5-20250929", 180, 12, cache_read_tokens=60, cache_write_tokens=20)
    assert expected.source == "genai-prices"
    assert call.manifest["cost"] == expected.to_json()
    assert call.usage["manifestHash"] == call.manifest_hash and call.usage["cost"] == call.manifest["cost"]


def test_a_system_prompt_of_blocks_is_kept_as_json(wire: WireServer, project: Project) -> None:
    blocks = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    wire.queue(MESSAGES, Reply(body=message("ok", model="claude-sonnet-4-5")))
    traced(wire, project).messages.create(**request(system=blocks))
    [call] = stored_calls(project.store)
    assert call.manifest["systemPrompt"]["mediaType"] == "application/json"
    assert call.system is not None and json.loads(call.system) == wire.exchanges[0].json()["system"] == blocks


def test_create_with_stream_true_is_recorded_when_the_stream_ends(wire: WireServer, project: Project) -> None:
    events = message_events(["It ", "holds", "."], model="claude-sonnet-4-5-20250929", input_tokens=30, output_tokens=4)
    wire.queue(MESSAGES, Reply(events=events), Reply(events=events))
    plain = [e.model_dump() for e in bare(wire).messages.create(**request(stream=True))]
    stream = traced(wire, project).messages.create(**request(stream=True))

    assert type(stream) is anthropic.Stream
    seen = []
    for event in stream:
        seen.append(event.model_dump())
        if len(seen) < len(plain):
            assert stored_calls(project.store) == []
    assert seen == plain  # ping events are the SDK's to skip, for both
    [call] = stored_calls(project.store)
    sent = wire.exchanges_of(MESSAGES)[1].sent
    assert call.response == text_sent(sent) == "It holds."
    assert call.manifest["usage"]["inputTokens"] == 30
    assert call.manifest["usage"]["outputTokens"] == 4  # message_delta's count, not message_start's 1
    assert call.manifest["finishReason"] == "end_turn"
    assert call.manifest["reportedModel"] == "claude-sonnet-4-5-20250929"
    assert call.manifest["runtimeSettings"] == settings_of(wire.exchanges_of(MESSAGES)[1].json())


def test_messages_stream_is_recorded_with_what_its_final_message_says(wire: WireServer, project: Project) -> None:
    events = message_events(["Looks ", "right."], model="claude-opus-4-1-20250805", input_tokens=50, cache_read=10)
    wire.queue(MESSAGES, Reply(events=events))
    with traced(wire, project).messages.stream(**request()) as stream:
        final = stream.get_final_message()
        texts = list(stream.text_stream)
    assert texts == []  # consumed by get_final_message, as without the wrapper
    [call] = stored_calls(project.store)
    assert call.response == "".join(b.text for b in final.content if b.type == "text") == "Looks right."
    assert call.manifest["reportedModel"] == final.model
    assert call.manifest["usage"]["inputTokens"] == final.usage.input_tokens + 10
    assert call.manifest["usage"]["outputTokens"] == final.usage.output_tokens == 11
    assert call.manifest["usage"]["cacheReadTokens"] == 10
    assert call.manifest["responseId"] == final.id
    assert wire.exchanges[0].json()["stream"] is True
    assert call.manifest["runtimeSettings"] == settings_of(wire.exchanges[0].json())


def test_a_stream_left_midway_is_recorded_as_incomplete(wire: WireServer, project: Project) -> None:
    reply = Reply(events=message_events(["one ", "two ", "three"], model="claude-sonnet-4-5"), hold_after=5)
    wire.queue(MESSAGES, reply)
    with traced(wire, project).messages.stream(**request()) as stream:
        for number, _text in enumerate(stream.text_stream):
            if number == 1:
                break
    reply.release.set()
    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "incomplete"
    assert call.response == "one two "
    assert call.manifest["usage"]["inputTokens"] == 25  # what message_start said; no output count arrived
    assert call.manifest["usage"]["outputTokens"] == 1
    assert "finishReason" not in call.manifest


def test_an_error_event_midway_is_a_failed_call_with_what_arrived(wire: WireServer, project: Project) -> None:
    events = message_events(["partial "], model="claude-sonnet-4-5")[:4]
    events.append(("error", anthropic_error("Overloaded", "overloaded_error")))
    wire.queue(MESSAGES, Reply(events=events), Reply(events=events))
    with pytest.raises(anthropic.APIStatusError) as plain:
        list(bare(wire).messages.create(**request(stream=True)))
    with pytest.raises(anthropic.APIStatusError) as wrapped:
        list(traced(wire, project).messages.create(**request(stream=True)))
    assert type(wrapped.value) is type(plain.value) and str(wrapped.value) == str(plain.value)
    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "failed"
    assert call.manifest["error"]["type"] == type(plain.value).__name__
    assert call.response == "partial "


def test_a_429_then_success_inside_the_sdk_is_one_call(wire: WireServer, project: Project) -> None:
    limited = Reply(
        429, anthropic_error("Number of requests exceeded", "rate_limit_error"), headers={"retry-after-ms": "1"}
    )
    wire.queue(MESSAGES, limited, Reply(body=message("Second time.", model="claude-sonnet-4-5")))
    answer = traced(wire, project, max_retries=2).messages.create(**request())
    assert answer.content[0].type == "text" and answer.content[0].text == "Second time."
    assert [e.status for e in wire.exchanges_of(MESSAGES)] == [429, 200]
    [call] = stored_calls(project.store)
    assert call.response == "Second time." and "outcome" not in call.manifest


def test_a_5xx_the_sdk_finally_raises_is_recorded_as_failed_and_raised_unchanged(
    wire: WireServer, project: Project
) -> None:
    failing = Reply(500, anthropic_error("Internal server error", "api_error"))
    wire.queue(MESSAGES, *[failing] * 4)
    with pytest.raises(anthropic.InternalServerError) as plain:
        bare(wire, max_retries=1).messages.create(**request())
    with pytest.raises(anthropic.InternalServerError) as wrapped:
        traced(wire, project, max_retries=1).messages.create(**request())
    assert type(wrapped.value) is type(plain.value)
    assert str(wrapped.value) == str(plain.value) and wrapped.value.body == plain.value.body
    assert len(wire.exchanges_of(MESSAGES)) == 4
    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "failed"
    assert call.manifest["error"] == {"type": "InternalServerError", "message": str(plain.value), "status": 500}
    assert call.response == "" and "reportedModel" not in call.manifest


def test_async_clients_are_recorded_the_same_way(wire: WireServer, project: Project) -> None:
    wire.queue(MESSAGES, Reply(body=message("async whole", model="claude-haiku-4-5-20251001")))
    wire.queue(MESSAGES, Reply(events=message_events(["async ", "create"], model="claude-haiku-4-5")))
    wire.queue(MESSAGES, Reply(events=message_events(["async ", "stream"], model="claude-haiku-4-5")))

    async def main() -> list[str]:
        client = reviewtrail.instrument(
            anthropic.AsyncAnthropic(base_url=wire.url, api_key="test-key", max_retries=0),
            store=project.store,
            project_dir=project.root,
            env=project.env,
        )
        whole = await client.messages.create(**request(model="claude-haiku-4-5"))
        stream = await client.messages.create(**request(model="claude-haiku-4-5", stream=True))
        assert type(stream) is anthropic.AsyncStream
        created = [
            e.delta.text async for e in stream if e.type == "content_block_delta" and e.delta.type == "text_delta"
        ]
        async with client.messages.stream(**request(model="claude-haiku-4-5")) as managed:
            streamed = [text async for text in managed.text_stream]
        first = whole.content[0]
        assert first.type == "text"
        return [first.text, "".join(created), "".join(streamed)]

    assert asyncio.run(main()) == ["async whole", "async create", "async stream"]
    calls = stored_calls(project.store)
    assert [c.response for c in calls] == ["async whole", "async create", "async stream"]
    assert calls[0].manifest["reportedModel"] == "claude-haiku-4-5-20251001"
    assert all(c.manifest["usage"]["outputTokens"] == 11 for c in calls)


def test_a_reviewer_call_is_a_trace_with_the_responses_model_that_trace_verify_accepts(
    wire: WireServer, project: Project
) -> None:
    events = message_events(["Verdict: ", "ready"], model="claude-opus-4-1-20250805")
    wire.queue(MESSAGES, Reply(events=events))

    async def review() -> reviewtrail.ReviewerCall:
        client = reviewtrail.instrument(
            anthropic.AsyncAnthropic(base_url=wire.url, api_key="test-key", max_retries=0),
            store=project.store,
            project_dir=project.root,
            env=project.env,
        )
        async with reviewtrail.reviewer_call(
            skill="research-review", purpose="initial-review", executor="codex", executor_model="gpt-5"
        ) as handle:
            async with client.messages.stream(**request(model="claude-opus-4-1")) as stream:
                await stream.get_final_message()
            handle.verdict = "ready"
            handle.review_completed = handle.review_scope_complete = handle.review_positive = True
        return handle

    handle = asyncio.run(review())
    [trace] = handle.traces
    assert trace.meta_path is not None and trace.response_path is not None
    meta = json.loads(trace.meta_path.read_text(encoding="utf-8"))
    assert meta["requested_reviewer_model"] == "claude-opus-4-1"
    assert meta["reported_reviewer_model"] == "claude-opus-4-1-20250805"
    assert meta["reviewer_model_source"] == "backend-reported"
    assert meta["backend"] == "anthropic"
    assert meta["acceptance_status"] == "accepted" and meta["review_independence"] == "cross-family"
    assert trace.response_path.read_text(encoding="utf-8") == "Verdict: ready"
    [call] = stored_calls(project.store)
    assert call.response == "Verdict: ready"
    result = subprocess.run(
        [sys.executable, "-m", "reviewtrail", "trace", "verify", str(project.root)],
        cwd=project.root,
        env=project.cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "match the ledger" in result.stdout


def test_a_stream_still_open_when_the_block_ends_is_traced_as_incomplete(wire: WireServer, project: Project) -> None:
    reply = Reply(events=message_events(["half ", "done"], model="claude-sonnet-4-5"), hold_after=5)
    wire.queue(MESSAGES, reply)
    client = traced(wire, project)
    with reviewtrail.reviewer_call(skill="research-review", purpose="round-1") as handle:
        stream = client.messages.create(**request(stream=True))
        next(e for e in stream if e.type == "content_block_delta")
        handle.verdict, handle.review_completed = "ready", True
    reply.release.set()
    stream.close()
    [trace] = handle.traces
    assert trace.meta_path is not None and trace.response_path is not None
    meta = json.loads(trace.meta_path.read_text(encoding="utf-8"))
    assert meta["status"] == "incomplete"
    assert meta["review_completed"] is False and meta["verdict"] is None  # flags only for a finished call
    assert trace.response_path.read_text(encoding="utf-8") == "half "
    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "incomplete" and call.response == "half "


class Weather(pydantic.BaseModel):
    city: str
    celsius: int


WEATHER = '{"city":"Paris","celsius":21}'


def test_messages_parse_is_recorded_with_the_schema_it_sent(wire: WireServer, project: Project) -> None:
    wire.queue(MESSAGES, Reply(body=message(WEATHER, model="claude-sonnet-4-5-20250929")))
    client = traced(wire, project)
    parsed = client.messages.parse(**request(output_config={"effort": "low"}), output_format=Weather)
    assert parsed.parsed_output == Weather(city="Paris", celsius=21)

    [call] = stored_calls(project.store)
    received = wire.exchanges_of(MESSAGES)[0].json()
    assert received["output_config"]["format"]["schema"]["title"] == "Weather"
    assert received["output_config"]["effort"] == "low"
    assert call.manifest["runtimeSettings"] == settings_of(received)
    assert "output_format" not in call.manifest["runtimeSettings"]
    assert call.messages == PROMPT and call.system == SYSTEM.encode()
    assert call.response == WEATHER
    assert call.manifest["responseId"] == "msg_1"


def test_beta_and_async_parse_are_recorded_and_traced_under_their_names(wire: WireServer, project: Project) -> None:
    wire.queue(MESSAGES, *(Reply(body=message(WEATHER, model="claude-sonnet-4-5-20250929")) for _ in range(3)))
    client = traced(wire, project)
    with reviewtrail.reviewer_call(skill="research-review", purpose="round-1") as handle:
        beta = client.beta.messages.parse(**request(), output_format=Weather)
    assert beta.parsed_output == Weather(city="Paris", celsius=21)

    async def main() -> Any:
        async_client = reviewtrail.instrument(
            anthropic.AsyncAnthropic(base_url=wire.url, api_key="test-key", max_retries=0),
            store=project.store,
            project_dir=project.root,
            env=project.env,
        )
        first = await async_client.messages.parse(**request(), output_format=Weather)
        second = await async_client.beta.messages.parse(**request())
        return first.parsed_output, second

    first, second = asyncio.run(main())
    assert first == Weather(city="Paris", celsius=21) and second.content[0].text == WEATHER
    calls = stored_calls(project.store)
    exchanges = wire.exchanges_of(MESSAGES)
    assert len(calls) == len(exchanges) == 3
    for call, exchange in zip(calls, exchanges, strict=True):
        assert call.manifest["runtimeSettings"] == settings_of(exchange.json())
        assert call.response == WEATHER
    assert "output_config" not in calls[2].manifest["runtimeSettings"]  # no class given: no format sent
    [trace] = handle.traces
    assert trace.request_path is not None
    assert json.loads(trace.request_path.read_text(encoding="utf-8"))["tool"] == "anthropic.beta.messages.parse"


def test_messages_stream_with_an_output_format_records_the_schema_it_sent(wire: WireServer, project: Project) -> None:
    wire.queue(MESSAGES, Reply(events=message_events(['{"city":"Paris",', '"celsius":21}'], model="claude-sonnet-4-5")))
    client = traced(wire, project)
    with client.messages.stream(**request(), output_format=Weather) as stream:
        final = stream.get_final_message()
    assert final.parsed_output == Weather(city="Paris", celsius=21)
    [call] = stored_calls(project.store)
    received = wire.exchanges_of(MESSAGES)[0].json()
    assert received["output_config"]["format"]["type"] == "json_schema"
    assert call.manifest["runtimeSettings"] == settings_of(received)
