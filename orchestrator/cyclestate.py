"""What a cycle knows as its phases run, and the small derivations the phases share."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import structlog

from agents.config import BudgetConfig
from agents.context import Context, Quote, Section
from agents.evaluator import Evaluation
from agents.ledger import Budget, Ledger
from agents.lookup import Lookup
from agents.planner import Plan
from agents.provers.desk import Desk
from agents.worker import Session
from audit.book import Book
from audit.loop import Judged
from difficulty.estimate import Estimate
from gates.base import GateResult
from gates.census import Census, same, state
from gates.chosen import shown
from gates.environment import Baseline
from gates.size import Growth, grown, splitting
from gates.sorry import restructuring, traded
from orchestrator import outlook, ownership, pause
from orchestrator.buildcheck import BuildStatus
from orchestrator.config import Config
from orchestrator.deps import Deps
from orchestrator.facts import Facts, faithful_at, measure
from orchestrator.git import Git
from orchestrator.journal import Entry, Journal
from orchestrator.targets import aimed
from state import files
from state.history import GateVerdict, History, HistoryRecord, LibraryProof, Outcome, WorkerContext
from state.paths import StatePaths
from state.prover_jobs import ProverJob
from state.reviews import Standing, orphaned, unanswered
from state.statement_lock import read_lock

log = structlog.get_logger()

PIVOT_BLOCKERS = 2  # different blockers in the last `[loop] stuck_cap` records that still call for a pivot


@dataclass
class Options:
    skip_planner: bool = False
    push: bool = True
    stop: threading.Event = field(default_factory=threading.Event)  # set by SIGTERM/SIGINT: stop at a safe point


class Interrupted(Exception):
    """A stop was requested: the cycle was abandoned at a safe point; the next one records it as interrupted."""


@dataclass(frozen=True)
class RoundItem:
    """What a cycle that is one item of a parallel round knows of the round."""

    round: int
    name: str
    strategy: str  # the round's whole strategy, which strategy.md keeps
    engine: str | None = None  # where its Worker ran; None when it never did (dropped)


@dataclass
class Cycle:
    """Filled in phase by phase; the record is derived from it at the end."""

    repo: Path
    config: Config
    deps: Deps
    options: Options
    git: Git
    paths: StatePaths
    journal: Journal
    started_at: datetime
    entry: Entry | None = None  # this cycle's journal entry
    found: Entry | None = None  # the journal as sync found it: what a failed baseline puts back
    number: int = 0
    base: str = ""  # the branch commit the cycle builds on
    interrupted: list[HistoryRecord] = field(default_factory=list)
    adopted: list[ProverJob] = field(default_factory=list)  # prover jobs that interrupted cycles submitted
    history: History = field(default_factory=History)
    census: Census = field(default_factory=Census)
    build: BuildStatus | None = None
    work: Git | None = None  # the Worker's working copy
    plan: Plan | None = None
    pivot: str | None = None
    session: Session | None = None
    gates: list[GateResult] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    after: Census | None = None  # the census with the Worker's change, when it passed
    broken: dict[str, list[str]] = field(default_factory=dict)  # an altered declaration → its users of the base
    # that no longer elaborate against it (the successors gate's evidence), shown to the judge
    defaults: dict[str, list[str]] = field(default_factory=dict)  # hypotheses with a default a statement gained
    altered: dict[str, str] = field(default_factory=dict)  # declarations whose meaning that change altered, and how
    worker_commit: str | None = None  # the Worker's change as a scratch commit, for landing or re-applying
    outcome: Outcome | None = None
    evaluation: Evaluation | None = None
    advice: str | None = None  # the Consultant's, when called
    lookup: Lookup | None = None  # the latest `find_declaration` lookup, whose dependencies' sources the next shares
    judged: list[Judged] = field(default_factory=list)  # the judge's verdicts on the statements the change touched
    overlaps: list[LibraryProof] = field(default_factory=list)  # closed theorems `exact?` closes with the library
    ledger: Ledger = field(default_factory=Ledger)  # every model call of the cycle, by role
    desk: Desk | None = None  # the external prover's jobs, harvested after the baseline
    kernel: Baseline | None = None  # what Lean listed of the base: what a change is held to
    fingerprints: dict[str, str] = field(default_factory=dict)  # declaration → its meaning as Lean lists it now
    locked: dict[str, str] = field(default_factory=dict)  # the statement lock the gates last held the change to
    error: str | None = None
    infra: bool = False  # the error was the infrastructure's, not the agents'
    paused_until: datetime | None = None  # a rate limit or usage cap stopped a role: the loop waits until then
    record: HistoryRecord | None = None
    commit: str | None = None
    book: Book | None = None  # the book's trusted text, from the base (when the judge is on)
    pairing: dict[str, str] = field(default_factory=dict)  # declarations the book pairs at the base → entity id
    restated: dict[str, str] = field(default_factory=dict)  # paired statements the change altered → how
    people: dict[str, Standing] = field(default_factory=dict)  # what people's verdicts hold at the base
    planner_failed: str | None = None  # why the Planner's answer was not used
    item: RoundItem | None = None  # set when the cycle is one item of a parallel round
    worker_model: str = ""  # the model the Worker's session was opened with
    estimate: Estimate | None = None  # the difficulty model on the base, fitted once (`estimate_of`)
    round: list[Cycle] = field(default_factory=list, repr=False)  # on a round's last item: all its items, in order
    measured: tuple[tuple[Census, Census | None], tuple[tuple[object, ...], tuple[object, ...] | None],
                    tuple[object, ...], Facts] | None = field(default=None, repr=False)  # what `facts` measured last

    @property
    def work_paths(self) -> StatePaths:
        assert self.work is not None
        return StatePaths(self.work.root, self.config.project.state_dir)

    @property
    def advice_slug(self) -> str:
        return f"consultant_advice_cycle_{self.number:03d}"

    def fail(self, error: str, *, infra: bool) -> None:
        self.outcome, self.error, self.infra = Outcome.ERROR, error, infra

    def pause(self, error: str, resets_at: datetime | None) -> None:
        """A rate limit or usage cap stopped a role: the loop waits until it lifts (`orchestrator.pause`)."""
        self.paused_until = pause.until(self.deps.clock.now(), self.history.records, resets_at,
                                        self.config.loop.pause_s)
        self.error = error
        log.warning("cycle.paused", until=self.paused_until.isoformat(), error=error[:300])


def record(c: Cycle) -> HistoryRecord:
    e = c.evaluation
    done = facts(c)
    costs = c.ledger.costs()
    total = None if None in costs.values() else round(sum(v or 0.0 for v in costs.values()), 6)
    accepted = c.outcome is Outcome.ACCEPTED and c.after is not None
    return HistoryRecord(
        cycle=c.number, started_at=c.started_at, finished_at=c.deps.clock.now(), outcome=c.outcome or Outcome.ERROR,
        gates=[GateVerdict(name=g.name, passed=g.passed, detail=g.detail) for g in c.gates],
        pre_sorry_count=c.census.holes, post_sorry_count=c.after.holes if accepted and c.after else c.census.holes,
        progress_score=e.progress_score if e else 0, evaluated=e is not None,  # 0 where none scored: -2..2 always
        summary=e.summary if e else (c.error or ""),
        stuck_on=e.stuck_on if e else "", strategy_recommendation=e.strategy_recommendation if e else "",
        attempts_update=e.attempts_update if e else "", scope=c.plan.scope if c.plan else [],
        changed_files=c.changed, usage=c.ledger.usage(), cost_usd=total,
        costs={role: None if v is None else round(v, 6) for role, v in costs.items()},
        served_by=c.ledger.served_by(),
        consultant=f"{c.config.project.state_dir}/issues/{c.advice_slug}.md" if c.advice else None,
        restructuring=restructuring_of(c), splitting=splitting_of(c), pivot=c.pivot, base=c.base, error=c.error,
        worker_stop=c.session.rounds[-1].stop.value if c.session and c.session.rounds else None,
        worker_context=WorkerContext(turns=c.session.turns, **asdict(c.session.context)) if c.session else None,
        tool_calls=dict(sorted(c.session.tools.calls.items())) if c.session else {},
        faithfulness=[j.verdict for j in c.judged], mathlib_overlap=c.overlaps, prover_jobs=prover_jobs(c),
        progress=done.progress,
        issues_opened=ownership.opened(c.changed, c.config.project.state_dir)
        if c.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE) else [],
        planner_failed=c.planner_failed, restated=sorted(c.restated),
        round=c.item.round if c.item else None, item=c.item.name if c.item else None,
        worked_by=c.item.engine if c.item else None, targets=targets(c), closed=done.closed, opened=done.opened,
        decomposed=done.decomposed, parts=done.parts, worker_model=worker_model(c) if c.session else None,
        paused_until=c.paused_until)


def targets(c: Cycle) -> list[str]:
    """The declarations holding a hole at the base that the cycle's strategy (its item's, in a round) aimed at: with
    what the facts say it closed, the attempt the difficulty model learns from (`difficulty.attempts`)."""
    return aimed(c.plan.text, c.plan.scope, c.census) if c.plan else []


def worker_model(c: Cycle) -> str:
    """The model the cycle's Worker is opened with, decided once: `[agents.worker] hard_model` when a target the
    cycle aims at is harder than `[difficulty] hard_above`, else the Worker's model. A function of the base (the
    history and the tree) and the plan alone, so a round item's job elsewhere decides it as its coordinator does."""
    if not c.worker_model:
        worker = c.config.agents.worker
        c.worker_model = estimate_of(c).worker_model(targets(c)) if worker.hard_model else worker.model
    return c.worker_model


