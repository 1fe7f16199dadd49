"""``reviewtrail review session``: keyboard-first review, one blinded card at a time."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import handle_errors, print_json

if TYPE_CHECKING:
    from rich.console import Console

    from reviewtrail.cli._session_input import KeyInput
    from reviewtrail.human_review import DecisionResult, QueueCard, ReviewSession, SessionAction

__all__ = ["register"]

EXIT_INTERRUPTED = 130  # 128 + SIGINT


def register(app: typer.Typer) -> None:
    """Add ``session`` to the ``review`` group."""
    app.command("session")(session)


@handle_errors
def session(
    campaign: Annotated[str, typer.Argument(help="The campaign to review.")],
    version: Annotated[int | None, typer.Option("--version", help="Only items of this campaign version.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Draw the cards on stderr and print the session's summary as JSON.")
    ] = False,
) -> None:
    """Review a campaign's open items one card at a time: the prompt, the evidence, the criterion
    and candidates A and B, blinded. Single keys decide (a/b then 1/2 prefer A/B slightly or
    strongly, t tie, c correct, u underdetermined, m malformed, s skip; y, r, g, f, n set the
    training flag, reasons, tags, confidence and a note first; ? help, q quit). Who produced A
    and B is shown only once the decision is recorded. When standard input is not a terminal,
    it is read as one key per line. With --json the cards are drawn on stderr and standard output
    gets the summary: each decision recorded (decisionId, itemId, disposition, resubmitted) and
    the invalid items passed over.

    Example: printf 'b\\n2\\nq\\n' | reviewtrail review session support-triage --version 1
    """
    import uuid

    from rich.console import Console

    from reviewtrail.app import open_store
    from reviewtrail.cli._session_draw import summary, summary_json
    from reviewtrail.cli._session_input import key_input
    from reviewtrail.human_review import ReviewSession, decide, next_open_card

    out = sys.stderr if as_json else sys.stdout
    console = Console(file=out, highlight=False, width=None if out.isatty() else 200)
    state = ReviewSession()
    with open_store() as store:

        def fetch(seen: frozenset[str]) -> QueueCard | None:
            return next_open_card(store, campaign, version, seen=seen)

        def submit(action: SessionAction) -> DecisionResult:
            assert action.item_id is not None and action.decision is not None
            return decide(store, action.item_id, action.decision, submission_id=action.submission_id)

        try:
            with key_input() as keys:
                drive(state, keys, console, fetch, submit, lambda: str(uuid.uuid4()))
        except KeyboardInterrupt:
            summary(console, state)
            if as_json:
                print_json(summary_json(state))
            raise typer.Exit(EXIT_INTERRUPTED) from None
    summary(console, state)
    if as_json:
        print_json(summary_json(state))


def drive(
    state: ReviewSession,
    keys: KeyInput,
    console: Console,
    fetch: Callable[[frozenset[str]], QueueCard | None],
    submit: Callable[[SessionAction], DecisionResult],
    new_id: Callable[[], str],
) -> None:
    """Run ``state`` until it quits or runs out of cards: carry out each action it asks for,
    draw what changed, read the input it waits for (the end of input quits)."""
    from reviewtrail.cli._session_draw import draw
    from reviewtrail.errors import ReviewtrailError

    action: SessionAction | None = state.start()
    while True:
        if action is not None and action.kind == "quit":
            return
        if action is not None and action.kind == "fetch":
            state.show(fetch(action.seen), new_id())
        elif action is not None and action.kind == "submit":
            draw(console, state)  # "recording..."
            try:
                state.decided(submit(action))
            except ReviewtrailError as exc:
                message = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
                state.refused(exc.field, message)
        draw(console, state)
        if state.mode in ("done", "quit"):
            return
        action = _read(state, keys)


def _read(state: ReviewSession, keys: KeyInput) -> SessionAction | None:
    if state.wants == "key":
        key = keys.key()
        return state.quit() if key is None else state.press(key)
    text = keys.line() if state.wants == "line" else keys.text()
    return state.quit() if text is None else state.enter(text)
