"""One cycle of the loop, phase by phase (SPEC §5):

    sync → baseline → sweep → plan → work (gates, repair rounds) → judge → overlap → evaluate → escalate → bookkeeping
    → land

Every change is made in the Worker's working copy; the user's checkout only
ever moves by a fast-forward to the cycle's one commit, which holds the state
files and, if every gate passed, the Lean changes. A journal in the git
directory lets the next cycle recover from a process killed at any point.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from datetime import datetime
from pathlib import Path
from typing import Protocol

import structlog

from agents import briefs, consultant, evaluator, planner
from agents.config import AgentConfig
from agents.consultant import NoAdvice
from agents.gitread import GitReader
from agents.lookup import Lookup
from agents.model import RateLimited
from agents.planner import PlanFailed
from agents.prices import window_of
from agents.provers.desk import Desk
from agents.reader import Bounds, Reader
from agents.tools import SCRATCH, TRY, Tool, Workspace, dependencies
from agents.worker import Limits, Stop
from audit import ask
from audit import overlap as mathlib
from audit.book import Book
from audit.judge import Score
from audit.loop import (
    RESTATEMENT,
    finding_files,
    issue_slug,
    issue_text,
    judge_changes,
    restatements,
    settles,
    update_lock,
)
from audit.rests import Support
from gates import directives, regate, successors
from gates.base import GateInput, GateResult
from gates.build import reading
from gates.census import census
from gates.chosen import shown
from gates.integrity import VANISHED, restated
from gates.listing import chain, toolchain
from gates.meaning import changed_meanings
from gates.probe import RUNS
from gates.registry import run_gates
from gates.sandbox import warn_if_off
from gates.scope import InvalidStrategy, matches
from gates.tree import DirTree, is_lean_source
from orchestrator import (
    blame,
    buildoutputs,
    collector,
    facts,
    fallback,
    housekeeping,
    ignores,
    kernelcheck,
    outlook,
    ownership,
    pause,
    rules,
    workcopy,
)
from orchestrator import cyclestate as cs
from orchestrator.buildcheck import BuildStatus
from orchestrator.buildcheck import check as check_build
from orchestrator.config import CONFIG_FILE, Config
from orchestrator.cyclestate import Cycle, Interrupted, Options, budget_of
from orchestrator.deps import Deps
from orchestrator.engine import runs_here
from orchestrator.git import NETWORK_TIMEOUT_S, Git, GitTree
from orchestrator.journal import Entry, Journal, Unfinished
from orchestrator.liveness import Beat
from orchestrator.outlook import brief, hard_targets
from orchestrator.targets import uses
from orchestrator.verdicts import held
from orchestrator.verdicts import land as land_verdicts
from state import files, reviews
from state.atomic import write_atomic
from state.errors import InfraError, UsageError
from state.history import HistoryRecord, Outcome, Usage, append_record, parse_history, read_history
from state.lock import RunLock
from state.pairing import write_pairing
from state.prover_jobs import ProverJobs
from state.statement_lock import read_lock, write_lock

log = structlog.get_logger()
PUSH_ATTEMPTS = 3
FORESEE_S = 600.0  # the forecast for thousands of open targets takes about half a minute
PROVER_CALL_S = 30.0  # aristotlelib's request timeout
COMMITS_SHOWN = 15  # subjects of the latest commits, in the Planner's context
PROVER_CALLS = 6  # requests a harvest may make for one open job: a poll (2), then a fetch or a cancel (3 each)

__all__ = ["Interrupted", "Options", "run_cycle"]


def run_cycle(repo: Path, config: Config, deps: Deps, options: Options, *, beat: Beat | None = None
              ) -> tuple[HistoryRecord, Cycle]:
    """Run one cycle; its record, whatever the outcome.

    Alone, it takes the run lock and beats its own heartbeat; under the daemon, which holds the lock for its
    whole life, it beats the daemon's. A stop request abandons it at the next safe point (`Interrupted`).
    """
    paths = config.state(repo)
    if config.parallel.workers > 1:
        runs_here(config.parallel.engine)
    with contextlib.ExitStack() as stack:
        if beat is None:
            stack.enter_context(RunLock(paths.lock))
            beat = stack.enter_context(Beat(paths.heartbeat, config.loop.heartbeat_s, deps.clock))
        git = Git(repo)
        collector.settle()
        c = Cycle(repo, config, deps, options, git, paths, Journal(workcopy.git_dir(git)), deps.clock.now())
        start(c, beat)
        if config.parallel.workers > 1:  # the Planner's items, each its own Worker, through the merge queue
            from orchestrator import round as parallel
            done = parallel.run(c, beat)
        else:
            advance(c, beat, plan, work, judge, overlap, evaluate, escalate)
            done = conclude(c, beat)
        beat.phase("foresee", FORESEE_S, cycle=c.number)
        foresee(c)
        return done


def start(c: Cycle, beat: Beat) -> None:
    """Everything before the plan: the branch caught up, the base counted and built, the sweep, the prover's jobs."""
    git_s = float(NETWORK_TIMEOUT_S)
    beat.phase("sync", 2 * git_s)
    sync(c)
    beat.phase("baseline", 3 * c.config.build.timeout_s + git_s)
    baseline(c)
    beat.phase("sweep", 2 * git_s)
    sweep(c)
    open_desk(c)
    beat.phase("harvest", PROVER_CALLS * PROVER_CALL_S * max(1, len(c.desk.open_jobs()) if c.desk else 0))
    harvest(c)
    send_hard(c)


class Phase(Protocol):
    __name__: str

    def __call__(self, c: Cycle) -> None: ...


