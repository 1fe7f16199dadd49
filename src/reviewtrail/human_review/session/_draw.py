"""A reviewer's next card, leased to them (docs/human-review.md, "Several reviewers at once"): what
the Review page serves a signed-in reviewer, so two reviewers working at once are never served the
same open card.

The card is the first of the reviewer's queue (:mod:`~..rules._queue_rules`: the never-judged
items in queue-key order, then the items the reviewer is due to judge a second time, then the
skipped items the reviewer did not skip) that no one else holds
a lease on, leased to the reviewer (:func:`~._lease.reviewer_holder`) in one statement that two
reviewers cannot both win. A card the reviewer already holds in this campaign version, still in
their queue, is served again (a reload, a second tab) and its lease renewed. An invalid item is
passed over (it cannot be decided, so it would hold the reviewer); its lease is released at once.
The lease ends when the reviewer's decision is recorded (the write route releases it), or expires.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from reviewtrail.human_review.campaigns._campaigns import require_campaign
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.rules._queue_rules import in_queue_of
from reviewtrail.human_review.session._lease import Leases, reviewer_holder
from reviewtrail.human_review.session._queue import QueueCard, queue_card
from reviewtrail.human_review.session._second_judgments import DUE_MAX, second_judgment_due_for, second_judgments_due
from reviewtrail.human_review.session._skipped import decision_marks, skipped_open
from reviewtrail.ledger import Ledger
from reviewtrail.store import Store

__all__ = ["draw_card"]

_PAGE = 100


def draw_card(store: Store, campaign_id: str, version: int, reviewer: str, leases: Leases) -> QueueCard | None:
    """``reviewer``'s next open card of ``campaign_id`` version ``version``, leased to them, or
    None when no open card is left to them (every one judged, skipped by them, or held by
    others). An unknown campaign version is not found (field ``campaign``)."""
    ledger = store.ledger
    require_campaign(ledger, campaign_id, version)
    holder = reviewer_holder(reviewer)
    mine = leases.held_by(holder)
    if mine:
        for item_id in _in_campaign(ledger, mine, (campaign_id, version)):
            found = _card(ledger, item_id, reviewer)
            if found is not None:
                leases.take(item_id, holder=holder)  # renewed to a full lease
                return found
            leases.release(item_id, holder=holder)  # decided meanwhile: no longer the reviewer's
    others = leases.held_by_others(holder=holder)
    for item_id in _queue(store, campaign_id, version, reviewer):
        if item_id in others or item_id in mine or not leases.take(item_id, holder=holder):
            continue
        found = _card(ledger, item_id, reviewer)
        if found is not None:
            return found
        leases.release(item_id, holder=holder)
    return None


def _queue(store: Store, campaign_id: str, version: int, reviewer: str) -> Iterator[str]:
    """The reviewer's queue, a page at a time: never-judged items, then the items they are due to
    judge a second time (:func:`~._second_judgments.second_judgments_due`), then skipped ones."""
    ledger = store.ledger
    where: dict[str, Any] = {"campaign_id": campaign_id, "campaign_version": version}
    after = None
    while True:
        rows = ledger.page("hr_open", where, order_by="queue_key", after=after, limit=_PAGE)
        yield from (str(r["item_id"]) for r in rows)
        if len(rows) < _PAGE:
            break
        after = rows[-1]["queue_key"]
    yield from second_judgments_due(store, campaign_id, version, reviewer, limit=DUE_MAX)
    yield from skipped_open(ledger, [(campaign_id, version)], reviewer)


def _in_campaign(ledger: Ledger, item_ids: set[str], campaign: tuple[str, int]) -> list[str]:
    rows = ledger.rows_in("hr_items", "item_id", sorted(item_ids))
    return [str(r["item_id"]) for r in rows if (r["campaign_id"], r["campaign_version"]) == campaign]


def _card(ledger: Ledger, item_id: str, reviewer: str) -> QueueCard | None:
    """The item's card, read from the records, when it is still in the reviewer's queue and valid."""
    with ledger.snapshot():
        records = Preloaded(ledger, [item_id], ledger.rows_in("hr_items", "item_id", [item_id]))
        marks = decision_marks(records.rows("hr_decisions", item_id=item_id)).get(item_id, [])
        if not in_queue_of(reviewer, marks) and not second_judgment_due_for(ledger, item_id, reviewer):
            return None
        card = queue_card(records, item_id, decided=False)
    return card if card.valid else None
