"""`cycle --dry-run`: every read-only step of a cycle, and what each phase would do. No model, no change."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from pathlib import Path

from agents import briefs, coding, evaluator
from agents.config import ENGINES, installed
from agents.planner import prompt as planner_prompt
from agents.planner import validate
from agents.provers.base import Off
from agents.tools import SPECS
from agents.worker import prompt
from difficulty.forecast import line
from gates.census import census
from gates.sandbox import describe
from gates.scope import InvalidStrategy, matches
from gates.tree import is_lean_source
from orchestrator import cyclestate as cs
from orchestrator import facts, ownership, workcopy
from orchestrator.blame import persistent
from orchestrator.config import Config
from orchestrator.git import Git, GitTree
from orchestrator.housekeeping import due
from orchestrator.journal import Journal
from orchestrator.outlook import SHORT_TURNS, UNMADE, Calls, ahead, cycle_cost, estimate_for, per_cycle
from orchestrator.outlook import brief as difficulty_brief
from orchestrator.rules import rules as standing_rules
from orchestrator.verdicts import held
from orchestrator.wiring import prover_for
from state import files
from state.history import read_history
from state.lock import inspect_lock
from state.prover_jobs import JobStatus, read_jobs
from state.statement_lock import read_lock

READING_TURNS = 5  # a Planner that reads a few declarations before it answers
JUDGED_TOKENS = 3_000  # one statement, its book text and the judge's rubric
DIFF_TOKENS = 15_000  # a typical cycle's diff, report and verdicts for the Evaluator (~60,000 characters)

def preview(repo: Path, config: Config, *, skip_planner: bool = False) -> list[str]:
    paths = config.state(repo)
    git = Git(repo)
    out: list[str] = []
    say = out.append
    calls: Calls = {}
    branch, head = git.branch(), git.head()
    say(f"sync: on {branch or 'a detached HEAD'} at {head[:12]}")  # refusals: `readiness`, after the phases
    remote = config.git.remote
    say(f"sync: would fetch {remote}/{config.git.branch} and fast-forward" if git.has_remote(remote)
        else f"sync: no remote {remote!r}; the cycle stays local")
    history = read_history(paths.history)
    recorded = {r.cycle for r in history.records}
    entry = Journal(workcopy.git_dir(git)).read()
    pending: list[int] = []
    if entry is not None:
        landed = entry.commit is not None and git.is_ancestor(entry.commit, head)
        pending = [u.cycle for u in [*entry.unfinished, *([] if landed else [entry])] if u.cycle not in recorded]
    if pending:
        say(f"sync: cycle {', '.join(map(str, pending))} {'was' if len(pending) == 1 else 'were'} interrupted; "
            "it would be recorded as such")
    say(f"lock: {inspect_lock(paths.lock).status}")
    say(f"sandbox: {describe(config.sandbox)}")
    say(f"work: the Worker's working copy would be {workcopy.location(git)}")
    number = 1 + files.last_cycle(paths, [*recorded, *pending])
    roots = config.project.lean_roots
    result = census(GitTree(git, head, writes=False), roots)  # a dry run writes nothing
    say(f"baseline: cycle {number}; {result.total_sorries} sorry, {result.total_admits} admit in "
        f"{len(result.files)} Lean files ({result.lines:,} lines)")
    verified = git.run("log", "-1", "--format=%H", "--grep=^Autoformalize-Builds: yes$", head) or None
    if verified:
        lean = [p for p in git.changed_between(verified, head) if is_lean_source(p, roots)]
        say(f"baseline: {len(lean)} Lean file(s) changed since the last verified commit {verified[:12]}; "
            + ("would check them and their importers" if lean else "no build needed"))
    else:
        say(f"baseline: no verified commit yet; would run `{config.build.build_all}`")
    hk = config.housekeeping
    say(("sweep: due; would close stale issues and prune old prover results in a commit of its own"
         if due(git, head, history.records, datetime.now(UTC), hk) else "sweep: not due")
        + (f" (every {hk.sweep_interval_hours:g} hours)" if hk.sweep_interval_hours else " (off)"))
    prover = prover_for(config.prover)
    jobs = read_jobs(paths.prover_jobs).jobs
    waiting = sum(j.status is JobStatus.RETURNED and j.use is None for j in jobs)
    say(f"harvest: the external prover is off: {prover.reason}" if isinstance(prover, Off) else
        f"harvest: would poll {sum(j.open for j in jobs)} open {prover.name} job(s); {waiting} returned, not yet "
        "tried")
    old = persistent(git, head, result, datetime.now(UTC), hk.sorry_age_days, keep=False)
    est = estimate_for(config, history.records, result)
    hard = difficulty_brief(est, config)
    rules = standing_rules(repo, config.project.state_dir, "planner")  # the Planner's
    strategy = files.read_strategy(paths)
    if skip_planner:
        try:
            scope = validate(strategy or "", roots, result, config.gates)
            say(f"plan: would reuse strategy.md (Scope: {', '.join(scope)})")
        except InvalidStrategy as e:
            say(f"plan: strategy.md cannot be reused: {e}")
    else:
        pivot = cs.pivot(history.records, config.loop.stuck_cap)
        context = briefs.planner(
            plan=files.read_text(repo / config.project.plan), plan_name=config.project.plan, census=result,
            history=history.records, attempts=files.read_text(paths.attempts),
            last_result=cs.last_task_result(paths), issues=ownership.issues(git, head, paths),
            pivot=pivot, build="(checked when the cycle runs)", gates=config.gates,
            persistent=[a.describe() for a in old], difficulty_head=hard[0], difficulty=hard[1],
            reviews=held(git, head, config.gates.reviews, result),
            means=briefs.worker_means(config.agents.worker.max_turns, config.agents.worker.timeout_s,
                                      config.gates.repair_rounds))
        text = context.render()
        system = planner_prompt(rules, roots, config.project.plan)
        planner = config.agents.planner
        reads = planner.max_turns if planner.serves_tools else 1  # a session reading the files before it answers
        calls["planner"] = (_tokens(system, text), min(READING_TURNS, reads), reads)
        say(_size("plan", config.agents.planner.model, system, text) + (f"; pivot away from: {pivot}" if pivot
                                                                           else ""))
        for note in context.dropped:
            say(f"plan: left out: {note}")
    scope_files: list[str] = []
    if strategy:
        with contextlib.suppress(InvalidStrategy):  # a new strategy replaces it anyway
            scope_files = [p for p in result.files if matches(p, validate(strategy, roots))]
    w = config.agents.worker
    nxt = max((r.cycle for r in history.records), default=0) + 1
    brief = briefs.worker(strategy=strategy or "(the Planner's new strategy)", census=result,
                          scope_files=scope_files, issues=ownership.issues(git, head, paths), history=history.records,
                          rules=briefs.decides(config.gates, history.records, nxt, w.max_turns, w.timeout_s)).render()
    tools = json.dumps([{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                        for t in SPECS])
    worker = config.agents.worker
    # lean-lsp-mcp is not started for a preview: its tools' schemas are not counted, its guide is
    system = prompt(standing_rules(repo, config.project.state_dir, "worker"),
                    worker.lean_lsp_tools if worker.lean_tools == "lean-lsp-mcp" else ())
    calls["worker"] = (_tokens(system + tools, brief), min(SHORT_TURNS, worker.max_turns), worker.max_turns)
    if worker.backend in ENGINES and installed(worker.backend):
        found = coding.check(worker)
        say(f"work: {found.problem}" if found.problem else
            f"work: {found.line(worker.backend)}, in a sandbox of its own (its commands and Lean server in the one for "
            "Worker-written code)")
    say(_size("work", config.agents.worker.model, system + tools, brief)
        + f"; Lean's listing of what the Scope can alter taken first; up to {config.agents.worker.max_turns} turns, "
          f"{config.agents.worker.timeout_s}s, then the gates with up to {config.gates.repair_rounds} repair rounds")
    if config.audit.judge_in_loop:
        locked = len(read_lock(paths.statement_lock).statements)
        calls["judge"] = (JUDGED_TOKENS, 1, 1)
        judge = config.agents.judge
        say(f"judge: {judge.model} on the {judge.backend} backend reads each statement the change adds or changes "
            f"for a textbook entity; {locked} statement(s) locked as faithful")
    else:
        say("judge: off ([audit] judge_in_loop = false)")
    rubric = evaluator.prompt(facts.caps())
    calls["evaluator"] = (_tokens(rubric, "") + DIFF_TOKENS, 1, 1)
    say(_size("evaluate", config.agents.evaluator.model, rubric, "")
        + f" plus the cycle's diff (at most {evaluator.diff_budget(config.agents.evaluator, facts.caps()):,} "
          f"characters, summarized by file when larger), its report and verdicts (at most "
          f"{briefs.evaluator_rest():,})")
    every = config.loop.escalate_after
    tail = [r.score for r in history.records][-(every - 1):] if every > 1 else []
    maybe = len(tail) == every - 1 and all((s or 0) <= 0 for s in tail)  # unscored: no progress
    say(f"escalate: the Consultant {'would be called if this cycle scores ≤ 0' if maybe else 'would not be called'}")
    if maybe:
        consultant = config.agents.consultant
        calls["consultant"] = (calls.get("planner", (0, 1, 1))[0], 0,
                               consultant.max_turns if consultant.serves_tools else 1)
    say(_cost(config, calls))
    kept = ahead(config, repo, history.records, result, make=False, cost=per_cycle(config, calls))  # no simulating
    say(f"forecast: {line(kept) if kept is not None else UNMADE}")
    out.extend(f"forecast: warning: {w}" for w in (kept.warnings if kept is not None else []))  # cost beside budget
    say("land: one commit with the state files (and the Lean changes if every gate passes)"
        + (f", pushed to {remote}" if git.has_remote(remote) and config.git.push else ""))
    return out


def _tokens(system: str, user: str) -> int:
    return (len(system) + len(user)) // 4


def _cost(config: Config, calls: Calls) -> str:
    """The cycle's cost, estimated from each role's prompt and turns: a short session and the longest allowed."""
    low, high, unknown = cycle_cost(config, calls)
    worker = config.agents.worker
    budget = config.budget.per_cycle_usd
    return (f"cost: about ${low:.2f} (a Worker done in {calls['worker'][1]} turns) to ${high:.2f} (all "
            f"{worker.max_turns} turns, each reading the session from the prompt cache), at the prices of "
            f"agents/prices.toml and [prices]"
            + (f"; unpriced, so left out: {', '.join(sorted(unknown))}" if unknown else "")
            + (f"; [budget] per_cycle_usd ${budget:.2f} stops it sooner" if budget is not None and budget < high
               else ""))


def _size(phase: str, model: str, system: str, user: str) -> str:
    chars = len(system) + len(user)
    return (f"{phase}: {model}, prompt {chars:,} characters (~{chars // 4:,} tokens; system {len(system):,}, "
            f"context {len(user):,})")
