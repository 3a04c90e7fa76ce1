"""A round item's Worker run elsewhere: what the job takes, what it gives back, and how the coordinator takes it.

    coordinator: `job(ic)` → an engine runs `run(job)` in another process or machine → `adopt(ic, result)`

The job carries the repository at the round's base as a `git bundle`, the item's strategy and Scope, the
configuration file's text and what the coordinator already spent. `run` unpacks it into a temporary clone and
runs the item's `cycle.work` there, exactly as a local item does (its sandbox, its compiler, the model backends
from that environment's keys, its gates and repair rounds), and returns the change as a binary patch against the
base with the session's record. It never commits to the branch and never pushes: the clone is deleted.

The job's process writes its result as files (`work`: the patch and the session's record as JSON), whatever engine
ran it, and the coordinator reads them as data of a fixed shape and bounded size (`load_result`): never a pickle,
which would run whatever code the machine that wrote it chose.

The coordinator trusts none of it: `adopt` refuses a patch that would write what no gate reads (`patchcheck`),
records the working copy's build outputs as a local session's are (`buildoutputs`), applies the patch in the
item's own working copy and runs every gate there again; a patch that is refused or does not apply, or a job that
failed, rejects that item alone, with the reason.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import structlog
from pydantic import TypeAdapter

from agents.ledger import Budget, Charge, Ledger, Limit
from agents.planner import Plan
from agents.tools import Tally
from agents.worker import Context, Round
from gates.base import GateResult
from gates.census import census
from orchestrator import buildoutputs, cycle, kernelcheck, patchcheck, workcopy
from orchestrator.buildcheck import BuildStatus
from orchestrator.config import CONFIG_FILE, load_config
from orchestrator.cyclestate import Cycle, Options, RoundItem
from orchestrator.git import Git, GitTree
from orchestrator.journal import Journal
from orchestrator.verdicts import held
from orchestrator.wiring import real_deps
from state.atomic import write_atomic
from state.errors import InfraError
from state.history import History, Outcome, Usage, read_history

log = structlog.get_logger()
REMOTE = "remote"  # the gate result naming what the coordinator could not take from a job
BUNDLED = "refs/autoformalize/bundle"
WORKER = "worker-remote"  # the job's working copy, under its machine's cache directory


@dataclass(frozen=True)
class Job:
    """What a Worker elsewhere needs; plain data, so it pickles."""

    item: str
    cycle: int
    round: int
    base: str
    bundle: bytes  # `git bundle` of the repository at `base`
    strategy: str  # the item's own section
    scope: list[str]
    round_strategy: str
    config: str  # the configuration file's text
    build_ok: bool  # whether the base builds (the kernel gate's baseline is taken only then)
    pairing: dict[str, str]
    budget: Budget | None  # the limits, with what the history and the round's other items spent, and its share
    charges: list[Charge]  # the item's charges so far (the round's Planner, on its first): a cycle's limit counts them
    packages: str  # the coordinator's `.lake/packages`: linked when the node sees it (a shared file system)


@dataclass
class Played:
    """A Worker session that ran elsewhere, as its record needs it."""

    turns: int
    rounds: list[Round]
    context: Context
    tools: Tally
    text: str
    limited_until: datetime | None = None

    def run(self, prompt: str) -> Round:
        raise InfraError("a session that ran elsewhere cannot be run again")

    def resume(self, feedback: str) -> Round:
        raise InfraError("a session that ran elsewhere cannot be resumed")

    def report(self) -> str:
        return self.text

    def close(self) -> None:
        return None


@dataclass(frozen=True)
class Result:
    patch: bytes  # `git diff --binary <base>` of the Worker's change; empty for none
    session: Played | None
    charges: list[Charge] = field(default_factory=list)
    refused: Limit | None = None
    outcome: Outcome | None = None  # what the job's own gates said (advice only: the coordinator's decide)
    error: str | None = None
    infra: bool = False
    item: str = ""  # the job's item and base: a result in a file must be the one its item's job wrote
    base: str = ""


# Jobs and results as files: every remote engine's jobs hand their results to the coordinator so (a submitit job's
# folder, GitHub Actions' artifacts). Plain JSON, never pickle: a result comes from a machine that ran
# Worker-written code, so it is read as data of a fixed shape and bounded size, and everything it carries is gated
# again.
JOB_ADAPTER = TypeAdapter(Job)
RESULT_ADAPTER = TypeAdapter(Result)
RESULT = "result.json"
PATCH = "change.patch"
MAX_RESULT_BYTES = 16 << 20
MAX_PATCH_BYTES = 64 << 20


def dump_job(j: Job) -> bytes:
    """The job without its bundle, which a round's jobs share (`load_job`)."""
    return JOB_ADAPTER.dump_json(j, exclude={"bundle"}, indent=1)


