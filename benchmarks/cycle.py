"""The orchestrator's own time per cycle, and the Planner's prompt size as a run grows.

    python benchmarks/cycle.py                      # 60k lines in 60 files, and 1M lines
    python benchmarks/cycle.py --lines 60000        # one size
    python benchmarks/cycle.py --cycles 8           # more steady-state cycles per size
    python benchmarks/cycle.py --profile /tmp/prof  # cProfile of each size's last cycle, its top printed

Each cycle runs against the scripted model endpoint of the tests (answers in
about a millisecond) and the stand-in Lean checker of the tests (which answers
the kernel gate's probes as Lean does), on a generated Lean tree committed to a
git repository with a bare remote. Model and compiler time are measured around
each call and subtracted; what is left is the orchestrator's: git, the census,
the gates (what the kernel gate asks and reads included), context assembly,
bookkeeping, commit and push. The first cycle also creates the working copy and fills the
caches in the git directory; the ones after it are the steady state, whose median is the
figure compared across sizes. Each cycle's peak resident memory is the process's high-water
mark reset before it (`/proc/self/clear_refs`), so a leak shows as a rising peak. The
Planner's prompt is then assembled for a synthetic run of 10 to 5,000 cycles, with one
persistent sorry per ten cycles.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leangen import write_tree

from agents import briefs, planner
from agents.ledger import Ledger
from agents.model import Message, Model, Reply, System, ToolSpec
from agents.tools import Workspace
from agents.worker import Limits as WorkLimits
from agents.worker import Session, WorkerSession
from gates.base import Compiler
from gates.census import Census
from gates.diagnostics import CheckResult
from gates.index import index_source
from orchestrator import workcopy
from orchestrator.blame import SorryAge
from orchestrator.config import load_config
from orchestrator.cycle import Options, run_cycle
from orchestrator.git import Git
from orchestrator.logs import configure as configure_logs
from orchestrator.wiring import real_deps
from state.history import HistoryRecord, Outcome
from tests.standin.anthropic_server import AnthropicStandin, RecordedRequest, text_reply, tool_use_reply
from tests.standin.anthropic_server import Reply as Answer

KEY = "sk-ant-benchmark"
STANDIN = Path(__file__).resolve().parent.parent / "tests" / "standin" / "lean_checker.py"
T = TypeVar("T")
FILE_LINES = 1_000


class Timed:
    """Wraps a model or a compiler and adds up the seconds spent inside it."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def model(self, inner: Model) -> Model:
        timer = self

        class Wrapped:
            name = inner.name

            def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
                     max_tokens: int = 8192) -> Reply:
                start = time.perf_counter()
                try:
                    return inner.send(system, messages, tools, max_tokens=max_tokens)
                finally:
                    timer.seconds += time.perf_counter() - start

        return Wrapped()

    def compiler(self, inner: Compiler) -> Compiler:
        timer = self

        def timed(call: Callable[[], T]) -> T:
            start = time.perf_counter()
            try:
                return call()
            finally:
                timer.seconds += time.perf_counter() - start

        class Wrapped:
            def check(self, path: str, module: str) -> CheckResult:
                return timed(lambda: inner.check(path, module))

            def build_all(self) -> CheckResult:
                return timed(inner.build_all)

            def probe(self, text: str) -> CheckResult:
                return timed(lambda: inner.probe(text))

            def read(self, text: str) -> CheckResult:
                return timed(lambda: inner.read(text))

            def compile(self, text: str, timeout_s: float | None = None) -> tuple[str, CheckResult]:
                return timed(lambda: inner.compile(text, timeout_s))

            def discard(self, module: str) -> None:
                inner.discard(module)

            def replay(self, modules: list[str]) -> CheckResult | None:
                return timed(lambda: inner.replay(modules))

        return Wrapped()


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)


