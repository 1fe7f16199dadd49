"""Campaign standings: a Bradley–Terry fit over candidate agents from prefer outcomes, with
percentile-bootstrap intervals (docs/human-review.md, "Campaign quality")."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.quality import AgentStanding, Comparison, Standings, fit_standings
from reviewtrail.human_review.quality._bt_fit import Pairs, _log_posterior, pairs
from reviewtrail.human_review.quality._standings import (
    STANDINGS_MAX_ROUNDS,
    _percentile_interval,
    _quantile,
    _standings,
)

TRUE_STRENGTHS = {"ada": 1.2, "bix": 0.6, "cor": 0.0, "dov": -0.5, "eli": -1.3}  # mean 0, as fitted


def simulate(strengths: dict[str, float], count: int, rng: random.Random) -> list[Comparison]:
    """``count`` prefer outcomes of uniformly drawn pairs, each won with the Bradley–Terry
    probability of the agents' true log-strengths."""
    names = sorted(strengths)
    comparisons = []
    for _ in range(count):
        first, second = rng.sample(names, 2)
        won = rng.random() < 1 / (1 + math.exp(strengths[second] - strengths[first]))
        comparisons.append(Comparison(first, second) if won else Comparison(second, first))
    return comparisons


def scores(standings: Standings) -> dict[str, float | None]:
    return {a.agent: a.score for a in standings.agents}


def score(standings: Standings, agent: str) -> float:
    value = standings.agent(agent).score
    assert value is not None
    return value


def test_two_agents_recover_the_log_odds_of_their_record() -> None:
    comparisons = [Comparison("a", "b")] * 30 + [Comparison("b", "a")] * 10
    standings = fit_standings(comparisons, rounds=0, prior=1e-9)
    assert score(standings, "a") == pytest.approx(math.log(3) / 2, abs=1e-6)
    assert score(standings, "b") == pytest.approx(-math.log(3) / 2, abs=1e-6)


def test_a_balanced_cycle_gives_every_agent_the_same_score() -> None:
    cycle = [Comparison("a", "b"), Comparison("b", "c"), Comparison("c", "a")] * 5
    standings = fit_standings(cycle, rounds=0)
    assert all(abs(score(standings, agent)) < 1e-9 for agent in "abc")
    assert [a.rank for a in standings.agents] == [1, 1, 1]


@pytest.mark.slow
def test_simulated_decisions_recover_the_true_order_and_the_intervals_cover_the_true_strengths() -> None:
    true_order = sorted(TRUE_STRENGTHS, key=lambda name: -TRUE_STRENGTHS[name])
    covered = cases = 0
    for simulation in range(5):
        comparisons = simulate(TRUE_STRENGTHS, 3000, random.Random(simulation))
        standings = fit_standings(comparisons, rounds=400, seed=simulation)
        assert [a.agent for a in standings.agents] == true_order
        assert [a.rank for a in standings.agents] == [1, 2, 3, 4, 5]
        for agent in standings.agents:
            assert agent.score is not None and agent.low is not None and agent.high is not None
            assert agent.score == pytest.approx(TRUE_STRENGTHS[agent.agent], abs=0.25)
            cases += 1
            covered += agent.low <= TRUE_STRENGTHS[agent.agent] <= agent.high
    assert covered >= 0.8 * cases, f"the 95% intervals covered {covered} of {cases} true strengths"


def test_no_comparisons_list_the_named_agents_without_scores() -> None:
    standings = fit_standings([], agents=["b", "a"], ties=[("a", "c")])
    assert [a.agent for a in standings.agents] == ["a", "b", "c"]
    assert all(a.score is None and a.low is None and a.rank is None for a in standings.agents)
    assert standings.agent("a").ties == 1
    assert standings.agent("b").ties == 0
    assert (standings.comparisons, standings.ties) == (0, 1)
    assert standings.components == ()
    assert fit_standings([]).agents == ()


