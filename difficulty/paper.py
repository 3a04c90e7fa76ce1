"""`method = "paper"`: the psychometric paper's formulas (Zhang et al., miniF2F-Graded), for comparison.

From each model's success rate P_i(x) on each target x and its ability θ_i (its success rate over all its
attempts), as the paper defines them:

    P(x)  = the mean of the P_i(x) of the models that attempted x
    P′(x) = P(x) − ε · Σ_i 𝟏[P_i(x) > 0] / θ_i                       ε = EPSILON
    difficulty(x) = −P′/(1 − P′), normalised to [0, 1] over the targets (min–max)
    discrimination(x) = mean over pairs of models with θ_i ≠ θ_j of (P_i(x) − P_j(x)) / (θ_i − θ_j),
                        normalised to [−1, 1] over the targets (min–max)

Adaptive testing (`adaptive`) asks, each round, the ROUND unasked items of most information a^f·P·(1 − P)
(f = EXPONENT) under the two-parameter logistic P = σ(a·(θ − b)) — leaving out the RECENT items asked last — and
moves θ after each response r (a success rate; one in (0, 0.1) counts as log(1 + r), a few lucky successes)
by η·(r − P) (η = ETA), holding θ in [0, 1] after each round; it stops after STABLE rounds in a row that moved θ
less than STILL.

The step is η·(r − P), not the η·a·(r − P) of the paper's Algorithm 1: its Appendix F, Table 6 (DeepSeek-Prover-V1's
55 steps), replays within the table's rounding (6e-6) with the former, while the latter makes every step about 6%
short and drifts 1.3e-3 from the table by its end (`tests/difficulty/test_paper.py` replays it). A model's ability
for the next attempt is that update replayed over its attempts in record order, from THETA_0, held in [0, 1] after
each (the loop asks no rounds: each attempt is one); p_next is the same logistic. The paper states no bounds for
θ nor a discrimination for a target fewer than two models attempted: [0, 1] (the difficulties' scale) and 1 here,
and the forecast simulates with these chances as they are (no posterior).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

from difficulty.irt import sigmoid

EPSILON = 0.005
EXPONENT = 0.49
ETA = 0.004
STILL = 0.01
STABLE = 10
ROUND = 5  # items asked each round
RECENT = 10  # the last items asked, left out of the next round
LUCKY = 0.1  # a success rate under this, but not 0, counts as log(1 + r)
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
    raw: dict[str, float] = {}
    spread: dict[str, float] = {}
    for target, r in per.items():
        p = penalised(r, theta)
        raw[target] = -p / (1 - p)
        pairs = [(r[i] - r[j]) / (theta[i] - theta[j]) for i, j in combinations(sorted(r), 2) if theta[i] != theta[j]]
        if pairs:
            spread[target] = sum(pairs) / len(pairs)
    difficulty = normalised(raw, 0.0, 1.0, 0.5)
    discrimination = normalised(spread, -1.0, 1.0, 1.0)
    return {t: Item(difficulty[t], discrimination.get(t, 1.0)) for t in raw}, theta


def normalised(values: dict[str, float], low: float, high: float, flat: float) -> dict[str, float]:
    """`values` mapped linearly onto [low, high] (min to low, max to high); all `flat` when they are all equal."""
    least, most = min(values.values(), default=0.0), max(values.values(), default=0.0)
    if most <= least:
        return dict.fromkeys(values, flat)
    return {k: low + (v - least) * (high - low) / (most - least) for k, v in values.items()}


def information(item: Item, theta: float) -> float:
    p = sigmoid(item.discrimination * (theta - item.difficulty))
    return abs(item.discrimination) ** EXPONENT * p * (1 - p)


def update(theta: float, item: Item, response: float) -> float:
    """θ after one response: a success rate in [0, 1] (an attempt of the loop's: 0 or 1)."""
    if 0 < response < LUCKY:
        response = math.log1p(response)
    p = sigmoid(item.discrimination * (theta - item.difficulty))
    return theta + ETA * (response - p)


def bounded(theta: float) -> float:
    """θ held in [0, 1], the difficulties' scale."""
    return min(1.0, max(0.0, theta))


def replay(theta: float, responses: Sequence[tuple[Item, float]]) -> float:
    """θ after the responses, in order."""
    for item, response in responses:
        theta = update(theta, item, response)
    return theta


def adaptive(bank: dict[str, Item], respond: Callable[[str], float], theta: float = THETA_0, rounds: int = 1000
             ) -> list[tuple[str, float, float]]:
    """The paper's adaptive test: (item asked, response, θ after it) per step, until STABLE rounds in a row move θ
    less than STILL, no item is left to ask, or `rounds` rounds were asked (the paper has no such bound; a
    response that keeps θ swinging would otherwise never stop)."""
    trace: list[tuple[str, float, float]] = []
    recent: deque[str] = deque(maxlen=RECENT)
    still = 0
    for _ in range(rounds):
        if still >= STABLE:
            break
        asked = sorted(set(bank) - set(recent), key=lambda n: (-information(bank[n], theta), n))[:ROUND]
        if not asked:
            break
        before = theta
        for name in asked:
            response = respond(name)
            theta = update(theta, bank[name], response)
            recent.append(name)
            trace.append((name, response, theta))
        theta = bounded(theta)  # once a round, as Algorithm 1 does
        still = still + 1 if abs(theta - before) < STILL else 0
    return trace
