"""Tool calls made by an answer, recorded by ``reviewtrail.instrument`` in the manifest's ``toolCalls``
object, in each endpoint's own JSON shape, for whole answers and streams (the real OpenAI and Anthropic
SDK clients against a loopback server speaking their wire formats).

Each recorded list is compared with what the SDK itself made of the same reply: the message's
``tool_calls``, the response's ``*_call`` output items, the message's ``tool_use`` blocks.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reviewtrail
from reviewtrail.instrumentation._answers import accumulator
from support.llm_wire import (
    CHAT,
    MESSAGES,
    RESPONSES,
    Project,
    Reply,
    WireServer,
    chat_completion,
    chat_usage,
    message,
    message_events,
    project_with_store,
    response_object,
    responses_usage,
    stored_calls,
    wire_server,
)

PROMPT = [{"role": "user", "content": "What is the weather in Paris and in Rome?"}]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
]
CALLS = [
    {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}},
    {"id": "call_2", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Rome"}'}},
]


wire = pytest.fixture(wire_server)
project = pytest.fixture(project_with_store)


def instrumented(client: Any, project: Project) -> Any:
    return reviewtrail.instrument(client, store=project.store, project_dir=project.root, env=project.env)


def openai_client(wire: WireServer, project: Project) -> openai.OpenAI:
    return instrumented(openai.OpenAI(base_url=wire.openai_url, api_key="k", max_retries=0), project)


def anthropic_client(wire: WireServer, project: Project) -> anthropic.Anthropic:
    return instrumented(anthropic.Anthropic(base_url=wire.url, api_key="k", max_retries=0), project)


# --- OpenAI chat ----------------------------------------------------------------------------------


def test_a_chat_answer_of_tool_calls_alone_records_them_and_an_empty_text(wire: WireServer, project: Project) -> None:
    body = chat_completion("", model="gpt-4o-2024-08-06", finish="tool_calls", usage=chat_usage(40, 12))
    body["choices"][0]["message"] |= {"content": None, "tool_calls": CALLS}
    wire.queue(CHAT, Reply(body=body))
    answer = openai_client(wire, project).chat.completions.create(model="gpt-4o", messages=PROMPT, tools=TOOLS)

    [call] = stored_calls(project.store)
    made = answer.choices[0].message.tool_calls or []
    assert call.tool_calls == [c.model_dump(mode="json", exclude_unset=True) for c in made]
    assert call.tool_calls == CALLS
    assert call.response == ""
    assert call.manifest["finishReason"] == "tool_calls"
    assert call.manifest["toolCalls"]["mediaType"] == "application/json"
    assert call.manifest["runtimeSettings"]["tools"] == TOOLS


def test_a_chat_answer_without_tool_calls_names_no_tool_calls_object(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion("Sunny.", model="gpt-4o")))
    openai_client(wire, project).chat.completions.create(model="gpt-4o", messages=PROMPT)
    [call] = stored_calls(project.store)
    assert "toolCalls" not in call.manifest
    assert call.tool_calls is None


def chat_tool_chunks(fragments: list[tuple[int, dict[str, Any]]], *, text: str | None = None) -> list[Any]:
    """A streamed chat answer whose deltas carry ``tool_calls`` fragments ``(index, fields)``."""

    def chunk(delta: dict[str, Any], reason: str | None = None) -> tuple[None, dict[str, Any]]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
        return None, {
            "id": "chatcmpl-t",
            "object": "chat.completion.chunk",
            "created": 1_760_000_000,
            "model": "gpt-4o-2024-08-06",
            "choices": [choice],
        }

    events = [chunk({"role": "assistant", "content": text})]
    events += [chunk({"tool_calls": [{"index": index, **fields}]}) for index, fields in fragments]
    events.append(chunk({}, "tool_calls"))
    events.append((None, "[DONE]"))
    return events


def split_call(index: int, call: dict[str, Any], cuts: int) -> list[tuple[int, dict[str, Any]]]:
    """``call`` as the fragments a stream sends: the id, type and name first, then its arguments in pieces."""
    arguments = call["function"]["arguments"]
    step = max(1, len(arguments) // cuts)
    pieces = [arguments[i : i + step] for i in range(0, len(arguments), step)]
    head = {"id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}
    return [(index, head)] + [(index, {"function": {"arguments": piece}}) for piece in pieces]


def test_a_streamed_chat_answer_joins_interleaved_tool_call_fragments_by_index(
    wire: WireServer, project: Project
) -> None:
    first, second = split_call(0, CALLS[0], 4), split_call(1, CALLS[1], 3)
    interleaved = [first[0], second[0], *(x for pair in zip(first[1:], second[1:], strict=False) for x in pair)]
    interleaved += first[len(second) :] if len(first) > len(second) else second[len(first) :]
    wire.queue(CHAT, Reply(events=chat_tool_chunks(interleaved)))
    stream = openai_client(wire, project).chat.completions.create(
        model="gpt-4o", messages=PROMPT, tools=TOOLS, stream=True
    )
    chunks = list(stream)

    [call] = stored_calls(project.store)
    assert call.tool_calls == CALLS
    assert call.response == ""
    assert call.manifest["finishReason"] == "tool_calls"
    sent = sum(len(c.choices[0].delta.tool_calls or ()) for c in chunks if c.choices)
    assert sent == len(interleaved)


@settings(max_examples=200, deadline=None)
@given(
    arguments=st.lists(st.text(max_size=30), min_size=1, max_size=3),
    cuts=st.lists(st.integers(min_value=1, max_value=8), min_size=3, max_size=3),
    order=st.randoms(use_true_random=False),
)
def test_any_split_of_chat_tool_call_fragments_joins_to_the_whole_calls(
    arguments: list[str], cuts: list[int], order: Any
) -> None:
    """Property: however a stream cuts each call's arguments, and in whatever order the calls'
    fragments interleave (each call's own fragments in order), the joined calls are the whole ones."""
    from types import SimpleNamespace as NS

    calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": f"f{i}", "arguments": json.dumps(a)}}
        for i, a in enumerate(arguments)
    ]
    queues = [split_call(i, call, cuts[i]) for i, call in enumerate(calls)]
    merged: list[tuple[int, dict[str, Any]]] = []
    while any(queues):
        queue = order.choice([q for q in queues if q])
        merged.append(queue.pop(0))

    def obj(value: Any) -> Any:
        return NS(**{k: obj(v) for k, v in value.items()}) if isinstance(value, dict) else value

    reader = accumulator("openai-chat")
    for index, fields in merged:
        delta = NS(content=None, tool_calls=[obj({"index": index, "id": None, "type": None, **fields})])
        reader.add(NS(model="m", id="c", usage=None, choices=[NS(index=0, delta=delta, finish_reason=None)]))
    assert list(reader.answer().tool_calls) == calls


