"""The model backend of each configured candidate agent (docs/human-review.md, "Agents file").
API keys come from the environment mapping the caller passes (the CLI passes the process
environment); nothing here reads the environment itself."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from typing import Any

from reviewtrail.errors import ConfigError
from reviewtrail.human_review.campaigns._agents_file import (
    AgentConfig,
    AnthropicBackendSpec,
    OpenAIBackendSpec,
    ScriptedBackendSpec,
)
from reviewtrail.models import AnthropicBackend, ModelBackend, OpenAICompatibleBackend, ScriptedBackend

__all__ = ["BackendFor", "backend_builder", "build_backend"]

#: How the runner gets the backend of an agent.
BackendFor = Callable[[AgentConfig], ModelBackend]


def build_backend(agent: AgentConfig, env: Mapping[str, str]) -> ModelBackend:
    """The backend ``agent`` calls. A key variable the agent names but ``env`` lacks (or holds
    empty) is a :class:`ConfigError` (exit 5) naming the agent and the variable."""
    spec = agent.backend
    if isinstance(spec, ScriptedBackendSpec):
        return ScriptedBackend(_scripted(spec, agent.id), model=agent.model)
    if isinstance(spec, OpenAIBackendSpec):
        key = _key(agent, spec.api_key_env, env) if spec.api_key_env is not None else None
        return OpenAICompatibleBackend(spec.endpoint, key, agent.model, provider=agent.provider, timeout=spec.timeout)
    assert isinstance(spec, AnthropicBackendSpec)
    return AnthropicBackend(_key(agent, spec.api_key_env, env), agent.model, spec.endpoint, timeout=spec.timeout)


def backend_builder(env: Mapping[str, str]) -> BackendFor:
    """``build_backend`` over ``env``, one backend per agent id (built on first use)."""
    built: dict[str, ModelBackend] = {}

    def backend_for(agent: AgentConfig) -> ModelBackend:
        if agent.id not in built:
            built[agent.id] = build_backend(agent, env)
        return built[agent.id]

    return backend_for


def _key(agent: AgentConfig, name: str, env: Mapping[str, str]) -> str:
    value = env.get(name)
    if not value:
        raise ConfigError(
            f"agent {agent.id}: the environment variable {name} (its API key) is not set", field="backend.apiKeyEnv"
        )
    return value


def _scripted(spec: ScriptedBackendSpec, agent_id: str) -> Callable[[list[dict[str, Any]], str | None], str]:
    """A responder: the scripted responses in order, cycling, or the template filled in."""
    if spec.template is not None:
        template = spec.template

        def fill(messages: list[dict[str, Any]], system: str | None) -> str:
            prompt = str(messages[-1].get("content", "")) if messages else ""
            return template.replace("{agent}", agent_id).replace("{prompt}", prompt)

        return fill
    answers = itertools.cycle(spec.responses or [])
    lock = threading.Lock()

    def next_answer(messages: list[dict[str, Any]], system: str | None) -> str:
        with lock:
            return next(answers)

    return next_answer