def advance(c: Cycle, beat: Beat | None, *phases: Phase) -> None:
    """Run `phases` in order, each within its time limit (beside a round's other items, without a beat of its
    own), until one ends the cycle in an error."""
    agents = c.config.agents
    limits = {plan: agents.planner.timeout_s, work: agents.worker.timeout_s, judge: agents.judge.timeout_s,
              overlap: c.config.audit.mathlib_timeout_s, evaluate: agents.evaluator.timeout_s,
              escalate: agents.consultant.timeout_s}
    for phase in phases:
        if c.outcome is Outcome.ERROR or (c.paused_until is not None and c.outcome is not Outcome.ACCEPTED):
            break  # failed, or paused by a rate limit with nothing to land: nothing to judge or evaluate
        _checkpoint(c)
        limit = limits[phase]
        if phase is work:  # the base's listing, then the gates and their repair rounds (build, listing, replay,
            # the successors' compiles)
            rounds = c.config.gates.repair_rounds + 1
            limit += (RUNS + rounds * (3 + RUNS + successors.RUNS)) * c.config.build.timeout_s
        if phase is judge:  # each changed declaration's entity once, an unreadable answer asked again
            limit *= 2 * max(1, len(c.altered))
        if phase is overlap and c.after is not None:  # the imports built, then one probe per theorem closed
            limit = limit * max(1, len(mathlib.closed(c.census, c.after))) + c.config.build.timeout_s
        if beat is not None:
            beat.phase(phase.__name__, limit, cycle=c.number)
        try:
            phase(c)
        except RateLimited as e:  # no failure and no stall: the loop waits until the limit lifts
            c.pause(f"{phase.__name__}: {e}", e.until)
            if phase in (plan, work):
                c.outcome = Outcome.NO_CHANGE
        except InfraError as e:
            log.error("cycle.infrastructure", phase=phase.__name__, error=str(e))
            if phase in (plan, work):
                c.fail(f"{phase.__name__}: {e}", infra=True)
            else:  # the judge, the Evaluator and the Consultant advise: a change that passed the gates lands
                c.error, c.infra = f"{phase.__name__}: {e}", True


def conclude(c: Cycle, beat: Beat) -> tuple[HistoryRecord, Cycle]:
    """Bookkeeping and landing: from here to the end the cycle runs to completion, its writes and its commit
    being the transaction."""
    _checkpoint(c)
    git_s = float(NETWORK_TIMEOUT_S)
    beat.phase("bookkeeping", git_s, cycle=c.number)
    bookkeeping(c)
    beat.phase("land", PUSH_ATTEMPTS * (2 * git_s + 2 * c.config.build.timeout_s), cycle=c.number)
    land(c)
    if c.work is not None:  # the outputs the gates built for a change that landed stay; others go
        keep = c.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE)
        buildoutputs.settle(c.work.root, keep, c.config.project.lake_dir)
    assert c.record is not None
    return c.record, c


def foresee(c: Cycle) -> None:
    """After landing: the forecast for the checkout as it now stands, made and kept (`orchestrator.outlook.ahead`)
    so that `status` and the dry run show it at once; not when a stop was asked for (`forecast` makes it). The
    cycle is over and landed: whatever fails here is logged, never raised into the run."""
    if c.options.stop.is_set():
        return
    try:
        history = read_history(c.paths.history)
        outlook.ahead(c.config, c.repo, history.records, outlook.tree_of(c.repo, c.config))
    except Exception as e:  # a forecast is advice: the run goes on without it
        log.warning("cycle.forecast_failed", cycle=c.number, error=f"{type(e).__name__}: {str(e)[:300]}")


def _rules(c: Cycle, role: str) -> str:
    return rules.rules(c.repo, c.config.project.state_dir, role)


def _checkpoint(c: Cycle) -> None:
    if c.options.stop.is_set():
        log.warning("cycle.stopping", cycle=c.number)
        raise Interrupted(f"cycle {c.number} was stopped before it landed")


# -- phases ------------------------------------------------------------------


def sync(c: Cycle) -> None:
    """Recover from an interrupted cycle, refuse the user's uncommitted work, catch up with the remote."""
    branch = c.git.branch()
    if branch != c.config.git.branch:
        raise UsageError(f"the checkout is on {branch or 'a detached HEAD'}, not {c.config.git.branch}; "
                         f"check out {c.config.git.branch} (or set [git] branch)")
    if (workcopy.git_dir(c.git) / "index.lock").exists():
        raise UsageError("the git index is locked (.git/index.lock): another git command is running, or one was "
                         "killed; if none is running, delete .git/index.lock")
    if excluded := ignores.swallowed(c.git, c.paths, c.config.project.plan, CONFIG_FILE):
        raise UsageError(ignores.refusal(excluded))
    entry = c.found = c.journal.read()
    if entry is not None and entry.commit is not None and c.git.head() == entry.base:
        _undo_partial_merge(c, entry)
    dirty = _users_changes(c)
    if dirty:
        raise UsageError(f"uncommitted changes in {', '.join(dirty[:10])}{' …' if len(dirty) > 10 else ''}; "
                         "commit or stash them first, so a cycle never mixes your work with its own")
    remote, name = c.config.git.remote, c.config.git.branch
    if c.git.has_remote(remote):
        try:
            remote_head = c.git.fetch(remote, name)
        except InfraError as e:  # work on; this cycle's push (or a later one's) carries the commits
            log.warning("sync.remote_unreachable", remote=remote, error=str(e)[:300])
            remote_head = None
        head = c.git.head()
        if remote_head is not None and remote_head != head:
            if c.git.is_ancestor(head, remote_head):
                c.git.merge_ff(remote_head)
            elif not c.git.is_ancestor(remote_head, head):
                raise UsageError(f"{name} and {remote}/{name} have diverged; reconcile them (for instance "
                                 f"`git pull --rebase`; the loop never forces a push)")
    elif entry is not None and entry.commit and c.git.is_ancestor(c.git.head(), entry.commit):
        c.git.merge_ff(entry.commit)  # no remote: the finished commit lands as it is
    # People's verdicts, pushed at once: a verdict only the cycle's push carried would be left out of its commit
    # when that push loses a race (the change is redone on the remote's head); unreachable, the cycle's push does.
    try:
        landed = land_verdicts(c.git, c.config, c.paths, push=c.options.push)
    except InfraError as e:
        log.warning("sync.verdicts_not_pushed", error=str(e)[:300])
        landed = land_verdicts(c.git, c.config, c.paths, push=False)
    if landed.commits:
        log.info("sync.verdicts_landed", commits=[h[:12] for h in landed.commits])
    if landed.message:
        log.warning("sync.verdicts_waiting", waiting=landed.waiting, why=landed.message)
    c.base = c.git.head()
    if entry is None:
        return
    unfinished = list(entry.unfinished)
    if not (entry.commit and c.git.is_ancestor(entry.commit, c.base)):
        unfinished.append(entry)
    recorded = {r.cycle for r in read_history(c.paths.history).records}
    for u in sorted(unfinished, key=lambda u: u.cycle):  # a round's items: the one landing is the entry
        if u.cycle in recorded:  # a journal older than what the branch holds
            continue
        c.adopted += u.prover_jobs
        c.interrupted.append(_interrupted(u, c.started_at))
        log.warning("cycle.recovered", interrupted=u.cycle)


