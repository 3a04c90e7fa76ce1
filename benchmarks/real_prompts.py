"""What each role is sent on a real repository's released state, and how much of it is the task's.

    python benchmarks/real_prompts.py

OpenMath at f6f6071 (trimmed: `tests/data/SOURCES.md`) is made a repository, and one whole cycle runs on it through
the scripted endpoint of the tests: the Planner answers with a short strategy on the plan's Current Target, the
Worker finishes at once, the Evaluator scores 0, and the Consultant (called after one cycle without progress) advises.
Each role's first request is measured as the endpoint received it: its system prompt, its tools' definitions and
its opening message.

The task's share is the characters that come from the repository rather than the loop's fixed words: every data
fence's contents (issues, reports, commit subjects, names), the sections whose body is the plan's own text (its
Current Target, its other sections, strategy.md), and the project's notes (its CLAUDE.md). The goal: the Planner's
request at most 30,000 characters, at least half of them the task's; the Worker's at most 15,000 besides its tools'
definitions. The script exits 1 when either is missed.

Lean here is a command that accepts every file and prints nothing, as Lean does for a project that builds.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import briefs
from agents.context import NONCE
from tests.orchestrator.harness import IGNORED, Project, config_text, evaluation, make_project, strategy
from tests.standin.anthropic_server import AnthropicStandin, RecordedRequest

RELEASED = Path(__file__).resolve().parent.parent / "tests" / "data" / "openmath" / "released"
KEY = "sk-ant-test-real-prompts-never-print-me"
TARGET_FILE = "OpenMath/ButcherGroup.lean"
PLANNER_CHARS = 30_000
WORKER_CHARS = 15_000
OWN = ("Current Target (plan.md's `## Current Target`, whole)", "plan.md, its other sections (headings demoted)",
       "strategy.md (the Planner's instructions; headings demoted)",
       "The plan's Current Target (a +2 states its result faithfully and proves it)",
       "strategy.md (what the Worker was asked to do)", "The plan's Current Target", "strategy.md (this cycle's)")
"""The sections whose body is the repository's own text, by title."""
ROLES = ("planner", "worker", "evaluator", "consultant")


def released() -> dict[str, str]:
    return {p.relative_to(RELEASED).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(RELEASED.rglob("*")) if p.is_file()}


def openmath(root: Path, server: AnthropicStandin) -> Project:
    """The released state as a repository with a remote, configured for this loop: its Lean root, a Lean that
    accepts everything, the Consultant after one cycle without progress."""
    files = released()
    lean = {p: t for p, t in files.items() if p.endswith(".lean") or p in ("lakefile.toml", "lean-toolchain")}
    quiet = f"{sys.executable} -c pass"
    config = config_text(project={"lean_roots": ["OpenMath"]},
                         build={"check_file": f"{quiet} {{file}}", "read_file": f"{quiet} {{file}}", "build_all": quiet,
                                "replay": quiet,
                                "replay_available": f"{sys.executable} -c 'raise SystemExit(1)'"},
                         loop={"escalate_after": 1}, gates={"repair_rounds": 0})
    return make_project(root, server, lean=lean, config=config,
                        files={**{p: t for p, t in files.items() if p not in lean}, ".gitignore": IGNORED})


def capture(project: Project) -> dict[str, RecordedRequest]:
    """One cycle on the plan's target; each role's first request."""
    project.agents.plan(strategy(TARGET_FILE, target="Define `ButcherProduct`'s convolution (the plan's target)."))
    project.agents.work([("finish", {"report": "## Worked on\nButcherProduct\n## Result\nnothing closed"})])
    project.agents.evaluate(evaluation(0, "nothing closed", stuck_on="QuotEquiv.bSeriesHom_product"))
    project.agents.consult("## Diagnosis\nThe convolution needs a recursive formula first.\n")
    project.cycle()
    return {role: requests[0] for role, requests in project.agents.requests.items() if requests}


def system(request: RecordedRequest) -> str:
    blocks = request.body.get("system") or []
    return blocks if isinstance(blocks, str) else "\n".join(b.get("text", "") for b in blocks)


def opening(request: RecordedRequest) -> str:
    first = request.body["messages"][0]["content"]
    return first if isinstance(first, str) else "\n".join(b.get("text", "") for b in first)


def tools(request: RecordedRequest) -> int:
    return len(json.dumps(request.body.get("tools") or []))


def specific(request: RecordedRequest) -> int:
    """The characters of the request that are the task's (the module's docstring says which)."""
    text = opening(request)
    nonce = NONCE.search(text)
    fence = rf"^<<<DATA {nonce.group(2)}[^\n]*\n(.*?)\n<<<END DATA {nonce.group(2)}>>>$" if nonce else ""
    fenced = sum(len(m.group(1)) for m in re.finditer(fence, text, re.S | re.M)) if nonce else 0
    own = sum(len(briefs.section(text, title)) for title in OWN)
    rules = system(request)
    notes = rules[rules.index("## The project's notes"):] if "## The project's notes" in rules else ""
    return fenced + own + len(notes)


def measured(sent: dict[str, RecordedRequest]) -> dict[str, dict[str, int]]:
    return {role: {"system": len(system(r)), "tools": tools(r), "message": len(opening(r)),
                   "total": len(system(r)) + tools(r) + len(opening(r)), "task": specific(r)}
            for role, r in sent.items() if role in ROLES}


def missed(sizes: dict[str, dict[str, int]]) -> list[str]:
    """The goals a measurement misses."""
    planner, worker = sizes["planner"], sizes["worker"]
    out = []
    if planner["total"] > PLANNER_CHARS:
        out.append(f"the Planner's request is {planner['total']:,} characters, over {PLANNER_CHARS:,}")
    if planner["task"] * 2 < planner["total"]:
        out.append(f"the task's share of the Planner's request is {planner['task'] / planner['total']:.0%}, under half")
    if worker["total"] - worker["tools"] > WORKER_CHARS:
        out.append(f"the Worker's request is {worker['total'] - worker['tools']:,} characters besides its tools, "
                   f"over {WORKER_CHARS:,}")
    return out


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, AnthropicStandin(api_key=KEY) as server:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ.update({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url, "HOME": str(home)})
        sizes = measured(capture(openmath(Path(tmp), server)))
    print(f"Machine: {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}")
    print("| role | system | tools | opening message | total | the task's |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for role in ROLES:
        s = sizes[role]
        print(f"| {role} | {s['system']:,} | {s['tools']:,} | {s['message']:,} | {s['total']:,} | "
              f"{s['task']:,} ({s['task'] / s['total']:.0%}) |")
    for miss in missed(sizes):
        print(f"goal missed: {miss}")
    return 1 if missed(sizes) else 0


if __name__ == "__main__":
    sys.exit(main())
