"""The forecast: calibrated on seeded synthetic runs, dependencies respected, costs as recorded, and the budget
warned about."""

from __future__ import annotations

import random

import pytest
from synthetic import ROOT, Run, book, prior_truth

from difficulty.attempts import gather
from difficulty.config import DifficultyConfig
from difficulty.estimate import estimate
from difficulty.forecast import forecast
from difficulty.simulate import Open, Spend, quantile, simulate
from gates.census import census
from gates.tree import MemTree
from state.history import HistoryRecord, Outcome

WORLDS = 200
SURE = {"aiming": 10 ** 6, "kept": 10 ** 6}  # every cycle aims at targets, as good as certainly


def test_the_p10_p90_band_holds_the_true_finish_in_75_to_85_percent_of_runs() -> None:
    """Simulation-based calibration: each seeded world draws its truth from the model's own prior (a book of 20
    theorems in 4 chapters, some using others; their difficulties, the Worker's ability, how often a cycle aims),
    plays 20 cycles of the loop into a history, forecasts from that history and the tree as it then stands, and
    plays on to the true finish. Averaged over such worlds, a calibrated P10–P90 band holds it 80% of the time."""
    settings = DifficultyConfig(runs=300)
    held = total = 0
    for seed in range(WORLDS):
        rng = random.Random(seed)
        b = book(rng, 20, 4)
        run = Run(b, prior_truth(rng, b), rng)
        for _ in range(20):
            run.step()
        if not run.open:
            continue
        est = estimate(run.records, b.tree(run.open), [ROOT], settings, "m")
        ahead = forecast(est, settings, None)
        true = run.finish()
        cycles = ahead.remaining.cycles
        if ahead.basis == "none":  # 20 cycles that aimed at nothing: no attempt, no close, nothing to go by
            assert cycles.p10 is None and not ahead.attempts and not ahead.closes
            continue
        assert ahead.basis == "simulation" and cycles.p10 is not None and cycles.p90 is not None
        total += 1
        held += cycles.p10 <= true <= cycles.p90
    assert total >= WORLDS * 0.7
    print(f"P10–P90 held the true finish in {held} of {total} worlds")
    assert 0.75 <= held / total <= 0.85, (held, total)


def test_a_target_closes_only_after_the_open_targets_it_uses() -> None:
    """`after` holds: the target holding 1 sorry uses the one holding 10, so every run takes the 10 off first."""
    targets = [Open("uses", 1, after=(1,)), Open("used", 10)]
    out = simulate(targets, lambda rng: [1.0, 0.3], **SURE, sizes=[1, 2], spend=None, runs=200, seed=1)
    assert all(path[1][1] == 1 for path in out.paths)  # after the first close: the user's one sorry is left


def test_a_cycle_works_one_files_targets_and_closes_them_on_one_draw_of_its_luck() -> None:
    """Seven holes of one file, each closing at an attempt with chance 1/2: a cycle works all seven, and its change
    lands or not whole, so half the runs close them all at the first cycle (on independent luck, 1 in 128 would).
    Two holes sure to close, in two files: a cycle works one file, so every run takes two cycles."""
    together = [Open(f"t{i}", 1, file="A.lean") for i in range(7)]
    out = simulate(together, lambda rng: [0.5] * 7, **SURE, sizes=[1], spend=None, runs=2000, seed=4)
    assert sum(round(c) == 1 for c in out.cycles) / 2000 == pytest.approx(0.5, abs=0.05)
    apart = [Open("a", 1, file="A.lean"), Open("b", 1, file="B.lean")]
    out = simulate(apart, lambda rng: [1.0, 1.0], **SURE, sizes=[2], spend=None, runs=200, seed=5)
    assert all(round(c) == 2 for c in out.cycles)


def test_a_cycle_costs_what_recorded_ones_did_the_hard_models_at_its_price() -> None:
    """One target the hard model works, closed at the first attempt: one cycle, costing a recorded cycle's $10 with
    its Worker's $8 at three times the price."""
    out = simulate([Open("t", 1, hard=True)], lambda rng: [1.0], **SURE, sizes=[1], spend=Spend([(10.0, 8.0)], 3.0),
                   runs=50, seed=2)
    assert out.usd == pytest.approx([26.0] * 50)
    assert all(round(c) == 1 for c in out.cycles)


def test_cycles_that_aim_at_nothing_are_counted() -> None:
    """Half the recorded cycles aimed at targets: a target closing at its first attempt takes two cycles on
    average, not one."""
    out = simulate([Open("t", 1)], lambda rng: [1.0], aiming=500, kept=1000, sizes=[1], spend=None, runs=2000,
                   seed=3)
    assert quantile(out.cycles, 0.5) == pytest.approx(1.5, abs=0.5)
    assert sum(out.cycles) / len(out.cycles) == pytest.approx(2.0, abs=0.15)


def test_a_cycle_that_found_nothing_open_says_nothing_of_how_often_cycles_aim() -> None:
    """Of four cycles aiming at nothing, the two whose base held no hole could not have aimed: one cycle in three
    aimed, not one in five (a run that states its theorems sorry-first and closes them soon spends most cycles with
    nothing open, and would otherwise look as if it rarely worked its holes)."""
    def cycle(n: int, targets: list[str], before: int) -> HistoryRecord:
        return HistoryRecord(cycle=n, outcome=Outcome.REJECTED, targets=targets, pre_sorry_count=before)

    a = gather([cycle(1, [], 0), cycle(2, [], 0), cycle(3, ["Book.t"], 1), cycle(4, [], 1), cycle(5, [], 1)])
    assert (a.aiming, a.kept, a.cycles) == (1, 3, 5)


def _history(cost: float) -> tuple[list[HistoryRecord], object]:
    source = "namespace Book\n\ntheorem hard : True := by\n  sorry\n\nend Book\n"
    tree = census(MemTree({"Book/A.lean": source.encode()}), ["Book"])
    records = [HistoryRecord(cycle=c, outcome=Outcome.REJECTED, targets=["Book.hard"], worker_model="m",
                             cost_usd=cost, costs={"worker": cost}) for c in range(1, 6)]
    return records, tree


def test_the_document_has_the_specified_shape_and_warns_past_the_budget() -> None:
    records, tree = _history(20.0)
    settings = DifficultyConfig(runs=200)
    est = estimate(records, tree, ["Book"], settings, "m")  # type: ignore[arg-type]
    spend = Spend([(r.cost_usd or 0.0, r.costs["worker"] or 0.0) for r in records])
    doc = forecast(est, settings, spend, left_usd=1.0).model_dump(mode="json")
    (target,) = doc["targets"]
    assert {"declaration", "difficulty", "attempts", "p_next"} <= set(target)
    assert target["declaration"] == "Book.hard" and target["attempts"] == 5
    assert set(doc["remaining"]) == {"cycles", "usd"}
    for figure in ("cycles", "usd"):
        assert {"p50", "p90"} <= set(doc["remaining"][figure])
        assert doc["remaining"][figure]["p50"] <= doc["remaining"][figure]["p90"]
    assert any("exceeds what [budget] total_usd has left, $1.00" in w for w in doc["warnings"])
    assert not forecast(est, settings, spend, left_usd=10 ** 9).warnings


def test_without_a_known_cost_the_dollars_are_unknown() -> None:
    records, tree = _history(0.0)
    for r in records:
        r.cost_usd = None
    est = estimate(records, tree, ["Book"], DifficultyConfig(runs=200), "m")  # type: ignore[arg-type]
    usd = forecast(est, DifficultyConfig(runs=200), None).remaining.usd
    assert (usd.p10, usd.p50, usd.p90) == (None, None, None)