def _interrupted(u: Unfinished, now: datetime) -> HistoryRecord:
    """The record of a cycle that did not land: its own, when it got as far as writing one."""
    if u.record is not None and u.record.cycle == u.cycle:
        if u.record.outcome is Outcome.INTERRUPTED:  # recorded so already, by an earlier recovery
            return u.record
        was = u.record.outcome.value if u.record.outcome else "recorded"
        return u.record.model_copy(update={
            "outcome": Outcome.INTERRUPTED, "finished_at": now,
            "summary": f"interrupted ({was}, then its commit failed; its changes were discarded): "
                       f"{u.record.summary}"})
    costs = u.costs
    return HistoryRecord(
        cycle=u.cycle, started_at=datetime.fromisoformat(u.started_at), finished_at=now,
        outcome=Outcome.INTERRUPTED, base=u.base, usage=u.usage, costs=costs, served_by=u.served_by,
        cost_usd=None if None in costs.values() else round(sum(v or 0.0 for v in costs.values()), 6),
        summary=f"interrupted: process {u.pid} stopped before the cycle landed; its changes were discarded")


def baseline(c: Cycle) -> None:
    """Number the cycle, open the journal, prepare the working copy, count sorries, check the build."""
    c.history = read_history(c.paths.history)
    c.ledger.budget = budget_of(c.config.budget, [*c.history.records, *c.interrupted], c.started_at)
    c.number = 1 + files.last_cycle(c.paths, [*(r.cycle for r in c.history.records), *(r.cycle for r in c.interrupted)])
    c.entry = Entry(cycle=c.number, base=c.base, pid=os.getpid(), started_at=c.started_at.isoformat(),
                    unfinished=[Unfinished(cycle=r.cycle, base=r.base or "", pid=0,
                                           started_at=(r.started_at or c.started_at).isoformat(), usage=r.usage,
                                           costs=r.costs, served_by=r.served_by, record=r)
                                for r in c.interrupted], prover_jobs=c.adopted)
    c.journal.write(c.entry)
    c.ledger.on_charge = lambda ledger: _journal(c, usage=ledger.usage(), costs=ledger.costs(),
                                                 served_by=ledger.served_by())
    warn_if_off(c.config.sandbox)
    try:
        _prepare(c)
    except Exception:
        # Nothing was spent (no `lake`, a broken toolchain): one more "interrupted" cycle would say what did not
        # happen. A kill here still leaves this cycle's entry, and the next cycle records it.
        if c.found is None:
            c.journal.clear()
        else:
            c.journal.write(c.found)
        raise
    assert c.build is not None
    log.info("cycle.baseline", cycle=c.number, base=c.base[:12], sorries=c.census.holes, builds=c.build.ok)


def _prepare(c: Cycle) -> None:
    """The working copy, the census, the book's text, the build and Lean's baseline, at the base."""
    c.work = workcopy.prepare(c.git, c.base, c.config.project.lake_dir)
    roots = c.config.project.lean_roots
    c.census = census(GitTree(c.git, c.base), roots)
    c.people = held(c.git, c.base, c.config.gates.reviews, c.census)
    if c.config.audit.judge_in_loop:  # the book's text as the base has it, never as a Worker may edit it
        c.book = Book.at(GitTree(c.git, c.base), c.base, c.census, c.config.audit, c.config.project.state_dir,
                         c.number)
        c.pairing = c.book.pairing(c.census)
    verified = c.git.run("log", "-1", "--format=%H", "--grep=^Autoformalize-Builds: yes$", c.base) or None
    c.build = check_build(
        compiler=c.deps.compiler(c.work.root), verified=GitTree(c.git, verified) if verified else None,
        changed_since=c.git.changed_between(verified, c.base) if verified else None, work=DirTree(c.work.root),
        build_config=c.config.build, lean_roots=roots, ci=c.deps.ci.conclusion(c.base) if c.deps.ci else None)
    kernelcheck.baseline(c, builds=c.build.ok)


def sweep(c: Cycle) -> None:
    """When one is due, the sweep's commit in the working copy on the base, which becomes the cycle's base.

    The journal keeps the branch's commit as its base, so recovery undoes the sweep with the rest; a cycle that
    does not land, or lands on a remote that moved (`_rebase` starts again from the remote's head), drops it."""
    assert c.work is not None
    hk = c.config.housekeeping
    if not housekeeping.due(c.git, c.base, c.history.records, c.started_at, hk):
        return
    wp = c.work_paths
    try:
        mentions = housekeeping.mentions(files.read_strategy(wp), files.read_text(c.work.root / c.config.project.plan),
                                         c.history.records, hk.issue_stale_cycles)
        persistent = blame.persistent(c.git, c.base, c.census, c.started_at, hk.sorry_age_days)
        _, c.base = housekeeping.sweep(c.work, wp, c.census, c.number, c.started_at, mentions, persistent, hk)
    except (InfraError, OSError) as e:  # housekeeping never costs a cycle: the next one tries again
        log.error("cycle.sweep_failed", error=str(e)[:300])
        c.work.reset_hard(c.base)
        c.work.clean()


