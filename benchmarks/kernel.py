"""The time the kernel gate's listing of Lean's environment adds to a cycle, and the Lean processes it starts,
beside the version that asked Lean `#print axioms`, `#check` and `#print` (measured in the same run).

    python benchmarks/kernel.py                       # 1, 10 and 100 changed declarations
    python benchmarks/kernel.py --changed 1 10 100 --files 20 --repeat 3 --before 0e55170

A generated project (`--files` files of definitions, each used by the next two levels down, and theorems
stating facts about them, each with a sorry) is checked as a cycle checks it, with the stand-in Lean of the
tests as `check_file` and as leanchecker: the base's listing of the files the change can alter and all they
import (`listing.gather`, before the Worker runs), then the kernel gate on a change closing N of those sorries
(`kernel.check`: the changed tree's listing, holes, axioms, the meanings of the closed statements, the replay).
Each figure is the median of --repeat runs; "Lean" is the time inside the stand-in's processes, the rest is
autoformalize's own. Every run first checks that the gate passed, closed every sorry it should, and ran one
probe (two Lean runs) per side. The version before (`--before`, a commit of this repository) runs its own
copy of this script from a temporary worktree, on the same project.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
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
from gates.environment import Baseline
from gates.imports import ImportGraph
from gates.listing import gather, toolchain
from gates.sandbox import Sandbox
from gates.tree import DirTree, MemTree

REPO = Path(__file__).resolve().parent.parent
STANDIN = REPO / "tests" / "standin" / "lean_checker.py"
THEOREMS = 20  # per file
BEFORE = "0e55170"  # the last commit whose kernel gate read Lean's printed answers
LAKEFILE = 'name = "book"\n[[lean_lib]]\nname = "Book"\n'
LAKE_LINE = ('    (root / "Book.lean").write_text("".join(f"import Book.F{i}\\n" for i in range(files)), '
             'encoding="utf-8")\n')


class Timed(LakeCompiler):
    """The compiler, adding up the seconds its processes take."""

    seconds = 0.0

    def _run(self, template: str, path: str, module: str, timeout_s: float | None = None) -> CheckResult:
        start = time.perf_counter()
        try:
            return super()._run(template, path, module, timeout_s)
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
    (root / "lakefile.toml").write_text(LAKEFILE, encoding="utf-8")


def run(root: Path, files: int, changed: int, log: Path) -> dict[str, float]:
    """One measurement: the base's listing, then the gate on a change closing `changed` sorries."""
    runner = f"{sys.executable} {STANDIN}"
    build = BuildConfig(check_file=f"{runner} check {{file}}", read_file=f"{runner} env {{file}}",
                        build_all=f"{runner} build",
                        replay=f"{runner} replay {{modules}}", replay_available=f"{runner} has-replay")
    # Unconfined, so the stand-in can keep its log of runs: the sandbox's own cost is benchmarks/sandbox.py's.
    compiler = Timed(root, build, Sandbox(SandboxConfig(mode="none", env=["STANDIN_LOG"])))
    tree = DirTree(root)
    base = MemTree({p: tree.read(p) for p in tree.files()})
    before = census(base, ["Book"])
    touched = sorted({f"Book/F{files - 1 - k // THEOREMS}.lean" for k in range(changed)})
    chain = toolchain(root)
    log.unlink(missing_ok=True)
    start = time.perf_counter()
    got = gather(compiler, before, ["Book"], ImportGraph(before).dependents(set(touched)), chain, None)
    base_s, base_lean = time.perf_counter() - start, compiler.seconds
    base_runs = len(log.read_text().splitlines()) if log.exists() else 0
    before.lean.update(got.modules)
    left = changed
    for path in touched:
        text = (root / path).read_text(encoding="utf-8")
        n = min(left, THEOREMS)
        (root / path).write_text(text.replace("  sorry\n", "  simp [top, mid, base]\n", n), encoding="utf-8")
        left -= n
    inp = GateInput(base=base, changed=DirTree(root), gates=GatesConfig(), build=build, lean_roots=["Book"],
                    state_dir=".prover-state", scope=["Book/**"], report="", cycle=1, compiler=compiler,
                    base_census=before, candidates=touched, kernel_base=Baseline(got.modules, {}, got.problem, chain))
    log.unlink(missing_ok=True)
    compiler.seconds = 0.0
    start = time.perf_counter()
    verdict = kernel.check(inp)
    gate_s = time.perf_counter() - start
    runs = log.read_text().splitlines() if log.exists() else []
    for path in touched:
        (root / path).write_bytes(base.read(path))
    assert verdict.passed, verdict.detail
    assert f"{changed} closed and 0 locked statement(s)" in verdict.detail, verdict.detail
    assert got.runs == 2 and sum(".lake/autoformalize/Probe" in r for r in runs) == 2, (got.runs, runs)
    consts = sum(len(m.consts) for m in inp.kernel_learned.values() for m in [m[1]])
    return {"base_s": base_s, "base_lean": base_lean, "base_runs": base_runs, "gate_s": gate_s,
            "gate_lean": compiler.seconds, "gate_runs": len(runs), "listed": consts}


def before_version(commit: str, changed: list[int], files: int, repeat: int) -> dict[int, list[str]]:
    """The table the script at `commit` prints, by number of changed declarations."""
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--quiet", "--detach", str(where), commit],
                       check=True)
        script = where / "benchmarks" / "kernel.py"
        # Its project lacks the Lake file the stand-in Lean has since asked for, as `lake` does; nothing else differs.
        text = script.read_text(encoding="utf-8")
        if "lakefile.toml" not in text:
            text = text.replace(LAKE_LINE, LAKE_LINE + f"    (root / 'lakefile.toml').write_text({LAKEFILE!r})\n")
        script.write_text(text, encoding="utf-8")
        try:
            done = subprocess.run([sys.executable, str(where / "benchmarks" / "kernel.py"), "--changed",
                                   *map(str, changed), "--files", str(files), "--repeat", str(repeat)],
                                  capture_output=True, text=True, check=True, cwd=where,
                                  env={**os.environ, "PYTHONPATH": str(where)})
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(where)], check=True)
    rows = [line.split() for line in done.stdout.splitlines() if line.strip() and not line.startswith("#")]
    return {int(r[0]): r for r in rows[1:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changed", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", default=BEFORE, help="a commit to measure beside this one ('' to skip)")
    args = parser.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    print(f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {cpu}")
    print(f"# project: {args.files} files, {args.files * (3 + THEOREMS)} declarations, "
          f"{args.files * THEOREMS} sorries")
    old = before_version(args.before, args.changed, args.files, args.repeat) if args.before else {}
    print(f"{'changed':>8} {'listed':>7} {'baseline s':>11} {'(Lean s)':>9} {'procs':>6} {'gate s':>7} "
          f"{'(Lean s)':>9} {'procs':>6}   before: {'baseline s':>11} {'procs':>6} {'gate s':>7} {'procs':>6}")
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
            was = old.get(changed)
            then = f"{was[3]:>11} {was[5]:>6} {was[6]:>7} {was[8]:>6}" if was else ""
            print(f"{changed:>8} {m['listed']:>7.0f} {m['base_s']:>11.2f} {m['base_lean']:>9.2f} "
                  f"{m['base_runs']:>6.0f} {m['gate_s']:>7.2f} {m['gate_lean']:>9.2f} {m['gate_runs']:>6.0f}   "
                  f"before: {then}")
        shutil.rmtree(root / ".lake", ignore_errors=True)


if __name__ == "__main__":
    main()
