"""A scripted backend for tests and the demo: canned answers, no network, and records that say so."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import BackendUnavailableError
from reviewtrail.models._completion import Completion, check_messages, check_settings

__all__ = ["SCRIPTED_HOST", "ScriptedBackend", "ScriptedCall"]

# Not a real host: manifests of scripted calls name this endpoint, so they can never pass
# for a real model's answers.
SCRIPTED_HOST = "scripted.local"

Responder = Callable[[list[dict[str, Any]], str | None], str]


@dataclass(frozen=True)
class ScriptedCall:
    """One request the scripted backend received."""

    messages: list[dict[str, Any]]
    system: str | None
    settings: dict[str, Any]


class ScriptedBackend:
    """Answers from a list (in order) or from ``responder(messages, system)``.

    Its endpoint host is ``scripted.local`` and it reports no token counts, so its calls
    are recorded with usage and cost unknown. Running out of scripted answers raises
    :class:`BackendUnavailableError`. ``calls`` lists every request received.
    """

    endpoint_host = SCRIPTED_HOST
    provider: str | None = None

    def __init__(self, responses: Sequence[str] | Responder, model: str = "scripted-model") -> None:
        if callable(responses):
            self._responder: Responder | None = responses
            self._responses: list[str] = []
        else:
            if isinstance(responses, (str, bytes)) or not all(isinstance(r, str) for r in responses):
                raise TypeError("responses must be a list of strings or a callable")
            self._responder = None
            self._responses = list(responses)
        self.model = model
        self.calls: list[ScriptedCall] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ScriptedBackend(model={self.model!r}, calls={len(self.calls)})"

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        system: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Completion:
        plain = check_messages(messages)
        sent = check_settings(settings, frozenset({"model", "messages"}))
        with self._lock:
            index = len(self.calls)
            self.calls.append(ScriptedCall(plain, system, sent))
            if self._responder is None and index >= len(self._responses):
                raise BackendUnavailableError(
                    f"scripted backend has no answer for call {index + 1} ({len(self._responses)} scripted)"
                )
        text = self._responses[index] if self._responder is None else self._responder(plain, system)
        if not isinstance(text, str):
            raise TypeError(f"scripted responder returned {type(text).__name__}, not str")
        return Completion(
            text=text,
            model_reported=self.model,
            input_tokens=None,
            output_tokens=None,
            raw={"scripted": True, "call": index + 1},
            settings=sent,
        )
