"""Which review items are in a reviewer's queue, and in what order (docs/human-review.md, "The
queue and history"). Pure rules, no I/O: the query tables give these facts, the reads hold them
against the records.

- An item is **never judged** while it has no decision record; it is **skipped** while its latest
  decision is a ``skip`` (a skip supplies no judgment, so the item is still open); otherwise it is
  **judged** (closed).
- A reviewer's queue is the never-judged items, then the skipped items that reviewer has not
  skipped, each part in its queue key's order (:func:`~..records._projection.queue_key`, a fixed
  shuffle of the item ids). A judged item is in no queue. A skip takes the item out of the
  skipping reviewer's queue only; whoever judges it next supersedes the skip.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from reviewtrail.human_review.records._projection import SKIP

__all__ = ["DecisionMark", "ItemState", "in_queue_of", "item_state", "queue_order", "skippers"]

ItemState = Literal["never-judged", "skipped", "judged"]


class DecisionMark(msgspec.Struct, frozen=True):
    """What the queue needs of one decision record: its seq, disposition and reviewer (actor)."""

    seq: int
    disposition: str
    actor: str


def item_state(decisions: Iterable[DecisionMark]) -> ItemState:
    """The state of an item with ``decisions`` (any order): by its latest decision record."""
    latest = max(decisions, key=lambda d: d.seq, default=None)
    if latest is None:
        return "never-judged"
    return "skipped" if latest.disposition == SKIP else "judged"


def skippers(decisions: Iterable[DecisionMark]) -> frozenset[str]:
    """The reviewers who recorded a skip on the item."""
    return frozenset(d.actor for d in decisions if d.disposition == SKIP)


def in_queue_of(reviewer: str | None, decisions: Iterable[DecisionMark]) -> bool:
    """Whether an item with ``decisions`` is in ``reviewer``'s queue (None: anyone's, the
    campaign's open items): never judged, or skipped by others only."""
    marks = list(decisions)
    state = item_state(marks)
    if state == "never-judged":
        return True
    return state == "skipped" and (reviewer is None or reviewer not in skippers(marks))


def queue_order(items: Iterable[tuple[str, str, Iterable[DecisionMark]]], reviewer: str | None) -> list[str]:
    """The item ids of ``items`` — (item id, queue key, its decisions) — in ``reviewer``'s queue,
    in the queue's order: never-judged ones by key, then skipped ones by key."""
    tiers: list[tuple[int, str, str]] = []
    for item_id, key, decisions in items:
        marks = list(decisions)
        if in_queue_of(reviewer, marks):
            tiers.append((0 if item_state(marks) == "never-judged" else 1, key, item_id))
    return [item_id for _, _, item_id in sorted(tiers)]
