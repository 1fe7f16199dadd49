"""Drawing a review session with rich: the blinded card under its status line, the key legend,
pickers and prompts, and, once a decision is recorded, who produced candidates A and B on a
screen of its own (or all at the end). On a terminal the screen and its scrollback are cleared
before each card, each reveal and the end, so nothing revealed stays above a blinded card. Every
reviewer- or model-written text is printed as plain text (never read as markup)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from reviewtrail.human_review.session import DecisionResult, ReviewSession

__all__ = ["CLEAR", "LEGEND", "draw", "reveals_at_end", "summary", "summary_json"]

LEGEND = (
    "a/b prefer · t tie · c correct · u underdetermined · m malformed · s skip"
    " | y training · r reasons · g tags · f confidence · n note | z undo · ? help · q quit"
)
#: Cursor home, clear the screen, clear the scrollback (written only to a terminal).
CLEAR = "\x1b[H\x1b[2J\x1b[3J"
_ASK = {
    "confidence": "confidence from 0 to 1 (Enter on an empty line clears it):",
    "note": "note, one line (Enter on an empty line clears it):",
    "replacement": "replacement response: type it, then a line holding a single '.' (only '.' cancels):",
}


def _say(console: Console, text: str, style: str | None = None) -> None:
    console.print(Text(text, style=style or ""))


def clear(console: Console) -> None:
    """Clear the screen and its scrollback, when drawing to a terminal."""
    if console.file.isatty():
        console.file.write(CLEAR)
        console.file.flush()


def draw(console: Console, session: ReviewSession) -> None:
    """What changed in ``session`` (its ``event``), drawn."""
    event = session.event
    if event == "card" and session.card is not None:
        clear(console)
        _status(console, session)
        _card(console, session)
    elif event == "help":
        _help(console)
    elif event == "strength":
        _say(console, f"prefer {session.preferred}: 1 slight · 2 strong · x back", "bold")
    elif event == "picker":
        _picker(console, session)
    elif event == "ask":
        _say(console, _ASK.get(session.mode, ""), "bold")
    elif event == "submitting":
        _say(console, "recording...")
    elif event == "confirm" and session.pending is not None and session.revising is not None:
        d = session.pending.decision
        new = d.disposition if d is not None else "?"
        old = session.revising
        _say(console, f"record {new} on this item, superseding decision {old.decision_id} ({old.disposition})?", "bold")
        _say(console, "y records it (the earlier decision stays recorded, superseded) · n goes back", "bold")
    elif event == "revealed" and session.result is not None:
        clear(console)
        _revealed(console, session)
    elif event == "done":
        clear(console)
        _say(console, "no more open review items in this campaign")
    if session.message:
        _say(console, session.message, "red" if event == "refused" else "yellow")
    if event in ("status", "refused") or (event == "message" and session.mode == "card"):
        _draft(console, session)


def _card(console: Console, session: ReviewSession) -> None:
    card = session.card
    assert card is not None
    if session.revising is not None:
        old = session.revising
        _say(console, f"revising decision {old.decision_id} ({old.disposition}): a decision here supersedes it; "
             "x or Esc goes back", "bold yellow")  # fmt: skip
    criterion = card.criterion
    title = f"item {card.item_id} · {card.campaign_id} v{card.campaign_version} · {card.scenario_family}"
    console.rule(Text(title))
    _say(console, f"criterion: {criterion['label']} ({criterion['id']}@{criterion['version']})", "bold")
    _say(console, str(criterion["instructions"]))
    console.print(Panel(Text(card.prompt), title="prompt", title_align="left"))
    if card.evidence is not None:
        console.print(Panel(Text(card.evidence), title="evidence", title_align="left"))
    if not card.valid:
        _say(console, "INVALID: this item no longer binds what it froze (responses withheld)", "bold red")
        for problem in card.problems:
            _say(console, f"  - {problem}", "red")
        _say(console, "s passes over it (nothing recorded) · ? help · q quit")
        return
    for candidate in card.candidates:
        console.print(Panel(Text(candidate.response or ""), title=candidate.position, title_align="left"))
    _draft(console, session)


def status_line(session: ReviewSession) -> str:
    """Card k of N, the campaign's coverage, and the training flag."""
    k, n = session.counts
    parts = [f"card {k} of {n}"]
    if session.progress is not None:
        p = session.progress
        parts.append(f"campaign: {p.decided} of {p.items} items decided")
    parts.append(f"use for training: {'yes' if session.draft.use_for_training else 'no'}")
    return " · ".join(parts)


