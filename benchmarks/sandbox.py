"""The sandbox's added time per compile: the same command through `LakeCompiler`, with and without it.

    python benchmarks/sandbox.py                          # `true`, and the stand-in Lean on a small file
    python benchmarks/sandbox.py --repeat 50
    python benchmarks/sandbox.py --root BOOK --file Book/A.lean --check "lake env lean {file}"   # your Lean

Each command runs --repeat times with `[sandbox] mode = "none"` (the allowlisted environment only) and as many
with `mode = "bwrap"` (bubblewrap, prlimit, the mounts), alternating so drift hits both alike; it prints the
medians, the added time and the ratio. `true` is the bare overhead of starting a sandbox; the stand-in Lean
(a Python program, like the checks of the tests) is a compile of a few tens of milliseconds. A real Lean
compile of a Mathlib-importing file takes seconds to minutes, so the added time is what matters.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gates.build import LakeCompiler
from gates.config import BuildConfig, SandboxConfig
from gates.sandbox import Sandbox, probe

STANDIN = Path(__file__).resolve().parent.parent / "tests" / "standin"
LEAN = ("namespace Book\n\ntheorem easy : True := trivial\n\ntheorem hard (n : Nat) : n + 0 = n := by\n"
        "  sorry\n\nend Book\n")


def timings(root: Path, check: str, file: str, sandbox: Sandbox, runs: int) -> list[float]:
    compiler = LakeCompiler(root, BuildConfig(check_file=check, timeout_s=600), sandbox)
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        result = compiler.check(file, file.removesuffix(".lean").replace("/", "."))
        out.append(time.perf_counter() - start)
        if result.exit_code is None:
            raise SystemExit(f"`{check}` timed out")
    return out


def measure(name: str, root: Path, check: str, file: str, repeat: int) -> None:
    read_only = [str(STANDIN)]
    plain, boxed = Sandbox(SandboxConfig(mode="none")), Sandbox(SandboxConfig(read_only=read_only))
    timings(root, check, file, boxed, 2)  # warm-up: page cache, the first mounts
    without: list[float] = []
    within: list[float] = []
    for _ in range(repeat):
        without += timings(root, check, file, plain, 1)
        within += timings(root, check, file, boxed, 1)
    a, b = statistics.median(without), statistics.median(within)
    print(f"{name:<24} {a * 1000:>10.1f} {b * 1000:>10.1f} {(b - a) * 1000:>10.1f} {b / a:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--root", type=Path, help="a Lean project to compile a file of (with --file, --check)")
    parser.add_argument("--file", help="the file to compile, relative to --root")
    parser.add_argument("--check", default="lake env lean {file}", help="the check_file command")
    args = parser.parse_args()
    problem = probe(SandboxConfig())
    if problem:
        raise SystemExit(f"the sandbox cannot run here: {problem}")
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    print(f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {cpu}, "
          f"{platform.release()}, median of {args.repeat} runs each")
    print(f"{'command':<24} {'plain ms':>10} {'sandbox ms':>10} {'added ms':>10} {'ratio':>7}")
    if args.root:
        measure(args.check.split()[0], args.root, args.check, args.file, args.repeat)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        root.chmod(0o755)  # as root, the sandbox compiles as another user, who must read the working copy
        (root / "Book").mkdir()
        (root / "Book" / "A.lean").write_text(LEAN)
        measure("true", root, "true {file}", "Book/A.lean", args.repeat)
        measure("stand-in Lean", root, f"{sys.executable} {STANDIN / 'lean_checker.py'} check {{file}}",
                "Book/A.lean", args.repeat)


if __name__ == "__main__":
    main()
