"""The order a review session serves cards in: scenario families interleaved, so a reviewer never
judges one family in a block while another has cards left (docs/human-review.md, "Review
session"). A pure rule: the same items in the same order give the same cards in the same order.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

__all__ = ["interleave_families"]


def interleave_families(items: Iterable[tuple[str, str]]) -> list[str]:
    """The item ids of ``items`` — (scenario family, item id) pairs in the order the items were
    recorded — in the session's order. Each family's items keep the order recorded. Each next
    card comes from the family with the most items left, other than the family of the card
    before it (when another family has items left); a tie goes to the family whose next item was
    recorded first. So two consecutive cards share a family only when no other family has items
    left, and no order can have fewer such pairs: ``max(0, m - (n - m) - 1)`` for ``n`` items of
    which the largest family holds ``m``. An item id given twice is served once (its first
    place)."""
    families: dict[str, list[tuple[int, str]]] = {}
    placed: set[str] = set()
    for index, (family, item_id) in enumerate(items):
        if item_id in placed:
            continue
        placed.add(item_id)
        families.setdefault(family, []).append((index, item_id))
    # A heap of (-items left, index of the family's next item, family, position in its list).
    heap = [(-len(queue), queue[0][0], family, 0) for family, queue in families.items()]
    heapq.heapify(heap)
    order: list[str] = []
    last: str | None = None
    while heap:
        entry = heapq.heappop(heap)
        held = None
        if entry[2] == last and heap:
            held, entry = entry, heapq.heappop(heap)
        left, _, family, at = entry
        queue = families[family]
        order.append(queue[at][1])
        last = family
        if left + 1 < 0:
            heapq.heappush(heap, (left + 1, queue[at + 1][0], family, at + 1))
        if held is not None:
            heapq.heappush(heap, held)
    return order