def last_decision_line(session: ReviewSession) -> str | None:
    """Whether the decision recorded last will be exported, and why not."""
    if not session.recorded or session.last_use is None:
        return None
    last, use = session.recorded[-1], session.last_use
    why = f": {use.reason}" if use.reason else ""
    return f"last decision ({last.disposition}, {last.decision_id}): {use.use}{why}"


def _status(console: Console, session: ReviewSession) -> None:
    _say(console, status_line(session), "bold")
    line = last_decision_line(session)
    if line is not None:
        _say(console, line)


def _draft(console: Console, session: ReviewSession) -> None:
    if session.card is None or not session.card.valid:
        return
    d = session.draft
    confidence = "-" if d.confidence is None else f"{d.confidence:g}"
    parts = [
        f"training: {'yes' if d.use_for_training else 'no'}",
        f"reasons: {', '.join(d.reason_codes) or '-'}",
        f"tags: {', '.join(d.response_tags) or '-'}",
        f"confidence: {confidence}",
        f"note: {d.note or '-'}",
    ]
    _say(console, " · ".join(parts))
    _say(console, LEGEND, "dim")


def _picker(console: Console, session: ReviewSession) -> None:
    what = "reason codes" if session.mode == "reasons" else "response tags"
    _say(console, f"pick {what} (at most 2), Enter when done:", "bold")
    for label, value, picked in session.pick_options():
        _say(console, f"  [{'x' if picked else ' '}] {label} {value}")


def _help(console: Console) -> None:
    from reviewtrail.human_review.session import SESSION_KEYS

    t = Table(title="Review session keys", show_header=False)
    t.add_column("key", no_wrap=True)
    t.add_column("does")
    for key, does in SESSION_KEYS:
        t.add_row(Text(key), Text(does))
    console.print(t)
    _say(
        console,
        "Candidates are blinded: who produced A and B is shown only after your decision is recorded.",
    )


def _revealed(console: Console, session: ReviewSession) -> None:
    result = session.result
    assert result is not None
    _recorded(console, result)
    line = last_decision_line(session)
    if line is not None:
        _say(console, line)
    _provenance(console, result)
    _say(console, "press any key for the next card (z undoes this decision, q quits)", "bold")


def _recorded(console: Console, result: DecisionResult) -> None:
    again = " (already recorded: nothing appended)" if result.resubmitted else ""
    _say(console, f"recorded {result.disposition}: decision {result.decision_id}{again}", "bold green")
    if result.superseded:
        _say(console, f"it leaves {result.superseded} earlier decision(s) inactive")
    if result.notice:
        _say(console, f"it {result.notice}")


def _provenance(console: Console, result: DecisionResult) -> None:
    from reviewtrail.human_review.session import CandidateProvenance

    t = Table(title="Candidates")
    for column in CandidateProvenance.COLUMNS:
        t.add_column(column, overflow="fold")
    for p in result.provenance:
        t.add_row(*(Text(c) for c in p.cells()))
    console.print(t)


def reveals_at_end(console: Console, session: ReviewSession) -> None:
    """Who produced A and B of every decision this session recorded (``--reveal end``)."""
    if not session.recorded:
        return
    _say(console, "who produced candidates A and B:", "bold")
    for result in session.recorded:
        _say(console, f"item {result.item_id}: {result.disposition}, decision {result.decision_id}")
        _provenance(console, result)


def summary(console: Console, session: ReviewSession) -> None:
    """What this session recorded."""
    counts = Counter(r.disposition for r in session.recorded if not r.resubmitted)
    by = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
    total = sum(counts.values())
    line = f"session: {total} decision(s) recorded" + (f" ({by})" if by else "")
    if session.passed:
        line += f"; {len(session.passed)} invalid item(s) passed over"
    _say(console, line, "bold")


def summary_json(session: ReviewSession) -> dict[str, Any]:
    """What this session recorded, for ``--json``."""
    return {
        "decisions": [
            {
                "decisionId": r.decision_id,
                "itemId": r.item_id,
                "disposition": r.disposition,
                "resubmitted": r.resubmitted,
            }
            for r in session.recorded
        ],
        "passedOver": list(session.passed),
    }
