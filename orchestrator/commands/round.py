"""`autoformalize round plan|work|land`: a parallel round as separate jobs (the `github` engine's workflow)."""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator import actions
from orchestrator.commands.cycle import ready, report, setup
from orchestrator.config import load_config
from orchestrator.cycle import Options
from orchestrator.notify import Event, Notifier
from orchestrator.repo import find_repo
from orchestrator.wiring import loop_roles, real_deps
from state.atomic import write_atomic
from state.errors import InfraError, UsageError
from state.history import Outcome


def plan(repo: Path | None, out: Path) -> int:
    root = find_repo(repo)
    config = load_config(root)
    if config.parallel.workers <= 1:
        raise UsageError("a round needs [parallel] workers above 1; with one Worker run `autoformalize cycle`")
    if not ready(root, config, loop_roles(config)):
        write_atomic(out / actions.MATRIX, "[]\n")
        return 0
    notify = Notifier.from_env(config.notify, root.name)
    try:
        record, c = actions.plan(root, config, real_deps(config, root), Options(), out)
    except (InfraError, UsageError) as e:
        notify.send(Event.FAILURE, cycle="(unnumbered)", error=str(e)[:300])
        raise
    if record is not None:  # no round: a cycle, landed here
        click.echo("The plan is no round; it ran as one cycle:")
        return report(record, c, notify)
    planned = actions.read(out)
    click.echo(f"round {planned.round} (cycles {planned.cycle}–{planned.cycle + len(planned.items) - 1}) at "
               f"{planned.base[:12]}: {len(planned.worked)} of {len(planned.items)} items to work, in {out}")
    for k, name in enumerate(planned.items):
        click.echo(f"  {k}: {name}{'' if k in planned.worked else ' (dropped: its Scope meets an earlier one)'}")
    return 0


def work(repo: Path | None, folder: Path, item: int, out: Path) -> int:
    root = find_repo(repo)
    config = load_config(root)
    setup(root, config, ("worker",))
    result = actions.work(root, folder, item, out)
    said = f"{result.outcome}" if result.outcome else "worked"
    click.echo(f"item {item} ({result.item}): {said}, {len(result.patch):,} bytes of patch, written to {out}")
    if result.outcome is Outcome.ERROR:
        click.echo(f"error: {result.error}", err=True)
        return 1
    return 0


def land(repo: Path | None, folder: Path, results: Path, no_push: bool, digest: str | None) -> int:
    root = find_repo(repo)
    config = load_config(root)
    setup(root, config, loop_roles(config))  # no budget check: the round's Workers have spent; what passes lands
    notify = Notifier.from_env(config.notify, root.name)
    try:
        record, c = actions.land(root, config, real_deps(config, root), Options(push=not no_push), folder, results,
                                 digest)
    except (InfraError, UsageError) as e:
        notify.send(Event.FAILURE, cycle="(unnumbered)", error=str(e)[:300])
        raise
    return report(record, c, notify)
