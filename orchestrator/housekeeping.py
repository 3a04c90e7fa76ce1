"""The sweep: every `sweep_interval_hours`, close issues that no longer matter and prune old prover results.

It runs in the Worker's working copy on the cycle's base and commits there, in
a commit of its own (trailer `Autoformalize-Sweep: <time>`) that the cycle's
commit then sits on; that trailer on the branch is how the next cycle, in any
run mode and after any restart, knows when the last sweep was. A cycle that
does not land drops its sweep, and the next one sweeps again.

Issues: `<state>/issues/<slug>.md`, from the Worker's `open_issue`, the
Consultant's advice, or a human. An issue's targets are the declarations of
the census it names in backticks (qualified, or by a dotted suffix such as
`hard` for `Book.hard`). It is closed when it names targets and none of them
holds a sorry or admit any more, or when it was last changed
`issue_stale_cycles` cycles ago or more and neither strategy.md, the plan nor
the recent history records mention its slug or a target. The judge's
`unfaithful-*` issues are the judge's to close, and a person's rejection's
`review-*` issues a person's (their approval closes one). A closed issue moves to
`<state>/issues/closed/` with a note saying when and why.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog

from audit.loop import FINDING
from gates.census import Census
from orchestrator.blame import SorryAge
from orchestrator.config import HousekeepingConfig
from orchestrator.git import Git
from state import files
from state.history import HistoryRecord
from state.paths import StatePaths
from state.prover_jobs import JobStatus, read_jobs
from state.reviews import ISSUE_PREFIX

log = structlog.get_logger()
TRAILER = "Autoformalize-Sweep"
CYCLE_TRAILER = "Autoformalize-Cycle"
_TICKED = re.compile(r"`([^`\s]+)`")


@dataclass(frozen=True)
class Removal:
    path: str  # relative to the repository
    reason: str


@dataclass
class Sweep:
    closed: list[Removal] = field(default_factory=list)
    pruned: list[Removal] = field(default_factory=list)
    persistent: list[SorryAge] = field(default_factory=list)


def last_sweep(git: Git, rev: str) -> datetime | None:
    """When the last sweep on `rev`'s history ran, from its commit's trailer."""
    value = git.run("log", "-1", f"--grep=^{TRAILER}: ", f"--format=%(trailers:key={TRAILER},valueonly)", rev)
    try:
        return datetime.fromisoformat(value.strip()) if value.strip() else None
    except ValueError:
        return None


def due(git: Git, rev: str, history: list[HistoryRecord], now: datetime, config: HousekeepingConfig) -> bool:
    """A sweep is due `sweep_interval_hours` after the last one, or before any, after the first recorded cycle
    (a new project has nothing to sweep)."""
    if config.sweep_interval_hours <= 0:
        return False
    since = last_sweep(git, rev) or next((r.started_at for r in history if r.started_at), None)
    if since is None:
        return False
    since = since if since.tzinfo else since.replace(tzinfo=UTC)  # records of the reference script are naive
    return now - since >= timedelta(hours=config.sweep_interval_hours)


def stale_issues(git: Git, rev: str, paths: StatePaths, census: Census, cycle: int, mentions: str,
                 config: HousekeepingConfig) -> list[Removal]:
    """The open issues to close and why; `mentions` is the text an issue in use is named in."""
    holes = _holes_by_name(census)
    names = _suffixes(holes)
    changed, human = last_changed_cycle(git, rev, paths)
    mentioned = mentions.lower()
    out: list[Removal] = []
    for issue in files.open_issues(paths):
        if issue.slug.startswith((FINDING, ISSUE_PREFIX)):  # the judge's to close; a person's to close
            continue
        path = paths.relative(issue.path)
        targets = sorted({n for token in _TICKED.findall(issue.text()) for n in names.get(token.strip(".,;:()"), [])})
        if targets and path not in human and not any(holes[t] for t in targets):  # a person's note may name done work
            out.append(Removal(path, f"its targets no longer hold a sorry: {', '.join(targets)}"))
            continue
        age = cycle - changed.get(path, cycle)
        if age >= config.issue_stale_cycles and not any(w.lower() in mentioned for w in [issue.slug, *targets]):
            out.append(Removal(path, f"unchanged for {age} cycles and not mentioned by strategy.md, the plan or "
                                     "the recent cycles"))
    return out


def prunable(git: Git, rev: str, paths: StatePaths, now: datetime, days: float) -> list[Removal]:
    """Prover job directories (`<state>/prover_results/<job>/`) whose last commit is `days` old or more, unless
    the jobs ledger says the job's proofs are still waiting for a Worker to use them."""
    root = paths.prover_results
    waiting = {j.id for j in read_jobs(paths.prover_jobs).jobs if j.status is JobStatus.RETURNED and j.use is None}
    if not root.is_dir():
        return []
    prefix = paths.relative(root) + "/"
    last: dict[str, int] = {}
    when = 0
    for row in git.run("log", "--format=%x1e%ct", "--name-only", rev, "--", prefix).split("\n"):
        if row.startswith("\x1e"):
            when = int(row[1:])
        elif row.startswith(prefix):
            last.setdefault(prefix + row[len(prefix):].split("/", 1)[0], when)
    out = []
    for job in sorted(p for p in root.iterdir() if p.is_dir()):
        rel = paths.relative(job)
        if rel not in last or job.name in waiting:  # never committed, or its proofs not yet tried
            continue
        age = (now - datetime.fromtimestamp(last[rel], now.tzinfo)).total_seconds() / 86400
        if age >= days:
            out.append(Removal(rel, f"last changed {age:.0f} days ago"))
    return out


