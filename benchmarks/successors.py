"""The successor tests' time per theorem (`audit --successors`, `audit/successors.py`): finding the users, compiling
the mutants against them, and a re-run from the cache.

    python benchmarks/successors.py                       # 6 files of 10 theorems
    python benchmarks/successors.py --files 10 --theorems 20 --repeat 3

A generated project (`--files` files, each importing the one before, each with `--theorems` proved theorems
`n * 1 = n ∧ 0 < n` under a hypothesis `0 < n`; every second one has a user in its own file and one in the next
file, the others none) is measured as `audit --successors` measures it, with the stand-in Lean of the tests as
`check_file` (no sandbox: the figures are the orchestrator's and the stand-in's, not bubblewrap's), in a copy of the
project: every theorem cold, then the same tree again (every outcome from the cache). Each figure is the median of
--repeat runs; every run first checks that each theorem with users is `tested` and the rest have none.

A real toolchain is far slower per mutant (`lake lean` on each user's file rebuilds the mutated module and
elaborates the file, Mathlib loaded): the figure here is the ceiling the orchestrator's own work sets.
"""

from __future__ import annotations

import argparse
import logging
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leangen import write_chain

from audit import overlap, successors
from audit.rests import Support
from gates.build import LakeCompiler
from gates.census import census
from gates.config import BuildConfig, SandboxConfig
from gates.probe import module_of
from gates.sandbox import Sandbox
from gates.tree import DirTree

REPO = Path(__file__).resolve().parent.parent
STANDIN = REPO / "tests" / "standin" / "lean_checker.py"


def write_project(root: Path, files: int, theorems: int) -> int:
    """The project; the number of theorems with users."""
    bodies: list[list[str]] = []
    used = 0
    for i in range(files):
        lines: list[str] = []
        for j in range(theorems):
            lines += [f"theorem t{i}_{j} (n : ℕ) (h : 0 < n) : n * 1 = n ∧ 0 < n := by omega", ""]
            if j % 2 == 0:
                lines += [f"theorem u{i}_{j} : 3 * 1 = 3 ∧ 0 < 3 := t{i}_{j} 3 (by decide)", ""]
            if i > 0 and j % 2 == 0:
                lines += [f"theorem v{i}_{j} : 2 * 1 = 2 ∧ 0 < 2 := by\n  exact t{i - 1}_{j} 2 (by decide)", ""]
        used += (theorems + 1) // 2
        bodies.append(lines)
    write_chain(root, bodies)
    return used


def one_run(files: int, theorems: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "book"
        expected = write_project(root, files, theorems)
        cache = successors.Cache(Path(tmp) / "answers")
        tree = census(DirTree(root), ["Book"])
        targets = [t for t in overlap.targets(tree, Support(tree, ["Book"])) if t.name.split(".")[-1][0] == "t"]
        figures: dict[str, float] = {}
        for phase in ("cold", "warm"):
            start = time.perf_counter()
            users = successors.Users(tree)
            for t in targets:
                users.of(t.path, t.name)
            figures[f"{phase}_users_s"] = time.perf_counter() - start
            with successors.copy_of(root, ".", ".prover-state") as copy:
                compiler = LakeCompiler(copy, BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}",
                                                          timeout_s=600), Sandbox(SandboxConfig(mode="none")))

                def trial(t: successors.Target, found: successors.Found, m: successors.Mutant,
                          copy: Path = copy, compiler: LakeCompiler = compiler) -> successors.Outcome:
                    return successors.trial(copy, compiler, lambda p: module_of(p, ["Book"]), t, found, m)

                got = successors.measure(targets, users, trial, cache, successors.Keys(tree, "bench"),
                                         population=len(targets), sampled=False, seed=0)
            seconds = time.perf_counter() - start
            if phase == "cold":
                tested = sum(r.verdict is successors.Verdict.TESTED for r in got.results)
                alone = sum(r.verdict is successors.Verdict.NO_USERS for r in got.results)
                assert (tested, alone) == (expected, len(targets) - expected), (tested, alone, expected)
            figures[f"{phase}_s"] = seconds
            figures[f"{phase}_n"] = len(targets)
            figures[f"{phase}_mutants"] = got.asked
            figures[f"{phase}_lean"] = sum(o.seconds for r in got.results for o in r.mutants if not o.cached)
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=6)
    parser.add_argument("--theorems", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    runs = [one_run(args.files, args.theorems) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{args.files} files × {args.theorems} theorems, median of {args.repeat}")
    print("| run | theorems | mutants compiled | seconds | s per theorem | users found, ms per theorem | "
          "compiling s (summed) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for phase in ("cold", "warm"):
        n = int(med[f"{phase}_n"])
        print(f"| {phase} | {n} | {int(med[f'{phase}_mutants'])} | {med[f'{phase}_s']:.2f} | "
              f"{med[f'{phase}_s'] / n:.3f} | {med[f'{phase}_users_s'] / n * 1000:.1f} | {med[f'{phase}_lean']:.1f} |")


if __name__ == "__main__":
    main()
