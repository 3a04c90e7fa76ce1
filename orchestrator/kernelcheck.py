"""What Lean's kernel said about the project, kept between cycles, and the kernel gate's "before".

Two caches in the git directory, never committed. Both hold facts about file contents that any clone
can ask Lean again (a fresh clone asks again, nothing is lost but time), and a committed file would be one
more thing a change could forge:

- `kernel.json`: per Lean file content (its text's sha256, and its path), the declarations Lean says
  depend on `sorryAx` though their text holds no sorry. The census of a cycle, the sorry gate and
  `status` count them as holes. Filled from the probes a cycle runs anyway: the baseline's also asks about
  up to `[gates] kernel_census_batch` declarations of files not known yet, and the kernel gate about every
  declaration a change adds or alters. A file's entry is written only when Lean answered on every declaration
  in it that it can be asked about (a `private` one cannot).
- `fingerprints.json`: statement fingerprints, each keyed by the content of its file and of every file it
  imports (and the toolchain), so a cycle asks Lean only about statements whose sources changed.

The census batch runs at the baseline, before planning, so the Planner's counts include what Lean said; the
fingerprints are taken when the Scope is known, before the Worker runs, for the statements it can reach (a
parallel round asks for all its items' in one probe first).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from gates import kernel
from gates.base import Compiler, GateInput, GateResult
from gates.census import Census, census
from gates.config import BuildConfig, GatesConfig
from gates.imports import ImportGraph
from gates.index import FileIndex
from gates.probe import FORMAT, Answers, Baseline, Names, canonical, digest, fingerprint, gaps
from gates.registry import run_gates
from gates.scope import matches
from gates.tree import DirTree, MemTree
from orchestrator import workcopy
from orchestrator.git import Git
from state.atomic import write_atomic
from state.errors import InfraError
from state.statement_lock import StatementLock, read_lock

if TYPE_CHECKING:
    from orchestrator.cyclestate import Cycle

log = structlog.get_logger()
KEPT_FILES = 20_000  # file entries of kernel.json
KEPT_PRINTS = 20_000  # fingerprints in fingerprints.json
# A round's items learn at once: each read-modify-write of a cache re-reads it under this lock, so none of them
# writes over what another learned.
_CACHES = threading.Lock()


def content_key(path: str, index: FileIndex) -> str | None:
    """The cache key of a file's content; None for a file without declarations (nothing to know)."""
    if not index.decls or index.decls[0].source is None:
        return None
    return f"{hashlib.sha256(index.decls[0].source.text.encode()).hexdigest()[:24]} {path}"


@dataclass
class Facts:
    """kernel.json: file content → the declarations in it that rely on sorryAx without a sorry in their text."""

    path: Path
    files: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Facts:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            files = {str(k): [str(n) for n in v] for k, v in raw.get("files", {}).items()}
        except FileNotFoundError:
            files = {}
        except (ValueError, TypeError, AttributeError):  # written atomically, so only a foreign or older file
            files = {}
        return cls(path, files)

    def save(self) -> None:
        kept = dict(list(self.files.items())[-KEPT_FILES:])
        write_atomic(self.path, json.dumps({"files": kept}, ensure_ascii=False))

    def mark(self, tree: Census) -> None:
        """Count in `tree` the declarations these facts say rely on sorryAx."""
        hidden = {}
        for path, index in tree.files.items():
            key = content_key(path, index)
            if key is not None and self.files.get(key):
                present = {d.name for d in index.decls}
                hidden[path] = tuple(n for n in self.files[key] if n in present)
        tree.hidden = hidden

    def unknown(self, tree: Census, limit: int) -> list[str]:
        """The declarations Lean can be asked about of the files with no entry yet, whole files, as many files as
        fit in `limit` (at least one, so a file larger than the limit is not skipped forever)."""
        out: list[str] = []
        for path, index in tree.files.items():
            key = content_key(path, index)
            if key is None or key in self.files or limit <= 0:
                continue
            names = _askable(index)
            if out and len(out) + len(names) > limit:
                break
            out += names
        return out

    def learn(self, tree: Census, names: Names, answers: Answers, paths: Iterable[str],
              carried: dict[str, set[str]] | None = None) -> None:
        """Record each of `paths` whose askable declarations all have a verdict (or are `carried` over
        unchanged from a file content already known)."""
        if answers.failure is not None:  # what a cut-short probe left out is unknown, not clean
            return
        carried = carried or {}
        for path in paths:
            index = tree.files.get(path)
            key = content_key(path, index) if index is not None else None
            if index is None or key is None:
                continue
            asked = [n for n in _askable(index) if n not in carried.get(path, set())]
            if any(canonical(n) not in answers.axioms and f"axioms {canonical(n)}" not in answers.errors
                   for n in asked):
                continue  # not asked, or the probe did not finish: an entry must cover the whole file
            hidden = set(kernel.hidden_sorries(names, answers, asked))
            hidden |= set(tree.hidden.get(path, ())) & carried.get(path, set())
            self.files.pop(key, None)
            self.files[key] = sorted(hidden)


