"""`autoformalize forecast`: each open target's difficulty, and the cycles and dollars left to close them all: the
forecast kept for this history and tree, else made and kept (`orchestrator.outlook.ahead`)."""

from __future__ import annotations

from pathlib import Path

import click

from difficulty.forecast import Forecast, render
from gates.census import Census
from orchestrator.config import load_config
from orchestrator.outlook import ahead, tree_of
from orchestrator.repo import find_repo
from state.history import read_history


def collect(repo: Path, tree: Census | None = None) -> Forecast:
    config = load_config(repo)
    history = read_history(config.state(repo).history)
    made = ahead(config, repo, history.records, tree if tree is not None else tree_of(repo, config))
    assert made is not None  # `make` is on
    return made


def run(repo: Path | None, as_json: bool) -> int:
    root = find_repo(repo)
    result = collect(root)
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    else:
        click.echo(render(result))
    for warning in result.warnings if as_json else []:
        click.echo(f"warning: {warning}", err=True)
    return 0
