"""With ``--capture-content``, a recorded SDK request goes out in the GenAI conventions' message schema:
every message with its role (system, developer, user, assistant, tool), each part by kind (text,
tool_call, tool_call_response...), and the instructions an API takes apart from the history as
``gen_ai.system_instructions``. Any other prompt stays one ``user`` text part."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reviewtrail
from reviewtrail.tracing.files import iter_runs
from reviewtrail.tracing.files._reader import find_run
from reviewtrail.tracing.otel._otel import spans_for_run
from reviewtrail.tracing.otel._otel_messages import input_messages
from support.llm_wire import CHAT, Project, Reply, WireServer, chat_completion, project_with_store, wire_server
from test_trace_otel import CallSpec, RunSpec, attrs, meta_doc, request_doc, write_run

wire = pytest.fixture(wire_server)
project = pytest.fixture(project_with_store)


def exported(tmp_path: Path, tool: str, prompt: Any) -> tuple[Any, Any]:
    """(``gen_ai.input.messages``, ``gen_ai.system_instructions`` or None) of one call's span."""
    text = prompt if isinstance(prompt, str) else json.dumps(prompt)
    request = request_doc(1, "r", tool=tool, prompt=text)
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request, meta_doc(1, "r"), "ok")]))
    _, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"), content=True)
    a = attrs(span)
    system = a.get("gen_ai.system_instructions")
    return json.loads(a["gen_ai.input.messages"]), None if system is None else json.loads(system)


def text(content: str) -> dict[str, str]:
    return {"type": "text", "content": content}


def test_chat_completions_keep_system_assistant_and_tool_roles(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
    prompt = {
        "messages": [
            {"role": "system", "content": "You review claims."},
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "rainy, 14C"},
        ]
    }
    messages, system = exported(tmp_path, "openai.chat.completions.create", prompt)
    assert messages == [
        {"role": "system", "parts": [text("You review claims.")]},
        {"role": "developer", "parts": [text("Be brief.")]},
        {"role": "user", "parts": [text("Weather in Paris?")]},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "call_1", "name": "weather", "arguments": {"city": "Paris"}}],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "rainy, 14C"}]},
    ]
    assert system is None  # chat's system messages are part of the history


def test_responses_input_items_and_instructions(tmp_path: Path) -> None:
    prompt = {
        "instructions": "Answer in JSON.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
            {"type": "function_call", "call_id": "fc_1", "name": "weather", "arguments": '{"city":"Paris"}'},
            {"type": "function_call_output", "call_id": "fc_1", "output": "rainy"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Rainy."}]},
        ],
    }
    messages, system = exported(tmp_path, "openai.responses.parse", prompt)
    assert system == [text("Answer in JSON.")]
    assert messages == [
        {"role": "user", "parts": [text("Weather in Paris?")]},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "fc_1", "name": "weather", "arguments": {"city": "Paris"}}],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "fc_1", "response": "rainy"}]},
        {"role": "assistant", "parts": [text("Rainy.")]},
    ]


def test_responses_input_text_is_one_user_message(tmp_path: Path) -> None:
    messages, system = exported(tmp_path, "openai.responses.create", {"input": "Hi"})
    assert (messages, system) == ([{"role": "user", "parts": [text("Hi")]}], None)


def test_anthropic_system_tool_use_and_tool_results(tmp_path: Path) -> None:
    prompt = {
        "system": [{"type": "text", "text": "You review claims.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Need the tool.", "signature": "sig"},
                    {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "rainy"},
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
    }
    messages, system = exported(tmp_path, "anthropic.beta.messages.stream", prompt)
    assert system == [text("You review claims.")]
    assert messages == [
        {"role": "user", "parts": [text("Weather in Paris?")]},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "Need the tool."},
                {"type": "tool_call", "id": "toolu_1", "name": "weather", "arguments": {"city": "Paris"}},
            ],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_1", "response": "rainy"}]},
        {"role": "user", "parts": [text("And tomorrow?")]},
    ]


@pytest.mark.parametrize(
    ("tool", "prompt"),
    [
        ("spawn_agent", {"messages": [{"role": "system", "content": "x"}]}),  # not an SDK method
        ("anthropic.messages.create", "plain text, not JSON"),
        ("openai.chat.completions.create", {"messages": "not a list"}),
        ("openai.responses.create", {"input": 5}),
        ("anthropic.messages.create", {"messages": [], "tools": []}),  # a field no prompt has
    ],
)
def test_any_other_prompt_is_one_user_text_part(tmp_path: Path, tool: str, prompt: Any) -> None:
    messages, system = exported(tmp_path, tool, prompt)
    whole = prompt if isinstance(prompt, str) else json.dumps(prompt)
    assert (messages, system) == ([{"role": "user", "parts": [text(whole)]}], None)


_ROLES = st.sampled_from(["system", "developer", "user", "assistant"])
_TEXT = st.text(max_size=20)


@given(st.lists(st.tuples(_ROLES, _TEXT, st.booleans()), max_size=8))
def test_chat_messages_keep_their_roles_and_text_in_order(given_messages: list[tuple[str, str, bool]]) -> None:
    sent = [
        {"role": role, "content": [{"type": "text", "text": body}] if as_parts else body}
        for role, body, as_parts in given_messages
    ]
    read = input_messages(json.dumps({"messages": sent}), "openai.chat.completions.create")
    assert read is not None
    messages, system = read
    assert system is None
    assert [(m["role"], m["parts"]) for m in messages] == [(r, [text(b)]) for r, b, _ in given_messages]


@given(st.lists(st.tuples(st.sampled_from(["text", "tool_result"]), _TEXT), min_size=1, max_size=8))
def test_anthropic_user_turns_split_into_user_and_tool_messages_in_order(blocks: list[tuple[str, str]]) -> None:
    content = [
        {"type": "text", "text": body}
        if kind == "text"
        else {"type": "tool_result", "tool_use_id": body, "content": ""}
        for kind, body in blocks
    ]
    read = input_messages(json.dumps({"messages": [{"role": "user", "content": content}]}), "anthropic.messages.create")
    assert read is not None
    messages, _ = read
    flat = [(m["role"], p) for m in messages for p in m["parts"]]
    expected = [
        ("user", text(body)) if kind == "text" else ("tool", {"type": "tool_call_response", "id": body, "response": ""})
        for kind, body in blocks
    ]
    assert flat == expected
    assert all(a["role"] != b["role"] for a, b in pairwise(messages))  # runs joined


def test_an_instrumented_chat_call_exports_its_roles(wire: WireServer, project: Project) -> None:
    wire.queue(CHAT, Reply(body=chat_completion("Rainy.", model="gpt-4o-2024-08-06")))
    client = reviewtrail.instrument(
        openai.OpenAI(base_url=wire.openai_url, api_key="k", max_retries=0),
        store=project.store,
        project_dir=project.root,
        env=project.env,
    )
    sent = [
        {"role": "system", "content": "You review claims."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Checking."},
    ]
    with reviewtrail.reviewer_call(skill="research-review", purpose="round-1") as handle:
        client.chat.completions.create(model="gpt-4o", messages=sent)  # type: ignore[arg-type]
        handle.verdict, handle.review_completed = "ready", True
    [run] = list(iter_runs(project.root, "research-review"))
    _, span = spans_for_run(run, content=True)
    messages = json.loads(attrs(span)["gen_ai.input.messages"])
    assert messages == [{"role": m["role"], "parts": [text(m["content"])]} for m in sent]