def _askable(index: FileIndex) -> list[str]:
    return [d.name for d in index.decls if d.name and "private" not in d.modifiers]


@dataclass
class Fingerprints:
    """fingerprints.json: a declaration at a content of its file and of everything that file imports → its
    fingerprint. Lean elaborates a declaration from exactly those, so equal keys mean equal fingerprints, and a
    change re-fingerprints only what it can have changed."""

    path: Path
    prints: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Fingerprints:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            prints = {str(k): str(v) for k, v in raw.items()}
        except FileNotFoundError:
            prints = {}
        except (ValueError, TypeError, AttributeError):
            prints = {}
        return cls(path, prints)

    def save(self) -> None:
        write_atomic(self.path, json.dumps(dict(list(self.prints.items())[-KEPT_PRINTS:]), ensure_ascii=False))


def toolchain(root: Path) -> str:
    """A digest of what decides how Lean prints (the toolchain and the dependencies' versions) and of how a
    fingerprint is written: fingerprints compare only under the same one."""
    h = hashlib.sha256(f"fingerprint format {FORMAT}\0".encode())
    for name in ("lean-toolchain", "lake-manifest.json"):
        file = root / name
        h.update(name.encode() + b"\0" + (file.read_bytes() if file.is_file() else b"") + b"\0")
    return h.hexdigest()[:16]


def closure_keys(git: Git, commit: str, tree: Census, roots: list[str], chain: str) -> dict[str, str]:
    """Per Lean file of `commit`: a digest of its content (git's blob id), of the contents of every project
    file it imports, transitively, and of the toolchain."""
    paths = [p for r in roots for p in (r.strip("/"), f"{r.strip('/')}.lean")] or ["."]
    blobs = {}
    for line in git.run("ls-tree", "-r", commit, "--", *paths).splitlines():
        meta, _, path = line.partition("\t")
        blobs[path] = meta.split()[-1]
    graph = ImportGraph(tree)
    out: dict[str, str] = {}
    for path in graph.order(set(tree.files)):  # imports first
        parts = [chain, path, blobs.get(path, ""), *sorted(out.get(q, blobs.get(q, "")) for q in graph.imports[path])]
        out[path] = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]
    return out


# -- the cycle's part ----------------------------------------------------------------------------------------


def baseline(c: Cycle, *, builds: bool) -> None:
    """Before planning: the census counts as holes the declarations Lean said rely on sorryAx, and Lean is asked
    about up to `[gates] kernel_census_batch` declarations of files it was not asked about yet."""
    assert c.work is not None
    cfg = c.config
    facts = Facts.load(workcopy.git_dir(c.git) / "autoformalize" / "kernel.json")
    facts.mark(c.census)
    unknown = facts.unknown(c.census, cfg.gates.kernel_census_batch) if builds else []
    if not unknown:
        return
    roots = cfg.project.lean_roots
    _, answers = kernel.take_baseline(c.deps.compiler(c.work.root), c.census, roots, cfg.gates, [], axioms=unknown)
    log.info("cycle.kernel_census", asked=len(unknown), seconds=round(answers.seconds, 2),
             problem=(answers.failure or "")[:200])
    if answers.failure is None:
        with _CACHES:
            facts = Facts.load(facts.path)
            facts.learn(c.census, Names(c.census, roots), answers, c.census.files)
            facts.save()
        facts.mark(c.census)
    _restore(c)


