"""The ``reviewtrail`` command: a thin shell over the library.

Each command group's module is imported when the group is looked up (``reviewtrail cas put``
loads ``store._cas`` only), and command modules import the library inside their functions, so a
command pays for what it uses and ``--help`` stays fast. ``--help`` and shell completion of the
root list every group and so load every command module (never the library). A plain use of
an everyday command is parsed without this app, and the entry point that runs it is
:func:`reviewtrail.cli._fast.main`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

__all__ = ["COMMANDS", "LazyCommands", "RootGroup", "app"]

EXIT_CODES = """Exit codes: 0 ok; 1 internal error; 2 invalid input; 3 not found; \
4 integrity failure; 5 configuration or backend unavailable; 6 conflict; 7 sandboxed code failed; \
141 output closed by its reader (e.g. | head)."""


def _attribute(module: str, name: str) -> Callable[[], Any]:
    """A loader of ``name`` from the command module ``reviewtrail.cli.<module>``."""

    def load() -> Any:
        return getattr(importlib.import_module(f"reviewtrail.cli.{module}"), name)

    return load


@functools.cache
def _review_app() -> typer.Typer:
    from reviewtrail.cli.review import _campaign_outputs, _decide, _review, _session

    _decide.register(_review.review_app)
    _session.register(_review.review_app)
    _campaign_outputs.register_review(_review.review_app)
    return _review.review_app


@functools.cache
def _campaign_app() -> typer.Typer:
    from reviewtrail.cli.review import _campaign, _campaign_items, _campaign_outputs, _campaign_runs

    _campaign_runs.register(_campaign.app)
    _campaign_items.register(_campaign.app)
    _campaign_outputs.register(_campaign.app)
    return _campaign.app


# Every command of the root, in the order ``--help`` lists them, and what loads its function (a
# command) or its Typer (a group).
COMMANDS: dict[str, Callable[[], Any]] = {
    "init": _attribute("store._store", "init"),
    "verify": _attribute("store._store", "verify"),
    "migrate": _attribute("store._migrate", "migrate"),
    "run": _attribute("runs._run", "run"),
    "kernel": _attribute("runs._kernel", "app"),
    "provenance": _attribute("runs._provenance", "provenance"),
    "cas": _attribute("store._cas", "app"),
    "ledger": _attribute("store._ledger", "app"),
    "key": _attribute("store._keys", "app"),
    "trace": _attribute("trace._trace", "app"),
    "session": _attribute("runs._provenance", "session_app"),
    "artifact": _attribute("runs._provenance", "artifact_app"),
    "claims": _attribute("review._review", "claims_app"),
    "evidence": _attribute("review._review", "evidence_app"),
    "review": _review_app,
    "campaign": _campaign_app,
    "serve": _attribute("serve._serve", "serve"),
    "proxy": _attribute("serve._proxy", "proxy"),
    "mcp": _attribute("serve._mcp", "mcp"),
}


@functools.cache
def _click_command(name: str) -> Any:
    """The click command of root command ``name``, made as ``app.add_typer``/``app.command``
    registration would make it (same help, markup and exception settings). A group's own
    commands are made when looked up, so a command converts only its own parameters."""
    import copy

    from typer.main import get_command_from_info, get_command_name, get_group_from_info
    from typer.models import CommandInfo, TyperInfo

    target = COMMANDS[name]()
    short, markup = app.pretty_exceptions_short, app.rich_markup_mode

    def command(info: CommandInfo) -> Any:
        return get_command_from_info(info, pretty_exceptions_short=short, rich_markup_mode=markup)

    def group(typer_app: typer.Typer) -> Any:
        info = TyperInfo(typer_app, name=name)
        return get_group_from_info(
            info, pretty_exceptions_short=short, rich_markup_mode=markup, suggest_commands=app.suggest_commands
        )

    if not isinstance(target, typer.Typer):
        return command(CommandInfo(name=name, callback=target))
    if target.registered_groups:  # nested groups: made all at once, as typer makes them
        return group(target)
    shell = copy.copy(target)
    shell.registered_commands = []
    made = group(shell)
    made.commands = LazyCommands(
        {
            info.name or get_command_name(info.callback.__name__): functools.partial(command, info)
            for info in target.registered_commands
            if info.callback is not None
        }
    )
    return made


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands by name: every name known up front, each made on first lookup."""

    def __init__(self, makers: Mapping[str, Callable[[], Any]]) -> None:
        self._makers = dict(makers)
        self._made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._made:
            self._made[name] = self._makers[name]()
        return self._made[name]

    def __contains__(self, name: object) -> bool:
        return name in self._makers

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)

    def __setitem__(self, name: str, command: Any) -> None:
        raise TypeError("a lazily made group's commands are fixed")

    def __delitem__(self, name: str) -> None:
        raise TypeError("a lazily made group's commands are fixed")


class RootGroup(TyperGroup):
    """The root command: its groups and commands are loaded by name, on first use."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands({name: functools.partial(_click_command, name) for name in COMMANDS})


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