def open_desk(c: Cycle) -> None:
    """The external prover's jobs as the base has them, with those interrupted cycles submitted."""
    c.desk = Desk.open(c.config.prover, c.deps.prover, c.work_paths.prover_jobs, c.work_paths.prover_results,
                       c.deps.clock.now, c.number, c.config.project.state_dir, c.adopted)
    c.desk.on_submit = lambda job: _journal(c, prover_jobs=[*c.entry.prover_jobs, job] if c.entry else [job])


def harvest(c: Cycle) -> None:
    """Poll the external prover's open jobs: fetch the returned, cancel the overdue and those the Worker beat."""
    assert c.desk is not None
    c.desk.harvest(c.census)


def send_hard(c: Cycle) -> None:
    """The open targets that keep failing, to the external prover (`[difficulty] prover_after`, `prover_below_p`):
    the Planner then sees them among its jobs."""
    if c.desk is None or c.desk.off or c.config.difficulty.prover_after is None or c.work is None:
        return
    names = hard_targets(cs.estimate_of(c), c.desk.jobs, c.config)
    if names:
        log.info("difficulty.to_prover", targets=names)
        c.desk.send(names, DirTree(c.work.root), c.census, "hard target")


def _journal(c: Cycle, **update: object) -> None:
    """What a cycle that never lands must still leave (its spend, its prover jobs), journaled at once."""
    assert c.entry is not None
    c.entry = c.entry.model_copy(update=update)
    c.journal.write(c.entry)


def plan(c: Cycle) -> None:
    """strategy.md: the current one (--skip-planner), the fixed "fix the build" one, or the Planner's."""
    roots = c.config.project.lean_roots
    assert c.build is not None
    try:
        if c.options.skip_planner:
            text = files.read_strategy(c.paths) or ""
            c.plan = planner.read(text, Usage(), roots, c.census, c.config.gates, c.config.parallel.workers)
        elif not c.build.ok:
            if not c.build.failing:
                raise InfraError(f"the branch does not build and no failing file could be named: {c.build.detail}")
            c.plan = planner.fix_build_strategy(c.build.failing, c.build.errors)
        else:
            c.pivot = cs.pivot(c.history.records, c.config.loop.stuck_cap)
            hard = brief(cs.estimate_of(c), c.config)  # the targets' difficulty, for the Planner to aim by
            w = c.config.agents.worker
            written = files.read_text(c.repo / c.config.project.plan)
            context = briefs.planner(
                plan=written, plan_name=c.config.project.plan,
                census=c.census, history=c.history.records, attempts=files.read_text(c.paths.attempts),
                last_result=cs.last_task_result(c.paths), issues=ownership.issues(c.git, c.base, c.paths),
                pivot=c.pivot, build=c.build.detail, gates=c.config.gates,
                prover=cs.prover_summary(c),
                persistent=[a.describe() for a in blame.persistent(c.git, c.base, c.census, c.started_at,
                                                                   c.config.housekeeping.sorry_age_days)],
                locked=sorted(n for n in read_lock(c.paths.statement_lock).statements
                              if n not in reviews.rejected(c.people)) if c.config.audit.judge_in_loop else [],
                commits=c.git.run("log", f"-{COMMITS_SHOWN}", "--format=%h %s", c.base),
                overlap=mathlib.told(c.history.records, c.census), difficulty_head=hard[0], difficulty=hard[1],
                reviews=c.people, means=briefs.worker_means(w.max_turns, w.timeout_s, c.config.gates.repair_rounds),
                cycle=c.number)
            c.plan = planner.plan(c.deps.model("planner", c.ledger), rules=_rules(c, "planner"),
                                  context=context.render(), lean_roots=roots, census=c.census, gates=c.config.gates,
                                  bounds=read_only(c, c.config.agents.planner, context.nonce),
                                  plan_name=c.config.project.plan, workers=c.config.parallel.workers,
                                  plan_chars=planner.room(written))
    except InvalidStrategy as e:
        c.fail(f"strategy.md cannot be used: {e}", infra=False)
    except PlanFailed as e:  # the last valid Scope carries the cycle; the record says why
        c.planner_failed = str(e)
        c.plan = fallback.plan(c.history.records, str(e), roots, c.census, c.config.gates)
        if c.plan is None:
            c.fail(str(e), infra=False)


