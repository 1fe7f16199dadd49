"""Drawing a review session with rich: the blinded card, the key legend, pickers and prompts,
and, once a decision is recorded, who produced candidates A and B. Every reviewer- or
model-written text is printed as plain text (never read as markup)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from reviewtrail.human_review import DecisionResult, QueueCard, ReviewSession

__all__ = ["LEGEND", "draw", "summary", "summary_json"]

LEGEND = (
    "a/b prefer · t tie · c correct · u underdetermined · m malformed · s skip"
    " | y training · r reasons · g tags · f confidence · n note | ? help · q quit"
)
_ASK = {
    "confidence": "confidence from 0 to 1 (Enter on an empty line clears it):",
    "note": "note, one line (Enter on an empty line clears it):",
    "replacement": "replacement response: type it, then a line holding a single '.' (only '.' cancels):",
}


def _say(console: Console, text: str, style: str | None = None) -> None:
    console.print(Text(text, style=style or ""))


def draw(console: Console, session: ReviewSession) -> None:
    """What changed in ``session`` (its ``event``), drawn."""
    event = session.event
    if event == "card" and session.card is not None:
        _card(console, session.card)
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
    elif event == "revealed" and session.result is not None:
        _revealed(console, session.result)
    elif event == "done":
        _say(console, "no more open review items in this campaign")
    if session.message:
        _say(console, session.message, "red" if event == "refused" else "yellow")
    if event in ("status", "refused") or (event == "message" and session.mode == "card"):
        _status(console, session)


def _card(console: Console, card: QueueCard) -> None:
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
    _say(console, LEGEND, "dim")


def _status(console: Console, session: ReviewSession) -> None:
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
    from reviewtrail.human_review import SESSION_KEYS

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


def _revealed(console: Console, result: DecisionResult) -> None:
    from reviewtrail.human_review import CandidateProvenance

    again = " (already recorded: nothing appended)" if result.resubmitted else ""
    _say(console, f"recorded {result.disposition}: decision {result.decision_id}{again}", "bold green")
    if result.superseded:
        _say(console, f"it leaves {result.superseded} earlier decision(s) inactive")
    t = Table(title="Candidates")
    for column in CandidateProvenance.COLUMNS:
        t.add_column(column, overflow="fold")
    for p in result.provenance:
        t.add_row(*(Text(c) for c in p.cells()))
    console.print(t)
    _say(console, "press any key for the next card (q quits)", "bold")


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
