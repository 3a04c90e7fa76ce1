"""The difficulty model and the forecast as the commands and the cycle use them, from the configuration.

`estimate_for` fits `[difficulty] method` on the history and the tree with the Worker's model and its hard model;
`forecast_for` adds what a cycle costs (recent records; the hard model's price beside the Worker's usual one) and
what the total budget has left. `hard_targets` says which open targets go to the external prover, `brief` what
the Planner is shown of them. `cycle_cost` estimates a cycle's cost from the prices, as the dry run shows it.

`ahead` is the forecast as `forecast`, `status`, the dry run and the dashboard read it: kept in the git directory
(`autoformalize/forecast/`, never committed), keyed by the records, the tree's files and holes, the current cycle,
the settings it depends on and the code that makes it, so that with thousands of open targets only the first
reader of a history and tree pays for the simulation. The cycle makes it after it lands; `status` and the dry run
only read it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import structlog
from pydantic import ValidationError

import difficulty
from agents.prices import session_cost
from difficulty.estimate import Estimate, Target, estimate
from difficulty.forecast import Forecast, forecast, priced
from difficulty.simulate import Spend
from gates.census import Census, census
from gates.chosen import shown
from gates.tree import DirTree
from orchestrator import workcopy
from orchestrator.config import Config
from orchestrator.git import Git, GitError
from state.atomic import write_atomic
from state.errors import UsageError
from state.files import Linked, last_cycle, read_bytes
from state.history import HistoryRecord
from state.prover_jobs import ProverJobs

log = structlog.get_logger()

# A typical Worker session, to set the hard model's price beside the usual one (agents.prices.session_cost).
TYPICAL_PROMPT = 20_000
TYPICAL_TURNS = 20
SHORT_TURNS = 10  # a Worker that closes a small sorry, or gives up early: the low end of a cycle's cost
KEPT = 8  # forecasts kept in the cache, the latest

UNMADE = ("not made yet for this history and tree: `autoformalize forecast` makes it (each cycle of the loop does "
          "as it ends)")

Calls = dict[str, tuple[int, int, int]]  # role → (prompt tokens, a short session's turns, the longest's)


def estimate_for(config: Config, records: Sequence[HistoryRecord], tree: Census) -> Estimate:
    worker = config.agents.worker
    return estimate(records, tree, config.project.lean_roots, config.difficulty, worker.model, worker.hard_model)


def spend_for(config: Config, est: Estimate) -> Spend | None:
    """What a cycle costs, from the recent records with a known cost; None without one."""
    if not est.attempts.costs:
        return None
    ratio = 1.0
    hard = config.agents.worker.hard_model
    if hard:
        usual = session_cost(config.agents.worker.model, TYPICAL_PROMPT, TYPICAL_TURNS, config.prices)
        other = session_cost(hard, TYPICAL_PROMPT, TYPICAL_TURNS, config.prices)
        ratio = other / usual if usual and other is not None else 1.0
    return Spend(est.attempts.costs, ratio)


def left_usd(config: Config, records: Sequence[HistoryRecord]) -> float | None:
    """What `[budget] total_usd` has left, or None without one."""
    total = config.budget.total_usd
    return None if total is None else max(0.0, total - sum(r.spent_usd for r in records))


def forecast_for(config: Config, records: Sequence[HistoryRecord], tree: Census,
                 est: Estimate | None = None, cycle: int = 0) -> Forecast:
    est = est or estimate_for(config, records, tree)
    return forecast(est, config.difficulty, spend_for(config, est), left_usd(config, records), cycle)


def cycle_cost(config: Config, calls: Calls) -> tuple[float, float, set[str]]:
    """A cycle's cost from each role's prompt and turns: (its short sessions, its longest), and the models with no
    price (left out)."""
    unknown: set[str] = set()

    def total(end: int) -> float:  # 1: each role's short session, 2: its longest
        out = 0.0
        for role, call in calls.items():
            model = getattr(config.agents, role).model
            price = session_cost(model, call[0], call[end], config.prices) if call[end] else 0.0
            if price is None:
                unknown.add(model)
            out += price or 0.0
        return out

    return total(1), total(2), unknown


def per_cycle(config: Config, calls: Calls | None = None) -> tuple[float, float] | None:
    """A cycle's cost from the prices (`cycle_cost`; by default with a typical prompt for the Planner, the Worker
    and the Evaluator): (a short Worker session, the longest allowed), held to `[budget] per_cycle_usd`; None when
    the Worker's model has no price."""
    a = config.agents
    reads = a.planner.max_turns if a.planner.serves_tools else 1
    calls = calls or {"planner": (TYPICAL_PROMPT, 1, reads),
                      "worker": (TYPICAL_PROMPT, min(SHORT_TURNS, a.worker.max_turns), a.worker.max_turns),
                      "evaluator": (TYPICAL_PROMPT, 1, 1)}
    low, high, unknown = cycle_cost(config, calls)
    if a.worker.model in unknown:
        return None
    cap = config.budget.per_cycle_usd
    return (low, high) if cap is None else (min(low, cap), min(high, cap))


