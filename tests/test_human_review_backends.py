"""The whole human-review flow on each ledger backend: import, candidate runs (scripted agents),
materialize, decide (with a supersession and a tie), export, coverage. SQLite and PostgreSQL must
give the same items, the same export rows and the same counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.human_review import new_store, prompt_entry

from reviewtrail.human_review.campaigns import (
    campaign_settings,
    import_campaign,
    materialize,
    parse_agents_file,
    run_campaign,
)
from reviewtrail.human_review.export import export_campaign
from reviewtrail.human_review.quality import campaign_coverage
from reviewtrail.human_review.session import decide, review_queue

AGENTS = """
agents:
  - id: agent-a
    model: model-a
    provider: openai
    executionAdapter: chat-completions@1
    catalogGeneration: gen-1
    backend: {kind: scripted, template: "A answers: {prompt}"}
  - id: agent-b
    model: model-b
    provider: anthropic
    executionAdapter: messages@1
    catalogGeneration: gen-1
    backend: {kind: scripted, template: "B answers: {prompt}"}
"""


def flow(root: Path, database_url: str | None) -> dict[str, Any]:
    entries = [
        prompt_entry(text="Refund after 40 days?", family="refunds"),
        prompt_entry(text="Refund after 10 days?", family="refunds"),
        prompt_entry(text="Parcel lost, customer 4471 at home address.", family="shipping", privacy="private"),
    ]
    with new_store(root, database_url) as store:
        import_campaign(store, "".join(json.dumps(e) + "\n" for e in entries), name="c.jsonl")
        run_campaign(store, "camp", 1, parse_agents_file(AGENTS, "agents.yaml"))
        materialize(store, "camp", 1)
        head = store.ledger.head()
        materialize(store, "camp", 1)
        assert store.ledger.head() == head  # materializing again appends nothing
        campaign_settings(store, "camp", 1, training=True)
        cards = {card.prompt: card for card in review_queue(store, "camp", 1)}
        first = decide(store, cards["Refund after 40 days?"].item_id, {"disposition": "prefer", "preferred": "A",
                       "strength": "slight", "useForTraining": True}, submission_id="s-1",
                       reviewer="rev-1")  # fmt: skip
        decide(store, cards["Refund after 40 days?"].item_id, {"disposition": "prefer", "preferred": "B",
               "strength": "strong", "useForTraining": True, "supersedes": first.decision_id},
               submission_id="s-2", reviewer="rev-1")  # fmt: skip
        decide(
            store, cards["Refund after 10 days?"].item_id, {"disposition": "tie"}, submission_id="s-3", reviewer="rev-1"
        )
        decide(store, cards["Parcel lost, customer 4471 at home address."].item_id,
               {"disposition": "prefer", "preferred": "A", "strength": "strong", "useForTraining": True},
               submission_id="s-4", reviewer="rev-1")  # fmt: skip
        report = export_campaign(store, "camp", 1, root / "out")
        coverage = campaign_coverage(store, "camp", 1).to_json()
    v4 = (root / "out" / report.files[0]["name"]).read_text(encoding="utf-8")
    return {
        "items": sorted((card.prompt, card.valid, card.decided) for card in cards.values()),
        "exported": report.exported,
        "excluded": sorted((e.field, e.disposition) for e in report.excluded),
        # Which agent is shown as A follows from the (random) run ids, so compare what does not.
        "rows": [_blind(json.loads(line)) for line in v4.splitlines()],
        "coverage": {k: v for k, v in coverage.items() if k not in ("receipts",)},
    }


def _blind(row: dict[str, Any]) -> dict[str, Any]:
    responses = sorted([row["chosen"]["response"], *(r["response"] for r in row["rejected"])])
    return {**{k: v for k, v in row.items() if k not in ("chosen", "rejected")}, "responses": responses}


@pytest.fixture(scope="module")
def on_sqlite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return flow(tmp_path_factory.mktemp("sqlite"), None)


def test_the_flow_on_sqlite_exports_only_the_superseding_public_prefer(on_sqlite: dict[str, Any]) -> None:
    assert on_sqlite["exported"] == 1
    [row] = on_sqlite["rows"]
    assert row["prompt"] == "Refund after 40 days?"
    assert row["judgment"]["strength"] == "strong"
    assert row["responses"] == ["A answers: Refund after 40 days?", "B answers: Refund after 40 days?"]
    assert ("disposition", "tie") in on_sqlite["excluded"]
    assert ("decision", "prefer") in on_sqlite["excluded"]  # the superseded one
    assert ("eligibility", "prefer") in on_sqlite["excluded"]  # the private prompt
    assert "4471" not in json.dumps(on_sqlite["rows"])


def test_postgresql_gives_the_same_items_rows_and_counts(
    on_sqlite: dict[str, Any], tmp_path: Path, pg_url: str
) -> None:
    assert flow(tmp_path, pg_url) == on_sqlite
