"""What a call sends, read from the keyword arguments of an SDK method: plain JSON values, nothing sent
changed. Pure (no I/O), and no SDK is imported: its objects are read through their own ``to_dict``."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Api", "Request", "is_unset", "plain", "read_request"]

Api = Literal["openai-chat", "openai-responses", "anthropic"]

# Keyword arguments that shape the HTTP request but are not part of its body.
_OPTIONS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
# Per API: the argument holding the input, and the one holding the system prompt (if any).
_PROMPT: dict[Api, tuple[str, str | None]] = {
    "openai-chat": ("messages", None),
    "openai-responses": ("input", "instructions"),
    "anthropic": ("messages", "system"),
}
_TOOL = {
    "openai-chat": "openai.chat.completions.create",
    "openai-responses": "openai.responses.create",
    "anthropic": "anthropic.messages.create",
}


@dataclass(frozen=True)
class Request:
    """One call's request: the model asked for, the input and system prompt as sent, the other body
    fields (``settings``), and whether the answer is streamed."""

    api: Api
    tool: str
    requested_model: str | None
    messages: Any
    system: Any
    settings: dict[str, Any]
    stream: bool

    def prompt_document(self) -> dict[str, Any]:
        """The prompt-bearing fields by their wire names (the trace's prompt)."""
        input_name, system_name = _PROMPT[self.api]
        doc: dict[str, Any] = {}
        if system_name is not None and self.system is not None:
            doc[system_name] = self.system
        doc[input_name] = self.messages
        return doc


def is_unset(value: object) -> bool:
    """The SDKs' markers of an argument not given (``NOT_GIVEN``, ``omit``): never sent."""
    return type(value).__name__ in ("NotGiven", "Omit")


def plain(value: Any) -> Any:
    """``value`` as plain JSON values, as the SDK would send it: its models by their API names
    (fields set only), mappings and sequences copied, markers of unset arguments left out. A value
    with no JSON form (a non-finite number, an unknown object, a class) is kept as its text."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items() if not is_unset(v)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        try:
            return plain(to_dict(mode="json"))
        except TypeError:
            pass
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return plain(model_dump(mode="json", exclude_unset=True, by_alias=True))
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, Iterable):
        return [plain(v) for v in value]
    return str(value)


def read_request(api: Api, kwargs: dict[str, Any]) -> Request:
    """The request of one call from its keyword arguments. An input given as a one-pass iterable (a
    generator) is read into a list, and ``kwargs`` is changed to send that list: the same body."""
    input_name, system_name = _PROMPT[api]
    given = kwargs.get(input_name)
    if given is not None and not isinstance(given, (str, list, tuple, Mapping)) and isinstance(given, Iterable):
        kwargs[input_name] = given = list(given)
    settings: dict[str, Any] = {}
    for name, value in kwargs.items():
        if name in _OPTIONS or name in (input_name, system_name, "model") or is_unset(value):
            continue
        settings[name] = plain(value)
    extra = kwargs.get("extra_body")
    if isinstance(extra, Mapping):
        settings.update(plain(extra))  # sent in the body, over the named arguments
    model = kwargs.get("model")
    system = kwargs.get(system_name) if system_name is not None else None
    return Request(
        api=api,
        tool=_TOOL[api],
        requested_model=model if isinstance(model, str) and model else None,
        messages=None if given is None or is_unset(given) else plain(given),
        system=None if system is None or is_unset(system) else plain(system),
        settings=settings,
        stream=kwargs.get("stream") is True,
    )