def ahead(config: Config, repo: Path, records: Sequence[HistoryRecord], tree: Census, *, make: bool = True,
          est: Estimate | None = None, cost: tuple[float, float] | None = None) -> Forecast | None:
    """The forecast for `records` and `tree`: the one kept for them, else (`make`) made and kept; None when none is
    kept and `make` is false. Its dollars come from `cost` (a cycle's, low and high) where no recorded cycle has
    one, else from `per_cycle`."""
    try:
        cycle = last_cycle(config.state(repo))
    except UsageError:  # `status` names the broken counter; the forecast counts from the records
        cycle = 0
    key = _key(config, records, tree, cycle)
    folder = _folder(repo)
    found = _read(folder / f"{key}.json") if folder is not None else None
    if found is None and make:
        found = forecast_for(config, records, tree, est, cycle)
        if folder is not None:
            _keep(folder, key, found)
    return None if found is None else priced(found, cost or per_cycle(config), left_usd(config, records))


def tree_of(repo: Path, config: Config) -> Census:
    """The checkout's census, with what Lean listed of it where the repository's cache holds it (as `status`)."""
    from orchestrator.kernelcheck import mark  # the gates' machinery: loaded only where a tree is read

    tree = census(DirTree(repo), config.project.lean_roots)
    with contextlib.suppress(GitError):  # where Lean listed a file, Lean says which declarations hold a hole
        mark(tree, Git(repo), repo, config.project, config.gates)
    return tree


def _folder(repo: Path) -> Path | None:
    try:
        return workcopy.git_dir(Git(repo)) / "autoformalize" / "forecast"
    except GitError:  # not a repository: nothing is kept
        return None


def _key(config: Config, records: Sequence[HistoryRecord], tree: Census, cycle: int) -> str:
    """What a forecast depends on: the records it was made from (not the file read again, which a landing cycle
    may have moved on), the tree's files and which declarations hold how many holes (Lean's listings decide that
    where they were read), the current cycle, the settings the fit, the simulation and the dollars read, and the
    code that makes it."""
    worker = config.agents.worker
    history = hashlib.sha256()
    for r in records:
        history.update(r.model_dump_json().encode())
    parts = {"code": _code(), "cycle": cycle, "history": history.hexdigest(),
             "files": sorted((path, f.digest) for path, f in tree.files.items()),
             "holed": sorted((h.path, h.name, h.count) for h in tree.holed()),
             "roots": config.project.lean_roots, "difficulty": config.difficulty.model_dump(mode="json"),
             "models": [worker.model, worker.hard_model, config.agents.planner.model, config.agents.evaluator.model],
             "turns": [worker.max_turns, config.agents.planner.max_turns],
             "prices": {m: price.model_dump(mode="json") for m, price in config.prices.items()},
             "budget": config.budget.model_dump(mode="json")}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def _code() -> str:
    """The source of the difficulty package and of this module: a forecast made by other code is made again."""
    digest = hashlib.sha256()
    for path in [*sorted(Path(difficulty.__file__).parent.glob("*.py")), Path(__file__)]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _read(path: Path) -> Forecast | None:
    try:
        data = read_bytes(path)
        found = None if data is None else Forecast.model_validate_json(data)
    except (Linked, OSError, ValidationError):  # not a kept forecast this version wrote: made again
        return None
    if found is not None:
        with contextlib.suppress(OSError):  # read now: the latest KEPT in use stay, whoever made them
            os.utime(path)
    return found