def test_an_agent_never_in_a_prefer_comparison_has_no_score() -> None:
    standings = fit_standings([Comparison("a", "b")], agents=["a", "b", "c"], ties=[("c", "a")], rounds=10)
    assert standings.agent("c") == AgentStanding("c", None, None, None, None, None, wins=0, losses=0, ties=1)
    assert standings.agent("a").score is not None
    assert [a.agent for a in standings.agents] == ["a", "b", "c"]


def test_a_comparison_of_an_agent_with_itself_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInputError) as caught:
        fit_standings([Comparison("a", "b"), Comparison("a", "a")])
    assert caught.value.field == "comparisons"
    assert "comparison 2" in str(caught.value)
    with pytest.raises(InvalidInputError) as caught:
        fit_standings([], ties=[("a", "a")])
    assert caught.value.field == "ties"
    with pytest.raises(InvalidInputError) as caught:
        fit_standings([Comparison("", "b")])
    assert caught.value.field == "comparisons"


@pytest.mark.parametrize(
    ("field", "value"), [("rounds", -1), ("prior", 0.0), ("prior", 1e-10), ("prior", math.inf), ("prior", math.nan)]
)
def test_bad_settings_are_refused_naming_the_field(field: str, value: float) -> None:
    with pytest.raises(InvalidInputError) as caught:
        fit_standings([Comparison("a", "b")], **{field: value})  # type: ignore[arg-type]
    assert caught.value.field == field


def test_disconnected_groups_are_reported_and_each_centred_on_zero() -> None:
    comparisons = [Comparison("a", "b")] * 3 + [Comparison("b", "a")] + [Comparison("c", "d")] * 2
    standings = fit_standings(comparisons, rounds=50)
    assert standings.components == (("a", "b"), ("c", "d"))
    assert score(standings, "a") + score(standings, "b") == pytest.approx(0, abs=1e-9)
    assert score(standings, "c") + score(standings, "d") == pytest.approx(0, abs=1e-9)
    assert all(math.isfinite(score(standings, agent)) for agent in "abcd")


def test_an_undefeated_agent_gets_a_finite_score_and_interval() -> None:
    standings = fit_standings([Comparison("a", "b")] * 50 + [Comparison("b", "c")] * 5, rounds=50)
    a = standings.agent("a")
    assert a.score is not None and a.low is not None and a.high is not None
    assert all(math.isfinite(v) for v in (a.score, a.low, a.high))
    assert a.rank == 1
    assert (a.wins, a.losses, a.comparisons) == (50, 0, 50)


@pytest.mark.parametrize("prior", [1e-9, 1e-3, 10.0])
def test_the_fit_converges_with_a_weak_prior_and_lopsided_counts(prior: float) -> None:
    comparisons = [Comparison("a", "b")] * 100_000 + [Comparison("c", "d")] + [Comparison("e", "f")] * 3
    comparisons += [Comparison("f", "e")]
    standings = fit_standings(comparisons, rounds=0, prior=prior)
    a, b, c, d, e, f = (score(standings, agent) for agent in "abcdef")
    assert a == pytest.approx(-b, abs=1e-9) and c == pytest.approx(-d, abs=1e-9) and e == pytest.approx(-f, abs=1e-9)
    assert a > c > 0
    # at the optimum each gradient vanishes: wins - expected wins = prior * score
    assert 100_000 / (1 + math.exp(a - b)) == pytest.approx(prior * a, rel=1e-6)
    assert 3 - 4 / (1 + math.exp(f - e)) == pytest.approx(prior * e, rel=1e-6, abs=1e-9)


def test_ties_are_counted_but_do_not_move_the_scores() -> None:
    comparisons = [Comparison("a", "b"), Comparison("b", "a"), Comparison("a", "b")]
    plain = fit_standings(comparisons, rounds=20)
    tied = fit_standings(comparisons, ties=[("a", "b")] * 7, rounds=20)
    assert scores(plain) == scores(tied)
    assert [(a.low, a.high) for a in plain.agents] == [(a.low, a.high) for a in tied.agents]
    assert tied.agent("a").ties == tied.agent("b").ties == 7
    assert tied.agent("a").comparisons == 3


