"""The cards of a review session (docs/human-review.md, "Review session"): the campaign's open
items in the session's order (the never-judged ones in queue-key order with scenario families
interleaved, :mod:`._session_order`, then the skipped ones its reviewer did not skip), each card
read from the records when it is served, and the campaign's progress.

The plan — which items are open and their families — is read once, when the session starts (and
again when it runs out), from the query tables as stored: it decides only the order. Every card
served is resolved from the records (its digests re-checked, :func:`~._queue.queue_card`), and
an item the records show decided is passed over.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from reviewtrail.human_review.campaigns._campaigns import require_campaign
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._campaign_read import campaign_training, item_state
from reviewtrail.human_review.rules._queue_rules import in_queue_of
from reviewtrail.human_review.session._queue import QUEUE_MAX, QueueCard, queue_card, review_queue
from reviewtrail.human_review.session._session import DecisionUse, SessionProgress
from reviewtrail.human_review.session._session_order import interleave_families
from reviewtrail.human_review.session._skipped import decision_marks, skipped_open
from reviewtrail.ledger import Ledger
from reviewtrail.store import Store

if TYPE_CHECKING:
    from reviewtrail.human_review.session._lease import Leases

__all__ = ["SessionQueue", "campaign_progress", "decision_use", "next_open_card"]

_PAGE = 10_000


def decision_use(store: Store, item_id: str) -> DecisionUse:
    """Whether the active decision of ``item_id`` becomes an export example, and why not: the
    rule coverage and export apply (:func:`~._campaign_read.item_state`)."""
    ledger = store.ledger
    with ledger.snapshot():
        rows = ledger.rows_in("hr_items", "item_id", [item_id])
        campaign = (str(rows[0]["campaign_id"]), int(rows[0]["campaign_version"])) if rows else None
        enabled = campaign is not None and campaign_training(ledger, *campaign)
        state = item_state(Preloaded(ledger, [item_id], rows), item_id, training_enabled=enabled)
    if state.exportable:
        return DecisionUse("export-eligible", None)
    return DecisionUse("evaluation-only", state.refusal.problem if state.refusal is not None else "no active decision")


def campaign_progress(store: Store, campaign_id: str, version: int) -> SessionProgress:
    """How many items ``campaign_id`` version ``version`` has and how many of them are open (no
    decision, or a skip as their latest), counted from the query tables, as a session's status
    line shows them."""
    require_campaign(store.ledger, campaign_id, version)
    return _progress(store.ledger, campaign_id, [version])


def _progress(ledger: Ledger, campaign_id: str, versions: Collection[int]) -> SessionProgress:
    items = opened = 0
    for version in versions:
        where = {"campaign_id": campaign_id, "campaign_version": version}
        items += ledger.count("hr_items", **where)
        opened += ledger.count("hr_open", **where)
    opened += sum(1 for _ in skipped_open(ledger, [(campaign_id, v) for v in versions], None))
    return SessionProgress(items, opened)


class SessionQueue:
    """The cards of one session on ``campaign_id`` (``version``: only that version's items).
    ``leases``: the session's leases (:class:`~._lease.Leases`), so sessions at once are served
    different cards; None serves every open card. ``reviewer``: whose session it is (the skipped
    items it serves are those this reviewer did not skip; None: every skipped item)."""

    def __init__(
        self,
        store: Store,
        campaign_id: str,
        version: int | None = None,
        *,
        leases: Leases | None = None,
        reviewer: str | None = None,
    ) -> None:
        require_campaign(store.ledger, campaign_id, version)
        self._store = store
        self._reviewer = reviewer
        self._campaign = campaign_id
        self._version = version
        self._leases = leases
        self._versions: list[int] = []
        self._plan: list[str] = self._read_plan()
        self._at = 0
        #: How many open items the campaign had when the session started.
        self.planned = len(self._plan)

    @property
    def ledger(self) -> Ledger:
        return self._store.ledger

    def next_card(self, seen: Collection[str] = ()) -> QueueCard | None:
        """The next open card in the session's order that is not in ``seen`` and that no other
        session holds (it is then leased to this one), or None. When the plan runs out, the
        campaign's open items are read again once (items materialized since, leases expired)."""
        for again in (False, True):
            if again:
                self._plan, self._at = self._read_plan(), 0
            while self._at < len(self._plan):
                item_id = self._plan[self._at]
                self._at += 1
                if item_id in seen or not self._take(item_id):
                    continue
                card = self.card_of(item_id)
                if not card.decided:
                    return card
                self.release(item_id)
        return None

    def card_of(self, item_id: str) -> QueueCard:
        """The blinded card of ``item_id``, decided or not, read from the records."""
        ledger = self.ledger
        with ledger.snapshot():
            records = Preloaded(ledger, [item_id], ledger.rows_in("hr_items", "item_id", [item_id]))
            marks = decision_marks(records.rows("hr_decisions", item_id=item_id)).get(item_id, [])
            return queue_card(records, item_id, decided=not in_queue_of(self._reviewer, marks))

    def progress(self) -> SessionProgress:
        """The campaign's items and open items now (counted from the query tables)."""
        return _progress(self.ledger, self._campaign, self._versions)

    def held_elsewhere(self) -> int:
        """How many of the campaign's open items other sessions hold now."""
        if self._leases is None:
            return 0
        return len(self._leases.held_by_others(self._read_plan()))

    def renew(self, item_id: str) -> None:
        if self._leases is not None:
            self._leases.renew(item_id)

    def release(self, item_id: str) -> None:
        if self._leases is not None:
            self._leases.release(item_id)

    def _take(self, item_id: str) -> bool:
        return self._leases is None or self._leases.take(item_id)

    # --- the plan --------------------------------------------------------------------------------
    def _read_plan(self) -> list[str]:
        """The campaign's never-judged items in queue-key order, families interleaved
        (:func:`interleave_families`), then its skipped items this session's reviewer did not skip."""
        families: dict[str, str] = {}
        versions: set[int] = set()
        for row in self._rows("hr_prompts", {"campaign_id": self._campaign}, "seq"):
            if self._version is None or row["campaign_version"] == self._version:
                families[str(row["record_id"])] = str(row["scenario_family"])
                versions.add(int(row["campaign_version"]))
        self._versions = sorted(versions)
        opened: list[tuple[str, str]] = []
        prompt_of: dict[str, str] = {}
        for version in self._versions:
            where = {"campaign_id": self._campaign, "campaign_version": version}
            opened += [(str(r["queue_key"]), str(r["item_id"])) for r in self._rows("hr_open", where, "queue_key")]
            prompt_of |= {str(r["item_id"]): str(r["prompt_event_id"]) for r in self._rows("hr_items", where, "seq")}
        opened.sort()
        plan = interleave_families((families.get(prompt_of.get(i, ""), ""), i) for _, i in opened)
        campaigns = [(self._campaign, v) for v in self._versions]
        return plan + list(skipped_open(self.ledger, campaigns, self._reviewer))

    def _rows(self, table: str, where: dict[str, Any], order_by: str) -> Iterator[dict[str, Any]]:
        """Every row of ``table`` matching ``where``, as stored, a page at a time."""
        after = None
        while True:
            rows = self.ledger.page(table, where, order_by=order_by, after=after, limit=_PAGE, check=False)
            yield from rows
            if len(rows) < _PAGE:
                return
            after = rows[-1][order_by]


def next_open_card(
    store: Store, campaign_id: str, version: int | None = None, *, seen: Collection[str] = ()
) -> QueueCard | None:
    """The first blinded card of ``campaign_id`` (``version``) with no decision whose item is not
    in ``seen`` (the items a session already showed: an invalid item passed over stays open, and
    must not come straight back), or None when there is none, in the order recorded. An unknown
    campaign is not found (field ``campaign``)."""
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
