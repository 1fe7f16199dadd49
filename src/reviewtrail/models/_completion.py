"""What every backend returns, and the interface every backend offers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from reviewtrail.canonical import canonical_json
from reviewtrail.errors import InvalidInputError
from reviewtrail.models._records import HttpAttempt

__all__ = ["Completion", "ModelBackend", "check_messages", "check_settings", "count", "text_or_none"]

_TEXT_LIMIT = 512


@dataclass(frozen=True)
class Completion:
    """One model answer.

    ``model_reported`` is the model the endpoint said answered (``None`` when it said
    nothing); token counts are ``None`` when not reported. ``input_tokens`` counts every
    input token, cached ones included; the cache counts split out the prompt-cache reads
    and writes (5-minute and 1-hour writes apart where the provider reports them).
    ``response_id`` and ``finish_reason`` are the endpoint's own (``stop_reason`` for
    Anthropic). ``attempts`` lists each HTTP request made, retries included (empty for a
    backend that makes none). ``settings`` are the request settings actually sent (the
    caller's, plus any default the backend filled in). ``raw`` is the decoded response
    body, for debugging: it is not recorded.
    """

    text: str
    model_reported: str | None
    input_tokens: int | None
    output_tokens: int | None
    raw: Any = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    cache_write_5m_tokens: int | None = None
    cache_write_1h_tokens: int | None = None
    response_id: str | None = None
    finish_reason: str | None = None
    attempts: tuple[HttpAttempt, ...] = ()


@runtime_checkable
class ModelBackend(Protocol):
    """A model endpoint: ``complete`` sends one conversation and returns one answer.

    ``endpoint_host`` is recorded in the prompt manifest; ``provider`` is the
    ``genai-prices`` provider id used to price the call (``None``: cost unknown).
    Failures to reach or understand the endpoint raise
    :class:`~reviewtrail.errors.BackendUnavailableError`.
    """

    @property
    def model(self) -> str: ...

    @property
    def endpoint_host(self) -> str: ...

    @property
    def provider(self) -> str | None: ...

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        system: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Completion: ...


def check_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A plain copy of ``messages`` after checking each has a string ``role`` and a ``content``,
    and that the list has a canonical JSON form (it is stored as RFC 8785 bytes)."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidInputError("must be a list of {role, content} objects", field="messages")
    plain: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidInputError("must be an object with 'role' and 'content'", field=f"messages[{i}]")
        role = message.get("role")
        if not isinstance(role, str) or not role:
            raise InvalidInputError("must be a non-empty string", field=f"messages[{i}].role")
        if "content" not in message:
            raise InvalidInputError("is missing", field=f"messages[{i}].content")
        plain.append(dict(message))
    canonical_json(plain, field="messages")
    return plain


def check_settings(settings: Mapping[str, Any] | None, reserved: frozenset[str]) -> dict[str, Any]:
    """A plain copy of ``settings`` (sent as-is in the request body), refusing keys the backend owns."""
    plain = dict(settings or {})
    for key in plain:
        if not isinstance(key, str):
            raise InvalidInputError(f"setting names must be strings, got {key!r}", field="settings")
        if key in reserved:
            raise InvalidInputError(f"{key!r} is set by the backend, not in settings", field=f"settings.{key}")
    canonical_json(plain, field="settings")
    return plain


def count(value: object) -> int | None:
    """A reported token count, or ``None`` when absent or not a non-negative integer."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def text_or_none(value: object) -> str | None:
    """A non-empty string the endpoint sent (an id, a finish reason) of at most 512 characters, or ``None``."""
    return value if isinstance(value, str) and 0 < len(value) <= _TEXT_LIMIT else None
