"""The review queue and an item's history: blinded cards, open items first, invalid items shown
as invalid; provenance revealed only once decided; the review queue/decide/history commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import init_cli_store, open_cli_store, run_cli
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.records import RESPONSE, ReviewItem, ReviewResponse, queue_key
from reviewtrail.human_review.session import decide, history, review_queue
from reviewtrail.ledger import new_record
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from support.human_review import add_item, add_prompt, add_run, campaign_with_items, new_store

# Provenance values chosen so that a scan of any output for them cannot miss.
SECRET_AGENT = {
    "model": "model-zq7-secret",
    "provider": "provider-zq7",
    "executionAdapter": "exec-adapter-zq7@1",
    "learnedAdapter": "lora-zq7",
    "catalogGeneration": "catalog-gen-zq7",
}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = new_store(tmp_path)
    yield s  # type: ignore[misc]
    s.close()


def blinded_item(store: Store, n: int, **entry: Any) -> ReviewItem:
    """An item whose candidates carry distinctive provenance and responses free of it."""
    prompt = add_prompt(store, agents=("agent-zq7-one", "agent-zq7-two"), **entry)
    runs = [
        add_run(store, prompt, agent, response=f"Reply {n}.{i}: refunds are possible.", **SECRET_AGENT)
        for i, agent in enumerate(("agent-zq7-one", "agent-zq7-two"))
    ]
    return add_item(store, prompt, *runs)


def secrets_of(store: Store, item: ReviewItem) -> set[str]:
    """Every provenance value of the item: run ids, agent ids, models, providers, adapters,
    catalog, output event ids, digests, the runs' record ids."""
    values = set(SECRET_AGENT.values()) | {"agent-zq7-one", "agent-zq7-two"}
    for candidate in item.candidates:
        values |= {candidate.run_id, candidate.output_event_id, candidate.digest}
        values |= {row["record_id"] for row in store.ledger.rows("hr_runs", run_id=candidate.run_id)}
        values |= {row["record_id"] for row in store.ledger.rows("hr_run_parts", run_id=candidate.run_id)}
    return values


def correct_output(store: Store, item: ReviewItem) -> None:
    output = store.ledger.get(item.candidates[0].output_event_id)
    assert output.type == RESPONSE
    correction = ReviewResponse(response="A corrected reply.")
    store.append(
        [new_record(correction, actor="t", privacy=output.privacy, subject=output.subject, supersedes=output.id)]
    )


def _by_key(*items: ReviewItem) -> list[str]:
    return sorted((i.item_id for i in items), key=queue_key)


def test_never_judged_items_come_first_then_skipped_then_judged_ones(store: Store) -> None:
    items = campaign_with_items(store, 5)
    decide(store, items[1].item_id, {"disposition": "skip"}, reviewer="rev-1")
    decide(store, items[3].item_id, {"disposition": "tie"}, reviewer="rev-1")
    cards = review_queue(store)
    never = _by_key(items[0], items[2], items[4])
    assert [c.item_id for c in cards] == [*never, items[1].item_id, items[3].item_id]
    # A skip supplies no judgment: the skipped item is open (not decided), after the never-judged.
    assert [c.decided for c in cards] == [False, False, False, False, True]
    assert [c.item_id for c in review_queue(store, limit=2)] == never[:2]
    assert [c.item_id for c in review_queue(store, limit=4)][-1] == items[1].item_id
    assert all(not c.decided for c in review_queue(store, include_decided=False))
    assert len(review_queue(store, include_decided=False)) == 4
    # Out of the skipping reviewer's queue only.
    assert len(review_queue(store, include_decided=False, reviewer="rev-1")) == 3
    assert len(review_queue(store, include_decided=False, reviewer="rev-2")) == 4


