"""`autoformalize audit`: the quality audit of any Lean project, as JSON and a Markdown report."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import click

from agents.ledger import Ledger
from audit import ask, overlap, successors
from audit.judge import Rubric
from audit.rests import Support
from audit.run import Models, Options, Reviewed, audit, markdown
from gates.build import LakeCompiler
from gates.census import Census, census
from gates.listing import chain, gather, toolchain
from gates.probe import module_of
from gates.sandbox import Sandbox
from gates.tree import DirTree
from orchestrator import workcopy
from orchestrator.config import CONFIG_FILE, Config, ProjectConfig, load_config
from orchestrator.engine import Bounded
from orchestrator.git import Git, GitError
from orchestrator.kernelcheck import answers_of, cache_of, mark
from orchestrator.repo import detect_lean_project, find_repo
from orchestrator.verdicts import current
from orchestrator.wiring import missing_keys, model_for, sandbox_for, unset
from state.atomic import unwritable, write_all
from state.errors import UsageError
from state.files import Linked, read_text
from state.reviews import Reviews, parse

PROTOCOL_ROLES = {"direct": ("judge",), "round_trip": ("back_translator", "round_trip_judge"),
                  "edge filter": ("edge_filter",)}
LATEST = "latest"


def run(path: Path | None, repo: Path | None, as_json: bool, out: Path | None, sample: int | None, seed: int,
        no_models: bool, filter_edges: bool, mathlib: bool = False, budget_s: float | None = None,
        successors_: bool = False) -> int:
    if budget_s is not None and not (mathlib or successors_):
        raise UsageError("--budget-s bounds the Lean runs of --mathlib and --successors: give one of them too")
    root = _root(path, repo)
    managed = (root / CONFIG_FILE).is_file()
    config = load_config(root) if managed else Config()
    roots = config.project.lean_roots if managed else _lean_roots(root)
    # Before any work or spending: where the results go must take them.
    targets = [*([out] if out is not None else []), *([config.state(root).audit] if managed else [])]
    if problems := [p for target in targets for name in ("audit.json", LATEST + ".json") if
                    (p := unwritable(target / name))]:
        raise UsageError(f"cannot write the audit's results: {problems[0]}")
    tree = DirTree(root)
    found = census(tree, roots)
    with contextlib.suppress(GitError):  # what Lean listed in earlier cycles: holes only it sees count
        mark(found, Git(root), root, config.project.model_copy(update={"lean_roots": roots}), config.gates)
    for problem in [*tree.skipped, *found.problems]:
        click.echo(f"warning: {problem}", err=True)
    measured = _mathlib(root, config, roots, found, sample, seed, budget_s) if mathlib else None
    if measured is not None and measured.interrupted:
        click.echo(f"Interrupted: {len(measured.results)} theorems answered, {len(measured.unasked)} not asked; the "
                   "answers are kept, and `audit --mathlib` run again asks only the rest.", err=True)
        return 130
    tested = _successors(root, config, roots, found, sample, seed, budget_s) if successors_ else None
    if tested is not None and tested.interrupted:
        click.echo(f"Interrupted: {len(tested.results)} theorems tested, {len(tested.unasked)} not tried; the "
                   "answers are kept, and `audit --successors` run again compiles only the rest.", err=True)
        return 130
    ledger = Ledger()
    models = _models(config, ledger, no_models=no_models, filter_edges=filter_edges)
    options = Options(sample=sample, seed=seed, filter_edges=filter_edges, concurrency=config.audit.concurrency,
                      rubric=Rubric(config.audit.rubric, config.audit.book_name, config.audit.context_chars),
                      blueprint=config.audit.blueprint,
                      mappings=tuple(config.audit.mappings))
    doc = audit(root, found, models, options, datetime.now(UTC), mathlib=measured, successors=tested,
                reviewed=_reviewed(root, config))
    doc["lean_roots"] = roots
    doc["spend"] = {"usage": {r: u.model_dump() for r, u in ledger.usage().items()}, "costs": ledger.costs(),
                    "served_by": ledger.served_by()}
    text, report = json.dumps(doc, indent=2, ensure_ascii=False), markdown(doc)
    written = _write(out, text, report) if out is not None else []
    if managed:
        written += _write(config.state(root).audit, text, report, name=LATEST)
    if as_json:
        click.echo(text)
    elif out is None:
        click.echo(report)
    else:
        click.echo(doc["summary"])
    if written:
        click.echo(f"wrote {', '.join(str(p) for p in written)}", err=True)
    if managed:
        click.echo(f"Commit {config.state(root).relative(config.state(root).audit)}/ to show it in "
                   "`autoformalize report`.", err=True)
    return 0


def _reviewed(root: Path, config: Config) -> Reviewed:
    """People's verdicts as the audited tree holds them (the audit reads the working tree, not a commit): in a
    repository, an entry without its reviewer or time has its commit's author and date."""
    file = config.gates.reviews
    try:
        git: Git | None = Git(root)
    except GitError:
        git = None
    try:
        if git is not None:
            found = current(git, file)
        else:
            text = read_text(root / file)
            found = parse(text, file) if text is not None else Reviews()
    except Linked as e:
        found = Reviews(problems=[str(e)])
    return Reviewed(found.reviews, f"{file} in the working tree", config.review.port, found.problems)


