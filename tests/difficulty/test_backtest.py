"""The forecast backtested on OpenMath's released history: its sorry burn-down, commit by commit
(`benchmarks/backtest.py`; the data, `tests/data/openmath/burndown.jsonl`, and its source in
`tests/data/SOURCES.md`).

At each of the 122 commits holding an open hole after the first 40, the forecast fitted on the commits before
says how many commits closing the holes open there will take, and the history says how many it took. On this
history the forecast is pessimistic (the truth lies at or under P50 at about 84% of the cuts and inside P10–P90 at
about 54%, not 80%: docs/benchmarks.md), so what is asserted is what it does hold: its P90 is rarely passed, and
it tells more than a naive forecast (the open holes times the commits per close so far), closer in the median and
better ranked.
"""

from __future__ import annotations

from backtest import backtest, load, summary


def test_on_openmaths_burn_down_the_p90_holds_and_the_forecast_beats_a_naive_one() -> None:
    commits = load()
    assert len(commits) == 478 and commits[-1].commit.startswith("f6f6071e")
    cuts = backtest(commits, warm=40, runs=200)
    s = summary(cuts)
    assert s["cuts"] == 122
    assert s["under_p90"] >= 0.9
    assert s["error_p50"] < s["error_naive"]
    assert s["rank_correlation"] > s["rank_naive"] > 0
