"""What Lean's environment said about the project, kept between cycles, and the kernel gate's "before".

Lean's listings of the project's modules (`gates.env`) are kept in the git directory (`autoformalize/env/`), never
committed: any clone can ask Lean again (a fresh clone asks again, nothing is lost but time), and a committed file
would be one more thing a change could forge. Each is keyed by its module's whole import closure
(`gates.listing.closure_keys`), so a cycle asks Lean only about modules whose closure changed.

- `baseline`, before planning: the census counts holes as Lean says for every file whose listing is kept
  (`Census.lean`), after asking for up to `[gates] kernel_census_batch` declarations' worth of files not listed
  yet, so the Planner's counts include what only Lean sees;
- `base_facts`, when the Scope is known and before the Worker runs: the listings of the files a change within the
  Scope can alter (its files and those importing them) and of all they import: the kernel gate's "before" (a
  parallel round asks for all its items' at once first, `prefetch`);
- `learn`, after the gates: what the kernel gate listed of the changed tree, kept for the next cycle, and the
  meanings of the change's statements for the statement lock.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from audit import ask
from gates.base import Compiler, GateInput, GateResult
from gates.census import Census, census
from gates.config import BuildConfig, GatesConfig
from gates.env import normal
from gates.environment import Baseline, Env, Unanswered, lean_names
from gates.listing import Cache, Gathered, chain, closure_keys, gather, toolchain
from gates.probe import canonical, modules_of
from gates.registry import GATES, run_gates
from gates.scope import matches
from gates.tree import DirTree, MemTree
from orchestrator import workcopy
from orchestrator.git import Git
from state.errors import InfraError
from state.history import HistoryRecord
from state.statement_lock import StatementLock, read_lock

if TYPE_CHECKING:
    from orchestrator.config import ProjectConfig
    from orchestrator.cyclestate import Cycle

log = structlog.get_logger()


def cache_of(git: Git) -> Cache:
    return Cache(workcopy.git_dir(git) / "autoformalize" / "env")


def answers_of(git: Git) -> ask.Cache:
    """Where `exact?`'s answers about the project's theorems are kept (`audit --mathlib`, `[audit] mathlib_check`)."""
    return ask.Cache(workcopy.git_dir(git) / "autoformalize" / "mathlib")


def mark(tree: Census, git: Git, root: Path, project: ProjectConfig, gates: GatesConfig) -> Census:
    """`tree` (the files at `root`) with the listings the repository's cache holds for its files' closures (for
    `status`, `audit`)."""
    keyed = chain(toolchain(root / project.lake_dir), DirTree(root), project.lean_roots, gates, project.state_dir)
    return _mark(tree, cache_of(git), keyed)


def _chain(c: Cycle) -> tuple[str, str]:
    """The toolchain's digest (what meanings in the lock compare under) and the chain listings are keyed under."""
    assert c.work is not None
    cfg = c.config
    digest = toolchain(c.work.root / cfg.project.lake_dir)
    return digest, chain(digest, DirTree(c.work.root), cfg.project.lean_roots, cfg.gates, cfg.project.state_dir)


def _mark(tree: Census, cache: Cache, chain: str) -> Census:
    keys = closure_keys(tree, chain)
    for path, key in keys.items():
        if (module := cache.get(key)) is not None:
            tree.lean[path] = module
    cache.settle(set(keys.values()))
    return tree


def _unlisted(tree: Census, limit: int) -> list[str]:
    """Files with no listing, as many as hold `limit` declarations (at least one file, so a file larger than the
    limit is not skipped forever)."""
    out: list[str] = []
    count = 0
    for path, index in tree.files.items():
        if path in tree.lean or limit <= 0:
            continue
        if out and count + len(index.decls) > limit:
            break
        out.append(path)
        count += len(index.decls)
    return out


def _keep(cache: Cache, got: Gathered) -> None:
    for key, module in got.fresh.values():
        cache.put(key, module)
    if got.fresh:
        cache.trim()


# -- the cycle's part ----------------------------------------------------------------------------------------


def baseline(c: Cycle, *, builds: bool) -> None:
    """Before planning: the census counts holes as Lean says where a listing is kept, after Lean is asked about files
    not listed yet (up to `[gates] kernel_census_batch` declarations)."""
    assert c.work is not None
    cfg = c.config
    cache = cache_of(c.git)
    keyed = _chain(c)[1]
    _mark(c.census, cache, keyed)
    asked = _unlisted(c.census, cfg.gates.kernel_census_batch) if builds else []
    if not asked:
        return
    got = gather(c.deps.compiler(c.work.root), c.census, cfg.project.lean_roots, asked, keyed, cache)
    log.info("cycle.kernel_census", files=len(asked), runs=got.runs, seconds=round(got.seconds, 2),
             problem=(got.problem or "")[:200])
    _keep(cache, got)
    c.census.lean.update(got.modules)
    _restore(c)


def base_facts(c: Cycle, *, builds: bool) -> None:
    """Before the Worker runs, on the working copy at the base: the listings of the files a change within the Scope
    can alter and of all they import (the kernel gate's "before"), and the locked statements' meanings the lock
    stores (which stand for the base's when Lean cannot list it)."""
    assert c.work is not None and c.plan is not None
    digest, keyed = _chain(c)
    lock = read_lock(c.paths.statement_lock) if c.config.audit.judge_in_loop else StatementLock()
    stored = {canonical(n): s.fingerprint for n, s in lock.statements.items()
              if s.fingerprint is not None and s.toolchain == digest}
    if not builds:
        c.kernel = Baseline(locked=stored, problem="the base does not build", toolchain=digest)
        return
    got = _take(c, [c.plan.scope], keyed)
    c.kernel = Baseline(got.modules, stored, got.problem, digest)
    c.census.lean.update(got.modules)


