"""Configuration of the roles (`[agents.<role>]`) and their models."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

Backend = Literal["anthropic", "claude-code", "openai"]
PROVER_SERVER = "prover"
"""The in-process MCP server holding a claude-code Worker's external-prover tools: no configured server may take
its name."""


class Endpoint(BaseModel):
    """One model behind one backend."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    backend: Backend = "anthropic"
    """Which client talks to the model: anthropic, claude-code (a Claude Code session), or openai (any
    OpenAI-compatible server: vLLM, llama.cpp, DeepSeek, OpenRouter…)."""
    model: str
    """The model name as the backend knows it."""
    base_url: str | None = None
    """The server, when not the backend's default (ANTHROPIC_BASE_URL / OPENAI_BASE_URL are read otherwise)."""
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
    """claude-code only: MCP servers for the session, e.g. lean-lsp-mcp, as Claude Code's mcpServers entries (the
    name `prover` is taken by the external prover's tools)."""
    cli_path: str | None = None
    """claude-code only: the `claude` executable (default: the one bundled with claude-agent-sdk, else PATH)."""

    @property
    def serves_tools(self) -> bool:
        """Whether every endpoint can run a tool session (a claude-code model answers one-shot, without tools)."""
        return all(e.backend != "claude-code" for e in [self, *self.fallbacks])


class AgentsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    planner: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-opus-4-6", max_turns=30,
                                                                     timeout_s=900, token_budget=400_000))
    """Writes strategy.md (and may rewrite plan.md) in a read-only tool session: by default at most 30 model calls,
    900 seconds and 400,000 tokens, after which the cycle falls back to the last valid Scope. A claude-code endpoint
    plans in one call, without tools."""
    worker: AgentConfig = Field(
        default_factory=lambda: AgentConfig(model="claude-opus-4-6", timeout_s=7200, max_turns=200))
    """Edits Lean sources with tools."""
    evaluator: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-sonnet-4-6"))
    """Scores the cycle."""
    consultant: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-opus-4-6", max_turns=20,
                                                                        timeout_s=900, token_budget=300_000))
    """Advises after repeated stalls, in a read-only tool session that can look lemma names up: by default at most
    20 model calls, 900 seconds and 300,000 tokens, after which the cycle records that no advice came. A
    claude-code endpoint advises in one call, without tools."""
    judge: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-sonnet-4-6", timeout_s=300))
    """Judges a Lean statement against the book's (the audit's direct judge; in the loop, each statement a cycle
    adds or changes for a plan entity)."""
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
        if self.worker.backend == "claude-code" and self.worker.fallbacks:
            raise ValueError("worker: a claude-code session cannot fall back to another endpoint; remove "
                             "`fallbacks` or use the anthropic or openai backend")
        if self.worker.backend == "claude-code" and PROVER_SERVER in self.worker.mcp_servers:
            raise ValueError(f"worker: the MCP server name {PROVER_SERVER!r} is taken by the external prover's "
                             "tools; rename that server")
        return self


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
