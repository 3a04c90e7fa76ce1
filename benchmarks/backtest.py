"""A backtest of the forecast on OpenMath's released history (its sorry burn-down, commit by commit) and on
synthetic histories with known difficulties.

    python benchmarks/backtest.py                       # both: OpenMath's (tests/data/openmath/burndown.jsonl) and
                                                        # the synthetic worlds'
    python benchmarks/backtest.py --worlds 0            # OpenMath's alone
    python benchmarks/backtest.py --build CLONE         # rebuild that file from a clone of uw-math-ai/OpenMath

OpenMath (github.com/uw-math-ai/OpenMath, the reference run) released its Lean tree's git history, but no history
of the loop that carries targets: its `.prover-state/history.jsonl` records only sorry counts, and was removed from
the repository on 2026-04-20. So the burn-down is read from the commits: `--build` walks the first-parent history,
takes the census (`gates.census`) of the `OpenMath` tree at each commit, and keeps, per commit, the declarations
holding a hole (with their file) and the Lean files the commit changed. The file holds names and paths only.

Each commit is played as one cycle of the loop: it aimed at the holes of its base that lie in the files it changed
(what the loop's own records call its Scope's holes), and closed those its base held and it does not. A hole that
left the tree with its declaration (a revert, a rename) counts as closed: the burn-down counts holes. One Worker
model (the commits do not say which of OpenMath's two served). Commits are the unit of time: OpenMath's cycles that
landed nothing left no commit.

At every commit k with an open hole (after the first `--warm` commits): fit on the commits up to it, take the tree
of commit k (each declaration that held a hole so far in its file, the open ones with their hole), forecast the
cycles left to close the holes open at k, and compare with the commits it actually took until none of those
declarations held a hole. Only the holes open at k are forecast, as `autoformalize forecast` does: holes stated
later are not foreseen.

The synthetic worlds (`--worlds`) are `synthetic`'s: each a book of 20 theorems in 4 chapter files, its truth
drawn from the model's own prior, played by the loop as the model assumes it runs; after 20 cycles, and every 10
after while targets are open (at most 3 cuts a world), the forecast fitted on the cycles so far is compared with
the cycles the world then took to close them all.

Printed: per cut (OpenMath's; `--verbose` the synthetic ones too), the forecast and the truth; over all cuts, how
often the truth lay at or under P50, inside P10–P90 and at or under P90, the median |P50 − truth| in cycles beside
a naive forecast's (the open holes divided by the closes per cycle so far), the median of
|log((P50 + 1) / (truth + 1))| beside the naive forecast's, and the rank correlations of P50 and of the naive
forecast with the truth; and the machine it ran on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic import ROOT as BOOK
from synthetic import Run, book, prior_truth

from difficulty.config import DifficultyConfig
from difficulty.estimate import Estimate, estimate
from difficulty.forecast import forecast
from gates.census import census
from gates.tree import MemTree
from state.history import HistoryRecord, Outcome

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "openmath" / "burndown.jsonl"
ROOT = "OpenMath"
MODEL = "openmath"


@dataclass(frozen=True)
class Commit:
    commit: str
    date: str
    changed: list[str]  # Lean files of the tree the commit changed
    holes: dict[str, str]  # each declaration holding a hole after it → its file


@dataclass(frozen=True)
class Cut:
    index: int  # the commit the forecast stands at
    open: int  # holes open there
    truth: int  # commits until none of them held a hole
    p10: float
    p50: float
    p90: float
    naive: float


def load(path: Path = DATA) -> list[Commit]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return [Commit(r["commit"], r["date"], r["changed"], r["holes"]) for r in rows]


def records(commits: Sequence[Commit]) -> list[HistoryRecord]:
    """Each commit as the record of a cycle: what it aimed at, closed and opened."""
    out: list[HistoryRecord] = []
    base: dict[str, str] = {}
    for cycle, c in enumerate(commits, start=1):
        changed = set(c.changed)
        aimed = sorted(n for n, f in base.items() if f in changed)
        closed = sorted(set(base) - set(c.holes))
        out.append(HistoryRecord(cycle=cycle, outcome=Outcome.ACCEPTED if closed else Outcome.REJECTED,
                                 targets=aimed, closed=closed, opened=sorted(set(c.holes) - set(base)),
                                 worker_model=MODEL, pre_sorry_count=len(base), post_sorry_count=len(c.holes)))
        base = c.holes
    return out


def tree(holes: dict[str, str], seen: dict[str, str] | None = None) -> MemTree:
    """A Lean tree holding each open declaration, with its hole, in its file, and each declaration of `seen` (those
    that held a hole before, by their last file) proved: the run's tree holds what it closed, so the priors place
    the targets the history attempted in their groups too. The released statements are not kept: the priors see
    each target's file, which is its chapter here, and nothing of its statement."""
    files: dict[str, list[str]] = {}
    for name, path in sorted({**(seen or {}), **holes}.items()):
        proof = "sorry" if name in holes else "trivial"
        files.setdefault(path, []).append(f"theorem {name} : True := by\n  {proof}\n")
    return MemTree({p: "\n".join(body).encode() for p, body in files.items()})


