"""A round stepped as separate jobs (`[parallel] engine = "github"`: the workflow `init --github --workers N` writes).

    round plan → the Planner; the round's files: round.json, base.bundle, items/<k>.json, matrix.json
    round work → one item's Worker, exactly as `remote.run` runs a submitit job; its result as files
    round land → the round again from its files; each result adopted and gated here; the merge queue

The plan job writes what each item's job needs and nothing lands from it, unless the plan is no round (one item, a
fix of the build, an error): that is an ordinary cycle, concluded there. The land job is the coordinator: it reads
each work job's result as bounded data of a fixed shape (`remote.load_result`), applies its patch at its own base,
runs every gate again, and alone commits and pushes. A work job that failed, or left no result, rejects its item
alone. The plan job's journal is put back as it found it, so a round that never lands leaves no trace but the
Planner's spend in the plan job's log.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agents import planner
from agents.ledger import Charge
from gates.scope import InvalidStrategy
from orchestrator import cycle, remote, workcopy
from orchestrator import round as parallel
from orchestrator.config import Config, load_config
from orchestrator.cyclestate import Cycle, Options
from orchestrator.deps import Deps
from orchestrator.git import Git
from orchestrator.journal import Journal
from orchestrator.liveness import Beat
from state.atomic import write_atomic
from state.errors import UsageError
from state.history import HistoryRecord, Outcome, Usage
from state.lock import RunLock

NAME = "github"
ROUND = "round.json"
BUNDLE = "base.bundle"
MATRIX = "matrix.json"  # the indices of the items given a Worker: the workflow's matrix, never a name the Planner wrote
ITEMS = "items"
RESULT = "result-{k}"  # an item's result folder (its artifact's name) among the land job's results


class Planned(BaseModel):
    """The round as its plan job left it: what the land job needs beside the branch."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    cycle: int
    round: int
    base: str
    strategy: str  # the Planner's whole text: the land job reads it again at its own base
    plan_update: str | None = None
    planner_failed: str | None = None
    pivot: str | None = None
    turns: int = 0
    usage: Usage = Field(default_factory=Usage)
    charges: list[Charge] = Field(default_factory=list)  # the Planner's spend, the first item's
    items: list[str]  # the items' names, in the Planner's order
    worked: list[int]  # the indices of those given a Worker (the others were dropped)


def plan(repo: Path, config: Config, deps: Deps, options: Options, out: Path) -> tuple[HistoryRecord | None, Cycle]:
    """The round planned into `out`; or, when the plan is no round, the cycle it is (its record)."""
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty: a round is planned into a folder of its own")
    with _held(repo, config, deps, options) as (c, beat):
        cycle.advance(c, beat, cycle.plan)
        if parallel.single(c):
            write_atomic(out / MATRIX, "[]\n")
            return parallel.ordinary(c, beat)
        items = parallel.split(c)
        assert c.plan is not None and c.entry is not None and items[0].item is not None
        worked = [k for k, ic in enumerate(items) if ic.outcome is not Outcome.REJECTED]
        planned = Planned(cycle=c.number, round=items[0].item.round, base=c.base, strategy=c.plan.text,
                          plan_update=c.plan.plan_update, planner_failed=c.planner_failed, pivot=c.pivot,
                          turns=c.plan.turns, usage=c.plan.usage, charges=list(c.ledger.charges),
                          items=[i.name for i in c.plan.items], worked=worked)
        bundle = remote.bundle(c.git, c.base)
        for k in worked:
            write_atomic(out / ITEMS / f"{k}.json", remote.dump_job(remote.job(items[k], len(worked), bundle)))
        write_atomic(out / BUNDLE, bundle)
        write_atomic(out / ROUND, planned.model_dump_json(indent=1))
        write_atomic(out / MATRIX, json.dumps(worked) + "\n")
        _unjournal(c)  # the land job records the round; a crash found here is its to record too
        return None, c


def work(repo: Path | None, folder: Path, k: int, out: Path) -> remote.Result:
    """Item `k`'s Worker, as a submitit job's; its result written into `out` whatever became of it. `repo`: a
    checkout whose `.lake/packages` the job links (the Lean dependencies fetched before any Worker code runs)."""
    planned = read(folder)
    if k not in planned.worked:
        raise UsageError(f"item {k} of the round in {folder} was not given a Worker (given: {planned.worked})")
    job = remote.load_job((folder / ITEMS / f"{k}.json").read_bytes(), (folder / BUNDLE).read_bytes())
    if repo is not None:
        packages = repo / load_config(repo).project.lake_dir / ".lake" / "packages"
        if packages.is_dir():
            job = replace(job, packages=str(packages.resolve()))
    return remote.work(job, out)