def estimate_of(c: Cycle) -> Estimate:
    """The difficulty model fitted on the history and the tree at the base (`orchestrator.outlook`)."""
    if c.estimate is None:
        c.estimate = outlook.estimate_for(c.config, c.history.records, c.census)
    return c.estimate


def prover_jobs(c: Cycle) -> dict[str, list[str]]:
    """The jobs submitted this cycle and those whose proof it landed."""
    if c.desk is None:
        return {}
    used = [j.id for j in c.desk.jobs.jobs if j.used_cycle == c.number]
    return {k: v for k, v in (("submitted", c.desk.submitted), ("used", used)) if v}


def prover_summary(c: Cycle) -> str:
    """The prover's jobs, for the roles' prompts; nothing while it is off (no role can turn it on)."""
    return c.desk.summary(c.paths.relative(c.paths.prover_results)) if c.desk and not c.desk.off else ""


def budget_of(budget: BudgetConfig, history: list[HistoryRecord], now: datetime) -> Budget:
    """The limits, with what the history already spent against them."""
    today = sum(r.spent_usd for r in history if r.finished_at and r.finished_at.date() == now.date())
    return Budget(budget, today_usd=today, total_usd=sum(r.spent_usd for r in history))


def faithfulness(c: Cycle) -> str:
    """The judge's verdicts for the Evaluator, one line each, every name and reason rendered by `shown` (the
    Evaluator's brief fences them: a reason may quote the Lean a Worker wrote)."""
    names = {3: "faithful", 2: "stronger (a sound generalization)", 1: "DIFFERENT from the book"}
    return "\n".join(f"- {shown(j.entity.id)} ({', '.join(shown(n) for n in j.verdict.declarations)}): "
                     + (names[j.verdict.score] + (f" — {shown(j.verdict.reason, 2000)}" if j.verdict.reason else "")
                        if j.verdict.score is not None else f"not judged: {shown(j.verdict.error or '', 2000)}")
                     for j in c.judged)


