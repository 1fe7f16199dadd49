"""Tool input schemas from the request types the command line builds (no parallel schemas).

The SDK derives a tool's input schema from its function's signature. A tool whose input is a
request type (``TraceSaveRequest``, ``DecisionInput``, ``AuditOptions``) or the keyword
parameters of a request builder (``run_request``) gets that signature: one parameter per field,
with the field's type and default, so a field added to the request is a tool argument at once.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["fields_of", "parameters_of", "with_parameters"]

_EMPTY = inspect.Parameter.empty


def fields_of(
    request: type[Any], *, exclude: Iterable[str] = (), defaults: Mapping[str, Any] | None = None
) -> list[inspect.Parameter]:
    """A keyword parameter per field of the dataclass ``request`` (its type and default; a
    default factory is called once), but ``exclude``; ``defaults`` replaces some defaults."""
    hints = typing.get_type_hints(request)
    skip, given = set(exclude), dict(defaults or {})
    out = []
    for f in dataclasses.fields(request):
        if f.name in skip:
            continue
        if f.name in given:
            default = given[f.name]
        elif f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = _EMPTY
        out.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hints[f.name]))
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
