"""The entry point, and a fast path for the everyday commands.

``ledger tail``, ``cas put``, ``cas cat``, ``trace save`` and ``review queue`` run many times a
day, often from scripts (``trace save`` once per reviewer call), so their start-up matters more
than any other command's. Building the typer command tree and importing typer, click and rich
costs more than the work of such a command; this module parses a plain use of one of them itself,
with the one declaration of their parameters the typer commands are built from
(:mod:`reviewtrail.cli._everyday_options`), and calls the same function they call
(:mod:`reviewtrail.cli._everyday`).

Only what it is sure to read as click would is taken: known options, as ``--name value``,
``--name=value`` or ``-n value``, values that do not start with ``-`` (``-`` alone is a value),
integers of ASCII digits within the option's range, paths click would accept as they are, the
right number of arguments. Anything else (``--help``, an unknown or malformed option, a missing
required one, shell completion) goes to the typer app, which then prints its own help, error and
exit code, byte for byte as before. ``tests/test_fast_commands.py`` checks that click reads each
declaration as this parser does, and both paths' output and exit code against each other.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reviewtrail.cli._everyday_options import FAST, FLAG, FLOAT, INT, MULTIPLE, PATH, TRISTATE, Command, Param, call
from reviewtrail.cli._output import EXIT_PIPE_CLOSED, silence_stdout, stdout_is_closed

__all__ = ["drop_empty_options", "main", "parse"]


def drop_empty_options(args: list[str]) -> list[str]:
    """``args`` (after the command's own words) without the options ``reviewtrail ARGS`` gives
    as "" (``--opt ""`` or ``--opt=``), when its command takes "" as not given; unchanged
    otherwise. Both routes (fast and typer) then read the same arguments."""
    command = FAST.get((args[0], args[1])) if len(args) >= 2 else None
    if command is None or not command.empty_is_absent:
        return args
    valued = {name for p in command.params if p.kind not in (FLAG, TRISTATE) for name in p.names}
    required = {name for p in command.params if p.required for name in p.names}
    out, rest = list(args[:2]), list(args[2:])
    while rest:
        arg = rest.pop(0)
        if arg in valued and arg not in required and rest and rest[0] == "":
            rest.pop(0)
            continue
        name, eq, value = arg.partition("=")
        if eq and not value and name in valued and name not in required:
            continue
        out.append(arg)
        if arg == "--":
            out += rest
            break
    return out


class _NotPlain(Exception):
    """A use the fast path leaves to the typer app."""


def _value(param: Param, text: str) -> Any:
    """``text`` converted as click converts it for ``param``; :class:`_NotPlain` when click
    might read it otherwise or refuse it."""
    if param.kind == INT:
        if not (text.isascii() and text.isdigit()):
            raise _NotPlain
        number = int(text)
        if param.min is not None and number < param.min:
            raise _NotPlain
        return number
    if param.kind == FLOAT:
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
            raise _NotPlain  # click reads the rest (signs, exponents, nan), or refuses it
        return float(text)
    if param.kind == PATH:
        if not text:
            raise _NotPlain
        try:
            mode = os.stat(text).st_mode
        except OSError:
            return Path(text)
        if (not param.dir_okay and stat.S_ISDIR(mode)) or not os.access(text, os.R_OK):
            raise _NotPlain  # click names the problem
        return Path(text)
    return text


def _take(param: Param, text: str, values: dict[str, Any]) -> None:
    if param.kind == MULTIPLE:
        values.setdefault(param.dest, []).append(text)
    elif param.many:
        values.setdefault(param.dest, []).append(_value(param, text))
    else:
        values[param.dest] = _value(param, text)


def parse(command: Command, args: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments ``args`` give the command's function, or None when the use is not
    plain (see the module's doc) and the typer app must read it."""
    options = {name: p for p in command.params for name in (*p.names, *p.off)}
    arguments = [p for p in command.params if not p.names]
    values: dict[str, Any] = {}
    given: list[str] = []
    rest = list(args)
    try:
        while rest:
            arg = rest.pop(0)
            if arg == "-" or not arg.startswith("-"):
                given.append(arg)
                continue
            name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
            param = options.get(name)
            if param is None:
                return None
            if param.kind in (FLAG, TRISTATE):
                if eq:
                    return None
                values[param.dest] = name not in param.off
                continue
            if not eq:
                if not rest or (rest[0].startswith("-") and rest[0] != "-"):
                    return None
                inline = rest.pop(0)
            _take(param, inline, values)
        if arguments and arguments[-1].many:  # the last argument takes the rest
            arguments[-1:] = [arguments[-1]] * max(1, len(given) - len(arguments) + 1)
        if len(given) > len(arguments):
            return None
        for param, text in zip(arguments, given, strict=False):
            _take(param, text, values)
    except _NotPlain:
        return None
    if any(p.required and p.dest not in values for p in command.params):
        return None
    return {p.dest: values.get(p.dest, p.default) for p in command.params}  # in the typer command's order


def _fast_call(args: list[str]) -> Callable[[], None] | None:
    """The call that runs ``reviewtrail ARGS`` on the fast path, or None."""
    if len(args) < 2 or "_REVIEWTRAIL_COMPLETE" in os.environ:
        return None
    command = FAST.get((args[0], args[1]))
    if command is None:
        return None
    values = parse(command, args[2:])
    if values is None:
        return None
    return lambda: call(command, values)


def _run_fast(call: Callable[[], None]) -> None:
    """Run ``call`` as click runs a command's function: Ctrl-C exits 130, end of input ``Aborted!``."""
    try:
        call()
    except KeyboardInterrupt:
        sys.exit(130)
    except EOFError:
        sys.stderr.write("\nAborted!\n")
        sys.exit(1)
    except BrokenPipeError:
        # click's answer to a closed pipe the command left unhandled (the output is then dropped)
        sys.exit(EXIT_PIPE_CLOSED if stdout_is_closed() else 1)


def _first_non_utf8_argument(args: list[str]) -> tuple[int, str] | None:
    """(position, argument) of the first argument whose bytes were not UTF-8 (Python keeps such
    bytes as lone surrogates, which nothing downstream can store, hash or print), or None."""
    for position, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return position, arg
    return None


def main() -> None:
    """Run the command; a reader that closes our output early (``| head``) ends it quietly."""
    stdout = sys.stdout
    bad = _first_non_utf8_argument(sys.argv[1:])
    if bad is not None:
        sys.stderr.write(
            f"error: argument {bad[0]}: {bad[1]!r} is not UTF-8 text; reviewtrail takes UTF-8 arguments "
            "(names, paths and values)\n"
        )
        sys.exit(2)
    sys.argv[1:] = drop_empty_options(sys.argv[1:])
    try:
        call = _fast_call(sys.argv[1:])
        if call is not None:
            _run_fast(call)
        else:
            from reviewtrail.cli._app import app

            app(prog_name="reviewtrail")
        code: str | int | None = 0
    except SystemExit as exc:
        code = exc.code
        if sys.stdout is not stdout and stdout_is_closed():
            # The command framework met the closed pipe itself (help text) and swapped stdout.
            code = EXIT_PIPE_CLOSED
    try:
        stdout.flush()
    except BrokenPipeError:
        code = code if code not in (0, None) else EXIT_PIPE_CLOSED
    if code == EXIT_PIPE_CLOSED or stdout_is_closed():
        silence_stdout()
    sys.exit(code)