def test_no_rounds_means_no_intervals() -> None:
    standings = fit_standings([Comparison("a", "b")] * 3, rounds=0)
    assert all(a.low is None and a.high is None and a.rank_by_interval is None for a in standings.agents)
    assert all(a.score is not None for a in standings.agents)


def test_rank_by_interval_counts_only_agents_clearly_above() -> None:
    standings = fit_standings(simulate(TRUE_STRENGTHS, 3000, random.Random(7)), rounds=100)
    for agent in standings.agents:
        assert agent.low is not None and agent.high is not None
        above = sum(1 for other in standings.agents if other.low is not None and other.low > agent.high)
        assert agent.rank_by_interval == 1 + above
    assert standings.agent("ada").rank_by_interval == 1
    assert standings.agent("eli").rank_by_interval == 5


def test_to_json_uses_camel_case() -> None:
    wire = fit_standings([Comparison("a", "b")] * 2 + [Comparison("b", "a")], ties=[("a", "b")], rounds=10).to_json()
    assert set(wire) == {
        "model",
        "scale",
        "level",
        "rounds",
        "seed",
        "prior",
        "comparisons",
        "ties",
        "selfIdentifyingLeftOut",
        "components",
        "agents",
    }
    assert wire["model"] == "bradley-terry"
    assert wire["selfIdentifyingLeftOut"] == {"comparisons": 0, "ties": 0}
    assert wire["components"] == [["a", "b"]]
    first = wire["agents"][0]
    assert set(first) == {
        "agent",
        "score",
        "interval",
        "rank",
        "rankByInterval",
        "wins",
        "losses",
        "ties",
        "comparisons",
    }
    assert first["agent"] == "a"
    assert set(first["interval"]) == {"low", "high"}


agent_ids = st.sampled_from(["a", "b", "c", "d", "e"])
comparison_lists = st.lists(
    st.tuples(agent_ids, agent_ids).filter(lambda pair: pair[0] != pair[1]).map(lambda pair: Comparison(*pair)),
    max_size=40,
)


@given(comparison_lists, st.permutations(["a", "b", "c", "d", "e"]))
def test_renaming_the_agents_renames_the_results(comparisons: list[Comparison], names: list[str]) -> None:
    rename = dict(zip("abcde", ["x" + name for name in names], strict=True))
    renamed = [Comparison(rename[c.winner], rename[c.loser]) for c in comparisons]
    before = fit_standings(comparisons, rounds=8, seed=3)
    after = fit_standings(renamed, rounds=8, seed=3)
    assert len(before.agents) == len(after.agents)
    for agent in before.agents:
        other = after.agent(rename[agent.agent])
        assert (other.wins, other.losses, other.rank) == (agent.wins, agent.losses, agent.rank)
        for mine, theirs in ((agent.score, other.score), (agent.low, other.low), (agent.high, other.high)):
            assert mine == pytest.approx(theirs, abs=1e-7)


@given(comparison_lists)
def test_reversing_every_outcome_negates_every_score(comparisons: list[Comparison]) -> None:
    forward = fit_standings(comparisons, rounds=0)
    backward = fit_standings([Comparison(c.loser, c.winner) for c in comparisons], rounds=0)
    for agent in forward.agents:
        assert agent.score is not None
        assert -agent.score == pytest.approx(score(backward, agent.agent), abs=1e-7)


@given(comparison_lists, agent_ids, agent_ids)
def test_one_more_win_never_lowers_the_winner_against_the_loser(
    comparisons: list[Comparison], winner: str, loser: str
) -> None:
    if winner == loser:
        return
    before = fit_standings(comparisons, rounds=0, agents=[winner, loser])
    after = fit_standings([*comparisons, Comparison(winner, loser)], rounds=0)
    gap_after = score(after, winner) - score(after, loser)
    first, second = before.agent(winner).score, before.agent(loser).score
    gap_before = (first or 0.0) - (second or 0.0)  # an agent not yet compared sits at the prior's centre
    assert gap_after >= gap_before - 1e-7
    assert gap_after > 0 or gap_before < 0


