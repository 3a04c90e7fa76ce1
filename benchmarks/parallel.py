"""Accepted items per hour with N Workers a round, against a model and a Lean that take fixed times.

    python benchmarks/parallel.py                           # N = 1, 2, 4, 8; 8 items each
    python benchmarks/parallel.py --turn-s 2 --compile-s 0.5 --max-builds 4 --workers 1 4

Every model answer (the scripted endpoint of the tests) comes after `--turn-s` seconds; every Lean run (the
stand-in Lean checker of the tests, in the real sandbox) takes `--compile-s` seconds more, inside one of the
`--max-builds` build slots. The project has one file per item, each holding one sorry; each round's Planner
gives each of its N Workers one file, each Worker closes the sorry in `--worker-turns` turns (reads, a write,
then `finish`), the
Evaluator scores it, and the merge queue lands the items one at a time, re-gating each on the branch as it is
(no item's file imports another's, so the build and kernel verdicts carry over). N = 1 is an ordinary cycle.
The clock starts after `--warm-up` rounds on files of their own (default 1): a long run pays its first
cycle's start-up once, which 8 items at N = 8 would otherwise pay in their only round. Printed per N: wall time,
accepted items, items per hour, the speed-up over N = 1, and the orchestrator's own CPU time per item (this
process alone: no model, Lean or git time).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gates.base import Compiler
from gates.diagnostics import CheckResult
from orchestrator.config import load_config
from orchestrator.cycle import Options, run_cycle
from orchestrator.logs import configure as configure_logs
from orchestrator.wiring import real_deps
from state.history import Outcome, read_history
from tests.standin.anthropic_server import AnthropicStandin, RecordedRequest, text_reply, tool_use_reply
from tests.standin.anthropic_server import Reply as Answer

KEY = "sk-ant-benchmark"
STANDIN = Path(__file__).resolve().parent.parent / "tests" / "standin" / "lean_checker.py"
OPEN = "import Mathlib.Tactic\n\nnamespace Book\n\ntheorem t{i} (n : ℕ) : n + 0 = n := by\n  sorry\n\nend Book\n"
EVALUATION = json.dumps({"progress_score": 1, "summary": "closed one", "stuck_on": "",
                         "strategy_recommendation": "more", "attempts_update": "closed one"})


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)


def project(root: Path, files: int, workers: int, max_builds: int) -> Path:
    repo = root / "book"
    (repo / "Book").mkdir(parents=True)
    for i in range(files):
        (repo / "Book" / f"F{i}.lean").write_text(OPEN.format(i=i))
    (repo / "lakefile.toml").write_text('name = "book"\n[[lean_lib]]\nname = "Book"\n')
    (repo / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (repo / "plan.md").write_text("# Plan\n## Current Target\nChapter 0\n")
    (repo / ".gitignore").write_text(".lake/\n.prover-state/heartbeat.json\n.prover-state/run.lock\n")
    run = f"{sys.executable} {STANDIN}"
    (repo / "autoformalize.toml").write_text(
        f'[project]\nlean_roots = ["Book"]\n[build]\ncheck_file = "{run} check {{file}}"\nbuild_all = "true"\n'
        f'replay = "{run} replay {{modules}}"\nreplay_available = "{run} has-replay"\n'
        f"[parallel]\nworkers = {workers}\nmax_builds = {max_builds}\n"
        f'[loop]\nheartbeat_s = 5\n[sandbox]\nread_only = ["{STANDIN.parent}"]\n')
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(root / "remote.git")], check=True)
    git(repo, "remote", "add", "origin", str(root / "remote.git"))
    return repo


class Script:
    """Answers every role after `turn_s`: the Planner hands out the next files, a Worker closes its file's sorry."""

    def __init__(self, server: AnthropicStandin, turn_s: float, workers: int, turns: int) -> None:
        self.turn_s = turn_s
        self.workers = workers
        self.turns = turns
        self.next = 0
        self.lock = threading.Lock()
        for _ in range(10_000):
            server.enqueue(self.answer)

    def answer(self, request: RecordedRequest) -> Answer:
        time.sleep(self.turn_s)
        system = request.body.get("system") or []
        role = system if isinstance(system, str) else " ".join(b.get("text", "") for b in system)
        if role.startswith("You are the Planner"):
            return text_reply(self.strategy())
        if role.startswith("You are the Evaluator"):
            return text_reply(EVALUATION)
        first = request.body["messages"][0]["content"]
        brief = first if isinstance(first, str) else " ".join(b.get("text", "") for b in first)
        i = int(brief.split("Book/F", 1)[1].split(".lean", 1)[0])
        turn = len(request.body["messages"]) // 2 + 1
        if turn < self.turns - 1:
            return tool_use_reply([("read_file", {"path": f"Book/F{i}.lean"})])
        if turn == self.turns - 1:
            closed = OPEN.format(i=i).replace("  sorry", "  simp")
            return tool_use_reply([("write_file", {"path": f"Book/F{i}.lean", "content": closed})])
        return tool_use_reply([("finish", {"report": f"closed t{i}"})])

    def strategy(self) -> str:
        with self.lock:
            files, self.next = list(range(self.next, self.next + self.workers)), self.next + self.workers
        if self.workers == 1:
            return f"# Strategy\n\n## Target\nClose t{files[0]}.\n\n## Scope\n- Book/F{files[0]}.lean\n"
        return "# Strategy\n\n## Target\nClose sorries.\n\n" + "".join(
            f"## Item: t{i}\n\n### Scope\n- Book/F{i}.lean\n\n" for i in files)


