"""The difficulty model's fit and the forecast's simulation, timed on synthetic runs of 1,000 and 10,000 cycles.

    python benchmarks/forecast.py                   # 1,000 and 10,000 cycles
    python benchmarks/forecast.py --cycles 10000    # one size

Each run is a book of theorems in 20 chapters (`synthetic.Book`, each proof using about two earlier
theorems) worked by the
loop as the model assumes it runs: nine cycles in ten aim at one or two open targets, two Worker models take
turns, a target closes with σ(θ_m − b_i). The book holds enough theorems (`--targets`, default 0.8 per cycle) that
some stay open at the end. Timed, median of `--repeat` runs each: reading history.jsonl (10,000 records), the
fit (`difficulty.estimate`: the attempts, the groups read from the census, Newton's method) and the forecast
(`difficulty.forecast`: the posterior draws and the simulated runs, as many as it affords). The fit's CPU time is
printed beside its wall time: on a shared machine the wall time measures the neighbours too.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic import ROOT, Book, Run, Truth

from difficulty.config import DifficultyConfig
from difficulty.estimate import estimate
from difficulty.forecast import forecast
from difficulty.simulate import Spend
from state.history import append_record, read_history


def measure(cycles: int, targets: int, repeat: int) -> dict[str, float]:
    rng = random.Random(cycles)
    # Each proof uses about two earlier theorems (not a share of all earlier ones, which would grow with the book).
    b = Book([rng.randrange(20) for _ in range(targets)],
             [sorted(rng.sample(range(i), min(i, rng.choice((0, 1, 2, 3, 4))))) for i in range(targets)], 20)
    truth = Truth([rng.gauss(0.0, 1.5) for _ in range(targets)], {"opus": 0.6, "sonnet": 0.0}, aim=0.9)
    run = Run(b, truth, rng)
    for k in range(cycles):
        run.step(model="opus" if k % 3 else "sonnet")
    tree = b.tree(run.open)
    settings = DifficultyConfig()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.jsonl"
        for r in run.records:
            append_record(path, r)
        reads, fits, fit_cpu, forecasts = [], [], [], []
        for _ in range(repeat):
            start = time.perf_counter()
            records = read_history(path).records
            reads.append(time.perf_counter() - start)
            start, cpu = time.perf_counter(), time.process_time()
            est = estimate(records, tree, [ROOT], settings, "opus")
            fits.append(time.perf_counter() - start)
            fit_cpu.append(time.process_time() - cpu)
            start = time.perf_counter()
            ahead = forecast(est, settings, Spend([(r.cost_usd or 0.0, r.costs.get("worker") or 0.0)
                                                   for r in records[-100:]]))
            forecasts.append(time.perf_counter() - start)
    attempts = sum(len(t) for t in est.attempts.own.values())
    c = ahead.remaining.cycles
    print(f"{cycles:>7,} cycles  {targets:>6,} targets  {attempts:>6,} attempts  {len(est.targets):>5,} open  "
          f"read {statistics.median(reads):5.2f} s  fit {statistics.median(fits):5.2f} s "
          f"(CPU {statistics.median(fit_cpu):4.2f} s)  "
          f"forecast {statistics.median(forecasts):5.2f} s ({ahead.runs} runs; P50 {c.p50:g}, P90 {c.p90:g} "
          f"cycles)", flush=True)
    return {"read": statistics.median(reads), "fit": statistics.median(fits), "fit_cpu": statistics.median(fit_cpu),
            "forecast": statistics.median(forecasts)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, action="append")
    parser.add_argument("--targets", type=float, default=0.8, help="theorems in the book per cycle")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, CPython {platform.python_version()}", flush=True)
    for cycles in args.cycles or [1_000, 10_000]:
        measure(cycles, int(cycles * args.targets), args.repeat)


if __name__ == "__main__":
    main()