def sweep(work: Git, paths: StatePaths, census: Census, cycle: int, now: datetime, mentions: str,
          persistent: list[SorryAge], config: HousekeepingConfig) -> tuple[Sweep, str]:
    """Close, prune and report in `work` (clean, at its HEAD) and commit; the result and the new commit."""
    rev = work.head()
    done = Sweep(stale_issues(work, rev, paths, census, cycle, mentions, config),
                 prunable(work, rev, paths, now, config.prune_after_days), persistent)
    closed_dir = paths.issues / "closed"
    for r in done.closed:
        source = paths.repo / r.path
        target = closed_dir / source.name
        if target.exists():  # closed before under the same name, and reopened
            target = closed_dir / f"{source.stem}-cycle-{cycle:03d}.md"
        note = f"\n---\nClosed by the sweep before cycle {cycle} ({now:%Y-%m-%d %H:%M} UTC): {r.reason}.\n"
        files.write_text(target, (files.read_text(source) or "").rstrip("\n") + "\n" + note)
        source.unlink()
    for r in done.pruned:
        shutil.rmtree(paths.repo / r.path)
    files.write_text(report_path(paths, now), render(done, cycle, now, config))
    commit = work.commit_all(f"autoformalize: sweep before cycle {cycle}: {len(done.closed)} issues closed, "
                             f"{len(done.pruned)} prover results pruned\n\n{TRAILER}: {now.isoformat()}\n")
    log.info("sweep.done", cycle=cycle, closed=len(done.closed), pruned=len(done.pruned), commit=commit[:12])
    return done, commit


def render(done: Sweep, cycle: int, now: datetime, config: HousekeepingConfig) -> str:
    def listed(items: list[str]) -> list[str]:
        return items or ["(none)"]

    return "\n".join([
        f"# Sweep before cycle {cycle} — {now:%Y-%m-%d %H:%M} UTC", "",
        f"## Issues closed ({len(done.closed)})", "", *listed([f"- `{r.path}`: {r.reason}" for r in done.closed]),
        "", f"## Prover results pruned ({len(done.pruned)})", "",
        *listed([f"- `{r.path}`: {r.reason}" for r in done.pruned]), "",
        f"## Persistent sorries ({len(done.persistent)}, unchanged for {config.sorry_age_days:g}+ days)", "",
        *listed([f"- {a.describe()}" for a in done.persistent]), ""])


def _holes_by_name(census: Census) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, d in census.decls():
        if d.name:
            out[d.name] = out.get(d.name, 0) + d.holes
    return out


def _suffixes(names: Iterable[str]) -> dict[str, list[str]]:
    """Each dotted suffix of each name (`Book.hard`, `hard`) → the names it may stand for."""
    out: dict[str, list[str]] = {}
    for name in names:
        parts = name.split(".")
        for i in range(len(parts)):
            out.setdefault(".".join(parts[i:]), []).append(name)
    return out


def last_changed_cycle(git: Git, rev: str, paths: StatePaths) -> tuple[dict[str, int], set[str]]:
    """Each issue file's last change, as the cycle of the commit that made it (for a commit that is not a
    cycle's, a person's, the last cycle before it); and the files a person changed last."""
    issues = paths.relative(paths.issues)
    out: dict[str, int] = {}
    pending: dict[str, str] = {}  # path → a commit without a cycle trailer
    commit, number = "", None
    log_text = git.run("log", f"--format=%x1e%H %(trailers:key={CYCLE_TRAILER},valueonly)", "--name-only", rev,
                       "--", f":(glob){issues}/*.md")
    for row in log_text.split("\n"):  # not splitlines(), which also splits at the record separator
        if row.startswith("\x1e"):
            commit, _, value = row[1:].partition(" ")
            number = int(value) if value.strip().isdigit() else None
        elif row.startswith(issues + "/") and row not in out and row not in pending:
            if number is None:
                pending[row] = commit
            else:
                out[row] = number
    for path, c in pending.items():
        value = git.run("log", "-1", f"--grep=^{CYCLE_TRAILER}: ",
                        f"--format=%(trailers:key={CYCLE_TRAILER},valueonly)", c)
        out[path] = int(value) if value.strip().isdigit() else 0
    return out, set(pending)


def mentions(strategy: str | None, plan: str | None, history: list[HistoryRecord], cycles: int) -> str:
    """The text an issue in use is named in: strategy.md, the plan, and the last `cycles` records."""
    recent = [" ".join([r.summary, r.stuck_on, r.strategy_recommendation, r.attempts_update, *r.changed_files])
              for r in history[-cycles:]]
    return "\n".join([strategy or "", plan or "", *recent])


def report_path(paths: StatePaths, now: datetime) -> Path:
    return paths.root / "sweeps" / f"sweep_{now:%Y%m%d-%H%M}.md"