def work(c: Cycle) -> None:
    """The Worker's session, then the gates; a failing gate's report goes back to it for a repair round."""
    assert c.plan is not None and c.work is not None
    cfg = c.config
    compiler = c.deps.compiler(c.work.root)
    kernelcheck.base_facts(c, builds=c.build is not None and c.build.ok)
    if c.desk is not None:  # the strategy's `PROVER:` lines, before the Worker may submit its own
        c.desk.request(c.plan.text, DirTree(c.work.root), c.census)
    workspace = Workspace(c.work.root, [*c.plan.scope, f"{SCRATCH}/"], ownership.protected(cfg),
                          cfg.project.state_dir, cfg.project.lean_roots, compiler, desk=c.desk, gates=cfg.gates,
                          secrets=c.deps.secrets, lake_dir=cfg.project.lake_dir,
                          extra=[_lookup(c).tool(), *GitReader(c.repo, c.base).tools()])
    w = cfg.agents.worker
    model = cs.worker_model(c)  # the hard model for a target the difficulty model finds hard
    limits = Limits(w.max_turns, w.timeout_s, w.token_budget, window=window_of(model, w.context_tokens),
                    result_chars=w.tool_result_chars, keep_results=w.keep_tool_results)
    c.session = c.deps.session(workspace, _rules(c, "worker"), limits, c.ledger, c.options.stop,
                               model=None if model == w.model else model)
    scope_files = [p for p in c.census.files if matches(p, c.plan.scope)]
    # What the session's compiles write there is undone before any gate runs.
    buildoutputs.take(c.work.root, cfg.project.lake_dir)
    aimed = [*cs.targets(c), *directives.restatements(c.plan.text)]
    brief = briefs.worker(strategy=c.plan.text, census=c.census, scope_files=scope_files,
                          issues=ownership.issues(c.git, c.base, c.paths), prover=cs.prover_summary(c),
                          gates=cfg.gates, overlap=mathlib.told(c.history.records, c.census),
                          uses=uses(c.census, aimed), reviews=c.people, targets=aimed, history=c.history.records,
                          cycle=c.number,
                          rules=briefs.decides(cfg.gates, c.history.records, c.number, w.max_turns, w.timeout_s))
    try:
        c.session.run(brief.render())
        for attempt in range(cfg.gates.repair_rounds + 1):
            _checkpoint(c)
            if gate(c):
                break
            if attempt == cfg.gates.repair_rounds or c.session.rounds[-1].stop not in (Stop.FINISHED, Stop.ENDED):
                c.outcome = Outcome.REJECTED  # out of rounds, or the session ended at a limit: none would follow
                break
            c.session.resume(cs.feedback(c.gates, attempt + 1, cfg.gates.repair_rounds))
        _checkpoint(c)
        limited(c)
        if c.desk is not None:  # the report's `PROVER:` lines, on the tree that lands
            landing = c.after is not None
            c.desk.request(c.session.report(), DirTree(c.work.root) if landing else GitTree(c.git, c.base),
                           c.after or c.census)
    finally:
        c.session.close()
        if c.work.head() != c.base:  # a coding-agent session committed on its own: squash it into one change
            c.work.run("reset", "--soft", c.base)
        if c.work.dirty():
            c.worker_commit = c.work.commit_all(f"autoformalize: worker changes of cycle {c.number} (scratch)")


def limited(c: Cycle) -> None:
    """A Worker's session a rate limit or usage cap stopped: the loop pauses (what the Worker did before the limit
    was gated as usual, and lands if it passed; a cycle that landed nothing is `paused`)."""
    stopped = next((r for r in c.session.rounds if r.stop is Stop.LIMITED), None) if c.session else None
    if stopped is None:
        return
    assert c.session is not None
    c.pause(f"work: {stopped.report}", c.session.limited_until)
    if c.outcome is None:
        c.outcome = Outcome.NO_CHANGE


def gate(c: Cycle, since: tuple[set[str], set[str]] | None = None) -> bool:
    """Run every gate on the working copy against the base; True (and the outcome set) when all pass. With `since`
    (the paths the change changed from the base it passed on, and those the branch changed from it since), the
    build and kernel gates take again only what the combination can change (`gates.regate`)."""
    assert c.work is not None and c.plan is not None
    workcopy.unflag(c.work)  # what the gates read, the build compiles and git commits: one and the same
    workcopy.drop_scratch(c.work, c.base)
    cfg = c.config
    gates = cfg.gates.model_copy(update={"protected": ownership.protected(cfg)})
    buildoutputs.restore(c.work.root, cfg.project.lake_dir)
    inp = GateInput(base=GitTree(c.git, c.base), changed=DirTree(c.work.root), gates=gates, build=cfg.build,
                    lean_roots=cfg.project.lean_roots, state_dir=cfg.project.state_dir, scope=c.plan.scope,
                    report=c.session.report() if c.session else "", cycle=c.number, history=c.history.records,
                    compiler=c.deps.compiler(c.work.root), base_census=c.census,
                    candidates=_candidates(c.work, c.base), strategy=c.plan.text,
                    locked={name: s.hash for name, s in read_lock(c.paths.statement_lock).statements.items()}
                    if cfg.audit.judge_in_loop else {}, paired=frozenset(c.pairing),
                    approved=reviews.approved(c.people), rejected=frozenset(reviews.rejected(c.people)),
                    secrets=c.deps.secrets,
                    kernel_base=c.kernel, kernel_cache=kernelcheck.cache_of(c.git))
    if since is not None:
        relocked = {n for n in inp.locked.keys() | c.locked.keys() if inp.locked.get(n) != c.locked.get(n)}
        inp.recheck = regate.plan(inp.after, *since, cfg.project.lean_roots,
                                  build_time_code=gates.allow_build_time_code, relocked=relocked)
    c.locked = inp.locked
    gated = _fingerprint(c.work)
    c.gates = run_gates(inp) + [g for g in c.gates if g.name == RESTATEMENT]  # the judge's, on a re-run
    kernelcheck.learn(c, inp)
    c.changed = [ch.path for ch in inp.changes]
    written = _changed_since(gated, _fingerprint(c.work))
    if written:  # code of the change ran in the build and wrote files the other gates never saw
        c.gates.append(GateResult("build", False, f"files changed while the build ran: {', '.join(written[:20])}; "
                                                  "a change may not write files when it is compiled"))
    if not all(g.passed for g in c.gates):
        return False
    lean = any(is_lean_source(p, cfg.project.lean_roots) for p in c.changed)
    c.outcome = Outcome.ACCEPTED if lean else Outcome.NO_CHANGE
    c.after = inp.after
    c.altered = changed_meanings(c.census, inp.after)
    c.broken = inp.broken_successors
    c.defaults = inp.defaults
    c.restated = restated(inp) if cfg.audit.judge_in_loop else {}
    return True


