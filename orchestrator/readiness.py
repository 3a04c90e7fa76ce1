"""Every reason a cycle would refuse to start, or stop before it spends, gathered rather than raised one at a time:
what `cycle --dry-run` reports and `cycle`, `run` and the round commands refuse on. A clean list means a cycle
starts."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from agents import coding
from agents.config import ENGINES, EXTRAS, SDKS, AgentConfig, installed
from agents.prices import price_table
from gates import sandbox
from orchestrator import ignores, pause, plan, toolchain, workcopy
from orchestrator.config import CONFIG_FILE, Config
from orchestrator.cyclestate import budget_of
from orchestrator.git import Git
from orchestrator.wiring import missing_keys, unset
from state import files
from state.history import read_history

KEYS_HOW = ("export it (keys are read from the environment only; a local OpenAI-compatible server that takes any key "
            "still needs the variable set)")


def endpoints(config: Config, roles: Iterable[str]) -> list[str]:
    """The roles' keys, SDKs and (under a budget) prices: what `check_endpoints` refuses on."""
    roles = list(roles)
    found = []
    if missing := missing_keys(config, roles):
        found.append(f"{unset(missing)}; {KEYS_HOW}")
    absent: dict[str, list[str]] = {}
    for role in roles:
        agent: AgentConfig = getattr(config.agents, role)
        for e in [agent, *agent.fallbacks]:
            if not installed(e.backend):
                absent.setdefault(e.backend, []).append(role)
    for backend, needing in sorted(absent.items()):
        found.append(f"the {backend} backend's SDK ({SDKS[backend]}) is not installed (for the "
                     f"{', '.join(sorted(set(needing)))}): install it with `pip install 'autoformalize["
                     f"{EXTRAS.get(backend, backend)}]'`, or configure another backend")
    b = config.budget
    if b.per_cycle_usd is None and b.per_day_usd is None and b.total_usd is None:
        return found
    table = price_table()
    unpriced = sorted({f"{e.model} (the {role})" for role in roles
                       for e in [getattr(config.agents, role), *getattr(config.agents, role).fallbacks]
                       if e.backend != "claude-code" and e.model not in config.prices and e.model not in table})
    hard = config.agents.worker.hard_model  # it serves the Worker's role when a target is hard
    if "worker" in roles and hard and config.agents.worker.backend != "claude-code" and hard not in config.prices \
            and hard not in table:
        unpriced.append(f"{hard} (the worker's hard_model)")
    if unpriced:
        found.append(f"a [budget] is set but these models have no known price: {', '.join(unpriced)}; add "
                     "[prices.\"<model>\"] for each (zeros for a free local model), so their spend counts")
    return found


def engine(config: Config, roles: Iterable[str]) -> list[str]:
    """Why the Worker's coding agent cannot run here (its CLI missing, too old, silent; no credential), when the
    Worker is one: checked before any model is paid."""
    worker = config.agents.worker
    if "worker" not in roles or worker.backend not in ENGINES or not installed(worker.backend):
        return []
    problem = coding.check(worker).problem
    return [f"{problem} (for the worker)"] if problem else []


def setup(root: Path, config: Config, roles: Iterable[str]) -> list[str]:
    """The sandbox, the toolchain and dependencies on disk, the build's programs, and the roles' endpoints."""
    found = []
    if problem := sandbox.probe(config.sandbox):
        found.append(f"the sandbox for code the Worker writes cannot run: {problem}; {sandbox.HOW_TO}")
    lake = root / config.project.lake_dir
    if config.sandbox.mode != "none" and (missing := toolchain.problems(lake)):
        found.append("; ".join(missing) + ". The sandbox that compiles the Worker's code has no network: run these "
                     "in your checkout first")
    found += programs(config)
    return found + endpoints(config, roles) + engine(config, roles)