def _mathlib(root: Path, config: Config, roots: list[str], found: Census, sample: int | None, seed: int,
             budget_s: float | None) -> overlap.Measured:
    """`exact?` on every proved theorem (or a sample of them), within `[parallel] max_builds` Lean runs at once."""
    population, chosen, _, git, sandbox, keyed = _setting(root, config, roots, found, sample, seed)
    compiler = LakeCompiler(root, config.build, sandbox)
    listings = cache_of(git) if git is not None else None
    got = gather(compiler, found, roots, [t.path for t in chosen], keyed, listings, known=found.lean)
    for key, module in got.fresh.values():
        if listings is not None:
            listings.put(key, module)
    if got.problem:
        click.echo(f"warning: Lean could not list the project's constants ({got.problem.splitlines()[0]}); the "
                   "census's declarations stand in", err=True)
    seen, source = overlap.constants(found, {t.path for t in chosen}, None if got.problem else
                                     {**found.lean, **got.modules})
    # Kept beside Lean's listings in the git directory (never committed); outside a repository, the user's cache.
    answers = answers_of(git) if git is not None else ask.Cache(workcopy.cache_dir() / "mathlib")
    limit = float(config.audit.mathlib_timeout_s)
    builds = config.parallel.builds()
    with click.progressbar(length=len(chosen), label="exact?", file=sys.stderr) as bar:
        asked = ask.ask(chosen, Bounded(compiler, threading.Semaphore(builds)), answers,
                        ask.keys(chosen, found, keyed), limit_s=limit, workers=builds, budget_s=budget_s,
                        progress=bar.update)
    return overlap.Measured(overlap.tried(chosen, asked, seen), len(population), sample is not None, seed,
                            asked.unasked, limit, source, len(asked.answers) - len(asked.cached), len(asked.cached),
                            asked.interrupted)


def _successors(root: Path, config: Config, roots: list[str], found: Census, sample: int | None, seed: int,
                budget_s: float | None) -> successors.Measured:
    """Each proved theorem's users compiled against its mutants, in a copy of the project, one Lean run at a time."""
    population, chosen, project, git, sandbox, keyed = _setting(root, config, roots, found, sample, seed)
    # Kept beside Lean's listings in the git directory (never committed); outside a repository, the user's cache.
    folder = (workcopy.git_dir(git) / "autoformalize" / "successors") if git is not None else \
        workcopy.cache_dir() / "successors"
    with successors.copy_of(root, project.lake_dir, project.state_dir) as copy, \
            click.progressbar(length=len(chosen), label="successors", file=sys.stderr) as bar:
        compiler = LakeCompiler(copy, config.build, sandbox)

        def trial(target: ask.Target, users: successors.Found, mutant: successors.Mutant) -> successors.Outcome:
            return successors.trial(copy, compiler, lambda p: module_of(p, roots), target, users, mutant)

        return successors.measure(chosen, successors.Users(found), trial, successors.Cache(folder),
                                  successors.Keys(found, keyed), population=len(population),
                                  sampled=sample is not None, seed=seed, budget_s=budget_s, progress=bar.update)


def _setting(root: Path, config: Config, roots: list[str], found: Census, sample: int | None, seed: int
             ) -> tuple[list[ask.Target], list[ask.Target], ProjectConfig, Git | None, Sandbox, str]:
    """What both Lean-run dimensions start from: the proved theorems and the sample of them, the project's settings
    with the audited roots, its repository (None for a bare Lean project), the sandbox and the listings' key."""
    population = overlap.targets(found, Support(found, roots))
    chosen = overlap.sample(population, sample, seed)
    project = config.project.model_copy(update={"lean_roots": roots})
    try:
        git: Git | None = Git(root)
        sandbox = sandbox_for(config, root)
    except GitError:  # any Lean project, not only a repository
        git, sandbox = None, Sandbox(config.sandbox, hidden=(root,), packages=root / project.lake_dir / ".lake" /
                                     "packages", lake_dir=project.lake_dir)
    keyed = chain(toolchain(root / project.lake_dir), DirTree(root), roots, config.gates, project.state_dir)
    return population, chosen, project, git, sandbox, keyed


def _root(path: Path | None, repo: Path | None) -> Path:
    """PATH; else the repository (--repo, or the one around the current directory); else the current directory."""
    if path is None:
        try:
            return find_repo(repo)
        except UsageError:
            if repo is not None:
                raise
            return Path.cwd().resolve()
    if not path.is_dir():
        raise UsageError(f"{path} is not a directory")
    return path.resolve()


def _lean_roots(root: Path) -> list[str]:
    """A Lean project's library roots; every Lean file of a directory that is not one."""
    project = detect_lean_project(root)
    return project.roots if project else []


def _models(config: Config, ledger: Ledger, *, no_models: bool, filter_edges: bool) -> Models:
    models = Models()
    for protocol, roles in PROTOCOL_ROLES.items():
        if protocol == "edge filter" and not filter_edges:
            continue
        if no_models:
            models.skipped[protocol] = "--no-models"
            continue
        missing = missing_keys(config, roles)
        if missing:
            models.skipped[protocol] = unset(missing)
            continue
        for role in roles:
            setattr(models, role, model_for(config, role, ledger))
    return models


def _write(directory: Path, text: str, report: str, *, name: str = "audit") -> list[Path]:
    files: dict[Path, str | bytes] = {directory / f"{name}.json": text + "\n", directory / f"{name}.md": report}
    write_all(files)
    return list(files)
