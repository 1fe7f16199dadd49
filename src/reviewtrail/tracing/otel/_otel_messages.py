"""A recorded request as the GenAI conventions' input messages and system instructions. Pure.

The prompt of a call an instrumented SDK client made is the JSON of its request's prompt fields
(``messages``; ``input`` and ``instructions``; ``system`` and ``messages``), and its ``tool`` names
the method (``openai.chat.completions.create``, ``openai.responses.parse``,
``anthropic.beta.messages.stream``...). Read by that shape, each message keeps its role and each
part its kind, in the conventions' JSON schema (``gen_ai.input.messages``: ``[{"role", "parts":
[...]}]``; ``gen_ai.system_instructions``: ``[{"type": "text", "content"}]``):

- text is ``{"type": "text", "content"}``; a tool call the model made earlier is ``{"type":
  "tool_call", "id", "name", "arguments"}`` (arguments parsed when they are JSON text); a tool's
  result is ``{"type": "tool_call_response", "id", "response"}`` in a message of role ``tool``
  (an Anthropic user message's ``tool_result`` blocks become such messages, in their order);
  reasoning is ``{"type": "reasoning", "content"}``; an image given by URL is a ``uri`` part, one
  given inline a ``blob`` part; any other part keeps its own type and fields (the conventions'
  generic part);
- system instructions given apart from the history (Anthropic ``system``, Responses
  ``instructions``) are ``gen_ai.system_instructions``; chat completions' system and developer
  messages are part of the history and stay there, with their roles.

Any other prompt (plain text, a shape or method not listed) is one ``user`` message holding the
prompt as text: :func:`input_messages` answers ``None`` and the caller keeps that form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["input_messages"]

Message = dict[str, Any]
Part = dict[str, Any]


def _text(content: str) -> Part:
    return {"type": "text", "content": content}


def _arguments(value: Any) -> Any:
    """Tool-call arguments: JSON text parsed, anything else as it was sent."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _generic(part: Mapping[str, Any], kind: object = None) -> Part:
    return {**part, "type": kind if isinstance(kind, str) and kind else str(part.get("type") or "unknown")}


def _image(source: Any, *, url: str | None = None) -> Part | None:
    if url is not None:
        return {"type": "uri", "modality": "image", "uri": url}
    if isinstance(source, Mapping):
        if source.get("type") == "url" and isinstance(source.get("url"), str):
            return {"type": "uri", "modality": "image", "uri": source["url"]}
        if source.get("type") == "base64" and isinstance(source.get("data"), str):
            kind = source.get("media_type")
            return {"type": "blob", "modality": "image", "mime_type": kind, "content": source["data"]}
    return None


def _message(role: object, parts: list[Part], source: Mapping[str, Any] | None = None) -> Message:
    message: Message = {"role": role if isinstance(role, str) and role else "user", "parts": parts}
    if source is not None and isinstance(source.get("name"), str):
        message["name"] = source["name"]
    return message


# --- OpenAI chat completions ---------------------------------------------------------------------


def _chat_part(part: Mapping[str, Any]) -> Part:
    kind = part.get("type")
    if kind in ("text", "refusal") and isinstance(part.get(kind), str):
        return _text(part[kind])
    image = part.get("image_url")
    if kind == "image_url" and isinstance(image, Mapping) and isinstance(image.get("url"), str):
        return _image(None, url=image["url"]) or _generic(part)
    return _generic(part)


def _content_parts(content: Any, read: Callable[[Mapping[str, Any]], Part]) -> list[Part]:
    """The parts of a message's content: a text, a part or a list of them; ``read`` reads a part object."""
    if content is None:
        return []
    return [_any_part(part, read) for part in (content if isinstance(content, list) else [content])]


def _any_part(part: Any, read: Callable[[Mapping[str, Any]], Part]) -> Part:
    if isinstance(part, str):
        return _text(part)
    if not isinstance(part, Mapping):
        return {"type": "unknown", "content": part}
    return read(part)


def _chat(messages: Any) -> list[Message] | None:
    if not isinstance(messages, list):
        return None
    out: list[Message] = []
    for message in messages:
        if not isinstance(message, Mapping):
            return None
        role = message.get("role")
        if role in ("tool", "function"):
            call_id = message.get("tool_call_id") if role == "tool" else message.get("name")
            response = {"type": "tool_call_response", "id": call_id, "response": message.get("content")}
            out.append(_message("tool", [response]))
            continue
        parts = _content_parts(message.get("content"), _chat_part)
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call.get("id"),
                        "name": function.get("name"),
                        "arguments": _arguments(function.get("arguments")),
                    }
                )
            elif isinstance(call, Mapping):
                parts.append(_generic(call))
        out.append(_message(role, parts, message))
    return out


