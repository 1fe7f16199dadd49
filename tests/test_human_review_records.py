"""Human review record types: exact type names, camelCase wire names, bounds, and the prompt's
privacy rule (docs/human-review.md, "Records")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail import app
from reviewtrail._struct import parse
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.records import (
    EVIDENCE_MAX_CHARS,
    INSTRUCTIONS_MAX_CHARS,
    NOTE_MAX_CHARS,
    PROMPT_MAX_CHARS,
    RESPONSE_MAX_CHARS,
    CampaignSettings,
    ReviewDecision,
    ReviewItem,
    ReviewPrompt,
    ReviewResponse,
    new_campaign_record,
    new_decision_record,
    new_item_record,
    new_prompt_record,
)
from reviewtrail.ledger import MemoryLedger, NewRecord

DIGEST = "sha256:" + "ab" * 32


def prompt_wire(**changes: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "campaign": {"id": "c1", "version": 1, "label": "Canary"},
        "scenarioFamily": "refusals",
        "prompt": "Explain the result.",
        "evidence": "Table 1 shows 3.2.",
        "criterion": {
            "id": "helpful",
            "version": 2,
            "label": "Helpfulness",
            "instructions": "Prefer the answer that uses the evidence.",
            "allowedReasonCodes": ["unsupported", "wrong-number"],
            "allowedResponseTags": ["verbose"],
        },
        "candidateAgentIds": ["agent-a", "agent-b"],
        "externalExportEligible": True,
    }
    wire.update(changes)
    return wire


def item_wire(**changes: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "itemId": "item-1",
        "campaign": {"id": "c1", "version": 1},
        "promptEventId": "p1",
        "criterion": {"id": "helpful", "version": 2},
        "candidates": [
            {"runId": "run-a", "outputEventId": "o-a", "digest": DIGEST},
            {"runId": "run-b", "outputEventId": "o-b", "digest": DIGEST},
        ],
        "displayOrder": ["run-b", "run-a"],
    }
    wire.update(changes)
    return wire


def decision_wire(**changes: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "itemId": "item-1",
        "disposition": "prefer",
        "preferred": "run-a",
        "strength": "strong",
        "confidence": 0.75,
        "reasonCodes": ["unsupported"],
        "responseTags": ["verbose"],
        "note": "B invents a number.",
        "useForTraining": True,
        "submissionId": "s-1",
    }
    wire.update(changes)
    return wire


def ledger() -> MemoryLedger:
    return MemoryLedger(app.catalog())


def test_the_records_have_the_exact_type_names() -> None:
    assert ReviewPrompt.record_type == "stream.thought.source.review.prompt@1"
    assert ReviewResponse.record_type == "stream.thought.output.review-response@1"
    assert ReviewItem.record_type == "stream.thought.review.item.created@1"
    assert ReviewDecision.record_type == "stream.thought.review.decision@1"
    assert CampaignSettings.record_type == "human-review.campaign@1"


@pytest.mark.parametrize(
    ("model", "wire"),
    [
        (ReviewPrompt, prompt_wire()),
        (ReviewItem, item_wire()),
        (ReviewDecision, decision_wire()),
        (ReviewResponse, {"response": "A."}),
        (CampaignSettings, {"campaignId": "c1", "version": 1, "trainingEnabled": True}),
    ],
)
def test_wire_names_round_trip_and_the_ledger_accepts_them(model: Any, wire: dict[str, Any]) -> None:
    value = parse(model, wire, field="payload")
    dumped = {k: v for k, v in value.payload_json().items() if v is not None}
    assert {k: v for k, v in dumped.items() if k in wire} == wire
    [env] = ledger().append([NewRecord.make(type=model.record_type, actor="a", privacy="private", payload=dumped)])
    assert env.type == model.record_type


@pytest.mark.parametrize(
    ("model", "wire", "field"),
    [
        (ReviewPrompt, prompt_wire(prompt="x" * (PROMPT_MAX_CHARS + 1)), "prompt"),
        (ReviewPrompt, prompt_wire(evidence="x" * (EVIDENCE_MAX_CHARS + 1)), "evidence"),
        (ReviewPrompt, prompt_wire(prompt=""), "prompt"),
        (ReviewPrompt, prompt_wire(candidateAgentIds=["agent-a"]), "candidateAgentIds"),
        (ReviewPrompt, prompt_wire(scenarioFamily=None), "scenarioFamily"),
        (ReviewResponse, {"response": "x" * (RESPONSE_MAX_CHARS + 1)}, "response"),
        (ReviewResponse, {"response": ""}, "response"),
        (ReviewResponse, {"response": "a", "extra": 1}, "extra"),
        (ReviewDecision, decision_wire(note="x" * (NOTE_MAX_CHARS + 1)), "note"),
        (ReviewDecision, decision_wire(confidence=1.5), "confidence"),
        (ReviewDecision, decision_wire(confidence=-0.1), "confidence"),
        (ReviewDecision, decision_wire(reasonCodes=["a", "b", "c"]), "reasonCodes"),
        (ReviewDecision, decision_wire(responseTags=["a", "b", "c"]), "responseTags"),
        (ReviewDecision, decision_wire(disposition="maybe"), "disposition"),
        (ReviewDecision, decision_wire(strength="huge"), "strength"),
        (ReviewDecision, decision_wire(replacement="x" * (RESPONSE_MAX_CHARS + 1)), "replacement"),
        (ReviewItem, item_wire(candidates=item_wire()["candidates"][:1]), "candidates"),
        (ReviewItem, item_wire(displayOrder=["run-a"]), "displayOrder"),
    ],
)
def test_the_ledger_refuses_out_of_bound_payloads_naming_the_field(
    model: Any, wire: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInputError) as err:
        ledger().append([NewRecord.make(type=model.record_type, actor="a", privacy="private", payload=wire)])
    assert err.value.field.startswith(f"records[0].payload.{field}")


def test_criterion_instructions_are_bounded() -> None:
    criterion = dict(prompt_wire()["criterion"], instructions="x" * (INSTRUCTIONS_MAX_CHARS + 1))
    with pytest.raises(InvalidInputError, match="instructions"):
        parse(ReviewPrompt, prompt_wire(criterion=criterion), field="payload")
    parse(
        ReviewPrompt, prompt_wire(criterion=dict(criterion, instructions="x" * INSTRUCTIONS_MAX_CHARS)), field="payload"
    )


@pytest.mark.parametrize(
    "wire",
    [
        prompt_wire(candidateAgentIds=["agent-a", "agent-a"]),
        prompt_wire(criterion=dict(prompt_wire()["criterion"], allowedReasonCodes=["x", "x"])),
    ],
)
def test_prompt_lists_hold_no_value_twice(wire: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError, match="twice"):
        parse(ReviewPrompt, wire, field="payload")


@pytest.mark.parametrize(
    "changes",
    [
        {"displayOrder": ["run-a", "run-c"]},
        {"displayOrder": ["run-a", "run-a"]},
        {"candidates": list(reversed(item_wire()["candidates"]))},
        {"candidates": [item_wire()["candidates"][0]] * 2, "displayOrder": ["run-a", "run-a"]},
        {"candidates": [dict(item_wire()["candidates"][0], digest="ab" * 32), item_wire()["candidates"][1]]},
    ],
)
def test_an_item_is_two_distinct_runs_in_run_id_order_shown_in_a_permutation(changes: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        parse(ReviewItem, item_wire(**changes), field="payload")


@pytest.mark.parametrize("privacy", ["private", "sensitive"])
def test_only_a_public_source_prompt_may_be_eligible_for_external_export(privacy: Any) -> None:
    prompt = parse(ReviewPrompt, prompt_wire(), field="payload")
    with pytest.raises(InvalidInputError) as err:
        new_prompt_record(prompt, privacy)
    assert err.value.field == "externalExportEligible"
    kept = parse(ReviewPrompt, prompt_wire(externalExportEligible=False), field="payload")
    assert new_prompt_record(kept, privacy).privacy == privacy


def test_a_public_source_prompt_record_keeps_its_payload_and_privacy() -> None:
    prompt = parse(ReviewPrompt, prompt_wire(), field="payload")
    rec = new_prompt_record(prompt, "public-source")
    assert rec.type == ReviewPrompt.record_type and rec.privacy == "public-source"
    assert rec.payload == prompt.payload_json()
    assert rec.payload["externalExportEligible"] is True and rec.subject == "c1"


def test_export_eligibility_defaults_to_false_and_training_to_disabled() -> None:
    wire = prompt_wire()
    del wire["externalExportEligible"]
    assert parse(ReviewPrompt, wire, field="payload").external_export_eligible is False
    assert parse(CampaignSettings, {"campaignId": "c1", "version": 1}, field="payload").training_enabled is False
    assert new_campaign_record(CampaignSettings(campaign_id="c1", version=1)).privacy == "private"


def test_a_superseding_decision_names_the_earlier_record_in_its_envelope() -> None:
    store = ledger()
    first = parse(ReviewDecision, decision_wire(), field="payload")
    [env] = store.append([new_decision_record(first, "private")])
    second = parse(
        ReviewDecision, decision_wire(disposition="tie", supersedes=env.id, submissionId="s-2"), field="payload"
    )
    rec = new_decision_record(second, "private")
    assert rec.supersedes == env.id and rec.subject == "item-1"
    store.append([rec])
    assert list(store.superseded_by(env.id)) == [rec.id]
    dangling = parse(ReviewDecision, decision_wire(supersedes="nothing-here", submissionId="s-3"), field="payload")
    with pytest.raises(InvalidInputError):
        store.append([new_decision_record(dangling, "private")])


def test_an_item_record_is_about_its_item() -> None:
    rec = new_item_record(parse(ReviewItem, item_wire(), field="payload"), "private")
    assert rec.subject == "item-1" and rec.type == ReviewItem.record_type


@given(ident=st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._:@/-]{0,20}\Z"))
def test_an_identifier_is_the_whole_text_a_final_newline_is_refused(ident: str) -> None:
    """A pattern holds the whole text: Python's ``$`` would also pass a final newline."""
    assert parse(ReviewDecision, decision_wire(itemId=ident), field="payload").item_id == ident
    for field in ("itemId", "submissionId", "supersedes"):
        with pytest.raises(InvalidInputError, match="String should match pattern") as err:
            parse(ReviewDecision, decision_wire(**{field: ident + "\n"}), field="payload")
        assert err.value.field == field
        with pytest.raises(InvalidInputError) as stored:
            ledger().append(
                [
                    NewRecord.make(
                        type=ReviewDecision.record_type,
                        actor="a",
                        privacy="private",
                        payload=decision_wire(**{field: ident + "\n"}),
                    )
                ]
            )
        assert stored.value.field == f"records[0].payload.{field}"


@pytest.mark.parametrize(("value", "kind"), [(True, "a boolean"), ("0.5", "a string"), ([0.5], "a list")])
def test_a_confidence_that_is_not_a_number_is_named(value: Any, kind: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        parse(ReviewDecision, decision_wire(confidence=value), field="payload")
    assert (err.value.field, str(err.value)) == ("confidence", f"confidence: must be a number, not {kind}")