def judge(c: Cycle) -> None:
    """The judge reads each statement the accepted change added or changed for a textbook entity."""
    if c.outcome is not Outcome.ACCEPTED or not c.config.audit.judge_in_loop:
        return
    assert c.after is not None and c.book is not None
    now = c.book.pairing(c.after)
    joined = set(now) - set(c.pairing)  # pairings the change makes: judged as they land
    moved = {c.pairing[n] for n, what in c.restated.items() if what == VANISHED and n in c.pairing}
    left = {n for n, entity in now.items() if entity in moved}  # what an entity that lost a statement pairs with
    if not c.altered and not c.restated and not joined:
        return
    changed = set(c.altered) | set(c.restated) | joined | left
    try:
        c.judged = judge_changes(c.deps.model("judge", c.ledger), c.book.entities(c.after, changed), changed, c.after,
                                 context_chars=c.config.audit.context_chars, broken=c.broken,
                                 defaults=c.defaults)
    except InfraError as e:  # a restatement lands only on the judge's word: without one, it does not
        if c.restated:
            c.gates.append(GateResult(RESTATEMENT, False, f"the judge could not be asked ({e}); a restatement "
                                                          "lands only when judged faithful or stronger"))
            c.outcome = Outcome.REJECTED
        raise
    lock = read_lock(c.paths.statement_lock).statements
    entity_of = {**{n: s.entity for n, s in lock.items()}, **c.pairing}
    # A statement only a person's approval locks (a definition the book pairs with nothing) has no text of the
    # book to be judged against: the person's approval of its restatement, which the integrity gate asked, holds it.
    book = {n: what for n, what in c.restated.items() if n in entity_of}
    if book:
        c.gates.append(restatements(c.judged, book, entity_of))
        if not c.gates[-1].passed:
            c.outcome = Outcome.REJECTED
    for j in c.judged:
        log.info("cycle.judged", entity=j.entity.id, score=j.verdict.score, error=j.verdict.error)


def overlap(c: Cycle) -> None:
    """With `[audit] mathlib_check`, each theorem the accepted change closed tried with `exact?` (as `audit --mathlib`
    does, its answers kept with the audit's): one the library alone closes is recorded, and told to the next Planner
    and Worker."""
    cfg = c.config
    if c.outcome is not Outcome.ACCEPTED or cfg.audit.mathlib_check != "on" or c.after is None or c.work is None:
        return
    roots = cfg.project.lean_roots
    found = mathlib.targets(c.after, Support(c.after, roots), set(mathlib.closed(c.census, c.after)))
    if not found:
        return
    keyed = chain(toolchain(c.work.root / cfg.project.lake_dir), DirTree(c.work.root), roots, cfg.gates,
                  cfg.project.state_dir)
    seen, _ = mathlib.constants(c.after, {t.path for t in found}, c.after.lean)
    asked = ask.ask(found, c.deps.compiler(c.work.root), kernelcheck.answers_of(c.git), ask.keys(found, c.after, keyed),
                    limit_s=float(cfg.audit.mathlib_timeout_s), workers=cfg.parallel.builds())
    results = mathlib.tried(found, asked, seen)
    c.overlaps = mathlib.notes(results)
    log.info("cycle.mathlib", tried=len(results), overlap=[n.declaration for n in c.overlaps],
             timeouts=sum(r.status is mathlib.Status.TIMEOUT for r in results))


def evaluate(c: Cycle) -> None:
    """The Evaluator scores the cycle, within what the facts allow (`orchestrator/facts.py`)."""
    assert c.session is not None and c.work is not None
    diff = c.work.run("diff", c.base, c.worker_commit) if c.worker_commit else "(no change)"
    oversized, cap = cs.oversized(c), c.config.gates.file_cap_lines
    caps = facts.caps()
    context = briefs.evaluator(diff=diff, report=c.session.report(), gates=cs.verdicts(c.gates),
                               outcome=str(c.outcome), history=c.history.records,
                               attempts=files.read_text(c.paths.attempts), faithfulness=cs.faithfulness(c),
                               oversized="\n".join(f"- {shown(g.path)}: {g.old:,} → {g.new:,} lines (cap {cap:,})"
                                                    for g in oversized),
                               facts=cs.facts(c).render(), strategy=c.plan.text if c.plan else "",
                               target=briefs.current_target(files.read_text(c.repo / c.config.project.plan)),
                               diff_chars=evaluator.diff_budget(c.config.agents.evaluator, caps))
    verdict = evaluator.evaluate(c.deps.model("evaluator", c.ledger), context.render(), caps)
    c.evaluation = cs.capped(c, verdict.evaluation)


def escalate(c: Cycle) -> None:
    """After `escalate_after` cycles in a row without progress by the facts (and not again for as long), the
    Consultant."""
    every = c.config.loop.escalate_after
    progress = [r.made_progress for r in pause.counted(c.history.records)] + [cs.facts(c).progress]
    if len(progress) < every or any(progress[-every:]):
        return
    consulted = [r.cycle for r in c.history.records if r.consultant]
    if consulted and c.number - max(consulted) < every:
        return
    context = briefs.consultant(blocker=c.evaluation.stuck_on if c.evaluation else "", history=c.history.records,
                                attempts=files.read_text(c.paths.attempts),
                                issues=ownership.issues(c.git, c.base, c.paths),
                                census=c.census, outcome=str(c.outcome), report=c.session.report() if c.session else "",
                                strategy=c.plan.text if c.plan else "",
                                target=briefs.current_target(files.read_text(c.repo / c.config.project.plan)),
                                cycle=c.number)
    assert c.work is not None
    lookup = _lookup(c)
    try:
        advice = consultant.consult(c.deps.model("consultant", c.ledger), rules=_rules(c, "consultant"),
                                    context=context.render(), lookup=lookup,
                                    bounds=read_only(c, c.config.agents.consultant, context.nonce, lookup))
    except NoAdvice as e:  # the next cycle without progress asks again
        log.warning("cycle.no_advice", error=str(e))
        c.error = f"escalate: {e}; no advice this cycle"
        return
    c.advice = advice.text