def fingerprints(c: Cycle, *, builds: bool) -> None:
    """Before the Worker runs, on the working copy at the base: the fingerprints of the statements a change within
    the Scope may close (sorried ones in its files) or must keep (locked ones in its files and their importers)."""
    assert c.work is not None and c.plan is not None
    chain = toolchain(c.work.root / c.config.project.lake_dir)
    lock = read_lock(c.paths.statement_lock) if c.config.audit.judge_in_loop else StatementLock()
    stored = {canonical(n): s.fingerprint for n, s in lock.statements.items()
              if s.fingerprint is not None and s.toolchain == chain}
    if not builds:
        c.kernel = Baseline(locked=stored, problem="the base does not build", toolchain=chain)
        return
    wanted, keys = _wanted(c, [c.plan.scope], lock, chain)
    cache, problem = _take(c, wanted, keys, chain)
    found = {name: cache.prints[key] for name, key in keys.items() if key in cache.prints}
    c.kernel = Baseline(found, stored, problem, chain)


def prefetch(c: Cycle, scopes: list[list[str]], *, builds: bool) -> None:
    """A round's items at its base, before they work: what each item's `fingerprints` will want, asked of Lean in
    one probe rather than one per item. A fingerprint the probe's shared `[gates] fingerprint_max_defs` cut short
    is not kept (an item asking alone may print more): that item asks for it itself, as does every item when the
    probe fails."""
    assert c.work is not None
    if not builds or len(scopes) < 2:
        return
    chain = toolchain(c.work.root / c.config.project.lake_dir)
    lock = read_lock(c.paths.statement_lock) if c.config.audit.judge_in_loop else StatementLock()
    try:
        _take(c, *_wanted(c, scopes, lock, chain), chain,
              keep=lambda text: "fingerprint_max_defs" not in gaps(text).values())
    except InfraError as e:  # each item asks for its own, and fails as it would have
        log.warning("round.prefetch_failed", error=str(e)[:300])
        _restore(c)


def _wanted(c: Cycle, scopes: list[list[str]], lock: StatementLock, chain: str) -> tuple[list[str], dict[str, str]]:
    """The base's statements a change within any of `scopes` may need the fingerprint of, and their cache keys (by
    canonical name)."""
    affected = ImportGraph(c.census).dependents({p for p in c.census.files if any(matches(p, s) for s in scopes)})
    wanted = kernel.statements_to_compare(c.census, lock.statements, affected)
    closure = closure_keys(c.git, c.base, c.census, c.config.project.lean_roots, chain)
    paths = {canonical(d.name): path for path, d in c.census.decls() if d.name}
    return wanted, {canonical(n): f"{closure.get(paths[canonical(n)], '')} {canonical(n)}" for n in wanted}


def _take(c: Cycle, wanted: list[str], keys: dict[str, str], chain: str,
          keep: Callable[[str], bool] = lambda _: True) -> tuple[Fingerprints, str | None]:
    """The cache, with the fingerprints of `wanted` it lacked asked of Lean in the working copy at the base (those
    `keep` accepts); and what kept the probe from answering."""
    assert c.work is not None
    cfg = c.config
    cache = Fingerprints.load(workcopy.git_dir(c.git) / "autoformalize" / "fingerprints.json")
    missing = [n for n in wanted if keys[canonical(n)] not in cache.prints]
    if not missing:
        return cache, None
    base, answers = kernel.take_baseline(c.deps.compiler(c.work.root), c.census, cfg.project.lean_roots, cfg.gates,
                                         missing, toolchain=chain)
    log.info("cycle.kernel_fingerprints", asked=len(missing), cached=len(wanted) - len(missing),
             rounds=answers.rounds, seconds=round(answers.seconds, 2), problem=(base.problem or "")[:200])
    if base.problem is None:
        with _CACHES:
            cache = Fingerprints.load(cache.path)
            for name, text in base.fingerprints.items():
                if keep(text):
                    cache.prints.pop(keys[name], None)
                    cache.prints[keys[name]] = text
            cache.save()
    _restore(c)
    return cache, base.problem


