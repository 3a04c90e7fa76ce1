"""`autoformalize cycle`: exactly one cycle, or with --dry-run what one would do."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from gates import sandbox
from orchestrator import readiness, toolchain
from orchestrator.config import Config, load_config
from orchestrator.cycle import Options, run_cycle
from orchestrator.cyclestate import Cycle, budget_of
from orchestrator.notify import Event, Notifier
from orchestrator.preview import preview
from orchestrator.repo import find_repo
from orchestrator.wiring import check_endpoints, loop_roles, real_deps
from state.errors import InfraError, UsageError
from state.history import HistoryRecord, Outcome, read_history, scored


def run(repo: Path | None, dry_run: bool, skip_planner: bool, no_push: bool) -> int:
    root = find_repo(repo)
    config = load_config(root)
    # --skip-planner works from the strategy.md a person edited: no Planner, so neither its plan nor its key
    roles = tuple(r for r in loop_roles(config) if not (skip_planner and r == "planner"))
    if dry_run:
        click.echo(f"Dry run in {root}: no model is called and nothing changes.")
        for line in preview(root, config, skip_planner=skip_planner):
            click.echo(f"  {line}")
        refused = readiness.refusals(root, config, roles)
        if refused:
            click.echo(f"\nA cycle would refuse to start (exit 2), or stop before any model is called, for "
                       f"{len(refused)} reason(s):", err=True)
            for reason in refused:
                click.echo(f"  - {reason}", err=True)
            return 2
        click.echo("\nEvery check a cycle makes before it spends passed: a cycle would start.")
        return 0
    if not ready(root, config, roles):
        return 0
    notify = Notifier.from_env(config.notify, root.name)
    try:
        record, cycle = run_cycle(root, config, real_deps(config, root), Options(skip_planner=skip_planner,
                                                                               push=not no_push))
    except (InfraError, UsageError) as e:
        notify.send(Event.FAILURE, cycle="(unnumbered)", error=str(e)[:300])
        raise
    return report(record, cycle, notify)


def ready(root: Path, config: Config, roles: tuple[str, ...]) -> bool:
    """The checks before a cycle spends anything; False (and why, printed) when today's budget is spent."""
    setup(root, config, roles)
    budget = budget_of(config.budget, read_history(config.state(root).history).records, datetime.now(UTC))
    total, day = config.budget.total_usd, config.budget.per_day_usd
    if total is not None and budget.total_usd >= total:
        raise InfraError(f"the total budget is spent: ${budget.total_usd:.2f} of [budget] total_usd ${total:.2f}; "
                         "raise it in autoformalize.toml to continue")
    if day is not None and budget.today_usd >= day:
        click.echo(f"Today's budget is spent (${budget.today_usd:.2f} of [budget] per_day_usd ${day:.2f}); "
                   "no cycle runs until the next UTC day.")
        return False
    if (why := readiness.paused(root, config)) is not None:
        click.echo(f"{why[0].upper()}{why[1:]}.")
        return False
    return True


def setup(root: Path, config: Config, roles: tuple[str, ...]) -> None:
    """The plan (for a Planner), the sandbox, the toolchain and the keys and prices `roles` need, before any work
    starts."""
    if "planner" in roles and (found := readiness.book(root, config)):
        raise UsageError(found[0])
    sandbox.check(config.sandbox)
    toolchain.check(root / config.project.lake_dir, config.sandbox)
    check_endpoints(config, roles)


def report(record: HistoryRecord, cycle: Cycle, notify: Notifier) -> int:
    """The cycle's (or round's) records, printed and notified; its exit code."""
    notify.cycle(record, [*cycle.history.records, *cycle.interrupted], stall_after=cycle.config.loop.escalate_after)
    for item in cycle.round or [cycle]:  # a parallel round: each item's record, in the order they landed
        _show(item)
    if record.outcome is Outcome.ERROR and cycle.infra:
        click.echo(f"error: {record.error}", err=True)
        return 1
    return 0


def _show(cycle: Cycle) -> None:
    record = cycle.record
    assert record is not None
    cost = f"${record.cost_usd:.2f}" if record.cost_usd is not None else "cost unknown"
    item = f" (round {record.round}, item {record.item})" if record.item else ""
    click.echo(f"cycle {record.cycle}{item}: {record.outcome}, score {scored(record.score)}, sorries "
               f"{record.pre_sorry_count} → {record.post_sorry_count}, {cost}")
    for gate in record.gates:
        click.echo(f"  {gate.name}: {'passed' if gate.passed else 'FAILED'}")
    if record.summary:
        click.echo(f"  {record.summary}")
    if cycle.commit:
        click.echo(f"  commit {cycle.commit[:12]}")
