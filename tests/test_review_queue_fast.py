"""The review queue's cards: the same card over a page preloaded in bulk and over the live ledger,
whatever was amended, and a query-table row the chain does not support refused (exit 4) in the
very words of the ledger's own checked read."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.campaigns import correct_output, correct_run, reclassify
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.records import RECEIPT, RESPONSE, RUN, ReviewItem, queue_key
from reviewtrail.human_review.session import decide, review_queue
from reviewtrail.human_review.session._queue import queue_card
from reviewtrail.ledger import Envelope
from reviewtrail.store import Store
from support.human_review import add_item, add_prompt, add_run, campaign_with_items, new_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = new_store(tmp_path)
    yield s
    s.close()


def _part(store: Store, run_id: str, type_: str) -> Envelope:
    return next(e for e in store.ledger.read(subject=run_id) if e.type == type_)


def _every_item(store: Store) -> list[str]:
    return [str(r["item_id"]) for r in sorted(store.ledger.rows("hr_items"), key=lambda r: r["seq"])]


def _assert_same_cards(store: Store) -> int:
    """Every item's card over a page preloaded in bulk is its card over the live ledger. The number
    of invalid cards."""
    ledger = store.ledger
    ids = _every_item(store)
    invalid = 0
    with ledger.snapshot():
        page = Preloaded(ledger, ids, ledger.rows_in("hr_items", "item_id", ids))
        for item_id in ids:
            decided = bool(ledger.rows("hr_decisions", item_id=item_id))
            live = queue_card(ledger, item_id, decided=decided)
            assert queue_card(page, item_id, decided=decided) == live
            invalid += not live.valid
    return invalid


def test_cards_are_the_same_over_a_preloaded_page_whatever_was_amended(store: Store) -> None:
    items = campaign_with_items(store, 9)
    # Text beyond ASCII, no evidence, an empty allowlist.
    prompt = add_prompt(store, text="Une cliente écrit : « où est ma commande ? » 🚚", evidence=None, reasons=())
    runs = [add_run(store, prompt, a, response=f"Réponse de {a} ✓") for a in ("agent-a", "agent-b")]
    items.append(add_item(store, prompt, *runs))
    # Three agents: two items share a run.
    three = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
    shared = [add_run(store, three, a) for a in ("agent-a", "agent-b", "agent-c")]
    items += [add_item(store, three, shared[0], shared[1]), add_item(store, three, shared[0], shared[2])]
    assert _assert_same_cards(store) == 0

    def run_of(item: ReviewItem, i: int = 0) -> str:
        return item.candidates[i].run_id

    decide(store, items[0].item_id, {"disposition": "prefer", "preferred": "A", "strength": "slight"}, reviewer="rev-1")
    decide(store, items[1].item_id, {"disposition": "skip"}, reviewer="rev-1")
    correct_output(store, _part(store, run_of(items[2]), RESPONSE).id, "A corrected reply.")
    reclassify(store, items[3].prompt_event_id, "private", reason="names a customer")
    reclassify(store, _part(store, run_of(items[4], 1), RESPONSE).id, "sensitive", reason="quotes a customer")
    reclassify(store, _part(store, run_of(items[5]), RECEIPT).id, "private", reason="internal")
    correct_run(store, run_of(items[6]), agent={"model": "model-fixed"})
    correct_run(store, run_of(items[7], 1), status="failed", error="timed out")
    reclassify(store, _part(store, run_of(items[8]), RUN).id, "sensitive", reason="internal model")
    correct_output(store, _part(store, shared[0], RESPONSE).id, "The shared run, corrected.")
    assert _assert_same_cards(store) == 9  # items 2 to 8, and both items sharing the corrected run
    # The queue itself gives those cards, open items first (the skipped one is open: a skip
    # supplies no judgment).
    cards = review_queue(store, limit=100)
    assert [c.decided for c in cards] == [False] * (len(items) - 1) + [True]
    assert sum(not c.valid for c in cards) == 9


# --- query-table rows the chain does not support ---------------------------------------------------
def _edit(root: Path, sql: str, *params: Any) -> None:
    """Edit a query table of the store's SQLite ledger directly, as someone with write access could."""
    conn = sqlite3.connect(root / "ledger.sqlite")
    try:
        with conn:
            assert conn.execute(sql, params).rowcount >= 1
    finally:
        conn.close()