# --- OpenAI Responses ----------------------------------------------------------------------------


def _responses_part(part: Mapping[str, Any]) -> Part:
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
        return _text(part["text"])
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return _text(part["refusal"])
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        return _image(None, url=part["image_url"]) or _generic(part)
    return _generic(part)


def _responses_item(item: Any) -> Message:
    if isinstance(item, str):
        return _message("user", [_text(item)])
    if not isinstance(item, Mapping):
        return _message("user", [{"type": "unknown", "content": item}])
    kind = item.get("type")
    if kind == "function_call":
        call = {"type": "tool_call", "id": item.get("call_id"), "name": item.get("name")}
        return _message("assistant", [{**call, "arguments": _arguments(item.get("arguments"))}])
    if kind in ("function_call_output", "custom_tool_call_output"):
        response = {"type": "tool_call_response", "id": item.get("call_id"), "response": item.get("output")}
        return _message("tool", [response])
    if kind == "reasoning":
        summary = [s.get("text") for s in item.get("summary") or () if isinstance(s, Mapping)]
        texts = [t for t in summary if isinstance(t, str)]
        parts = [{"type": "reasoning", "content": "\n".join(texts)}] if texts else [_generic(item)]
        return _message("assistant", parts)
    if kind in (None, "message") and "role" in item:
        return _message(item.get("role"), _content_parts(item.get("content"), _responses_part))
    role = "assistant" if isinstance(kind, str) and kind.endswith("_call") else "user"
    return _message(role, [_generic(item)])


def _responses(doc: Mapping[str, Any]) -> tuple[list[Message], list[Part] | None] | None:
    given = doc.get("input")
    messages = [_responses_item(given)] if isinstance(given, str) else None
    if isinstance(given, list):
        messages = [_responses_item(item) for item in given]
    if messages is None:
        return None
    instructions = doc.get("instructions")
    system = None
    if isinstance(instructions, str):
        system = [_text(instructions)]
    elif isinstance(instructions, list):
        system = [part for item in instructions for part in _responses_item(item)["parts"]]
    return messages, system


# --- Anthropic messages --------------------------------------------------------------------------


def _block(block: Mapping[str, Any]) -> Part:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return _text(block["text"])
    if kind == "tool_use":
        return {"type": "tool_call", "id": block.get("id"), "name": block.get("name"), "arguments": block.get("input")}
    if kind == "tool_result":
        return {"type": "tool_call_response", "id": block.get("tool_use_id"), "response": block.get("content")}
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return {"type": "reasoning", "content": block["thinking"]}
    if kind == "image":
        return _image(block.get("source")) or _generic(block)
    return _generic(block)


def _anthropic(doc: Mapping[str, Any]) -> tuple[list[Message], list[Part] | None] | None:
    messages = doc.get("messages")
    if not isinstance(messages, list):
        return None
    out: list[Message] = []
    for message in messages:
        if not isinstance(message, Mapping):
            return None
        role = message.get("role")
        parts = _content_parts(message.get("content"), _block)
        if not parts:
            out.append(_message(role, []))
        # A user turn's tool results are the tools' messages: consecutive parts of one kind stay together.
        turn: list[Message] = []
        for part in parts:
            part_role = "tool" if part["type"] == "tool_call_response" else role
            if turn and turn[-1]["role"] == part_role:
                turn[-1]["parts"].append(part)
            else:
                turn.append(_message(part_role, [part]))
        out += turn
    system = doc.get("system")
    instructions = None if system is None else _content_parts(system, _block)
    return out, instructions


# --- dispatch ------------------------------------------------------------------------------------


def input_messages(prompt: str, tool: object) -> tuple[list[Message], list[Part] | None] | None:
    """``(input messages, system instructions or None)`` of a recorded request, or ``None`` when the
    prompt is not the JSON request of a method named here (the caller's fallback applies)."""
    if not isinstance(tool, str):
        return None
    try:
        doc = json.loads(prompt)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    if tool.startswith("openai.chat.") and set(doc) == {"messages"}:
        chat = _chat(doc["messages"])
        return (chat, None) if chat is not None else None
    if tool.startswith("openai.responses.") and "input" in doc and set(doc) <= {"input", "instructions"}:
        return _responses(doc)
    if tool.startswith("anthropic.") and "messages" in doc and set(doc) <= {"messages", "system"}:
        return _anthropic(doc)
    return None