def prefetch(c: Cycle, scopes: list[list[str]], *, builds: bool) -> None:
    """A round's items at its base, before they work: the listings every item's `base_facts` will want, asked of
    Lean in one probe rather than one per item (each item finds them in the cache)."""
    assert c.work is not None
    if not builds or len(scopes) < 2:
        return
    try:
        _take(c, scopes, _chain(c)[1])
    except InfraError as e:  # each item asks for its own, and fails as it would have
        log.warning("round.prefetch_failed", error=str(e)[:300])
        _restore(c)


def _take(c: Cycle, scopes: list[list[str]], chain: str) -> Gathered:
    """The base's listings of the files a change within any of `scopes` can alter and of all they import: from the
    cache, the rest asked of Lean in the working copy at the base and kept."""
    assert c.work is not None
    cache = cache_of(c.git)
    affected = c.census.graph.dependents({p for p in c.census.files if any(matches(p, s) for s in scopes)})
    got = gather(c.deps.compiler(c.work.root), c.census, c.config.project.lean_roots, affected, chain, cache)
    log.info("cycle.kernel_base", files=len(affected), asked=len(got.fresh), runs=got.runs,
             seconds=round(got.seconds, 2), problem=(got.problem or "")[:200])
    _keep(cache, got)
    if got.runs:
        _restore(c)
    return got


def _restore(c: Cycle) -> None:
    """The base's own code wrote files when compiled: the Worker starts from the base as committed."""
    assert c.work is not None
    if c.work.dirty():
        log.warning("cycle.kernel_probe_wrote", paths=c.work.status_paths()[:20])
        c.work.reset_hard(c.base)
        c.work.clean()


def learn(c: Cycle, inp: GateInput) -> None:
    """Keep what the kernel gate listed of the changed tree, and the meaning of each statement of the changed files
    (what the statement lock stores for those judged faithful)."""
    if inp.recheck is not None and not inp.recheck.kernel:  # Lean's answers against the base carry over
        return
    cache = cache_of(c.git)
    for key, module in inp.kernel_learned.values():
        cache.put(key, module)
    if not inp.after.lean or inp.kernel_base is None:
        c.fingerprints = {}
        return
    c.fingerprints = meanings(inp.after, inp.lean_roots, [ch.path for ch in inp.lean_changes()])


def meanings(tree: Census, roots: list[str], paths: list[str]) -> dict[str, str]:
    """The meaning Lean gives each named declaration of `paths` (`Env.meaning`; a definition's own value counted
    when it holds no hole), by its name as written; those Lean did not list, or whose meaning reaches a module it
    did not, are left out."""
    listed = [m for p, m in tree.lean.items() if p in tree.files]
    env = Env(listed, modules_of(tree, roots).values())
    holed = {h.name for h in tree.holed()}
    out: dict[str, str] = {}
    for path in paths:
        module = tree.lean.get(path)
        if module is None or path not in tree.files:
            continue
        by_text = lean_names(module)
        for d in tree.files[path].decls:
            lean = by_text.get(normal(d.name)) if d.name else None
            if lean is None or d.name is None:
                continue
            try:
                out[d.name] = env.meaning(lean, own_value=module.consts[lean].kind != "thm" and d.name not in holed)
            except Unanswered:
                continue
    return out


# -- without a cycle (what `doctor` runs) ----------------------------------------------------------------------


def gate_change(root: Path, compiler: Compiler, build: BuildConfig, gates: GatesConfig, roots: list[str],
                files: dict[str, str | None], *, report: str = "", strategy: str = "",
                locked: dict[str, str] | None = None, scope: list[str] | None = None,
                state_dir: str = ".prover-state", every: bool = False, history: list[HistoryRecord] | None = None,
                approved: dict[str, str] | None = None, rejected: frozenset[str] = frozenset(),
                ) -> tuple[list[GateResult], GateInput]:
    """The gates on `files` (path → new text, None deletes) written into the Lean project at `root`, whose current
    state is the base: its listing is taken first, then the change is written, gated, and undone. With `every`,
    each gate judges it, as `doctor` judges its canaries; else they run as a cycle runs them."""
    tree = DirTree(root)
    before = MemTree({p: tree.read(p) for p in tree.files()})
    base_census = census(before, roots)
    digest = toolchain(root)
    keyed = chain(digest, before, roots, gates, state_dir)
    got = gather(compiler, base_census, roots, set(base_census.files), keyed, None)
    baseline = Baseline(got.modules, {}, got.problem, digest)
    base_census.lean.update(got.modules)
    try:
        for rel, text in files.items():
            target = root / rel
            if text is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        inp = GateInput(base=before, changed=DirTree(root), gates=gates, build=build, lean_roots=roots,
                        state_dir=state_dir, scope=scope or [f"{r}/**" for r in roots] + [f"{r}.lean" for r in roots],
                        report=report, cycle=20, compiler=compiler, base_census=base_census, candidates=list(files),
                        strategy=strategy, locked=locked or {}, kernel_base=baseline, history=history or [],
                        approved=approved or {}, rejected=rejected)
        return [check(inp) for check in GATES.values()] if every else run_gates(inp), inp
    finally:
        for rel in files:
            target = root / rel
            if rel in before.contents:
                target.write_bytes(before.contents[rel])
            else:
                target.unlink(missing_ok=True)
        shutil.rmtree(root / ".lake" / "autoformalize", ignore_errors=True)