# --- OpenAI Responses -----------------------------------------------------------------------------

FUNCTION_CALL = {
    "id": "fc_1",
    "type": "function_call",
    "status": "completed",
    "call_id": "call_9",
    "name": "weather",
    "arguments": '{"city": "Paris"}',
}


def test_a_response_records_its_call_items_and_not_its_message_or_reasoning(wire: WireServer, project: Project) -> None:
    body = response_object("Checking.", model="gpt-5-2025-08-07", usage=responses_usage(30, 9))
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    body["output"] = [reasoning, *body["output"], FUNCTION_CALL]
    wire.queue(RESPONSES, Reply(body=body))
    answer = openai_client(wire, project).responses.create(model="gpt-5", input="Weather in Paris?")

    [call] = stored_calls(project.store)
    assert call.tool_calls == [answer.output[2].model_dump(mode="json", exclude_unset=True)] == [FUNCTION_CALL]
    assert call.response == "Checking."


def test_a_response_stream_cut_before_its_end_keeps_the_call_items_done(wire: WireServer, project: Project) -> None:
    begun = response_object(None, model="gpt-5-2025-08-07", id="resp_s", status="in_progress")
    bodies = [
        {"type": "response.created", "response": begun},
        {"type": "response.output_item.added", "output_index": 0, "item": {**FUNCTION_CALL, "status": "in_progress"}},
        {"type": "response.output_item.done", "output_index": 0, "item": FUNCTION_CALL},
        {"type": "response.completed", "response": {**begun, "status": "completed", "output": [FUNCTION_CALL]}},
    ]
    events = [(b["type"], {**b, "sequence_number": n}) for n, b in enumerate(bodies)]
    reply = Reply(events=events, hold_after=3)
    wire.queue(RESPONSES, reply)
    stream = openai_client(wire, project).responses.create(model="gpt-5", input="Weather?", stream=True)
    for event in stream:
        if event.type == "response.output_item.done":
            break
    stream.close()
    reply.release.set()

    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "incomplete"
    assert call.tool_calls == [FUNCTION_CALL]


