"""Configuration of the roles (`[agents.<role>]`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Backend = Literal["anthropic", "claude-code", "openai"]


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    backend: Backend = "anthropic"
    """Which client talks to the model: anthropic, claude-code, or openai (any OpenAI-compatible server)."""
    model: str
    """The model name as the backend knows it."""
    timeout_s: int = Field(default=900, gt=0)
    """Seconds the role's whole session may take."""
    max_turns: int = Field(default=40, ge=1)
    """Model calls one session may make."""
    token_budget: int | None = Field(default=None, ge=1)
    """Tokens one session may spend (uncached input, output and cache writes); none when unset."""


class AgentsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    planner: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-opus-4-6"))
    """Writes strategy.md."""
    worker: AgentConfig = Field(
        default_factory=lambda: AgentConfig(model="claude-opus-4-6", timeout_s=7200, max_turns=200))
    """Edits Lean sources with tools."""
    evaluator: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-sonnet-4-6"))
    """Scores the cycle."""
    consultant: AgentConfig = Field(default_factory=lambda: AgentConfig(model="claude-opus-4-6"))
    """Advises after repeated stalls."""
