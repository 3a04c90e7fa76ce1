"""autoformalize.toml: every section, with its defaults, loaded once at the entry point."""

from __future__ import annotations

import difflib
import json
import os
import posixpath
import textwrap
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.config import AgentsConfig, BudgetConfig, Endpoint, judge_for
from agents.prices import Price
from agents.provers.config import ProverConfig
from audit.config import AuditConfig
from difficulty.config import DifficultyConfig
from gates.config import BuildConfig, GatesConfig, SandboxConfig
from orchestrator.notify import NotifyConfig
from state.errors import UsageError
from state.paths import STATE_DIR, StatePaths

CONFIG_FILE = "autoformalize.toml"
ENDPOINT_KEYS = frozenset(Endpoint.model_fields)  # a judge table naming one of these chooses its own endpoint


class ProjectConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    lake_dir: str = "."
    """The folder holding the Lake project (its lakefile, lean-toolchain and `.lake`), relative to the repository
    root: `lake` runs there. Every other path here (the Lean roots, the state directory, the plan) stays relative
    to the repository root."""
    lean_roots: list[str] = Field(default_factory=list)
    """Directories holding the formalization sources; empty means every Lean file of the repository (of the Lake
    project, when `lake_dir` names a folder)."""
    state_dir: str = STATE_DIR
    """Where the state files live, relative to the repository root."""
    plan: str = "plan.md"
    """The textbook plan the Planner reads."""

    @model_validator(mode="after")
    def _project_wide(self) -> ProjectConfig:
        if self.lake_dir != "." and not self.lean_roots:  # the whole Lake project, not the whole repository
            self.lean_roots = [self.lake_dir]
        return self

    @field_validator("lake_dir")
    @classmethod
    def _relative(cls, value: str) -> str:
        path = posixpath.normpath(value.replace("\\", "/"))
        if posixpath.isabs(path) or path == ".." or path.startswith("../"):
            raise ValueError(f"{value!r} must be a folder inside the repository, relative to its root")
        return path


class LoopConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    cooldown_s: int = Field(default=300, ge=0)
    """Seconds between cycles of the daemon."""
    heartbeat_s: int = Field(default=30, gt=0)
    """heartbeat.json is rewritten at least this often while running."""
    escalate_after: int = Field(default=4, ge=1)
    """Consecutive non-positive scores before the Consultant is called."""
    stuck_cap: int = Field(default=8, ge=1)
    """Cycles in a row that each name a blocker, at most two different ones among them, before the Planner is told
    to pivot: to attack a smaller prerequisite seam."""
    backoff_s: float = Field(default=60.0, gt=0)
    """After a cycle ends in an infrastructure error, `run` waits this long, doubling on each further one."""
    pause_s: float = Field(default=900.0, gt=0)
    """After a rate limit or a subscription's usage cap that named no reset time, the loop pauses this long,
    doubling for each paused cycle in a row (at most `MAX_PAUSE_S`, six hours). A limit that names its reset time
    pauses the loop until then."""
    max_total_cycles: int | None = Field(default=None, ge=1)
    """`run` stops once the history reaches this cycle number; no cap when unset."""
    stop_when_done: bool = True
    """`run` stops when no sorry is left and every `- [ ]` target of the plan is checked off."""


class GitHubConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schedule: str = "0 */3 * * *"
    """When the workflow `init --github` writes runs a cycle (cron, UTC)."""
    install: str = "autoformalize"
    """What the workflow installs with pip: a version, a git URL, or a path."""
    python: str = "3.11"
    """The Python version of the workflow."""


class GitConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    remote: str = "origin"
    """The remote to pull from and push to; when the repository has no such remote, work stays local."""
    branch: str = "main"
    """The branch that receives each cycle's commit."""
    push: bool = True
    """Push each cycle's commit to the remote."""


class HousekeepingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    sweep_interval_hours: float = Field(default=48.0, ge=0)
    """Hours between sweeps, counted from the last sweep commit (or, before the first, from the first recorded
    cycle); a sweep closes stale issues and prunes old prover results in a commit of its own, before a cycle's
    commit, and leaves a report in `<state>/sweeps/`. 0 turns sweeps off."""
    issue_stale_cycles: int = Field(default=30, ge=1)
    """A sweep closes an issue last changed this many cycles ago or more that neither strategy.md, the plan nor
    the recent history records mention (by its name or a declaration it names in backticks)."""
    sorry_age_days: float = Field(default=14.0, ge=0)
    """A sorry or admit whose line `git blame` shows unchanged for this many days is persistent: the Planner is
    shown the oldest ones, `status` and the sweep report list them all."""
    prune_after_days: float = Field(default=14.0, ge=0)
    """A sweep removes prover results (`<state>/prover_results/<job>/`) whose last commit is this many days old."""


class SubmititConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    folder: str = ".cache/autoformalize/submitit"
    """Where submitit keeps each job's files and logs, and each job writes its result (relative: to the home
    directory); on a cluster, a folder every node can read and write."""
    cluster: Literal["slurm", "local"] = "slurm"
    """"slurm" submits each item as a SLURM job; "local" runs it in a subprocess of this machine."""
    partition: str | None = None
    """The SLURM partition (`--partition`); unset: the cluster's default."""
    time_min: int = Field(default=180, ge=1)
    """The job's time limit in minutes (`--time`); cover the Worker's session and its repair rounds."""
    cpus: int = Field(default=4, ge=1)
    """CPUs per job (`--cpus-per-task`): the Worker's Lean compiles run there."""
    mem_gb: int = Field(default=16, ge=1)
    """Memory per job in GB (`--mem`)."""
    extra: dict[str, str] = Field(default_factory=dict)
    """Other `#SBATCH` options, name to value (e.g. {account = "math", qos = "normal"})."""


class ParallelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    workers: int = Field(default=1, ge=1, le=64)
    """Workers per round. Above 1 the Planner writes up to this many `## Item: <name>` sections, each with its own
    `### Scope`; items whose Scopes could share a file are dropped, the others are worked at once, each in its own
    working copy, and land one at a time through the merge queue (each its own record and commit)."""
    max_builds: int | None = Field(default=None, ge=1)
    """Lean compiles running at once across the round's Workers and gates; unset: half the cores, at least 1."""
    engine: Literal["local", "submitit", "github"] = "local"
    """Where the items' Workers run: "local", threads of this process; "submitit", a job each through submitit
    (`[parallel.submitit]`; pip install 'autoformalize[submitit]'), returning its change as a patch; "github", a job
    each of the workflow `init --github` writes (`round plan`, `round work`, `round land`), returning its change as
    an artifact. The gates, the merge queue and the push stay with the coordinator."""
    submitit: SubmititConfig = Field(default_factory=SubmititConfig)

    def builds(self) -> int:
        return self.max_builds or max(1, (os.cpu_count() or 2) // 2)


class ReviewConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    port: int = Field(default=8765, ge=1, le=65535)
    """The port `autoformalize review` listens on at 127.0.0.1 (`--port` overrides it); the dashboard and the audit
    link each entity to its card there."""


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: ProjectConfig = Field(default_factory=ProjectConfig)
    build: BuildConfig = Field(default_factory=BuildConfig)
    gates: GatesConfig = Field(default_factory=GatesConfig)
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    loop: LoopConfig = Field(default_factory=LoopConfig)
    git: GitConfig = Field(default_factory=GitConfig)
    notify: NotifyConfig = Field(default_factory=NotifyConfig)
    github: GitHubConfig = Field(default_factory=GitHubConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    audit: AuditConfig = Field(default_factory=AuditConfig)
    prover: ProverConfig = Field(default_factory=ProverConfig)
    housekeeping: HousekeepingConfig = Field(default_factory=HousekeepingConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    parallel: ParallelConfig = Field(default_factory=ParallelConfig)
    difficulty: DifficultyConfig = Field(default_factory=DifficultyConfig)
    review: ReviewConfig = Field(default_factory=ReviewConfig)
    prices: dict[str, Price] = Field(default_factory=dict)  # per model, overriding agents/prices.toml

    def state(self, repo: Path) -> StatePaths:
        return StatePaths(repo, self.project.state_dir)


def load_config(repo: Path) -> Config:
    """The repository's configuration; defaults where the file or a key is absent."""
    path = repo / CONFIG_FILE
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Config()
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{CONFIG_FILE} is not valid TOML: {e}") from None
    try:
        # Overlay the file on the defaults, so `[agents.worker] model = …` keeps the worker's other defaults.
        config = Config.model_validate(_overlay(Config().model_dump(), raw))
    except ValidationError as e:
        problems = "; ".join(_problem(err["loc"], err["msg"], err["type"]) for err in e.errors())
        raise UsageError(f"{CONFIG_FILE}: {problems}") from None
    if problem := lake_problem(repo, config.project.lake_dir, config.project.lean_roots):
        raise UsageError(f"{CONFIG_FILE}: [project] {problem}")
    judge = raw.get("agents", {}).get("judge", {}) if isinstance(raw.get("agents"), dict) else {}
    if not (isinstance(judge, dict) and ENDPOINT_KEYS & set(judge)):
        a = config.agents
        config = config.model_copy(update={"agents": a.model_copy(
            update={"judge": judge_for(a.worker, a.judge, os.environ)})})
    missing = missing_roots(repo, config.project.lean_roots)
    if missing:
        raise UsageError(f"{CONFIG_FILE}: [project] lean_roots: {'; '.join(missing)}")
    return config


def lake_problem(repo: Path, lake_dir: str, roots: list[str]) -> str | None:
    """What is wrong with a Lake project folder other than the root: missing, or Lean roots outside it (Lake
    would not compile them)."""
    if lake_dir == ".":
        return None
    if not (repo / lake_dir).is_dir():
        return f"lake_dir: {lake_dir!r} is not a directory of {repo}"
    outside = [r for r in roots if not _inside(r.strip("/"), lake_dir)]
    if outside:
        return f"lean_roots: {', '.join(map(repr, outside))} lie outside lake_dir {lake_dir!r}, where Lake runs"
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(f"{folder}/")


def missing_roots(repo: Path, roots: list[str]) -> list[str]:
    """What is wrong with each Lean root that does not exist or holds no Lean file: a misspelled root would
    otherwise read as a finished book, 0 sorries in 0 files."""
    out = []
    for root in roots:
        path = repo / root.strip("/")
        if path.is_dir():
            if next(path.rglob("*.lean"), None) is None:
                out.append(f"{root!r} holds no Lean file")
        elif not path.with_name(path.name + ".lean").is_file():
            out.append(f"{root!r} is not a directory of {repo}")
    return out


def _problem(loc: tuple[int | str, ...], msg: str, kind: str) -> str:
    where = ".".join(str(p) for p in loc)
    if kind != "extra_forbidden":
        return f"{where}: {msg}"
    known = _fields(loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else (f" (known: {', '.join(known)})" if known else "")
    return f"{where}: unknown key{hint}"


def _fields(loc: tuple[int | str, ...]) -> list[str]:
    """The keys the table at `loc` may hold."""
    model: type[BaseModel] = Config
    for part in loc:
        field = model.model_fields.get(str(part))
        kind = field.annotation if field is not None else None
        if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
            return []
        model = kind
    return list(model.model_fields)


def _overlay(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _overlay(out[key], value)
        else:
            out[key] = value
    return out


_HEADER = """\
# autoformalize configuration. Every key is shown with its default; change what you need.
# Credentials never go here: they come from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, GITHUB_TOKEN).
"""


def render_config(config: Config) -> str:
    """`config` as a commented TOML file: each key with the docstring of its field."""
    out = [_HEADER]
    for section, model in config:
        if isinstance(model, AgentsConfig):
            for role, agent in model:
                # The judge's endpoint left commented out: named, it would no longer follow the Worker's family.
                out.append(_table(f"agents.{role}", agent, AgentsConfig.model_fields[role].description,
                                  ENDPOINT_KEYS if role == "judge" else frozenset()))
        elif isinstance(model, BaseModel):
            out.append(_table(section, model, model.__doc__ if section in ("budget", "prover", "difficulty") else None))
    out.append(_PRICES_EXAMPLE)
    return "\n".join(out)


def reference(config: Config) -> str:
    """The configuration reference as Markdown, from the same models and docstrings as `render_config`: a table of
    keys (default, meaning) for each section, in the file's order."""
    out = []
    for section, model in config:
        if isinstance(model, AgentsConfig):
            for role, agent in model:
                out.append(_reference_table(f"agents.{role}", agent, AgentsConfig.model_fields[role].description))
        elif isinstance(model, BaseModel):
            out.append(_reference_table(section, model, type(model).__doc__))
    return "\n".join(out)


def _reference_table(name: str, model: BaseModel, doc: str | None) -> str:
    lines = [f"### `[{name}]`", ""]
    if doc:
        lines += [" ".join(doc.split()), ""]
    lines += ["| key | default | meaning |", "| --- | --- | --- |"]
    tables = {key: value for key, value in model if isinstance(value, BaseModel)}
    for key, value in model:
        if key in tables:
            continue
        meaning = " ".join((type(model).model_fields[key].description or "").split()).replace("|", "\\|")
        default = "(unset)" if value is None else f"`{_toml_value(value)}`".replace("|", "\\|")
        lines.append(f"| `{key}` | {default} | {meaning} |")
    return "\n".join(lines) + "\n" + "".join(
        "\n" + _reference_table(f"{name}.{key}", value, None) for key, value in tables.items())


_PRICES_EXAMPLE = """\
# Prices per model in USD per million tokens, overriding the built-in table (agents/prices.toml), e.g.:
# [prices."my-local-model"]
# input = 0.0
# output = 0.0
# cache_read = 0.0
# cache_write = 0.0
"""


def _table(name: str, model: BaseModel, doc: str | None, commented: frozenset[str] = frozenset()) -> str:
    """The table with each key's doc; the keys in `commented`, and unset ones, as comments."""
    lines = [f"[{name}]" + (f"  # {' '.join(doc.split())}" if doc else "")]
    tables = {key: value for key, value in model if isinstance(value, BaseModel)}
    for key, value in model:
        if key in tables:
            continue
        description = type(model).model_fields[key].description
        if description:
            lines += [f"# {line}" for line in textwrap.wrap(" ".join(description.split()), 98)]
        lines.append(f"# {key} = (unset)" if value is None else
                     f"# {key} = {_toml_value(value)}" if key in commented else f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n" + "".join(
        "\n" + _table(f"{name}.{key}", value, None) for key, value in tables.items())


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, BaseModel):
        return _toml_value(value.model_dump(exclude_none=True))
    raise TypeError(f"no TOML form for {value!r}")
