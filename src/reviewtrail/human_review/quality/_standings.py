"""Campaign standings: a Bradley–Terry fit over candidate agents from the outcomes of active
``prefer`` decisions, with percentile-bootstrap intervals, as Chatbot Arena reports them
(docs/human-review.md, "Campaign quality").

Model: agent ``i`` is preferred over agent ``j`` with probability ``1 / (1 + exp(s_j - s_i))``,
where ``s`` is the agent's log-strength (natural log; 400 / ln 10 times it is an Elo-style gap).

Estimator: the maximum a posteriori fit under an independent Gaussian prior ``N(0, 1 / prior)`` on
each score (an L2 penalty ``prior / 2 * sum(s**2)``, default ``prior = 0.1``, at least 1e-9). The penalised
log-likelihood is strictly concave, so the fit is unique and finite even for an undefeated agent
or a comparison graph in several pieces. It is found by Newton's method with step halving from all
scores 0 (bootstrap fits start from the full fit), stopping when no score moves by more than
``TOLERANCE`` (1e-9) or after ``MAX_ITERATIONS`` (100) steps.

Anchoring: at the optimum the scores of each connected group of agents sum to zero (the gradient
of the likelihood sums to zero within a group, leaving only the prior), so scores have mean 0, and
scores of agents in different groups (``Standings.components``) are not comparable.

Self-identifying items (a candidate's text names a candidate's identity, as Chatbot Arena drops
votes that leak a model's identity) are left out of the fit and the tie counts, and counted.

Evaluation evidence for the campaign owner only: standings never change any decision's
eligibility and are never shown on a reviewer's surface.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.quality._bt_fit import Pairs, bootstrap_scores, components, fit_scores, pairs

__all__ = [
    "STANDINGS_MAX_ROUNDS",
    "STANDINGS_PRIOR",
    "STANDINGS_ROUNDS",
    "AgentStanding",
    "Comparison",
    "Standings",
    "fit_standings",
]

#: The most bootstrap rounds one fit takes (each round refits every agent).
STANDINGS_MAX_ROUNDS = 10_000
STANDINGS_ROUNDS = 1000
STANDINGS_PRIOR = 0.1
_LEVEL = 0.95
_SAME = 1e-9  # scores closer than this share a rank
_WEAKEST_PRIOR = 1e-9  # weaker priors let an undefeated agent's score run past where Newton reaches it


@dataclass(frozen=True)
class Comparison:
    """One active ``prefer`` decision as an outcome between two candidate agents (agent ids);
    ``self_identifying`` when the item is (such a comparison is left out of the fit)."""

    winner: str
    loser: str
    self_identifying: bool = False


@dataclass(frozen=True)
class AgentStanding:
    """One agent's standing. ``score`` (log-strength), its bootstrap 95% interval ``low``..``high``
    and ``rank`` are None for an agent that never appears in a prefer comparison. ``rank`` is 1 +
    the number of agents with a higher score; ``rank_by_interval`` is 1 + the number of agents whose
    interval lies wholly above this agent's (Chatbot Arena's conservative rank)."""

    agent: str
    score: float | None
    low: float | None
    high: float | None
    rank: int | None
    rank_by_interval: int | None
    wins: int
    losses: int
    ties: int

    @property
    def comparisons(self) -> int:
        """Prefer comparisons the agent took part in (ties are counted apart)."""
        return self.wins + self.losses

    def to_json(self) -> dict[str, object]:
        interval = None if self.low is None else {"low": self.low, "high": self.high}
        return {
            "agent": self.agent,
            "score": self.score,
            "interval": interval,
            "rank": self.rank,
            "rankByInterval": self.rank_by_interval,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "comparisons": self.comparisons,
        }


@dataclass(frozen=True)
class Standings:
    """Every agent's standing, best score first, then the agents without a score by id;
    ``left_out``: the comparisons and ties of self-identifying items, not counted."""

    agents: tuple[AgentStanding, ...]
    comparisons: int
    ties: int
    rounds: int
    seed: int
    prior: float
    components: tuple[tuple[str, ...], ...]
    left_out: tuple[int, int] = (0, 0)

    def agent(self, agent: str) -> AgentStanding:
        for standing in self.agents:
            if standing.agent == agent:
                return standing
        raise KeyError(agent)

    def to_json(self) -> dict[str, object]:
        return {
            "model": "bradley-terry",
            "scale": "natural log-strength; scores of each connected group sum to zero",
            "level": _LEVEL,
            "rounds": self.rounds,
            "seed": self.seed,
            "prior": self.prior,
            "comparisons": self.comparisons,
            "ties": self.ties,
            "selfIdentifyingLeftOut": {"comparisons": self.left_out[0], "ties": self.left_out[1]},
            "components": [list(group) for group in self.components],
            "agents": [standing.to_json() for standing in self.agents],
        }


def fit_standings(
    comparisons: Sequence[Comparison],
    *,
    ties: Iterable[tuple[str, str] | tuple[str, str, bool]] = (),
    agents: Iterable[str] = (),
    rounds: int = STANDINGS_ROUNDS,
    seed: int = 0,
    prior: float = STANDINGS_PRIOR,
) -> Standings:
    """Bradley–Terry standings of the agents in ``comparisons`` (one per active ``prefer``
    decision). ``ties`` (pairs of agent ids) are counted per agent but not fitted; ``agents`` names
    agents to list even without comparisons. The 95% intervals are percentile-bootstrap intervals
    over ``rounds`` resamplings of the comparisons drawn by ``random.Random(seed)``, so the same
    input and seed give the same standings. A self-identifying comparison, or a tie whose third
    element is true, is left out (and counted in ``left_out``). Evaluation evidence only: never
    changes eligibility."""
    _check_settings(rounds, prior)
    _check_pairs(((c.winner, c.loser) for c in comparisons), "comparisons", "comparison")
    given_ties = list(ties)
    _check_pairs(((t[0], t[1]) for t in given_ties), "ties", "tie")
    tie_list = [(t[0], t[1]) for t in given_ties if not any(t[2:])]
    kept = [c for c in comparisons if not c.self_identifying]
    left_out = (len(comparisons) - len(kept), len(given_ties) - len(tie_list))
    comparisons = kept
    fitted = sorted({c.winner for c in comparisons} | {c.loser for c in comparisons})
    index = {agent: i for i, agent in enumerate(fitted)}
    k = len(fitted)
    cells = [index[c.winner] * k + index[c.loser] for c in comparisons]
    observed: Pairs = pairs(k, Counter(cells))
    estimate = fit_scores(k, observed, prior, [0.0] * k)
    rng = random.Random(seed)  # noqa: S311 - a reproducible bootstrap, not security
    samples = bootstrap_scores(k, cells, prior, estimate, rounds, rng)
    intervals = [_percentile_interval(column) for column in samples] if rounds else [None] * k
    scored = {agent: (estimate[i], intervals[i]) for agent, i in index.items()}
    groups = tuple(tuple(fitted[i] for i in group) for group in components(k, observed))
    standings = _standings(comparisons, tie_list, set(agents), scored)
    return Standings(standings, len(comparisons), len(tie_list), rounds, seed, prior, groups, left_out)


def _check_settings(rounds: int, prior: float) -> None:
    if not 0 <= rounds <= STANDINGS_MAX_ROUNDS:
        raise InvalidInputError(
            f"{rounds} bootstrap rounds: must be from 0 to {STANDINGS_MAX_ROUNDS:,}", field="rounds"
        )
    if not (math.isfinite(prior) and prior >= _WEAKEST_PRIOR):
        raise InvalidInputError(f"{prior}: the prior precision must be finite and at least 1e-9", field="prior")


def _check_pairs(pairs_: Iterable[tuple[str, str]], field: str, noun: str) -> None:
    for number, (first, second) in enumerate(pairs_, start=1):
        if not first or not second:
            raise InvalidInputError(f"{noun} {number} has an empty agent id", field=field)
        if first == second:
            raise InvalidInputError(f"{noun} {number} compares agent {first} with itself", field=field)


def _percentile_interval(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    tail = (1 - _LEVEL) / 2
    return _quantile(ordered, tail), _quantile(ordered, 1 - tail)


def _quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default "linear" method)."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _standings(
    comparisons: Sequence[Comparison],
    ties: list[tuple[str, str]],
    named: set[str],
    scored: dict[str, tuple[float, tuple[float, float] | None]],
) -> tuple[AgentStanding, ...]:
    wins = Counter(c.winner for c in comparisons)
    losses = Counter(c.loser for c in comparisons)
    tied = Counter(agent for pair in ties for agent in pair)
    everyone = named | set(scored) | set(tied)
    result = []
    for agent in everyone:
        score, interval = scored.get(agent, (None, None))
        rank = by_interval = None
        if score is not None:
            rank = 1 + sum(1 for other, _ in scored.values() if other > score + _SAME)
        if interval is not None:
            by_interval = 1 + sum(1 for _, other in scored.values() if other is not None and other[0] > interval[1])
        low, high = interval if interval is not None else (None, None)
        result.append(
            AgentStanding(agent, score, low, high, rank, by_interval, wins[agent], losses[agent], tied[agent])
        )
    result.sort(key=lambda s: (s.score is None, s.rank or 0, s.agent))
    return tuple(result)
