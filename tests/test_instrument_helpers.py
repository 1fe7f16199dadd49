"""The SDKs' other ways to call on an instrumented client: OpenAI's ``parse`` (structured output: the
SDK sends its request without ``create``) and ``stream`` (a manager over ``create``), for chat
completions and Responses, and Anthropic's ``beta.messages``. Each call is recorded once, with the
body that crossed the wire as its settings (the pydantic class given for the answer's format
recorded as the schema the SDK sent for it), and a reviewer trace names the method called.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import anthropic
import openai
import pydantic
import pytest

import reviewtrail
from support.llm_wire import (
    CHAT,
    MESSAGES,
    RESPONSES,
    Project,
    Reply,
    WireServer,
    chat_chunks,
    chat_completion,
    chat_usage,
    message,
    message_events,
    project_with_store,
    response_events,
    response_object,
    responses_usage,
    stored_calls,
    wire_server,
)

PROMPT = [{"role": "user", "content": "Weather in Paris?"}]


class Weather(pydantic.BaseModel):
    city: str
    celsius: int


ANSWER = '{"city":"Paris","celsius":21}'


wire = pytest.fixture(wire_server)
project = pytest.fixture(project_with_store)


def traced(client: Any, project: Project) -> Any:
    return reviewtrail.instrument(client, store=project.store, project_dir=project.root, env=project.env)


def sent_settings(wire: WireServer, path: str, *prompt_fields: str) -> dict[str, Any]:
    """The body of the one request on ``path`` without its model and prompt fields."""
    [exchange] = wire.exchanges_of(path)
    return sent_settings_of(exchange, *prompt_fields)


def sent_settings_of(exchange: Any, *prompt_fields: str) -> dict[str, Any]:
    return {k: v for k, v in exchange.json().items() if k not in ("model", *prompt_fields)}


def test_chat_parse_is_recorded_with_the_schema_it_sent(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion(ANSWER, model="gpt-4o-2024-08-06", usage=chat_usage(50, 9))))
    client = traced(openai.OpenAI(base_url=wire.openai_url, api_key="k", max_retries=0), project)
    completion = client.chat.completions.parse(model="gpt-4o", messages=PROMPT, response_format=Weather)
    assert completion.choices[0].message.parsed == Weather(city="Paris", celsius=21)

    [call] = stored_calls(project.store)
    settings = sent_settings(wire, CHAT, "messages")
    assert settings["response_format"]["json_schema"]["name"] == "Weather"
    assert call.manifest["runtimeSettings"] == settings
    assert call.messages == PROMPT
    assert call.response == ANSWER
    assert call.manifest["usage"]["inputTokens"] == 50
    assert call.manifest["reportedModel"] == "gpt-4o-2024-08-06"


def test_async_chat_parse_is_recorded_the_same_way(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion(ANSWER, model="gpt-4o-2024-08-06")))

    async def main() -> Any:
        client = traced(openai.AsyncOpenAI(base_url=wire.openai_url, api_key="k", max_retries=0), project)
        return await client.chat.completions.parse(model="gpt-4o", messages=PROMPT, response_format=Weather)

    completion = asyncio.run(main())
    assert completion.choices[0].message.parsed == Weather(city="Paris", celsius=21)
    [call] = stored_calls(project.store)
    assert call.manifest["runtimeSettings"] == sent_settings(wire, CHAT, "messages")
    assert call.response == ANSWER


def test_chat_stream_helper_is_recorded_once_through_create(wire: WireServer, project: Project) -> None:
    events = chat_chunks(['{"city":"Paris",', '"celsius":21}'], model="gpt-4o-2024-08-06", usage=chat_usage(50, 9))
    wire.queue(CHAT, Reply(events=events))
    client = traced(openai.OpenAI(base_url=wire.openai_url, api_key="k", max_retries=0), project)
    with client.chat.completions.stream(
        model="gpt-4o", messages=PROMPT, response_format=Weather, stream_options={"include_usage": True}
    ) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.parsed == Weather(city="Paris", celsius=21)

    [call] = stored_calls(project.store)
    assert call.response == ANSWER
    assert call.manifest["runtimeSettings"] == sent_settings(wire, CHAT, "messages")
    assert call.manifest["usage"]["outputTokens"] == 9


def test_responses_parse_is_recorded_with_the_text_format_it_sent(wire: WireServer, project: Project) -> None:
    body = response_object(ANSWER, model="gpt-5-2025-08-07", usage=responses_usage(30, 9))
    wire.queue(RESPONSES, Reply(body=body))
    client = traced(openai.OpenAI(base_url=wire.openai_url, api_key="k", max_retries=0), project)
    response = client.responses.parse(
        model="gpt-5", input="Weather in Paris?", instructions="Answer in JSON.", text_format=Weather
    )
    assert response.output_parsed == Weather(city="Paris", celsius=21)

    [call] = stored_calls(project.store)
    settings = sent_settings(wire, RESPONSES, "input", "instructions")
    assert settings["text"]["format"]["name"] == "Weather"
    assert "text_format" not in json.dumps(call.manifest["runtimeSettings"])
    assert call.manifest["runtimeSettings"] == settings
    assert call.system == b"Answer in JSON."
    assert call.response == ANSWER


def test_responses_stream_helper_is_recorded_once(wire: WireServer, project: Project) -> None:
    events = response_events(
        ['{"city":"Paris",', '"celsius":21}'], model="gpt-5-2025-08-07", usage=responses_usage(30, 9)
    )
    wire.queue(RESPONSES, Reply(events=events))
    client = traced(openai.OpenAI(base_url=wire.openai_url, api_key="k", max_retries=0), project)
    with client.responses.stream(model="gpt-5", input="Weather in Paris?", text_format=Weather) as stream:
        final = stream.get_final_response()
    assert final.output_parsed == Weather(city="Paris", celsius=21)

    [call] = stored_calls(project.store)
    assert call.response == ANSWER
    assert call.manifest["runtimeSettings"] == sent_settings(wire, RESPONSES, "input")
    assert call.manifest["finishReason"] == "completed"


# --- Anthropic beta, and the method's name in reviewer traces -------------------------------------


def test_anthropic_beta_messages_create_and_stream_are_recorded(wire: WireServer, project: Project) -> None:
    body = message("Let me check.", model="claude-sonnet-4-5-20250929", stop="tool_use")
    body["content"].append({"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}})
    wire.queue(MESSAGES, Reply(body=body), Reply(events=message_events(["Sun", "ny."], model="claude-sonnet-4-5")))
    client = traced(anthropic.Anthropic(base_url=wire.url, api_key="k", max_retries=0), project)
    request: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": PROMPT}
    client.beta.messages.create(**request, betas=["token-efficient-tools-2025-02-19"])
    with client.beta.messages.stream(**request) as stream:
        final = stream.get_final_message()

    first, second = stored_calls(project.store)
    assert first.response == "Let me check."
    assert first.tool_calls == [body["content"][1]]
    assert first.manifest["finishReason"] == "tool_use"
    assert second.response == "".join(b.text for b in final.content if b.type == "text") == "Sunny."
    assert wire.exchanges_of(MESSAGES)[1].json()["stream"] is True
    assert second.manifest["runtimeSettings"] == sent_settings_of(wire.exchanges_of(MESSAGES)[1], "messages")


@pytest.mark.parametrize(
    ("call", "tool"),
    [
        (lambda c: c.chat.completions.parse(model="gpt-4o", messages=PROMPT, response_format=Weather), "parse"),
        (lambda c: c.chat.completions.create(model="gpt-4o", messages=PROMPT), "create"),
    ],
    ids=["parse", "create"],
)
def test_a_reviewer_trace_names_the_method_that_made_the_call(
    wire: WireServer, project: Project, call: Any, tool: str
) -> None:
    wire.queue(CHAT, Reply(body=chat_completion(ANSWER, model="gpt-4o-2024-08-06")))
    client = traced(openai.OpenAI(base_url=wire.openai_url, api_key="k", max_retries=0), project)
    with reviewtrail.reviewer_call(skill="research-review", purpose="round-1") as handle:
        call(client)
        handle.verdict, handle.review_completed = "ready", True
    [trace] = handle.traces
    assert trace.request_path is not None
    request = json.loads(trace.request_path.read_text(encoding="utf-8"))
    assert request["tool"] == f"openai.chat.completions.{tool}"
    assert request["reported_reviewer_model"] == "gpt-4o-2024-08-06"


def test_a_tool_runner_is_recorded_as_the_beta_create_calls_it_makes(wire: WireServer, project: Project) -> None:
    first = message("Let me check.", model="claude-sonnet-4-5", stop="tool_use")
    first["content"].append({"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}})
    wire.queue(MESSAGES, Reply(body=first), Reply(body=message("Rainy.", model="claude-sonnet-4-5", id="msg_2")))
    client = traced(anthropic.Anthropic(base_url=wire.url, api_key="k", max_retries=0), project)

    @anthropic.beta_tool
    def weather(city: str) -> str:
        """The weather of a city."""
        return "rainy"

    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=64, messages=PROMPT, tools=[weather]
    )
    final = runner.until_done()
    assert final.content[0].type == "text" and final.content[0].text == "Rainy."
    calls = stored_calls(project.store)
    assert [c.manifest["responseId"] for c in calls] == ["msg_1", "msg_2"]
    assert len(wire.exchanges_of(MESSAGES)) == 2
    assert calls[1].messages == wire.exchanges_of(MESSAGES)[1].json()["messages"]  # the tool's result included


def test_python_md_lists_every_recorded_method_and_says_the_others_are_not() -> None:
    from reviewtrail.instrumentation._instrument import _METHODS

    doc = (Path(__file__).parents[1] / "docs" / "agents" / "python.md").read_text(encoding="utf-8")
    section = doc.split("### Which SDK methods are recorded", 1)[1].split("\n#", 1)[0]
    listed = set(re.findall(r"^- `((?:openai|anthropic)\.[a-z_.]+)`$", section, flags=re.MULTILINE))
    recorded = {".".join((sdk, *path, name)) for sdk, methods in _METHODS.items() for path, name, _, _ in methods}
    assert listed == recorded
    assert "Every other method is not recorded" in section
