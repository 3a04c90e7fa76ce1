"""`autoformalize run`: the long-running daemon."""

from __future__ import annotations

import os
from pathlib import Path

import click

from orchestrator.commands.cycle import setup
from orchestrator.config import load_config
from orchestrator.cycle import Options
from orchestrator.daemon import Limits, run_daemon, stop_on_signals
from orchestrator.notify import Notifier
from orchestrator.repo import find_repo
from orchestrator.wiring import loop_roles, real_deps


def run(repo: Path | None, max_cycles: int | None, cooldown: float | None) -> int:
    root = find_repo(repo)
    config = load_config(root)
    setup(root, config, loop_roles(config))
    options = Options()
    notify = Notifier.from_env(config.notify, root.name)
    with stop_on_signals(options.stop, on_second=lambda: os._exit(130)):
        reason = run_daemon(root, config, real_deps(config, root), Limits(max_cycles, cooldown), options, notify,
                            say=lambda line: click.echo(line, err=True))
    click.echo(f"autoformalize run stopped: {reason}")
    return 0