def restructuring_of(c: Cycle) -> str | None:
    """The declared rationale, when this cycle landed a restructuring: a sorry-count rise, or a proof traded for
    a sorry whatever the net count. Either spends the budget."""
    if c.outcome is not Outcome.ACCEPTED or c.session is None or c.after is None:
        return None
    rose = c.after.holes > c.census.holes or traded(c.census, c.after)
    return restructuring(c.session.report()) if rose else None


def facts(c: Cycle) -> Facts:
    """What the cycle measurably did (`orchestrator/facts.py`)."""
    landed = c.outcome is Outcome.ACCEPTED and c.after is not None
    refused = set(unanswered(c.people))
    settled = (faithful_at(read_lock(c.paths.statement_lock), c.pairing, refused) if c.judged
               else set())  # the base's lock
    after = c.after if landed else None
    orphans = orphaned(c.people, (after or c.census).named)
    recent = c.number - c.config.gates.restructure_window
    split = {part: whole for r in c.history.records if r.outcome is Outcome.ACCEPTED and r.cycle > recent
             for whole, parts in r.parts.items() for part in parts}
    report = c.session.report() if c.session else ""
    # Asked several times a cycle (the Evaluator, its cap, the Consultant, the record) of the same inputs: the
    # censuses (what Lean listed of them included), the judged, the report, the cap and the settled entities.
    key = (tuple(c.judged), report, c.config.gates.file_cap_lines, frozenset(settled), frozenset(refused),
           frozenset(orphans), tuple(sorted(split.items())))
    states = (state(c.census), state(after) if after is not None else None)
    kept = c.measured
    if (kept is not None and kept[0][0] is c.census and kept[0][1] is after and same(kept[1][0], states[0])
            and (after is None or (kept[1][1] is not None and same(kept[1][1], state(after))))
            and len(kept[2]) == len(key) and all(a is b or a == b for a, b in zip(kept[2], key, strict=True))):
        return kept[3]
    found = measure(c.census, after, c.judged, report, c.config.gates.file_cap_lines, settled=settled,
                    rejected=refused, orphans=orphans, split=split)
    c.measured = ((c.census, after), states, key, found)
    return found