@given(comparison_lists)
def test_scores_are_finite_centred_and_counted(comparisons: list[Comparison]) -> None:
    standings = fit_standings(comparisons, rounds=5)
    assert sum(a.comparisons for a in standings.agents) == 2 * len(comparisons)
    assert sum(a.wins for a in standings.agents) == sum(a.losses for a in standings.agents) == len(comparisons)
    fitted = [a for a in standings.agents if a.score is not None]
    assert all(math.isfinite(a.score or 0.0) for a in fitted)
    assert sum(a.score or 0.0 for a in fitted) == pytest.approx(0.0, abs=1e-7)
    for agent in fitted:
        assert agent.low is not None and agent.high is not None
        assert math.isfinite(agent.low) and math.isfinite(agent.high) and agent.low <= agent.high
    for better, worse in itertools.pairwise(fitted):  # best first; equal scores share a rank
        assert (better.score or 0.0) >= (worse.score or 0.0) - 1e-9
        assert (better.rank or 0) <= (worse.rank or 0)


@given(comparison_lists, st.integers(min_value=0, max_value=2**32))
def test_a_fixed_seed_gives_the_same_standings(comparisons: list[Comparison], seed: int) -> None:
    assert fit_standings(comparisons, rounds=10, seed=seed) == fit_standings(comparisons, rounds=10, seed=seed)


def test_a_different_seed_draws_different_bootstrap_samples() -> None:
    comparisons = simulate(TRUE_STRENGTHS, 200, random.Random(1))
    one, two = fit_standings(comparisons, rounds=50, seed=1), fit_standings(comparisons, rounds=50, seed=2)
    assert scores(one) == scores(two)
    assert [(a.low, a.high) for a in one.agents] != [(a.low, a.high) for a in two.agents]


def test_self_identifying_comparisons_and_ties_are_left_out_and_counted() -> None:
    clean = [Comparison("a", "b")] * 3 + [Comparison("b", "a"), Comparison("b", "c")]
    flagged = [Comparison("b", "a", self_identifying=True)] * 5 + [Comparison("c", "d", self_identifying=True)]
    ties = [("a", "b"), ("a", "b", True), ("b", "c", False), ("c", "d", True)]
    standings = fit_standings(clean + flagged, ties=ties, agents=["d"], rounds=20, seed=3)
    alone = fit_standings(clean, ties=[("a", "b"), ("b", "c")], agents=["d"], rounds=20, seed=3)
    assert standings.agents == alone.agents
    assert standings.components == alone.components == (("a", "b", "c"),)
    assert (standings.comparisons, standings.ties, standings.left_out) == (5, 2, (6, 2))
    assert standings.agent("d").score is None and standings.agent("d").ties == 0
    assert standings.to_json()["selfIdentifyingLeftOut"] == {"comparisons": 6, "ties": 2}
    assert fit_standings(flagged, ties=ties[1:2], rounds=5).agents == ()


def test_a_self_identifying_comparison_of_an_agent_with_itself_is_still_refused() -> None:
    with pytest.raises(InvalidInputError) as err:
        fit_standings([Comparison("a", "a", self_identifying=True)])
    assert err.value.field == "comparisons"
    with pytest.raises(InvalidInputError) as err:
        fit_standings([], ties=[("a", "a", True)])
    assert err.value.field == "ties"


