"""An export streams: its rows reach the files while the campaign is still read, a refusal part
way leaves nothing written, and the prompts and runs a page of items shares are resolved once
(docs/human-review.md, "Exporting a campaign")."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.human_review import add_item, add_prompt, add_run, new_store
from tests.test_human_review_export_job import decide, manifest

import reviewtrail.human_review.export._export_job as export_job
import reviewtrail.human_review.reads._resolve as resolve
from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import export_campaign
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.records import ReviewItem, ReviewResponse
from reviewtrail.ledger import new_record
from reviewtrail.store import Store

AGENTS = ("agent-a", "agent-b", "agent-c", "agent-d")


def _shared(tmp_path: Path, prompts: int = 2) -> tuple[Store, list[ReviewItem], int]:
    """``prompts`` prompts, each answered by the four agents, every pair of its runs an item
    (six per prompt, each run in three), each item decided; the store, its items, its runs."""
    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    items = []
    for _ in range(prompts):
        prompt = add_prompt(store, agents=AGENTS)
        runs = [add_run(store, prompt, agent) for agent in AGENTS]
        items += [add_item(store, prompt, a, b) for a, b in itertools.combinations(runs, 2)]
    for item in items:
        decide(store, item, "prefer")
    return store, items, prompts * len(AGENTS)


def _staged_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.iterdir() if p.name.endswith(".tmp"))


def test_rows_reach_the_files_while_the_campaign_is_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, items, _ = _shared(tmp_path)
    out = tmp_path / "out"
    real = export_job.campaign_item_states
    seen: list[int] = []

    def states(*args: Any, **kw: Any) -> Iterator[Any]:
        for n, state in enumerate(real(*args, **kw)):
            if n == len(items) - 1:  # before the last item is read: the rows so far are written
                seen.append(_staged_bytes(out))
            yield state

    monkeypatch.setattr(export_job, "campaign_item_states", states)
    report = export_campaign(store, "camp", 1, out)
    assert report.exported == len(items)
    assert seen and seen[0] > 0
    assert _staged_bytes(out) == 0  # and once done, only whole files remain
    store.close()


@pytest.mark.parametrize("existing", [False, True])
def test_a_refusal_part_way_leaves_the_folder_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    store, items, _ = _shared(tmp_path)
    out = tmp_path / "out"
    if existing:
        export_campaign(store, "camp", 1, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()} if existing else None
    real = export_job.campaign_item_states

    def states(*args: Any, **kw: Any) -> Iterator[Any]:
        for n, state in enumerate(real(*args, **kw)):
            if n == len(items) - 1:
                assert _staged_bytes(out) > 0  # rows were written before the refusal
                raise IntegrityError("ledger seq 7: hash does not match the envelope", field="ledger")
            yield state

    monkeypatch.setattr(export_job, "campaign_item_states", states)
    with pytest.raises(IntegrityError):
        export_campaign(store, "camp", 1, out)
    if existing:
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    else:
        assert not out.exists()  # the folder the export made is gone, with nothing in it
    monkeypatch.undo()
    report = export_campaign(store, "camp", 1, out)
    assert report.number == (2 if existing else 1)
    assert [f["rows"] for f in manifest(out)["files"]][-3:] == [len(items)] * 3
    store.close()


def test_a_page_resolves_each_shared_run_and_prompt_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, items, runs = _shared(tmp_path)
    calls = {"candidate": 0, "prompt": 0}
    real_candidate, real_prompt = resolve._candidate, resolve.prompt_ref

    def candidate(*args: Any) -> Any:
        calls["candidate"] += 1
        return real_candidate(*args)

    def prompt(*args: Any) -> Any:
        calls["prompt"] += 1
        return real_prompt(*args)

    monkeypatch.setattr(resolve, "_candidate", candidate)
    monkeypatch.setattr(resolve, "prompt_ref", prompt)
    report = export_campaign(store, "camp", 1, tmp_path / "out")
    assert report.exported == len(items) == 12
    assert calls == {"candidate": runs, "prompt": 2}  # not two candidates and a prompt per item
    store.close()


def test_a_page_forgets_what_it_resolved_when_records_are_included(tmp_path: Path) -> None:
    store, items, _ = _shared(tmp_path, prompts=1)
    item = items[0]
    with store.ledger.snapshot():
        page = Preloaded(store.ledger, [item.item_id], store.ledger.stored_rows("hr_items", item_id=item.item_id))
        assert resolve.resolve_item(page, item.item_id).valid
    # The first candidate's output corrected: it is no longer what the item froze.
    frozen = item.candidates[0]
    record = new_record(
        ReviewResponse(response="a different answer"),
        actor="runner",
        privacy="public-source",
        subject=frozen.run_id,
        supersedes=frozen.output_event_id,
    )
    [env] = store.append([record])
    page.include([env])
    assert not resolve.resolve_item(page, item.item_id).valid
    store.close()


def test_a_page_derives_only_the_query_tables_it_answers_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page of the export derives from the records it reads the rows of the tables its reads
    ask for (items and decisions by item, runs and their parts by run), each by the projection's
    own function for that table, and no row of the queue's tables (no queue key computed)."""
    from reviewtrail.human_review.records import _projection as projection

    store, items, _ = _shared(tmp_path, prompts=1)
    ledger = store.ledger
    keys: list[str] = []
    real_key = projection.queue_key
    monkeypatch.setattr(projection, "queue_key", lambda item_id: keys.append(item_id) or real_key(item_id))
    with ledger.snapshot():
        ids = [item.item_id for item in items]
        page = Preloaded(ledger, ids, ledger.stored_rows("hr_items", campaign_id="camp", campaign_version=1))
    assert keys == []
    # The page's rows are the rows the ledger stored when each record was appended.
    runs = sorted({run for item in items for run in item.run_ids()})
    asked = [(t, "item_id", ids) for t in ("hr_items", "hr_decisions")] + [(t, "run_id", runs) for t in _RUN_TABLES]
    for table, column, values in asked:
        for value in values:
            stored = [
                {k: v for k, v in r.items() if k != "rt_seq"} for r in ledger.stored_rows(table, **{column: value})
            ]
            assert stored and sorted(page.rows(table, **{column: value}), key=lambda r: r["seq"]) == stored
    # What each table's function gives a record (an item, and its decision): rows written out by hand.
    item = items[0]
    env = ledger.get(ledger.stored_rows("hr_items", item_id=item.item_id)[0]["record_id"])
    decision = ledger.get(ledger.stored_rows("hr_decisions", item_id=item.item_id)[0]["record_id"])
    camp = {"campaign_id": "camp", "campaign_version": 1}
    key = hashlib.sha256(b"reviewtrail review queue v1\x00" + item.item_id.encode()).hexdigest()
    by_hand = {
        (env, "hr_items"): [
            {
                "item_id": item.item_id,
                "record_id": env.id,
                **camp,
                "prompt_event_id": item.prompt_event_id,
                "seq": env.seq,
            }
        ],
        (env, "hr_open"): [{"item_id": item.item_id, **camp, "item_seq": env.seq, "queue_key": key}],
        (env, "hr_item_runs"): [{"item_id": item.item_id, "run_id": run, "seq": env.seq} for run in item.run_ids()],
        (decision, "hr_decisions"): [
            {
                "record_id": decision.id,
                "item_id": item.item_id,
                "disposition": "prefer",
                "supersedes": "",
                "actor": decision.actor,
                "seq": decision.seq,
            }
        ],
        (decision, "hr_open"): [
            {
                "item_id": item.item_id,
                "campaign_id": None,
                "campaign_version": None,
                "item_seq": None,
                "queue_key": None,
            }
        ],
    }
    for (record, table), rows in by_hand.items():
        assert list(projection.table_rows(table)[record.type](record)) == rows, table
    store.close()