def project(root: Path, lines: int) -> tuple[Path, str]:
    repo = root / "book"
    repo.mkdir()
    probe = write_tree(root / "probe", files=1, decls_per_file=78)
    tally = write_tree(repo, files=max(1, round(lines / probe.lines)), decls_per_file=78)
    (repo / "lakefile.toml").write_text('name = "book"\n[[lean_lib]]\nname = "Book"\n')
    (repo / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (repo / "plan.md").write_text("# Plan\n## Current Target\nChapter 0\n")
    (repo / ".gitignore").write_text(".prover-state/heartbeat.json\n.prover-state/run.lock\n")
    run = f"{sys.executable} {STANDIN}"
    (repo / "autoformalize.toml").write_text(
        f'[project]\nlean_roots = ["Book"]\n[build]\ncheck_file = "{run} check {{file}}"\nbuild_all = "true"\n'
        f'replay = "{run} replay {{modules}}"\nreplay_available = "{run} has-replay"\n'
        # The compiles run in the real sandbox, which must show the stand-in's own modules.
        f'[sandbox]\nread_only = ["{STANDIN.parent}"]\n')
    target = next(p for p in sorted((repo / "Book").rglob("*.lean")) if "  sorry\n" in p.read_text())
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(root / "remote.git")], check=True)
    git(repo, "remote", "add", "origin", str(root / "remote.git"))
    print(f"# tree: {tally.lines:,} lines in {tally.files} files, {tally.sorries:,} sorries")
    return repo, target.relative_to(repo).as_posix()


def script(server: AnthropicStandin, repo: Path, target: str) -> None:
    scope = f"# Strategy\n\n## Target\nOne sorry.\n\n## Scope\n- {target}\n"
    evaluation = json.dumps({"progress_score": 1, "summary": "closed one", "stuck_on": "",
                             "strategy_recommendation": "more", "attempts_update": "closed one"})

    def close_first_sorry(_: RecordedRequest) -> Answer:
        text = (workcopy.location(Git(repo)) / target).read_text()
        return tool_use_reply([("write_file", {"path": target, "content": text.replace("  sorry\n", "  simp\n", 1)})])

    server.enqueue(text_reply(scope))
    server.enqueue(close_first_sorry)
    server.enqueue(tool_use_reply([("finish", {"report": "closed one sorry"})]))
    server.enqueue(text_reply(evaluation))


def peak_reset() -> None:
    """Start a new high-water mark of this process's resident memory (Linux)."""
    Path("/proc/self/clear_refs").write_text("5")


def peak_mib() -> float:
    status = Path("/proc/self/status").read_text()
    m = re.search(r"VmHWM:\s+(\d+) kB", status)
    assert m is not None
    return int(m.group(1)) / 1024


def one_cycle(repo: Path, target: str, server: AnthropicStandin, profile: cProfile.Profile | None = None
              ) -> tuple[float, float, float, float]:
    script(server, repo, target)
    timer_model, timer_compiler = Timed(), Timed()
    config = load_config(repo)
    deps = real_deps(config, repo)  # the real wiring (metering, budgets), with the model and compiler timed
    real_model, real_compiler = deps.model, deps.compiler

    def timed(role: str, ledger: Ledger) -> Model:
        return timer_model.model(real_model(role, ledger))

    def session(workspace: Workspace, rules: str, limits: WorkLimits, ledger: Ledger, stop: threading.Event,
                model: str | None = None) -> Session:
        return WorkerSession(timed("worker", ledger), workspace, rules, limits, stop=stop)

    def compiler(root: Path) -> Compiler:
        return timer_compiler.compiler(real_compiler(root))

    deps.model, deps.compiler, deps.session = timed, compiler, session
    start, cpu = time.perf_counter(), time.process_time()
    if profile is not None:
        profile.enable()
    try:
        record, _ = run_cycle(repo, config, deps, Options())
    finally:
        if profile is not None:
            profile.disable()
    total, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert record.outcome == "accepted", record.gates
    return total, timer_model.seconds, timer_compiler.seconds, cpu