def bookkeeping(c: Cycle) -> None:
    """Write the cycle's state files into the working copy, on its base, with the Lean changes if they passed."""
    assert c.work is not None
    work, wp = c.work, c.work_paths
    work.reset_hard(c.base)
    work.clean()
    if c.worker_commit is not None and c.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE):
        work.run("cherry-pick", "--no-commit", c.worker_commit)  # a rejected change lands none of its files
    if c.plan is not None and not c.options.skip_planner:
        files.write_strategy(wp, c.item.strategy if c.item else c.plan.text)
    if c.plan is not None and c.plan.plan_update is not None:  # the Planner's alone: plan.md is the Worker's never
        write_atomic(work.root / c.config.project.plan, c.plan.plan_update)
    if c.session is not None:
        files.write_task_result(wp, c.number, cs.task_result(c))
    if c.advice:
        files.write_issue(wp, c.advice_slug, c.advice)
    accepted = c.outcome is Outcome.ACCEPTED and c.after is not None
    if c.book is not None:
        ledger = c.book.record(c.after if accepted else None)
        if c.book.migrated or ledger != c.book.read:
            write_pairing(wp.pairing, ledger)
        if c.book.migrated:  # its texts are the ledger's now
            wp.book_text.unlink(missing_ok=True)
    if c.config.audit.judge_in_loop:
        read = read_lock(c.paths.statement_lock)
        lock = c.book.realign(read) if c.book is not None and c.book.migrated else read
        if accepted and c.after is not None:
            lock = update_lock(lock, c.judged, set(c.altered), c.after, c.number, fingerprints=c.fingerprints,
                               toolchain=c.kernel.toolchain if c.kernel else None,
                               rejected=set(reviews.unanswered(c.people)),
                               orphans=reviews.orphaned(c.people, c.after.named))
        if lock != read:
            write_lock(wp.statement_lock, lock)
    if accepted and c.config.audit.judge_in_loop:
        for j in c.judged:
            held = finding_files(wp.issues, j.entity.id)
            if j.verdict.score == Score.DIFFERENT:
                files.write_issue(wp, issue_slug(j.entity.id), issue_text(j, c.number))
                held = [p for p in held if p.stem != issue_slug(j.entity.id)]  # one under an older name: replaced
            elif not settles(j, c.history.records):  # else the statements it was about are judged faithful now
                held = []
            for path in held:
                path.unlink()
    if c.desk is not None:
        c.desk.settle(c.census, c.outcome is Outcome.ACCEPTED, c.after)
        c.desk.write(wp.prover_jobs, wp.prover_results)
    if c.evaluation is not None and c.evaluation.attempts_update.strip():
        files.append_attempt(wp, c.number, c.evaluation.attempts_update)
    c.record = cs.record(c)
    for record in [*c.interrupted, c.record]:
        append_record(wp.history, record)
    files.write_cycle(wp, c.number)


def land(c: Cycle) -> None:
    """Commit in the working copy, push (re-applying onto a remote that moved), fast-forward the branch."""
    assert c.work is not None and c.entry is not None
    remote, name = c.config.git.remote, c.config.git.branch
    c.entry = c.entry.model_copy(update={"record": c.record})
    c.journal.write(c.entry)
    for _ in range(PUSH_ATTEMPTS):
        c.commit = c.work.commit_all(cs.commit_message(c))
        c.entry = c.entry.model_copy(update={"commit": c.commit})
        c.journal.write(c.entry)
        if not (c.options.push and c.config.git.push and c.git.has_remote(remote)):
            break
        pushed = c.work.push(remote, c.commit, name)
        if pushed.pushed:
            break
        if not pushed.rejected:
            log.warning("cycle.push_failed", error=pushed.message[:300])  # a later cycle's push carries it
            break
        new_base = c.git.fetch(remote, name)
        if new_base is None:
            raise InfraError(f"{remote} rejected the push and has no branch {name}: {pushed.message}")
        _rebase(c, new_base)
    else:
        raise InfraError(f"{remote}/{name} kept moving; the cycle's commit {c.commit} was not pushed")
    assert c.commit is not None
    edited = _users_changes(c)
    if edited:  # the user edited the checkout during the cycle: never overwrite that
        raise UsageError(f"cycle {c.number} is committed as {c.commit[:12]}, but your checkout has uncommitted "
                         f"changes ({', '.join(edited[:10])}); `git stash` them, run the next cycle (it "
                         "fast-forwards to this one first), then `git stash pop`")
    c.journal.write(c.entry.model_copy(update={"merging": True}))
    c.git.merge_ff(c.commit)
    c.journal.clear()
    log.info("cycle.landed", cycle=c.number, outcome=str(c.outcome), commit=c.commit[:12])


# -- helpers -----------------------------------------------------------------


def read_only(c: Cycle, agent: AgentConfig, nonce: str, lookup: Lookup | None = None) -> Bounds:
    """The bounds of the Planner's or the Consultant's session: its limits, and read-only tools over the working
    copy (none for a backend that serves no tools)."""
    assert c.work is not None
    cfg = c.config
    limits = Limits(agent.max_turns, agent.timeout_s, agent.token_budget,
                    window=window_of(agent.model, agent.context_tokens), result_chars=agent.tool_result_chars,
                    keep_results=agent.keep_tool_results)
    if not agent.serves_tools:
        return Bounds(limits, None, c.options.stop)
    workspace = Workspace(c.work.root, [], ownership.protected(cfg), cfg.project.state_dir, cfg.project.lean_roots,
                          reading(c.deps.compiler(c.work.root)), gates=cfg.gates, secrets=c.deps.secrets,
                          lake_dir=cfg.project.lake_dir)
    lookup = lookup or _lookup(c)
    added = [lookup.tool(), *GitReader(c.repo, c.base).tools(), Tool(TRY, workspace.try_lean)]
    reader = Reader(workspace, nonce, agent.tool_result_chars, added, lsp=c.deps.lean(c.work.root))
    return Bounds(limits, reader, c.options.stop)


