"""The agents file of ``campaign run``: the candidate agents and the backend each one calls
(docs/human-review.md, "Agents file"). Pure: text in, validated agents out, or an
:class:`InvalidInputError` naming the entry and field (``agents[1].model``; in YAML prefixed by
its line, ``line 7: agents[1].model``). API keys are never in the file: a backend names the
environment variable that holds its key."""

from __future__ import annotations

import json
from typing import Annotated, Any

import msgspec
import yaml
from msgspec import Meta

from reviewtrail._struct import FieldProblem, Model, parse, whole, words
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns._yaml_marks import Locate, key_lines, nearest, read_yaml
from reviewtrail.human_review.records._records import Ident
from reviewtrail.human_review.records._run_records import AgentIdentity

__all__ = [
    "MAX_AGENTS",
    "MAX_SCRIPTED_RESPONSES",
    "AgentConfig",
    "AnthropicBackendSpec",
    "BackendSpec",
    "OpenAIBackendSpec",
    "ScriptedBackendSpec",
    "parse_agents_file",
]

#: Agents one file may configure.
MAX_AGENTS = 64
#: Canned answers one scripted backend may hold.
MAX_SCRIPTED_RESPONSES = 1_000

EnvName = Annotated[str, Meta(pattern=whole(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"))]
Url = Annotated[str, Meta(pattern=whole(r"^https?://[^\s]+$"), max_length=2_000)]
Name = Annotated[str, Meta(min_length=1, max_length=200)]
Timeout = Annotated[float, Meta(gt=0, le=3_600)]


class OpenAIBackendSpec(Model, frozen=True, kw_only=True, rename="camel", tag_field="kind", tag="openai"):
    """An OpenAI-compatible chat-completions endpoint; ``apiKeyEnv`` names the variable holding
    its key (omitted: no key is sent, for a local server)."""

    endpoint: Url = "https://api.openai.com/v1"
    api_key_env: EnvName | None = None
    timeout: Timeout = 120.0


class AnthropicBackendSpec(Model, frozen=True, kw_only=True, rename="camel", tag_field="kind", tag="anthropic"):
    """The Anthropic Messages API; ``apiKeyEnv`` names the variable holding its key."""

    endpoint: Url = "https://api.anthropic.com"
    api_key_env: EnvName
    timeout: Timeout = 120.0


class ScriptedBackendSpec(Model, frozen=True, kw_only=True, rename="camel", tag_field="kind", tag="scripted"):
    """Canned answers, no network: ``responses`` (the n-th call gets the n-th, cycling) or a
    ``template`` in which ``{prompt}`` and ``{agent}`` are replaced by the prompt and agent id."""

    responses: Annotated[list[str], Meta(min_length=1, max_length=MAX_SCRIPTED_RESPONSES)] | None = None
    template: Annotated[str, Meta(min_length=1, max_length=100_000)] | None = None

    def __post_init__(self) -> None:
        if (self.responses is None) == (self.template is None):
            raise FieldProblem(None, "a scripted backend has either responses or a template")


BackendSpec = OpenAIBackendSpec | AnthropicBackendSpec | ScriptedBackendSpec


class AgentConfig(Model, frozen=True, kw_only=True, rename="camel"):
    """One candidate agent: its identity (recorded on every run) and its backend (not recorded:
    the prompt manifest of each call records the endpoint host and model)."""

    id: Ident
    model: Name
    provider: Name
    execution_adapter: Ident
    learned_adapter: Ident | None = None
    catalog_generation: Ident
    backend: BackendSpec
    settings: Annotated[dict[str, Any], Meta(max_length=32)] = msgspec.field(default_factory=dict)

    def identity(self) -> AgentIdentity:
        """The agent as recorded on its runs."""
        fields = msgspec.to_builtins(self)
        del fields["backend"], fields["settings"]
        return parse(AgentIdentity, fields, field="agent")


class _AgentsFile(Model, frozen=True, kw_only=True):
    agents: Annotated[list[AgentConfig], Meta(min_length=1, max_length=MAX_AGENTS)]


def parse_agents_file(text: str, name: str = "") -> list[AgentConfig]:
    """The agents of an agents file: JSON (``.json``, or text starting with ``{``) or YAML, a
    mapping whose one key ``agents`` lists the agents. Unknown fields, repeated agent ids, YAML
    anchors and aliases and repeated JSON keys are refused (:class:`InvalidInputError`)."""
    is_json = name.lower().endswith(".json") or text.lstrip().startswith("{")
    value, locate = _json(text) if is_json else _yaml(text)
    if not isinstance(value, dict):
        raise InvalidInputError("an agents file is a mapping with the key 'agents'", field=_at(locate, ()) + "file")
    try:
        parsed = parse(_AgentsFile, value, field="file")
    except InvalidInputError as exc:
        loc = _wire_loc(tuple(exc.field.split("."))) if exc.field and exc.field != "file" else ()
        raise InvalidInputError(words(exc).removeprefix("Value error, "), field=_at(locate, loc) + _path(loc)) from None
    seen: dict[str, int] = {}
    for index, agent in enumerate(parsed.agents):
        if agent.id in seen:
            loc = ("agents", str(index), "id")
            raise InvalidInputError(
                f"agent id {agent.id} repeats agents[{seen[agent.id]}]", field=_at(locate, loc) + _path(loc)
            )
        seen[agent.id] = index
    return list(parsed.agents)


_KINDS = frozenset({"openai", "anthropic", "scripted"})


def _wire_loc(loc: tuple[str, ...]) -> tuple[str, ...]:
    """The error location in wire names, without the union tag named after ``backend``."""
    return tuple(part for i, part in enumerate(loc) if not (i and loc[i - 1] == "backend" and part in _KINDS))


def _path(loc: tuple[str, ...]) -> str:
    """``agents[1].backend.apiKeyEnv`` from ``("agents", "1", "backend", "apiKeyEnv")``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if part.isdigit() else (f".{part}" if text else part)
    return text or "file"


def _at(locate: Locate, loc: tuple[str, ...]) -> str:
    line = nearest(locate, loc) if loc else locate.get(())
    return f"line {line}: " if line is not None else ""


def _json(text: str) -> tuple[Any, Locate]:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise InvalidInputError(f"the key {key!r} is given twice", field="file")
            out[key] = value
        return out

    try:
        return json.loads(text, object_pairs_hook=pairs), {}
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        problem = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidInputError(f"not valid JSON: {problem}", field="file") from None


def _yaml(text: str) -> tuple[Any, Locate]:
    def build(loader: yaml.SafeLoader, root: yaml.Node) -> tuple[Any, Locate]:
        locate = key_lines(root)
        locate[()] = root.start_mark.line + 1
        return loader.construct_document(root), locate

    found = read_yaml(text, build)
    if found is None:
        raise InvalidInputError("the agents file is empty", field="file")
    return found
