"""The time the successors gate adds to a cycle that changes one statement with 1, 10 and 100 users.

    python benchmarks/successors_gate.py                  # 1, 10 and 100 users, median of 3
    python benchmarks/successors_gate.py --users 10 --repeat 5

A generated project: `Book/Q.lean` states `qux (n : ℕ) : n * 1 = n`; its users are theorems `u<k> : k * 1 = k :=
qux k`, ten to a file (`Book/U<i>.lean`, each importing Q). The change gives `qux` a hypothesis `(h : 0 < n)` and
patches every user to `qux k (by decide)`, as the weaken-and-patch cheat does (`--filled`: the hypothesis has a
default, `(h : 0 < n := by decide)`, and no user is patched). Every gate judges it, through
`kernelcheck.gate_change` (the base listed first, as a cycle's baseline does), once with `[gates] successors =
"off"` and once `"strict"`; the figure is the difference, the gate's own time: the users found from the listings,
each users' file spliced and compiled as a module of its own with the stand-in Lean of the tests as
`compile_file`, and, where its users elaborate (`--filled`), listed by the probe's program (no sandbox, so the
figures are the orchestrator's and the stand-in's; real Lean elaborates each file again, Mathlib loaded). Each run
checks that strict mode names every user as broken, or with `--filled` that none is and the default is named.
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

from gates.build import LakeCompiler
from gates.config import BuildConfig, GatesConfig, SandboxConfig
from gates.sandbox import Sandbox
from orchestrator.kernelcheck import gate_change

REPO = Path(__file__).resolve().parent.parent
STANDIN = REPO / "tests" / "standin" / "lean_checker.py"
Q = "import Mathlib.Tactic\n\nnamespace Book\n\ntheorem qux (n : ℕ){h} : n * 1 = n := by\n  simp\n\nend Book\n"
PER_FILE = 10


def users_file(first: int, count: int, patched: bool) -> str:
    arg = " (by decide)" if patched else ""
    body = "".join(f"theorem u{k} : {k} * 1 = {k} := qux {k}{arg}\n\n" for k in range(first, first + count))
    return f"import Book.Q\n\nnamespace Book\n\n{body}end Book\n"


def one_run(users: int, mode: str, filled: bool) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "book"
        files = {"lakefile.toml": 'name = "book"\n[[lean_lib]]\nname = "Book"\n',
                 "lean-toolchain": "leanprover/lean4:v4.28.0\n", "Book/Q.lean": Q.format(h="")}
        change = {"Book/Q.lean": Q.format(h=" (h : 0 < n := by decide)" if filled else " (h : 0 < n)")}
        for i, first in enumerate(range(1, users + 1, PER_FILE)):
            count = min(PER_FILE, users + 1 - first)
            files[f"Book/U{i}.lean"] = users_file(first, count, False)
            if not filled:
                change[f"Book/U{i}.lean"] = users_file(first, count, True)
        files["Book.lean"] = "".join(f"import Book.{p[5:-5]}\n" for p in sorted(files) if p.startswith("Book/"))
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        build = BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}",
                            read_file=f"{sys.executable} {STANDIN} env {{file}}",
                            compile_file=f"{sys.executable} {STANDIN} compile {{file}} {{olean}}",
                            build_all=f"{sys.executable} {STANDIN} build", timeout_s=600)
        compiler = LakeCompiler(root, build, Sandbox(SandboxConfig(mode="none")))
        gates = GatesConfig(successors=mode, kernel_replay="off")  # type: ignore[arg-type]
        start = time.perf_counter()
        results, _ = gate_change(root, compiler, build, gates, ["Book"], dict(change))
        seconds = time.perf_counter() - start
        verdict = next((r for r in results if r.name == "successors"), None)
        return seconds, verdict.detail if verdict is not None else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, nargs="*", default=[1, 10, 100])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--filled", action="store_true", help="a hypothesis with a default: every user elaborates")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, median of "
          f"{args.repeat}")
    print("| users | user files | all gates, successors off (s) | all gates, strict (s) | the gate adds (s) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n in args.users:
        off, on = [], []
        for _ in range(args.repeat):
            off.append(one_run(n, "off", args.filled)[0])
            seconds, detail = one_run(n, "strict", args.filled)
            broken = detail.count("no longer elaborates")
            assert broken == (0 if args.filled else n), (n, broken, detail[:500])
            assert not args.filled or "gained a hypothesis with a default (autoParam)" in detail, detail[:500]
            on.append(seconds)
        a, b = statistics.median(off), statistics.median(on)
        print(f"| {n} | {(n + PER_FILE - 1) // PER_FILE} | {a:.2f} | {b:.2f} | {b - a:.2f} |")


if __name__ == "__main__":
    main()