def _refused(store: Store, **kwargs: Any) -> str:
    with pytest.raises(IntegrityError) as info:
        review_queue(store, **kwargs)
    return str(info.value)


def test_an_open_row_naming_another_record_is_refused_in_the_ledgers_words(store: Store, tmp_path: Path) -> None:
    items = campaign_with_items(store, 3)
    other = store.ledger.rows("hr_items", item_id=items[2].item_id)[0]["seq"]
    _edit(tmp_path, "UPDATE rt_p_hr_open SET rt_seq = ? WHERE item_id = ?", other, items[0].item_id)
    with pytest.raises(IntegrityError) as direct:
        store.ledger.page("hr_open", {}, order_by="item_seq", limit=21)
    assert _refused(store) == str(direct.value)
    assert "hr_open" in str(direct.value)


def test_an_edited_item_row_is_refused_in_the_ledgers_words(store: Store, tmp_path: Path) -> None:
    items = campaign_with_items(store, 2)
    _edit(tmp_path, "UPDATE rt_p_hr_items SET prompt_event_id = 'elsewhere' WHERE item_id = ?", items[1].item_id)
    with pytest.raises(IntegrityError) as direct:
        store.ledger.rows_in("hr_items", "item_id", [items[0].item_id, items[1].item_id])
    assert _refused(store) == str(direct.value)


def test_a_deleted_item_row_is_refused(store: Store, tmp_path: Path) -> None:
    items = campaign_with_items(store, 2)
    _edit(tmp_path, "DELETE FROM rt_p_hr_items WHERE item_id = ?", items[0].item_id)
    assert "query table hr_items has no row for the record" in _refused(store)


def test_a_restored_open_row_of_a_decided_item_is_refused(store: Store, tmp_path: Path) -> None:
    items = campaign_with_items(store, 2)
    decide(store, items[0].item_id, {"disposition": "tie"}, reviewer="rev-1")
    seq = store.ledger.rows("hr_items", item_id=items[0].item_id)[0]["seq"]
    _edit(
        tmp_path,
        "UPDATE rt_p_hr_open SET campaign_id = 'camp', campaign_version = 1, item_seq = ?, rt_seq = ?, "
        "queue_key = ? WHERE item_id = ?",
        seq,
        seq,
        queue_key(items[0].item_id),
        items[0].item_id,
    )
    assert "lists item" in _refused(store) and "as open" in _refused(store)


def test_an_edited_prompt_row_is_refused_in_the_ledgers_words(store: Store, tmp_path: Path) -> None:
    campaign_with_items(store, 1)
    _edit(tmp_path, "UPDATE rt_p_hr_prompts SET campaign_label = 'forged' WHERE campaign_id = 'camp'")
    with pytest.raises(IntegrityError) as direct:
        store.ledger.page("hr_prompts", {"campaign_id": "camp"}, order_by="campaign_version", limit=1)
    assert _refused(store, campaign_id="camp") == str(direct.value)


def test_many_chosen_items_are_checked_by_one_read_of_the_ledger(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The item rows of many chosen items are one checked read of the ledger (``rows_in``), and an
    edited one is refused in that read's words."""
    items = campaign_with_items(store, 30)
    reads: list[list[str]] = []
    real = store.ledger.rows_in

    def rows_in(table: str, column: str, values: Any) -> list[dict[str, Any]]:
        if table == "hr_items":
            reads.append(sorted(values))
        return real(table, column, values)

    monkeypatch.setattr(store.ledger, "rows_in", rows_in)
    assert len(review_queue(store, limit=30)) == 30
    assert reads == [sorted(i.item_id for i in items)], "one read of every chosen item's row"
    _edit(tmp_path, "UPDATE rt_p_hr_items SET prompt_event_id = 'elsewhere' WHERE item_id = ?", items[-1].item_id)
    with pytest.raises(IntegrityError) as direct:
        real("hr_items", "item_id", [i.item_id for i in items])
    assert _refused(store, limit=30) == str(direct.value)