# --- Anthropic ------------------------------------------------------------------------------------

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}


def test_a_message_records_its_tool_use_blocks(wire: WireServer, project: Project) -> None:
    body = message("Let me check.", model="claude-sonnet-4-5-20250929", stop="tool_use")
    body["content"].append(TOOL_USE)
    wire.queue(MESSAGES, Reply(body=body))
    answer = anthropic_client(wire, project).messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=PROMPT)

    [call] = stored_calls(project.store)
    assert call.tool_calls == [answer.content[1].model_dump(mode="json", exclude_unset=True)] == [TOOL_USE]
    assert call.response == "Let me check."
    assert call.manifest["finishReason"] == "tool_use"


def tool_use_events(pieces: list[str]) -> list[Any]:
    """A streamed message: a text block, then a tool_use block whose input comes in ``pieces``."""
    events = message_events(["Let me check."], model="claude-sonnet-4-5-20250929", stop="tool_use")
    start = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}
    block = [("content_block_start", {"type": "content_block_start", "index": 1, "content_block": start})]
    block += [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}},
        )
        for p in pieces
    ]
    block.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    at = [name for name, _ in events].index("message_delta")
    return events[:at] + block + events[at:]


def test_a_streamed_message_parses_its_tool_input_fragments(wire: WireServer, project: Project) -> None:
    pieces = ['{"ci', 'ty": ', '"Paris"}']
    wire.queue(MESSAGES, Reply(events=tool_use_events(pieces)))
    with anthropic_client(wire, project).messages.stream(
        model="claude-sonnet-4-5", max_tokens=64, messages=PROMPT
    ) as stream:
        final = stream.get_final_message()

    [call] = stored_calls(project.store)
    assert call.tool_calls == [final.content[1].model_dump(mode="json", exclude_unset=True)] == [TOOL_USE]
    assert call.response == "Let me check."


def test_a_message_stream_left_inside_a_tool_input_keeps_the_text_that_arrived(
    wire: WireServer, project: Project
) -> None:
    events = tool_use_events(['{"ci', 'ty": ', '"Paris"}'])
    held = [name for name, _ in events].index("content_block_delta", 4) + 2  # after two input fragments
    reply = Reply(events=events, hold_after=held)
    wire.queue(MESSAGES, reply)
    stream = anthropic_client(wire, project).messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=PROMPT, stream=True
    )
    fragments = 0
    for event in stream:  # the server holds the rest after the second fragment
        fragments += event.type == "content_block_delta" and event.delta.type == "input_json_delta"
        if fragments == 2:
            break
    stream.close()
    reply.release.set()

    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "incomplete"
    assert call.tool_calls == [{**TOOL_USE, "input": '{"city": '}]


# --- the published form ---------------------------------------------------------------------------


