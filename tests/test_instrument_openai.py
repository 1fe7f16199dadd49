"""``reviewtrail.instrument`` on the real OpenAI SDK clients, pointed at a loopback server that speaks
the chat-completions and Responses wire formats (JSON and server-sent events).

What the store holds is compared with what crossed the wire: the request body the server received
and the JSON it sent back. The wrapper's caller is compared with a bare client's on the same replies.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import openai
import pytest

import reviewtrail
from reviewtrail.models import price
from support.llm_wire import (
    CHAT,
    RESPONSES,
    Project,
    Reply,
    WireServer,
    chat_chunks,
    chat_completion,
    chat_usage,
    openai_error,
    project_with_store,
    response_events,
    response_object,
    responses_usage,
    stored_calls,
    wire_server,
)

MESSAGES = [
    {"role": "system", "content": "You review claims."},
    {"role": "user", "content": "Does 2 + 2 = 4 hold?"},
]


wire = pytest.fixture(wire_server)
project = pytest.fixture(project_with_store)


def bare(wire: WireServer, *, max_retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=wire.openai_url, api_key="test-key", max_retries=max_retries)


def traced(wire: WireServer, project: Project, *, max_retries: int = 0, **options: Any) -> openai.OpenAI:
    client = bare(wire, max_retries=max_retries)
    return reviewtrail.instrument(client, store=project.store, project_dir=project.root, env=project.env, **options)


def body_without(received: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in received.items() if k not in names}


def test_a_chat_completion_is_recorded_as_the_wire_carried_it(wire: WireServer, project: Project) -> None:
    sent = chat_completion("It holds: 2 + 2 = 4.", model="gpt-4o-2024-08-06", usage=chat_usage(21, 9, cached=5))
    wire.queue(CHAT, Reply(body=sent), Reply(body=sent))
    plain = bare(wire).chat.completions.create(model="gpt-4o", messages=MESSAGES, temperature=0.2, seed=7)
    client = traced(wire, project, provider="openai")
    answer = client.chat.completions.create(model="gpt-4o", messages=MESSAGES, temperature=0.2, seed=7)

    assert type(answer) is type(plain)
    assert answer.model_dump() == plain.model_dump()
    received = wire.exchanges_of(CHAT)[1].json()
    [call] = stored_calls(project.store)
    assert call.messages == received["messages"]
    assert call.system is None  # the system message went inside the messages, as on the wire
    assert call.manifest["runtimeSettings"] == body_without(received, "model", "messages")
    assert call.response == sent["choices"][0]["message"]["content"]
    assert call.manifest["requestedModel"] == received["model"] == "gpt-4o"
    assert call.manifest["reportedModel"] == call.manifest["model"] == sent["model"]
    assert call.manifest["responseId"] == sent["id"]
    assert call.manifest["finishReason"] == "stop"
    assert call.manifest["endpointHost"] == wire.url.removeprefix("http://")  # the port too, as the backends write it
    assert call.manifest["usage"] == {"inputTokens": 21, "outputTokens": 9, "totalTokens": 30, "cacheReadTokens": 5}
    expected = price("openai", sent["model"], 21, 9, cache_read_tokens=5)
    assert expected.source == "genai-prices"
    assert call.manifest["cost"] == expected.to_json()
    assert "outcome" not in call.manifest and "error" not in call.manifest
    assert call.usage["manifestId"] == call.manifest_id
    assert call.usage["manifestHash"] == call.manifest_hash
    assert call.usage["usage"] == call.manifest["usage"]


def test_a_local_endpoint_is_not_priced_as_openai_unless_named(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion("ok", model="gpt-4o")))
    traced(wire, project).chat.completions.create(model="gpt-4o", messages=MESSAGES)
    [call] = stored_calls(project.store)
    assert call.manifest["cost"] == {"amount": None, "currency": "USD", "source": "unknown"}
    assert "provider" not in call.manifest
    assert call.manifest["usage"]["inputTokens"] == 21  # counted all the same


def test_a_streamed_chat_completion_is_recorded_when_it_ends_with_the_usage_it_reported(
    wire: WireServer, project: Project
) -> None:
    events = chat_chunks(["It ", "holds", "."], model="gpt-4o-2024-08-06", usage=chat_usage(30, 3))
    wire.queue(CHAT, Reply(events=events), Reply(events=events))
    options: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}
    plain = [c.model_dump() for c in bare(wire).chat.completions.create(model="gpt-4o", messages=MESSAGES, **options)]
    stream = traced(wire, project).chat.completions.create(model="gpt-4o", messages=MESSAGES, **options)

    assert type(stream) is openai.Stream
    seen = []
    for chunk in stream:
        seen.append(chunk.model_dump())
        if len(seen) < len(plain):
            assert stored_calls(project.store) == []  # nothing is recorded before the stream ends
    assert seen == plain
    [call] = stored_calls(project.store)  # recorded before the caller's loop saw the end
    sent = [e for e in wire.exchanges_of(CHAT)[1].sent if e != "[DONE]"]
    assert call.response == "".join(c["choices"][0]["delta"].get("content", "") for c in sent if c["choices"])
    assert call.response == "It holds."
    assert call.manifest["usage"] == {"inputTokens": 30, "outputTokens": 3, "totalTokens": 33, "cacheReadTokens": 0}
    assert call.manifest["reportedModel"] == "gpt-4o-2024-08-06"
    assert call.manifest["finishReason"] == "stop"
    assert call.manifest["runtimeSettings"] == body_without(wire.exchanges_of(CHAT)[1].json(), "model", "messages")
    assert "outcome" not in call.manifest


def test_a_stream_without_usage_records_no_guessed_counts(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(events=chat_chunks(["Yes."], model="gpt-4o")))
    for _ in traced(wire, project).chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True):
        pass
    [call] = stored_calls(project.store)
    assert call.response == "Yes."
    assert call.manifest["usage"] == {"inputTokens": None, "outputTokens": None, "totalTokens": None}
    assert call.manifest["cost"]["source"] == "unknown"


def test_a_stream_abandoned_midway_is_recorded_as_incomplete(wire: WireServer, project: Project) -> None:
    reply = Reply(events=chat_chunks(["one ", "two ", "three"], model="gpt-4o"), hold_after=3)
    wire.queue(CHAT, reply)
    stream = traced(wire, project).chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
    with stream:
        for number, _chunk in enumerate(stream):
            if number == 2:
                break
    reply.release.set()
    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "incomplete"
    assert call.response == "one two "  # what arrived before the caller left
    assert "error" not in call.manifest
    assert "finishReason" not in call.manifest


def test_a_stream_never_read_and_dropped_is_recorded_as_incomplete(wire: WireServer, project: Project) -> None:
    import gc

    wire.queue(CHAT, Reply(events=chat_chunks(["unread"], model="gpt-4o")))
    stream = traced(wire, project).chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
    del stream
    gc.collect()
    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "incomplete"
    assert call.response == ""


def test_a_429_then_success_inside_the_sdk_is_one_call_with_the_final_answer(
    wire: WireServer, project: Project
) -> None:
    limited = Reply(429, openai_error("Rate limit reached", "rate_limit_exceeded"), headers={"retry-after-ms": "1"})
    wire.queue(CHAT, limited, Reply(body=chat_completion("Second time lucky.", model="gpt-4o")))
    answer = traced(wire, project, max_retries=2).chat.completions.create(model="gpt-4o", messages=MESSAGES)

    assert answer.choices[0].message.content == "Second time lucky."
    assert [e.status for e in wire.exchanges_of(CHAT)] == [429, 200]
    [call] = stored_calls(project.store)
    assert call.response == "Second time lucky."
    assert "outcome" not in call.manifest


def test_a_5xx_the_sdk_finally_raises_is_recorded_as_failed_and_raised_unchanged(
    wire: WireServer, project: Project
) -> None:
    failing = Reply(500, openai_error("The server had an error", "server_error"))
    wire.queue(CHAT, failing, failing, failing, failing)
    with pytest.raises(openai.InternalServerError) as plain:
        bare(wire, max_retries=1).chat.completions.create(model="gpt-4o", messages=MESSAGES)
    with pytest.raises(openai.InternalServerError) as wrapped:
        traced(wire, project, max_retries=1).chat.completions.create(model="gpt-4o", messages=MESSAGES)

    assert type(wrapped.value) is type(plain.value)
    assert str(wrapped.value) == str(plain.value)
    assert wrapped.value.status_code == plain.value.status_code == 500
    assert wrapped.value.body == plain.value.body
    assert len(wire.exchanges_of(CHAT)) == 4  # the SDK's own retry, both times
    [call] = stored_calls(project.store)
    assert call.manifest["outcome"] == "failed"
    assert call.manifest["error"] == {"type": "InternalServerError", "message": str(plain.value), "status": 500}
    assert call.response == ""
    assert call.manifest["usage"] == {"inputTokens": None, "outputTokens": None, "totalTokens": None}
    assert call.manifest["requestedModel"] == "gpt-4o"
    assert "reportedModel" not in call.manifest


def test_a_responses_call_and_its_stream_are_recorded(wire: WireServer, project: Project) -> None:
    whole = response_object("Holds.", model="gpt-5-2025-08-07", usage=responses_usage(40, 2, cached=8))
    events = response_events(["Hol", "ds."], model="gpt-5-2025-08-07", usage=responses_usage(41, 3))
    wire.queue(RESPONSES, Reply(body=whole), Reply(events=events))
    client = traced(wire, project)
    answer = client.responses.create(model="gpt-5", input="Does 2 + 2 = 4 hold?", instructions="Be terse.")
    assert answer.output_text == "Holds."
    kinds = [event.type for event in client.responses.create(model="gpt-5", input=MESSAGES[1:], stream=True)]
    assert kinds == [data["type"] for _, data in events]

    first, second = stored_calls(project.store)
    received = wire.exchanges_of(RESPONSES)[0].json()
    assert first.messages == received["input"] == "Does 2 + 2 = 4 hold?"
    assert first.system == b"Be terse."
    assert first.manifest["systemPrompt"]["mediaType"] == "text/plain"
    assert first.manifest["runtimeSettings"] == body_without(received, "model", "input", "instructions")
    assert first.response == "Holds."
    assert first.manifest["reportedModel"] == "gpt-5-2025-08-07"
    assert first.manifest["usage"] == {"inputTokens": 40, "outputTokens": 2, "totalTokens": 42, "cacheReadTokens": 8}
    assert second.messages == wire.exchanges_of(RESPONSES)[1].json()["input"]
    assert second.response == "Holds."
    assert second.manifest["responseId"] == "resp_2"
    assert second.manifest["finishReason"] == "completed"
    assert second.manifest["usage"] == {"inputTokens": 41, "outputTokens": 3, "totalTokens": 44, "cacheReadTokens": 0}


def test_async_clients_are_recorded_the_same_way(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion("async whole", model="gpt-4o-mini-2024-07-18")))
    wire.queue(CHAT, Reply(events=chat_chunks(["async ", "stream"], model="gpt-4o-mini", usage=chat_usage(8, 2))))
    wire.queue(CHAT, Reply(500, openai_error("boom", "server_error")))

    async def main() -> tuple[str, list[str], type[BaseException]]:
        client = reviewtrail.instrument(
            openai.AsyncOpenAI(base_url=wire.openai_url, api_key="test-key", max_retries=0),
            store=project.store,
            project_dir=project.root,
            env=project.env,
        )
        whole = await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
        stream = await client.chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        assert type(stream) is openai.AsyncStream
        pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        try:
            await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
        except openai.APIStatusError as exc:
            return whole.choices[0].message.content or "", pieces, type(exc)
        raise AssertionError("the 500 was not raised")

    text, pieces, raised = asyncio.run(main())
    assert text == "async whole" and "".join(pieces) == "async stream"
    assert raised is openai.InternalServerError
    first, second, third = stored_calls(project.store)
    assert first.response == "async whole" and first.manifest["reportedModel"] == "gpt-4o-mini-2024-07-18"
    assert second.response == "async stream" and second.manifest["usage"]["inputTokens"] == 8
    assert third.manifest["outcome"] == "failed" and third.manifest["error"]["status"] == 500


def test_a_reviewer_call_reports_the_responses_model_not_the_requested_one(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion('{"verdict": "ready"}', model="gpt-4o-2024-11-20")))
    client = traced(wire, project)
    with reviewtrail.reviewer_call(
        skill="auto-review-loop", purpose="round-1-review", executor="codex", executor_model="claude-opus-4-1"
    ) as review:
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        review.verdict = "ready"
        review.review_completed = review.review_scope_complete = review.review_positive = True

    [trace] = review.traces
    assert trace.meta_path is not None and trace.request_path is not None and trace.response_path is not None
    meta = json.loads(trace.meta_path.read_text(encoding="utf-8"))
    request = json.loads(trace.request_path.read_text(encoding="utf-8"))
    for doc in (meta, request):
        assert doc["requested_reviewer_model"] == "gpt-4o"
        assert doc["reported_reviewer_model"] == "gpt-4o-2024-11-20"
        assert doc["reviewer_model"] == "gpt-4o-2024-11-20"
        assert doc["reviewer_model_source"] == "backend-reported"
        assert doc["review_independence"] == "cross-family"
        assert doc["acceptance_status"] == "accepted"
        assert doc["verdict"] == "ready"
    assert meta["backend"] == "openai" and request["tool"] == "openai.chat.completions.create"
    assert meta["input_tokens"] == 21 and meta["output_tokens"] == 9 and meta["status"] == "ok"
    assert trace.response_path.read_bytes() == b'{"verdict": "ready"}'
    assert json.loads(request["prompt"]) == {"messages": MESSAGES}
    [call] = stored_calls(project.store)
    assert call.response.encode() == trace.response_path.read_bytes()  # the same bytes in both places
    assert trace.acceptance_status == "accepted"


def test_a_response_without_a_model_leaves_the_reported_model_unknown(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion("ready", model="")))
    with reviewtrail.reviewer_call(skill="auto-review-loop", purpose="round-1", executor_model="claude-opus-4-1") as r:
        traced(wire, project).chat.completions.create(model="gpt-4o", messages=MESSAGES)
        r.verdict, r.review_completed, r.review_scope_complete, r.review_positive = "ready", True, True, True
    [trace] = r.traces
    assert trace.meta_path is not None
    meta = json.loads(trace.meta_path.read_text(encoding="utf-8"))
    assert meta["reported_reviewer_model"] is None  # never copied from the request
    assert meta["reviewer_model_source"] == "requested"
    assert meta["acceptance_status"] == "provisional"


def test_a_saved_reviewer_call_passes_trace_verify_and_an_edit_does_not(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion("Looks right.", model="gpt-4o-2024-08-06")))
    wire.queue(CHAT, Reply(500, openai_error("down", "server_error")))
    client = traced(wire, project)
    with reviewtrail.reviewer_call(skill="research-review", purpose="round-1", executor_model="claude-opus-4-1") as r:
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        r.verdict, r.review_completed = "almost", True
    with (
        pytest.raises(openai.InternalServerError),
        reviewtrail.reviewer_call(skill="research-review", purpose="round-2"),
    ):
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)

    def verify() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "reviewtrail", "trace", "verify", str(project.root)],
            cwd=project.root,
            env=project.cli_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )

    result = verify()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "match the ledger" in result.stdout
    [second] = [p for p in (project.root / ".aris" / "traces" / "research-review").glob("*/002-round-2.meta.json")]
    meta = json.loads(second.read_text(encoding="utf-8"))
    assert meta["status"] == "error" and meta["review_completed"] is False
    assert meta["error"]["type"] == "InternalServerError"
    [response] = (project.root / ".aris" / "traces" / "research-review").glob("*/001-round-1.response.md")
    response.write_text("Looks wrong.", encoding="utf-8")
    edited = verify()
    assert edited.returncode == 4
    assert "001-round-1.response.md" in edited.stdout


def test_raw_responses_copies_and_a_second_instrument_record_each_call_once(wire: WireServer, project: Project) -> None:
    for text in ("raw", "copied", "twice"):
        wire.queue(CHAT, Reply(body=chat_completion(text, model="gpt-4o")))
    client = traced(wire, project)
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=MESSAGES)
    assert raw.http_response.status_code == 200
    assert raw.parse().choices[0].message.content == "raw"
    client.with_options(timeout=30).chat.completions.create(model="gpt-4o", messages=MESSAGES)
    again = reviewtrail.instrument(client, store=project.store, project_dir=project.root, env=project.env)
    assert again is client
    client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert [c.response for c in stored_calls(project.store)] == ["raw", "copied", "twice"]


def test_a_call_that_cannot_be_recorded_is_an_error_not_a_silence(wire: WireServer, project: Project) -> None:
    from reviewtrail import app
    from reviewtrail.config import load_settings
    from reviewtrail.errors import ReviewtrailError

    wire.queue(CHAT, Reply(body=chat_completion("unrecorded", model="gpt-4o")))
    read_only = app.open_store(load_settings(project.env, cwd=project.root), read_only=True)
    client = reviewtrail.instrument(bare(wire), store=read_only, project_dir=project.root, env=project.env)
    with pytest.raises(ReviewtrailError):
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    read_only.close()
    assert stored_calls(project.store) == []


def test_what_is_not_an_sdk_client_is_refused() -> None:
    from reviewtrail.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="not an OpenAI or Anthropic SDK client"):
        reviewtrail.instrument(object())
