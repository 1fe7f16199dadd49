"""The ``reviewtrail`` command: a thin shell over the library.

Each command group's module is imported when the group is looked up (``reviewtrail cas put``
loads ``_cas`` only), and command modules import the library inside their functions, so a
command pays for what it uses and ``--help`` stays fast. ``--help`` and shell completion of the
root list every group and so load every command module (never the library).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, MutableMapping
from functools import cache
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from reviewtrail.cli._output import EXIT_PIPE_CLOSED, silence_stdout, stdout_is_closed

__all__ = ["COMMANDS", "RootGroup", "app", "main"]

EXIT_CODES = """Exit codes: 0 ok; 1 internal error; 2 invalid input; 3 not found; \
4 integrity failure; 5 configuration or backend unavailable; 6 conflict; 7 sandboxed code failed; \
141 output closed by its reader (e.g. | head)."""


def _attribute(module: str, name: str) -> Callable[[], Any]:
    """A loader of ``name`` from the command module ``reviewtrail.cli.<module>``."""

    def load() -> Any:
        return getattr(importlib.import_module(f"reviewtrail.cli.{module}"), name)

    return load


@cache
def _review_app() -> typer.Typer:
    from reviewtrail.cli import _campaign_outputs, _review, _review_decide, _review_session

    _review_decide.register(_review.review_app)
    _review_session.register(_review.review_app)
    _campaign_outputs.register_review(_review.review_app)
    return _review.review_app


@cache
def _campaign_app() -> typer.Typer:
    from reviewtrail.cli import _campaign, _campaign_items, _campaign_outputs, _campaign_runs

    _campaign_runs.register(_campaign.app)
    _campaign_items.register(_campaign.app)
    _campaign_outputs.register(_campaign.app)
    return _campaign.app


# Every command of the root, in the order ``--help`` lists them, and what loads its function (a
# command) or its Typer (a group).
COMMANDS: dict[str, Callable[[], Any]] = {
    "init": _attribute("_store", "init"),
    "verify": _attribute("_store", "verify"),
    "run": _attribute("_run", "run"),
    "provenance": _attribute("_provenance", "provenance"),
    "cas": _attribute("_cas", "app"),
    "ledger": _attribute("_ledger", "app"),
    "trace": _attribute("_trace", "app"),
    "session": _attribute("_provenance", "session_app"),
    "artifact": _attribute("_provenance", "artifact_app"),
    "claims": _attribute("_review", "claims_app"),
    "evidence": _attribute("_review", "evidence_app"),
    "review": _review_app,
    "campaign": _campaign_app,
}


@cache
def _click_command(name: str) -> Any:
    """The click command of root command ``name``, made as ``app.add_typer``/``app.command``
    registration would make it (same help, markup and exception settings)."""
    from typer.main import get_command_from_info, get_group_from_info
    from typer.models import CommandInfo, TyperInfo

    target = COMMANDS[name]()
    if isinstance(target, typer.Typer):
        return get_group_from_info(
            TyperInfo(target, name=name),
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
            suggest_commands=app.suggest_commands,
        )
    return get_command_from_info(
        CommandInfo(name=name, callback=target),
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


class _LazyCommands(MutableMapping[str, Any]):
    """The root's commands by name: every name known up front, each made on first lookup."""

    def __getitem__(self, name: str) -> Any:
        if name not in COMMANDS:
            raise KeyError(name)
        return _click_command(name)

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)

    def __setitem__(self, name: str, command: Any) -> None:
        raise TypeError("the root's commands are listed in reviewtrail.cli._app.COMMANDS")

    def __delitem__(self, name: str) -> None:
        raise TypeError("the root's commands are listed in reviewtrail.cli._app.COMMANDS")


class RootGroup(TyperGroup):
    """The root command: its groups and commands are loaded by name, on first use."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands()

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)


app = typer.Typer(
    cls=RootGroup,
    name="reviewtrail",
    help="Chain of custody for judgments about AI work: a content-addressed store and an "
    "append-only, hash-chained ledger.\n\n" + EXIT_CODES,
    epilog="Example: reviewtrail init && reviewtrail cas put results.csv && reviewtrail verify",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from reviewtrail import __version__

        print(f"reviewtrail {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    pass


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
    try:
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
