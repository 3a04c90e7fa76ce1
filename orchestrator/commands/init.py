"""`autoformalize init`: add the configuration, state skeleton and agent rules to a Lean repository."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from agents.config import BudgetConfig
from audit.book import Book
from gates.census import census
from gates.probe import RUNS
from gates.tree import DirTree
from orchestrator import config as configuration
from orchestrator import ignores, rules
from orchestrator.config import CONFIG_FILE, Config, ParallelConfig, ProjectConfig, load_config, render_config
from orchestrator.git import Git
from orchestrator.repo import LeanProject, detect_lean_project, find_repo, lake_projects
from state.atomic import unwritable, write_all, write_atomic
from state.errors import UsageError
from state.files import last_cycle, read_cycle
from state.history import read_history
from state.pairing import Pairing, render
from state.paths import StatePaths

WORKFLOW = ".github/workflows/autoformalize.yml"
DAY_USD = 50.0  # a new project's daily budget: a few long cycles; raised by the user who runs a daemon
MAX_JOB_MINUTES = 360  # GitHub-hosted runners stop a job after six hours


def run(directory: Path | None, lean_roots: tuple[str, ...], github: bool = False,
        project_dir: Path | None = None, workers: int | None = None) -> int:
    repo = find_repo(directory)
    if (repo / CONFIG_FILE).exists():  # kept as it is; the rest follows it
        config = load_config(repo)
        project = detect_lean_project(repo, config.project.lake_dir)
        if project is None:
            raise UsageError(f"{CONFIG_FILE}: [project] lake_dir {config.project.lake_dir!r} holds no Lean project "
                             "(no lakefile.lean, lakefile.toml or lean-toolchain)")
        roots = config.project.lean_roots
        if lean_roots or project_dir or workers:
            click.echo(f"note: {CONFIG_FILE} exists, so its lake_dir, lean_roots and [parallel] are kept and "
                       "--project, --lean-root and --workers are ignored")
    else:
        project = choose_project(repo, project_dir or (directory if directory is not None else None))
        roots = list(lean_roots) or project.roots
        if missing := configuration.missing_roots(repo, roots):
            raise UsageError(f"--lean-root: {'; '.join(missing)}")
        if problem := configuration.lake_problem(repo, project.lake_dir, roots):
            raise UsageError(f"--lean-root: {problem}")
        config = Config(project=ProjectConfig(lake_dir=project.lake_dir, lean_roots=roots),
                        budget=BudgetConfig(per_day_usd=DAY_USD),
                        parallel=ParallelConfig(workers=workers or 1,
                                                engine="github" if github and (workers or 1) > 1 else "local"))
    paths = StatePaths(repo, config.project.state_dir)
    loop_rules = rules.standing(config.project.state_dir)
    plan = resources.files("orchestrator.templates").joinpath("plan.md").read_text(encoding="utf-8")
    counter = read_cycle(paths)
    ran = last_cycle(paths, (r.cycle for r in read_history(paths.history).records))  # a loop that ran here before

    files = {
        CONFIG_FILE: render_config(config),
        config.project.plan: plan,
        "CLAUDE.md": loop_rules,
        "AGENTS.md": loop_rules,
        paths.relative(paths.cycle): f"{ran}\n",
        paths.relative(paths.history): "",
        paths.relative(paths.attempts): "# Attempts\n",
        paths.relative(paths.issues / ".gitkeep"): "",
        paths.relative(paths.task_results / ".gitkeep"): "",
    }
    if github:
        files[WORKFLOW] = workflow(config)
    if config.audit.judge_in_loop and not paths.pairing.exists() and (ledger := first_pairing(repo, config)):
        files[paths.relative(paths.pairing)] = render(ledger)
    written = [rel for rel in files if not (repo / rel).exists()]
    skipped = [rel for rel in files if rel not in written]
    gitignore = repo / ".gitignore"
    if problems := [p for rel in [*written, ".gitignore"] if (p := unwritable(repo / rel))]:
        raise UsageError(f"cannot write the files init adds: {problems[0]}; nothing was written")
    kept = gitignore.read_bytes() if gitignore.is_file() else None
    write_all({repo / rel: files[rel] for rel in written})
    try:
        excluded, ignored = _ignore_rules(repo, paths, config)
    except BaseException:  # nothing partial: the files written above go, .gitignore is as it was
        for rel in written:
            (repo / rel).unlink(missing_ok=True)
        if kept is None:
            gitignore.unlink(missing_ok=True)
        else:
            write_atomic(gitignore, kept)
        raise

    where = "" if project.lake_dir == "." else f" in {project.lake_dir}/"
    click.echo(f"Lean project{where}: {project.lakefile or 'no lakefile'}, toolchain {project.toolchain or 'unknown'}, "
               f"Lean roots: {', '.join(roots) or '(the whole repository)'}")
    for rel in written:
        click.echo(f"  wrote    {rel}")
    for rel in skipped:
        click.echo(f"  kept     {rel} (exists; not overwritten)")
    if ignored:
        click.echo(f"  ignored  {', '.join(ignored)} (added to .gitignore)")
    for path, rule in excluded.items():
        click.echo(f"  included {path} (.gitignore re-includes it: {rule} excluded it, and a cycle commits it)")
    if own := [name for name, _ in rules.notes(repo, config.project.state_dir)]:
        clash = rules.conflicts(repo, config.project.state_dir)
        click.echo(f"Rules: {' and '.join(own)} kept as the project's notes: every role reads the loop's own rules "
                   "first, then these, and the loop's hold where they disagree"
                   + (f"; they disagree on {len(clash)} line(s):" if clash else "."))
        for line in clash:
            click.echo(f"  - {line}")
    if ran and (paths.relative(paths.cycle) in written or ran > counter):  # adopted, not a counter already kept
        click.echo(f"Continues: a loop ran here to cycle {ran} (its counter, history or task results); the next "
                   f"cycle is {ran + 1}, and no report of the earlier cycles is written over.")
    if config.budget.per_day_usd == DAY_USD and CONFIG_FILE in written:
        click.echo(f"Budget: at most ${DAY_USD:.0f} a day ([budget] per_day_usd); `cycle --dry-run` estimates one "
                   "cycle's cost. Raise it for a daemon.")
    click.echo("Next: describe the book in plan.md, review autoformalize.toml, commit, "
               "then `autoformalize status`.")
    if github and rounds(config) and (over := {job: m for job, m in timeouts(config).items()
                                               if job != "cycle" and m > MAX_JOB_MINUTES}):
        click.echo(f"note: at their limits the round's {' and '.join(over)} job(s) could take "
                   f"{', '.join(f'{m} min' for m in over.values())}, over GitHub's {MAX_JOB_MINUTES} min a job: a job "
                   "stopped there records nothing of its round; lower [agents.worker] timeout_s, [build] timeout_s or "
                   "[parallel] workers if your runs come near it")
    if github:
        runs = (f"a round of up to {config.parallel.workers} Workers (a job each)" if rounds(config) else "a cycle")
        click.echo(f"GitHub Actions: add the repository secret ANTHROPIC_API_KEY; {WORKFLOW} runs {runs} on "
                   f"the schedule \"{config.github.schedule}\" and on demand (Actions → autoformalize → Run workflow).")
    return 0


def _ignore_rules(repo: Path, paths: StatePaths, config: Config) -> tuple[dict[str, str], list[str]]:
    """Re-include in .gitignore the state files its rules exclude, and ignore the running process's files; what
    was excluded (each with its rule) and the runtime entries added."""
    git = Git(repo)
    excluded = ignores.swallowed(git, paths, config.project.plan, CONFIG_FILE)
    if excluded:
        _append(repo, "files a cycle commits, which rules above excluded",
                ignores.negations(paths, config.project.plan, CONFIG_FILE, list(excluded)))
        if still := ignores.swallowed(git, paths, config.project.plan, CONFIG_FILE):
            raise UsageError(ignores.refusal(still))
    # Temp files of interrupted atomic writes must never be committed either; after the lines above, which might
    # re-include them.
    state = paths.relative(paths.root)
    runtime = {paths.relative(paths.heartbeat): paths.relative(paths.heartbeat),
               paths.relative(paths.lock): paths.relative(paths.lock),
               f"{state}/**/.*.tmp": f"{state}/issues/.x.md.tmp"}
    ignored_now = git.ignored(list(runtime.values()))
    ignored = [entry for entry, probe in runtime.items() if probe not in ignored_now]
    if ignored:
        _append(repo, "files of the running process, never committed", ignored)
    return excluded, ignored


def first_pairing(repo: Path, config: Config) -> Pairing | None:
    """The pairing ledger of the doc comments the tree holds now, a person's (no cycle has run), or None when it
    holds none, or the older files the first cycle migrates (`state/pairing.py`)."""
    if config.state(repo).book_text.exists():
        return None
    tree = DirTree(repo)
    book = Book.at(tree, "init", census(tree, config.project.lean_roots), config.audit, config.project.state_dir, 0)
    ledger = book.record(None)
    return ledger if ledger.entities else None


def choose_project(repo: Path, wanted: Path | None) -> LeanProject:
    """The Lake project `init` sets up: the folder asked for (`--project`, or the DIRECTORY given when it is a
    folder below the root holding one), else the root's, else the only one below it."""
    if wanted is not None:
        folder = (wanted if wanted.is_absolute() else Path.cwd() / wanted).resolve()
        if not folder.is_relative_to(repo):
            raise UsageError(f"{wanted} is not inside the repository {repo}")
        rel = folder.relative_to(repo).as_posix()
        if project := detect_lean_project(repo, rel):
            return project
        if rel != ".":
            raise UsageError(f"{rel} holds no Lean project (no lakefile.lean, lakefile.toml or lean-toolchain)")
    if project := detect_lean_project(repo):
        return project
    found = lake_projects(repo)
    if len(found) == 1 and (project := detect_lean_project(repo, found[0])):
        return project
    if found:
        raise UsageError(f"{repo} holds several Lake projects: {', '.join(found)}; choose one with "
                         f"`autoformalize init --project {found[0]}`")
    raise _none(repo)