def _restore(c: Cycle) -> None:
    """The base's own code wrote files when compiled: the Worker starts from the base as committed."""
    assert c.work is not None
    if c.work.dirty():
        log.warning("cycle.kernel_probe_wrote", paths=c.work.status_paths()[:20])
        c.work.reset_hard(c.base)
        c.work.clean()


def learn(c: Cycle, inp: GateInput) -> None:
    """Keep what the kernel gate learned: facts about the changed files, and the change's fingerprints."""
    if not inp.kernel_answers:
        if inp.recheck is None or inp.recheck.kernel:  # else Lean's answers against the base carry over
            c.fingerprints = {}
        return
    answers = inp.kernel_answers[-1]
    roots = c.config.project.lean_roots
    names = Names(inp.after, roots)
    bodies = kernel.own_bodies(inp.before, answers.checks)
    prints = {n: fingerprint(answers, names, n, own_body=n in bodies, depth=c.config.gates.fingerprint_depth)
              for n in answers.checks}
    c.fingerprints = {_written(names, n): digest(f) for n, f in prints.items() if f is not None}
    changed = [ch.path for ch in inp.lean_changes() if ch.path in inp.after.files]
    with _CACHES:
        facts = Facts.load(workcopy.git_dir(c.git) / "autoformalize" / "kernel.json")
        carried = {}
        for path in changed:
            old, new = inp.before.files.get(path), inp.after.files[path]
            if old is not None and content_key(path, old) in facts.files:
                was = {d.name: d.text_hash for d in old.decls if d.name}
                carried[path] = {d.name for d in new.decls if d.name and was.get(d.name) == d.text_hash}
        facts.learn(inp.after, names, answers, changed, carried)
        facts.save()


def _written(names: Names, name: str) -> str:
    d = names.decl(name)
    return d.name if d is not None and d.name else name


def mark(tree: Census, git: Git) -> Census:
    """`tree` with the declarations the repository's kernel facts say rely on sorryAx (for `status`)."""
    Facts.load(workcopy.git_dir(git) / "autoformalize" / "kernel.json").mark(tree)
    return tree


# -- without a cycle (what `doctor` runs) ----------------------------------------------------------------------


def gate_change(root: Path, compiler: Compiler, build: BuildConfig, gates: GatesConfig, roots: list[str],
                files: dict[str, str | None], *, report: str = "", strategy: str = "",
                locked: dict[str, str] | None = None, scope: list[str] | None = None,
                state_dir: str = ".prover-state") -> tuple[list[GateResult], GateInput]:
    """Every gate on `files` (path → new text, None deletes) written into the Lean project at `root`, whose
    current state is the base: its fingerprints are taken first, then the change is written, gated, and undone."""
    tree = DirTree(root)
    before = MemTree({p: tree.read(p) for p in tree.files()})
    base_census = census(before, roots)
    baseline, _ = kernel.take_baseline(compiler, base_census, roots, gates,
                                       kernel.statements_to_compare(base_census, locked or {}),
                                       toolchain=toolchain(root))
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
                        report=report, cycle=1, compiler=compiler, base_census=base_census, candidates=list(files),
                        strategy=strategy, locked=locked or {}, kernel_base=baseline)
        return run_gates(inp), inp
    finally:
        for rel in files:
            target = root / rel
            if rel in before.contents:
                target.write_bytes(before.contents[rel])
            else:
                target.unlink(missing_ok=True)
        shutil.rmtree(root / ".lake" / "autoformalize", ignore_errors=True)