def load_job(data: bytes, bundle: bytes) -> Job:
    return JOB_ADAPTER.validate_python({**json.loads(data), "bundle": bundle})


def save_result(folder: Path, result: Result) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / PATCH, result.patch)
    write_atomic(folder / RESULT, RESULT_ADAPTER.dump_json(result, exclude={"patch"}, indent=1))


def _regular(path: Path) -> bool:
    """A file as it is, never one a link points to."""
    return path.is_file() and not path.is_symlink()


def load_result(folder: Path, item: str, base: str) -> Result:
    """The result `save_result` wrote for `item` at `base`; ValueError saying what is wrong with it."""
    sizes = {name: (folder / name).lstat().st_size if _regular(folder / name) else None for name in (RESULT, PATCH)}
    if None in sizes.values():
        missing = " and ".join(name for name, size in sizes.items() if size is None)
        raise ValueError(f"its result has no {missing} as a regular file (the job failed or was cancelled before "
                         "it wrote them)")
    if (sizes[RESULT] or 0) > MAX_RESULT_BYTES or (sizes[PATCH] or 0) > MAX_PATCH_BYTES:
        raise ValueError(f"its result is larger than the bound ({MAX_RESULT_BYTES:,} bytes of record, "
                         f"{MAX_PATCH_BYTES:,} of patch)")
    try:
        data = json.loads((folder / RESULT).read_bytes())
        result = RESULT_ADAPTER.validate_python({**data, "patch": (folder / PATCH).read_bytes()})
    except (ValueError, TypeError) as e:
        raise ValueError(f"its result cannot be read: {str(e)[:500]}") from None
    if any(not math.isfinite(ch.cost_usd or 0) or (ch.cost_usd or 0) < 0 or min(ch.usage.model_dump().values()) < 0
           for ch in result.charges):
        raise ValueError("its result charges a negative or unbounded spend")
    if (result.item, result.base) != (item, base):
        raise ValueError(f"its result is for item {result.item!r} at {result.base[:12] or 'no base'}, not for "
                         f"{item!r} at {base[:12]}")
    return result


def bundle(git: Git, base: str) -> bytes:
    """`git bundle` of the repository at `base`: made once a round, its jobs share it."""
    with tempfile.TemporaryDirectory(prefix="autoformalize-bundle-") as tmp:
        path = Path(tmp) / "base.bundle"
        ref = f"{BUNDLED}/{base}"  # a bundle holds refs: the base's, for as long as it takes
        git.run("update-ref", ref, base)
        try:
            git.run("bundle", "create", "--quiet", str(path), ref)
        finally:
            git.run("update-ref", "-d", ref)
        return path.read_bytes()


def job(ic: Cycle, items: int, shared: bytes) -> Job:
    """The item's job, with `shared` (the `bundle` of the round's base), one of `items` worked elsewhere at once: it may
    spend its part of what the day's and the total budget have left (no job sees what the others spend)."""
    assert ic.item is not None and ic.plan is not None and ic.build is not None
    budget = ic.ledger.budget.share(items) if ic.ledger.budget is not None else None
    lake = ic.repo / ic.config.project.lake_dir / ".lake" / "packages"
    return Job(item=ic.item.name, cycle=ic.number, round=ic.item.round, base=ic.base, bundle=shared,
               strategy=ic.plan.text, scope=list(ic.plan.scope), round_strategy=ic.item.strategy,
               config=(ic.repo / CONFIG_FILE).read_text(encoding="utf-8") if (ic.repo / CONFIG_FILE).is_file()
               else "", build_ok=ic.build.ok, pairing=dict(ic.pairing),
               budget=budget,
               charges=list(ic.ledger.charges),
               packages=str(lake.resolve()) if lake.is_dir() else "")


