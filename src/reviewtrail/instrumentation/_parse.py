"""The structured-output helpers: OpenAI's ``chat.completions.parse`` and ``responses.parse``, and
Anthropic's ``messages.parse`` and ``messages.stream`` (and under ``beta``). They send their request
without going through ``create``, after turning a pydantic class (``response_format``, ``text_format``,
``output_format``) into the JSON schema that goes on the wire. Their request is read as it is sent:
the class is turned into that schema by the SDK's own function, and the arguments the SDK keeps to
itself (``text_format``, ``parse_as``, ``output_format``) are not part of the body."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

from reviewtrail.instrumentation._request import Api, Request, plain, read_request

__all__ = ["read_parse_request"]

# Per API: the SDK module and function that turn a class into its wire schema.
_SCHEMA_OF = {
    "openai-chat": ("openai.lib._parsing._completions", "type_to_response_format_param"),
    "openai-responses": ("openai.lib._parsing._responses", "type_to_text_format_param"),
    "anthropic": ("anthropic.lib._parse._transform", "to_json_output_format"),
}


def _wire_schema(api: Api, cls: type) -> Any:
    """The schema the SDK sends for ``cls``; the class's name when this SDK version has no such function."""
    module_name, function_name = _SCHEMA_OF[api]
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError):
        return plain(cls)
    return plain(function(cls))


def _with_format(settings: dict[str, Any], kwargs: Mapping[str, Any], name: str, api: Api, cls: type) -> None:
    """``settings[name]`` as the SDK sends it: the object given under ``name`` (if any) with the schema
    of ``cls`` as its ``format``."""
    given = kwargs.get(name)
    base = plain(given) if isinstance(given, Mapping) else {}
    settings[name] = {**base, "format": _wire_schema(api, cls)}


def read_parse_request(api: Api, kwargs: dict[str, Any]) -> Request:
    """The request of one ``parse`` call: :func:`read_request`, with the class given for the answer's
    format replaced by the schema that is sent for it."""
    request = read_request(api, kwargs)
    settings = dict(request.settings)
    if api == "openai-chat":
        settings.setdefault("stream", False)  # chat parse sends it
        given = kwargs.get("response_format")
        if isinstance(given, type):
            settings["response_format"] = _wire_schema(api, given)
    elif api == "openai-responses":
        given = kwargs.get("text_format")
        for name in ("text_format", "parse_as"):  # read by the SDK, never sent
            settings.pop(name, None)
        if isinstance(given, type):
            _with_format(settings, kwargs, "text", api, given)
    else:
        given = kwargs.get("output_format")
        settings.pop("output_format", None)  # read by the SDK, sent as output_config.format
        if isinstance(given, type):
            _with_format(settings, kwargs, "output_config", api, given)
    return dataclasses.replace(request, settings=settings)
