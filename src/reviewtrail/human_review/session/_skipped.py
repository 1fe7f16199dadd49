"""The items a skip left open, and a reviewer's own counts, read from the query tables
(docs/human-review.md, "The queue and history").

An item whose latest decision is a skip is still open (:mod:`~..rules._queue_rules`): the queue
serves it after the never-judged items to every reviewer who has not skipped it. Its
``hr_decided`` row carries a ``skip_key``; those rows are read in that key's order, a page at a
time, and kept when their item (its ``hr_items`` row) belongs to the campaign versions asked for
and the reviewer asked for did not skip it (the item's ``hr_decisions`` rows). A decision row
names no campaign (it is a pure function of the decision record, which names its item only), so
this read passes over the skipped items of other campaigns: its cost is the number of skipped
items before the ones served, not the number of items.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.rules._queue_rules import (
    DecisionMark,
    ItemState,
    in_queue_of,
    item_state,
    skippers,
)
from reviewtrail.ledger import Ledger

__all__ = ["OwnCounts", "check_state", "decision_marks", "own_counts", "skipped_open"]

_PAGE = 500
_SAID = {"never-judged": "open (never judged)", "skipped": "open (skipped)", "judged": "judged"}


def decision_marks(rows: Iterable[dict[str, Any]]) -> dict[str, list[DecisionMark]]:
    """Item id -> the marks of its decisions, from ``hr_decisions`` rows."""
    out: dict[str, list[DecisionMark]] = {}
    for row in rows:
        mark = DecisionMark(int(row["seq"]), str(row["disposition"]), str(row.get("actor") or ""))
        out.setdefault(str(row["item_id"]), []).append(mark)
    return out


def _campaign_of(rows: Iterable[dict[str, Any]]) -> dict[str, tuple[str, int]]:
    return {str(r["item_id"]): (str(r["campaign_id"]), int(r["campaign_version"])) for r in rows}


def skipped_open(
    ledger: Ledger, campaigns: Iterable[tuple[str, int]] | None, reviewer: str | None, *, size: int = _PAGE
) -> Iterator[str]:
    """The skipped items of ``campaigns`` ((campaign, version) pairs; None: every campaign) in
    ``reviewer``'s queue (None: anyone's), in skip-key order."""
    wanted = None if campaigns is None else set(campaigns)
    after = None
    while True:
        rows = ledger.page("hr_decided", None, order_by="skip_key", after=after, limit=size)
        ids = [str(r["item_id"]) for r in rows]
        if ids:
            of = _campaign_of(ledger.rows_in("hr_items", "item_id", ids))
            ids = [i for i in ids if i in of and (wanted is None or of[i] in wanted)]
        if ids:
            marks = decision_marks(ledger.rows_in("hr_decisions", "item_id", ids))
            yield from (i for i in ids if in_queue_of(reviewer, marks.get(i, ())))
        if len(rows) < size:
            return
        after = rows[-1]["skip_key"]


def check_state(records: Preloaded, item_id: str, state: ItemState) -> None:
    """The query tables put ``item_id`` in ``state``; the records about it must agree, or the
    read is refused (exit 4): a restored ``hr_open`` or ``hr_decided`` row never shows a judged
    item as open, nor an open one as judged."""
    found = item_state(decision_marks(records.rows("hr_decisions", item_id=item_id)).get(item_id, ()))
    if found == state:
        return
    table = "hr_open" if state == "never-judged" else "hr_decided"
    raise IntegrityError(
        f"query table {table} lists item {item_id} as {_SAID[state]}, but its decision records make it "
        f"{_SAID[found]}; "
        "run 'reviewtrail verify'",
        field=table,
    )


class OwnCounts(msgspec.Struct, frozen=True):
    """One reviewer's share of a campaign version: the items whose active decision is theirs
    (``decided``: a judgment) and the open items they skipped (out of their queue)."""

    reviewer: str
    decided: int
    skipped: int

    def to_json(self) -> dict[str, Any]:
        return {"reviewer": self.reviewer, "decided": self.decided, "skipped": self.skipped}


def own_counts(ledger: Ledger, campaign: tuple[str, int], reviewer: str) -> OwnCounts:
    """``reviewer``'s counts on ``campaign`` (campaign, version), read by the reviewer's
    decisions (the ``hr_decisions`` index on ``actor``): their cost is that reviewer's decisions."""
    mine = {str(r["item_id"]) for r in ledger.rows_in("hr_decisions", "actor", [reviewer])}
    of = _campaign_of(ledger.rows_in("hr_items", "item_id", mine))
    items = [i for i in mine if of.get(i) == campaign]
    marks = decision_marks(ledger.rows_in("hr_decisions", "item_id", items))
    decided = skipped = 0
    for item_id in items:
        item = marks.get(item_id, [])
        state = item_state(item)
        if state == "judged" and max(item, key=lambda d: d.seq).actor == reviewer:
            decided += 1
        elif state == "skipped" and reviewer in skippers(item):
            skipped += 1
    return OwnCounts(reviewer, decided, skipped)