def test_the_manifest_of_a_turn_with_tool_calls_is_pinned(project: Project) -> None:
    """Known-answer vector: the manifest payload of one fixed turn with tool calls, byte for byte (the
    ``toolCalls`` object is the RFC 8785 JSON of the list; a manifest without them names none)."""
    from datetime import UTC, datetime

    from reviewtrail.models import ModelTurn, record_turn

    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    turn = ModelTurn(
        endpoint_host="api.example.test",
        provider=None,
        requested_model="m",
        reported_model="m-1",
        messages=[{"role": "user", "content": "Weather?"}],
        response_text="",
        started_at=at,
        ended_at=at,
        duration_ms=0,
        tool_calls=[CALLS[0]],
    )
    recorded = record_turn(project.store, turn)

    def ref(media_type: str, data: bytes) -> dict[str, Any]:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        return {"digest": digest, "mediaType": media_type, "pool": "agent-state", "size": len(data)}

    def jcs(value: Any) -> bytes:  # RFC 8785 for these values (ASCII text, no numbers): sorted, compact
        return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()

    expected = {
        "callType": "task",
        "cost": {"amount": None, "currency": "USD", "source": "unknown"},
        "endedAt": "2026-01-02T03:04:05.000000Z",
        "endpointHost": "api.example.test",
        "inputMessages": ref("application/json", jcs(turn.messages)),
        "model": "m-1",
        "redactionStatus": "not-applied",
        "reportedModel": "m-1",
        "requestedModel": "m",
        "response": ref("text/plain", b""),
        "runtimeSettings": {},
        "sessionId": None,
        "skillRefs": [],
        "specialist": None,
        "startedAt": "2026-01-02T03:04:05.000000Z",
        "systemPrompt": None,
        "toolCalls": ref("application/json", jcs([CALLS[0]])),
        "usage": {"inputTokens": None, "outputTokens": None, "totalTokens": None},
    }
    envelope = recorded.prompt_manifest.envelope
    assert envelope.payload_value == expected
    assert expected["toolCalls"]["digest"] == "sha256:bdc5882ed35936b6c397744022f65e1ec4b3a56a69b1584ff3e71e8b197f81b4"
    assert envelope.payload_hash == hashlib.sha256(jcs(expected)).hexdigest()
    assert recorded.manifest.tool_calls is not None
    assert project.store.cas.read(recorded.manifest.tool_calls) == jcs([CALLS[0]])
    assert envelope.payload_hash == "f63a31b8e78ad90a769eacfd44faba43f6ab3263aa6899a017bb2601b3cb25e7"


def test_a_recorded_turn_names_its_records_as_an_invocation_does(project: Project) -> None:
    """``record_turn`` answers what ``invoke`` answers about the two records: the usage record and both
    envelopes, the usage naming the manifest by id and payload hash, at the turn's times."""
    from datetime import UTC, datetime, timedelta

    from reviewtrail.models import ModelTurn, record_turn

    start = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    turn = ModelTurn(
        endpoint_host="api.example.test",
        provider=None,
        requested_model="m",
        reported_model=None,
        messages=[{"role": "user", "content": "Weather?"}],
        response_text="Sunny.",
        started_at=start,
        ended_at=start + timedelta(seconds=2),
        duration_ms=1999,
    )
    recorded = record_turn(project.store, turn)
    manifest_env, usage = recorded.manifest_envelope, recorded.usage
    assert manifest_env is recorded.prompt_manifest.envelope and usage is recorded.model_usage.record
    assert usage.manifest_id == manifest_env.id and usage.manifest_hash == manifest_env.payload_hash
    assert (usage.started_at, usage.ended_at, usage.duration_ms) == (turn.started_at, turn.ended_at, 1999)
    assert recorded.usage_envelope.subject == manifest_env.subject == f"model-call:{manifest_env.id}"


def test_verify_reports_a_manifests_tool_calls_object_deleted_or_changed(wire: WireServer, project: Project) -> None:
    """The tool calls are custody like the answer text: ``reviewtrail verify`` finds their object
    deleted, or its bytes changed, and names it (exit 4)."""
    import subprocess
    import sys

    body = chat_completion("", model="gpt-4o", finish="tool_calls")
    body["choices"][0]["message"] |= {"content": None, "tool_calls": CALLS}
    wire.queue(CHAT, Reply(body=body), Reply(body=body))
    client = openai_client(wire, project)
    for _ in range(2):
        client.chat.completions.create(model="gpt-4o", messages=PROMPT, tools=TOOLS)
    [call, _same] = stored_calls(project.store)
    ref = call.manifest["toolCalls"]
    path = project.store.cas.object_path(ref["pool"], ref["digest"].removeprefix("sha256:"))

    def verify() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "reviewtrail", "verify"],
            cwd=project.root,
            env=project.cli_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert verify().returncode == 0
    original = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(original.replace(b"Paris", b"Pari5"))
    changed = verify()
    assert changed.returncode == 4, changed.stdout + changed.stderr
    assert ref["digest"].removeprefix("sha256:") in changed.stdout + changed.stderr
    path.unlink()
    deleted = verify()
    assert deleted.returncode == 4, deleted.stdout + deleted.stderr
    assert ref["digest"].removeprefix("sha256:") in deleted.stdout + deleted.stderr
