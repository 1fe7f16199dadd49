"""Decision rules: what each disposition may carry, the allowlists, one active decision per item
under any interleaving, and idempotent submissions (docs/human-review.md, "Decisions")."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail._struct import parse
from reviewtrail.human_review.records import DISPOSITIONS, Criterion, ReviewDecision, ReviewItem
from reviewtrail.human_review.rules import DecisionFact, Refusal, active_decisions, check_decision, first_submission

DIGEST = "sha256:" + "ab" * 32
CRITERION = parse(
    Criterion,
    {
        "id": "helpful",
        "version": 2,
        "label": "Helpfulness",
        "instructions": "Prefer the answer that uses the evidence.",
        "allowedReasonCodes": ["unsupported", "wrong-number", "off-topic"],
        "allowedResponseTags": ["verbose", "terse", "rude"],
    },
    field="payload",
)
ITEM = parse(
    ReviewItem,
    {
        "itemId": "item-1",
        "campaign": {"id": "c1", "version": 1},
        "promptEventId": "p1",
        "criterion": {"id": "helpful", "version": 2},
        "candidates": [
            {"runId": "run-a", "outputEventId": "o-a", "digest": DIGEST},
            {"runId": "run-b", "outputEventId": "o-b", "digest": DIGEST},
        ],
        "displayOrder": ["run-b", "run-a"],
    },
    field="payload",
)
FOR_DISPOSITION: dict[str, dict[str, Any]] = {
    "prefer": {"preferred": "run-b", "strength": "slight"},
    "correct": {"replacement": "The result is 3.2, per Table 1."},
}


def decision(disposition: str = "prefer", **changes: Any) -> ReviewDecision:
    wire: dict[str, Any] = {"itemId": "item-1", "disposition": disposition, "submissionId": "s-1"}
    wire.update(FOR_DISPOSITION.get(disposition, {}))
    wire.update(changes)
    return parse(ReviewDecision, wire, field="payload")


@pytest.mark.parametrize("disposition", DISPOSITIONS)
def test_each_disposition_with_its_own_fields_is_accepted(disposition: str) -> None:
    extras = {"reasonCodes": ["unsupported", "off-topic"], "responseTags": ["terse"], "confidence": 0.5}
    assert check_decision(decision(disposition, **extras), ITEM, CRITERION) is None


@pytest.mark.parametrize(
    ("disposition", "changes", "field"),
    [
        ("prefer", {"preferred": None}, "preferred"),
        ("prefer", {"preferred": "run-c"}, "preferred"),
        ("prefer", {"strength": None}, "strength"),
        ("prefer", {"replacement": "x"}, "replacement"),
        ("correct", {"replacement": None}, "replacement"),
        ("correct", {"preferred": "run-a"}, "preferred"),
        ("correct", {"strength": "strong"}, "strength"),
        *[(d, {"preferred": "run-a"}, "preferred") for d in ("tie", "underdetermined", "malformed", "skip")],
        *[(d, {"strength": "slight"}, "strength") for d in ("tie", "underdetermined", "malformed", "skip")],
        *[(d, {"replacement": "x"}, "replacement") for d in ("tie", "underdetermined", "malformed", "skip")],
        ("tie", {"reasonCodes": ["made-up"]}, "reasonCodes"),
        ("tie", {"reasonCodes": ["unsupported", "unsupported"]}, "reasonCodes"),
        ("skip", {"responseTags": ["loud"]}, "responseTags"),
        ("skip", {"responseTags": ["rude", "rude"]}, "responseTags"),
        ("prefer", {"itemId": "item-2"}, "itemId"),
    ],
)
def test_each_violation_is_refused_naming_its_field(disposition: str, changes: dict[str, Any], field: str) -> None:
    refusal = check_decision(decision(disposition, **changes), ITEM, CRITERION)
    assert refusal is not None and refusal.field == field
    assert refusal.error().field == field


def test_a_decision_is_judged_by_the_items_own_criterion() -> None:
    other = msgspec.structs.replace(CRITERION, **{"version": 3})
    refusal = check_decision(decision(), ITEM, other)
    assert refusal is not None and refusal.field == "criterion"


@pytest.mark.parametrize(
    ("disposition", "changes", "field", "problem"),
    [
        ("prefer", {"preferred": None}, "preferred", "prefer must name the preferred candidate's run"),
        ("prefer", {"preferred": "run-c"}, "preferred", "run-c is not one of the item's two candidates"),
        ("prefer", {"strength": None}, "strength", "prefer must carry a strength (slight or strong)"),
        ("tie", {"preferred": "run-a"}, "preferred", "tie must not name a preferred candidate"),
        ("skip", {"strength": "slight"}, "strength", "skip must not carry a strength"),
        ("correct", {"replacement": None}, "replacement", "correct must carry a replacement response"),
        ("malformed", {"replacement": "x"}, "replacement", "malformed must not carry a replacement response"),
        ("tie", {"reasonCodes": ["made-up"]}, "reasonCodes", "made-up is not allowed by criterion helpful@2"),
        ("tie", {"responseTags": ["rude", "rude"]}, "responseTags", "a value is listed twice"),
        ("prefer", {"itemId": "item-2"}, "itemId", "the decision is for item item-2, not item-1"),
    ],
)
def test_each_refusal_says_what_is_wrong(disposition: str, changes: dict[str, Any], field: str, problem: str) -> None:
    refusal = check_decision(decision(disposition, **changes), ITEM, CRITERION)
    assert refusal == Refusal(field, problem)
    assert str(refusal.error()) == f"{field}: {problem}"


def test_a_decision_of_another_criterion_is_refused_naming_the_items() -> None:
    refusal = check_decision(decision(), ITEM, msgspec.structs.replace(CRITERION, **{"version": 3}))
    assert refusal == Refusal("criterion", "the item is judged by criterion helpful@2")


@pytest.mark.parametrize("field", ["reasonCodes", "responseTags"])
def test_more_values_than_allowed_are_refused_even_past_the_payload_model(field: str) -> None:
    # The payload model already bounds both lists; the rule holds on its own for a decision built
    # without it.
    values = ["unsupported", "wrong-number", "off-topic"] if field == "reasonCodes" else ["verbose", "terse", "rude"]
    made = msgspec.structs.replace(decision("tie"), **{_python(field): values})
    assert check_decision(made, ITEM, CRITERION) == Refusal(field, "at most 2 values")


def _python(field: str) -> str:
    return {"reasonCodes": "reason_codes", "responseTags": "response_tags"}[field]


# --- active decisions -------------------------------------------------------------------------

ITEMS = ["item-1", "item-2", "item-3"]


@st.composite
def histories(draw: st.DrawFn) -> list[DecisionFact]:
    """A random ledger of decisions: items, validity, repeated submission ids and supersedes
    links to earlier, later, foreign or missing decisions, in seq order."""
    count = draw(st.integers(0, 25))
    made: list[DecisionFact] = []
    for seq in range(1, count + 1):
        item = draw(st.sampled_from(ITEMS))
        target = draw(st.one_of(st.none(), st.integers(1, count + 2).map(lambda n: f"d{n}")))
        submission = draw(st.integers(1, 12).map(lambda n: f"s{n}"))
        payload = decision(
            draw(st.sampled_from(["tie", "skip", "underdetermined"])),
            itemId=item,
            supersedes=target,
            submissionId=submission,
        )
        made.append(DecisionFact(f"d{seq}", seq, payload, valid=draw(st.booleans())))
    return made


def expected_active(history: list[DecisionFact]) -> dict[str, str]:
    """The specification, written plainly: per item, the last decision that counts."""
    seen: set[str] = set()
    by_id = {f.decision_id: f for f in history}
    result: dict[str, str] = {}
    for f in history:
        first = f.decision.submission_id not in seen
        seen.add(f.decision.submission_id)
        target = f.decision.supersedes
        link_ok = target is None or (
            target in by_id and by_id[target].seq < f.seq and by_id[target].item_id == f.item_id
        )
        if f.valid and first and link_ok:
            result[f.item_id] = f.decision_id
    return result


@given(history=histories(), order=st.randoms(use_true_random=False))
def test_exactly_one_active_decision_per_item_under_any_interleaving(history: list[DecisionFact], order: Any) -> None:
    shuffled = list(history)
    order.shuffle(shuffled)
    active = active_decisions(shuffled)
    assert {item: a.decision.decision_id for item, a in active.items()} == expected_active(history)
    assert active == active_decisions(history)
    for item, a in active.items():
        assert a.decision.item_id == item and a.decision.valid
        assert a.decision.decision_id not in a.inactive
        seqs = [int(d[1:]) for d in a.inactive]
        assert seqs == sorted(seqs) and all(s < a.decision.seq for s in seqs)


def test_the_latest_decision_is_active_and_older_concurrent_leaves_are_not() -> None:
    first = DecisionFact("d1", 1, decision("tie", submissionId="s1"))
    leaf_a = DecisionFact("d2", 2, decision("prefer", supersedes="d1", submissionId="s2"))
    leaf_b = DecisionFact("d3", 3, decision("skip", supersedes="d1", submissionId="s3"))
    active = active_decisions([leaf_b, first, leaf_a])["item-1"]
    assert active.decision is leaf_b and active.inactive == ("d1", "d2")
    chained = DecisionFact("d4", 4, decision("correct", supersedes="d3", submissionId="s4"))
    assert active_decisions([first, leaf_a, leaf_b, chained])["item-1"].decision is chained


def test_invalid_duplicate_and_badly_linked_decisions_never_become_active() -> None:
    first = DecisionFact("d1", 1, decision("tie", submissionId="s1"))
    later = [
        DecisionFact("d2", 2, decision("skip", submissionId="s2"), valid=False),
        DecisionFact("d3", 3, decision("skip", submissionId="s1")),
        DecisionFact("d4", 4, decision("skip", supersedes="d9", submissionId="s4")),
        DecisionFact("d5", 5, decision("skip", supersedes="d5", submissionId="s5")),
        DecisionFact("d6", 6, decision("skip", itemId="item-2", submissionId="s6")),
        DecisionFact("d7", 7, decision("skip", supersedes="d6", submissionId="s7")),
    ]
    active = active_decisions([first, *later])
    assert active["item-1"].decision is first and active["item-1"].inactive == ()
    assert active["item-2"].decision.decision_id == "d6"
    assert active_decisions([]) == {}


def test_a_resubmitted_submission_id_returns_the_first_decision() -> None:
    first = DecisionFact("d1", 1, decision("tie", submissionId="s1"))
    again = DecisionFact("d2", 2, decision("skip", submissionId="s1"))
    other = DecisionFact("d3", 3, decision("skip", submissionId="s2"))
    assert first_submission([other, again, first], "s1") is first
    assert first_submission([other], "s1") is None
