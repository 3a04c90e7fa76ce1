"""The forecast before the fit has anything to go by, and what it shows: the naive forecast before any attempt, no
figure without evidence or without an open target, dollars from the prices, whole names, the current cycle."""

from __future__ import annotations

import pytest

from difficulty.config import DifficultyConfig
from difficulty.estimate import estimate
from difficulty.forecast import Forecast, forecast, line, priced, render
from gates.census import census
from gates.tree import MemTree
from state.history import HistoryRecord, Outcome

SETTINGS = DifficultyConfig(runs=4000)
# Gamma(4, 1)'s P10 and P90 (χ²₈'s, halved): the time to four closes at a known rate, in units of the mean wait.
GAMMA_4 = (1.7448, 6.6808)


def book(names: list[str]) -> MemTree:
    body = "".join(f"theorem {n} : True := by\n  sorry\n\n" for n in names)
    return MemTree({"Book/A.lean": f"namespace Book\n\n{body}end Book\n".encode()})


def legacy(cycles: int, closes_every: int) -> list[HistoryRecord]:
    """Records that name no target (the reference script's, or this loop's before `targets`): sorry counts only,
    one hole closed every `closes_every` cycles."""
    out, holes = [], 1000
    for c in range(1, cycles + 1):
        closed = c % closes_every == 0
        out.append(HistoryRecord(cycle=c, outcome=Outcome.ACCEPTED if closed else Outcome.REJECTED,
                                 pre_sorry_count=holes, post_sorry_count=holes - closed))
        holes -= closed
    return out


def ahead(records: list[HistoryRecord], names: list[str], cycle: int = 0) -> Forecast:
    tree = census(book(names), ["Book"])
    return forecast(estimate(records, tree, ["Book"], SETTINGS, "m"), SETTINGS, None, cycle=cycle)


def test_before_any_attempt_the_forecast_is_the_naive_one_with_the_band_its_evidence_allows() -> None:
    """400 closes in 800 cycles, no record naming a target: four open targets take 4 × 800/400 = 8 cycles at P50,
    and the band is about that of four closes at a known rate (the rate's own doubt, from 400 closes, is small)."""
    doc = ahead(legacy(800, 2), ["a", "b", "c", "d"])
    c = doc.remaining.cycles
    assert (doc.basis, doc.attempts, doc.closes, doc.counted) == ("naive", 0, 400, 800)
    assert c.p50 == 8.0
    assert c.p10 == pytest.approx(GAMMA_4[0] * 2, rel=0.08) and c.p90 == pytest.approx(GAMMA_4[1] * 2, rel=0.08)
    assert doc.band and doc.band[0].p50 == 4 and doc.band[-1].p10 == 0  # the burn-down, from the four holes
    assert "the naive forecast: 4 holes open at the 400 closes of 800 cycles recorded" in render(doc)


def test_the_naive_band_widens_as_the_evidence_thins() -> None:
    """The same rate seen over 8 cycles (4 closes) rather than 800: the same P50, a wider band."""
    thin, thick = ahead(legacy(8, 2), ["a", "b", "c", "d"]), ahead(legacy(800, 2), ["a", "b", "c", "d"])
    assert thin.remaining.cycles.p50 == thick.remaining.cycles.p50 == 8.0
    assert thin.remaining.cycles.p90 is not None and thick.remaining.cycles.p90 is not None
    assert thin.remaining.cycles.p90 > 1.5 * thick.remaining.cycles.p90


def test_the_naive_rate_counts_holes_and_every_cycle_that_found_one_open() -> None:
    """Sorry counts count holes, so the open ones are counted in holes: a declaration holding three is three. The
    cycles are those whose base held a hole, an error's or a paused one's too (they took a cycle, as the
    simulation's cycles do); a cycle that found nothing open is not among them."""
    text = "namespace Book\n\ntheorem a : True ∧ True ∧ True := ⟨sorry, sorry, sorry⟩\n\ntheorem b : True := sorry\n"
    tree = census(MemTree({"Book/A.lean": f"{text}\nend Book\n".encode()}), ["Book"])
    records = [
        *legacy(800, 2),
        HistoryRecord(cycle=801, outcome=Outcome.ERROR, pre_sorry_count=600, post_sorry_count=600),
        HistoryRecord(cycle=802, outcome=Outcome.ACCEPTED, pre_sorry_count=600, post_sorry_count=600, paused=True),
        HistoryRecord(cycle=803, outcome=Outcome.REJECTED, pre_sorry_count=0, post_sorry_count=0)]
    doc = forecast(estimate(records, tree, ["Book"], SETTINGS, "m"), SETTINGS, None)
    assert (doc.basis, doc.closes, doc.counted) == ("naive", 400, 802)
    assert doc.remaining.cycles.p50 == round(4 * 802 / 400, 1)
    assert "4 holes open" in render(doc) and doc.band[0].p50 == 4


def test_without_a_close_or_an_open_target_there_is_no_figure() -> None:
    """No record (the bundled example before its first cycle), or records that never closed anything: nothing to
    go by, so nulls and no band rather than a guess; nothing open: nulls and no band, not a band of zeros."""
    for records in ([], legacy(10, 11)):
        doc = ahead(records, ["a", "b"])
        assert doc.basis == "none" and doc.remaining.cycles.p50 is None and doc.band == []
        assert "no forecast until a cycle closes one" in line(doc)
        assert "no forecast yet" in render(doc)
    done = forecast(estimate(legacy(10, 2), census(MemTree({"Book/A.lean": b"theorem a : True := trivial\n"}),
                                                               ["Book"]), ["Book"], SETTINGS, "m"), SETTINGS, None)
    assert done.basis == "none" and done.remaining.cycles.p90 is None and done.band == [] and not done.targets
    assert line(done) == "no open target"


def test_without_a_recorded_cost_the_dollars_come_from_a_cycles_price() -> None:
    """P10 at a short cycle's price, P90 at the longest's, P50 at their middle; said so where it is shown."""
    doc = priced(ahead(legacy(800, 2), ["a", "b", "c", "d"]), (0.5, 4.0))
    c, u = doc.remaining.cycles, doc.remaining.usd
    assert c.p10 is not None and c.p90 is not None
    assert (doc.cost, doc.per_cycle) == ("prices", (0.5, 4.0))
    assert (u.p10, u.p50, u.p90) == (round(c.p10 * 0.5, 2), round(8.0 * 2.25, 2), round(c.p90 * 4.0, 2))
    assert "at $0.50–$4.00 a cycle, estimated from the prices" in line(doc)
    assert priced(doc, (9.0, 9.0)) is doc  # dollars already known are kept
    nothing = ahead([], ["a"])
    assert priced(nothing, (0.5, 4.0)).remaining.usd.p50 is None  # no cycles, no dollars


def test_names_are_shown_whole_and_the_figures_count_from_the_current_cycle() -> None:
    """A long declaration name in full, with its file; the forecast counts from the cycle counter (295) though the
    records stop at cycle 141 (OpenMath's history as released)."""
    name = "exists_hyperplaneSeparatesProperly_not_contains_relativeInterior_of_convex_of_nonempty_interior_aux"
    doc = ahead(legacy(141, 3), [name, "b"], cycle=295)
    assert doc.cycle == 295
    text = render(doc)
    assert f"Book.{name} (Book/A.lean)" in text and "…" not in text
    assert "(P10–P90)" in text and "at cycle 295" in text
    hardest = doc.targets[0].declaration
    assert f"hardest {hardest} in Book/A.lean (" in line(doc) and "…" not in line(doc)
