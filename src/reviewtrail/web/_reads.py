"""What the inspector's pages show, read through the library calls the command line uses, on a
store opened read-only. One read at a time: the store's connection is shared by the server's
worker threads.

Nothing here adds provenance to a card: a :class:`~reviewtrail.human_review.QueueCard` holds no
run, agent, model, provider or adapter, and the page is drawn from it alone. Who produced A and
B comes only from :func:`~reviewtrail.human_review.history`, which reveals it once the item has a
decision.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewtrail.errors import InvalidInputError, NotFoundError

if TYPE_CHECKING:
    from reviewtrail.human_review import CampaignSummary, History, QueueCard
    from reviewtrail.store import Store

__all__ = ["CardView", "Reads"]


@dataclass(frozen=True)
class CardView:
    """Card ``position`` (1-based) of a campaign version's queue, unresolved items first; ``more``
    whether a card follows it."""

    campaign_id: str
    version: int
    position: int
    card: QueueCard | None
    more: bool


class Reads:
    """The inspector's reads over one store (opened read-only by :func:`~reviewtrail.web.serve`)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()

    @property
    def lock(self) -> threading.Lock:
        """Held for each use of the store's shared connection (the write route takes it too)."""
        return self._lock

    def campaigns(self) -> list[CampaignSummary]:
        from reviewtrail.human_review import list_campaigns

        with self._lock:
            return list_campaigns(self._store)

    def card(self, campaign_id: str, version: int, position: int) -> CardView:
        """Card ``position`` of the queue of ``campaign_id`` version ``version``: exit 3 (field
        ``campaign``) for a version with no prompt, exit 2 (field ``card``) for a position out of
        the queue's range, exit 3 (field ``card``) past its last card."""
        from reviewtrail.human_review import QUEUE_MAX, require_campaign, review_queue

        if not 1 <= position <= QUEUE_MAX:
            raise InvalidInputError(f"must be from 1 to {QUEUE_MAX}, got {position}", field="card")
        with self._lock:
            require_campaign(self._store.ledger, campaign_id, version)
            cards = review_queue(self._store, campaign_id, version, limit=min(position + 1, QUEUE_MAX))
        if cards and position > len(cards):
            raise NotFoundError(f"the queue has {len(cards)} card(s), there is no card {position}", field="card")
        card = cards[position - 1] if cards else None
        return CardView(campaign_id, version, position, card, len(cards) > position)

    def history(self, item_id: str) -> History:
        from reviewtrail.human_review import history

        with self._lock:
            return history(self._store, item_id)