def planner_prompt(cycles: int) -> int:
    records = [HistoryRecord(cycle=i, outcome=Outcome.ACCEPTED, progress_score=i % 3 - 1,
                             summary=f"closed lemma_{i} of Chapter {i % 12} by induction on n " * 2,
                             stuck_on="the successor case" if i % 4 == 0 else "") for i in range(1, cycles + 1)]
    attempts = "".join(f"\n### Cycle {i}\ntried induction on n, variant {i}; stuck at the successor case\n"
                       for i in range(1, cycles + 1))
    issues = [briefs.IssueText(f"blocker-{i}", f"# Blocker {i}\n" + "why it is blocked " * 60)
              for i in range(cycles // 10 + 1)]
    census = Census({"Book/A.lean": index_source("Book/A.lean", "theorem a : True := sorry\n" * 40)})
    persistent = [SorryAge(f"Book.Chapter{i % 12}.lemma_{i}", f"Book/Chapter{i % 12}/Section{i}.lean", 12 * i,
                           30.0 + cycles - i, "0123456789ab" * 3 + "0123", f"cycle {i}: closed lemma_{i}").describe()
                  for i in range(cycles // 10)]
    context = briefs.planner(plan="# Plan\n## Current Target\nChapter 3\n" + "Chapters and notes. " * 300,
                             plan_name="plan.md", census=census, history=records, attempts=attempts,
                             last_result="## Worked on\n" + "details " * 800, issues=issues, pivot=None,
                             build="builds", persistent=persistent)
    system = planner.prompt("(standing rules) " * 100, ["Book"])
    return len(system) + len(context.render())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[60_000, 1_000_000])
    parser.add_argument("--cycles", type=int, default=6, help="cycles per size (at least 2)")
    parser.add_argument("--profile", type=Path,
                        help="folder for a cProfile of one more cycle per size, after those timed")
    args = parser.parse_args()
    configure_logs(level=logging.WARNING)
    print(f"{'lines':>10} {'cycle':>6} {'total s':>8} {'model s':>8} {'compiler s':>11} {'orchestrator s':>15} "
          f"{'its CPU s':>10} {'peak RSS MiB':>13}")
    steady: dict[int, float] = {}
    steady_cpu: dict[int, float] = {}
    for lines in args.lines:
        with tempfile.TemporaryDirectory() as tmp, AnthropicStandin() as server:
            # The working copy goes to the cache directory: this run's own, removed with it.
            os.environ.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url,
                              XDG_CACHE_HOME=str(Path(tmp) / "cache"))
            repo, target = project(Path(tmp), lines)
            own: list[float] = []
            # The process's own CPU time: the orchestrator's threads, the stand-in model's thread; not git's or the
            # compiler's processes. A shared machine's stolen time counts in the wall time, not in this.
            cpu_own: list[float] = []
            timed = max(2, args.cycles)
            for n in range(1, timed + 1 + (args.profile is not None)):
                # The profiled cycle is not timed: cProfile doubles the time of code making many small calls.
                profile = cProfile.Profile() if n > timed else None
                server.requests.clear()  # the stand-in's record of requests is no memory of the orchestrator's
                peak_reset()
                total, model, compiler, cpu = one_cycle(repo, target, server, profile)
                if profile is None:
                    own.append(total - model - compiler)
                    cpu_own.append(cpu)
                print(f"{lines:>10,} {n:>6} {total:>8.2f} {model:>8.2f} {compiler:>11.2f} "
                      f"{total - model - compiler:>15.2f} {cpu:>10.2f} {peak_mib():>13.0f}", flush=True)
                if profile is not None:
                    args.profile.mkdir(parents=True, exist_ok=True)
                    profile.dump_stats(args.profile / f"cycle-{lines}.prof")
                    pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
            steady[lines], steady_cpu[lines] = statistics.median(own[1:]), statistics.median(cpu_own[1:])
            print(f"# steady state at {lines:,} lines: median {steady[lines]:.2f} s over cycles 2–{len(own)} "
                  f"(its CPU {steady_cpu[lines]:.2f} s)")
    if len(steady) > 1:
        small, large = min(steady), max(steady)
        print(f"# steady state at {large:,} lines / at {small:,} lines: {steady[large] / steady[small]:.2f} "
              f"(its CPU: {steady_cpu[large] / steady_cpu[small]:.2f})")
    for cycles in (10, 100, 1_000, 5_000):
        chars = planner_prompt(cycles)
        print(f"planner prompt at cycle {cycles:>5,}: {chars:>7,} characters (~{chars // 4:,} tokens)")


if __name__ == "__main__":
    main()
