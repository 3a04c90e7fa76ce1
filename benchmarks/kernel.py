"""The time the kernel gate's axioms and fingerprint pass adds to a cycle, and the Lean processes it starts.

    python benchmarks/kernel.py                       # 1, 10 and 100 changed declarations
    python benchmarks/kernel.py --changed 1 10 100 --files 20 --repeat 3

A generated project (`--files` files of definitions, each used by the next two levels down, and theorems
stating facts about them, each with a sorry) is checked as a cycle checks it, with the stand-in Lean of the
tests as `check_file` and as leanchecker: the base's fingerprints of the sorried statements in the changed
files (`take_baseline`, before the Worker runs), then the kernel gate on a change closing N of those sorries
(`kernel.check`: the axioms of every changed declaration, the fingerprints of the closed statements, the
replay of the changed modules). Each figure is the median of --repeat runs; "Lean" is the time inside the
stand-in's processes, the rest is autoformalize's own. Every run first checks that the gate passed, that it
was asked about every changed declaration, and that it started one process per round, not one per name.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gates import kernel
from gates.base import GateInput
from gates.build import LakeCompiler
from gates.census import census
from gates.config import BuildConfig, GatesConfig, SandboxConfig
from gates.diagnostics import CheckResult
from gates.sandbox import Sandbox
from gates.tree import DirTree, MemTree

STANDIN = Path(__file__).resolve().parent.parent / "tests" / "standin" / "lean_checker.py"
THEOREMS = 20  # per file


class Timed(LakeCompiler):
    """The compiler, adding up the seconds its processes take."""

    seconds = 0.0

    def _run(self, template: str, path: str, module: str) -> CheckResult:
        start = time.perf_counter()
        try:
            return super()._run(template, path, module)
        finally:
            self.seconds += time.perf_counter() - start


def source(i: int) -> str:
    """File i: three definitions, each using the one before (and the last one of the file before), and
    theorems about the last, each with a sorry."""
    before = f"Book.F{i - 1}.top" if i else "id"
    lines = [*(f"import Book.F{i - 1}" for _ in [0] if i), "", f"namespace Book.F{i}", "",
             f"def base (n : ℕ) : ℕ := {before} n + {i}", "", "def mid (n : ℕ) : ℕ := base (base n)", "",
             "def top (n : ℕ) : ℕ := mid n + mid (n + 1)", ""]
    for t in range(THEOREMS):
        lines += [f"theorem fact_{t} (n : ℕ) : {t} < top (n + {t}) + 1 := by", "  sorry", ""]
    return "\n".join([*lines, f"end Book.F{i}", ""])


def write(root: Path, files: int) -> None:
    (root / "Book").mkdir(parents=True)
    for i in range(files):
        (root / "Book" / f"F{i}.lean").write_text(source(i), encoding="utf-8")
    (root / "Book.lean").write_text("".join(f"import Book.F{i}\n" for i in range(files)), encoding="utf-8")


def run(root: Path, files: int, changed: int, log: Path) -> dict[str, float]:
    """One measurement: the base's fingerprints, then the gate on a change closing `changed` sorries."""
    runner = f"{sys.executable} {STANDIN}"
    build = BuildConfig(check_file=f"{runner} check {{file}}", build_all=f"{runner} build",
                        replay=f"{runner} replay {{modules}}", replay_available=f"{runner} has-replay")
    # The generated chain runs three definitions a file through every file: a statement of the last files
    # reaches past the default depth of 8 into the files the largest change touches, which the gate would
    # rightly refuse to take on trust; the depth is raised as the rejection says, as such a project would.
    gates = GatesConfig(fingerprint_depth=16)
    # Unconfined, so the stand-in can keep its log of runs: the sandbox's own cost is benchmarks/sandbox.py's.
    compiler = Timed(root, build, Sandbox(SandboxConfig(mode="none", env=["STANDIN_LOG"])))
    tree = DirTree(root)
    base = MemTree({p: tree.read(p) for p in tree.files()})
    before = census(base, ["Book"])
    per_file = THEOREMS
    touched = sorted({f"Book/F{files - 1 - k // per_file}.lean" for k in range(changed)})
    log.unlink(missing_ok=True)
    start = time.perf_counter()
    baseline, _ = kernel.take_baseline(compiler, before, ["Book"], gates,
                                             kernel.statements_to_compare(before, (), set(touched)))
    base_s, base_lean = time.perf_counter() - start, compiler.seconds
    base_runs = len(log.read_text().splitlines()) if log.exists() else 0
    left = changed
    for path in touched:
        text = (root / path).read_text(encoding="utf-8")
        n = min(left, per_file)
        (root / path).write_text(text.replace("  sorry\n", "  simp [top, mid, base]\n", n), encoding="utf-8")
        left -= n
    inp = GateInput(base=base, changed=DirTree(root), gates=gates, build=build, lean_roots=["Book"],
                    state_dir=".prover-state", scope=["Book/**"], report="", cycle=1, compiler=compiler,
                    base_census=before, candidates=touched, kernel_base=baseline)
    log.unlink(missing_ok=True)
    compiler.seconds = 0.0
    start = time.perf_counter()
    verdict = kernel.check(inp)
    gate_s = time.perf_counter() - start
    runs = log.read_text().splitlines() if log.exists() else []
    for path in touched:
        (root / path).write_bytes(base.read(path))
    asked = inp.kernel_answers[0]
    assert verdict.passed, verdict.detail
    assert len(asked.axioms) >= changed and len(asked.checks) >= changed, (len(asked.axioms), len(asked.checks))
    probes = sum(".lake/autoformalize/Probe" in r for r in runs)
    assert probes == asked.rounds, (probes, asked.rounds)
    return {"base_s": base_s, "base_lean": base_lean, "base_runs": base_runs, "gate_s": gate_s,
            "gate_lean": compiler.seconds, "gate_runs": len(runs), "rounds": asked.rounds,
            "asked": len(asked.axioms), "printed": len(asked.prints)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changed", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    print(f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {cpu}")
    print(f"# project: {args.files} files, {args.files * (3 + THEOREMS)} declarations, "
          f"{args.files * THEOREMS} sorries")
    print(f"{'changed':>8} {'asked':>6} {'printed':>8} {'baseline s':>11} {'(Lean s)':>9} {'procs':>6} "
          f"{'gate s':>7} {'(Lean s)':>9} {'procs':>6} {'rounds':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "book"
        write(root, args.files)
        log = Path(tmp) / "standin.log"
        os.environ["STANDIN_LOG"] = str(log)
        for changed in args.changed:
            if changed > args.files * THEOREMS:
                raise SystemExit(f"--changed {changed} is more than the {args.files * THEOREMS} sorries")
            runs = [run(root, args.files, changed, log) for _ in range(args.repeat)]
            m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            print(f"{changed:>8} {m['asked']:>6.0f} {m['printed']:>8.0f} {m['base_s']:>11.2f} {m['base_lean']:>9.2f} "
                  f"{m['base_runs']:>6.0f} {m['gate_s']:>7.2f} {m['gate_lean']:>9.2f} {m['gate_runs']:>6.0f} "
                  f"{m['rounds']:>7.0f}")
        shutil.rmtree(root / ".lake", ignore_errors=True)


if __name__ == "__main__":
    main()