def _none(repo: Path) -> UsageError:
    return UsageError(f"{repo} holds no Lean project (no lakefile.lean, lakefile.toml or lean-toolchain, at its "
                      "root or in a folder below it); create one with `lake new` or `lake init` first")


def rounds(config: Config) -> bool:
    """Whether the workflow works rounds as jobs (`[parallel] engine = "github"`) rather than cycles."""
    return config.parallel.workers > 1 and config.parallel.engine == "github"


def workflow(config: Config) -> str:
    """The scheduled GitHub Actions workflow, each job's timeout above what it runs at most (to the cap): a cycle;
    or a round's plan (a whole cycle when the plan is one item), an item's Worker and its gates, and the landing of
    them all."""
    minutes = timeouts(config)
    lake_dir = config.project.lake_dir
    round_ = rounds(config)
    keys = {"@SETUP@": _template("setup.yml"), "@LAKE_STEPS@": _template("lake.yml"),
            "@LAKE_RESTORE@": _template("lake.yml").replace("@CACHE@", "actions/cache/restore@v4"),
            "@CACHE@": "actions/cache@v4", "@BLAME@": _template("blame.yml"),
            # A round's jobs that push restore the exact key alone: a prefix could match an entry a Worker's job made.
            "@LAKE_KEY@": "" if round_ else "-${{ github.sha }}\n          restore-keys: |\n            lake-${{ "
            "runner.os }}-${{ hashFiles('@LAKE@lean-toolchain', '@LAKE@lake-manifest.json') }}-",
            "@CRON@": config.github.schedule, "@TIMEOUT_MINUTES@": _capped(minutes["cycle"]),
            "@PLAN_MINUTES@": _capped(minutes["cycle"]), "@WORK_MINUTES@": _capped(minutes["work"]),
            "@LAND_MINUTES@": _capped(minutes["land"]), "@WORKERS@": str(config.parallel.workers),
            "@PYTHON@": config.github.python, "@INSTALL@": config.github.install,
            "@WEBHOOK_ENV@": config.notify.webhook_env,
            "@PROVER_ENV@": config.prover.api_key_env, "@STATE_DIR@": config.project.state_dir,
            "@LAKE_DIR@": lake_dir, "@LAKE@": "" if lake_dir == "." else f"{lake_dir}/"}
    text = _template("autoformalize-round.yml" if round_ else "autoformalize.yml")
    for key, value in keys.items():  # in order: the fragments first, then what they hold
        text = text.replace(key, value)
    return text