def test_the_queue_filters_by_campaign_and_version(store: Store) -> None:
    [one] = campaign_with_items(store, 1, campaign="alpha", version=1)
    [two] = campaign_with_items(store, 1, campaign="alpha", version=3)
    [other] = campaign_with_items(store, 1, campaign="beta")
    [three] = campaign_with_items(store, 1, campaign="alpha", version=1)
    [four] = campaign_with_items(store, 1, campaign="alpha", version=2)
    # Every version of the campaign, merged in queue-key order.
    assert [c.item_id for c in review_queue(store, "alpha")] == _by_key(one, two, three, four)
    decide(store, one.item_id, {"disposition": "skip"}, reviewer="rev-1")
    assert [c.item_id for c in review_queue(store, "alpha")] == [*_by_key(two, three, four), one.item_id]
    assert [c.item_id for c in review_queue(store, "alpha", limit=2)] == _by_key(two, three, four)[:2]
    assert [c.item_id for c in review_queue(store, "alpha", 3)] == [two.item_id]
    assert [c.item_id for c in review_queue(store, "beta")] == [other.item_id]
    assert review_queue(store, "gamma") == []


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"version": 1}, "version")]
)
def test_bad_queue_arguments_are_refused(store: Store, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        review_queue(store, **kwargs)
    assert info.value.field == field


def test_the_first_page_reads_only_a_page_of_items(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    campaign_with_items(store, 12)
    read: list[int] = []
    real_page = store.ledger.page

    def counting_page(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        rows = real_page(*args, **kwargs)
        read.append(len(rows))
        return rows

    monkeypatch.setattr(store.ledger, "page", counting_page)
    assert len(review_queue(store, limit=2)) == 2
    assert sum(read) <= 3


def test_a_card_holds_the_prompt_evidence_criterion_and_both_exact_responses(store: Store) -> None:
    item = blinded_item(store, 1)
    [card] = review_queue(store)
    assert card.valid and card.problems == () and not card.decided
    assert card.scenario_family == "refunds" and card.evidence == "Policy: refunds within 30 days."
    assert card.prompt.startswith("A customer asks")
    assert card.criterion["id"] == "policy-faithful" and card.criterion["allowedReasonCodes"] == [
        "wrong-policy",
        "unsupported",
    ]
    responses = {
        run: store.ledger.get(c.output_event_id).payload_value["response"]
        for run, c in zip(item.run_ids(), item.candidates, strict=True)
    }
    assert [c.position for c in card.candidates] == ["A", "B"]
    assert [c.response for c in card.candidates] == [responses[run] for run in item.display_order]


def test_an_item_whose_output_was_corrected_is_shown_invalid_with_its_responses_withheld(store: Store) -> None:
    item = blinded_item(store, 1)
    correct_output(store, item)
    [card] = review_queue(store)
    assert not card.valid and card.problems
    assert [c.response for c in card.candidates] == [None, None]
    text = json.dumps(card.to_json())
    for value in secrets_of(store, item):
        assert value not in text


def scan(text: str, secrets: set[str]) -> list[str]:
    return sorted(value for value in secrets if value in text)


def test_the_queue_json_never_shows_provenance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    with open_cli_store(project) as store:
        items = [blinded_item(store, n) for n in range(3)]
        correct_output(store, items[2])
        decide(
            store, items[1].item_id, {"disposition": "prefer", "preferred": "A", "strength": "slight"}, reviewer="rev-1"
        )
        secrets = set().union(*(secrets_of(store, item) for item in items))
    code, out, err = run_cli("review", "queue", "--json")
    assert code == 0, err
    cards = json.loads(out)
    assert [c["decided"] for c in cards] == [False, False, True]
    valid = {items[0].item_id: True, items[2].item_id: False, items[1].item_id: True}
    assert [c["valid"] for c in cards] == [valid[c["itemId"]] for c in cards] and cards[2]["itemId"] == items[1].item_id
    assert scan(out, secrets) == []
    code, text, err = run_cli("review", "queue")
    assert code == 0, err
    assert scan(text, secrets) == []
    assert "Reply 0.0" in text and "INVALID" in text
    # The scan finds provenance where it is shown: once decided, in the history.
    code, shown, _ = run_cli("review", "history", items[1].item_id, "--json")
    assert code == 0 and "model-zq7-secret" in shown


def test_history_is_blinded_until_the_item_has_a_decision(store: Store) -> None:
    item = blinded_item(store, 1)
    before = history(store, item.item_id)
    assert before.blinded and before.active is None and before.use is None
    assert before.to_json()["provenance"] is None
    assert scan(json.dumps(before.to_json()), secrets_of(store, item)) == []
    decide(store, item.item_id, {"disposition": "prefer", "preferred": "B", "strength": "strong"}, reviewer="rev-1")
    after = history(store, item.item_id)
    assert not after.blinded
    assert [p.run_id for p in after.provenance] == item.display_order
    assert {p.model for p in after.provenance} == {"model-zq7-secret"}
    assert after.active is not None and after.active.preferred == "B" and after.active.strength == "strong"


def test_history_says_evaluation_only_or_export_eligible(store: Store) -> None:
    [item] = campaign_with_items(store, 1, campaign="ship")
    prefer = {"disposition": "prefer", "preferred": "A", "strength": "slight", "useForTraining": True}
    decide(store, item.item_id, prefer, reviewer="rev-1")
    found = history(store, item.item_id)
    assert found.use == "evaluation-only"
    assert found.quality is not None and not found.quality.eligible and "disabled" in found.quality.reason
    campaign_settings(store, "ship", 1, training=True)
    found = history(store, item.item_id)
    assert found.use == "evaluation-only"  # a decision recorded while training was disabled stays so
    assert found.quality is not None and "when the decision was recorded" in found.quality.reason
    again = {**prefer, "supersedes": found.active.decision_id}  # type: ignore[union-attr]
    decide(store, item.item_id, again, reviewer="rev-1")
    found = history(store, item.item_id)
    assert found.use == "export-eligible" and found.external is not None and found.external.eligible
    decide(store, item.item_id, {"disposition": "tie", "supersedes": found.active.decision_id}, reviewer="rev-1")  # type: ignore[union-attr]
    found = history(store, item.item_id)
    assert found.use == "evaluation-only" and found.superseded == 2


def test_history_of_a_private_prompt_is_never_export_eligible(store: Store) -> None:
    [item] = campaign_with_items(store, 1, campaign="priv", privacy="private")
    campaign_settings(store, "priv", 1, training=True)
    decide(
        store,
        item.item_id,
        {"disposition": "prefer", "preferred": "A", "strength": "slight", "useForTraining": True},
        reviewer="rev-1",
    )
    found = history(store, item.item_id)
    assert found.use == "evaluation-only"
    assert found.quality is not None and found.quality.eligible
    assert found.external is not None and not found.external.eligible


def test_history_of_an_unknown_item_is_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init_cli_store(tmp_path, monkeypatch)
    code, _, err = run_cli("review", "history", "no-such-item")
    assert code == 3 and "item" in err


# --- the decide command ----------------------------------------------------------------------


@pytest.fixture
def cli_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, ReviewItem]:
    project = init_cli_store(tmp_path, monkeypatch)
    with open_cli_store(project) as store:
        item = blinded_item(store, 1)
    return project, item


def ledger_head(project: Path) -> int:
    with open_cli_store(project) as store:
        head = store.ledger.head()
        return head.seq if head is not None else 0


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["--tie", "--skip"],
        ["--prefer", "A", "--strength", "slight", "--tie"],
        ["--malformed", "--underdetermined"],
    ],
)
def test_decide_needs_exactly_one_disposition(cli_item: tuple[Path, ReviewItem], flags: list[str]) -> None:
    project, item = cli_item
    before = ledger_head(project)
    code, _, err = run_cli("review", "decide", item.item_id, *flags)
    assert code == 2 and "disposition:" in err
    assert ledger_head(project) == before


