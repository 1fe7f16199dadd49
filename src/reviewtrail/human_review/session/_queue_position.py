"""One card of a campaign version's review queue, found by its position through the query
tables' indexes (docs/human-review.md, "The queue and history").

The queue (:func:`~._queue.review_queue`) is the open items — the never-judged ones in queue-key
order, then the skipped ones in skip-key order — then the judged ones in the order recorded. Card
K is found without building the K cards before it: the K-th never-judged item (and the one after
it, which says more follow) is read at its offset along the ``hr_open`` index on (campaign,
version, queue key), and the items are counted only when there is no never-judged item after it.
Past them come the campaign version's skipped items (:func:`~._skipped.skipped_open`, whose cost
is the skipped items of the store), then the judged items: the ``hr_items`` rows of the campaign
version, along its (campaign, version, seq) index, that have an ``hr_decided`` row and are not
skipped. Only the card shown is resolved, from the records as :func:`~._queue.review_queue`
resolves its cards, and its state is held against the records as there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import IntegrityError, InvalidInputError
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.rules._queue_rules import ItemState
from reviewtrail.human_review.session._queue import QUEUE_MAX, QueueCard, queue_card
from reviewtrail.human_review.session._skipped import check_state, skipped_open
from reviewtrail.ledger import Ledger
from reviewtrail.store import Store

__all__ = ["QueuePosition", "queue_position"]


@dataclass(frozen=True)
class QueuePosition:
    """Card ``position`` of a campaign version's queue (None past its end), whether a card
    follows it (``more``, within :data:`QUEUE_MAX`), and how many cards the queue holds
    (``cards``): counted only where the answer needs it, at or past the last never-judged card.
    Before it ``cards`` is None: card 1 of a campaign with 50,000 open and 50,000 decided items
    reads two rows of the open items' index and counts nothing."""

    position: int
    card: QueueCard | None
    more: bool
    cards: int | None


def queue_position(store: Store, campaign_id: str, version: int, position: int) -> QueuePosition:
    """Card ``position`` (1 to :data:`QUEUE_MAX`) of the queue of ``campaign_id`` version
    ``version``: the card ``review_queue(store, campaign_id, version, limit=position)[-1]`` gives,
    read in one snapshot of the ledger."""
    if isinstance(position, bool) or not isinstance(position, int) or not 1 <= position <= QUEUE_MAX:
        raise InvalidInputError(f"must be a whole number from 1 to {QUEUE_MAX}, got {position!r}", field="card")
    ledger = store.ledger
    where: dict[str, Any] = {"campaign_id": campaign_id, "campaign_version": version}
    with ledger.snapshot():
        # The never-judged card at this offset and the one after it: two rows say the card is
        # open with more after it, and nothing need be counted.
        rows = ledger.page("hr_open", where, order_by="queue_key", after=None, limit=2, offset=position - 1)
        cards: int | None = None
        state: ItemState = "never-judged"
        item_id = str(rows[0]["item_id"]) if rows else None
        if len(rows) < 2:
            opened = position if rows else ledger.count("hr_open", **where)
            skipped = list(skipped_open(ledger, [(campaign_id, version)], None))
            judged = ledger.count_within("hr_items", "hr_decided", **where) - len(skipped)
            cards = opened + len(skipped) + judged
            if position > cards:
                return QueuePosition(position, None, False, cards)
            if position > opened + len(skipped):
                state, item_id = "judged", _judged_at(ledger, where, position - opened - len(skipped), set(skipped))
            elif position > opened:
                state, item_id = "skipped", skipped[position - opened - 1]
            if item_id is None:  # a row counted but not paged: its order column was emptied
                table = "hr_items" if state == "judged" else "hr_open"
                raise IntegrityError(
                    f"query table {table} counts {cards} card(s) but has no row at card {position}; "
                    "run 'reviewtrail verify'",
                    field=table,
                )
        assert item_id is not None
        more = position < QUEUE_MAX and (cards is None or position < cards)
        records = Preloaded(ledger, [item_id], ledger.rows_in("hr_items", "item_id", [item_id]))
        check_state(records, item_id, state)
        return QueuePosition(position, queue_card(records, item_id, decided=state == "judged"), more, cards)


def _judged_at(ledger: Ledger, where: dict[str, Any], nth: int, skipped: set[str]) -> str | None:
    """The ``nth`` (1-based) judged item of the campaign version in the order recorded: its
    decided items (``hr_items`` within ``hr_decided``) other than the ``skipped`` ones."""
    if not skipped:
        rows = ledger.page("hr_items", where, order_by="seq", after=None, limit=1, offset=nth - 1, within="hr_decided")
        return str(rows[0]["item_id"]) if rows else None
    after = None
    while True:  # the skipped items are few beside a page: passed over as they come
        rows = ledger.page("hr_items", where, order_by="seq", after=after, limit=500, within="hr_decided")
        for row in rows:
            if str(row["item_id"]) not in skipped:
                nth -= 1
                if nth == 0:
                    return str(row["item_id"])
        if len(rows) < 500:
            return None
        after = rows[-1]["seq"]
