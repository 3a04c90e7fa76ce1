"""A parallel round (`[parallel] workers` above 1): the cycle's phases, with work split among the Planner's items.

    plan → split (an item whose Scope could meet an earlier one's is dropped) → work, judge, evaluate of every
    item at once, each in its own working copy from the round's base → escalate → merge queue (`mergequeue.py`)

Each item is a cycle of its own — its number, ledger, journal entry, record and commit — run by the phase
functions of `cycle.py`. Lean compiles of all items share `[parallel] max_builds` slots; what any item spends
counts against the daily and total budgets of all. A plan of one item (or one Scope) is an ordinary cycle.
"""

from __future__ import annotations

import copy
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import structlog

from agents.items import disjoint
from agents.ledger import Budget, Ledger, Limit
from agents.planner import Plan
from gates.base import Compiler, GateResult
from gates.tree import DirTree
from orchestrator import cycle, kernelcheck, mergequeue, remote, workcopy
from orchestrator.cyclestate import Cycle, Interrupted, RoundItem
from orchestrator.engine import Bounded, Engine, Results, engine_of
from orchestrator.git import Git
from orchestrator.journal import Entry, RoundJournal
from orchestrator.liveness import Beat
from state.errors import InfraError
from state.history import HistoryRecord, Outcome, Usage

log = structlog.get_logger()
POLL_S = 0.5  # between polls of a remote engine's jobs


def run(c: Cycle, beat: Beat, engine: Engine[Any] | None = None) -> tuple[HistoryRecord, Cycle]:
    """Plan, then work the items at once and land them one at a time; the last item's record and cycle, which
    holds them all (`Cycle.round`)."""
    cycle.advance(c, beat, cycle.plan)
    if single(c):
        return ordinary(c, beat)
    items = split(c)
    prefetch(c, items)
    p = c.config.parallel
    engine = engine or engine_of(p.workers, p.submitit, p.engine)
    try:
        work(items, c, beat, engine)
    finally:
        engine.close()
    return finish(items, beat)


def prefetch(c: Cycle, items: list[Cycle]) -> None:
    """Lean's listing of the base every item to be gated here will want, taken in one probe."""
    kernelcheck.prefetch(c, [ic.plan.scope for ic in items if ic.plan and ic.outcome is not Outcome.REJECTED],
                         builds=c.build is not None and c.build.ok)


def single(c: Cycle) -> bool:
    """Whether the plan is no round: an error, or a plan of one item (or one Scope)."""
    return c.outcome is Outcome.ERROR or c.plan is None or len(c.plan.items) <= 1


def ordinary(c: Cycle, beat: Beat) -> tuple[HistoryRecord, Cycle]:
    """A plan that is no round, worked and landed as a cycle."""
    cycle.advance(c, beat, cycle.work, cycle.judge, cycle.evaluate, cycle.escalate)
    return cycle.conclude(c, beat)


def finish(items: list[Cycle], beat: Beat) -> tuple[HistoryRecord, Cycle]:
    """The round's worked items: the Consultant, if due, then the merge queue."""
    last = items[-1]
    cycle.advance(last, beat, cycle.escalate)  # once a round, on the facts of its last item
    mergequeue.land(items, beat)
    last.round = items
    last.ledger.refused = refused(items)
    assert last.record is not None
    return last.record, last


