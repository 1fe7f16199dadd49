"""Resolving a page of items from bulk reads gives exactly what resolving each item on its own
gives, and an export made that way is byte-identical to one made item by item
(docs/human-review.md, "Exporting a campaign")."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.human_review import add_item, add_prompt, add_run, as_recorded_before_decision_links, new_store

import reviewtrail.human_review.export._export_job as export_job
from reviewtrail._struct import parse
from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.campaigns import campaign_settings, correct_output, correct_run, reclassify
from reviewtrail.human_review.export import export_campaign
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._campaign_read import (
    ItemState,
    campaign_item_pages,
    campaign_item_states,
    item_state,
)
from reviewtrail.human_review.records import ReviewDecision, ReviewItem, new_decision_record
from reviewtrail.ledger import Ledger
from reviewtrail.store import Store

AMENDMENTS = ("none", "reclassify-output", "reclassify-prompt", "reclassify-run", "correct-output", "correct-run")
DISPOSITIONS = ("prefer", "correct", "tie", "skip", "malformed", "underdetermined")

# (prompt privacy, amendment, decisions: (disposition, use for training, privacy, supersede the last, fits))
item_plans = st.lists(
    st.tuples(
        st.sampled_from(["public-source", "private"]),
        st.sampled_from(AMENDMENTS),
        st.lists(
            st.tuples(
                st.sampled_from(DISPOSITIONS),
                st.booleans(),
                st.sampled_from(["public-source", "private"]),
                st.booleans(),
                st.booleans(),
            ),
            max_size=3,
        ),
    ),
    min_size=1,
    max_size=5,
)


def _decide(
    store: Store, item: ReviewItem, plan: tuple[str, bool, str, bool, bool], last: str | None, root: Path
) -> str:
    """Append one decision; one that does not supersede the last is recorded as a store made before
    ``hr_decision_links`` could (two leaves: the reads must still pick one)."""
    disposition, use, privacy, supersede, fits = plan
    wire: dict[str, Any] = {
        "itemId": item.item_id,
        "disposition": disposition,
        "submissionId": f"s-{uuid.uuid4().hex}",
        "useForTraining": use,
        "reasonCodes": [] if fits else ["not-allowed"],
    }
    if disposition == "prefer":
        wire.update(preferred=item.run_ids()[len(wire["submissionId"]) % 2], strength="slight")
    if disposition == "correct":
        wire["replacement"] = "a corrected reply"
    if supersede and last is not None:
        wire["supersedes"] = last
    elif last is not None:
        as_recorded_before_decision_links(root, item.item_id)
    record = new_decision_record(parse(ReviewDecision, wire, field="payload"), privacy, actor="reviewer")  # type: ignore[arg-type]
    [env] = store.append([record])
    return env.id


def _amend(store: Store, item: ReviewItem, prompt_id: str, how: str) -> None:
    frozen = item.candidates[0]
    if how == "reclassify-output":
        reclassify(store, frozen.output_event_id, "sensitive", reason="found a name")
    elif how == "reclassify-prompt":
        reclassify(store, prompt_id, "sensitive", reason="found a name")
    elif how == "reclassify-run":
        [row] = store.ledger.rows("hr_runs", run_id=frozen.run_id)
        reclassify(store, row["record_id"], "sensitive", reason="found a name")
    elif how == "correct-output":
        correct_output(store, frozen.output_event_id, "a corrected candidate answer")
    elif how == "correct-run":
        correct_run(store, frozen.run_id, agent={"model": "another-model"})


def _build(store: Store, plans: list[Any], *, amend_before: bool, root: Path) -> list[ReviewItem]:
    """Items of campaign ``camp`` v1 following ``plans``; amendments made after the decisions
    (or, with ``amend_before``, some of them before the item is frozen)."""
    items = []
    for n, (prompt_level, amendment, decisions) in enumerate(plans):
        prompt = add_prompt(store, privacy=prompt_level, text=f"prompt {n} {uuid.uuid4().hex}")
        run_a = add_run(store, prompt, "agent-a", response=f"answer a {n}")
        run_b = add_run(store, prompt, "agent-b", response=f"answer b {n}")
        if amend_before and amendment == "reclassify-prompt":
            reclassify(store, prompt.id, "sensitive", reason="before freezing")
        item = add_item(store, prompt, run_a, run_b)
        items.append(item)
        last: str | None = None
        for plan in decisions:
            last = _decide(store, item, plan, last, root)
        if not (amend_before and amendment == "reclassify-prompt"):
            _amend(store, item, prompt.id, amendment)
    return items


def _one_by_one(ledger: Ledger, campaign: str, version: int, *, training_enabled: bool) -> Iterator[ItemState]:
    """The per-item path the bulk one must match: each item resolved alone on the live ledger."""
    for rows in campaign_item_pages(ledger, campaign, version):
        for row in rows:
            yield item_state(ledger, str(row["item_id"]), training_enabled=training_enabled)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=item_plans, training=st.booleans(), amend_before=st.booleans())
def test_a_preloaded_page_resolves_every_item_as_the_ledger_does(
    tmp_path_factory: Any, plans: list[Any], training: bool, amend_before: bool
) -> None:
    root = tmp_path_factory.mktemp("bulk")
    store = new_store(root)
    campaign_settings(store, "camp", 1, training=training)
    _build(store, plans, amend_before=amend_before, root=root)
    ledger = store.ledger
    with ledger.snapshot():
        alone = list(_one_by_one(ledger, "camp", 1, training_enabled=training))
        bulk = list(campaign_item_states(ledger, "camp", 1, training_enabled=training))
    assert [s.item_id for s in bulk] == [s.item_id for s in alone]
    for got, want in zip(bulk, alone, strict=True):
        assert got == want
    store.close()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=item_plans, training=st.booleans())
def test_an_export_from_bulk_reads_is_byte_identical_to_one_made_item_by_item(
    tmp_path_factory: Any, plans: list[Any], training: bool
) -> None:
    root = tmp_path_factory.mktemp("bulk-export")
    store = new_store(root)
    campaign_settings(store, "camp", 1, training=training)
    _build(store, plans, amend_before=False, root=root)
    bulk = export_campaign(store, "camp", 1, root / "bulk")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(export_job, "campaign_item_states", _one_by_one)
        alone = export_campaign(store, "camp", 1, root / "alone")
    assert {**bulk.to_json(), "outDir": None} == {**alone.to_json(), "outDir": None}
    for entry in bulk.files:
        assert (root / "bulk" / entry["name"]).read_bytes() == (root / "alone" / entry["name"]).read_bytes()
    assert (root / "bulk" / "manifest.json").read_bytes() == (root / "alone" / "manifest.json").read_bytes()
    store.close()


def test_campaign_item_states_covers_several_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import reviewtrail.human_review.reads._campaign_read as campaign_read

    monkeypatch.setattr(campaign_read, "ITEM_PAGE", 2)
    store = new_store(tmp_path)
    items = _build(
        store,
        [("public-source", "none", [("prefer", True, "public-source", False, True)])] * 5,
        amend_before=False,
        root=tmp_path,
    )
    pages = list(campaign_item_pages(store.ledger, "camp", 1))
    assert [len(p) for p in pages] == [2, 2, 1]
    states = list(campaign_item_states(store.ledger, "camp", 1, training_enabled=True))
    assert [s.item_id for s in states] == [i.item_id for i in items]
    assert all(s.active is not None for s in states)
    store.close()


def test_a_preloaded_page_falls_back_to_the_ledger_for_what_it_does_not_hold(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    [item] = _build(store, [("public-source", "none", [])], amend_before=False, root=tmp_path)
    rows = store.ledger.rows("hr_items", item_id=item.item_id)
    records = Preloaded(store.ledger, [item.item_id], rows)
    prompt = store.ledger.get(item.prompt_event_id)
    assert records.get(prompt.id) == prompt
    assert records.rows("hr_prompts", record_id=prompt.id) == store.ledger.rows("hr_prompts", record_id=prompt.id)
    assert records.rows("hr_runs", run_id="no-such-run") == []
    assert records.superseded_by(prompt.id) == []


class _Kept:
    """Records that keep every ``memo`` answer: the live ledger's reads, and a memo of its own."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger, self.kept = ledger, dict[tuple[Any, str], Any]()
        self.get, self.superseded_by, self.rows = ledger.get, ledger.superseded_by, ledger.rows

    def memo(self, make: Any, key: str) -> Any:
        if (make, key) not in self.kept:
            self.kept[make, key] = make(self, key)
        return self.kept[make, key]