def _keep(folder: Path, key: str, found: Forecast) -> None:
    try:
        write_atomic(folder / f"{key}.json", found.model_dump_json())
        entries = sorted(os.scandir(folder), key=lambda e: e.stat().st_mtime)
        for e in entries[:max(0, len(entries) - KEPT)]:
            Path(e.path).unlink(missing_ok=True)
    except OSError as e:  # a read-only git directory: the forecast is shown all the same
        log.warning("forecast.not_kept", error=str(e))


def hard_targets(est: Estimate, jobs: ProverJobs, config: Config) -> list[str]:
    """The open targets to send to the external prover: `[difficulty] prover_after` failed attempts since one last
    went to it (or ever), a chance below `prover_below_p` at the next attempt, and no open job holding it."""
    after = config.difficulty.prover_after
    if after is None:
        return []
    held = {t.declaration for j in jobs.jobs if j.open for t in j.targets}
    sent: dict[str, int] = {}
    for j in jobs.jobs:
        for t in j.targets:
            sent[t.declaration] = max(sent.get(t.declaration, 0), j.submitted_cycle)
    return [t.declaration for t in est.tried()  # `after` is at least one failure of its own
            if t.declaration not in held and t.p_next < config.difficulty.prover_below_p
            and est.attempts.failures_since(t.declaration, sent.get(t.declaration, 0)) >= after]


def cost_per_attempt(est: Estimate) -> float | None:
    """What one attempt costs: the median recent cycle's cost over the targets an aiming cycle takes."""
    costs = sorted(c for c, _ in est.attempts.costs)
    if not costs:
        return None
    sizes = est.attempts.sizes or [1]
    return costs[len(costs) // 2] / (sum(sizes) / len(sizes))


SHOWN = 15  # candidate targets the Planner is shown


def brief(est: Estimate, config: Config) -> tuple[str, str]:
    """The Planner's "Difficulty" section: what the figures mean and what the loop does with them, in the
    orchestrator's words (no name a Worker chose), and the candidate targets as data — most expected closes per
    dollar first (most likely to close where no cycle's cost is known) — each name rendered by `shown`."""
    tried = sum(len(t) for t in est.attempts.own.values())
    if not est.open or not tried:  # before any attempt every figure is the prior's: nothing to tell
        return "", ""
    per = cost_per_attempt(est)
    ratio = spend.hard_ratio if (spend := spend_for(config, est)) is not None else 1.0
    d = config.difficulty
    head = (f"How hard the open targets have proved, from {tried} attempts in {est.attempts.cycles} cycles. "
            f"\"fails\" is how often a Worker of average skill would fail one; \"next\" the chance the next "
            f"attempt ({est.model}) closes it"
            + (f"; {est.hard_model} takes those marked hard" if est.hard_model else "")
            + (f"; \"per $\" the closes to expect per dollar, at ${per:.2f} an attempt" if per else "")
            + ". The plan's Current Target comes first whatever these say; among the rest, prefer a target the next "
              "attempt is likely to close over one that keeps failing."
            + (f" A target whose chance stays below {d.prover_below_p:g} after {d.prover_after} failed attempts goes "
               "to the external prover." if d.prover_after else ""))

    usual, hard = (per, per * ratio) if per else (1.0, 1.0)

    def value(t: Target) -> float:
        return t.p_next / (hard if t.hard else usual)

    ranked = est.ranked(SHOWN, key=lambda t: (-value(t), t.declaration))
    rows = [f"- {shown(t.declaration)} ({shown(t.file)}): fails {t.difficulty:.0%}, {t.attempts} attempts, "
            f"next {t.p_next:.0%}" + (" (hard)" if t.hard else "") + (f", {value(t):.3f} per $" if per else "")
            for t in ranked]
    if len(est.open) > SHOWN:
        rows.append(f"- and {len(est.open) - SHOWN} more open targets")
    return head, "\n".join(rows)