def land(repo: Path, config: Config, deps: Deps, options: Options, folder: Path, results: Path,
         digest: str | None = None) -> tuple[HistoryRecord, Cycle]:
    """The round of `folder` (checked against `digest`) landed: each item's result from `results/result-<k>/`
    adopted, gated, judged, evaluated, then the merge queue."""
    planned = read(folder, digest)
    with _held(repo, config, deps, options) as (c, beat):
        if landed := [r.cycle for r in c.history.records if r.round == planned.round]:
            _unjournal(c)
            raise UsageError(f"round {planned.round} has landed already (cycles {', '.join(map(str, landed))}): a "
                             "round lands once; start a new run of the workflow rather than re-running its jobs")
        for charge in planned.charges:  # spent whatever becomes of the round
            c.ledger.add(charge)
        c.planner_failed, c.pivot = planned.planner_failed, planned.pivot
        try:
            p = planner.read(planned.strategy, planned.usage, config.project.lean_roots, c.census, config.gates,
                             config.parallel.workers)
        except InvalidStrategy as e:
            c.fail(f"the round's strategy cannot be used at {c.base[:12]}, where the branch is now: {e}", infra=False)
            return cycle.conclude(c, beat)
        c.plan = replace(p, plan_update=planned.plan_update, turns=planned.turns)
        if [i.name for i in c.plan.items] != planned.items:  # the same text gives the same items: never expected
            c.fail(f"the round's strategy, read here, gives the items {[i.name for i in c.plan.items]}, where the "
                   f"plan job read {planned.items}", infra=True)
            return cycle.conclude(c, beat)
        items = parallel.split(c)
        parallel.prefetch(c, items)
        engine = Artifacts(results)
        tickets: dict[str, str] = {}
        for k, ic in enumerate(items):
            assert ic.item is not None
            if ic.outcome is Outcome.REJECTED:
                continue
            if k not in planned.worked:  # the plan job gave it no Worker: its Scope met an earlier item's there
                remote.reject(ic, f"item {ic.item.name!r} was dropped when the round was planned: its Scope could "
                                  "meet an earlier item's")
                continue
            ic.item = replace(ic.item, engine=engine.name)
            tickets[ic.item.name] = str(k)
        parallel.gather(items, tickets, c, beat, engine, planned.base)
        return parallel.finish(items, beat)


def read(folder: Path, digest: str | None = None) -> Planned:
    """The planned round; with `digest`, only if its file is the one the plan job wrote (its SHA-256, which the
    workflow hands from job to job where no work job can change it)."""
    path = folder / ROUND
    if not path.is_file():
        raise UsageError(f"{folder} holds no planned round ({ROUND}); `autoformalize round plan --out` writes one")
    data = path.read_bytes()
    if digest is not None and hashlib.sha256(data).hexdigest() != digest.strip().lower():
        raise UsageError(f"{path} is not the round the plan job wrote: its SHA-256 is not {digest.strip()}")
    return Planned.model_validate_json(data)


class Artifacts:
    """The land side of the `github` engine: each item's job has ended, and left its result, or none, in
    `results/result-<k>/` (its artifact)."""

    name = NAME

    def __init__(self, results: Path) -> None:
        self.results = results

    def poll(self, ticket: str) -> bool:
        return True

    def collect(self, ticket: str) -> Path:
        folder = self.results / RESULT.format(k=int(ticket))
        if not folder.is_dir() or folder.is_symlink():
            raise ValueError(f"no artifact {folder.name} reached the land job: the item's job failed or was cancelled "
                             "before it uploaded one, or fetching the results failed (see those steps' logs)")
        return folder

    def close(self) -> None:
        return None


def _unjournal(c: Cycle) -> None:
    """The journal as the cycle found it: this step lands nothing, so it leaves nothing to recover."""
    if c.found is None:
        c.journal.clear()
    else:
        c.journal.write(c.found)


@contextlib.contextmanager
def _held(repo: Path, config: Config, deps: Deps, options: Options) -> Iterator[tuple[Cycle, Beat]]:
    """A cycle up to its plan, under the run lock and its own heartbeat."""
    paths = config.state(repo)
    with RunLock(paths.lock), Beat(paths.heartbeat, config.loop.heartbeat_s, deps.clock) as beat:
        git = Git(repo)
        c = Cycle(repo, config, deps, options, git, paths, Journal(workcopy.git_dir(git)), deps.clock.now())
        cycle.start(c, beat)
        yield c, beat

