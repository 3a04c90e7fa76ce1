"""`autoformalize run`: cycles until stopped, holding the run lock and the heartbeat the whole time.

A stop request (SIGTERM, SIGINT) abandons the current cycle at its next safe
point — between phases, between Worker turns, never inside the bookkeeping and
landing of a cycle — so it exits within one model call or compiler run. A
second request exits at once; the journal makes either safe.

Two cycles in a row whose Planner answer could not be used back off like an infrastructure error, with an
alert. Budgets: a cycle refused by `per_cycle_usd` ends and the next one starts
afresh; once `per_day_usd` is spent the daemon sleeps until the next UTC day;
once `total_usd` is spent it stops. A rate limit or a subscription's usage cap pauses it until the limit lifts
(`orchestrator.pause`), and counts as no failure.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from types import FrameType

import structlog

from agents.ledger import Limit
from gates.census import census
from orchestrator import pause, plan
from orchestrator.config import Config
from orchestrator.cycle import Interrupted, Options, run_cycle
from orchestrator.cyclestate import budget_of
from orchestrator.deps import Deps
from orchestrator.git import Git, GitTree
from orchestrator.liveness import Beat
from orchestrator.notify import Event, Notifier, planner_streak
from state.errors import InfraError, UsageError
from state.files import read_text
from state.history import Outcome, read_history
from state.lock import RunLock

log = structlog.get_logger()


@dataclass(frozen=True)
class Limits:
    max_cycles: int | None = None  # this run only; [loop] max_total_cycles caps the whole history
    cooldown_s: float | None = None  # None: [loop] cooldown_s


def run_daemon(repo: Path, config: Config, deps: Deps, limits: Limits, options: Options,
               notify: Notifier | None = None, say: Callable[[str], None] = lambda line: None) -> str:
    """Run cycles until a stop condition or a stop request; returns why it stopped. A failed cycle, and the wait
    before the next, go to `say` (the terminal) as well as to the log."""
    paths = config.state(repo)
    loop = config.loop
    notify = notify or Notifier(None)
    failures = 0
    done = 0
    with RunLock(paths.lock), Beat(paths.heartbeat, loop.heartbeat_s, deps.clock) as beat:
        while True:
            reason = _stop_reason(repo, config, limits, done, options.stop)
            if reason is not None:
                log.info("daemon.stop", reason=reason, cycles=done)
                notify.send(Event.STOPPED, reason=reason)
                return reason
            if _day_spent(repo, config, deps.clock.now()):
                _wait_for_tomorrow(deps.clock.now(), beat, options.stop)
                continue
            paused = pause.pending(read_history(paths.history).records, deps.clock.now())
            if paused is not None:  # a rate limit or usage cap: neither a failure nor a stall
                wait = max(1.0, (paused - deps.clock.now()).total_seconds())
                log.info("daemon.paused", until=paused.isoformat())
                say(f"paused by a rate limit until {paused.isoformat(timespec='minutes')}; waiting {wait:.0f}s")
                beat.phase("paused", wait)
                options.stop.wait(wait)
                continue
            failed = ""
            try:
                try:
                    record, cycle = run_cycle(repo, config, deps, options, beat=beat)
                except UsageError as e:  # the checkout needs the user (diverged, dirty, wrong branch)
                    notify.send(Event.STOPPED, reason=str(e)[:300])
                    raise
                history = [*cycle.history.records, *cycle.interrupted]
                # a Planner failing again and again is as much a reason to back off as a failing API
                infra = (record.outcome is Outcome.ERROR and cycle.infra) or planner_streak(history, record) >= 2
                if record.outcome is Outcome.ERROR:
                    failed = f"cycle {record.cycle} failed: {record.error or record.summary}"
                notify.cycle(record, history, stall_after=loop.escalate_after)
                refused = cycle.ledger.refused
                del cycle  # dead before the next cycle's start freezes what lives (`orchestrator.collector`)
                if refused is Limit.TOTAL:
                    log.info("daemon.stop", reason="budget", cycles=done + 1)
                    reason = f"the total budget stopped cycle {record.cycle}: {record.error or record.summary}"
                    notify.send(Event.STOPPED, reason=reason)
                    return reason
                if refused is Limit.DAY:
                    done += 1
                    _wait_for_tomorrow(deps.clock.now(), beat, options.stop)
                    continue
            except Interrupted:
                reason = "stopped on request; the unfinished cycle will be recorded as interrupted"
                notify.send(Event.STOPPED, reason=reason)
                return reason
            except (InfraError, OSError) as e:  # before the cycle could record anything (git, the disk)
                error = str(e) if isinstance(e, InfraError) else f"{type(e).__name__}: {e}"
                log.error("daemon.cycle_failed", error=error)
                failed = f"a cycle failed before it could record anything: {error}"
                notify.send(Event.FAILURE, cycle="(unnumbered)", error=error[:300])
                infra = True
            done += 1
            failures = failures + 1 if infra else 0
            cooldown = loop.cooldown_s if limits.cooldown_s is None else limits.cooldown_s
            wait = min(3600.0, loop.backoff_s * 2 ** (failures - 1)) if failures else cooldown
            if _stop_reason(repo, config, limits, done, options.stop) is not None:
                continue  # no cooldown before stopping
            if failures:
                log.warning("daemon.backoff", failures=failures, wait_s=wait)
            if failed:
                say(f"{failed}; " + (f"the next cycle in {wait:.0f}s (failure {failures} in a row, backing off)"
                                     if failures else f"the next cycle in {wait:.0f}s"))
            beat.phase("backoff" if failures else "cooldown", wait)
            options.stop.wait(wait)


def _stop_reason(repo: Path, config: Config, limits: Limits, done: int, stop: threading.Event) -> str | None:
    if stop.is_set():
        return "stopped on request"
    if limits.max_cycles is not None and done >= limits.max_cycles:
        return f"ran the {limits.max_cycles} cycle(s) asked for"
    loop = config.loop
    history = read_history(config.state(repo).history).records
    spent = sum(r.spent_usd for r in history)
    if config.budget.total_usd is not None and spent >= config.budget.total_usd:
        return f"spent ${spent:.2f}, the whole budget ([budget] total_usd ${config.budget.total_usd:.2f})"
    if loop.max_total_cycles is not None and history and history[-1].cycle >= loop.max_total_cycles:
        return f"reached cycle {history[-1].cycle}, the cap set by [loop] max_total_cycles"
    if loop.stop_when_done:
        git = Git(repo)
        holes = census(GitTree(git, git.head()), config.project.lean_roots).holes
        targets = plan.items(read_text(repo / config.project.plan) or "")
        if holes == 0 and targets and all(t.done for t in targets):
            return "done: no sorry left and every target in the plan is checked off"
    return None


def _day_spent(repo: Path, config: Config, now: datetime) -> bool:
    """Whether the cycles of this UTC day already spent [budget] per_day_usd."""
    cap = config.budget.per_day_usd
    if cap is None:
        return False
    history = read_history(config.state(repo).history).records
    return budget_of(config.budget, history, now).today_usd >= cap


def _wait_for_tomorrow(now: datetime, beat: Beat, stop: threading.Event) -> None:
    """Sleep until the next UTC midnight, when the daily budget starts afresh (a stop request ends the wait)."""
    midnight = datetime.combine(now.date() + timedelta(days=1), time.min, tzinfo=UTC)
    wait = max(1.0, (midnight - now).total_seconds())
    log.info("daemon.day_budget_spent", resume_at=midnight.isoformat())
    beat.phase("budget", wait)
    stop.wait(wait)


@contextmanager
def stop_on_signals(stop: threading.Event, on_second: Callable[[], None]) -> Iterator[None]:
    """SIGTERM/SIGINT set `stop`; a second one calls `on_second` (an immediate exit)."""

    def handle(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            on_second()
        log.warning("daemon.signal", signal=signal.Signals(signum).name,
                    action="finishing at the next safe point; send it again to exit at once")
        stop.set()

    previous = {s: signal.signal(s, handle) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
