"""`autoformalize forecast`: each open target's difficulty, and the cycles and dollars left to close them all."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from difficulty.forecast import Forecast, render
from gates.census import Census, census
from gates.tree import DirTree
from orchestrator.config import load_config
from orchestrator.git import Git, GitError
from orchestrator.kernelcheck import mark
from orchestrator.outlook import forecast_for
from orchestrator.repo import find_repo
from state.history import read_history


def tree_of(repo: Path) -> Census:
    """The working tree's census, with what Lean listed of it where the repository's cache holds it (as `status`)."""
    config = load_config(repo)
    tree = census(DirTree(repo), config.project.lean_roots)
    with contextlib.suppress(GitError):  # where Lean listed a file, Lean says which declarations hold a hole
        mark(tree, Git(repo), repo, config.project, config.gates)
    return tree


def collect(repo: Path, tree: Census | None = None) -> Forecast:
    config = load_config(repo)
    history = read_history(config.state(repo).history)
    return forecast_for(config, history.records, tree if tree is not None else tree_of(repo))


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
