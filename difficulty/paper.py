"""`method = "paper"`: the psychometric paper's formulas (Zhang et al., miniF2F-Graded), for comparison.

From each model's success rate P_i(x) on each target x and its ability θ_i (its success rate over all its
attempts), as the paper defines them:

    P(x)  = the mean of the P_i(x) of the models that attempted x
    P′(x) = P(x) − ε · Σ_i 𝟏[P_i(x) > 0] / θ_i                       ε = EPSILON
    difficulty(x) = −P′/(1 − P′), normalised to [0, 1] over the targets (min–max)
    discrimination(x) = mean over pairs of models with θ_i ≠ θ_j of (P_i(x) − P_j(x)) / (θ_i − θ_j)

Adaptive testing (`adaptive`) picks, each round, the unasked item with the most information a^f·P·(1 − P)
(f = EXPONENT) under the two-parameter logistic P = σ(a·(θ − b)), updates θ ← θ + η·a·(r − P) (η = ETA) from the
response r, and stops after STABLE rounds in a row with |Δθ| < STILL. A model's ability for the next attempt is
that update replayed over its attempts in record order, from THETA_0; p_next is the same logistic. The paper
states no starting ability nor a discrimination for a target fewer than two models attempted: THETA_0 and 1
here, and the forecast simulates with these chances as they are (no posterior).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

from difficulty.irt import sigmoid

EPSILON = 0.005
EXPONENT = 0.49
ETA = 0.004
STILL = 0.01
STABLE = 10
THETA_0 = 0.5  # the middle of the normalised difficulty scale


@dataclass(frozen=True)
class Item:
    difficulty: float
    discrimination: float


def rates(cells: dict[str, dict[str, list[float]]]) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Each target's success rate per model, and each model's over all its attempts."""
    per: dict[str, dict[str, float]] = {}
    totals: dict[str, list[float]] = {}
    for target, by_model in cells.items():
        for model, (n, k) in by_model.items():
            if n > 0:
                per.setdefault(target, {})[model] = k / n
                total = totals.setdefault(model, [0.0, 0.0])
                total[0] += n
                total[1] += k
    return per, {m: k / n for m, (n, k) in totals.items()}


def penalised(rates_of: dict[str, float], theta: dict[str, float]) -> float:
    """P′(x): the mean success rate less ε/θ_i for every model i that closed it at least once."""
    mean = sum(rates_of.values()) / len(rates_of)
    return mean - EPSILON * sum(1 / theta[m] for m, r in rates_of.items() if r > 0 and theta[m] > 0)


def items(cells: dict[str, dict[str, list[float]]]) -> tuple[dict[str, Item], dict[str, float]]:
    """Each attempted target's difficulty and discrimination, and each model's ability θ_i."""
    per, theta = rates(cells)
    raw = {}
    for target, r in per.items():
        p = penalised(r, theta)
        raw[target] = -p / (1 - p)
    low, high = min(raw.values(), default=0.0), max(raw.values(), default=0.0)
    out = {}
    for target, value in raw.items():
        pairs = [(per[target][i] - per[target][j]) / (theta[i] - theta[j])
                 for i, j in combinations(sorted(per[target]), 2) if theta[i] != theta[j]]
        out[target] = Item((value - low) / (high - low) if high > low else 0.5,
                           sum(pairs) / len(pairs) if pairs else 1.0)
    return out, theta


def information(item: Item, theta: float) -> float:
    p = sigmoid(item.discrimination * (theta - item.difficulty))
    return abs(item.discrimination) ** EXPONENT * p * (1 - p)


def update(theta: float, item: Item, closed: bool) -> float:
    """θ after one response."""
    p = sigmoid(item.discrimination * (theta - item.difficulty))
    return theta + ETA * item.discrimination * (float(closed) - p)


def replay(theta: float, responses: Sequence[tuple[Item, bool]]) -> float:
    """θ after the responses, in order."""
    for item, closed in responses:
        theta = update(theta, item, closed)
    return theta


def adaptive(bank: dict[str, Item], respond: Callable[[str], bool], theta: float = THETA_0
             ) -> list[tuple[str, bool, float]]:
    """The paper's adaptive test: (item asked, response, θ after it) per round, until STABLE rounds in a row move
    θ less than STILL or the bank is spent."""
    trace: list[tuple[str, bool, float]] = []
    left = dict(bank)
    still = 0
    while left and still < STABLE:
        name = max(sorted(left), key=lambda n: information(left[n], theta))
        item = left.pop(name)
        closed = respond(name)
        new = update(theta, item, closed)
        still = still + 1 if abs(new - theta) < STILL else 0
        theta = new
        trace.append((name, closed, theta))
    return trace
