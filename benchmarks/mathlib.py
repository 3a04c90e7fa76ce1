"""`exact?` probes per second, and the cache's hit rate on re-runs (`audit --mathlib`, `audit/ask.py`).

    python benchmarks/mathlib.py                          # 10 files of 10 theorems, 2 probes at once
    python benchmarks/mathlib.py --files 20 --theorems 25 --builds 2 --repeat 3

A generated project (`--files` files, each importing the one before, each with `--theorems` proved theorems: a
third the stand-in's library closes, a third a theorem of the file before closes, a third nothing closes) is
asked as `audit --mathlib` asks it, with the stand-in Lean of the tests as `check_file` (no sandbox: the
figures are the orchestrator's and the stand-in's, not bubblewrap's): every theorem cold, then the same tree
again (every answer from the cache), then after a theorem is added at the end of the middle file (its file's
later theorems keep their answers, the files importing it are asked again). Each figure is the median of
--repeat runs; every run first checks the overlap count against the generator's.

A real toolchain answers far slower (each probe elaborates its file up to the theorem, Mathlib loaded): the
figure here is the ceiling the orchestrator's own work sets, and the hit rates are what a re-run saves.
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

from audit import overlap
from audit.ask import Cache, ask, keys
from audit.rests import Support
from gates.build import LakeCompiler
from gates.census import census
from gates.config import BuildConfig, SandboxConfig
from gates.sandbox import Sandbox
from gates.tree import DirTree

REPO = Path(__file__).resolve().parent.parent
STANDIN = REPO / "tests" / "standin" / "lean_checker.py"


def write_project(root: Path, files: int, theorems: int) -> int:
    """The project; the number of theorems the library alone closes."""
    bodies: list[list[str]] = []
    library = 0
    for i in range(files):
        lines: list[str] = []
        for j in range(theorems):
            kind = j % 3
            if kind == 0:  # `Nat.le_succ` closes it (a numeral of its own: no theorem before states the same)
                lines.append(f"theorem f{i}_lib{j} : {1000 * i + j} ≤ {1000 * i + j} + 1 := by omega")
                library += 1
            elif kind == 1 and i > 0:  # the file before's theorem closes it
                lines.append(f"theorem f{i}_own{j} (m : ℕ) : m * {i + 1} = m * {i + 1} + 0 := by omega")
            else:  # nothing closes it; the next file's own theorems use it
                lines.append(f"theorem f{i}_new{j} (n : ℕ) : n * {i + 2} = n * {i + 2} + 0 := by omega")
            lines.append("")
        bodies.append(lines)
    write_chain(root, bodies)
    return library


def one_run(files: int, theorems: int, builds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "book"
        expected = write_project(root, files, theorems)
        compiler = LakeCompiler(root, BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}",
                                                  timeout_s=600), Sandbox(SandboxConfig(mode="none")))
        cache = Cache(Path(tmp) / "answers")
        figures: dict[str, float] = {}
        for phase in ("cold", "warm", "changed"):
            if phase == "changed":
                middle = root / "Book" / f"F{files // 2}.lean"
                middle.write_text(middle.read_text().replace("end Book", "theorem added : True := trivial\n\nend "
                                                                           "Book"))
            tree = census(DirTree(root), ["Book"])
            found = overlap.targets(tree, Support(tree, ["Book"]))
            start = time.perf_counter()
            got = ask(found, compiler, cache, keys(found, tree, "bench"), limit_s=600, workers=builds)
            seconds = time.perf_counter() - start
            if phase == "cold":
                seen, _ = overlap.constants(tree, {t.path for t in found}, None)
                counted = sum(r.status is overlap.Status.OVERLAP for r in overlap.tried(found, got, seen))
                assert counted == expected, f"{counted} overlaps, the generator made {expected}"
            asked = len(found) - len(got.cached)
            figures[f"{phase}_s"] = seconds
            figures[f"{phase}_hit"] = len(got.cached) / len(found)
            figures[f"{phase}_rate"] = asked / seconds if asked else 0.0
            figures[f"{phase}_n"] = len(found)
            # Inside the stand-in's processes, summed over the probes run at once; the rest is autoformalize's.
            figures[f"{phase}_lean"] = sum(a.seconds for n, a in got.answers.items() if n not in got.cached)
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--theorems", type=int, default=10)
    parser.add_argument("--builds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    runs = [one_run(args.files, args.theorems, args.builds) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{args.files} files × {args.theorems} theorems, {args.builds} probes at once, median of {args.repeat}")
    print("| run | theorems | asked | seconds | probes/s | cache hits | Lean s (summed) | own ms per probe |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for phase in ("cold", "warm", "changed"):
        n = int(med[f"{phase}_n"])
        asked = round(n * (1 - med[f"{phase}_hit"]))
        own = (med[f"{phase}_s"] * args.builds - med[f"{phase}_lean"]) / asked * 1000 if asked else None
        print(f"| {phase} | {n} | {asked} | {med[f'{phase}_s']:.2f} | {med[f'{phase}_rate']:.1f} | "
              f"{med[f'{phase}_hit']:.0%} | {med[f'{phase}_lean']:.1f} | {'—' if own is None else f'{own:.0f}'} |")


if __name__ == "__main__":
    main()
