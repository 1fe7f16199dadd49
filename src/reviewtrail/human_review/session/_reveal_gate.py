"""The reveal gate: whether the producer of the response shown at a position of an item may be
shown to a reviewer (docs/human-review.md, "Blinding"). A response's producer (run, output event,
agent, model, provider, adapters, catalog) is shown only when no open item shows that response:
the same run, or the same exact text (compared by the SHA-256 of the text, so identical texts
from other runs or prompts stay withheld too). The item itself counts, so a skip reveals nothing.

Whether an item is open is decided in one place, :func:`item_open`; every part of the package
that asks it goes through that function.

The read is bounded by what shares a response: the output texts' digests of the item's two runs
(``hr_run_parts`` by run id), the runs with those digests (``hr_run_parts`` by ``text_digest``),
the items showing those runs (``hr_item_runs`` by run id), and each such item's decisions; only
an item with a decision other than a skip has its decisions checked against its record and
criterion."""

from __future__ import annotations

from dataclasses import dataclass

from reviewtrail._struct import read
from reviewtrail.errors import NotFoundError
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._chains import Records
from reviewtrail.human_review.reads._resolve import item_decisions, prompt_ref
from reviewtrail.human_review.records._projection import SKIP
from reviewtrail.human_review.records._records import ReviewItem
from reviewtrail.human_review.rules._decision_rules import DecisionFact, active_decisions
from reviewtrail.human_review.rules._frozen import POSITIONS
from reviewtrail.human_review.session._second_judgments import pending_second_judgment
from reviewtrail.ledger import Ledger

__all__ = ["OPEN_DISPOSITIONS", "RevealGate", "item_open", "open_by_decisions", "reveal_gate", "withheld_statement"]

#: Dispositions that supply no judgment: an item whose active decision is one of these is open.
OPEN_DISPOSITIONS = frozenset({SKIP})


def open_by_decisions(facts: list[DecisionFact], item_id: str) -> bool:
    """The pure rule: an item is open while it has no active judgment, that is no active decision,
    or an active decision that supplies no judgment (a skip)."""
    active = active_decisions(facts).get(item_id)
    return active is None or active.decision.decision.disposition in OPEN_DISPOSITIONS


def item_open(records: Records, item_id: str) -> bool:
    """Whether ``item_id`` is still open to reviewers: the one definition every reveal asks
    (:func:`open_by_decisions` over the item's decisions as recorded; an item with no decision, or
    only skips, is open without reading more), and an item whose active judgment waits for a
    second judgment (:func:`~._second_judgments.pending_second_judgment`) is open too."""
    rows = records.rows("hr_decisions", item_id=item_id)
    if all(row["disposition"] in OPEN_DISPOSITIONS for row in rows):
        return True
    item_rows = records.rows("hr_items", item_id=item_id)
    if not item_rows:
        raise NotFoundError(f"no review item {item_id}", field="item")
    item = read(ReviewItem, records.get(item_rows[0]["record_id"]).payload)
    ref, _ = prompt_ref(records, item.prompt_event_id)
    if open_by_decisions(item_decisions(records, item, ref.prompt), item_id):
        return True
    # An active judgment: still open while the campaign waits for a second judgment of it.
    ledger = records.ledger if isinstance(records, Preloaded) else records
    return isinstance(ledger, Ledger) and pending_second_judgment(ledger, item_id, snapshot=False)


def withheld_statement(self_open: bool, others: int) -> str:
    """When a withheld producer will be shown, for a reviewer: once this item (when open) and the
    ``others`` other open items showing the same response are decided."""
    if others == 0:
        return "revealed when this item is decided"
    noun = "other item" if others == 1 else "other items"
    if self_open:
        return f"revealed when this item and the {others} {noun} showing this response are decided"
    verb = "is" if others == 1 else "are"
    return f"revealed when the {others} {noun} showing this response {verb} decided"


@dataclass(frozen=True)
class RevealGate:
    """What the gate found for one position: ``others``, the other open items showing its
    response; ``self_open``, whether the item itself is open. The producer is shown only when
    neither holds."""

    position: str
    self_open: bool
    others: int

    @property
    def revealed(self) -> bool:
        return not self.self_open and self.others == 0

    def statement(self) -> str | None:
        """None when revealed; else when it will be (:func:`withheld_statement`)."""
        return None if self.revealed else withheld_statement(self.self_open, self.others)


def reveal_gate(records: Records, item: ReviewItem) -> tuple[RevealGate, RevealGate]:
    """The gate of positions A and B of ``item``, from the records as they stand."""
    openness: dict[str, bool] = {}

    def is_open(item_id: str) -> bool:
        if item_id not in openness:
            openness[item_id] = item_open(records, item_id)
        return openness[item_id]

    self_open = is_open(item.item_id)
    gates = []
    for position, run_id in zip(POSITIONS, item.display_order, strict=True):
        showing = _items_showing(records, run_id) - {item.item_id}
        others = sum(1 for other in sorted(showing) if is_open(other))
        gates.append(RevealGate(position, self_open, others))
    return gates[0], gates[1]


def _items_showing(records: Records, run_id: str) -> set[str]:
    """The items that show the response of ``run_id``: the items of that run, and of every run
    whose output has the same exact text."""
    digests = {str(r["text_digest"]) for r in records.rows("hr_run_parts", run_id=run_id) if r["kind"] == "output"}
    runs = {run_id}
    for digest in digests - {""}:
        runs.update(str(r["run_id"]) for r in records.rows("hr_run_parts", text_digest=digest))
    return {str(r["item_id"]) for run in sorted(runs) for r in records.rows("hr_item_runs", run_id=run)}