def truth(commits: Sequence[Commit], k: int) -> int | None:
    """Commits after k until none of the declarations open at k holds a hole; None if some never closed."""
    open_ = set(commits[k].holes)
    for j in range(k + 1, len(commits)):
        if not open_ & set(commits[j].holes):
            return j - k
    return None


def remaining(est: Estimate, settings: DifficultyConfig) -> tuple[float, float, float] | None:
    """The cycles left to close `est`'s open targets, (P10, P50, P90), as `autoformalize forecast` says them; None
    where it gives no figure (no attempt and no close recorded)."""
    c = forecast(est, settings, None).remaining.cycles
    return None if c.p10 is None or c.p50 is None or c.p90 is None else (c.p10, c.p50, c.p90)


def backtest(commits: Sequence[Commit], warm: int = 40, runs: int = 300) -> list[Cut]:
    history = records(commits)
    settings = DifficultyConfig(runs=runs)
    out = []
    seen: dict[str, str] = {}
    for k in range(len(commits)):
        holes = commits[k].holes
        actual = truth(commits, k) if k >= warm and holes else None
        if actual is not None:
            est = estimate(history[:k + 1], census(tree(holes, seen), [ROOT]), [ROOT], settings, MODEL)
            closes = sum(len(r.closed) for r in history[:k + 1])
            naive = len(holes) * (k + 1) / max(1, closes)
            figures = remaining(est, settings)
            assert figures is not None  # every cut follows 40 commits that attempted holes
            out.append(Cut(k, len(holes), actual, *figures, naive))
        seen.update(holes)
    return out


def synthetic(worlds: int = 100, runs: int = 300, warm: int = 20, every: int = 10, most: int = 3) -> list[Cut]:
    """The forecast at cuts of seeded synthetic worlds (`synthetic`: 20 theorems in 4 chapter files, a truth drawn
    from the model's prior): after `warm` cycles and every `every` after, at most `most` cuts a world, each
    against the cycles the world then took to close every target (none is stated later)."""
    settings = DifficultyConfig(runs=runs)
    out = []
    for seed in range(worlds):
        rng = random.Random(seed)
        b = book(rng, 20, 4)
        run = Run(b, prior_truth(rng, b), rng)
        cuts: list[tuple[int, set[int]]] = []
        while run.open and len(cuts) < most:
            if run.cycle >= warm and (run.cycle - warm) % every == 0:
                cuts.append((run.cycle, set(run.open)))
            run.step()
        end = run.cycle + run.finish()
        for cycle, open_ in cuts:
            est = estimate(run.records[:cycle], b.tree(open_), [BOOK], settings, "m")
            closes = b.size - len(open_)
            naive = len(open_) * cycle / max(1, closes)
            if (figures := remaining(est, settings)) is not None:  # else cycles that all aimed at nothing
                out.append(Cut(cycle, len(open_), end - cycle, *figures, naive))
    return out


def error(forecast_: float, actual: int) -> float:
    return abs(math.log((forecast_ + 1) / (actual + 1)))


