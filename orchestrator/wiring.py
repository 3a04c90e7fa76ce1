"""The real outside things, built from the configuration: models, compiler, clock, CI status."""

from __future__ import annotations

import os
from pathlib import Path

from agents.config import AgentConfig
from agents.model import Model
from gates.base import Compiler
from gates.build import LakeCompiler
from orchestrator.config import Config
from orchestrator.deps import Deps, SystemClock
from state.errors import UsageError

# A single request never waits longer than this, whatever the role's session allows.
REQUEST_TIMEOUT_S = 900.0


def real_deps(config: Config, repo: Path) -> Deps:
    """Models are created on first use, so a cycle that needs no model imports no SDK."""
    cache: dict[str, Model] = {}

    def model(role: str) -> Model:
        if role not in cache:
            cache[role] = make_model(getattr(config.agents, role))
        return cache[role]

    def compiler(root: Path) -> Compiler:
        return LakeCompiler(root, config.build)

    from orchestrator.github import ci_status

    return Deps(model=model, compiler=compiler, clock=SystemClock(), ci=ci_status(repo, config))


def make_model(agent: AgentConfig) -> Model:
    if agent.backend == "anthropic":
        from agents.backends.anthropic import AnthropicModel

        return AnthropicModel(model=agent.model, timeout_s=min(float(agent.timeout_s), REQUEST_TIMEOUT_S))
    raise UsageError(f"backend {agent.backend!r} is not available in this version; use backend = \"anthropic\"")


def check_credentials(config: Config) -> None:
    """Fail before the cycle starts, not in its middle, when a key the configured roles need is missing."""
    roles = [r for r, a in config.agents if a.backend == "anthropic"]
    if roles and not os.environ.get("ANTHROPIC_API_KEY"):
        raise UsageError(f"ANTHROPIC_API_KEY is not set, and the {', '.join(roles)} use the anthropic backend; "
                         "export the key (it is read from the environment only)")