def split(c: Cycle) -> list[Cycle]:
    """A cycle per item, numbered in the Planner's order, each with its own working copy at the round's base;
    an item whose Scope could meet an earlier item's is rejected before any Worker runs, with the reason."""
    assert c.plan is not None and c.work is not None and c.entry is not None
    number = 1 + max([0, *(r.round or 0 for r in [*c.history.records, *c.interrupted])])
    files = DirTree(c.work.root).files()
    _, dropped = disjoint(c.plan.items, files)
    slots = threading.BoundedSemaphore(c.config.parallel.builds())
    deps = replace(c.deps, compiler=_bounded(c.deps.compiler, slots))
    journal = RoundJournal(c.journal, carried=list(c.entry.unfinished))
    ledgers: list[Ledger] = []
    out: list[Cycle] = []
    copies = [c.work, *workcopy.prepare_all(c.git, c.base, c.config.project.lake_dir,
                                            [f"worker-{k}" for k in range(1, len(c.plan.items))])]
    for k, item in enumerate(c.plan.items):
        first = k == 0
        n = c.number + k
        ledger = Ledger(budget=_shared(c.ledger.budget, ledgers), charges=list(c.ledger.charges) if first else [])
        ledgers.append(ledger)
        entry = c.entry.model_copy(update={"cycle": n, "unfinished": []} if first else {
            "cycle": n, "unfinished": [], "prover_jobs": [], "usage": {}, "costs": {}, "served_by": {}})
        ic = Cycle(c.repo, c.config, deps, c.options, Git(c.repo), c.paths, journal.view(n), c.started_at,
                   entry=entry, found=c.found, number=n, base=c.base, interrupted=c.interrupted if first else [],
                   adopted=c.adopted if first else [], history=c.history, census=copy.deepcopy(c.census),
                   build=c.build, work=copies[k],
                   plan=Plan(item.text, item.scope, Usage(), plan_update=c.plan.plan_update if first else None),
                   pivot=c.pivot, ledger=ledger,
                   desk=c.desk if first else None, kernel=c.kernel, book=c.book, pairing=c.pairing,
                   people=c.people,
                   planner_failed=c.planner_failed if first else None, estimate=c.estimate,
                   item=RoundItem(number, item.name, c.plan.text))
        ledger.on_charge = _journaling(ic)
        if ic.desk is not None:
            ic.desk.on_submit = lambda job, ic=ic: _journal(ic, prover_jobs=[*_entry(ic).prover_jobs, job])
        if item.name in dropped:
            ic.gates = [GateResult("scope", False, f"item {item.name!r} was dropped before work: {dropped[item.name]}")]
            ic.outcome, ic.error = Outcome.REJECTED, ic.gates[0].detail
            log.warning("round.dropped", item=item.name, reason=dropped[item.name])
        journal.put(entry)
        out.append(ic)
    return out