def capped(c: Cycle, evaluation: Evaluation) -> Evaluation:
    """The Evaluator's answer with its score as the facts allow it."""
    return evaluation.model_copy(update={"progress_score": facts(c).cap(evaluation.progress_score)})


def oversized(c: Cycle) -> list[Growth]:
    """The files over the size cap that this cycle's landed change made longer."""
    if c.outcome is not Outcome.ACCEPTED or c.after is None:
        return []
    return grown(c.census, c.after, c.config.gates.file_cap_lines)


def splitting_of(c: Cycle) -> str | None:
    """The declared rationale, when this cycle landed a change that made a file over the size cap longer."""
    return splitting(c.session.report()) if c.session is not None and oversized(c) else None


def task_result(c: Cycle) -> str:
    assert c.session is not None
    parts = [f"# Cycle {c.number:03d} — {c.outcome}", "", c.session.report().strip()]
    if c.gates:
        parts += ["", "## Gates", "", verdicts(c.gates)]
    landed = c.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE)
    notes = "" if landed or c.worker_commit is None or c.work is None else \
        ownership.notes(c.work, c.worker_commit, c.changed, c.config.project.state_dir)
    if notes:
        parts += ["", notes]
    return c.deps.secrets.redact("\n".join(parts) + "\n")  # a rejected change's notes may carry what it read


def verdicts(gates: list[GateResult]) -> str:
    return "\n".join(f"- {g.name}: {'passed' if g.passed else 'FAILED'} — {g.detail}" for g in gates) or "(none)"


def feedback(gates: list[GateResult], round_: int, rounds: int) -> str:
    """The gates' report for a repair round: what to do in the orchestrator's words; what each failing gate says
    (it quotes Lean on the change, and names what the Worker chose) as data."""
    failed = tuple(Quote("the gates, quoting Lean on your change", g.detail, f"what the gate {g.name} reports")
                   for g in gates if not g.passed)
    asked = "Fix what they report, check again, and call `finish` with an updated report."
    return Context([Section(f"The gates rejected your change (repair round {round_} of {rounds})", asked,
                            len(asked) + sum(len(q.text) for q in failed) + 1, quotes=failed)]).render()


def pivot(records: list[HistoryRecord], cap: int) -> str | None:
    """The blockers, when each of the last `cap` records (a paused one aside) names one and they name at most
    `PIVOT_BLOCKERS` different ones (compared without case or spacing), latest first, joined by "; "."""
    last = [" ".join(r.stuck_on.split()) for r in pause.counted(records)[-cap:]]
    if len(last) < cap or not all(last):
        return None
    distinct = list(dict.fromkeys(s.lower() for s in reversed(last)))
    if len(distinct) > PIVOT_BLOCKERS:
        return None
    return "; ".join(next(s for s in reversed(last) if s.lower() == d) for d in distinct)


def last_task_result(paths: StatePaths) -> str | None:
    """The latest task result: a regular file, never one a link names."""
    found = files.reports(paths)
    return files.read_text(found[-1][1]) if found else None


def commit_message(c: Cycle) -> str:
    assert c.record is not None
    builds = "yes" if c.build is not None and c.build.ok and c.outcome is not None else "no"
    planned = f"Autoformalize-Plan: updated ({c.config.project.plan})\n" if c.plan and c.plan.plan_update else ""
    item = f"Autoformalize-Round: {c.item.round}\nAutoformalize-Item: {c.item.name}\n" if c.item else ""
    return (f"autoformalize: cycle {c.number} {c.record.outcome}: {c.record.summary[:100]}\n\n"
            f"Autoformalize-Cycle: {c.number}\nAutoformalize-Outcome: {c.record.outcome}\n"
            f"Autoformalize-Builds: {builds}\n{item}{planned}")
