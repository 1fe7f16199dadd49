"""Position bias: the share of prefer decisions that chose the first-displayed candidate, with a
95% Wilson score interval, overall and per reviewer (docs/human-review.md, "Campaign quality")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.quality import BiasShare, position_bias, wilson_interval


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [  # Newcombe (1998), "Two-sided confidence intervals for the single proportion", method 3
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_matches_published_values(successes: int, trials: int, low: float, high: float) -> None:
    interval = wilson_interval(successes, trials)
    assert interval is not None
    assert interval == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_no_decisions_have_no_share_and_are_not_flagged() -> None:
    bias = position_bias([])
    assert bias.overall == BiasShare(decisions=0, chose_first=0, share=None, low=None, high=None, flagged=False)
    assert bias.reviewers == {}
    assert wilson_interval(0, 0) is None


def test_a_reviewer_who_mostly_picks_the_first_candidate_is_flagged_and_a_balanced_one_is_not() -> None:
    choices = [("ana", i < 80) for i in range(100)] + [("bo", i % 2 == 0) for i in range(100)]
    bias = position_bias(choices)
    assert bias.reviewers["ana"].share == pytest.approx(0.8)
    assert bias.reviewers["ana"].flagged
    assert bias.reviewers["bo"].share == pytest.approx(0.5)
    assert not bias.reviewers["bo"].flagged
    assert (bias.overall.decisions, bias.overall.chose_first) == (200, 130)
    assert bias.overall.flagged  # 0.65 over 200 decisions: the interval is about (0.58, 0.71)


def test_a_reviewer_who_mostly_picks_the_second_candidate_is_flagged_too() -> None:
    bias = position_bias([("cy", i < 20) for i in range(100)])
    assert bias.overall.high is not None and bias.overall.high < 0.5
    assert bias.overall.flagged


def test_few_decisions_are_not_flagged_even_when_all_chose_first() -> None:
    bias = position_bias([("ana", True)] * 3)
    assert bias.overall.share == 1.0
    assert not bias.overall.flagged  # 3 of 3: the interval reaches down to about 0.44


def test_an_empty_reviewer_id_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInputError) as caught:
        position_bias([("ana", True), ("", False)])
    assert caught.value.field == "reviewer"
    assert str(caught.value) == "reviewer: a prefer decision has an empty reviewer id"


def test_bad_counts_are_refused() -> None:
    for successes, trials in ((3, 2), (-1, 2), (0, -1)):
        with pytest.raises(InvalidInputError) as caught:
            wilson_interval(successes, trials)
        assert str(caught.value) == f"trials: {successes} successes out of {trials} trials is not a count"
        assert caught.value.field == "trials"


def test_to_json_uses_camel_case_and_lists_reviewers_in_order() -> None:
    wire = position_bias([("bo", True), ("ana", False), ("ana", True)]).to_json()
    assert set(wire) == {"method", "level", "selfIdentifyingLeftOut", "overall", "reviewers"}
    assert wire["selfIdentifyingLeftOut"] == 0
    assert wire["method"] == "wilson"
    assert wire["level"] == 0.95
    assert set(wire["overall"]) == {"decisions", "choseFirst", "share", "interval", "flagged"}
    assert [r["reviewer"] for r in wire["reviewers"]] == ["ana", "bo"]
    assert wire["reviewers"][0]["choseFirst"] == 1
    assert set(wire["reviewers"][0]["interval"]) == {"low", "high"}
    assert position_bias([]).to_json()["overall"]["interval"] is None


@given(st.integers(min_value=1, max_value=100_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_contains_the_share_and_lies_in_the_unit_interval(counts: tuple[int, int]) -> None:
    successes, trials = counts
    interval = wilson_interval(successes, trials)
    assert interval is not None
    low, high = interval
    assert 0.0 <= low <= successes / trials <= high <= 1.0
    assert low < high


choice_lists = st.lists(st.tuples(st.sampled_from(["ana", "bo", "cy"]), st.booleans()), max_size=300)


@given(choice_lists)
def test_flagged_iff_the_interval_excludes_one_half(choices: list[tuple[str, bool]]) -> None:
    bias = position_bias(choices)
    for share in [bias.overall, *bias.reviewers.values()]:
        assert share.decisions > 0 or share.share is None
        if share.low is None or share.high is None:
            assert not share.flagged
        else:
            assert share.flagged == (share.high < 0.5 or share.low > 0.5)
            assert share.low <= (share.share or 0.0) <= share.high


@given(choice_lists)
def test_overall_counts_are_the_sum_of_the_reviewers(choices: list[tuple[str, bool]]) -> None:
    bias = position_bias(choices)
    assert bias.overall.decisions == len(choices) == sum(r.decisions for r in bias.reviewers.values())
    assert bias.overall.chose_first == sum(first for _, first in choices)
    assert sum(r.chose_first for r in bias.reviewers.values()) == bias.overall.chose_first
    assert set(bias.reviewers) == {reviewer for reviewer, _ in choices}


def test_decisions_on_self_identifying_items_are_left_out_and_counted() -> None:
    choices = [("ana", True), ("ana", False, False), ("bo", True, True), ("ana", True, True), ("ana", True)]
    bias = position_bias(choices)
    alone = position_bias([("ana", True), ("ana", False), ("ana", True)])
    assert (bias.overall, bias.reviewers) == (alone.overall, alone.reviewers)
    assert list(bias.reviewers) == ["ana"]
    assert bias.self_identifying == 2 and alone.self_identifying == 0
    assert bias.to_json()["selfIdentifyingLeftOut"] == 2
    with pytest.raises(InvalidInputError):
        position_bias([("", True, True)])
