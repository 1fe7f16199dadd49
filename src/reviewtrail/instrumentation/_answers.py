"""What an answer says, read from the SDK's own response objects and stream events: its text, its tool
calls, the model that answered, its id, why it ended and its token counts. Pure; attributes are read
by name, so no SDK is imported, and a field the endpoint did not send reads as unknown.

Token counts are read with ``genai-prices``' extractor of the response format (as every other call
the project records), from the usage object as the endpoint sent it: for a stream, the usage its
events carried (OpenAI chat: the last chunk, sent when ``stream_options.include_usage`` is set;
Responses: the final response; Anthropic: ``message_start`` updated by ``message_delta``).

Tool calls are kept in the endpoint's own JSON shape: OpenAI chat ``tool_calls`` (a stream's
fragments joined by their ``index``), Responses output items whose type ends in ``_call`` (a
stream's ``response.output_item.done`` items when no final response arrived), Anthropic content
blocks whose type ends in ``tool_use`` (a stream's ``input_json_delta`` fragments parsed at the
end; the text as it arrived when it does not parse, as in a stream that stopped midway).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from reviewtrail.instrumentation._request import Api, plain
from reviewtrail.models import ResponseFormat, Tokens, extract_tokens

__all__ = ["Accumulator", "Answer", "accumulator", "answer_of"]

_FORMATS: dict[Api, ResponseFormat] = {
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
}


@dataclass(frozen=True)
class Answer:
    """What the endpoint answered; ``None`` (or empty text) where it said nothing."""

    text: str = ""
    model: str | None = None
    response_id: str | None = None
    finish_reason: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    tool_calls: tuple[Any, ...] = ()


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _tokens(api: Api, usage: Any) -> Tokens:
    if usage is None:
        return Tokens()
    return extract_tokens({"usage": usage if isinstance(usage, dict) else plain(usage)}, _FORMATS[api])


def _chat_text(choice: Any) -> str:
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else ""


def _chat_tool_calls(choice: Any) -> tuple[Any, ...]:
    calls = getattr(getattr(choice, "message", None), "tool_calls", None)
    return tuple(plain(call) for call in calls) if calls else ()


def _is_call(item: Any, suffix: str) -> bool:
    """Whether ``item`` is a tool call: a Responses output item of a type ``*_call``, an Anthropic
    block of a type ``*tool_use``."""
    kind = getattr(item, "type", None)
    return isinstance(kind, str) and kind.endswith(suffix)


def _responses_tool_calls(response: Any) -> tuple[Any, ...]:
    return tuple(plain(item) for item in getattr(response, "output", None) or () if _is_call(item, "_call"))


def _anthropic_tool_calls(message: Any) -> tuple[Any, ...]:
    return tuple(plain(block) for block in getattr(message, "content", None) or () if _is_call(block, "tool_use"))


def _responses_text(response: Any) -> str:
    parts: list[str] = []
    for item in getattr(response, "output", None) or ():
        if getattr(item, "type", None) != "message":
            continue
        for part in getattr(item, "content", None) or ():
            if getattr(part, "type", None) == "output_text" and isinstance(getattr(part, "text", None), str):
                parts.append(part.text)
    return "".join(parts)


def _anthropic_text(message: Any) -> str:
    return "".join(
        block.text
        for block in getattr(message, "content", None) or ()
        if getattr(block, "type", None) == "text" and isinstance(getattr(block, "text", None), str)
    )


def answer_of(api: Api, response: Any) -> Answer:
    """The answer of a whole (not streamed) response object."""
    model, response_id = _text_or_none(getattr(response, "model", None)), _text_or_none(getattr(response, "id", None))
    usage = _tokens(api, getattr(response, "usage", None))
    if api == "openai-chat":
        choices = getattr(response, "choices", None) or ()
        first = next((c for c in choices if getattr(c, "index", 0) == 0), None)
        finish = _text_or_none(getattr(first, "finish_reason", None))
        return Answer(_chat_text(first), model, response_id, finish, usage, _chat_tool_calls(first))
    if api == "openai-responses":
        status = _text_or_none(getattr(response, "status", None))
        return Answer(_responses_text(response), model, response_id, status, usage, _responses_tool_calls(response))
    stop = _text_or_none(getattr(response, "stop_reason", None))
    return Answer(_anthropic_text(response), model, response_id, stop, usage, _anthropic_tool_calls(response))


class Accumulator(Protocol):
    """Reads a stream's events one by one (cheaply: each is only looked at), then tells the answer."""

    def add(self, event: Any) -> None: ...

    def answer(self) -> Answer: ...


