"""Tool input schemas from the request types the command line builds (no parallel schemas).

The SDK derives a tool's input schema from its function's signature. A tool whose input is a
request type (``TraceSaveRequest``, ``DecisionInput``, ``AuditOptions``) or the keyword
parameters of a request builder (``run_request``) gets that signature: one parameter per field,
with the field's type and default, so a field added to the request is a tool argument at once.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

__all__ = [
    "ITEMS_MAX",
    "STRING_MAX",
    "TEXT_ARGUMENTS",
    "TEXT_MAX",
    "capped",
    "fields_of",
    "parameters_of",
    "strict_parameters",
    "with_parameters",
]

_EMPTY = inspect.Parameter.empty


def fields_of(
    request: type[Any], *, exclude: Iterable[str] = (), defaults: Mapping[str, Any] | None = None
) -> list[inspect.Parameter]:
    """A keyword parameter per field of the dataclass or msgspec struct ``request`` (its type and
    default; a default factory is called once), but ``exclude``; ``defaults`` replaces some defaults."""
    hints = typing.get_type_hints(request)
    skip, given = set(exclude), dict(defaults or {})
    if issubclass(request, msgspec.Struct):
        unset: Any = msgspec.NODEFAULT
        found = [(f.name, f.default, f.default_factory) for f in msgspec.structs.fields(request)]
    else:
        unset = dataclasses.MISSING
        found = [(f.name, f.default, f.default_factory) for f in dataclasses.fields(request)]
    out = []
    for name, value, factory in found:
        if name in skip:
            continue
        if name in given:
            default = given[name]
        elif value is not unset:
            default = value
        else:
            default = _EMPTY if factory is unset else factory()
        out.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hints[name]))
    return out


def parameters_of(
    builder: Callable[..., Any], *, exclude: Iterable[str] = (), defaults: Mapping[str, Any] | None = None
) -> list[inspect.Parameter]:
    """The keyword parameters of ``builder`` (a request builder), their types resolved, but
    ``exclude``; ``defaults`` replaces some defaults."""
    hints = typing.get_type_hints(builder)
    skip, given = set(exclude), dict(defaults or {})
    return [
        p.replace(annotation=hints[p.name], default=given.get(p.name, p.default))
        for p in inspect.signature(builder).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in skip
    ]


def with_parameters(
    fn: Callable[..., Any], parameters: Iterable[inspect.Parameter], *, returns: Any
) -> Callable[..., Any]:
    """``fn`` (which takes ``**arguments``) presented with these keyword parameters: the
    signature the SDK reads to build the tool's input schema."""
    fn.__signature__ = inspect.Signature(list(parameters), return_annotation=returns)  # type: ignore[attr-defined]
    return fn


#: The most characters of a text argument (a prompt, a response, a reply, code, a correction).
TEXT_MAX = 8 << 20
#: The most characters of any other string argument (ids, names, paths, notes, options).
STRING_MAX = 64 << 10
#: The most items of a list or object argument.
ITEMS_MAX = 1_000
#: The arguments that carry text, each at most :data:`TEXT_MAX` characters.
TEXT_ARGUMENTS = frozenset({"text", "prompt", "response", "code", "replacement"})


def _capped_str(name: str) -> Any:
    most = TEXT_MAX if name in TEXT_ARGUMENTS else STRING_MAX
    return typing.Annotated[str, _field(max_length=most)]


def _field(**kwargs: Any) -> Any:
    from pydantic import Field

    return Field(**kwargs)


def capped(annotation: Any, name: str) -> Any:
    """``annotation`` with every string capped (:data:`TEXT_MAX` for the text arguments,
    :data:`STRING_MAX` for the others), every list, tuple or object at most :data:`ITEMS_MAX`
    items, and a path taken as a string (the server's path rule reads it, not the SDK)."""
    import types
    from pathlib import Path

    if annotation is str or annotation is Path:
        return _capped_str(name)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return typing.Annotated[(capped(args[0], name), *annotation.__metadata__)]
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[tuple(capped(arg, name) for arg in args)]  # noqa: UP007  # built from parts
    if origin in (list, tuple, collections.abc.Sequence):
        item = capped(args[0], name) if args else Any
        return typing.Annotated[list[item], _field(max_length=ITEMS_MAX)]  # type: ignore[valid-type]
    if origin is dict:
        key = _capped_str(name)
        return typing.Annotated[dict[key, args[1]], _field(max_length=ITEMS_MAX)]  # type: ignore[valid-type]
    return annotation


def admits_none(annotation: Any) -> bool:
    import types

    if annotation is None or annotation is type(None) or annotation is Any:
        return True
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return admits_none(args[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(admits_none(arg) for arg in args)
    return False


def strict_parameters(parameters: Iterable[inspect.Parameter]) -> list[inspect.Parameter]:
    """The tool's parameters as its input schema states them: every string and list capped
    (:func:`capped`), and a parameter whose default is None admitting null."""
    out = []
    for p in parameters:
        annotation = capped(p.annotation, p.name)
        if p.default is None and not admits_none(annotation):
            annotation = annotation | None
        out.append(p.replace(annotation=annotation))
    return out
