"""What each role is sent at its first call, after 10, 100 and 1,000 cycles of synthetic history; and the bounds of
the Planner's and the Consultant's read-only tool sessions.

    python benchmarks/prompts.py
    python benchmarks/prompts.py --cycles 10 100 1000 5000

The history grows with the run (records, attempts.md, issues, persistent sorries, commits, a long last report, a
diff); every section of a prompt has a budget, so the sizes must level off once the windows fill: the script exits
with status 1 when a role's prompt still grows by more than `FLAT_CHARS` from ten to twenty times the largest
run's cycles. Sizes
are characters of the system prompt (with the standing rules and, for the tool sessions, the tools offered) plus
the opening message; tokens are estimated at four characters each.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import briefs, evaluator, planner, worker
from agents.config import AgentConfig, AgentsConfig
from agents.model import ToolSpec
from agents.prompts import render
from agents.reader import READ_ONLY, Bounds
from agents.tools import SPECS
from agents.worker import Limits
from gates.census import Census
from gates.config import GatesConfig
from gates.index import index_source
from orchestrator import facts
from orchestrator.blame import SorryAge
from state.history import HistoryRecord, Outcome

FLAT_CHARS = 500  # growth from ten to twenty times the largest run's cycles that still counts as flat
RULES = "# Rules\n" + "Sorry-first; one theorem per file section; cite the book. " * 40  # a typical CLAUDE.md
LOOKUP = ToolSpec("find_declaration", "Whether a declaration exists, in the project or in its dependencies.",
                  {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})


def tools_chars(specs: list[ToolSpec]) -> int:
    return len(json.dumps([{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                           for t in specs]))


def run(cycles: int) -> dict[str, int]:
    """Each role's first request, in characters, after `cycles` cycles."""
    records = [HistoryRecord(cycle=i, outcome=Outcome.ACCEPTED if i % 3 else Outcome.REJECTED,
                             progress_score=i % 3 - 1, pre_sorry_count=400 - i % 50, post_sorry_count=399 - i % 50,
                             summary=f"closed lemma_{i} of Chapter {i % 12} by induction on n " * 2,
                             stuck_on="the successor case" if i % 4 == 0 else "") for i in range(1, cycles + 1)]
    attempts = "".join(f"\n### Cycle {i}\ntried induction on n, then simp [Nat.succ_le_iff] (variant {i})\n"
                       for i in range(1, cycles + 1))
    issues = [briefs.IssueText(f"issue-{i}", f"# Issue {i}\n" + "the order lemma is missing " * 40,
                               f"the Worker of cycle {i}") for i in range(cycles // 10 + 1)]
    files = {f"Book/Chapter{c}/Section{s}.lean": index_source(
        f"Book/Chapter{c}/Section{s}.lean", "".join(f"theorem t{c}_{s}_{k} : True := sorry\n" for k in range(40)))
        for c in range(1, 13) for s in range(1, 2 + cycles // 100)}
    census = Census(files)
    persistent = [SorryAge(f"Book.t{i}", f"Book/Chapter{i % 12 + 1}/Section1.lean", 12 * i, 30.0 + i,
                           "0123456789ab" * 3 + "0123", f"cycle {i}: closed lemma_{i}").describe()
                  for i in range(cycles // 10)]
    commits = "\n".join(f"{i:07x} autoformalize: cycle {i} accepted: closed lemma_{i} of Chapter {i % 12}"
                        for i in range(cycles, max(0, cycles - 15), -1))
    last = "## Worked on\nlemma_x\n## Approach\n" + "induction, then simp " * 600
    scope = list(files)[:2]
    strategy = ("# Strategy\n\n## Target\nClose `Book.t1_1_0`.\n\n## Steps\n" + "1. Do it.\n" * 30
                + f"\n## Scope\n- {scope[0]}\n\n## Done when\nNo sorry.\n")
    gates = GatesConfig()
    plan_context = briefs.planner(
        plan="# Plan\n## Current Target\nChapter 3\n" + "Chapters and notes. " * 300, plan_name="plan.md",
        census=census, history=records, attempts=attempts, last_result=last, issues=issues,
        pivot=None, build="builds", gates=gates,
        persistent=persistent, commits=commits, locked=[f"Book.t{i}" for i in range(cycles // 5)])
    reading = [s for s in SPECS if s.name in READ_ONLY] + [LOOKUP]
    plan_system = planner.prompt(RULES, ["Book"], "plan.md", Bounds().tools_line())
    worker_context = briefs.worker(strategy=strategy, census=census, scope_files=scope, issues=issues, gates=gates)
    diff = "".join(f"+theorem d{i} : True := trivial\n" for i in range(cycles * 20))
    caps = facts.caps()
    evaluator_context = briefs.evaluator(diff=diff, report=last, gates="- build: passed", outcome="accepted",
                                         history=records, attempts=attempts,
                                         diff_chars=evaluator.diff_budget(AgentsConfig().evaluator, caps))
    consultant_context = briefs.consultant(blocker="the successor case", history=records, attempts=attempts,
                                           issues=issues, census=census, outcome="rejected")
    consultant_system = render("consultant", tools=Bounds().tools_line()) + "\n\nStanding rules:\n\n" + RULES
    return {
        "planner": len(plan_system) + tools_chars(reading) + len(plan_context.render()),
        "worker": len(worker.prompt(RULES)) + tools_chars(SPECS) + len(worker_context.render()),
        "evaluator": len(evaluator.prompt(caps)) + len(evaluator_context.render()),
        "consultant": len(consultant_system) + tools_chars(reading) + len(consultant_context.render()),
    }


def bounds(role: str, agent: AgentConfig) -> str:
    limits = Limits(agent.max_turns, agent.timeout_s, agent.token_budget, result_chars=agent.tool_result_chars)
    most = limits.max_turns * limits.result_chars
    budget = f"{limits.token_budget:,}" if limits.token_budget else "none"
    return (f"{role:<11} {limits.max_turns:>6} {limits.timeout_s:>8.0f} {budget:>13} {limits.result_chars:>13,} "
            f"{most:>16,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, nargs="+", default=[10, 100, 1_000])
    args = parser.parse_args()
    print(f"Machine: {platform.machine()}, Python {platform.python_version()}, {platform.system()}")
    sizes = {n: run(n) for n in args.cycles}
    roles = list(next(iter(sizes.values())))
    print(f"\n{'cycles':>7} " + " ".join(f"{r + ' chars':>17} {'~tokens':>8}" for r in roles))
    for n, size in sizes.items():
        print(f"{n:>7,} " + " ".join(f"{size[r]:>17,} {size[r] // 4:>8,}" for r in roles))
    most = max(sizes)
    further, beyond = run(10 * most), run(20 * most)  # every window full: a role still growing has no bound
    print(f"\ngrowth from {most:,} to {10 * most:,} cycles (windows filling): "
          + ", ".join(f"{r} {further[r] - sizes[most][r]:+,}" for r in roles))
    grown = {r: beyond[r] - further[r] for r in roles}
    print(f"growth from {10 * most:,} to {20 * most:,} cycles: " + ", ".join(f"{r} {g:+,}" for r, g in grown.items()))
    agents = AgentsConfig()
    print(f"\n{'session':<11} {'turns':>6} {'time s':>8} {'token budget':>13} {'result chars':>13} "
          f"{'most read chars':>16}")
    print(bounds("planner", agents.planner))
    print(bounds("consultant", agents.consultant))
    print("(most read chars: turns × result chars, what a session's tool results can bring at most)")
    if any(g > FLAT_CHARS for g in grown.values()):
        print(f"NOT FLAT: a prompt grew by more than {FLAT_CHARS:,} characters", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
