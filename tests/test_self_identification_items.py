"""Self-identifying candidates in a store: materialize records which candidates' texts name a
candidate's identity on the item, the reveal after a decision says so, and items recorded before
the check read as "not checked" (docs/human-review.md, "Self-identifying candidates")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from reviewtrail._struct import parse
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns import materialize
from reviewtrail.human_review.quality import campaign_coverage, campaign_standings
from reviewtrail.human_review.records import ITEM, ReviewItem
from reviewtrail.human_review.session._reveal import CandidateProvenance, candidate_provenance
from reviewtrail.ledger import Envelope
from reviewtrail.store import Store
from support.human_review import add_prompt, add_run, new_store
from test_human_review_export_job import decide


def items_of(store: Store) -> dict[frozenset[str], ReviewItem]:
    found = [parse(ReviewItem, e.payload_value, field="payload") for e in store.ledger.read() if e.type == ITEM]
    return {frozenset(i.run_ids()): i for i in found}


def two_runs(store: Store, prompt: Envelope, a_says: str, b_says: str) -> tuple[str, str]:
    a = add_run(store, prompt, "agent-a", response=a_says, model="gpt-4o", provider="openai")
    b = add_run(
        store,
        prompt,
        "agent-b",
        response=b_says,
        model="claude-sonnet-4-5",
        provider="anthropic",
        executionAdapter="messages@1",
        learnedAdapter="lora-7",
    )
    return a, b


def test_materialize_flags_the_candidates_whose_text_names_an_identity(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        leaky = add_prompt(store)
        a, b = two_runs(store, leaky, "As GPT 4o, I can say refunds take 30 days.", "Refunds take 30 days.")
        both = add_prompt(store)
        c, d = two_runs(store, both, "Claude-Sonnet 4.5 would agree: 30 days.", "I am agent B, via lora 7.")
        clean = add_prompt(store)
        e, f = two_runs(store, clean, "Refunds take 30 days.", "Within 30 days, yes.")
        report = materialize(store, "camp", 1)
        items = items_of(store)
        flagged = items[frozenset((a, b))]
        assert [msgspec.to_builtins(x) for x in flagged.self_identification or []] == [
            {"runId": a, "named": ["own-model"]}
        ]
        assert flagged.self_identifying() is True
        assert (flagged.named_by(a), flagged.named_by(b)) == (("own-model",), ())
        two = items[frozenset((c, d))]
        assert (two.named_by(c), two.named_by(d)) == (("other-model",), ("own-agent", "own-adapter"))
        quiet = items[frozenset((e, f))]
        assert quiet.self_identification == [] and quiet.self_identifying() is False
        assert report.self_identifying == 2
        assert [p.self_identifying for p in report.prompts] == [[flagged.item_id], [two.item_id], []]
        assert report.to_json()["selfIdentifying"] == 2
        assert report.to_json()["prompts"][0]["selfIdentifying"] == [flagged.item_id]


def test_a_name_the_prompt_itself_holds_is_not_held_against_a_candidate(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store, text="A customer asks whether GPT-4o wrote the last reply. Reply.")
        a, b = two_runs(store, prompt, "GPT-4o did not write it.", "No.")
        materialize(store, "camp", 1)
        assert items_of(store)[frozenset((a, b))].self_identification == []


def test_a_name_the_evidence_holds_is_not_held_against_a_candidate(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        held = add_prompt(store, evidence="Policy, as GPT-4o summarised it: 30 days.")
        a, b = two_runs(store, held, "GPT-4o summarised it well.", "No.")
        bare = add_prompt(store, evidence=None)
        c, d = two_runs(store, bare, "GPT-4o summarised it well.", "No.")
        materialize(store, "camp", 1)
        items = items_of(store)
        assert items[frozenset((a, b))].self_identification == []
        assert items[frozenset((c, d))].named_by(c) == ("own-model",)


def _provenance(store: Store, item: ReviewItem) -> dict[str, CandidateProvenance]:
    return {p.run_id: p for p in candidate_provenance(store.ledger, item)}


def test_the_reveal_says_which_candidate_names_what(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        a, b = two_runs(store, prompt, "OpenAI's answer, unlike Anthropic's: 30 days.", "Refunds take 30 days.")
        materialize(store, "camp", 1)
        item = items_of(store)[frozenset((a, b))]
        shown = _provenance(store, item)
        other = "B" if shown[a].position == "A" else "A"
        assert shown[a].named == ("own-provider", "other-provider")
        assert shown[a].self_identifying() == f"yes: own provider, {other}'s provider"
        assert shown[a].to_json()["selfIdentification"] == ["own-provider", "other-provider"]
        assert shown[b].named == () and shown[b].self_identifying() == "no"
        assert shown[b].to_json()["selfIdentification"] == []
        assert CandidateProvenance.COLUMNS[-1] == "names an identity"
        assert shown[a].cells()[-1] == shown[a].self_identifying()
        assert len(shown[a].cells()) == len(CandidateProvenance.COLUMNS)


def test_an_item_recorded_before_the_check_reads_as_not_checked(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        a, b = two_runs(store, prompt, "As GPT 4o: 30 days.", "30 days.")
        materialize(store, "camp", 1)
        item = items_of(store)[frozenset((a, b))]
        older = msgspec.structs.replace(item, **{"self_identification": None})
        assert "selfIdentification" not in older.payload_json()
        assert older.self_identifying() is None and older.named_by(a) is None
        shown = _provenance(store, older)
        assert shown[a].named is None and shown[a].self_identifying() == "not checked"
        assert shown[a].to_json()["selfIdentification"] is None


def _payload(**changes: Any) -> dict[str, Any]:
    digest = "sha256:" + "ab" * 32
    payload: dict[str, Any] = {
        "itemId": "31501f32-8308-53f6-9996-037574b60abc",
        "campaign": {"id": "camp", "version": 1},
        "promptEventId": "prompt-1",
        "criterion": {"id": "helpful", "version": 1},
        "candidates": [
            {"runId": "run-a", "outputEventId": "out-a", "digest": digest},
            {"runId": "run-b", "outputEventId": "out-b", "digest": digest},
        ],
        "displayOrder": ["run-a", "run-b"],
    }
    payload.update(changes)
    return payload


@pytest.mark.parametrize(
    "flags",
    [
        [{"runId": "run-c", "named": ["own-model"]}],
        [{"runId": "run-b", "named": ["own-model"]}, {"runId": "run-a", "named": ["own-model"]}],
        [{"runId": "run-a", "named": ["own-model"]}, {"runId": "run-a", "named": ["own-agent"]}],
        [{"runId": "run-a", "named": []}],
        [{"runId": "run-a", "named": ["own-model", "own-model"]}],
        [{"runId": "run-a", "named": ["own-name"]}],
    ],
)
def test_an_item_refuses_a_flag_that_is_not_one_of_its_candidates_once_in_order(flags: list[Any]) -> None:
    with pytest.raises(InvalidInputError):
        parse(ReviewItem, _payload(selfIdentification=flags), field="payload")


def test_an_item_reads_flags_in_candidate_order() -> None:
    flags = [{"runId": "run-a", "named": ["other-agent"]}, {"runId": "run-b", "named": ["own-adapter"]}]
    item = parse(ReviewItem, _payload(selfIdentification=flags), field="payload")
    assert item.payload_json()["selfIdentification"] == flags
    assert parse(ReviewItem, _payload(selfIdentification=None), field="payload").self_identifying() is None


def test_coverage_counts_self_identifying_items_and_standings_and_position_bias_leave_them_out(
    tmp_path: Path,
) -> None:
    with new_store(tmp_path) as store:
        said = ["As GPT-4o: 30 days.", "Claude Sonnet 4.5 says no.", "OpenAI's answer: yes.", "Fine."]
        runs = [two_runs(store, add_prompt(store), text, "30 days.") for text in said]
        runs.append(two_runs(store, add_prompt(store, family="shipping"), "Ships in 2 days.", "2 days."))
        materialize(store, "camp", 1)
        items = items_of(store)
        ordered = [items[frozenset(pair)] for pair in runs]
        assert [i.self_identifying() for i in ordered] == [True, True, True, False, False]
        for item in ordered[:2] + ordered[3:]:
            decide(store, item, "prefer", actor="ann")
        decide(store, ordered[2], "tie", actor="ann")

        doc = campaign_coverage(store, "camp", 1).to_json()
        assert doc["overall"]["items"]["selfIdentifying"] == 3
        assert doc["overall"]["items"]["selfIdentificationNotChecked"] == 0
        families = {f["family"]: f["items"]["selfIdentifying"] for f in doc["families"]}
        assert families == {"refunds": 3, "shipping": 0}
        bias = doc["quality"]["positionBias"]
        assert bias["overall"]["decisions"] == 2 and bias["selfIdentifyingLeftOut"] == 2

        standings = campaign_standings(store, "camp", 1, rounds=10, seed=1)
        assert (standings.comparisons, standings.ties, standings.left_out) == (2, 0, (2, 1))
        assert sum(a.wins for a in standings.agents) == 2
