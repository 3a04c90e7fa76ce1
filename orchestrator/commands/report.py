"""`autoformalize report`: the static dashboard of the run, from the repository's files alone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from orchestrator.repo import find_repo
from orchestrator.report import build
from state.atomic import unwritable
from state.errors import UsageError


def run(repo: Path | None, out: Path) -> int:
    root = find_repo(repo)
    target = out.resolve()
    if problem := unwritable(target / "index.html"):
        raise UsageError(f"cannot write the report: {problem}")
    index = build(root, target, datetime.now(UTC))
    click.echo(f"wrote {index}")
    if target.is_relative_to(root) and not target.is_relative_to(root / ".git"):
        click.echo(f"note: {target.relative_to(root)} is inside the repository; add it to .gitignore, or `cycle` "
                   "will refuse to run over the uncommitted files", err=True)
    return 0
