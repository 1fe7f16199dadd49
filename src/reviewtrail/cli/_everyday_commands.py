"""The typer commands of the everyday commands, built from their one declaration
(:data:`reviewtrail.cli._everyday_options.FAST`): the same parameters, in the same order, call the same
function whichever path parsed them."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from reviewtrail.cli._everyday_options import (
    FAST,
    FLAG,
    FLOAT,
    INT,
    MULTIPLE,
    PATH,
    STR,
    TRISTATE,
    Command,
    Param,
    call,
)

__all__ = ["everyday_command"]

_TYPES: dict[str, Any] = {STR: str, INT: int, FLOAT: float, PATH: Path, FLAG: bool, TRISTATE: bool, MULTIPLE: str}


def _annotation(param: Param) -> Any:
    kind = _TYPES[param.kind]
    if param.many or param.kind == MULTIPLE:
        kind = list[kind]  # type: ignore[valid-type]
    if param.default is None and not param.required:
        kind = kind | None
    extra: dict[str, Any] = {"help": param.help}
    if param.min is not None:
        extra["min"] = param.min
    if not param.dir_okay:
        extra["dir_okay"] = False
    if param.hidden:
        extra["hidden"] = True
    if not param.names:
        return Annotated[kind, typer.Argument(**extra)]
    if param.kind == TRISTATE:
        names = [f"{param.names[0]}/{param.off[0]}"]
        extra["show_default"] = False
    else:
        names = list(param.names)
    return Annotated[kind, typer.Option(*names, **extra)]


def everyday_command(group: str, name: str, doc: str) -> Callable[..., None]:
    """The typer command function of ``reviewtrail GROUP NAME`` (its help text ``doc``): the
    parameters of its declaration, handed to the same function the fast path calls."""
    command: Command = FAST[(group, name)]

    def run(**values: Any) -> None:
        call(command, values)

    params = [
        inspect.Parameter(
            p.dest,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=_annotation(p),
            default=inspect.Parameter.empty if p.required else p.default,
        )
        for p in command.params
    ]
    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    run.__doc__ = doc
    run.__name__ = run.__qualname__ = name
    return run
