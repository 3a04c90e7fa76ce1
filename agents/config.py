"""Configuration of the roles (`[agents.<role>]`) and their models."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.lsp import DEFAULT_TOOLS
from agents.lsp import SERVER as LEAN_SERVER

Backend = Literal["anthropic", "claude-code", "openai", "codex"]
KEY_VARIABLES = {"anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), "openai": ("OPENAI_API_KEY",)}
"""Any one of these satisfies a backend when the endpoint names no `api_key_env`."""
FAMILY = {"anthropic": "anthropic", "claude-code": "anthropic", "openai": "openai", "codex": "openai"}
"""The model family behind each backend (Claude Code runs Anthropic's models, Codex OpenAI's)."""
ENGINES = ("claude-code", "codex")
"""The backends that run a coding agent's CLI as the Worker (`agents.coding`)."""
JUDGES = {"anthropic": ("anthropic", "claude-sonnet-4-6"), "openai": ("openai", "gpt-5-mini")}
"""The judge's backend and model by family, when `[agents.judge]` names neither."""
SDKS = {"anthropic": "anthropic", "claude-code": "claude_agent_sdk", "openai": "openai"}
"""The Python package each backend's client imports (the openai and claude-code ones come with their extras); Codex
is a program, not a package (`agents.backends.codex.check`)."""
EXTRAS = {"claude-code": "claude-code", "openai": "openai"}
"""The extra of this package that installs a backend's SDK."""


def installed(backend: str) -> bool:
    """Whether the backend's SDK can be imported here (a backend with none needs none)."""
    return backend not in SDKS or importlib.util.find_spec(SDKS[backend]) is not None
CODEX_OWNED = frozenset({"sandbox_mode", "sandbox_workspace_write", "approval_policy", "model_provider",
                         "model_providers", "mcp_servers", "shell_environment_policy", "developer_instructions",
                         "hooks", "notify", "features", "project_doc_max_bytes"})
"""Codex's settings the product sets and `codex_config` may not override."""
SETTING = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")
"""A Codex setting's dotted name, as `-c key=value` takes it."""
PROVER_SERVER = "prover"
"""The in-process MCP server holding a claude-code Worker's external-prover tools: no configured server may take
its name."""
LIBRARY_SERVER = "library"
"""The in-process MCP server holding a claude-code Worker's `find_declaration`: no configured server may take its
name either."""


class Endpoint(BaseModel):
    """One model behind one backend."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    backend: Backend = "anthropic"
    """Which client talks to the model: anthropic, claude-code (a Claude Code session), openai (any
    OpenAI-compatible server: vLLM, llama.cpp, DeepSeek, OpenRouter…), or codex (a Codex CLI session; the Worker
    only)."""
    model: str
    """The model name as the backend knows it."""
    base_url: str | None = None
    """The server, when not the backend's default (ANTHROPIC_BASE_URL / OPENAI_BASE_URL are read otherwise; for
    codex, a Responses API server Codex is pointed at as a model provider)."""
    api_key_env: str | None = None
    """The environment variable holding this endpoint's key, when not the backend's usual one."""

    @model_validator(mode="after")
    def _claude_code_finds_its_own(self) -> Self:
        if self.backend == "claude-code" and (self.base_url or self.api_key_env):
            raise ValueError("a claude-code endpoint takes no base_url or api_key_env: Claude Code reads its own "
                             "credentials and settings")
        return self


class AgentConfig(Endpoint):
    timeout_s: int = Field(default=900, gt=0)
    """Seconds the role's whole session may take."""
    max_turns: int = Field(default=40, ge=1)
    """Model calls one session may make."""
    token_budget: int | None = Field(default=None, ge=1)
    """Tokens one session may spend (uncached input, output and cache writes); none when unset."""
    context_tokens: int | None = Field(default=None, ge=1024)
    """The model's context window in tokens (default: from agents/prices.toml, else 32,768). A Worker session
    stays inside it: tool results cut at `tool_result_chars`, old ones cleared past 60% of it, the session
    summarized past 80%."""
    tool_result_chars: int = Field(default=20_000, ge=1_000)
    """A Worker's tool result longer than this is cut as it arrives, saying how to read the rest."""
    keep_tool_results: int = Field(default=8, ge=1)
    """Tool results a Worker session keeps whole when it clears older ones."""
    fallbacks: list[Endpoint] = Field(default_factory=list)
    """Endpoints tried in order when this one stays rate-limited or overloaded after its retries."""
    allowed_tools: list[str] | None = None
    """claude-code only: the Claude Code tools the session may use (default: file tools and lake/lean commands)."""
    mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """claude-code and codex: command-line MCP servers for the session, each `{ command = "…", args = […], env =
    {…} }` (the names `prover` and `library` are taken by the external prover's tools and `find_declaration`). The
    product starts each in its sandbox for Worker-written code and the engine reaches it through a relay."""
    cli_path: str | None = None
    """claude-code and codex: the engine's executable (default: for claude-code the `claude` bundled with
    claude-agent-sdk, else PATH; for codex `codex` on PATH)."""

    @property
    def serves_tools(self) -> bool:
        """Whether every endpoint can run a tool session (a claude-code model answers one-shot, without tools)."""
        return all(e.backend not in ENGINES for e in [self, *self.fallbacks])


