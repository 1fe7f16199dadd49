"""Printing for the CLI: human output by default, ``--json`` for machines, errors with exit codes."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import typer

P = ParamSpec("P")
R = TypeVar("R")

JSON_HELP = "Print machine-readable JSON instead of a table."


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def fail(message: str, code: int, *, as_json: bool = False, field: str | None = None, kind: str = "Error") -> None:
    """Report an error on stderr (and as JSON on stdout with --json) and exit with ``code``."""
    if as_json:
        print_json({"error": {"type": kind, "field": field, "message": message, "exitCode": code}})
    sys.stderr.write(f"error: {message}\n")
    raise typer.Exit(code)


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn reviewtrail errors into a message and the error's documented exit code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from reviewtrail.errors import EXIT_INTERNAL, ReviewtrailError

        as_json = bool(kwargs.get("as_json", False))
        try:
            return fn(*args, **kwargs)
        except ReviewtrailError as exc:
            fail(str(exc), exc.exit_code, as_json=as_json, field=exc.field, kind=type(exc).__name__)
        except OSError as exc:
            fail(
                f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "),
                EXIT_INTERNAL,
                as_json=as_json,
                kind="OSError",
            )
        raise AssertionError("unreachable")  # pragma: no cover

    return wrapper


def table(title: str, columns: list[str], rows: list[list[str]], *, no_wrap: tuple[str, ...] = ()) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    for c in columns:
        t.add_column(c, overflow="fold", no_wrap=c in no_wrap)
    for r in rows:
        t.add_row(*r)
    # A terminal gets its own width; a pipe or a file gets long lines rather than folded cells.
    Console(width=None if sys.stdout.isatty() else 200).print(t)