def ranks(values: Sequence[float]) -> list[float]:
    """Each value's rank, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda j: values[j])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2
        i = j + 1
    return out


def summary(cuts: Sequence[Cut]) -> dict[str, float]:
    n = len(cuts)
    return {"cuts": n,
            "rank_correlation": statistics.correlation(ranks([c.p50 for c in cuts]),
                                                       ranks([float(c.truth) for c in cuts])),
            "rank_naive": statistics.correlation(ranks([c.naive for c in cuts]), ranks([float(c.truth) for c in cuts])),
            "under_p50": sum(c.truth <= c.p50 for c in cuts) / n,
            "inside_p10_p90": sum(c.p10 <= c.truth <= c.p90 for c in cuts) / n,
            "under_p90": sum(c.truth <= c.p90 for c in cuts) / n,
            "error_p50": statistics.median(error(c.p50, c.truth) for c in cuts),
            "error_naive": statistics.median(error(c.naive, c.truth) for c in cuts),
            "cycles_p50": statistics.median(abs(c.p50 - c.truth) for c in cuts),
            "cycles_naive": statistics.median(abs(c.naive - c.truth) for c in cuts)}


def report(name: str, s: dict[str, float]) -> str:
    return (f"{name}: {s['cuts']:.0f} cuts; median |P50 − truth| {s['cycles_p50']:.1f} cycles, of the naive "
            f"forecast {s['cycles_naive']:.1f}; truth inside P10–P90 in {s['inside_p10_p90']:.0%}, ≤ P50 in "
            f"{s['under_p50']:.0%}, ≤ P90 in {s['under_p90']:.0%}; median |log ratio| of P50 {s['error_p50']:.2f}, "
            f"of the naive forecast {s['error_naive']:.2f}; rank correlation of P50 and truth "
            f"{s['rank_correlation']:.2f} (naive {s['rank_naive']:.2f})")


def table(cuts: Sequence[Cut]) -> None:
    print(f"{'cut':>6} {'open':>4} {'truth':>5} {'P10':>6} {'P50':>6} {'P90':>6} {'naive':>6}")
    for c in cuts:
        print(f"{c.index:>6} {c.open:>4} {c.truth:>5} {c.p10:>6.1f} {c.p50:>6.1f} {c.p90:>6.1f} {c.naive:>6.1f}")


def build(clone: Path, out: Path) -> None:
    """The burn-down of the clone's first-parent history, one line per commit, with its source in a header."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, check=True, text=True).stdout

    def blob(sha: str) -> bytes:
        return subprocess.run(["git", "-C", str(clone), "cat-file", "blob", sha], capture_output=True,
                              check=True).stdout

    head = git("rev-parse", "HEAD").strip()
    blobs: dict[str, bytes] = {}
    lines = [f"# uw-math-ai/OpenMath, first-parent history up to {head}: per commit, the declarations of the "
             f"{ROOT} tree holding a hole (gates.census) and the Lean files it changed; built by "
             "benchmarks/backtest.py --build"]
    for row in git("log", "--first-parent", "--reverse", "--format=%H %cI").splitlines():
        sha, date = row.split()
        files: dict[str, bytes] = {}
        for entry in git("ls-tree", "-r", sha).splitlines():
            meta, path = entry.split("\t", 1)
            if path.endswith(".lean") and (path.startswith(f"{ROOT}/") or path == f"{ROOT}.lean"):
                obj = meta.split()[2]
                files[path] = blobs[obj] if obj in blobs else blobs.setdefault(obj, blob(obj))
        changed = [p for p in git("diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha).splitlines()
                   if p in files or (p.endswith(".lean") and p.startswith(f"{ROOT}/"))]
        holes = {h.name: h.path for h in census(MemTree(files), [ROOT]).holed()}
        lines.append(json.dumps({"commit": sha, "date": date, "changed": sorted(changed),
                                 "holes": dict(sorted(holes.items()))}, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, metavar="CLONE", help="rebuild the data from a clone of OpenMath")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--warm", type=int, default=40, help="commits fitted on before the first forecast")
    parser.add_argument("--runs", type=int, default=300, help="simulated runs behind each forecast")
    parser.add_argument("--worlds", type=int, default=100, help="synthetic worlds backtested (0: none)")
    parser.add_argument("--verbose", action="store_true", help="print the synthetic cuts too")
    args = parser.parse_args()
    if args.build:
        build(args.build, args.data)
        return
    commits = load(args.data)
    start = time.perf_counter()
    cuts = backtest(commits, args.warm, args.runs)
    took = time.perf_counter() - start
    table(cuts)
    lines = [report(f"OpenMath ({len(commits)} commits, {took:.0f} s)", summary(cuts))]
    if args.worlds:
        start = time.perf_counter()
        made = synthetic(args.worlds, args.runs)
        took = time.perf_counter() - start
        if args.verbose:
            table(made)
        lines.append(report(f"synthetic ({args.worlds} worlds, {took:.0f} s)", summary(made)))
    print("\n".join(lines))
    print(f"machine: {os.cpu_count()} CPUs ({platform.machine()}, {platform.processor() or 'processor unknown'}), "
          f"Python {platform.python_version()}, {args.runs} simulated runs a forecast")


if __name__ == "__main__":
    main()
