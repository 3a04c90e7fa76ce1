"""Whole cycles against the scripted Anthropic endpoint and the stand-in Lean checker.

`Project` is a real git repository with a Lean-shaped `Book/` and a bare
remote; `Agents` scripts each role separately (the role is read from the
system prompt of each request), so a test says what the Planner, the Worker
and the Evaluator answer without counting requests.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.config import Config, load_config
from orchestrator.cycle import Options, run_cycle
from orchestrator.cyclestate import Cycle
from orchestrator.deps import CIStatus, Deps
from orchestrator.wiring import real_deps
from state.history import HistoryRecord, read_history
from tests.conftest import git, write
from tests.standin.anthropic_server import (
    AnthropicStandin,
    RecordedRequest,
    Reply,
    error_reply,
    text_reply,
    tool_use_reply,
)

FAKE_KEY = "sk-ant-test-Zq9XwV7kP3-never-print-me"
STANDIN = Path(__file__).parent.parent / "standin" / "lean_checker.py"
ROLES = {"planner": "You are the Planner", "worker": "You are the Worker", "evaluator": "You are the Evaluator",
         "consultant": "You are the Consultant", "judge": "You judge whether a Lean 4 formalization",
         "summarizer": "You summarize a Lean 4 formalization session"}

A = """\
import Mathlib.Tactic

namespace Book

theorem easy : True := trivial

theorem hard (n : ℕ) : n + 0 = n := by
  sorry

end Book
"""
B = """\
import Book.A

namespace Book

theorem uses : True := Book.easy

theorem other (n : ℕ) : 0 + n = n := by
  sorry