class WorkerConfig(AgentConfig):
    lean_tools: Literal["builtin", "lean-lsp-mcp"] = "builtin"
    """`lean-lsp-mcp` gives the Worker Lean's language server beside its own tools: goals, hovers, diagnostics,
    several tactics tried at once, local search (pip install 'autoformalize[lean-lsp]'). The server runs in the
    sandbox for the Worker's working copy; a claude-code or codex Worker gets it as the MCP server `lean_lsp`."""
    lean_lsp_command: list[str] = Field(default_factory=list)
    """The command starting lean-lsp-mcp over stdio (default: this Python's `lean_lsp_mcp` module when installed,
    else `lean-lsp-mcp` on PATH)."""
    lean_lsp_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_TOOLS))
    """The server's tools offered to the Worker. Those calling web services (lean_loogle, lean_leansearch,
    lean_leanfinder, lean_hammer_premise) are off by default; the sandbox has no network, so they answer only with
    [sandbox] mode = "none". lean_build writes the build outputs, which the server may not."""
    lean_lsp_timeout_s: float = Field(default=300.0, gt=0)
    """Seconds one call to the server may take (the first in a file elaborates it); then the Worker reads an
    error."""
    lean_lsp_output_chars: int = Field(default=20_000, ge=1_000)
    """Characters of one call's result the Worker reads; the rest is cut."""
    effort: Literal["low", "medium", "high", "xhigh"] | None = None
    """claude-code and codex: how hard the engine's model reasons (Claude Code's `--effort`, Codex's
    `model_reasoning_effort`); unset: the engine's default."""
    codex_config: dict[str, Any] = Field(default_factory=dict)
    """codex only: further Codex settings, each passed as `-c key=value` (a dotted key, a TOML value), after the
    product's own, e.g. `{ model_catalog_json = "/path/catalog.json" }`. The sandbox, the approval policy, the
    provider and the MCP servers are the product's and cannot be set here."""
    hard_model: str | None = None
    """A model for the cycles aiming at a target harder than `[difficulty] hard_above` (`autoformalize forecast`
    shows each target's difficulty), on the same backend; unset: the Worker's model works every target."""

    @model_validator(mode="after")
    def _codex_config_is_the_engines_own(self) -> Self:
        if odd := sorted(k for k in self.codex_config if not SETTING.fullmatch(k)):
            raise ValueError(f"worker: codex_config keys are Codex settings' dotted names: {', '.join(map(repr, odd))}")
        taken = sorted(k for k in self.codex_config if k.split(".")[0] in CODEX_OWNED)
        if taken:
            raise ValueError(f"worker: codex_config may not set {', '.join(taken)}: the sandbox, the approvals, the "
                             "provider, the MCP servers and the instructions are the product's")
        return self

    @model_validator(mode="after")
    def _lean_server_name(self) -> Self:
        if self.lean_tools == "lean-lsp-mcp" and LEAN_SERVER in self.mcp_servers:
            raise ValueError(f"worker: the MCP server name {LEAN_SERVER!r} is taken by lean_tools = "
                             "\"lean-lsp-mcp\"; rename that server or remove it")
        return self


class EvaluatorConfig(AgentConfig):
    diff_chars: int = Field(default=200_000, ge=1_000)
    """Characters of the cycle's diff the Evaluator reads, lowered when needed so the diff takes at most half
    the model's context window beside the rest of its prompt (the default fits a 200,000-token window). A
    larger diff is shown as every changed file with its lines added and removed, then the first files' diffs up
    to this budget."""


class AgentsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    planner: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-opus-4-6", max_turns=30,
                                                                     timeout_s=900, token_budget=400_000))
    """Writes strategy.md (and may rewrite plan.md) in a read-only tool session: by default at most 30 model calls,
    900 seconds and 400,000 tokens, after which the cycle falls back to the last valid Scope. A claude-code endpoint
    plans in one call, without tools."""
    worker: WorkerConfig = Field(
        default_factory=lambda: WorkerConfig(model="claude-opus-4-6", timeout_s=7200, max_turns=200))
    """Edits Lean sources with tools."""
    evaluator: EvaluatorConfig = Field(default_factory=lambda: EvaluatorConfig(model="claude-sonnet-4-6"))
    """Scores the cycle."""
    consultant: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-opus-4-6", max_turns=20,
                                                                        timeout_s=900, token_budget=300_000))
    """Advises after repeated stalls, in a read-only tool session that can look lemma names up: by default at most
    20 model calls, 900 seconds and 300,000 tokens, after which the cycle records that no advice came. A
    claude-code endpoint advises in one call, without tools."""
    judge: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-sonnet-4-6", timeout_s=300))
    """Judges a Lean statement against the book's (the audit's direct judge; in the loop, each statement a cycle
    adds or changes for a plan entity). When this table names no backend or model, a model of another family
    than the Worker's is used if a key for one is set and its SDK installed (a Worker on anthropic or claude-code
    with OPENAI_API_KEY set and the `openai` extra installed: openai's gpt-5-mini; a Worker on openai with
    ANTHROPIC_API_KEY set: claude-sonnet-4-6), else the Worker's family's (claude-sonnet-4-6, or the Worker's own
    endpoint on openai)."""
    back_translator: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-sonnet-4-6",
                                                                             timeout_s=300))
    """Audit: renders a Lean statement in words without seeing the book."""
    round_trip_judge: AgentConfig = Field(default_factory=lambda: AgentConfig(backend="openai", model="gpt-5-mini",
                                                                              timeout_s=300))
    """Audit: judges the book's statement against the back-translation; from another model family than the
    back-translator, so their blind spots do not coincide."""
    edge_filter: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-haiku-4-5", timeout_s=300))
    """Audit: says whether a proposed dependency between two textbook entities is real."""

    @model_validator(mode="after")
    def _worker_session_has_no_fallbacks(self) -> Self:
        worker = self.worker
        if worker.backend in ENGINES and worker.fallbacks:
            raise ValueError(f"worker: a {worker.backend} session cannot fall back to another endpoint; remove "
                             "`fallbacks` or use the anthropic or openai backend")
        for taken, by in ((PROVER_SERVER, "the external prover's tools"), (LIBRARY_SERVER, "`find_declaration`")):
            if worker.backend in ENGINES and taken in worker.mcp_servers:
                raise ValueError(f"worker: the MCP server name {taken!r} is taken by {by}; rename that server")
        for name, agent in self:
            if name != "worker" and any(e.backend == "codex" for e in [agent, *agent.fallbacks]):
                raise ValueError(f"{name}: the codex backend runs the Worker only; give the {name} the anthropic, "
                                 "openai or claude-code backend")
        return self


def judge_for(worker: Endpoint, judge: AgentConfig, environ: Mapping[str, str],
              sdk: Callable[[str], bool] = installed) -> AgentConfig:
    """The judge when `[agents.judge]` names no endpoint: a model of another family than the Worker's when a key
    for that family is set and its SDK is installed, so the two do not share blind spots; else the Worker's
    family's (the Worker's own endpoint when it is on an OpenAI-compatible server, whose models only it names).
    `judge`'s other settings (timeout, turns…) are kept."""
    mine = FAMILY[worker.backend]
    other = next(f for f in JUDGES if f != mine)
    if any(environ.get(v) for v in KEY_VARIABLES[other]) and sdk(JUDGES[other][0]):
        backend, model = JUDGES[other]
        return judge.model_copy(update={"backend": backend, "model": model, "base_url": None, "api_key_env": None})
    if mine == "openai":
        return judge.model_copy(update={"backend": "openai", "model": worker.model, "base_url": worker.base_url,
                                        "api_key_env": worker.api_key_env})
    backend, model = JUDGES[mine]
    return judge.model_copy(update={"backend": backend, "model": model, "base_url": None, "api_key_env": None})


LOOP_ROLES = ("planner", "worker", "evaluator", "consultant")
AUDIT_ROLES = ("judge", "back_translator", "round_trip_judge", "edge_filter")


class BudgetConfig(BaseModel):
    """Spending limits in USD; a model call that could cross one is refused, and `run` stops."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    per_cycle_usd: float | None = Field(default=None, gt=0)
    """Most one cycle may spend."""
    per_day_usd: float | None = Field(default=None, gt=0)
    """Most all cycles finishing on one UTC day may spend."""
    total_usd: float | None = Field(default=None, gt=0)
    """Most the whole run may spend, as history.jsonl records it."""
