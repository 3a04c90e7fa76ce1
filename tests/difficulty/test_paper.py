"""`method = "paper"`: the psychometric paper's formulas, checked against arithmetic written out here.

The paper's own Table 6 is not among the reference texts (`../shared/reference/` holds only its formulas in
brief), so its trace cannot be replayed: these tests hold the implementation to the formulas as the brief states
them, each expected value computed by hand below, within the 2e-3 the issue asks of a replay.
"""

from __future__ import annotations

import math

import pytest

from difficulty import paper
from difficulty.config import DifficultyConfig
from difficulty.estimate import estimate
from gates.census import census
from gates.tree import MemTree
from state.history import HistoryRecord, Outcome

TOLERANCE = 2e-3
CELLS = {  # target → model → [attempts, closes]
    "X": {"a": [4.0, 2.0], "b": [2.0, 0.0]},
    "Y": {"a": [4.0, 4.0], "b": [2.0, 1.0]},
    "Z": {"a": [4.0, 1.0], "b": [4.0, 2.0]},
}


def test_difficulty_and_discrimination_follow_the_papers_formulas() -> None:
    bank, theta = paper.items(CELLS)
    # θ_i: each model's success rate over all its attempts.
    theta_a, theta_b = (2 + 4 + 1) / 12, (0 + 1 + 2) / 8
    assert theta == pytest.approx({"a": theta_a, "b": theta_b}, abs=TOLERANCE)
    # P′ = mean rate − ε·Σ 1[P_i > 0]/θ_i; raw difficulty −P′/(1 − P′); min–max over the targets.
    p_x = (0.5 + 0.0) / 2 - 0.005 * (1 / theta_a)
    p_y = (1.0 + 0.5) / 2 - 0.005 * (1 / theta_a + 1 / theta_b)
    p_z = (0.25 + 0.5) / 2 - 0.005 * (1 / theta_a + 1 / theta_b)
    raw = {t: -p / (1 - p) for t, p in (("X", p_x), ("Y", p_y), ("Z", p_z))}
    low, high = min(raw.values()), max(raw.values())
    for t in CELLS:
        assert bank[t].difficulty == pytest.approx((raw[t] - low) / (high - low), abs=TOLERANCE)
    # Discrimination: (P_a − P_b)/(θ_a − θ_b), the mean over the one pair of models.
    assert bank["X"].discrimination == pytest.approx((0.5 - 0.0) / (theta_a - theta_b), abs=TOLERANCE)
    assert bank["Z"].discrimination == pytest.approx((0.25 - 0.5) / (theta_a - theta_b), abs=TOLERANCE)


def test_the_adaptive_test_replays_its_trace() -> None:
    """Each round: the unasked item of most information a^0.49·P·(1 − P) under P = σ(a(θ − b)); θ moves by
    0.004·a·(r − P); the test stops after 10 rounds in a row that moved θ less than 0.01."""
    bank = {f"i{k}": paper.Item(difficulty=k / 14, discrimination=0.5 + k / 7) for k in range(15)}
    closes = {f"i{k}": k % 3 != 0 for k in range(15)}
    trace = paper.adaptive(bank, closes.__getitem__, theta=0.5)

    theta, asked, expected = 0.5, set(), []
    for _ in range(10):  # every step is below 0.01 here (a < 2.5): the stop comes after exactly 10
        def info(k: int, theta: float = theta) -> float:
            a, b = 0.5 + k / 7, k / 14
            p = 1 / (1 + math.exp(-a * (theta - b)))
            return a ** 0.49 * p * (1 - p)
        k = max((k for k in range(15) if k not in asked), key=info)
        asked.add(k)
        a, b = 0.5 + k / 7, k / 14
        p = 1 / (1 + math.exp(-a * (theta - b)))
        theta += 0.004 * a * (float(k % 3 != 0) - p)
        expected.append((f"i{k}", k % 3 != 0, theta))
    assert [(n, r) for n, r, _ in trace] == [(n, r) for n, r, _ in expected]
    for (_, _, got), (_, _, want) in zip(trace, expected, strict=True):
        assert got == pytest.approx(want, abs=TOLERANCE)


def test_the_paper_method_answers_the_forecasts_questions() -> None:
    """`method = "paper"` through `estimate`: difficulty normalised to [0, 1] (the open target nobody closed is the
    hardest), p_next from the 2PL with the Worker model's ability replayed over its attempts."""
    source = "namespace Book\n\ntheorem hard : True := by\n  sorry\n\ntheorem easy : True := trivial\n\nend Book\n"
    tree = census(MemTree({"Book/A.lean": source.encode()}), ["Book"])
    records = [HistoryRecord(cycle=c, outcome=Outcome.REJECTED, targets=["Book.hard"], worker_model="m")
               for c in (1, 2, 3)]
    records.append(HistoryRecord(cycle=4, outcome=Outcome.ACCEPTED, targets=["Book.easy"], closed=["Book.easy"],
                                 worker_model="m"))
    est = estimate(records, tree, ["Book"], DifficultyConfig(method="paper"), "m")
    (hard,) = est.targets
    assert est.method == "paper" and hard.difficulty == pytest.approx(1.0) and hard.attempts == 3
    theta = 0.5
    for b, closed in ((1.0, False), (1.0, False), (1.0, False), (0.0, True)):  # in record order
        theta += 0.004 * (float(closed) - 1 / (1 + math.exp(-(theta - b))))
    assert hard.p_next == pytest.approx(1 / (1 + math.exp(-(theta - 1.0))), abs=1e-9)  # exact: the same sums
