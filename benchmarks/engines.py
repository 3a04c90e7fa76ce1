"""The orchestrator's own seconds per Worker turn: the API backend's tool loop beside the two coding agents, in one
run.

    python benchmarks/engines.py               # 30 turns a session, 3 sessions a backend
    python benchmarks/engines.py --turns 60    # longer sessions

Each session reads the same Lean file `--turns` times (one tool call a turn), then reports, against the scripted
endpoints of the tests on loopback (the Anthropic Messages API for `anthropic` and `claude-code`, the Responses API
for `codex`), whose answers take about a millisecond. For each backend it prints, per turn:

- `wall`: the session's wall-clock time (for the coding agents, mostly their CLI's own: its start, its tool
  calls, its sandbox);
- `ours`: the CPU time of this process (the orchestrator: the tool loop, the guard's hooks, the relay, reading the
  engine's events), which is what the product adds to a turn.

The coding agents' CLIs must be installed (the quick start installs both); a backend that cannot run is skipped,
saying why.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.backends.anthropic import AnthropicModel
from agents.coding import Setup
from agents.coding import session as open_session
from agents.config import WorkerConfig
from agents.ledger import Ledger
from agents.tools import Workspace
from agents.worker import Limits, Session, WorkerSession
from gates.build import LakeCompiler
from gates.config import BuildConfig, SandboxConfig
from gates.sandbox import Sandbox
from orchestrator.logs import configure as configure_logs
from state.errors import InfraError
from tests.engines import CLAUDE, CODEX, CODEX_MODEL, in_working_copy
from tests.standin.anthropic_server import AnthropicStandin, text_reply, tool_use_reply
from tests.standin.responses_server import ResponsesStandin, message, shell

KEY = "sk-benchmark-key"
FILE = "Book/Basic.lean"
REPORT = "## Worked on\nnothing\n## Result\nread the file"


def repository(root: Path) -> Path:
    repo = root / "repo"
    (repo / "Book").mkdir(parents=True)
    (repo / FILE).write_text("theorem t : True := by\n  sorry\n" * 50, encoding="utf-8")
    (repo / "lakefile.toml").write_text('name = "book"\n', encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def workspace(repo: Path, sandbox: Sandbox) -> Workspace:
    return Workspace(repo, [FILE], ["lakefile.toml"], ".prover-state", ["Book"], LakeCompiler(repo, BuildConfig(),
                                                                                             sandbox))


def api(repo: Path, sandbox: Sandbox, turns: int) -> tuple[Session, Callable[[], None]]:
    server = AnthropicStandin(api_key=KEY).start()
    for _ in range(turns):
        server.enqueue(tool_use_reply([("read_file", {"path": FILE})]))
    server.enqueue(tool_use_reply([("finish", {"report": REPORT})]))
    model = AnthropicModel("claude-sonnet-4-5", timeout_s=60, api_key=KEY, base_url=server.base_url)
    return WorkerSession(model, workspace(repo, sandbox), "rules", Limits(turns + 5, 600)), server.close


def claude(repo: Path, sandbox: Sandbox, turns: int) -> tuple[Session, Callable[[], None]]:
    server = AnthropicStandin(api_key=KEY, validate=False).start()
    os.environ.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url)
    for _ in range(turns):
        server.enqueue(in_working_copy(("Read", {"file_path": FILE})))
    server.enqueue(text_reply(REPORT))
    config = WorkerConfig(backend="claude-code", model="claude-sonnet-4-5")
    session = open_session(Setup(config, config.model, workspace(repo, sandbox), "rules", Limits(turns + 5, 600),
                                 Ledger(), sandbox))
    return session, server.close


def codex(repo: Path, sandbox: Sandbox, turns: int) -> tuple[Session, Callable[[], None]]:
    server = ResponsesStandin(api_key=KEY).start()
    os.environ["BENCHMARK_CODEX_KEY"] = KEY
    server.enqueue(*[shell(f"head -c 100 {FILE}") for _ in range(turns)], message(REPORT))
    config = WorkerConfig(backend="codex", model=CODEX_MODEL, base_url=server.base_url,
                          api_key_env="BENCHMARK_CODEX_KEY", cli_path=CODEX)
    session = open_session(Setup(config, config.model, workspace(repo, sandbox), "rules", Limits(turns + 5, 600),
                                 Ledger(), sandbox))
    return session, server.close


BACKENDS: dict[str, tuple[Callable[[Path, Sandbox, int], tuple[Session, Callable[[], None]]], Path | str | None]] = {
    "anthropic": (api, None), "claude-code": (claude, CLAUDE), "codex": (codex, CODEX)}


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(name: str, turns: int) -> tuple[float, float] | str:
    """One session of `name`: its wall and our CPU, each per turn; or why it cannot run."""
    maker, cli = BACKENDS[name]
    if name != "anthropic" and (cli is None or not Path(cli).exists()):
        return f"the {name} CLI is not installed (the quick start installs it)"
    with tempfile.TemporaryDirectory(prefix="engines-bench-") as root:
        sandbox = Sandbox(SandboxConfig())
        session, close = maker(repository(Path(root)), sandbox, turns)
        started, ours = time.perf_counter(), cpu()
        try:
            done = session.run("Read the file, then report.")
        except InfraError as e:
            return str(e)
        finally:
            session.close()
            close()
        wall, ours = time.perf_counter() - started, cpu() - ours
        if session.turns < turns:
            return f"the session ended after {session.turns} turns ({done.stop}): {done.report[:200]}"
        return wall / session.turns, ours / session.turns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=3)
    args = parser.parse_args()
    configure_logs(json_lines=True, level=logging.WARNING)
    print(f"{args.sessions} sessions of {args.turns} turns a backend; seconds per turn, median over the sessions "
          f"(CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    print(f"{'backend':<12} {'wall':>8} {'ours':>8}")
    for name in BACKENDS:
        runs = [measure(name, args.turns) for _ in range(args.sessions)]
        if any(isinstance(r, str) for r in runs):
            print(f"{name:<12} skipped: {next(r for r in runs if isinstance(r, str))}")
            continue
        walls, ours = (statistics.median(r[i] for r in runs if not isinstance(r, str)) for i in range(2))
        print(f"{name:<12} {walls:8.3f} {ours:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
