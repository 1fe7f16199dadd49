"""Privacy toward agents: what an agent-facing surface serves of human review's cards.

By default a server serves only what the privacy join says is ``public-source``. A card whose
join (prompt, item, and each candidate's run and output, reclassifications applied) is private or
sensitive keeps its item id, campaign, scenario family, criterion and validity, so the agent can
see that it exists and why it is not shown, but its prompt, evidence and responses are withheld
(null), with the reason on the card and a count beside the cards; a recorded decision's prompt
label is withheld the same way. A server started with
``--serve-private`` serves them (docs/agents/claude-code.md, "Privacy").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reviewtrail.human_review.session import QueueCard

__all__ = ["served_cards", "served_decision"]

_HOW = "start the server with --serve-private to serve them"


def _withheld(card: QueueCard) -> dict[str, Any]:
    doc = card.to_json()
    doc["prompt"] = None
    doc["evidence"] = None
    doc["candidates"] = [{"position": c["position"], "response": None} for c in doc["candidates"]]
    doc["withheld"] = f"the privacy join of this card is {card.privacy}, not public-source"
    return doc


def served_cards(cards: Iterable[QueueCard], *, serve_private: bool) -> dict[str, Any]:
    """The cards as an agent gets them: ``{"cards": [...], "withheld": {"count", "reason"}}``."""
    out: list[dict[str, Any]] = []
    count = 0
    for card in cards:
        if serve_private or card.privacy == "public-source":
            out.append(card.to_json())
        else:
            count += 1
            out.append(_withheld(card))
    reason = (
        f"prompts and responses whose privacy join is private or sensitive are withheld from agents; {_HOW}"
        if count
        else None
    )
    return {"cards": out, "withheld": {"count": count, "reason": reason}}


def served_decision(doc: dict[str, Any], *, serve_private: bool) -> dict[str, Any]:
    """A recorded decision as an agent gets it: its prompt's label (the prompt's first words)
    withheld, with the reason, when the decision's privacy (never more open than its item's
    chain) is not ``public-source``."""
    if serve_private or doc.get("privacy") == "public-source":
        return doc
    return {
        **doc,
        "promptLabel": None,
        "withheld": f"the decision's privacy is {doc.get('privacy')}, not public-source: its prompt label is withheld",
    }