class Slow:
    """A compiler whose every run takes `seconds` more (inside the build slot the round gives it)."""

    def __init__(self, inner: Compiler, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds

    def check(self, path: str, module: str) -> CheckResult:
        time.sleep(self.seconds)
        return self.inner.check(path, module)

    def build_all(self) -> CheckResult:
        time.sleep(self.seconds)
        return self.inner.build_all()

    def probe(self, text: str) -> CheckResult:
        time.sleep(self.seconds)
        return self.inner.probe(text)

    def read(self, text: str) -> CheckResult:
        time.sleep(self.seconds)
        return self.inner.read(text)

    def compile(self, text: str, timeout_s: float | None = None) -> tuple[str, CheckResult]:
        time.sleep(self.seconds)
        return self.inner.compile(text, timeout_s)

    def discard(self, module: str) -> None:
        self.inner.discard(module)

    def replay(self, modules: list[str]) -> CheckResult | None:
        time.sleep(self.seconds)
        return self.inner.replay(modules)


def measure(workers: int, items: int, turn_s: float, compile_s: float, max_builds: int, turns: int, warm_up: int
            ) -> dict[str, float]:
    """`warm_up` rounds (their own files) run before the clock starts: a long run pays its first cycle's start-up
    (the base's first build and kernel census, the verified-build mark after it) once, not once per N."""
    with tempfile.TemporaryDirectory() as tmp, AnthropicStandin(api_key=KEY) as server:
        os.environ.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url, HOME=tmp)
        repo = project(Path(tmp), items + warm_up * workers, workers, max_builds)
        Script(server, turn_s, workers, turns)
        config = load_config(repo)
        deps = real_deps(config, repo)
        real = deps.compiler
        deps.compiler = lambda root: Slow(real(root), compile_s)
        for _ in range(warm_up):
            run_cycle(repo, config, deps, Options())
        before = len(read_history(config.state(repo).history).records)
        cpu, start = time.process_time(), time.perf_counter()
        for _ in range(-(-items // workers)):
            run_cycle(repo, config, deps, Options())
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        records = read_history(config.state(repo).history).records[before:]
        accepted = sum(1 for r in records if r.outcome is Outcome.ACCEPTED)
        return {"wall_s": wall, "accepted": accepted, "per_hour": accepted * 3600 / wall,
                "cpu_per_item_s": cpu / max(1, accepted)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--items", type=int, default=8, help="items per N (default 8)")
    parser.add_argument("--turn-s", type=float, default=1.0, help="seconds per model answer (default 1)")
    parser.add_argument("--compile-s", type=float, default=0.5, help="seconds added to each Lean run (default 0.5)")
    parser.add_argument("--worker-turns", type=int, default=2,
                        help="model answers per Worker session: reads, then a write and `finish` (default 2)")
    parser.add_argument("--max-builds", type=int, default=8, help="[parallel] max_builds (default 8)")
    parser.add_argument("--warm-up", type=int, default=1,
                        help="rounds run before the clock starts, on files of their own (default 1; 0: from cold)")
    args = parser.parse_args()
    configure_logs(json_lines=True, level=logging.WARNING)
    print(f"# {platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}; turn {args.turn_s} s, "
          f"compile +{args.compile_s} s, max_builds {args.max_builds}, {args.worker_turns} Worker turns, "
          f"{args.items} items per N, after {args.warm_up} warm-up round(s)")
    print("| N | wall (s) | accepted | items/hour | speed-up | orchestrator CPU per item (s) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    base = None
    for n in args.workers:
        m = measure(n, args.items, args.turn_s, args.compile_s, args.max_builds, max(2, args.worker_turns),
                    args.warm_up)
        base = base or m["per_hour"]
        print(f"| {n} | {m['wall_s']:.1f} | {m['accepted']:.0f} | {m['per_hour']:.0f} | {m['per_hour'] / base:.2f} "
              f"| {m['cpu_per_item_s']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
