"""Time the sorry census on generated Lean trees of growing size.

    python benchmarks/census.py                 # 50k, 250k, 1M and 2M lines
    python benchmarks/census.py --lines 250000  # one size

For each size: the census in this process, and the whole `autoformalize
sorries --json` command as a fresh process (start-up and JSON output
included), each the median of --repeat runs. Files are ~1,300 lines, like a
textbook section, with a declaration every dozen lines.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leangen import write_tree

from gates.census import census
from gates.tree import DirTree

DECLS_PER_FILE = 100


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[50_000, 250_000, 1_000_000, 2_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    print(f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {cpu}")
    print(f"{'lines':>10} {'files':>6} {'sorries':>8} {'census s':>9} {'command s':>10} {'lines/s':>10}")
    for target in args.lines:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            probe = write_tree(root / "probe", files=1, decls_per_file=DECLS_PER_FILE)
            files = max(1, round(target / probe.lines))
            tree = root / "tree"
            tally = write_tree(tree, files=files, decls_per_file=DECLS_PER_FILE)
            assert census(DirTree(tree), ["Book"]).total_sorries == tally.sorries, "census disagrees with generator"
            inproc = median_time(partial(census, DirTree(tree), ["Book"]), args.repeat)
            command = median_time(partial(subprocess.run, [sys.executable, "-m", "orchestrator", "sorries", str(tree),
                                                           "--json"], check=True, stdout=subprocess.DEVNULL),
                                  args.repeat)
            print(f"{tally.lines:>10,} {files:>6} {tally.sorries:>8,} {inproc:>9.2f} {command:>10.2f}"
                  f" {tally.lines / inproc:>10,.0f}")


if __name__ == "__main__":
    main()