_RUN_TABLES = ("hr_runs", "hr_run_parts")


def test_the_files_are_named_durable_at_once_after_the_last_rename_and_before_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The export renames its three files into place, then makes the names durable with one
    fsync of the folder, and only then writes the manifest that lists them."""
    from reviewtrail.human_review.export import _dataset_manifest as dataset_manifest

    store, _, _ = _shared(tmp_path, prompts=1)
    out = tmp_path / "out"
    steps: list[str] = []
    real_place, real_fsync, real_replace = (
        dataset_manifest.place_file,
        dataset_manifest.fsync_dir,
        dataset_manifest.replace_file,
    )

    def place(staged: Path, target: Path) -> None:
        steps.append("rename")
        real_place(staged, target)

    def fsync(path: Any) -> None:
        steps.append("fsync folder")
        real_fsync(path)

    def replace(path: Any, data: bytes, **kw: Any) -> None:
        steps.append(f"write {Path(path).name}")
        real_replace(path, data, **kw)

    monkeypatch.setattr(dataset_manifest, "place_file", place)
    monkeypatch.setattr(dataset_manifest, "fsync_dir", fsync)
    monkeypatch.setattr(dataset_manifest, "replace_file", replace)
    export_campaign(store, "camp", 1, out)
    assert steps == ["rename", "rename", "rename", "fsync folder", "write manifest.json"]
    store.close()


@given(st.lists(st.dictionaries(st.text(max_size=5), st.one_of(st.text(max_size=8), st.integers(-9, 9)), max_size=4)))
def test_a_file_of_rows_is_the_lines_of_its_rows(rows: list[dict[str, Any]]) -> None:
    """``jsonl_bytes`` and the streamed export files write a row by the one line helper: its
    RFC 8785 form and a newline, the same for any mapping of the same items."""
    from types import MappingProxyType

    from reviewtrail.canonical import canonical_json
    from reviewtrail.human_review.export._dataset_manifest import jsonl_bytes, jsonl_line

    assert jsonl_bytes(rows) == b"".join(canonical_json(row) + b"\n" for row in rows)
    for row in rows:
        assert jsonl_line(row) == jsonl_line(MappingProxyType(row)) == canonical_json(row) + b"\n"
