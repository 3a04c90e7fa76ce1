"""`autoformalize doctor`: the setup a cycle needs, then the canaries on the user's real Lean."""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator.config import load_config
from orchestrator.doctor import Finding, Status, examine
from orchestrator.repo import find_repo

MARKS = {Status.OK: "ok  ", Status.WARN: "warn", Status.FAIL: "FAIL", Status.SKIP: "skip"}


def run(repo: Path | None, canaries: bool) -> int:
    """Exit 0 when nothing failed (warnings allowed), 1 naming what did: a missing piece of the setup, a cheat
    that got through, a canary that does not compile, or an honest proof refused."""
    root = find_repo(repo)
    config = load_config(root)
    click.echo(f"autoformalize doctor in {root}")
    findings = examine(root, config, with_canaries=canaries, say=_say)
    failed = [f for f in findings if f.status is Status.FAIL]
    if failed:
        click.echo(f"\n{len(failed)} check(s) failed: {', '.join(f.check for f in failed)}", err=True)
        return 1
    skipped = [f.check for f in findings if f.status is Status.SKIP]
    click.echo("\nEverything checked is in place" + ("; every cheat was rejected and the honest proof accepted"
                                                      if canaries else "")
               + (f"; not checked: {', '.join(skipped)} (see above)." if skipped else "."))
    return 0


def _say(finding: Finding) -> None:
    click.echo(f"  {MARKS[finding.status]}  {finding.check:<22} {finding.detail}")
