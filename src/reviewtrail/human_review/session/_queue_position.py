"""One card of a campaign version's review queue, found by its position through the query
tables' indexes (docs/human-review.md, "The queue and history").

The queue (:func:`~._queue.review_queue`) is the open items in the order recorded, then the
decided ones in that order. Card K is found without building the K cards before it: the K-th
open item (and the one after it, which says more follow) is read at its offset along the
``hr_open`` index on (campaign, version, item seq), and the items are counted only when there is
no open item after it; past the open items, the decided items are the ``hr_items`` rows of the campaign
version, along its (campaign, version, seq) index, that have an ``hr_decided`` row. Only the card
shown is resolved, from the records as :func:`~._queue.review_queue` resolves its cards, and its
open or decided state is held against the records as there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import IntegrityError, InvalidInputError
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._table_reads import checked_page, checked_rows_in
from reviewtrail.human_review.session._queue import QUEUE_MAX, QueueCard, check_decided, queue_card
from reviewtrail.store import Store

__all__ = ["QueuePosition", "queue_position"]


@dataclass(frozen=True)
class QueuePosition:
    """Card ``position`` of a campaign version's queue (None past its end), whether a card
    follows it (``more``, within :data:`QUEUE_MAX`), and how many cards the queue holds
    (``cards``): counted only where the answer needs it, at or past the last open card. Before
    it (an open card with open cards after it) ``cards`` is None: card 1 of a campaign with
    50,000 open and 50,000 decided items reads two rows of the open items' index and counts
    nothing."""

    position: int
    card: QueueCard | None
    more: bool
    cards: int | None


def queue_position(store: Store, campaign_id: str, version: int, position: int) -> QueuePosition:
    """Card ``position`` (1 to :data:`QUEUE_MAX`) of the queue of ``campaign_id`` version
    ``version``: the card ``review_queue(store, campaign_id, version, limit=position)[-1]`` gives,
    read in one snapshot of the ledger at the cost of one card wherever it stands."""
    if isinstance(position, bool) or not isinstance(position, int) or not 1 <= position <= QUEUE_MAX:
        raise InvalidInputError(f"must be a whole number from 1 to {QUEUE_MAX}, got {position!r}", field="card")
    ledger = store.ledger
    where: dict[str, Any] = {"campaign_id": campaign_id, "campaign_version": version}
    with ledger.snapshot():
        # The open card at this offset and the one after it: two rows say the card is open with
        # more after it, and nothing need be counted.
        rows = checked_page(ledger, "hr_open", where, order_by="item_seq", after=None, limit=2, offset=position - 1)
        cards: int | None = None
        decided = False
        if len(rows) < 2:
            opened = position if rows else ledger.count("hr_open", **where)
            cards = opened + ledger.count_within("hr_items", "hr_decided", **where)
            if position > cards:
                return QueuePosition(position, None, False, cards)
            decided = position > opened
            if decided:
                rows = checked_page(
                    ledger, "hr_items", where, order_by="seq", after=None, limit=1, offset=position - opened - 1,
                    within="hr_decided",
                )  # fmt: skip
            if not rows:  # a row counted but not paged: its order column was emptied
                table = "hr_items" if decided else "hr_open"
                raise IntegrityError(
                    f"query table {table} counts {cards} card(s) but has no row at card {position}; "
                    "run 'reviewtrail verify'",
                    field=table,
                )
        more = position < QUEUE_MAX and (cards is None or position < cards)
        item_id = str(rows[0]["item_id"])
        records = Preloaded(ledger, [item_id], checked_rows_in(ledger, "hr_items", "item_id", [item_id]))
        check_decided(records, item_id, decided)
        return QueuePosition(position, queue_card(records, item_id, decided=decided), more, cards)