def programs(config: Config) -> list[str]:
    """The build commands' programs that cannot be found: the baseline build, before any model, would stop on
    them."""
    missing: dict[str, list[str]] = {}
    for field in ("build_all", "check_file"):
        words = shlex.split(getattr(config.build, field))
        if words and "/" not in words[0] and shutil.which(words[0]) is None:
            missing.setdefault(words[0], []).append(field)
    return [f"`{program}` ([build] {', '.join(fields)}) was not found on PATH"
            + (" (install elan, which installs the toolchain lean-toolchain names)" if program == "lake" else "")
            + "; a cycle would stop at its baseline build" for program, fields in missing.items()]


def budget(root: Path, config: Config) -> list[str]:
    """Spent budgets: a cycle refuses once the total is spent, and waits for the next UTC day once today's is."""
    spent = budget_of(config.budget, read_history(config.state(root).history).records, datetime.now(UTC))
    total, day = config.budget.total_usd, config.budget.per_day_usd
    found = []
    if total is not None and spent.total_usd >= total:
        found.append(f"the total budget is spent: ${spent.total_usd:.2f} of [budget] total_usd ${total:.2f}; raise "
                     "it in autoformalize.toml to continue")
    if day is not None and spent.today_usd >= day:
        found.append(f"today's budget is spent (${spent.today_usd:.2f} of [budget] per_day_usd ${day:.2f}); no "
                     "cycle runs until the next UTC day")
    return found


def paused(root: Path, config: Config) -> str | None:
    """Why no cycle runs now because a rate limit or usage cap paused the loop, or None."""
    records = read_history(config.state(root).history).records
    until = pause.pending(records, datetime.now(UTC))
    if until is None:
        return None
    why = next((r.error for r in reversed(records) if r.paused_until == until and r.error), "")
    return (f"a rate limit paused the loop until {until.isoformat(timespec='minutes')}"
            f"{f' ({why[:200]})' if why else ''}; no cycle runs until then")


def checkout(root: Path, config: Config) -> list[str]:
    """What the cycle's sync refuses: another branch, a locked index, state files ignored, uncommitted changes."""
    git, paths = Git(root), config.state(root)
    found = []
    branch = git.branch()
    if branch != config.git.branch:
        found.append(f"the checkout is on {branch or 'a detached HEAD'}, not {config.git.branch}; check out "
                     f"{config.git.branch} (or set [git] branch)")
    if (workcopy.git_dir(git) / "index.lock").exists():
        found.append("the git index is locked (.git/index.lock): another git command is running, or one was killed")
    if excluded := ignores.swallowed(git, paths, config.project.plan, CONFIG_FILE):
        found.append(ignores.refusal(excluded))
    runtime = {paths.relative(paths.heartbeat), paths.relative(paths.lock)}
    if dirty := [p for p in git.dirty() if p not in runtime]:
        found.append(f"uncommitted changes in {', '.join(dirty[:10])}{' …' if len(dirty) > 10 else ''}; commit or "
                     "stash them first")
    return found


def book(root: Path, config: Config) -> list[str]:
    """The plan the Planner works from: there, and no longer the template (placeholder targets only, which name no
    result of the book: a Planner would invent them)."""
    name = config.project.plan
    try:
        text = files.read_text(root / name)
    except files.Linked as e:
        return [str(e)]
    if text is None:
        return [f"{name} is missing: the Planner works from it (`autoformalize init` writes a template); describe "
                "the book there and commit it"]
    if unfilled := plan.template(text):
        return [f"{name} is still the template: its {unfilled} target(s) are placeholders (`- [ ] Chapter 1: …`); "
                "describe the book there (a `- [ ]` line for each definition or theorem to formalize, under a "
                "heading per chapter) and commit it"]
    return []


def refusals(root: Path, config: Config, roles: Iterable[str]) -> list[str]:
    """Everything above: each refusal a cycle would make before it spends."""
    waiting = paused(root, config)
    roles = list(roles)
    return [*checkout(root, config), *(book(root, config) if "planner" in roles else []),
            *setup(root, config, roles), *budget(root, config), *([waiting] if waiting else [])]