def run(j: Job) -> Result:
    """In the job's process: the item's Worker in a temporary clone at the base; its change as a patch."""
    tmp = Path(tempfile.mkdtemp(prefix="autoformalize-item-"))
    repo = tmp / "repo"
    work: Git | None = None
    try:
        (tmp / "base.bundle").write_bytes(j.bundle)
        subprocess.run(["git", "init", "--quiet", str(repo)], check=True, capture_output=True)
        git = Git(repo)
        git.run("fetch", "--quiet", str(tmp / "base.bundle"), f"{BUNDLED}/*:refs/remotes/base/*")
        git.run("checkout", "--quiet", "--detach", j.base)
        (repo / CONFIG_FILE).write_text(j.config, encoding="utf-8")
        config = load_config(repo)
        lake_dir = config.project.lake_dir
        if j.packages and Path(j.packages).is_dir():
            (repo / lake_dir / ".lake").mkdir(parents=True, exist_ok=True)
            (repo / lake_dir / ".lake" / "packages").symlink_to(j.packages)
        work = workcopy.prepare(git, j.base, lake_dir, WORKER)
        paths = config.state(repo)
        at_base = census(GitTree(git, j.base), config.project.lean_roots)
        c = Cycle(repo, config, real_deps(config, repo), Options(push=False), git, paths,
                  Journal(tmp / "journal"), datetime.now(UTC), number=j.cycle, base=j.base,
                  history=read_history(paths.history) if paths.history.is_file() else History(),
                  census=at_base, people=held(git, j.base, config.gates.reviews, at_base),
                  build=BuildStatus(j.build_ok, "as the coordinator found the base"), work=work,
                  plan=Plan(j.strategy, j.scope, Usage()), ledger=Ledger(budget=j.budget, charges=list(j.charges)),
                  pairing=j.pairing,
                  item=RoundItem(j.round, j.item, j.round_strategy))
        cycle.advance(c, None, cycle.work)
        patch = work.diff_binary(j.base, c.worker_commit) if c.worker_commit else b""
        s = c.session
        played = Played(s.turns, list(s.rounds), s.context, s.tools, s.report(), s.limited_until) \
            if s is not None else None
        spent = c.ledger.charges[len(j.charges):]
        return Result(patch, played, list(spent), c.ledger.refused, c.outcome, c.error, c.infra, j.item, j.base)
    finally:
        if work is not None:
            shutil.rmtree(work.root.parent, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


def work(j: Job, out: Path) -> Result:
    """In the job's process: `run`, and its result written into the folder `out` whatever became of it (a job that
    failed says why in its item's record)."""
    try:
        result = run(j)
    except Exception as e:  # the item's record then says why, where a missing result could not
        result = Result(b"", None, outcome=Outcome.ERROR, error=f"the item's job failed: {e}", infra=True,
                        item=j.item, base=j.base)
    save_result(out, result)
    return result


def adopt(ic: Cycle, result: Result) -> None:
    """The job's change in the item's working copy, gated here as a local item's is; what it spent, charged."""
    assert ic.work is not None
    for charge in result.charges:
        ic.ledger.add(charge)
    ic.ledger.refused = ic.ledger.refused or result.refused
    ic.session = result.session
    if result.outcome is Outcome.ERROR:
        ic.fail(result.error or "the job ended in an error it did not name", infra=result.infra)
        return
    ic.work.reset_hard(ic.base)
    ic.work.clean()
    try:
        kernelcheck.base_facts(ic, builds=ic.build is not None and ic.build.ok)
        # As around a local session: whatever reaches `.lake` from here is undone before the gates compile, and
        # after them unless the change lands.
        buildoutputs.take(ic.work.root, ic.config.project.lake_dir)
        refused = _apply(ic.work, ic.base, result.patch)
    except InfraError as e:
        ic.work.reset_hard(ic.base)
        ic.work.clean()
        reject(ic, f"the Worker's patch from the job does not apply at the round's base: {str(e)[:500]}")
        return
    if refused:
        ic.work.reset_hard(ic.base)
        ic.work.clean()
        reject(ic, f"the Worker's patch from the job writes what no gate may let land: {'; '.join(refused[:20])}"
                   f"{f' and {len(refused) - 20} more' if len(refused) > 20 else ''}; none of it is kept")
        return
    if not cycle.gate(ic):
        ic.outcome = Outcome.REJECTED
    cycle.limited(ic)
    if ic.work.dirty():
        ic.worker_commit = ic.work.commit_all(f"autoformalize: worker changes of cycle {ic.number} (scratch)")


def _apply(work: Git, base: str, patch: bytes) -> list[str]:
    """`patch` applied in `work` at `base` unless `patchcheck` refuses it; what it refused (empty: applied)."""
    if not patch.strip():
        return []
    refused = patchcheck.refusals(work, base, patch)
    if refused:
        return refused
    work.apply(patch)
    return patchcheck.refusals(work, base, patch)  # by the ignore rules the patch itself wrote


def reject(ic: Cycle, reason: str) -> None:
    """The item alone rejected, with what could not be taken from its job."""
    ic.gates.append(GateResult(REMOTE, False, reason))
    ic.outcome, ic.error = Outcome.REJECTED, reason
    log.warning("remote.rejected", item=ic.item.name if ic.item else None, reason=reason[:300])

