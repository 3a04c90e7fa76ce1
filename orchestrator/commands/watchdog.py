"""`autoformalize watchdog`: supervise `run`, restarting it when it dies or hangs."""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator.config import load_config
from orchestrator.git import Git
from orchestrator.notify import Notifier
from orchestrator.repo import find_repo
from orchestrator.watchdog import Policy, run_command, watch
from orchestrator.workcopy import git_dir


def run(repo: Path | None, stale_after: float | None, max_restarts: int, log: Path | None,
        run_args: list[str]) -> int:
    root = find_repo(repo)
    config = load_config(root)
    policy = Policy(stale_after_s=stale_after or 5.0 * config.loop.heartbeat_s, max_restarts=max_restarts,
                    check_every_s=min(5.0, float(config.loop.heartbeat_s)))
    log_path = log or git_dir(Git(root)) / "autoformalize" / "run.log"
    notify = Notifier.from_env(config.notify, root.name)
    return watch(run_command(root, run_args), config.state(root).heartbeat, log_path, policy, notify,
                 say=lambda line: click.echo(line, err=True))
