"""Privacy join and the three facts of a decision: exists, quality-eligible, externally eligible
(docs/human-review.md, "Eligibility")."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail._struct import parse
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.records import DISPOSITIONS, PRIVACY_ORDER, CampaignSettings, ReviewDecision, ReviewPrompt
from reviewtrail.human_review.rules import (
    ActiveDecision,
    ChainPrivacy,
    DecisionFact,
    decision_exists,
    externally_eligible,
    privacy_join,
    quality_eligible,
    training_enabled,
)
from reviewtrail.human_review.rules._eligibility import TRAINING_OFF_WHEN_DECIDED

levels = st.sampled_from(PRIVACY_ORDER)
PUBLIC = ChainPrivacy(*(["public-source"] * 7))
FOR_DISPOSITION: dict[str, dict[str, Any]] = {
    "prefer": {"preferred": "run-b", "strength": "strong"},
    "correct": {"replacement": "A better answer."},
}


def decision(disposition: str, use_for_training: bool = True) -> ReviewDecision:
    wire: dict[str, Any] = {"itemId": "item-1", "disposition": disposition, "submissionId": "s-1"}
    wire.update(FOR_DISPOSITION.get(disposition, {}), useForTraining=use_for_training)
    return parse(ReviewDecision, wire, field="payload")


def prompt(eligible: bool) -> ReviewPrompt:
    return parse(
        ReviewPrompt,
        {
            "campaign": {"id": "c1", "version": 1, "label": "Canary"},
            "scenarioFamily": "refusals",
            "prompt": "Explain.",
            "criterion": {"id": "helpful", "version": 1, "label": "Helpful", "instructions": "Prefer the clearer."},
            "candidateAgentIds": ["agent-a", "agent-b"],
            "externalExportEligible": eligible,
        },
        field="payload",
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
    assert (
        quality_eligible(decision(disposition), training_enabled=True, enabled_when_decided=True).eligible is trainable
    )
    flag_off = quality_eligible(
        decision(disposition, use_for_training=False), training_enabled=True, enabled_when_decided=True
    )
    assert not flag_off.eligible
    canary = quality_eligible(decision(disposition), training_enabled=False, enabled_when_decided=True)
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
        enabled_when_decided=True,
    )
    public = all(level == "public-source" for level in chain)
    trainable = disposition in ("prefer", "correct")
    assert eligible is (trainable and use_for_training and training_enabled and preauthorized and public)
    if trainable and use_for_training and training_enabled and preauthorized and not public:
        assert privacy.join() in reason and all(part in reason for part in privacy.not_public())


@pytest.mark.parametrize("part", ["prompt", "item", "run_a", "run_b", "output_a", "output_b", "decision"])
@pytest.mark.parametrize("level", ["private", "sensitive"])
def test_one_stricter_record_anywhere_in_the_chain_keeps_the_example_in(part: str, level: str) -> None:
    privacy = msgspec.structs.replace(PUBLIC, **{part: level})
    eligible, reason = externally_eligible(
        decision("prefer"), training_enabled=True, prompt=prompt(True), privacy=privacy, enabled_when_decided=True
    )
    assert not eligible and part in reason and level in reason
    assert externally_eligible(
        decision("correct"), training_enabled=True, prompt=prompt(True), privacy=PUBLIC, enabled_when_decided=True
    ).eligible


def test_a_prompt_not_preauthorized_is_never_exported() -> None:
    result = externally_eligible(
        decision("prefer"), training_enabled=True, prompt=prompt(False), privacy=PUBLIC, enabled_when_decided=True
    )
    assert result == (False, "the prompt is not preauthorized for external export")


def test_training_is_enabled_only_by_the_campaigns_latest_settings() -> None:
    on = CampaignSettings(campaign_id="c1", version=1, training_enabled=True)
    off = CampaignSettings(campaign_id="c1", version=1)
    assert training_enabled([], "c1", 1) is False
    assert training_enabled([(3, on)], "c1", 1) is True
    assert training_enabled([(5, off), (3, on)], "c1", 1) is False
    assert training_enabled([(3, off), (5, on)], "c1", 1) is True
    assert training_enabled([(5, on)], "c1", 2) is False
    assert training_enabled([(5, msgspec.structs.replace(on, **{"campaign_id": "c2"}))], "c1", 1) is False


def test_the_chain_join_takes_every_record_of_the_chain() -> None:
    from reviewtrail.human_review.rules import ChainPrivacy

    names = list(ChainPrivacy.__struct_fields__)
    for name in names:
        levels = dict.fromkeys(names, "public-source")
        levels[name] = "sensitive"
        assert ChainPrivacy(**levels).join() == "sensitive", name  # type: ignore[arg-type]


@given(
    disposition=st.sampled_from(DISPOSITIONS),
    use_for_training=st.booleans(),
    now=st.booleans(),
    when_decided=st.booleans(),
)
def test_a_decision_recorded_while_training_was_disabled_stays_evaluation_only(
    disposition: str, use_for_training: bool, now: bool, when_decided: bool
) -> None:
    """Eligibility may only get stricter after a decision: training must be enabled now and by the
    settings in force when it was recorded; the canary's own reason and code say which failed."""
    fact = quality_eligible(
        decision(disposition, use_for_training), training_enabled=now, enabled_when_decided=when_decided
    )
    trainable = disposition in ("prefer", "correct") and use_for_training
    assert fact.eligible is (trainable and now and when_decided)
    canary = trainable and now and not when_decided
    assert (fact.code == TRAINING_OFF_WHEN_DECIDED) is canary
    assert fact.code in ("eligibility", TRAINING_OFF_WHEN_DECIDED)
    if canary:
        assert "when the decision was recorded" in fact.reason and "evaluation-only" in fact.reason
    external = externally_eligible(
        decision(disposition, use_for_training),
        training_enabled=now,
        prompt=prompt(True),
        privacy=PUBLIC,
        enabled_when_decided=when_decided,
    )
    assert external == fact if not fact.eligible else external.eligible