def _lookup(c: Cycle) -> Lookup:
    """Lookups over the tree that lands — the base, with the change only when it was accepted — and the main
    checkout's dependencies: a name only a rejected change declared is not there for the next Worker."""
    landing = c.after if c.outcome is Outcome.ACCEPTED and c.after is not None else c.census
    if c.lookup is None or c.lookup.project is not landing:
        folder = dependencies(c.config.project.lake_dir)
        c.lookup = Lookup(landing, c.repo / folder, folder, c.lookup.texts if c.lookup is not None else {})
    return c.lookup


def _users_changes(c: Cycle) -> list[str]:
    """Uncommitted paths of the checkout, besides the running process's files and an audit not yet committed
    (no cycle writes either, so they cannot collide with one)."""
    runtime = {c.paths.relative(c.paths.heartbeat), c.paths.relative(c.paths.lock)}
    beating = c.paths.relative(c.paths.heartbeat.with_name(f".{c.paths.heartbeat.name}."))  # its atomic write's temp
    audit = c.paths.relative(c.paths.audit) + "/"
    return [p for p in c.git.dirty() if p not in runtime and not p.startswith((audit, beating))]


def _rebase(c: Cycle, new_base: str) -> None:
    """The remote moved: redo the cycle's commit on its new head, re-running the gates if Lean changes land."""
    log.info("cycle.rebase", onto=new_base[:12])
    c.build = BuildStatus(False, "the remote moved during the cycle; its new commits were not built here")
    reapply(c, new_base, "the change does not apply on the remote's new commits")
    bookkeeping(c)


def reapply(c: Cycle, new_base: str, conflict: str, *, incremental: bool = False) -> bool:
    """Make `new_base` the cycle's base, and re-apply and re-gate a change that passed onto it; False (the change
    rejected, `conflict` its error when it does not apply) when it no longer passes. `incremental`: compile again
    only what the commits up to `new_base` can make compile differently (`gates.regate`)."""
    assert c.work is not None
    old_base, c.base = c.base, new_base
    history_path = c.paths.relative(c.paths.history)
    tree = GitTree(c.git, new_base)
    c.history = parse_history(tree.read(history_path)) if history_path in tree.files() else c.history
    c.number = max(c.number, 1 + max([0, *(r.cycle for r in c.history.records)]))
    c.census = census(tree, c.config.project.lean_roots)
    c.people = held(c.git, new_base, c.config.gates.reviews, c.census)
    if c.config.audit.judge_in_loop:  # the book's text and pairing as the new base has them
        c.book = Book.at(tree, new_base, c.census, c.config.audit, c.config.project.state_dir, c.number)
        c.pairing = c.book.pairing(c.census)
    if c.desk is not None:  # the remote's ledger may hold jobs another loop submitted or settled
        jobs_path = c.paths.relative(c.paths.prover_jobs)
        c.desk.rebase(files.parse_model(tree.read(jobs_path), ProverJobs, jobs_path) if jobs_path in tree.files()
                      else ProverJobs(), c.number)
    applied = True
    if c.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE) and c.worker_commit is not None:
        c.work.reset_hard(new_base)
        c.work.clean()
        kernelcheck.base_facts(c, builds=True)  # the change is held to the new base's statements
        try:
            c.work.run("cherry-pick", "--no-commit", c.worker_commit)
        except InfraError:
            c.work.abort_cherry_pick()
            c.outcome, c.error, applied = Outcome.REJECTED, conflict, False
        else:
            since = (set(c.git.changed_between(old_base, c.worker_commit)),
                     set(c.git.changed_between(old_base, new_base))) if incremental else None
            if not gate(c, since):
                c.outcome, applied = Outcome.REJECTED, False
        if c.evaluation is not None:
            c.evaluation = cs.capped(c, c.evaluation)
    return applied


def _undo_partial_merge(c: Cycle, entry: Entry) -> None:
    """A fast-forward to the cycle's commit was cut short: put back what it wrote, and nothing else.

    Only a path whose content is the commit's version was written by the merge; anything else is the user's
    and stays (the dirty check then refuses to start)."""
    assert entry.commit is not None
    if not entry.merging:
        return
    base = GitTree(c.git, entry.base)
    target = GitTree(c.git, entry.commit)
    base_files, target_files = set(base.files()), set(target.files())
    for path in c.git.changed_between(entry.base, entry.commit):
        here = c.repo / path
        current = here.read_bytes() if here.is_file() else None
        wanted = target.read(path) if path in target_files else None
        if current != wanted:
            continue
        if path in base_files:
            c.git.run("checkout", entry.base, "--", path)
        else:
            here.unlink(missing_ok=True)


def _candidates(work: Git, base: str) -> list[str]:
    """Every path that may differ from `base`: uncommitted ones, and those a session committed itself."""
    committed = work.changed_between(base, "HEAD") if work.head() != base else []
    return sorted(set(work.status_paths()) | set(committed))


def _fingerprint(work: Git) -> dict[str, str | None]:
    """Every path git would see as changed in the working copy, with a hash of its content: a link's target as it
    is written (never followed: a Worker's link may point at anything), a file's bytes read in chunks."""
    out: dict[str, str | None] = {}
    for path in work.status_paths(ignored=True):
        file = work.root / path
        if file.is_symlink():
            out[path] = "link:" + os.readlink(file)
        elif file.is_file():
            with file.open("rb") as f:
                out[path] = hashlib.file_digest(f, "sha256").hexdigest()
        else:
            out[path] = None
    return out


def _changed_since(before: dict[str, str | None], after: dict[str, str | None]) -> list[str]:
    return sorted(p for p in before.keys() | after.keys() if before.get(p, "-") != after.get(p, "-"))