class _ChatChunks:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.model: str | None = None
        self.id: str | None = None
        self.finish: str | None = None
        self.usage: Any = None
        self.calls: dict[int, dict[str, Any]] = {}  # tool calls by their index, fragments joined

    def add(self, event: Any) -> None:
        if self.model is None:  # every chunk names the same model and id: read them until they come
            self.model = _text_or_none(getattr(event, "model", None))
        if self.id is None:
            self.id = _text_or_none(getattr(event, "id", None))
        for choice in getattr(event, "choices", None) or ():
            if getattr(choice, "index", 0) != 0:
                continue
            delta = getattr(choice, "delta", None)
            content = getattr(delta, "content", None)
            if content.__class__ is str:
                self.parts.append(content)
            calls = getattr(delta, "tool_calls", None)
            if calls:
                self._add_calls(calls)
            reason = getattr(choice, "finish_reason", None)
            if reason:
                self.finish = _text_or_none(reason) or self.finish
        usage = getattr(event, "usage", None)
        if usage is not None:
            self.usage = usage

    def _add_calls(self, fragments: Any) -> None:
        for fragment in fragments:
            index = getattr(fragment, "index", None)
            call = self.calls.setdefault(index if isinstance(index, int) else len(self.calls), {})
            for name in ("id", "type"):
                value = getattr(fragment, name, None)
                if isinstance(value, str) and value:
                    call[name] = value
            function = getattr(fragment, "function", None)
            if function is None:
                continue
            target = call.setdefault("function", {})
            for name in ("name", "arguments"):
                piece = getattr(function, name, None)
                if isinstance(piece, str):
                    target[name] = target.get(name, "") + piece

    def answer(self) -> Answer:
        tokens = _tokens("openai-chat", self.usage)
        calls = tuple(self.calls[index] for index in sorted(self.calls))
        return Answer("".join(self.parts), self.model, self.id, self.finish, tokens, calls)


class _ResponseEvents:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.response: Any = None
        self.calls: list[Any] = []  # the call items done, for a stream that ends without its response

    def add(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "response.output_text.delta" and isinstance(getattr(event, "delta", None), str):
            self.parts.append(event.delta)
        elif kind == "response.output_item.done" and _is_call(getattr(event, "item", None), "_call"):
            self.calls.append(plain(event.item))
        response = getattr(event, "response", None)
        if response is not None:  # response.created, .in_progress, .completed, .incomplete, .failed
            self.response = response

    def answer(self) -> Answer:
        whole = answer_of("openai-responses", self.response) if self.response is not None else Answer()
        text = "".join(self.parts) if self.parts else whole.text
        calls = whole.tool_calls or tuple(self.calls)
        return Answer(text, whole.model, whole.response_id, whole.finish_reason, whole.tokens, calls)


class _MessageEvents:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.model: str | None = None
        self.id: str | None = None
        self.stop: str | None = None
        self.usage: dict[str, Any] | None = None
        self.blocks: dict[int, tuple[dict[str, Any], list[str]]] = {}  # tool blocks: start, input fragments

    def add(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "content_block_delta":
            delta = getattr(event, "delta", None)
            delta_kind = getattr(delta, "type", None)
            text = getattr(delta, "text", None)
            if delta_kind == "text_delta" and isinstance(text, str):
                self.parts.append(text)
            elif delta_kind == "input_json_delta" and getattr(event, "index", None) in self.blocks:
                partial = getattr(delta, "partial_json", None)
                if isinstance(partial, str):
                    self.blocks[event.index][1].append(partial)
        elif kind == "content_block_start":
            block, index = getattr(event, "content_block", None), getattr(event, "index", None)
            if _is_call(block, "tool_use") and isinstance(index, int):
                self.blocks[index] = (plain(block), [])
        elif kind == "message_start":
            message = getattr(event, "message", None)
            self.model = _text_or_none(getattr(message, "model", None))
            self.id = _text_or_none(getattr(message, "id", None))
            usage = getattr(message, "usage", None)
            self.usage = plain(usage) if usage is not None else None
        elif kind == "message_delta":
            self.stop = _text_or_none(getattr(getattr(event, "delta", None), "stop_reason", None)) or self.stop
            usage = getattr(event, "usage", None)
            if usage is not None:  # cumulative counts: each one sent replaces the start's
                update = {k: v for k, v in plain(usage).items() if v is not None}
                self.usage = {**(self.usage or {}), **update}

    def answer(self) -> Answer:
        calls = tuple(_tool_block(*self.blocks[index]) for index in sorted(self.blocks))
        return Answer("".join(self.parts), self.model, self.id, self.stop, _tokens("anthropic", self.usage), calls)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} has no JSON form")


def _tool_block(start: dict[str, Any], fragments: list[str]) -> dict[str, Any]:
    """A streamed tool block as a whole one: its input is its fragments parsed (the text as it arrived
    when they do not parse: a stream that stopped midway); the start's input when none came."""
    if not fragments:
        return start
    text = "".join(fragments)
    try:
        value: Any = json.loads(text, parse_constant=_no_constant)
    except ValueError:
        value = text
    return {**start, "input": value}


def accumulator(api: Api) -> Accumulator:
    """A fresh reader of one stream of ``api``."""
    if api == "openai-chat":
        return _ChatChunks()
    if api == "openai-responses":
        return _ResponseEvents()
    return _MessageEvents()