def test_resolving_items_asks_the_records_whether_to_keep_what_is_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two items over one prompt: the records' memo decides how often the prompt is resolved (the
    live ledger each time, a preloaded page or any records that keep answers once)."""
    import reviewtrail.human_review.reads._resolve as resolve

    store = new_store(tmp_path)
    prompt = add_prompt(store)
    items = [add_item(store, prompt, add_run(store, prompt, f"{a}-{n}"), add_run(store, prompt, f"{b}-{n}"))
             for n, (a, b) in enumerate([("agent-a", "agent-b")] * 2)]  # fmt: skip
    made: list[str] = []
    real = resolve.prompt_ref

    def counted(ledger: Any, prompt_event_id: str) -> Any:
        made.append(prompt_event_id)
        return real(ledger, prompt_event_id)

    monkeypatch.setattr(resolve, "prompt_ref", counted)
    ids = [item.item_id for item in items]
    for records, times in [
        (store.ledger, 2),
        (Preloaded(store.ledger, ids, store.ledger.rows_in("hr_items", "item_id", ids)), 1),
        (_Kept(store.ledger), 1),
    ]:
        made.clear()
        resolved = [resolve.resolve_item(records, item_id) for item_id in ids]  # type: ignore[arg-type]
        assert made == [prompt.id] * times and all(r.valid for r in resolved), type(records).__name__
    store.close()


def test_a_preloaded_page_refuses_a_run_whose_record_was_altered(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    [item] = _build(store, [("public-source", "none", [])], amend_before=False, root=tmp_path)
    [row] = store.ledger.rows("hr_runs", run_id=item.candidates[0].run_id)
    seq = store.ledger.get(row["record_id"]).seq
    import sqlite3

    with sqlite3.connect(tmp_path / "ledger.sqlite") as conn:
        conn.execute("DROP TRIGGER rt_records_no_update")
        conn.execute("UPDATE rt_records SET actor = 'forger' WHERE seq = ?", (seq,))
    fresh = new_store_view(tmp_path)
    with pytest.raises(IntegrityError) as err:
        Preloaded(fresh.ledger, [item.item_id], fresh.ledger.rows("hr_items", item_id=item.item_id))
    assert err.value.field == "ledger"
    fresh.close()
    store.close()


def new_store_view(tmp_path: Path) -> Store:
    """The store at ``tmp_path`` opened again (a ledger object that has checked nothing yet)."""
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings

    return open_store(Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'ledger.sqlite'}"))
