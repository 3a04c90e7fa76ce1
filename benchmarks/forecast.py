"""The difficulty model's fit and the forecast's simulation, timed on synthetic runs of 1,000 and 10,000 cycles.

    python benchmarks/forecast.py                   # 1,000 and 10,000 cycles
    python benchmarks/forecast.py --cycles 10000    # one size

Each run is a book of theorems in files of about 20 (`synthetic.Book`, a chapter a file, each proof using about two
earlier theorems) worked by the loop as the model assumes it runs: nine cycles in ten aim at the ready open targets
of one file, two Worker models take turns, a target closes with σ(θ_m − b_i). The book holds enough theorems
(`--targets`, default 0.8 per cycle) that some stay open at the end. Timed, median of `--repeat` runs each: reading
history.jsonl (10,000 records), the fit (`difficulty.estimate`: the attempts, the groups read from the census,
Newton's method) and the forecast (`difficulty.forecast`: the posterior draws and the simulated runs, as many as it
affords). The fit's CPU time is printed beside its wall time: on a shared machine the wall time measures the
neighbours too.

Then, in a git repository holding that book and history, what `status` and the dry run pay for the forecast
(`orchestrator.outlook.ahead` with `make` off, the census taken beforehand as they take it anyway) once the loop
or `forecast` has kept it — and what making and keeping it took.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import subprocess
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
from gates.census import Census, census
from gates.tree import DirTree
from orchestrator.config import load_config
from orchestrator.outlook import ahead as kept_forecast
from state.history import append_record, read_history


def measure(cycles: int, targets: int, repeat: int) -> dict[str, float]:
    rng = random.Random(cycles)
    # Each proof uses about two earlier theorems (not a share of all earlier ones, which would grow with the book).
    chapters = max(20, targets // 20)
    b = Book([rng.randrange(chapters) for _ in range(targets)],
             [sorted(rng.sample(range(i), min(i, rng.choice((0, 1, 2, 3, 4))))) for i in range(targets)], chapters)
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
        made, read = kept(Path(tmp), tree, path, repeat)
    attempts = sum(len(t) for t in est.attempts.own.values())
    c = ahead.remaining.cycles
    print(f"{cycles:>7,} cycles  {targets:>6,} targets  {attempts:>6,} attempts  {len(est.targets):>5,} open  "
          f"read {statistics.median(reads):5.2f} s  fit {statistics.median(fits):5.2f} s "
          f"(CPU {statistics.median(fit_cpu):4.2f} s)  "
          f"forecast {statistics.median(forecasts):5.2f} s ({ahead.runs} runs; P50 {c.p50:g}, P90 {c.p90:g} "
          f"cycles)", flush=True)
    print(f"{'':>7}  kept in a repository: made and kept {made:5.2f} s, read by status {read:6.3f} s", flush=True)
    return {"read": statistics.median(reads), "fit": statistics.median(fits), "fit_cpu": statistics.median(fit_cpu),
            "forecast": statistics.median(forecasts), "made": made, "kept": read}


def kept(tmp: Path, tree: Census, history: Path, repeat: int) -> tuple[float, float]:
    """The book and its history in a git repository: the time to make and keep its forecast, and the median time
    `status` then takes to find it."""
    repo = tmp / "repo"
    for path, index in tree.files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(index.text)
    (repo / "autoformalize.toml").write_text(f'[project]\nlean_roots = ["{ROOT}"]\n')
    config = load_config(repo)
    state = config.state(repo).history
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_bytes(history.read_bytes())
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    records = read_history(state).records
    seen = census(DirTree(repo), config.project.lean_roots)  # as status takes it, before the forecast
    start = time.perf_counter()
    kept_forecast(config, repo, records, seen)
    made = time.perf_counter() - start
    reads = []
    for _ in range(repeat):
        start = time.perf_counter()
        found = kept_forecast(config, repo, records, seen, make=False)
        reads.append(time.perf_counter() - start)
        assert found is not None
    return made, statistics.median(reads)


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
