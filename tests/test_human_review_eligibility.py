"""Privacy join and the three facts of a decision: exists, quality-eligible, externally eligible
(docs/human-review.md, "Eligibility")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review import (
    DISPOSITIONS,
    PRIVACY_ORDER,
    ActiveDecision,
    CampaignSettings,
    ChainPrivacy,
    DecisionFact,
    ReviewDecision,
    ReviewPrompt,
    decision_exists,
    externally_eligible,
    privacy_join,
    quality_eligible,
    training_enabled,
)

levels = st.sampled_from(PRIVACY_ORDER)
PUBLIC = ChainPrivacy(*(["public-source"] * 7))
FOR_DISPOSITION: dict[str, dict[str, Any]] = {
    "prefer": {"preferred": "run-b", "strength": "strong"},
    "correct": {"replacement": "A better answer."},
}


def decision(disposition: str, use_for_training: bool = True) -> ReviewDecision:
    wire: dict[str, Any] = {"itemId": "item-1", "disposition": disposition, "submissionId": "s-1"}
    wire.update(FOR_DISPOSITION.get(disposition, {}), useForTraining=use_for_training)
    return ReviewDecision.model_validate(wire)


def prompt(eligible: bool) -> ReviewPrompt:
    return ReviewPrompt.model_validate(
        {
            "campaign": {"id": "c1", "version": 1, "label": "Canary"},
            "scenarioFamily": "refusals",
            "prompt": "Explain.",
            "criterion": {"id": "helpful", "version": 1, "label": "Helpful", "instructions": "Prefer the clearer."},
            "candidateAgentIds": ["agent-a", "agent-b"],
            "externalExportEligible": eligible,
        }
    )


@given(st.lists(levels, min_size=1, max_size=10), levels)
def test_the_strictest_level_wins_and_nothing_declassifies(chain: list[str], extra: str) -> None:
    joined = privacy_join(chain)
    assert PRIVACY_ORDER.index(joined) == max(PRIVACY_ORDER.index(level) for level in chain)
    assert PRIVACY_ORDER.index(privacy_join([*chain, extra])) >= PRIVACY_ORDER.index(joined)
    assert privacy_join([*chain, "sensitive"]) == "sensitive"
    assert privacy_join(reversed(chain)) == joined


@pytest.mark.parametrize("chain", [[], ["public"], ["public-source", "secret"]])
def test_an_empty_or_unknown_join_is_refused_not_taken_as_public(chain: list[str]) -> None:
    with pytest.raises(InvalidInputError) as err:
        privacy_join(chain)
    assert err.value.field == "privacy"


def test_a_decision_exists_when_its_item_has_an_active_one() -> None:
    assert decision_exists(None) == (False, "no decision")
    fact = DecisionFact("d1", 1, decision("skip"))
    exists, reason = decision_exists(ActiveDecision(fact, ()))
    assert exists and "d1" in reason and "skip" in reason


@pytest.mark.parametrize("disposition", DISPOSITIONS)
def test_quality_eligibility_needs_prefer_or_correct_the_flag_and_training_enabled(disposition: str) -> None:
    trainable = disposition in ("prefer", "correct")
    assert quality_eligible(decision(disposition), training_enabled=True).eligible is trainable
    flag_off = quality_eligible(decision(disposition, use_for_training=False), training_enabled=True)
    assert not flag_off.eligible
    canary = quality_eligible(decision(disposition), training_enabled=False)
    assert not canary.eligible
    if trainable:
        assert "useForTraining" in flag_off.reason and "evaluation-only" in canary.reason
    else:
        assert "never a training example" in canary.reason


@given(
    disposition=st.sampled_from(DISPOSITIONS),
    use_for_training=st.booleans(),
    training_enabled=st.booleans(),
    preauthorized=st.booleans(),
    chain=st.lists(levels, min_size=7, max_size=7),
)
def test_external_eligibility_is_exactly_the_conjunction_of_its_conditions(
    disposition: str, use_for_training: bool, training_enabled: bool, preauthorized: bool, chain: list[Any]
) -> None:
    privacy = ChainPrivacy(*chain)
    eligible, reason = externally_eligible(
        decision(disposition, use_for_training),
        training_enabled=training_enabled,
        prompt=prompt(preauthorized),
        privacy=privacy,
    )
    public = all(level == "public-source" for level in chain)
    trainable = disposition in ("prefer", "correct")
    assert eligible is (trainable and use_for_training and training_enabled and preauthorized and public)
    if trainable and use_for_training and training_enabled and preauthorized and not public:
        assert privacy.join() in reason and all(part in reason for part in privacy.not_public())


@pytest.mark.parametrize("part", ["prompt", "item", "run_a", "run_b", "output_a", "output_b", "decision"])
@pytest.mark.parametrize("level", ["private", "sensitive"])
def test_one_stricter_record_anywhere_in_the_chain_keeps_the_example_in(part: str, level: str) -> None:
    privacy = ChainPrivacy(**{**PUBLIC.__dict__, part: level})
    eligible, reason = externally_eligible(
        decision("prefer"), training_enabled=True, prompt=prompt(True), privacy=privacy
    )
    assert not eligible and part in reason and level in reason
    assert externally_eligible(decision("correct"), training_enabled=True, prompt=prompt(True), privacy=PUBLIC).eligible


def test_a_prompt_not_preauthorized_is_never_exported() -> None:
    result = externally_eligible(decision("prefer"), training_enabled=True, prompt=prompt(False), privacy=PUBLIC)
    assert result == (False, "the prompt is not preauthorized for external export")


def test_training_is_enabled_only_by_the_campaigns_latest_settings() -> None:
    on = CampaignSettings(campaign_id="c1", version=1, training_enabled=True)
    off = CampaignSettings(campaign_id="c1", version=1)
    assert training_enabled([], "c1", 1) is False
    assert training_enabled([(3, on)], "c1", 1) is True
    assert training_enabled([(5, off), (3, on)], "c1", 1) is False
    assert training_enabled([(3, off), (5, on)], "c1", 1) is True
    assert training_enabled([(5, on)], "c1", 2) is False
    assert training_enabled([(5, on.model_copy(update={"campaign_id": "c2"}))], "c1", 1) is False


def test_the_chain_join_takes_every_record_of_the_chain() -> None:
    from dataclasses import fields

    from reviewtrail.human_review import ChainPrivacy

    names = [f.name for f in fields(ChainPrivacy)]
    for name in names:
        levels = dict.fromkeys(names, "public-source")
        levels[name] = "sensitive"
        assert ChainPrivacy(**levels).join() == "sensitive", name  # type: ignore[arg-type]
