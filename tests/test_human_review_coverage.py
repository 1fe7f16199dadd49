"""Campaign coverage, standings and training receipts read from a store (docs/human-review.md,
"Coverage", "Standings and position bias", "Training receipts")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.conftest import init_cli_store, open_cli_store, run_cli
from tests.support.human_review import add_item, add_prompt, add_run, campaign_with_items, new_store
from tests.test_human_review_export_job import decide

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import EVALUATION_MAX_BYTES, export_campaign, record_training_receipt
from reviewtrail.human_review.quality import ItemCoverageFacts, campaign_coverage, campaign_standings, coverage_of
from reviewtrail.human_review.records import ReviewResponse, TrainingReceipt
from reviewtrail.ledger import new_record
from reviewtrail.store import Store


def built(store: Store) -> None:
    """refunds: 3 prompts, 3 items (prefer exportable, tie, skip), one failed run, one invalid
    item; shipping: 1 prompt, 1 item (correct, evaluation only: private), a superseded prefer."""
    campaign_settings(store, "camp", 1, training=True)
    refunds = campaign_with_items(store, 2, family="refunds")
    prompt = add_prompt(store, family="refunds")
    add_run(store, prompt, "agent-c", error="timed out")  # an undeclared agent that also failed
    refunds.append(add_item(store, prompt, add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-b")))
    [shipping] = campaign_with_items(store, 1, family="shipping", privacy="private")
    decide(store, refunds[0], "prefer", actor="ann")
    decide(store, refunds[1], "tie", actor="bob")
    old = decide(store, refunds[2], "prefer", actor="ann")
    decide(store, refunds[2], "skip", actor="ann", supersedes=old.id)
    decide(store, shipping, "correct", actor="bob")
    frozen = refunds[1].candidates[1]
    store.append(
        [
            new_record(
                ReviewResponse(response="amended"),
                actor="runner",
                privacy="public-source",
                subject=frozen.run_id,
                supersedes=frozen.output_event_id,
            )
        ]
    )


def test_coverage_counts_agree_with_what_was_built(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    built(store)
    doc = campaign_coverage(store, "camp", 1).to_json()
    families = {f["family"]: f for f in doc["families"]}
    refunds, shipping, overall = families["refunds"], families["shipping"], doc["overall"]
    assert refunds["prompts"] == 3 and shipping["prompts"] == 1 and overall["prompts"] == 4
    assert refunds["runs"]["completed"] == 6 and refunds["runs"]["failed"] == 1
    assert refunds["runs"]["excluded"] == 1
    assert refunds["runs"]["exclusions"] == {"no-output": 1, "not-completed": 1, "undeclared-agent": 1}
    assert refunds["items"]["total"] == 3 and refunds["items"]["invalid"] == 1
    [bad] = refunds["items"]["invalidItems"]
    assert "output" in " ".join(bad["problems"])
    decisions = refunds["decisions"]
    assert decisions["recorded"] == 4 and decisions["active"] == 3 and decisions["inactive"] == 1
    assert decisions["byDisposition"] == {
        "prefer": 1,
        "tie": 1,
        "correct": 0,
        "underdetermined": 0,
        "malformed": 0,
        "skip": 1,
    }
    assert decisions["judgeabilityRate"] == 1.0  # prefer + tie over 3 active - 1 skip
    assert decisions["exportable"] == 1 and decisions["evaluationOnly"] == 2
    assert shipping["decisions"]["qualityEligible"] == 1 and shipping["decisions"]["exportable"] == 0
    assert overall["decisions"]["recorded"] == 5 and overall["decisions"]["exportable"] == 1
    assert doc["trainingEnabled"] is True and doc["exported"] is None and doc["trainingReceipts"] == []
    bias = doc["quality"]["positionBias"]
    assert bias["overall"]["decisions"] == 1
    assert [r["reviewer"] for r in bias["reviewers"]] == ["ann"]
    store.close()


def test_exportable_in_coverage_is_what_export_writes_and_exported_counts_the_manifest(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    built(store)
    report = export_campaign(store, "camp", 1, tmp_path / "out")
    doc = campaign_coverage(store, "camp", 1, export_manifest=tmp_path / "out" / "manifest.json").to_json()
    assert doc["overall"]["decisions"]["exportable"] == report.exported == doc["exported"] == 1
    store.close()


def test_judgeability_counts_underdetermined_and_malformed_as_not_judgeable_and_ignores_skips() -> None:
    items = [
        ItemCoverageFacts("f", f"i{n}", (), 1, disposition)
        for n, disposition in enumerate(["prefer", "correct", "underdetermined", "malformed", "skip", "skip"])
    ]
    result = coverage_of("c", 1, [], items, training_enabled=False)
    assert result.overall.judgeability == 0.5
    assert coverage_of("c", 1, [], items[4:], training_enabled=False).overall.judgeability is None


def test_position_bias_is_per_reviewer_and_counts_the_first_displayed_choice(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items = campaign_with_items(store, 4)
    for n, item in enumerate(items):
        shown_first = item.display_order[0]
        first = shown_first == item.run_ids()[0]
        decide(store, item, "prefer", actor="ann" if n < 3 else "bob", first=first if n < 3 else not first)
    bias = campaign_coverage(store, "camp", 1).quality["positionBias"]
    reviewers = {r["reviewer"]: r for r in bias["reviewers"]}
    assert reviewers["ann"]["choseFirst"] == 3 and reviewers["bob"]["choseFirst"] == 0
    assert bias["overall"]["decisions"] == 4 and bias["overall"]["choseFirst"] == 3
    store.close()


def test_standings_fit_prefer_outcomes_between_agents_and_count_ties_apart(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items = campaign_with_items(store, 5)
    for item in items[:4]:
        decide(store, item, "prefer")
    decide(store, items[4], "tie")
    result = campaign_standings(store, "camp", 1, rounds=20, seed=3)
    assert result.comparisons == 4 and result.ties == 1
    assert {a.agent for a in result.agents} == {"agent-a", "agent-b"}
    assert sum(a.wins for a in result.agents) == 4 and all(a.ties == 1 for a in result.agents)
    store.close()


def test_standings_cli_json_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    store = open_cli_store(project)
    items = campaign_with_items(store, 3)
    for item in items:
        decide(store, item, "prefer")
    store.close()
    code, out, err = run_cli("campaign", "standings", "camp", "--version", "1", "--rounds", "10", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["model"] == "bradley-terry" and doc["rounds"] == 10 and doc["comparisons"] == 3
    assert {a["agent"] for a in doc["agents"]} == {"agent-a", "agent-b"}
    code, out, err = run_cli("campaign", "coverage", "camp", "--version", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["overall"]["decisions"]["active"] == 3
    code, out, err = run_cli("campaign", "coverage", "camp", "--version", "1")
    assert code == 0, err
    assert "refunds" in out and "position bias" in out


def _export(tmp_path: Path, store: Store) -> Path:
    campaign_settings(store, "camp", 1, training=True)
    [item] = campaign_with_items(store, 1)
    decide(store, item, "prefer")
    export_campaign(store, "camp", 1, tmp_path / "out")
    return tmp_path / "out" / "manifest.json"


def test_a_receipt_binds_the_manifest_bytes_and_is_private_and_shown_by_coverage(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    manifest = _export(tmp_path, store)
    result = record_training_receipt(
        store, "camp", 1, export_manifest=manifest, checkpoint="ckpt-7", evaluation={"winRate": 0.61}
    )
    assert result.export_manifest_sha256 == hashlib.sha256(manifest.read_bytes()).hexdigest()
    env = store.ledger.get(result.record_id)
    assert env.privacy == "private" and env.type == TrainingReceipt.record_type
    [shown] = campaign_coverage(store, "camp", 1).receipts
    assert shown["checkpoint"] == "ckpt-7" and shown["evaluation"] == {"winRate": 0.61}
    store.close()


def test_a_receipt_refuses_a_manifest_of_another_campaign_and_a_bad_evaluation(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    manifest = _export(tmp_path, store)
    add_prompt(store, campaign="other")  # campaigns that exist, but are not the manifest's
    add_prompt(store, campaign="camp", version=2)
    with pytest.raises(InvalidInputError) as caught:
        record_training_receipt(store, "other", 1, export_manifest=manifest, checkpoint="c", evaluation={})
    assert caught.value.field == "export-manifest"
    with pytest.raises(InvalidInputError) as caught:
        record_training_receipt(store, "camp", 2, export_manifest=manifest, checkpoint="c", evaluation={})
    assert caught.value.field == "export-manifest"
    big = {"x": "y" * EVALUATION_MAX_BYTES}
    with pytest.raises(InvalidInputError) as caught:
        record_training_receipt(store, "camp", 1, export_manifest=manifest, checkpoint="c", evaluation=big)
    assert caught.value.field == "eval"
    assert store.ledger.count("hr_training_receipts") == 0
    store.close()


def test_receipt_cli_refusals_name_their_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    store = open_cli_store(project)
    manifest = _export(tmp_path, store)
    store.close()
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    args = ["campaign", "receipt", "camp", "--version", "1", "--checkpoint", "c1"]
    code, _, err = run_cli(*args, "--export-manifest", str(manifest), "--eval", str(listed))
    assert code == 2 and "eval:" in err
    code, _, err = run_cli(*args, "--export-manifest", str(listed), "--eval", str(listed))
    assert code == 2 and "eval:" in err  # the evaluation is read first
    good = tmp_path / "eval.json"
    good.write_text('{"accuracy": 0.9}', encoding="utf-8")
    code, _, err = run_cli(*args, "--export-manifest", str(listed), "--eval", str(good))
    assert code == 2 and "export-manifest:" in err
    code, out, err = run_cli(*args, "--export-manifest", str(manifest), "--eval", str(good), "--json")
    assert code == 0, err
    assert json.loads(out)["checkpoint"] == "c1"


def test_review_export_cli_writes_the_files_and_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    store = open_cli_store(project)
    campaign_settings(store, "camp", 1, training=True)
    items = campaign_with_items(store, 2)
    decide(store, items[0], "prefer")
    decide(store, items[1], "tie")
    store.close()
    out_dir = tmp_path / "ds"
    code, out, err = run_cli("review", "export", "camp", "--version", "1", "--out", str(out_dir), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["exported"] == 1 and [e["field"] for e in doc["excluded"]] == ["disposition"]
    assert len(json.loads((out_dir / "manifest.json").read_text())["files"]) == 3
