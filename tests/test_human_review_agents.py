"""The agents file of ``campaign run``: shape, refusals naming the entry and field (with the line
in YAML), and the backend each agent calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewtrail.errors import ConfigError, InvalidInputError
from reviewtrail.human_review.campaigns import AgentConfig, build_backend, parse_agents_file
from reviewtrail.models import AnthropicBackend, OpenAICompatibleBackend, ScriptedBackend


def entry(agent_id: str, **changes: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "id": agent_id,
        "model": "gpt-4o-mini",
        "provider": "openai",
        "executionAdapter": "chat-completions@1",
        "learnedAdapter": None,
        "catalogGeneration": "gen-2026-11",
        "backend": {"kind": "openai", "endpoint": "https://api.openai.com/v1", "apiKeyEnv": "OPENAI_API_KEY"},
    }
    wire.update(changes)
    return wire


YAML_FILE = """\
agents:
  - id: agent-a
    model: gpt-4o-mini
    provider: openai
    executionAdapter: chat-completions@1
    learnedAdapter: null
    catalogGeneration: gen-2026-11
    backend: {kind: openai, endpoint: https://api.openai.com/v1, apiKeyEnv: OPENAI_API_KEY}
  - id: agent-b
    model: claude-sonnet-4-5
    provider: anthropic
    executionAdapter: messages@1
    learnedAdapter: lora-7
    catalogGeneration: gen-2026-11
    backend: {kind: anthropic, apiKeyEnv: ANTHROPIC_API_KEY}
  - id: agent-c
    model: scripted
    provider: local
    executionAdapter: scripted@1
    catalogGeneration: gen-2026-11
    backend:
      kind: scripted
      responses: [first, second]
"""


def test_yaml_and_json_give_the_same_agents() -> None:
    from_yaml = parse_agents_file(YAML_FILE, "agents.yaml")
    from_json = parse_agents_file(json.dumps(yaml.safe_load(YAML_FILE)), "agents.json")
    assert from_yaml == from_json
    assert [a.id for a in from_yaml] == ["agent-a", "agent-b", "agent-c"]
    identity = from_yaml[1].identity()
    assert (identity.model, identity.provider, identity.learned_adapter) == ("claude-sonnet-4-5", "anthropic", "lora-7")


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("    model: claude-sonnet-4-5\n", "", "line 9: agents[1].model"),
        ("    learnedAdapter: lora-7\n", "    learnedAdapter: lora-7\n    colour: red\n", "line 14: agents[1].colour"),
        ("{kind: anthropic, apiKeyEnv", "{kind: anthropic, key: sk-1, apiKeyEnv", "line 15: agents[1].backend.key"),
        (
            "{kind: anthropic, apiKeyEnv: ANTHROPIC_API_KEY}",
            "{kind: anthropic}",
            "line 15: agents[1].backend.apiKeyEnv",
        ),
        ("{kind: anthropic,", "{kind: gemini,", "line 15: agents[1].backend.kind"),
        ("apiKeyEnv: ANTHROPIC_API_KEY", "apiKeyEnv: $KEY", "line 15: agents[1].backend.apiKeyEnv"),
        ("      responses: [first, second]\n", "", "line 21: agents[2].backend"),
        ("      responses: [first, second]\n", "      responses: []\n", "line 23: agents[2].backend.responses"),
        ("  - id: agent-c\n", "  - id: agent-a\n", "line 16: agents[2].id"),
        ("  - id: agent-c\n", "  - id: 'agent c'\n", "line 16: agents[2].id"),
        ("      responses: [first, second]\n", "      responses: [first, second]\nversion: 2\n", "line 24: version"),
    ],
)
def test_a_bad_entry_is_named_with_its_line(old: str, new: str, field: str) -> None:
    assert old in YAML_FILE
    with pytest.raises(InvalidInputError) as caught:
        parse_agents_file(YAML_FILE.replace(old, new, 1), "agents.yaml")
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("", "file"),
        ("- id: a\n", "line 1: file"),
        ("agents: []\n", "line 1: agents"),
        ("agents:\n  - &a {id: x}\n  - *a\n", "line 2: file"),
        ("agents: [\n", "line 2: file"),
        ('{"agents": [], "agents": []}', "file"),
        ('{"agents": [', "file"),
    ],
)
def test_a_bad_file_is_refused(text: str, field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_agents_file(text, "agents.json" if text.startswith("{") else "agents.yaml")
    assert caught.value.field == field


def test_json_errors_name_the_entry_and_field() -> None:
    text = json.dumps({"agents": [entry("agent-a"), entry("agent-b", catalogGeneration="")]})
    with pytest.raises(InvalidInputError) as caught:
        parse_agents_file(text, "agents.json")
    assert caught.value.field == "agents[1].catalogGeneration"


@pytest.mark.parametrize(
    ("changes", "field", "problem"),
    [
        ({"backend": {"kind": "openai", "timeout": 0}}, "agents[0].backend.timeout", "Input should be greater than 0"),
        (
            {"backend": {"kind": "openai", "timeout": True}},
            "agents[0].backend.timeout",
            "must be a number, not a boolean",
        ),
        (
            {"backend": {"kind": "gemini"}},
            "agents[0].backend.kind",
            "Input tag 'gemini' found using 'kind' does not match any of the expected tags: "
            "'openai', 'anthropic', 'scripted'",
        ),
        (
            {"backend": {"kind": "scripted"}},
            "agents[0].backend",
            "a scripted backend has either responses or a template",
        ),
        (
            {"backend": {"kind": "scripted", "responses": []}},
            "agents[0].backend.responses",
            "List should have at least 1 item",
        ),
        ({"settings": {str(i): i for i in range(33)}}, "agents[0].settings", "Dictionary should have at most 32 items"),
    ],
)
def test_a_refusal_says_what_is_wrong(changes: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_agents_file(json.dumps({"agents": [entry("agent-a", **changes)]}), "agents.json")
    assert (caught.value.field, str(caught.value)) == (field, f"{field}: {problem}")


REQUIRED = ("id", "model", "provider", "executionAdapter", "catalogGeneration", "backend")
BAD_VALUES: dict[str, Any] = {
    "id": "has space",
    "model": "",
    "provider": 7,
    "executionAdapter": "",
    "catalogGeneration": "-starts-with-dash",
    "learnedAdapter": "",
    "settings": "hot",
}


@st.composite
def broken_files(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int, str, str]:
    n = draw(st.integers(1, 5))
    agents = [entry(f"agent-{i}") for i in range(n)]
    bad = draw(st.integers(0, n - 1))
    how = draw(st.sampled_from(["missing", "unknown", "value"]))
    if how == "missing":
        field = draw(st.sampled_from(REQUIRED))
        del agents[bad][field]
    elif how == "unknown":
        field = draw(st.from_regex(r"\A[a-z][a-zA-Z]{0,12}\Z").filter(lambda f: f not in entry("x")))
        agents[bad][field] = draw(st.one_of(st.integers(), st.text(max_size=5)))
    else:
        field = draw(st.sampled_from(sorted(BAD_VALUES)))
        agents[bad][field] = BAD_VALUES[field]
    return agents, bad, field, how


@settings(max_examples=60, deadline=None)
@given(broken_files(), st.sampled_from(["json", "yaml"]))
def test_property_the_broken_entry_and_field_are_named(
    broken: tuple[list[dict[str, Any]], int, str, str], fmt: str
) -> None:
    agents, bad, field, how = broken
    doc = {"agents": agents}
    text = json.dumps(doc) if fmt == "json" else yaml.safe_dump(doc, sort_keys=False)
    with pytest.raises(InvalidInputError) as caught:
        parse_agents_file(text, f"agents.{fmt}")
    named = caught.value.field or ""
    assert named.endswith(f"agents[{bad}].{field}")
    if fmt == "yaml":
        line = int(named.split(":")[0].removeprefix("line "))
        shown = text.splitlines()[line - 1]
        assert (f"{field}:" in shown) if how != "missing" else shown.lstrip().startswith("- ")
        entry_starts = [i + 1 for i, t in enumerate(text.splitlines()) if t.startswith("- ")]
        assert entry_starts[bad] <= line < (entry_starts[bad + 1] if bad + 1 < len(entry_starts) else 10**9)
    else:
        assert named == f"agents[{bad}].{field}"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.from_regex(r"\A[a-z][a-z0-9-]{0,20}\Z"), min_size=1, max_size=6))
def test_property_valid_files_parse_and_ids_are_unique(ids: list[str]) -> None:
    text = json.dumps({"agents": [entry(i) for i in ids]})
    if len(set(ids)) == len(ids):
        assert [a.id for a in parse_agents_file(text, "a.json")] == ids
    else:
        with pytest.raises(InvalidInputError) as caught:
            parse_agents_file(text, "a.json")
        first_repeat = next(k for k, i in enumerate(ids) if i in ids[:k])
        assert caught.value.field == f"agents[{first_repeat}].id"


def agent(**changes: Any) -> AgentConfig:
    return parse_agents_file(json.dumps({"agents": [entry("agent-a", **changes)]}), "a.json")[0]


def test_scripted_responses_cycle_and_templates_fill_in() -> None:
    cycling = build_backend(agent(backend={"kind": "scripted", "responses": ["one", "two"]}), {})
    answers = [cycling.complete([{"role": "user", "content": f"p{i}"}]).text for i in range(5)]
    assert answers == ["one", "two", "one", "two", "one"]
    template = build_backend(agent(backend={"kind": "scripted", "template": "{agent} says {prompt}"}), {})
    assert template.complete([{"role": "user", "content": "hi {agent}"}]).text == "agent-a says hi {agent}"
    assert isinstance(template, ScriptedBackend) and template.model == "gpt-4o-mini"


def test_keys_come_from_the_given_environment_only() -> None:
    openai = build_backend(agent(), {"OPENAI_API_KEY": "sk-1"})
    assert isinstance(openai, OpenAICompatibleBackend) and openai.provider == "openai"
    with pytest.raises(ConfigError) as caught:
        build_backend(agent(), {})
    assert caught.value.field == "backend.apiKeyEnv" and "OPENAI_API_KEY" in str(caught.value)
    keyless = build_backend(agent(backend={"kind": "openai", "endpoint": "http://127.0.0.1:9/v1"}), {})
    assert isinstance(keyless, OpenAICompatibleBackend)
    anthropic = build_backend(agent(backend={"kind": "anthropic", "apiKeyEnv": "MY_KEY"}), {"MY_KEY": "k"})
    assert isinstance(anthropic, AnthropicBackend)
    with pytest.raises(ConfigError):
        build_backend(agent(backend={"kind": "anthropic", "apiKeyEnv": "MY_KEY"}), {"MY_KEY": ""})
