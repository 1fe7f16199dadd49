"""The Review page's keyboard shortcuts: the decision keys of ``review session`` (active for a
signed-in reviewer behind the proxy, shown and inactive otherwise) and the page's own navigation
keys. A single-key disposition (u, m, s, t) waits for Enter before anything is sent."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DECISION_KEYS", "NAVIGATION_KEYS", "Key"]


@dataclass(frozen=True)
class Key:
    key: str
    name: str  # what it does
    shown: str  # how the page writes the key


# In the order a reviewer meets them: judgeability first, then the judgment, then its details.
DECISION_KEYS: tuple[Key, ...] = (
    Key("u", "underdetermined (then Enter records it, Esc cancels)", "u"),
    Key("m", "malformed (then Enter records it, Esc cancels)", "m"),
    Key("s", "skip (then Enter records it, Esc cancels)", "s"),
    Key("a", "prefer A (then 1 slight, 2 strong)", "a"),
    Key("b", "prefer B (then 1 slight, 2 strong)", "b"),
    Key("t", "tie (then Enter records it, Esc cancels)", "t"),
    Key("c", "correct: write the replacement response", "c"),
    Key("r", "reason codes", "r"),
    Key("g", "response tags", "g"),
    Key("f", "confidence", "f"),
    Key("y", "use for training", "y"),
    Key("n", "note", "n"),
    Key("z", "change the decision made last (a superseding decision)", "z"),
)

NAVIGATION_KEYS: tuple[Key, ...] = (
    Key("Enter", "record the disposition u, m, s or t chose; once recorded: continue to the next card", "Enter"),
    Key("Control+Enter", "in the correction: record it", "Ctrl+Enter"),
    Key("Escape", "leave a field, or cancel a preference or an unconfirmed disposition", "Esc"),
    Key("ArrowRight", "next card", "→"),
    Key("ArrowLeft", "previous card", "←"),
    Key("h", "this item's reviewed history", "h"),
    Key("?", "these shortcuts", "?"),
)
