"""What guarding the build outputs costs a cycle: `take` before the Worker's session, `restore` before each gate.

    python benchmarks/outputs.py                      # a made-up .lake of 10,000 modules (60,000 files)
    python benchmarks/outputs.py --modules 1000
    python benchmarks/outputs.py --lake BOOK/.lake    # your own (read only: it is copied first)

A module's build leaves six files (`.olean`, `.ilean`, `.trace`, `.hash`, `.c`, `.c.hash`); the made-up tree
spreads them over directories as Lake does. It prints the median of --repeat runs of: `take`, `restore` when
nothing changed (the usual case), and `restore` after 1% of the files were rewritten (what a session that
rebuilt some modules leaves; the time includes deleting them).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orchestrator import buildoutputs

SUFFIXES = (".olean", ".ilean", ".trace", ".hash", ".c", ".c.hash")


def made_up(work: Path, modules: int) -> int:
    """A `.lake/build` of `modules` modules, 50 to a directory; the number of files."""
    count = 0
    for m in range(modules):
        rel = f"Book/Part{m // 2500}/Chapter{m // 50}/M{m}"
        for suffix, base in ((s, "build/lib/lean") for s in SUFFIXES[:4]):
            path = work / ".lake" / base / f"{rel}{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x" * 64)
            count += 1
        for suffix in SUFFIXES[4:]:
            path = work / ".lake/build/ir" / f"{rel}{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x" * 64)
            count += 1
    return count


def median_ms(action: Callable[[], object], repeat: int, before: Callable[[], object] | None = None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=10_000)
    parser.add_argument("--lake", type=Path, help="a real .lake to measure (copied, never touched)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "worker-0"
        if args.lake:
            shutil.copytree(args.lake, work / ".lake", symlinks=True, ignore=shutil.ignore_patterns("packages"))
            files = sum(len(f) for _, _, f in os.walk(work / ".lake"))
        else:
            files = made_up(work, args.modules)
        oleans = sorted((work / ".lake").rglob("*.olean"))
        every = oleans[:: max(1, len(oleans) * 100 // max(files, 1))]  # about 1% of all the files

        def touch() -> None:
            buildoutputs.take(work)
            for p in every:  # 1% of the files, rewritten as a rebuild would
                p.write_bytes(b"y" * 64)

        take = median_ms(lambda: buildoutputs.take(work), args.repeat)
        size = (work.parent / f"{work.name}.outputs.json").stat().st_size
        unchanged = median_ms(lambda: buildoutputs.restore(work), args.repeat)
        changed = median_ms(lambda: buildoutputs.restore(work), args.repeat, before=touch)
    print(f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"{platform.release()}, median of {args.repeat} runs")
    print(f"files under .lake: {files:,}; record {size / 1e6:.1f} MB")
    print(f"take                 {take:8.0f} ms")
    print(f"restore, unchanged   {unchanged:8.0f} ms")
    print(f"restore, 1% changed  {changed:8.0f} ms (deleting {len(every)} files)")


if __name__ == "__main__":
    main()