def test_the_settings_in_force_when_a_record_was_appended_are_those_before_it() -> None:
    on = CampaignSettings(campaign_id="c1", version=1, training_enabled=True)
    off = CampaignSettings(campaign_id="c1", version=1)
    history = [(3, off), (7, on), (9, off)]
    assert [training_enabled(history, "c1", 1, before=seq) for seq in (1, 3, 4, 7, 8, 9, 10)] == [
        False,
        False,
        False,
        False,
        True,
        True,
        False,
    ]
    assert training_enabled(history, "c1", 1, before=None) is False
    assert training_enabled([(2, on)], "c1", 2, before=5) is False


def test_an_eligibility_code_is_eligibility_unless_the_canary_rule_failed() -> None:
    assert quality_eligible(decision("prefer"), training_enabled=False, enabled_when_decided=True).code == "eligibility"
    assert quality_eligible(decision("prefer"), training_enabled=True, enabled_when_decided=True).code == "eligibility"
    off = quality_eligible(decision("prefer"), training_enabled=True, enabled_when_decided=False)
    assert off.code == TRAINING_OFF_WHEN_DECIDED == "training-off-when-decided"
    assert off == (False, off.reason)  # still a two-field fact


def test_each_fact_says_why_in_its_own_words() -> None:
    good = decision("prefer")
    assert quality_eligible(good, training_enabled=True, enabled_when_decided=True) == (
        True,
        "a prefer marked for training in a training-enabled campaign",
    )
    assert quality_eligible(decision("tie"), training_enabled=True, enabled_when_decided=True) == (
        False,
        "a tie decision is never a training example",
    )
    assert quality_eligible(
        decision("correct", use_for_training=False), training_enabled=True, enabled_when_decided=True
    ) == (
        False,
        "the decision is not marked for training (useForTraining is false)",
    )
    assert quality_eligible(good, training_enabled=False, enabled_when_decided=True) == (
        False,
        "training is disabled for the campaign: the decision is evaluation-only",
    )
    assert externally_eligible(
        good, training_enabled=True, prompt=prompt(True), privacy=PUBLIC, enabled_when_decided=True
    ) == (
        True,
        "preauthorized prompt and every record public-source",
    )
    mixed = msgspec.structs.replace(PUBLIC, item="private", run_b="sensitive")
    assert mixed.not_public() == ["item", "run_b"]
    assert externally_eligible(
        good, training_enabled=True, prompt=prompt(True), privacy=mixed, enabled_when_decided=True
    ) == (
        False,
        "the privacy join is sensitive (item, run_b not public-source)",
    )
    # not quality-eligible is never externally eligible, and says the quality reason
    assert externally_eligible(
        good, training_enabled=False, prompt=prompt(True), privacy=PUBLIC, enabled_when_decided=True
    ) == (quality_eligible(good, training_enabled=False, enabled_when_decided=True))


@pytest.mark.parametrize(
    ("chain", "message"),
    [
        ([], "privacy: no privacy level to join"),
        (["public-source", "public"], "privacy: 'public' is not a privacy level"),
    ],
)
def test_a_join_that_cannot_be_made_says_why(chain: list[str], message: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        privacy_join(chain)
    assert str(err.value) == message