def test_decide_records_and_then_reveals_provenance(cli_item: tuple[Path, ReviewItem]) -> None:
    project, item = cli_item
    args = ["review", "decide", item.item_id, "--prefer", "B", "--strength", "strong", "--reason", "wrong-policy"]
    code, out, err = run_cli(*args, "--tag", "verbose", "--confidence", "0.8", "--submission-id", "cli-1", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["active"] and not result["resubmitted"]
    assert [p["runId"] for p in result["provenance"]] == item.display_order
    with open_cli_store(project) as store:
        recorded = store.ledger.get(result["decisionId"]).payload_value
    assert recorded["preferred"] == item.display_order[1]
    assert recorded["reasonCodes"] == ["wrong-policy"] and recorded["confidence"] == 0.8
    before = ledger_head(project)
    code, out, _ = run_cli("review", "decide", item.item_id, "--skip", "--submission-id", "cli-1")
    assert code == 0 and "resubmitted" in out
    assert ledger_head(project) == before


def test_decide_text_output_shows_the_provenance_table(cli_item: tuple[Path, ReviewItem]) -> None:
    _, item = cli_item
    code, out, err = run_cli("review", "decide", item.item_id, "--tie", env={"COLUMNS": "250"})
    assert code == 0, err
    assert "tie" in out and "model-zq7-secret" in out


def test_decide_on_a_skipped_item_supersedes_the_skip_and_says_whose(cli_item: tuple[Path, ReviewItem]) -> None:
    _, item = cli_item
    code, out, err = run_cli("review", "decide", item.item_id, "--skip", "--reviewer", "rev-a", "--json")
    assert code == 0, err
    skip = json.loads(out)["decisionId"]
    code, out, err = run_cli("review", "decide", item.item_id, "--tie", "--reviewer", "rev-b")
    assert code == 0, err
    assert f"it supersedes the skip by rev-a (decision {skip})" in " ".join(out.split())


def test_decide_correct_reads_the_replacement_file(cli_item: tuple[Path, ReviewItem], tmp_path: Path) -> None:
    project, item = cli_item
    replacement = tmp_path / "better.txt"
    replacement.write_text("Refunds are possible within 30 days.", encoding="utf-8")
    code, out, err = run_cli("review", "decide", item.item_id, "--correct", str(replacement), "--json")
    assert code == 0, err
    with open_cli_store(project) as store:
        recorded = store.ledger.get(json.loads(out)["decisionId"]).payload_value
    assert recorded["disposition"] == "correct" and recorded["replacement"] == "Refunds are possible within 30 days."
    code, _, err = run_cli("review", "decide", item.item_id, "--correct", str(tmp_path / "missing.txt"))
    assert code == 2 and "correct:" in err


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (["--prefer", "C", "--strength", "slight"], "preferred"),
        (["--prefer", "A"], "strength"),
        (["--tie", "--reason", "made-up"], "reasonCodes"),
        (["--skip", "--confidence", "7"], "confidence"),
        (["--skip", "--supersedes", "nothing"], "supersedes"),
    ],
)
def test_decide_refusals_name_the_field_and_append_nothing(
    cli_item: tuple[Path, ReviewItem], flags: list[str], field: str
) -> None:
    project, item = cli_item
    before = ledger_head(project)
    code, out, err = run_cli("review", "decide", item.item_id, *flags)
    assert code == 2 and f"{field}:" in err
    assert ledger_head(project) == before
    assert "model-zq7-secret" not in out + err


