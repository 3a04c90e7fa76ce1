"""The forecast backtested on OpenMath's released history: its sorry burn-down, commit by commit
(`benchmarks/backtest.py`; the data, `tests/data/openmath/burndown.jsonl`, and its source in
`tests/data/SOURCES.md`).

At each of the 122 commits holding an open hole after the first 40, the forecast fitted on the commits up to it
says how many commits closing the holes open there will take, and the history says how many it took. With a
cycle working its file's holes together, and closing them on one draw of its luck (`difficulty.simulate`), the
truth lies inside P10–P90 at 78% of the cuts (52% before, when a cycle took as many holes as a recorded one did,
at random, each on its own luck), its P50 is 4.0 cycles off in the median, the naive forecast's (the open holes
divided by the closes per commit so far) 6.6; and the P50 ranks the cuts better than the naive forecast.
"""

from __future__ import annotations

from backtest import backtest, load, summary


def test_on_openmaths_burn_down_the_band_is_calibrated_and_the_p50_beats_a_naive_forecast() -> None:
    commits = load()
    assert len(commits) == 478 and commits[-1].commit.startswith("f6f6071e")
    cuts = backtest(commits, warm=40, runs=200)
    s = summary(cuts)
    assert s["cuts"] == 122
    assert 0.7 <= s["inside_p10_p90"] <= 0.9, s
    assert s["under_p90"] >= 0.9
    assert s["cycles_p50"] <= s["cycles_naive"], s
    assert s["error_p50"] < s["error_naive"]
    assert s["rank_correlation"] > s["rank_naive"] > 0