def _template(name: str) -> str:
    return resources.files("orchestrator.templates").joinpath(name).read_text(encoding="utf-8")


def _capped(minutes: int) -> str:
    return str(min(MAX_JOB_MINUTES, minutes))


def timeouts(config: Config) -> dict[str, int]:
    """Minutes each job may take, before the cap: a cycle (or a round's plan, which may be one), an item's work job,
    and a round's land job (the gates' runs each at their limit, as `cycle.advance` allows them), plus 15 minutes to
    set up; GitHub stops a job at `MAX_JOB_MINUTES` whatever it says."""
    a, build_s = config.agents, config.build.timeout_s
    probes = RUNS
    gated_s = (probes + (config.gates.repair_rounds + 1) * (3 + probes)) * build_s  # as `advance` bounds work
    cycle_s = (a.planner.timeout_s + a.worker.timeout_s + a.judge.timeout_s + a.evaluator.timeout_s
               + a.consultant.timeout_s + 2 * build_s)  # the phases, their gates' builds mostly shorter than a limit
    regate_s = (3 + 2 * probes) * build_s  # an item gated here again, then once more in the merge queue
    land_s = (3 + probes) * build_s + a.consultant.timeout_s + config.parallel.workers * (
        2 * a.judge.timeout_s + a.evaluator.timeout_s + 2 * regate_s)
    return {job: seconds // 60 + 15 for job, seconds in
            {"cycle": cycle_s, "work": a.worker.timeout_s + gated_s, "land": land_s}.items()}


def _append(repo: Path, why: str, lines: list[str]) -> None:
    path = repo / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    lead = "" if not text or text.endswith("\n") else "\n"
    write_atomic(path, f"{text}{lead}# autoformalize: {why}\n" + "\n".join(lines) + "\n")