end Book
"""
PLAN = "# Plan\n\n## Current Target\n\nChapter 1: close `Book.hard` in Book/A.lean.\n"


def config_text(**sections: dict[str, Any]) -> str:
    base: dict[str, dict[str, Any]] = {
        "project": {"lean_roots": ["Book"]},
        "build": {"check_file": f"{sys.executable} {STANDIN} check {{file}}",
                  "read_file": f"{sys.executable} {STANDIN} env {{file}}",
                  "compile_file": f"{sys.executable} {STANDIN} compile {{file}} {{olean}}",
                  "build_all": f"{sys.executable} {STANDIN} build", "timeout_s": 30,
                  "replay": f"{sys.executable} {STANDIN} replay {{modules}}",
                  "replay_available": f"{sys.executable} {STANDIN} has-replay"},
        "loop": {"heartbeat_s": 1},
        # Whole cycles run under the real bubblewrap; the stand-in Lean imports its IO module from its directory.
        "sandbox": {"read_only": [str(STANDIN.parent)]},
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    lines = []
    for name, values in base.items():
        tables = {k: v for k, v in values.items() if isinstance(v, dict)}
        lines.append(f"[{name}]")
        lines += [f"{k} = {toml(v)}" for k, v in values.items() if k not in tables]
        for sub, inner in tables.items():
            lines.append(f'[{name}."{sub}"]')
            lines += [f"{k} = {toml(v)}" for k, v in inner.items()]
    return "\n".join(lines) + "\n"


def configure(project: Project, **sections: dict[str, object]) -> None:
    """Commit and push an `autoformalize.toml` with no repair rounds and `sections`."""
    write(project.repo, {"autoformalize.toml": config_text(**{"gates": {"repair_rounds": 0}, **sections})})
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-qm", "config")
    git(project.repo, "push", "-q", "origin", "main")


def toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return json.dumps(value)


def strategy(*scope: str, target: str = "Close `Book.hard`.") -> str:
    bullets = "\n".join(f"- {s}" for s in scope)
    return (f"# Strategy\n\n## Target\n{target}\n\n## Steps\n1. Do it.\n\n## Scope\n{bullets}\n\n"
            "## Done when\nNo sorry.\n")


def evaluation(score: int, summary: str = "closed a sorry", stuck_on: str = "", attempts: str = "tried simp") -> str:
    return json.dumps({"progress_score": score, "summary": summary, "stuck_on": stuck_on,
                       "strategy_recommendation": "continue", "attempts_update": attempts})


class Agents:
    """Per-role scripts, served in order; a role with nothing left gets an error the client does not retry."""

    def __init__(self, server: AnthropicStandin) -> None:
        self.server = server
        self.scripts: dict[str, deque[Reply | Callable[[RecordedRequest], Reply]]] = {r: deque() for r in ROLES}
        self.requests: dict[str, list[RecordedRequest]] = {r: [] for r in ROLES}
        self.calls: Counter[str] = Counter()
        for _ in range(400):
            server.enqueue(self._respond)

    def _respond(self, request: RecordedRequest) -> Reply:
        role = role_of(request)
        self.calls[role] += 1
        self.requests[role].append(request)
        if not self.scripts[role]:
            return error_reply(400, "invalid_request_error", f"test script: nothing left for the {role}")
        item = self.scripts[role].popleft()
        return item(request) if callable(item) else item

    def add(self, role: str, *replies: Reply | Callable[[RecordedRequest], Reply]) -> None:
        self.scripts[role].extend(replies)

    def plan(self, text: str) -> None:
        self.add("planner", text_reply(text))

    def work(self, *steps: list[tuple[str, dict[str, Any]]] | str) -> None:
        """Each step: tool calls in one reply, or a text that ends the turn."""
        self.add("worker", *(text_reply(s) if isinstance(s, str) else tool_use_reply(s) for s in steps))

    def evaluate(self, text: str) -> None:
        self.add("evaluator", text_reply(text))

    def consult(self, text: str) -> None:
        self.add("consultant", text_reply(text))

    def judge(self, q1: bool, q2: bool, score: int, reason: str = "as scripted") -> None:
        self.add("judge", text_reply(json.dumps({"lean_implies_nl": q1, "nl_implies_lean": q2, "score": score,
                                                 "reason": reason})))


def blocking(inside: threading.Event, release: threading.Event, answer: str = "too late"
             ) -> Callable[[RecordedRequest], Reply]:
    """A reply that signals `inside` when its request arrives, then waits for `release` (a model call in flight)."""

    def respond(request: RecordedRequest) -> Reply:
        inside.set()
        release.wait(60)
        return text_reply(answer)

    return respond


def role_of(request: RecordedRequest) -> str:
    """The role whose system prompt the request carries: at its start, or (Claude Code's Worker, whose prompt is
    appended to the CLI's own) at the start of a block or a paragraph of it."""
    system = request.body.get("system") or []
    blocks = [system] if isinstance(system, str) else [b.get("text", "") for b in system]
    return next((role for role, marker in ROLES.items()
                 if any(b.startswith(marker) or f"\n{marker}" in b for b in blocks)), "unknown")


def user_text(request: RecordedRequest) -> str:
    """All text the request sends in user turns (tool results included)."""
    out = []
    for message in request.body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        for block in content:
            if block.get("type") == "text":
                out.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return "\n".join(out)


@dataclass
class Project:
    repo: Path
    remote: Path
    server: AnthropicStandin
    agents: Agents
    log: list[str] = field(default_factory=list)

    @property
    def config(self) -> Config:
        return load_config(self.repo)

    def deps(self, ci: CIStatus | None = None) -> Deps:
        """The real wiring (metering, fallbacks, budgets), with retries that back off in milliseconds."""
        deps = real_deps(self.config, self.repo, backoff_base_s=0.01, backoff_max_s=0.05)
        deps.ci = ci
        return deps

    def cycle(self, ci: CIStatus | None = None, **options: Any) -> tuple[HistoryRecord, Cycle]:
        return run_cycle(self.repo, self.config, self.deps(ci), Options(**options))

    def head(self) -> str:
        return git(self.repo, "rev-parse", "HEAD").strip()

    def remote_head(self) -> str:
        return git(self.remote, "rev-parse", "refs/heads/main").strip()

    def show(self, rev: str, path: str) -> str:
        return git(self.repo, "show", f"{rev}:{path}")

    def changed(self, old: str, new: str = "HEAD") -> list[str]:
        return git(self.repo, "diff", "--name-only", old, new).split()

    def history(self) -> list[HistoryRecord]:
        return read_history(self.repo / ".prover-state" / "history.jsonl").records

    def clean(self) -> bool:
        return git(self.repo, "status", "--porcelain") == ""

    def commit_files(self, files: dict[str, str], message: str = "human edit") -> str:
        write(self.repo, files)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", message)
        git(self.repo, "push", "-q", "origin", "main")
        return self.head()


BOOK = {"lakefile.toml": 'name = "book"\n[[lean_lib]]\nname = "Book"\n',
        "lean-toolchain": "leanprover/lean4:v4.24.0\n", "Book.lean": "import Book.A\nimport Book.B\n",
        "Book/A.lean": A, "Book/B.lean": B}
"""The Lake project at the repository root, with the Lean root `Book`."""


IGNORED = ".lake/\n.prover-state/heartbeat.json\n.prover-state/run.lock\n.prover-state/**/.*.tmp\n"
"""The build folder and the rules `init` adds: a cycle killed while its heartbeat was being written leaves the
write's temp file, which the checkout ignores."""


def make_project(root: Path, server: AnthropicStandin, *, files: dict[str, str] | None = None,
                 config: str | None = None, lean: dict[str, str] | None = None) -> Project:
    """`lean`: the Lake project's files (default `BOOK`)."""
    repo = root / "book"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {**(BOOK if lean is None else lean), "plan.md": PLAN,
                 "autoformalize.toml": config or config_text(), ".gitignore": IGNORED,
                 "CLAUDE.md": "# Rules\nSorry-first.\n", **(files or {})})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    remote = root / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "fetch", "-q", "origin")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main", "main")
    return Project(repo, remote, server, Agents(server))
