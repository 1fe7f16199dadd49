"""The v4 row of one decision on its own, with no store: which facts may become a row and why not,
the response bounds, and the exact row of a prefer and a correct (docs/human-review.md, "The
thoughtstream.training-example.v4 row")."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from reviewtrail._struct import parse
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.records import (
    RESPONSE_MAX_CHARS,
    CampaignRef,
    CriterionIdentity,
    ItemCandidate,
    ReviewDecision,
    ReviewItem,
    ReviewPrompt,
)
from reviewtrail.human_review.rules import CandidateFacts, ChainPrivacy, Refusal, candidate_digest
from reviewtrail.human_review.rules._eligibility import Eligibility
from reviewtrail.human_review.rules._export_rows import (
    ExampleCandidate,
    ExampleFacts,
    example_facts,
    example_refusal,
    training_example_v4,
)

PUBLIC = ChainPrivacy(*(["public-source"] * 7))
PROMPT = parse(
    ReviewPrompt,
    {
        "campaign": {"id": "camp", "version": 2, "label": "Camp"},
        "scenarioFamily": "refunds",
        "prompt": "A customer asks for a refund. Reply.",
        "evidence": "Policy: 30 days.",
        "criterion": {
            "id": "faithful",
            "version": 1,
            "label": "Faithful",
            "instructions": "Prefer the faithful.",
            "allowedReasonCodes": ["wrong-policy"],
            "allowedResponseTags": ["terse"],
        },
        "candidateAgentIds": ["agent-a", "agent-b"],
        "externalExportEligible": True,
    },
    field="payload",
)


def facts_of(run_id: str, model: str, learned: str | None = None) -> CandidateFacts:
    return parse(
        CandidateFacts,
        {
            "runId": run_id,
            "run": {"runId": run_id, "status": "completed"},
            "outputEventId": f"out-{run_id}",
            "outputPayloadHash": "ab" * 32,
            "contextManifest": {"runId": run_id},
            "model": model,
            "provider": "prov",
            "promptHash": "sha256:" + "cd" * 32,
            "executionAdapter": "chat@1",
            "learnedAdapter": learned,
            "catalogGeneration": "gen-1",
            "runPrivacy": "public-source",
            "outputPrivacy": "public-source",
        },
        field="payload",
    )


A, B = facts_of("run-a", "model-a"), facts_of("run-b", "model-b", "lora-1")
CANDIDATES = {"run-a": (A, "Refund within 30 days."), "run-b": (B, "No refunds.")}
ITEM = ReviewItem(
    item_id="item-1",
    campaign=CampaignRef(id="camp", version=2),
    prompt_event_id="prompt-1",
    criterion=CriterionIdentity(id="faithful", version=1),
    candidates=[
        ItemCandidate(run_id=f.run_id, output_event_id=f.output_event_id, digest=candidate_digest(f)) for f in (A, B)
    ],
    display_order=["run-b", "run-a"],
)


def decision(disposition: str = "prefer", **changes: Any) -> ReviewDecision:
    wire: dict[str, Any] = {
        "itemId": "item-1",
        "disposition": disposition,
        "submissionId": "s-1",
        "useForTraining": True,
    }
    if disposition == "prefer":
        wire.update(preferred="run-b", strength="slight")
    if disposition == "correct":
        wire["replacement"] = "Refunds within 30 days of delivery."
    wire.update(changes)
    return parse(ReviewDecision, wire, field="payload")


def made(made_decision: ReviewDecision | None = None, **kwargs: Any) -> ExampleFacts:
    options: dict[str, Any] = {"active": True, "training_enabled": True, "privacy": PUBLIC, **kwargs}
    options.setdefault("enabled_when_decided", True)
    candidates = options.pop("candidates", CANDIDATES)
    return example_facts(PROMPT, ITEM, made_decision or decision(), candidates, **options)


# --- the facts ----------------------------------------------------------------------------------


def test_the_facts_of_a_prefer_hold_only_what_may_leave_the_store() -> None:
    facts = made(decision(confidence=0.75, reasonCodes=["wrong-policy"], responseTags=["terse"]))
    assert facts == ExampleFacts(
        campaign_id="camp",
        campaign_version=2,
        prompt="A customer asks for a refund. Reply.",
        evidence="Policy: 30 days.",
        criterion_id="faithful",
        criterion_version=1,
        criterion_label="Faithful",
        disposition="prefer",
        strength="slight",
        confidence=0.75,
        reason_codes=("wrong-policy",),
        response_tags=("terse",),
        preferred=1,
        replacement=None,
        candidates=(
            ExampleCandidate("Refund within 30 days.", "model-a", "prov", "chat@1", None, "gen-1"),
            ExampleCandidate("No refunds.", "model-b", "prov", "chat@1", "lora-1", "gen-1"),
        ),
        active=True,
        eligibility=Eligibility(True, "preauthorized prompt and every record public-source"),
        problems=(),
    )
    assert made(decision(preferred="run-a")).preferred == 0
    assert made(decision("correct")).preferred is None


def test_a_decision_that_does_not_fit_its_item_is_refused() -> None:
    with pytest.raises(InvalidInputError) as err:
        made(decision(preferred="run-z"))
    assert err.value.field == "preferred"


def test_a_missing_candidate_makes_the_facts_unexportable() -> None:
    facts = made(candidates={"run-a": CANDIDATES["run-a"]})
    assert facts.candidates == (ExampleCandidate("", "", "", "", None, ""),) * 2
    assert facts.problems[-1] == "a candidate's response is missing"
    assert facts.preferred is None
    assert example_refusal(facts) == Refusal("item", "the item is invalid: " + "; ".join(facts.problems))


def test_the_frozen_digests_are_re_checked_unless_already_checked() -> None:
    changed = {**CANDIDATES, "run-a": (facts_of("run-a", "model-z"), "Refund within 30 days.")}
    rechecked = made(candidates=changed)
    assert len(rechecked.problems) == 1 and rechecked.problems[0].startswith("candidate run-a: the digest differs")
    assert made(candidates=changed, problems=[]).problems == ()
    assert made(problems=["given"]).problems == ("given",)


def test_eligibility_is_decided_here_with_the_training_at_decision_time() -> None:
    assert made(training_enabled=False).eligibility.eligible is False
    off_then = made(enabled_when_decided=False).eligibility
    assert off_then.eligible is False and off_then.code == "training-off-when-decided"
    assert made(privacy=replace(PUBLIC, decision="private")).eligibility.eligible is False


# --- why facts are not a row ------------------------------------------------------------------------


def replaced(**changes: Any) -> ExampleFacts:
    return replace(made(), **changes)


@pytest.mark.parametrize(
    ("changes", "refusal"),
    [
        ({"disposition": "tie"}, Refusal("disposition", "a tie decision is never a training example")),
        ({"disposition": "skip"}, Refusal("disposition", "a skip decision is never a training example")),
        ({"active": False}, Refusal("decision", "the decision is not active (it was superseded)")),
        (
            {"eligibility": Eligibility(False, "nope")},
            Refusal("eligibility", "not externally eligible: nope"),
        ),
        ({"problems": ("p1", "p2")}, Refusal("item", "the item is invalid: p1; p2")),
        ({"preferred": None}, Refusal("preferred", "prefer must name one of the two candidates and a strength")),
        ({"preferred": 2}, Refusal("preferred", "prefer must name one of the two candidates and a strength")),
        ({"strength": None}, Refusal("preferred", "prefer must name one of the two candidates and a strength")),
    ],
)
def test_each_reason_facts_are_not_a_row(changes: dict[str, Any], refusal: Refusal) -> None:
    facts = replaced(**changes)
    assert example_refusal(facts) == refusal
    with pytest.raises(InvalidInputError) as err:
        training_example_v4(facts)
    assert str(err.value) == f"{refusal.field}: {refusal.problem}"


def test_a_decision_recorded_while_training_was_off_is_left_out_under_its_own_code() -> None:
    facts = made(enabled_when_decided=False)
    refusal = example_refusal(facts)
    assert refusal is not None and refusal.field == "training-off-when-decided"
    assert refusal.problem == f"not externally eligible: {facts.eligibility.reason}"


def _with_responses(first: str, second: str) -> ExampleFacts:
    a, b = made().candidates
    return replaced(candidates=(replace(a, response=first), replace(b, response=second)))


@pytest.mark.parametrize("length", [1, 2, RESPONSE_MAX_CHARS - 1, RESPONSE_MAX_CHARS])
def test_a_response_of_1_to_the_most_characters_makes_a_row(length: int) -> None:
    for which in (0, 1):
        texts = ["x" * length if i == which else "ok" for i in (0, 1)]
        assert example_refusal(_with_responses(*texts)) is None
    correct = made(decision("correct"))
    assert example_refusal(replace(correct, replacement="y" * length)) is None


@pytest.mark.parametrize("text", ["", "x" * (RESPONSE_MAX_CHARS + 1)])
def test_an_empty_or_too_long_response_or_replacement_is_not_a_row(text: str) -> None:
    response = Refusal("response", "a candidate response is empty or longer than RESPONSE_MAX_CHARS")
    assert example_refusal(_with_responses(text, "ok")) == response
    assert example_refusal(_with_responses("ok", text)) == response
    correct = made(decision("correct"))
    replacement = Refusal("replacement", "correct must carry a replacement of 1 to RESPONSE_MAX_CHARS characters")
    assert example_refusal(replace(correct, replacement=text)) == replacement
    assert example_refusal(replace(correct, replacement=None)) == replacement


# --- the rows -----------------------------------------------------------------------------------

PROVENANCE_A = {
    "model": {"id": "model-a", "provider": "prov"},
    "executionAdapter": "chat@1",
    "learnedAdapter": None,
    "catalogGeneration": "gen-1",
}
PROVENANCE_B = {
    "model": {"id": "model-b", "provider": "prov"},
    "executionAdapter": "chat@1",
    "learnedAdapter": "lora-1",
    "catalogGeneration": "gen-1",
}
HEAD = {
    "schemaVersion": "thoughtstream.training-example.v4",
    "campaign": {"id": "camp", "version": 2},
    "prompt": "A customer asks for a refund. Reply.",
    "criterion": {"id": "faithful", "version": 1, "label": "Faithful"},
}


def answer(text: str, origin: str, provenance: dict[str, Any] | None) -> dict[str, Any]:
    return {"response": text, "origin": origin, "provenance": provenance, "trajectory": []}


def test_the_row_of_a_prefer() -> None:
    row = training_example_v4(made(decision(confidence=0.5, reasonCodes=["wrong-policy"])))
    assert row == {
        **HEAD,
        "judgment": {
            "disposition": "prefer",
            "reasonCodes": ["wrong-policy"],
            "responseTags": [],
            "strength": "slight",
            "confidence": 0.5,
        },
        "chosen": answer("No refunds.", "candidate", PROVENANCE_B),
        "rejected": [answer("Refund within 30 days.", "candidate", PROVENANCE_A)],
        "evidence": "Policy: 30 days.",
    }
    first = training_example_v4(made(decision(preferred="run-a", strength="strong")))
    assert first["chosen"] == answer("Refund within 30 days.", "candidate", PROVENANCE_A)
    assert first["rejected"] == [answer("No refunds.", "candidate", PROVENANCE_B)]
    assert first["judgment"] == {"disposition": "prefer", "reasonCodes": [], "responseTags": [], "strength": "strong"}


def test_the_row_of_a_correct_rejects_both_candidates() -> None:
    row = training_example_v4(made(decision("correct", responseTags=["terse"])))
    assert row == {
        **HEAD,
        "judgment": {"disposition": "correct", "reasonCodes": [], "responseTags": ["terse"]},
        "chosen": answer("Refunds within 30 days of delivery.", "correction", None),
        "rejected": [
            answer("Refund within 30 days.", "candidate", PROVENANCE_A),
            answer("No refunds.", "candidate", PROVENANCE_B),
        ],
        "evidence": "Policy: 30 days.",
    }


def test_a_strength_on_facts_of_a_correct_is_not_written() -> None:
    facts = replace(made(decision("correct")), strength="strong", confidence=0.0)
    assert training_example_v4(facts)["judgment"] == {
        "disposition": "correct",
        "reasonCodes": [],
        "responseTags": [],
        "confidence": 0.0,
    }


def test_a_row_without_evidence_has_no_evidence_field() -> None:
    assert "evidence" not in training_example_v4(replace(made(), evidence=None))