def test_the_log_posterior_known_answer() -> None:
    # agent 0 beat 1 three times and lost once; 2 beat 1 twice; scores 0.5, -0.5, 0.25; prior 0.2:
    # -0.2/2 * (0.25 + 0.25 + 0.0625) + 3 log s(1) + log s(-1) + 2 log s(0.75), s the logistic
    observed = pairs(3, Counter({0 * 3 + 1: 3, 1 * 3 + 0: 1, 2 * 3 + 1: 2}))
    assert observed == Pairs(first=[0, 1], second=[1, 2], first_wins=[3, 0], met=[4, 2])
    assert _log_posterior([0.5, -0.5, 0.25], observed, 0.2) == pytest.approx(-3.083038762302691, abs=1e-12)


def test_settings_and_pairs_are_refused_saying_why() -> None:
    def refused(comparisons: list[Comparison], **kwargs: Any) -> str:
        with pytest.raises(InvalidInputError) as err:
            fit_standings(comparisons, **kwargs)
        return str(err.value)

    assert refused([], rounds=-1) == "rounds: -1 bootstrap rounds: must be from 0 to 10,000"
    assert refused([], rounds=10_001) == "rounds: 10001 bootstrap rounds: must be from 0 to 10,000"
    assert refused([], prior=0.0) == "prior: 0.0: the prior precision must be finite and at least 1e-9"
    assert refused([Comparison("a", "")]) == "comparisons: comparison 1 has an empty agent id"
    assert refused([], ties=[("a", "b"), ("c", "c")]) == "ties: tie 2 compares agent c with itself"
    most = fit_standings([Comparison("a", "b"), Comparison("b", "a")], rounds=STANDINGS_MAX_ROUNDS)
    assert most.rounds == STANDINGS_MAX_ROUNDS


def test_the_settings_used_are_reported() -> None:
    made = fit_standings([Comparison("a", "b")], rounds=7, prior=0.5)
    assert (made.rounds, made.seed, made.prior) == (7, 0, 0.5)
    assert made.agents == fit_standings([Comparison("a", "b")], rounds=7, prior=0.5, seed=0).agents
    wire = made.to_json()
    assert wire["scale"] == "natural log-strength; scores of each connected group sum to zero"
    assert (wire["rounds"], wire["seed"], wire["prior"]) == (7, 0, 0.5)


def test_an_unscored_agent_has_no_interval_and_an_unknown_agent_is_named() -> None:
    made = fit_standings([Comparison("a", "b")], agents=["c"], rounds=5)
    assert made.agent("c").to_json()["interval"] is None
    with pytest.raises(KeyError) as err:
        made.agent("zed")
    assert err.value.args == ("zed",)


def test_ranks_count_the_agents_above() -> None:
    made = fit_standings([Comparison("a", "b")] * 3 + [Comparison("b", "c")] * 3 + [Comparison("a", "c")] * 3, rounds=0)
    assert [(s.agent, s.rank) for s in made.agents] == [("a", 1), ("b", 2), ("c", 3)]


def test_rank_by_interval_counts_only_intervals_wholly_above() -> None:
    scored = {"a": (1.0, (0.5, 1.5)), "b": (0.0, (-0.5, 0.8)), "c": (-1.0, (-2.0, 0.5))}
    ranked = {s.agent: s.rank_by_interval for s in _standings([], [], set(), scored)}
    # c's interval ends at 0.5, where a's begins: touching is not wholly above
    assert ranked == {"a": 1, "b": 1, "c": 1}
    scored["a"] = (1.0, (0.9, 1.5))
    assert {s.agent: s.rank_by_interval for s in _standings([], [], set(), scored)} == {"a": 1, "b": 2, "c": 2}


def test_the_percentile_interval_interpolates_between_order_statistics() -> None:
    values = [float(v) for v in range(101)]
    assert _percentile_interval(values) == pytest.approx((2.5, 97.5))
    assert _quantile([0.0, 10.0, 20.0, 30.0], 0.5) == 15.0
    assert _quantile([0.0, 10.0, 20.0, 30.0], 0.9) == pytest.approx(27.0)
    assert _quantile([0.0, 10.0, 20.0, 30.0], 1.0) == 30.0
    assert _quantile([0.0, 10.0, 20.0, 30.0], 0.0) == 0.0