def test_decide_on_an_invalid_item_is_a_conflict(cli_item: tuple[Path, ReviewItem]) -> None:
    project, item = cli_item
    with open_cli_store(project) as store:
        correct_output(store, item)
        secrets = secrets_of(store, item)
    before = ledger_head(project)
    code, out, err = run_cli("review", "decide", item.item_id, "--tie")
    assert code == 6 and "item:" in err
    assert scan(out + err, secrets) == []
    assert ledger_head(project) == before


def test_history_text_lists_the_decisions(cli_item: tuple[Path, ReviewItem]) -> None:
    _, item = cli_item
    code, out, _ = run_cli("review", "history", item.item_id)
    assert code == 0 and "no decision yet" in out and "model-zq7-secret" not in out
    code, out, _ = run_cli("review", "decide", item.item_id, "--skip", "--json")
    first = json.loads(out)["decisionId"]
    code, _, err = run_cli("review", "decide", item.item_id, "--tie", "--supersedes", first)
    assert code == 0, err
    code, out, _ = run_cli("review", "history", item.item_id, env={"COLUMNS": "250"})
    assert code == 0 and "tie" in out and "1 earlier decision" in out and "model-zq7-secret" in out


def test_a_second_item_of_the_same_prompt_is_its_own_card(store: Store) -> None:
    prompt = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
    runs = [add_run(store, prompt, agent, response=f"reply {agent[-1]}") for agent in ("agent-a", "agent-b", "agent-c")]
    first = add_item(store, prompt, runs[0], runs[1])
    second = add_item(store, prompt, runs[0], runs[2])
    decide(store, first.item_id, {"disposition": "tie"}, reviewer="rev-1")
    assert [(c.item_id, c.decided) for c in review_queue(store)] == [(second.item_id, False), (first.item_id, True)]


def test_decide_takes_a_lower_case_position(cli_item: tuple[Path, ReviewItem]) -> None:
    project, item = cli_item
    code, out, err = run_cli("review", "decide", item.item_id, "--prefer", "b", "--strength", "slight", "--json")
    assert code == 0, err
    with open_cli_store(project) as store:
        assert store.ledger.get(json.loads(out)["decisionId"]).payload_value["preferred"] == item.display_order[1]


def test_a_decided_item_leaves_the_open_items_table_and_verify_rebuilds_it_the_same(tmp_path: Path) -> None:
    from tests.support.human_review import campaign_with_items, new_store

    from reviewtrail.human_review.session import decide

    store = new_store(tmp_path)
    items = campaign_with_items(store, 3)
    decide(store, items[0].item_id, {"disposition": "tie"}, reviewer="rev-1")
    rows = store.ledger.rows("hr_open")
    open_ids = sorted(r["item_id"] for r in rows if r["item_seq"] is not None)
    assert open_ids == sorted(i.item_id for i in items[1:])
    assert verify_store(store).ok
    store.ledger.rebuild_projections()
    assert store.ledger.rows("hr_open") == rows
    store.close()


def test_the_queue_of_a_reviewer_leaves_out_the_items_they_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    with open_cli_store(project) as store:
        items = [blinded_item(store, n) for n in range(2)]
        decide(store, items[0].item_id, {"disposition": "skip"}, reviewer="rev-1")

    def open_cards(*args: str) -> list[str]:
        code, out, err = run_cli("review", "queue", "--json", *args)
        assert code == 0, err
        return [c["itemId"] for c in json.loads(out) if not c["decided"]]

    assert open_cards("--reviewer", "rev-1") == [items[1].item_id]  # the skipper's own queue
    assert sorted(open_cards("--reviewer", "rev-2")) == sorted(i.item_id for i in items)  # open to others
    assert sorted(open_cards()) == sorted(i.item_id for i in items)
    code, _, err = run_cli("review", "queue", "--reviewer", "not an id!")
    assert code == 2 and "reviewer" in err
