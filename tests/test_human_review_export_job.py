"""Exporting a campaign from a store: only active, externally eligible prefer and correct decisions
become examples, every other decision is reported with its reason, and every file is listed in
the manifest with one ledger head (docs/human-review.md, "Exporting a campaign")."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.human_review import (
    add_item,
    add_prompt,
    add_run,
    as_recorded_before_decision_links,
    campaign_with_items,
    new_store,
)

from reviewtrail._struct import parse
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import export_campaign
from reviewtrail.human_review.records import ReviewDecision, ReviewItem, ReviewResponse, new_decision_record
from reviewtrail.ledger import Envelope, new_record
from reviewtrail.store import Store

V4 = "camp-v1-1.training-example.v4.jsonl"
TRL = "camp-v1-1.trl-preference.jsonl"
OPENAI = "camp-v1-1.openai-preference.jsonl"


def decide(
    store: Store,
    item: ReviewItem,
    disposition: str = "prefer",
    *,
    training: bool = True,
    privacy: str = "public-source",
    supersedes: str | None = None,
    actor: str = "reviewer-1",
    note: str | None = None,
    first: bool = True,
) -> Envelope:
    """Append one decision on ``item`` (prefer picks the first candidate unless ``first`` is False)."""
    wire: dict[str, Any] = {
        "itemId": item.item_id,
        "disposition": disposition,
        "submissionId": f"s-{uuid.uuid4().hex}",
        "useForTraining": training,
    }
    if disposition == "prefer":
        wire.update(preferred=item.run_ids()[0 if first else 1], strength="strong")
    if disposition == "correct":
        wire["replacement"] = "a corrected reply"
    if supersedes is not None:
        wire["supersedes"] = supersedes
    if note is not None:
        wire["note"] = note
    record = new_decision_record(parse(ReviewDecision, wire, field="payload"), privacy, actor=actor)  # type: ignore[arg-type]
    [env] = store.append([record])
    return env


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def manifest(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return loaded


def all_bytes(out: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(out.iterdir()))


def test_only_active_externally_eligible_prefer_and_correct_are_exported(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    items = campaign_with_items(store, 8)
    decide(store, items[0], "prefer")
    decide(store, items[1], "correct")
    for item, disposition in zip(items[2:6], ("tie", "underdetermined", "malformed", "skip"), strict=True):
        decide(store, item, disposition)
    decide(store, items[6], "prefer", training=False)
    old = decide(store, items[7], "prefer")
    decide(store, items[7], "tie", supersedes=old.id)
    out = tmp_path / "out"
    report = export_campaign(store, "camp", 1, out)
    assert report.exported == 2 and report.items == 8
    rows = lines(out / V4)
    assert sorted(r["judgment"]["disposition"] for r in rows) == ["correct", "prefer"]
    assert len(lines(out / TRL)) == 3 and len(lines(out / OPENAI)) == 3  # a correct row rejects both
    excluded = {(e.item_id, e.disposition): e for e in report.excluded}
    for item, disposition in zip(items[2:6], ("tie", "underdetermined", "malformed", "skip"), strict=True):
        assert excluded[(item.item_id, disposition)].field == "disposition"
    assert excluded[(items[6].item_id, "prefer")].field == "eligibility"
    assert "useForTraining" in excluded[(items[6].item_id, "prefer")].reason
    assert excluded[(items[7].item_id, "prefer")].field == "decision"
    assert excluded[(items[7].item_id, "prefer")].decision_id == old.id
    assert excluded[(items[7].item_id, "tie")].field == "disposition"
    assert report.to_json()["exported"] == 2
    store.close()


def test_private_prompt_text_and_notes_are_in_no_export_file(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    [public] = campaign_with_items(store, 1)
    [private] = campaign_with_items(store, 1, privacy="private", text="SECRET prompt text that stays home")
    decide(store, public, "prefer", note="SECRETNOTE of the reviewer")
    decide(store, private, "prefer")
    out = tmp_path / "out"
    report = export_campaign(store, "camp", 1, out)
    assert report.exported == 1
    data = all_bytes(out)
    assert b"SECRET" not in data
    assert private.item_id.encode() not in data and public.item_id.encode() not in data
    [why] = [e for e in report.excluded if e.item_id == private.item_id]
    assert why.field == "eligibility" and "preauthorized" in why.reason
    store.close()


def test_an_item_invalidated_after_deciding_is_excluded_with_its_reason(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    [item] = campaign_with_items(store, 1)
    decide(store, item, "prefer")
    frozen = item.candidates[0]
    correction = new_record(
        ReviewResponse(response="a different answer"),
        actor="runner",
        privacy="public-source",
        subject=frozen.run_id,
        supersedes=frozen.output_event_id,
    )
    store.append([correction])
    out = tmp_path / "out"
    report = export_campaign(store, "camp", 1, out)
    assert report.exported == 0 and lines(out / V4) == []
    [why] = report.excluded
    assert why.field == "item" and frozen.output_event_id in why.reason
    assert b"a different answer" not in all_bytes(out)
    store.close()


def test_the_trl_file_loads_with_datasets(tmp_path: Path) -> None:
    import datasets

    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    items = campaign_with_items(store, 3)
    decide(store, items[0], "prefer")
    decide(store, items[1], "prefer", first=False)
    decide(store, items[2], "correct")
    out = tmp_path / "out"
    export_campaign(store, "camp", 1, out)
    loaded = datasets.load_dataset("json", data_files=str(out / TRL), split="train", cache_dir=str(tmp_path / "hf"))
    assert sorted(loaded.column_names) == ["chosen", "prompt", "rejected"]
    assert loaded.num_rows == 4
    assert "a corrected reply" in loaded["chosen"]
    store.close()


def test_the_manifest_lists_every_file_with_one_head_and_a_second_export_appends(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    items = campaign_with_items(store, 2)
    decide(store, items[0], "prefer")
    out = tmp_path / "out"
    first = export_campaign(store, "camp", 1, out)
    listed = manifest(out)["files"]
    assert [e["name"] for e in listed] == [V4, TRL, OPENAI]
    assert [e["schemaVersion"] for e in listed] == [
        "thoughtstream.training-example.v4",
        "trl.preference.v1",
        "openai.preference.v1",
    ]
    head = store.ledger.head()
    assert head is not None and {e["ledgerHead"] for e in listed} == {head.hash} == {first.ledger_head}
    for entry in listed:
        data = (out / entry["name"]).read_bytes()
        assert entry["bytes"] == len(data) and entry["rows"] == data.count(b"\n") == 1
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    before = {name: (out / name).read_bytes() for name in (V4, TRL, OPENAI)}
    decide(store, items[1], "prefer")
    second = export_campaign(store, "camp", 1, out)
    assert second.number == 2 and second.exported == 2 and second.ledger_head != first.ledger_head
    again = manifest(out)["files"]
    assert again[:3] == listed
    assert [e["name"] for e in again[3:]] == [n.replace("-1.", "-2.") for n in (V4, TRL, OPENAI)]
    assert {e["ledgerHead"] for e in again[3:]} == {second.ledger_head}
    assert {name: (out / name).read_bytes() for name in before} == before
    store.close()


def test_an_export_reads_one_state_while_others_append(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    items = campaign_with_items(store, 3)
    decide(store, items[0], "prefer")
    decide(store, items[1], "prefer")
    head = store.ledger.head()
    assert head is not None
    seen: list[int] = []

    def progress(phase: str, advance: int, total: int) -> None:
        seen.append(total)
        if len(seen) == 1:  # another writer decides the last item in the middle of the export
            other = new_store(tmp_path)
            decide(other, items[2], "prefer")
            other.close()

    report = export_campaign(store, "camp", 1, tmp_path / "out", progress=progress)
    assert report.ledger_head == head.hash and seen == [3, 3, 3]
    assert report.exported == 2 and report.undecided == 1
    assert export_campaign(store, "camp", 1, tmp_path / "out").exported == 3
    store.close()


# --- property: nothing private and no non-training disposition leaves the store -----------------

LEVELS = ("public-source", "private", "sensitive")
DISPOSITIONS = ("prefer", "tie", "correct", "underdetermined", "malformed", "skip")

decision_plans = st.lists(
    st.tuples(st.sampled_from(DISPOSITIONS), st.booleans(), st.sampled_from(LEVELS), st.booleans()),
    min_size=0,
    max_size=3,
)
item_plans = st.lists(
    st.tuples(st.sampled_from(LEVELS), st.booleans(), st.sampled_from(LEVELS), decision_plans),
    min_size=1,
    max_size=4,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=item_plans, training=st.booleans())
def test_no_private_text_and_no_non_training_disposition_in_any_export_file(
    tmp_path_factory: Any, plans: list[Any], training: bool
) -> None:
    root = tmp_path_factory.mktemp("prop")
    store = new_store(root)
    campaign_settings(store, "camp", 1, training=training)
    secrets: list[str] = []
    for n, (prompt_level, eligible, run_level, decisions) in enumerate(plans):
        text = f"prompt {n} {prompt_level} " + ("" if prompt_level == "public-source" else f"SECRETPROMPT{n}")
        prompt = add_prompt(
            store, privacy=prompt_level, eligible=eligible and prompt_level == "public-source", text=text
        )
        answer = f"answer {n} " + ("" if run_level == "public-source" else f"SECRETANSWER{n}")
        run_a = add_run(store, prompt, "agent-a", response=answer, privacy=run_level)
        run_b = add_run(store, prompt, "agent-b", response=f"other answer {n}")
        item = add_item(store, prompt, run_a, run_b)
        last: str | None = None
        for disposition, use, level, supersede in decisions:
            note = f"SECRETNOTE{n}"
            if last is not None and not supersede:  # two leaves, as stores recorded before the key hold
                as_recorded_before_decision_links(root, item.item_id)
            last = decide(
                store, item, disposition, training=use, privacy=level, note=note, supersedes=last if supersede else None
            ).id
    out = root / "out"
    report = export_campaign(store, "camp", 1, out)
    data = all_bytes(out)
    assert b"SECRET" not in data, secrets
    for row in lines(out / "camp-v1-1.training-example.v4.jsonl"):
        assert row["judgment"]["disposition"] in ("prefer", "correct")
    assert report.exported == len(lines(out / "camp-v1-1.training-example.v4.jsonl"))
    store.close()


def test_an_invalid_item_is_reported_as_invalid_whatever_its_decision(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    decided, undecided = campaign_with_items(store, 2)
    decide(store, decided, "tie")
    for item in (decided, undecided):
        frozen = item.candidates[1]
        store.append(
            [
                new_record(
                    ReviewResponse(response="changed"),
                    actor="runner",
                    privacy="public-source",
                    subject=frozen.run_id,
                    supersedes=frozen.output_event_id,
                )
            ]
        )
    report = export_campaign(store, "camp", 1, tmp_path / "out")
    found = {e.item_id: e for e in report.excluded}
    assert found[decided.item_id].field == "item" and found[decided.item_id].disposition == "tie"
    assert found[undecided.item_id].field == "item" and found[undecided.item_id].decision_id is None
    assert "the item is invalid" in found[undecided.item_id].reason
    store.close()


def test_the_left_out_table_groups_an_items_superseded_decisions() -> None:
    from reviewtrail.cli.review._campaign_outputs import left_out_rows
    from reviewtrail.human_review.export import ExportExclusion

    not_active = "the decision is not active: D9 is the item's active decision"
    one, two = "Summarise the refund policy", "Translate the greeting"
    excluded = [
        ExportExclusion("item-1", "D1", "prefer", "decision", not_active, one),
        ExportExclusion("item-1", "D2", "tie", "decision", not_active, one),
        ExportExclusion("item-1", "D3", "prefer", "decision", not_active, one),
        ExportExclusion("item-2", "D4", "skip", "disposition", "skip is never a training example", two),
        ExportExclusion("item-1", "D9", "correct", "eligibility", "training was disabled", one),
    ]
    assert left_out_rows(excluded) == [
        ["item-1", one, "3", "prefer x2, tie", "decision", not_active],
        ["item-2", two, "1", "skip", "disposition", "skip is never a training example"],
        ["item-1", one, "1", "correct", "eligibility", "training was disabled"],
    ]
