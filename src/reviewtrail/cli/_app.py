"""The ``reviewtrail`` command: a thin shell over the library.

Command modules import the library inside their functions so ``--help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from reviewtrail.cli import (
    _campaign,
    _campaign_items,
    _campaign_outputs,
    _campaign_runs,
    _cas,
    _ledger,
    _provenance,
    _review,
    _review_decide,
    _review_session,
    _run,
    _store,
    _trace,
)
from reviewtrail.cli._output import EXIT_PIPE_CLOSED, silence_stdout, stdout_is_closed

__all__ = ["app", "main"]

EXIT_CODES = """Exit codes: 0 ok; 1 internal error; 2 invalid input; 3 not found; \
4 integrity failure; 5 configuration or backend unavailable; 6 conflict; 7 sandboxed code failed; \
141 output closed by its reader (e.g. | head)."""

app = typer.Typer(
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


app.command("init")(_store.init)
app.command("verify")(_store.verify)
app.add_typer(_cas.app, name="cas")
app.add_typer(_ledger.app, name="ledger")
app.add_typer(_trace.app, name="trace")
app.command("run")(_run.run)
app.add_typer(_provenance.session_app, name="session")
app.add_typer(_provenance.artifact_app, name="artifact")
app.command("provenance")(_provenance.provenance)
app.add_typer(_review.claims_app, name="claims")
app.add_typer(_review.evidence_app, name="evidence")
_review_decide.register(_review.review_app)
_review_session.register(_review.review_app)
_campaign_outputs.register_review(_review.review_app)
app.add_typer(_review.review_app, name="review")
_campaign_runs.register(_campaign.app)
_campaign_items.register(_campaign.app)
_campaign_outputs.register(_campaign.app)
app.add_typer(_campaign.app, name="campaign")


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
