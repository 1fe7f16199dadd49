"""``reviewtrail review session``: keyboard-first review, one blinded card at a time."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import handle_errors, print_json
from reviewtrail.cli.review._decide import ReviewerOpt

if TYPE_CHECKING:
    from rich.console import Console

    from reviewtrail.cli.review._session_input import KeyInput
    from reviewtrail.human_review.session import (
        DecisionResult,
        DecisionUse,
        QueueCard,
        ReviewSession,
        SessionAction,
        SessionProgress,
        SessionQueue,
    )
    from reviewtrail.store import Store

__all__ = ["Driver", "register"]

EXIT_INTERRUPTED = 130  # 128 + SIGINT


def register(app: typer.Typer) -> None:
    """Add ``session`` to the ``review`` group."""
    app.command("session")(session)


@handle_errors
def session(
    campaign: Annotated[str, typer.Argument(help="The campaign to review.")],
    version: Annotated[int | None, typer.Option("--version", help="Only items of this campaign version.")] = None,
    reveal: Annotated[
        str,
        typer.Option(
            "--reveal",
            help="When who produced A and B is shown: 'after' each decision on a screen of its own, dismissed "
            "with a key (default); at the 'end' of the session, after its summary; or 'never'.",
        ),
    ] = "after",
    reviewer: ReviewerOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Draw the cards on stderr and print the session's summary as JSON.")
    ] = False,
) -> None:
    """Review a campaign's open items one card at a time: the prompt, the evidence, the criterion
    and candidates A and B, blinded, scenario families interleaved; reviewers working on one
    campaign at once are served different cards (each card is leased to one session). Single keys decide (a/b then
    1/2 prefer A/B slightly or strongly, t tie, c correct, u underdetermined, m malformed, s skip;
    y, r, g, f, n set the training flag, reasons, tags, confidence and a note first; z goes back
    to the card decided last to supersede its decision; ? help, q quit). A status line shows card
    k of N, the campaign's coverage and whether the last decision will be exported. The screen is
    cleared between cards. When standard input is not a terminal, it is read as one key per line.
    With --json the cards are drawn on stderr and standard output gets the summary: each decision
    recorded (decisionId, itemId, disposition, resubmitted) and the invalid items passed over.

    Example: printf 'b\\n2\\n\\nq\\n' | reviewtrail review session support-triage --version 1
    """
    import uuid

    from rich.console import Console

    from reviewtrail.app import open_store
    from reviewtrail.cli.review._decide import reviewer_id
    from reviewtrail.cli.review._session_draw import reveals_at_end, summary, summary_json
    from reviewtrail.cli.review._session_input import key_input
    from reviewtrail.errors import InvalidInputError
    from reviewtrail.human_review.session import REVEAL_MODES, Leases, ReviewSession, SessionQueue

    if reveal not in REVEAL_MODES:
        raise InvalidInputError(f"must be one of {', '.join(REVEAL_MODES)}, got {reveal!r}", field="reveal")
    who = reviewer_id(reviewer)  # before any card: a missing reviewer id is exit 5, with the fix
    out = sys.stderr if as_json else sys.stdout
    console = Console(file=out, highlight=False, width=None if out.isatty() else 200)
    state = ReviewSession(reveal=reveal)  # type: ignore[arg-type]

    def finish() -> None:
        summary(console, state)
        if state.reveal == "end":
            reveals_at_end(console, state)
        if as_json:
            print_json(summary_json(state))

    with open_store() as store, Leases(store) as leases:
        queue = SessionQueue(store, campaign, version, leases=leases, reviewer=who)
        driver = Driver(store, queue, who, lambda: str(uuid.uuid4()))
        try:
            with key_input() as keys:
                drive(state, keys, console, driver)
        except KeyboardInterrupt:
            finish()
            raise typer.Exit(EXIT_INTERRUPTED) from None
    finish()


@dataclass
class Driver:
    """What a session asks of the store: cards, decisions and what they are good for."""

    store: Store
    queue: SessionQueue
    reviewer: str | None
    new_id: Callable[[], str]

    def fetch(self, seen: frozenset[str]) -> tuple[QueueCard | None, SessionProgress]:
        card = self.queue.next_card(seen)
        return card, self.queue.progress()

    def card(self, item_id: str) -> QueueCard:
        return self.queue.card_of(item_id)

    def submit(self, action: SessionAction) -> tuple[DecisionResult, DecisionUse]:
        from reviewtrail.human_review.session import decide, decision_use

        assert action.item_id is not None and action.decision is not None
        item_id = action.item_id
        result = decide(
            self.store, item_id, action.decision, submission_id=action.submission_id, reviewer=self.reviewer
        )
        return result, decision_use(self.store, item_id)

    def release(self, item_ids: set[str]) -> None:
        for item_id in item_ids:
            self.queue.release(item_id)

    def renew(self, item_ids: set[str]) -> None:
        for item_id in item_ids:
            self.queue.renew(item_id)


def drive(state: ReviewSession, keys: KeyInput, console: Console, driver: Driver) -> None:
    """Run ``state`` until it quits or runs out of cards: carry out each action it asks for,
    draw what changed, read the input it waits for (the end of input quits)."""
    from reviewtrail.cli.review._session_draw import draw

    action: SessionAction | None = state.start()
    while True:
        held = state.held
        if action is None:
            draw(console, state)
        while action is not None and action.kind != "quit":
            action = _carry(state, action, console, driver)
            draw(console, state)
        driver.release(held - state.held)
        if action is not None or state.mode in ("done", "quit"):
            return
        action = _read(state, keys)
        driver.renew(state.held)


def _carry(state: ReviewSession, action: SessionAction, console: Console, driver: Driver) -> SessionAction | None:
    """Carry out ``action``; the action that follows from it at once, if any."""
    from reviewtrail.cli.review._session_draw import draw
    from reviewtrail.errors import ReviewtrailError

    if action.kind == "fetch":
        card, progress = driver.fetch(action.seen)
        state.show(card, driver.new_id(), progress)
        held = driver.queue.held_elsewhere() if card is None else 0
        if held:
            state.message = (
                f"{held} open item(s) are held by other reviewers' sessions "
                "(a lease ends with a decision, or after 10 minutes)"
            )
    elif action.kind == "card" and action.item_id is not None:
        state.show(driver.card(action.item_id), driver.new_id())
    elif action.kind == "submit":
        draw(console, state)  # "recording..."
        try:
            result, use = driver.submit(action)
        except ReviewtrailError as exc:
            message = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
            state.refused(exc.field, message)
            return None
        return state.decided(result, use)
    return None


def _read(state: ReviewSession, keys: KeyInput) -> SessionAction | None:
    if state.wants == "key":
        key = keys.key()
        return state.quit() if key is None else state.press(key)
    text = keys.line() if state.wants == "line" else keys.text()
    return state.quit() if text is None else state.enter(text)
