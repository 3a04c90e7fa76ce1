"""The real outside things, built from the configuration: models, compiler, clock, CI status."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

import structlog

from agents import coding, lsp
from agents.config import ENGINES, KEY_VARIABLES, LOOP_ROLES, AgentConfig, Endpoint, WorkerConfig
from agents.ledger import Ledger
from agents.metered import Fallback, Metered
from agents.model import Model
from agents.provers.base import Off, Prover
from agents.provers.config import ProverConfig
from agents.tools import SPECS, YIELDING, Workspace
from agents.worker import Limits, Session, WorkerSession
from gates.base import Compiler
from gates.build import LakeCompiler
from gates.credentials import Secrets, in_file
from gates.sandbox import Sandbox
from orchestrator import workcopy
from orchestrator.config import Config
from orchestrator.deps import Deps, SystemClock
from orchestrator.git import Git
from orchestrator.logs import redact_also
from state.errors import InfraError, UsageError

log = structlog.get_logger()

# A single request never waits longer than this, whatever the role's session allows.
REQUEST_TIMEOUT_S = 900.0


def real_deps(config: Config, repo: Path, **backend_options: Any) -> Deps:
    """Models are created per cycle and role, so a cycle that needs no model imports no SDK."""

    def model(role: str, ledger: Ledger) -> Model:
        return model_for(config, role, ledger, **backend_options)

    sandbox = sandbox_for(config, repo)

    def compiler(root: Path) -> Compiler:
        return LakeCompiler(root, config.build, sandbox)

    def session(workspace: Workspace, rules: str, limits: Limits, ledger: Ledger, stop: threading.Event,
                model: str | None = None) -> Session:
        worker = config.agents.worker if model is None else config.agents.worker.model_copy(update={"model": model})
        chosen = config if model is None else config.model_copy(update={"agents": config.agents.model_copy(
            update={"worker": worker})})
        lean = worker.lean_tools == "lean-lsp-mcp"
        if worker.backend in ENGINES:  # a coding agent: its CLI, its own tools, the Lean server as an MCP server
            servers = dict(worker.mcp_servers)
            if lean:  # the engine runs it in the sandbox, as every command-line server
                program, *args = lsp.command(worker.lean_lsp_command)
                servers[lsp.SERVER] = {"type": "stdio", "command": program, "args": args,
                                       "env": lsp.environment(sandbox.project(workspace.root), worker.lean_lsp_tools,
                                                              worker.lean_lsp_output_chars)}
            return coding.session(coding.Setup(worker, worker.model, workspace, rules, limits, ledger, sandbox, stop,
                                               servers, worker.lean_lsp_tools if lean else None, config.prices))
        if worker.backend == "openai" and worker.context_tokens is None:
            limits = dataclasses.replace(limits, window=served_window(worker) or limits.window)
        # Before the server starts: nothing after it may fail and leave it running.
        talker = model_for(chosen, "worker", ledger, **backend_options)
        if lean:
            workspace.lsp = lean_server(worker, workspace.root, sandbox)
        return WorkerSession(talker, workspace, rules, limits, stop=stop)

    from orchestrator.github import ci_status

    def reading(root: Path) -> lsp.LeanServer | None:
        worker = config.agents.worker
        return lean_server(worker, root, sandbox, lsp.READING) if worker.lean_tools == "lean-lsp-mcp" else None

    return Deps(model=model, compiler=compiler, clock=SystemClock(), session=session, ci=ci_status(repo, config),
                lean=reading,
                prover=prover_for(config.prover), secrets=secrets_for(config))


def lean_server(worker: WorkerConfig, root: Path, sandbox: Sandbox,
                allow: Collection[str] | None = None) -> lsp.LeanServer | None:
    """lean-lsp-mcp for the working copy `root`, started in the sandbox (its `.lake` read-only: it lives through the
    gates' compiles), offering `allow` of the configured tools (default all); None, logged, when it cannot start:
    the session then has the builtin tools."""
    tools = [t for t in worker.lean_lsp_tools if allow is None or t in allow]
    env = lsp.environment(sandbox.project(root), tools, worker.lean_lsp_output_chars)
    try:
        argv = sandbox.wrap(lsp.command(worker.lean_lsp_command), root, env=env, outputs=False)
        server = lsp.LeanServer(argv, root, allow=tools, timeout_s=worker.lean_lsp_timeout_s,
                                output_chars=worker.lean_lsp_output_chars, reserved={s.name for s in SPECS} - YIELDING)
        server.start()
    except InfraError as e:
        log.warning("lsp.unavailable", error=str(e)[:1500],
                    hint="the Worker goes on with its builtin tools; see [agents.worker] lean_lsp_command")
        return None
    return server


def sandbox_for(config: Config, repo: Path) -> Sandbox:
    """The sandbox of this repository's working copies: the checkout and its git directory never shown, the
    checkout's `.lake/packages` shared read-only."""
    hidden = (repo.resolve(), workcopy.common_dir(Git(repo)))
    lake_dir = config.project.lake_dir
    return Sandbox(config.sandbox, hidden=hidden, packages=repo / lake_dir / ".lake" / "packages", lake_dir=lake_dir)


def secrets_for(config: Config) -> Secrets:
    """This process's secrets: credential-looking variables and every key variable the configuration names. The
    logs redact them from here on too."""
    endpoints = [e for _, agent in config.agents for e in [agent, *agent.fallbacks]]
    named = [*(e.api_key_env for e in endpoints if e.api_key_env), *KEY_VARIABLES["anthropic"],
             *KEY_VARIABLES["openai"], config.prover.api_key_env, config.notify.webhook_env, "GITHUB_TOKEN"]
    # A coding agent's login is in its session's home, where the Worker's commands could read it: its tokens too.
    tokens = {k: v for name, path in coding.logins().items() for k, v in in_file(path, f"{name} login").items()}
    secrets = Secrets({**Secrets.of(os.environ, named).values, **tokens})
    redact_also(secrets)
    return secrets



def prover_for(config: ProverConfig) -> Prover | Off:
    """The configured prover, or why there is none (a key without its library is logged, once per process)."""
    key = os.environ.get(config.api_key_env, "").strip()
    if config.backend == "none":
        return Off('[prover] backend = "none"')
    if not key:  # the usual case: said by `status` and to the Planner, not in every cycle's log
        return Off(f"{config.api_key_env} is not set")
    try:
        from agents.provers.aristotle import AristotleProver

        return AristotleProver(key, config.base_url)  # imports aristotlelib
    except ImportError:
        off = Off("aristotlelib is not installed (pip install 'autoformalize[aristotle]')")
    log.warning("prover.off", backend=config.backend, reason=off.reason)
    return off


def model_for(config: Config, role: str, ledger: Ledger, **backend_options: Any) -> Model:
    """The role's endpoint and its fallbacks, each metered into the ledger."""
    agent: AgentConfig = getattr(config.agents, role)
    timeout = min(float(agent.timeout_s), REQUEST_TIMEOUT_S)
    secrets = secrets_for(config)
    chain: list[Model] = [Metered(make_model(e, timeout, cli_path=agent.cli_path, **backend_options), role, e.backend,
                                  ledger, config.prices, secrets) for e in [agent, *agent.fallbacks]]
    return chain[0] if len(chain) == 1 else Fallback(chain)


def missing_keys(config: Config, roles: Iterable[str]) -> dict[str, list[str]]:
    """The unset key variables the roles' endpoints need, each with the roles needing it."""
    missing: dict[str, list[str]] = {}
    for role in roles:
        agent: AgentConfig = getattr(config.agents, role)
        for endpoint in [agent, *agent.fallbacks]:  # claude-code finds its own credentials
            accepted = (endpoint.api_key_env,) if endpoint.api_key_env else KEY_VARIABLES.get(endpoint.backend, ())
            if accepted and not any(os.environ.get(v) for v in accepted):
                missing.setdefault(" or ".join(accepted), []).append(role)
    return missing


def unset(missing: dict[str, list[str]]) -> str:
    """`missing_keys`' answer as one line: "not set: VAR (for the roles); …"."""
    return "not set: " + "; ".join(f"{v} (for the {', '.join(sorted(set(r)))})" for v, r in missing.items())


def make_model(endpoint: Endpoint, timeout_s: float, *, cli_path: str | None = None, **backend_options: Any
               ) -> Model:
    key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
    if endpoint.backend == "anthropic":
        from agents.backends.anthropic import AnthropicModel

        return AnthropicModel(model=endpoint.model, timeout_s=timeout_s, api_key=key, base_url=endpoint.base_url,
                              **backend_options)
    if endpoint.backend == "openai":
        from agents.backends.openai import OpenAIModel

        return OpenAIModel(model=endpoint.model, timeout_s=timeout_s, api_key=key, base_url=endpoint.base_url,
                           **backend_options)
    from agents.backends.claude_code import ClaudeCodeModel

    return ClaudeCodeModel(model=endpoint.model, timeout_s=timeout_s, cli_path=cli_path)


def served_window(endpoint: AgentConfig) -> int | None:
    """The context window an OpenAI-compatible server reports for the endpoint's model, if it reports one."""
    from agents.backends.openai import OpenAIModel

    key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
    return OpenAIModel(endpoint.model, min(float(endpoint.timeout_s), REQUEST_TIMEOUT_S), api_key=key,
                       base_url=endpoint.base_url, max_attempts=1).window()


def loop_roles(config: Config) -> tuple[str, ...]:
    """The roles a cycle may call."""
    return LOOP_ROLES + (("judge",) if config.audit.judge_in_loop else ())


def check_endpoints(config: Config, roles: Iterable[str]) -> None:
    """Fail before the work starts, not in its middle: a key an endpoint of `roles` needs is missing, its backend's
    SDK is not installed, a budget is set and an endpoint's price is unknown (its spend could not be held to the
    budget), or the Worker's coding agent cannot run."""
    from orchestrator.readiness import endpoints, engine

    if found := [*endpoints(config, roles), *engine(config, roles)]:
        raise UsageError("; ".join(found))
