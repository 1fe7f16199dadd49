"""The next card of a review session: the first open item of a campaign that the session has not
shown yet (docs/human-review.md, "Review session")."""

from __future__ import annotations

from collections.abc import Collection

from reviewtrail.human_review._campaigns import require_campaign
from reviewtrail.human_review._queue import QUEUE_MAX, QueueCard, review_queue
from reviewtrail.store import Store

__all__ = ["next_open_card"]


def next_open_card(
    store: Store, campaign_id: str, version: int | None = None, *, seen: Collection[str] = ()
) -> QueueCard | None:
    """The first blinded card of ``campaign_id`` (``version``) with no decision whose item is not
    in ``seen`` (the items a session already showed: an invalid item passed over stays open, and
    must not come straight back), or None when there is none. An unknown campaign is not found
    (field ``campaign``)."""
    require_campaign(store.ledger, campaign_id, version)
    limit = 1
    while True:
        cards = review_queue(store, campaign_id, version, limit=limit, include_decided=False)
        for card in cards:
            if card.item_id not in seen:
                return card
        if len(cards) < limit or limit >= QUEUE_MAX:
            return None
        # Only seen items that are still open come before the next one: page past them.
        limit = min(QUEUE_MAX, max(2 * limit, len(seen) + 1))
