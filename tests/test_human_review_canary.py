"""What the reviewer was told stays true: a decision recorded while the campaign's training was
disabled (the canary) stays evaluation-only in every later export, coverage and history, even
once training is enabled; a decision recorded after that can become an example
(docs/human-review.md, "Privacy and eligibility")."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.human_review import campaign_with_items, new_store

from reviewtrail._struct import parse
from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import export_campaign
from reviewtrail.human_review.quality import campaign_coverage
from reviewtrail.human_review.records import ReviewDecision, ReviewItem, new_decision_record
from reviewtrail.human_review.rules._eligibility import TRAINING_OFF_WHEN_DECIDED
from reviewtrail.human_review.session import history
from reviewtrail.ledger import Envelope
from reviewtrail.store import Store


def decide(store: Store, item: ReviewItem, *, supersedes: str | None = None) -> Envelope:
    """Append a ``prefer`` marked for training on ``item``."""
    wire: dict[str, Any] = {
        "itemId": item.item_id,
        "disposition": "prefer",
        "preferred": item.run_ids()[0],
        "strength": "strong",
        "submissionId": f"s-{uuid.uuid4().hex}",
        "useForTraining": True,
    }
    if supersedes is not None:
        wire["supersedes"] = supersedes
    [env] = store.append(
        [new_decision_record(parse(ReviewDecision, wire, field="payload"), "public-source", actor="rev-1")]
    )
    return env


def test_a_canary_decision_stays_out_of_every_later_export(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items = campaign_with_items(store, 3)
    campaign_settings(store, "camp", 1, training=False)
    canary = decide(store, items[0])
    campaign_settings(store, "camp", 1, training=True)
    later = decide(store, items[1])
    for n in range(2):  # every later export, not only the first
        report = export_campaign(store, "camp", 1, tmp_path / f"out-{n}")
        assert report.exported == 1
        [why] = [e for e in report.excluded if e.decision_id == canary.id]
        assert why.field == TRAINING_OFF_WHEN_DECIDED and "when the decision was recorded" in why.reason
        assert later.id not in {e.decision_id for e in report.excluded}
    coverage = campaign_coverage(store, "camp", 1).to_json()["overall"]["decisions"]
    assert coverage["qualityEligible"] == 1 and coverage["exportable"] == 1 and coverage["evaluationOnly"] == 1
    shown = history(store, items[0].item_id).to_json()
    assert shown["use"] == "evaluation-only"
    assert "when the decision was recorded" in shown["qualityEligible"]["reason"]
    assert history(store, items[1].item_id).to_json()["use"] == "export-eligible"


def test_a_new_decision_after_training_is_enabled_is_exported(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    [item] = campaign_with_items(store, 1)
    canary = decide(store, item)  # no settings record: training disabled
    campaign_settings(store, "camp", 1, training=True)
    assert export_campaign(store, "camp", 1, tmp_path / "before").exported == 0
    decide(store, item, supersedes=canary.id)
    assert export_campaign(store, "camp", 1, tmp_path / "after").exported == 1
    assert history(store, item.item_id).to_json()["use"] == "export-eligible"


def test_disabling_training_again_keeps_every_decision_out(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    [item] = campaign_with_items(store, 1)
    campaign_settings(store, "camp", 1, training=True)
    decide(store, item)
    campaign_settings(store, "camp", 1, training=False)
    report = export_campaign(store, "camp", 1, tmp_path / "out")
    assert report.exported == 0
    [why] = report.excluded
    assert why.field == "eligibility" and "training is disabled" in why.reason  # stricter now wins


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.booleans(), st.integers(0, 2)), min_size=1, max_size=8))
def test_a_decision_is_exported_only_when_training_was_on_when_decided_and_is_on_now(
    tmp_path_factory: pytest.TempPathFactory, steps: list[bool | int]
) -> None:
    """Steps: a bool records that training setting, an integer n a decision on item n (superseding
    its active one). Exported: an item's active decision when training was enabled by the settings
    in force when it was recorded and is enabled now; coverage counts the same."""
    store = new_store(tmp_path_factory.mktemp("canary"))
    items = campaign_with_items(store, 3)
    enabled = False
    active: dict[str, Envelope] = {}
    eligible: dict[str, bool] = {}
    for step in steps:
        if isinstance(step, bool):
            campaign_settings(store, "camp", 1, training=step)
            enabled = step
        else:
            item = items[step]
            before = active.get(item.item_id)
            active[item.item_id] = decide(store, item, supersedes=before.id if before is not None else None)
            eligible[item.item_id] = enabled
    expected = {item for item, when in eligible.items() if when and enabled}
    report = export_campaign(store, "camp", 1, tmp_path_factory.mktemp("out"))
    left = {e.decision_id: e.field for e in report.excluded}
    assert {i for i, env in active.items() if env.id not in left} == expected and report.exported == len(expected)
    for item_id in active.keys() - expected:
        assert left[active[item_id].id] == ("eligibility" if not enabled else TRAINING_OFF_WHEN_DECIDED)
    decisions = campaign_coverage(store, "camp", 1).to_json()["overall"]["decisions"]
    assert decisions["qualityEligible"] == decisions["exportable"] == len(expected)


def test_a_settings_row_pointed_back_at_training_is_refused(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    [item] = campaign_with_items(store, 1)
    enabled = campaign_settings(store, "camp", 1, training=True)
    decide(store, item)
    campaign_settings(store, "camp", 1, training=False)
    store.close()
    with sqlite3.connect(tmp_path / "ledger.sqlite") as conn:
        seq = conn.execute("SELECT seq FROM rt_records WHERE id = ?", (enabled.record_id,)).fetchone()[0]
        conn.execute(
            "UPDATE rt_p_hr_campaigns SET training_enabled = 1, record_id = ?, seq = ?, rt_seq = ?",
            (enabled.record_id, seq, seq),
        )
    store = new_store_again(tmp_path)
    with pytest.raises(IntegrityError) as err:
        export_campaign(store, "camp", 1, tmp_path / "out")
    assert err.value.field == "hr_campaigns"
    with pytest.raises(IntegrityError):
        campaign_coverage(store, "camp", 1)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.jsonl"))


def test_a_deleted_settings_row_is_refused(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    campaign_with_items(store, 1)
    campaign_settings(store, "camp", 1, training=True)
    store.close()
    with sqlite3.connect(tmp_path / "ledger.sqlite") as conn:
        conn.execute("DELETE FROM rt_p_hr_campaigns")
    with pytest.raises(IntegrityError) as err:
        export_campaign(new_store_again(tmp_path), "camp", 1, tmp_path / "out")
    assert err.value.field == "hr_campaigns"


def new_store_again(root: Path) -> Store:
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings

    return open_store(Settings(store=root / "store", database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