def work(items: list[Cycle], c: Cycle, beat: Beat, engine: Engine[Any]) -> None:
    """Every item not dropped worked at once: the Worker's session and gates, the judge, the Evaluator."""
    cfg = c.config
    waves = -(-len(items) // cfg.parallel.workers)
    builds = -(-len(items) // cfg.parallel.builds())
    gated = (cfg.gates.repair_rounds + 4) * cfg.build.timeout_s * builds
    beat.phase("round", waves * (cfg.agents.worker.timeout_s + cfg.agents.judge.timeout_s
                                 + cfg.agents.evaluator.timeout_s) + gated, cycle=c.number)
    tickets: dict[str, str] = {}
    worked = sum(ic.outcome is not Outcome.REJECTED for ic in items)
    bundle = remote.bundle(c.git, c.base) if engine.remote else b""
    for ic in items:
        name = _name(ic)
        if ic.outcome is Outcome.REJECTED:
            beat.item(name, "dropped")
            continue
        assert ic.item is not None
        ic.item = replace(ic.item, engine=engine.name)
        beat.item(name, "working")
        tickets[name] = engine.submit(name, functools.partial(remote.work, remote.job(ic, worked, bundle))
                                      if engine.remote else _job(ic, beat))
    if engine.remote:
        return gather(items, tickets, c, beat, engine, c.base)
    stopped: BaseException | None = None
    for ticket in tickets.values():
        try:
            engine.collect(ticket)
        except Interrupted as e:  # the others stop at their next safe point too; nothing of the round lands
            stopped = e
    if stopped is not None:
        raise stopped


def gather(items: list[Cycle], tickets: dict[str, str], c: Cycle, beat: Beat, engine: Results[Path],
           base: str) -> None:
    """Each remote item as its job ends: its result read from the folder the job wrote (the job's of its item at
    `base`, or refused), its patch applied and gated here, then the judge and the Evaluator. A job that failed
    rejects its item alone; a stop request cancels the jobs still running."""
    waiting = {_name(ic): ic for ic in items if _name(ic) in tickets}
    while waiting:
        if c.options.stop.is_set():
            engine.close()
            raise Interrupted(f"round of cycle {c.number} was stopped before it landed")
        done = [name for name in waiting if engine.poll(tickets[name])]
        if not done:
            time.sleep(POLL_S)
            continue
        for name in done:
            ic = waiting.pop(name)
            try:
                result = remote.load_result(engine.collect(tickets[name]), name, base)
            except Exception as e:  # the job's own failure, as its engine tells it, or a result that cannot be used
                ic.session = None
                remote.reject(ic, f"the {engine.name} job of item {name!r} failed: {str(e).strip()[-1500:]}")
            else:
                try:
                    remote.adopt(ic, result)
                except InfraError as e:  # as the Worker's phase fails in a local item
                    ic.fail(f"work: {e}", infra=True)
                if ic.session is not None:
                    cycle.advance(ic, None, cycle.judge, cycle.overlap, cycle.evaluate)
                elif ic.outcome is not Outcome.ERROR:
                    remote.reject(ic, f"the {engine.name} job of item {name!r} returned no Worker session")
            beat.item(name, "passed" if ic.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE) else str(ic.outcome))


def _job(ic: Cycle, beat: Beat) -> Callable[[], Cycle]:
    def job() -> Cycle:
        cycle.advance(ic, None, cycle.work, cycle.judge, cycle.overlap, cycle.evaluate)
        beat.item(_name(ic), "passed" if ic.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE) else str(ic.outcome))
        return ic
    return job


def refused(items: list[Cycle]) -> Limit | None:
    """The widest budget limit that refused any item's call: the total, else the day, else a cycle's."""
    found = {ic.ledger.refused for ic in items}
    return next((limit for limit in (Limit.TOTAL, Limit.DAY, Limit.CYCLE) if limit in found), None)


def _name(ic: Cycle) -> str:
    assert ic.item is not None
    return ic.item.name


@dataclass(frozen=True)
class Shared(Budget):
    """A round item's budget: what the round's other items spend counts against the daily and total limits."""

    others: Callable[[], float] = lambda: 0.0

    def now(self) -> Budget:
        spent = self.others()
        return Budget(self.config, self.today_usd + spent, self.total_usd + spent)

    def tightest(self, spend: float) -> tuple[Limit, float] | None:
        return self.now().tightest(spend)

    def why(self, limit: Limit, spend: float) -> str:
        return self.now().why(limit, spend)


def _shared(budget: Budget | None, ledgers: list[Ledger]) -> Budget | None:
    if budget is None:
        return None
    mine = len(ledgers)
    return Shared(budget.config, budget.today_usd, budget.total_usd,
                  others=lambda: sum(ledger.spent() for i, ledger in enumerate(ledgers) if i != mine))


def _bounded(compiler: Callable[[Path], Compiler], slots: threading.Semaphore) -> Callable[[Path], Compiler]:
    return lambda root: Bounded(compiler(root), slots)


def _entry(ic: Cycle) -> Entry:
    assert ic.entry is not None
    return ic.entry


def _journal(ic: Cycle, **update: object) -> None:
    ic.entry = _entry(ic).model_copy(update=update)
    ic.journal.write(ic.entry)


def _journaling(ic: Cycle) -> Callable[[Ledger], None]:
    return lambda ledger: _journal(ic, usage=ledger.usage(), costs=ledger.costs(), served_by=ledger.served_by())

