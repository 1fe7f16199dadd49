"""The numeric core of campaign standings: a penalised Bradley–Terry fit by Newton's method and its
bootstrap, over agents numbered ``0..k-1`` (docs/human-review.md, "Campaign quality").

Pure standard library: with at most 16 candidate agents the Newton system is tiny, so a bootstrap
round costs one resampling of the comparisons plus a few Newton steps.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["MAX_ITERATIONS", "TOLERANCE", "Pairs", "bootstrap_scores", "components", "fit_scores", "pairs"]

TOLERANCE = 1e-9
"""Newton stops once no score moves by more than this."""
MAX_ITERATIONS = 100
"""Newton stops after this many steps at the latest (it converges in well under ten)."""


@dataclass(frozen=True)
class Pairs:
    """Outcomes aggregated per unordered pair ``first < second``: how often ``first`` won and how
    often the two met."""

    first: list[int]
    second: list[int]
    first_wins: list[int]
    met: list[int]


def pairs(k: int, cells: Mapping[int, int]) -> Pairs:
    """Aggregate outcome counts keyed by ``winner * k + loser``."""
    won: dict[tuple[int, int], list[int]] = {}
    for cell, count in cells.items():
        winner, loser = divmod(cell, k)
        key = (winner, loser) if winner < loser else (loser, winner)
        tally = won.setdefault(key, [0, 0])
        tally[0 if winner < loser else 1] += count
    ordered = sorted(won)
    return Pairs(
        first=[a for a, _ in ordered],
        second=[b for _, b in ordered],
        first_wins=[won[key][0] for key in ordered],
        met=[won[key][0] + won[key][1] for key in ordered],
    )


def components(k: int, observed: Pairs) -> list[list[int]]:
    """Groups of agents connected by comparisons, each sorted, ordered by their first member."""
    parent = list(range(k))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(observed.first, observed.second, strict=True):
        parent[root(a)] = root(b)
    groups: dict[int, list[int]] = {}
    for i in range(k):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values())


def _log_sigmoid(x: float) -> float:
    """``log(1 / (1 + e^-x))`` without overflow or cancellation."""
    return -(max(-x, 0.0) + math.log1p(math.exp(-abs(x))))


def _log_posterior(scores: list[float], observed: Pairs, prior: float) -> float:
    total = -prior / 2 * math.fsum(s * s for s in scores)
    for a, b, won, met in zip(observed.first, observed.second, observed.first_wins, observed.met, strict=True):
        d = scores[a] - scores[b]
        total += won * _log_sigmoid(d) + (met - won) * _log_sigmoid(-d)
    return total


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(x, 700.0), -700.0)))


def _newton_system(
    scores: list[float], observed: Pairs, prior: float, groups: list[list[int]]
) -> tuple[list[list[float]], list[float]]:
    """The gradient of the log-posterior and its negated Hessian, plus a multiple of the
    projection onto each group's constant vector. The likelihood cannot tell a group's scores
    from the same scores shifted, so the Hessian alone is singular but for the prior along those
    directions; while the scores of each group sum to zero the gradient has no part along them,
    so the added projection leaves the Newton step unchanged and keeps the system well
    conditioned however weak the prior."""
    k = len(scores)
    gradient = [-prior * s for s in scores]
    information = [[0.0] * k for _ in range(k)]
    for i in range(k):
        information[i][i] = prior
    for a, b, won, met in zip(observed.first, observed.second, observed.first_wins, observed.met, strict=True):
        p, q = _sigmoid(scores[a] - scores[b]), _sigmoid(scores[b] - scores[a])  # q = 1 - p, exactly
        surprise = won * q - (met - won) * p  # a's wins less its expected wins, without cancellation
        gradient[a] += surprise
        gradient[b] -= surprise
        weight = met * p * q
        information[a][a] += weight
        information[b][b] += weight
        information[a][b] -= weight
        information[b][a] -= weight
    scale = 1.0 + max((information[i][i] for i in range(k)), default=0.0)
    for group in groups:
        for i in group:
            for j in group:
                information[i][j] += scale / len(group)
    return information, gradient


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Solve ``matrix @ x = vector`` for a symmetric positive definite matrix (Cholesky)."""
    k = len(vector)
    lower = [[0.0] * k for _ in range(k)]
    for i in range(k):
        row = lower[i]
        for j in range(i + 1):
            other = lower[j]
            total = matrix[i][j] - sum(row[m] * other[m] for m in range(j))
            row[j] = math.sqrt(max(total, 1e-300)) if i == j else total / other[j]
    forward = [0.0] * k
    for i in range(k):
        forward[i] = (vector[i] - sum(lower[i][m] * forward[m] for m in range(i))) / lower[i][i]
    solution = [0.0] * k
    for i in reversed(range(k)):
        solution[i] = (forward[i] - sum(lower[m][i] * solution[m] for m in range(i + 1, k))) / lower[i][i]
    return solution


def fit_scores(k: int, observed: Pairs, prior: float, start: list[float]) -> list[float]:
    """The maximum a posteriori log-strengths: Newton's method with step halving (each accepted
    step raises the strictly concave log-posterior), from ``start`` centred in each group."""
    groups = components(k, observed)
    scores = list(start)
    for group in groups:  # the optimum is centred in each group: start there
        mean = math.fsum(scores[i] for i in group) / len(group)
        for i in group:
            scores[i] -= mean
    value = _log_posterior(scores, observed, prior)
    for _ in range(MAX_ITERATIONS):
        step = _solve(*_newton_system(scores, observed, prior, groups))
        length = 1.0
        while True:
            candidate = [s + length * d for s, d in zip(scores, step, strict=True)]
            candidate_value = _log_posterior(candidate, observed, prior)
            if candidate_value >= value or length < 1e-6:
                break
            length /= 2
        moved = max((abs(length * d) for d in step), default=0.0)
        if candidate_value < value:  # no step raises it any more: converged up to rounding
            break
        scores, value = candidate, candidate_value
        if moved <= TOLERANCE:
            break
    return scores


def bootstrap_scores(
    k: int, cells: list[int], prior: float, estimate: list[float], rounds: int, rng: random.Random
) -> list[list[float]]:
    """Per agent, its score in each of ``rounds`` fits to the comparisons resampled with
    replacement (``cells`` holds one ``winner * k + loser`` per comparison)."""
    columns: list[list[float]] = [[] for _ in range(k)]
    for _ in range(rounds):
        sample = pairs(k, Counter(rng.choices(cells, k=len(cells))))
        for column, score in zip(columns, fit_scores(k, sample, prior, estimate), strict=True):
            column.append(score)
    return columns
