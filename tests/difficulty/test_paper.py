"""`method = "paper"`: the psychometric paper's formulas, held to the paper's own trace and to arithmetic written
out here.

The paper's Appendix F, Table 6 (`tests/data/paper/table6.tsv`) is DeepSeek-Prover-V1's adaptive test: 55 steps,
each with the theorem's difficulty, discrimination and the model's success rate, and the ability score after it.
The ability is replayed from those three columns alone.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from difficulty import paper
from difficulty.config import DifficultyConfig
from difficulty.estimate import estimate
from gates.census import census
from gates.tree import MemTree
from state.history import HistoryRecord, Outcome

TOLERANCE = 2e-3
TABLE_6 = Path(__file__).resolve().parent.parent / "data" / "paper" / "table6.tsv"
PRINTED = 1e-5  # the table prints five decimals: its own rounding, and its accumulation over the steps


def table6() -> list[tuple[paper.Item, float, float, float]]:
    """Each step: the item, the success rate, the ability after it and the change, as the table prints them."""
    rows = [line.split("\t") for line in TABLE_6.read_text().splitlines() if not line.startswith("#")]
    return [(paper.Item(float(b), float(a)), float(r), float(theta), float(change))
            for _, _, b, a, r, theta, change in rows]


def test_the_papers_table_6_replays_step_by_step() -> None:
    """From θ = 0.5, each step's ability and its change as the table prints them, to its rounding: 55 steps."""
    steps = table6()
    assert len(steps) == 55
    theta = paper.THETA_0
    for item, rate, printed, change in steps:
        new = paper.update(theta, item, rate)
        assert new == pytest.approx(printed, abs=PRINTED)
        assert new - theta == pytest.approx(change, abs=PRINTED)
        theta = new
    assert paper.replay(paper.THETA_0, [(item, rate) for item, rate, _, _ in steps]) == pytest.approx(theta)


def test_the_step_the_table_shows_is_not_algorithm_1s() -> None:
    """Algorithm 1 prints θ ← θ + η·a·(r − P); the table's steps are η·(r − P). With the discrimination in the step,
    the replay leaves the table's rounding: this is what makes the test above able to fail."""
    theta, worst = paper.THETA_0, 0.0
    for item, rate, printed, _ in table6():
        rate = math.log1p(rate) if 0 < rate < 0.1 else rate
        p = 1 / (1 + math.exp(-item.discrimination * (theta - item.difficulty)))
        theta += 0.004 * item.discrimination * (rate - p)
        worst = max(worst, abs(theta - printed))
    assert worst > 1e-3


def test_a_few_lucky_successes_count_as_log_1_plus_r() -> None:
    item = paper.Item(0.5, 1.0)  # P = 0.5 at θ = 0.5
    assert paper.update(0.5, item, 0.05) == pytest.approx(0.5 + 0.004 * (math.log(1.05) - 0.5))
    assert paper.update(0.5, item, 0.1) == pytest.approx(0.5 + 0.004 * (0.1 - 0.5))
    assert paper.update(0.5, item, 0.0) == pytest.approx(0.5 + 0.004 * (0.0 - 0.5))
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
    # Discrimination: (P_a − P_b)/(θ_a − θ_b), the mean over the one pair of models; min–max onto [−1, 1].
    spread = {t: (CELLS[t]["a"][1] / CELLS[t]["a"][0] - CELLS[t]["b"][1] / CELLS[t]["b"][0]) / (theta_a - theta_b)
              for t in CELLS}
    least, most = min(spread.values()), max(spread.values())
    for t in CELLS:
        assert bank[t].discrimination == pytest.approx(-1 + 2 * (spread[t] - least) / (most - least), abs=TOLERANCE)
    assert bank["X"].discrimination == pytest.approx(1.0) and bank["Z"].discrimination == pytest.approx(-1.0)


def test_the_adaptive_test_asks_rounds_of_five_leaving_out_the_last_ten() -> None:
    """Each round: the five unasked items of most information a^0.49·P·(1 − P) under P = σ(a(θ − b)), the last ten
    asked left out (so with fifteen items the rounds cycle through three sets, as Table 6's do); θ moves by
    0.004·(r − P) after each; the test stops after 10 rounds in a row that moved θ less than 0.01."""
    bank = {f"i{k}": paper.Item(difficulty=k / 14, discrimination=0.5 + k / 28) for k in range(15)}
    rate = {f"i{k}": (k % 4) / 4 for k in range(15)}
    trace = paper.adaptive(bank, rate.__getitem__, theta=0.5)

    theta, recent, expected = 0.5, [], []
    for _ in range(10):  # every round moves θ less than 0.01 here (5 steps of at most 0.004): 10 rounds
        def info(k: int, theta: float = theta) -> float:
            a, b = 0.5 + k / 28, k / 14
            p = 1 / (1 + math.exp(-a * (theta - b)))
            return a ** 0.49 * p * (1 - p)
        ranked = sorted((k for k in range(15) if k not in recent[-10:]), key=lambda k: (-info(k), f"i{k}"))
        for k in ranked[:5]:
            a, b = 0.5 + k / 28, k / 14
            p = 1 / (1 + math.exp(-a * (theta - b)))
            theta += 0.004 * ((k % 4) / 4 - p)
            recent.append(k)
            expected.append((f"i{k}", (k % 4) / 4, theta))
    assert [(n, r) for n, r, _ in trace] == [(n, r) for n, r, _ in expected]
    for (_, _, got), (_, _, want) in zip(trace, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-12)
    rounds = [frozenset(n for n, _, _ in trace[i:i + 5]) for i in range(0, len(trace), 5)]
    assert len(set(rounds)) == 3 and all(rounds[i] == rounds[i + 3] for i in range(len(rounds) - 3))


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
        theta += 0.004 * (float(closed) - 1 / (1 + math.exp(-(theta - b))))  # a = 1: one model, no pair
    assert hard.p_next == pytest.approx(1 / (1 + math.exp(-(theta - 1.0))), abs=1e-9)  # exact: the same sums
