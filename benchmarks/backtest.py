"""A backtest of the forecast on OpenMath's released history: its sorry burn-down, commit by commit.

    python benchmarks/backtest.py                       # the backtest, on tests/data/openmath/burndown.jsonl
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

At every commit k with an open hole (after the first `--warm` commits): fit on the commits before it, take the tree
of commit k (each open declaration in its file), forecast the cycles left to close the holes open at k, and compare
with the commits it actually took until none of those declarations held a hole. Only the holes open at k are
forecast, as `autoformalize forecast` does: holes stated later are not foreseen. Printed: per cut, the forecast and
the truth; over all cuts, how often the truth lay at or under P50, inside P10–P90 and at or under P90, and the
median of |log((P50 + 1) / (truth + 1))| beside a naive forecast (the open holes times the commits per close so far),
and the rank correlations of P50 and of the naive forecast with the truth.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from difficulty.config import DifficultyConfig
from difficulty.estimate import estimate
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


def tree(holes: dict[str, str]) -> MemTree:
    """A Lean tree holding each open declaration, with its hole, in its file (the released statements are not
    kept: the priors see each target's file, which is its chapter here, and nothing of its statement)."""
    files: dict[str, list[str]] = {}
    for name, path in sorted(holes.items()):
        files.setdefault(path, []).append(f"theorem {name} : True := by\n  sorry\n")
    return MemTree({p: "\n".join(body).encode() for p, body in files.items()})


def truth(commits: Sequence[Commit], k: int) -> int | None:
    """Commits after k until none of the declarations open at k holds a hole; None if some never closed."""
    open_ = set(commits[k].holes)
    for j in range(k + 1, len(commits)):
        if not open_ & set(commits[j].holes):
            return j - k
    return None


def backtest(commits: Sequence[Commit], warm: int = 40, runs: int = 300) -> list[Cut]:
    history = records(commits)
    settings = DifficultyConfig(runs=runs)
    out = []
    for k in range(warm, len(commits)):
        holes = commits[k].holes
        actual = truth(commits, k)
        if not holes or actual is None:
            continue
        est = estimate(history[:k + 1], census(tree(holes), [ROOT]), [ROOT], settings, MODEL)
        c = forecast(est, settings, None).remaining.cycles
        closes = sum(len(r.closed) for r in history[:k + 1])
        naive = len(holes) * (k + 1) / max(1, closes)
        assert c.p10 is not None and c.p50 is not None and c.p90 is not None
        out.append(Cut(k, len(holes), actual, c.p10, c.p50, c.p90, naive))
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
            "error_naive": statistics.median(error(c.naive, c.truth) for c in cuts)}


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
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    if args.build:
        build(args.build, args.data)
        return
    commits = load(args.data)
    cuts = backtest(commits, args.warm, args.runs)
    print(f"{'commit':>6} {'open':>4} {'truth':>5} {'P10':>6} {'P50':>6} {'P90':>6} {'naive':>6}")
    for c in cuts:
        print(f"{c.index:>6} {c.open:>4} {c.truth:>5} {c.p10:>6.1f} {c.p50:>6.1f} {c.p90:>6.1f} {c.naive:>6.1f}")
    s = summary(cuts)
    print(f"{s['cuts']:.0f} cuts of {len(commits)} commits: truth ≤ P50 in {s['under_p50']:.0%}, inside P10–P90 in "
          f"{s['inside_p10_p90']:.0%}, ≤ P90 in {s['under_p90']:.0%}; median |log ratio| of P50 "
          f"{s['error_p50']:.2f}, of the naive forecast {s['error_naive']:.2f}; rank correlation of P50 and truth "
          f"{s['rank_correlation']:.2f} (naive {s['rank_naive']:.2f})")


if __name__ == "__main__":
    main()
