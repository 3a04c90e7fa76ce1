"""Claude Code as the Worker's engine (`agents.coding`) and as a one-shot `Model`, through the claude-agent-sdk.

The SDK starts the `claude` CLI and talks stream-json to it over stdin/stdout.
For the Worker the SDK starts a launcher in the session's private directory,
which runs the CLI (`cli_path`, else the one bundled in the SDK's wheel, else
`claude` on PATH) in the engine's sandbox (`Sandbox.engine`): the network to
reach its API, the working copy and a private HOME writable, nothing else of
your files, and of the environment the SDK gives it only Claude Code's own
variables (`ANTHROPIC_*`, `CLAUDE_*`: its key or token) and the allowlist.

The engine keeps ONE CLI process for the whole session: an event loop in a
dedicated thread (an anyio blocking portal) holds a connected
`ClaudeSDKClient`, and every round is one `query` + `receive_response` on it,
so a repair round continues the same conversation. The alternative, a new
process per round resumed by session id, would restart the MCP servers and
make the cost accounting ambiguous: the CLI reports `total_cost_usd` as a
running total of the process. The price of one process is that it lives until
`close()`: the session closes it itself when it cannot go on (a limit, a
failure), on garbage collection, and at exit.

A round's report is the session's final assistant message (Claude Code has no
`finish` tool); the prompt asks for it in the Worker's report format, with the
`RESTRUCTURING:` line.

Confinement (`claude_guard.py` says what the real CLI does and why): one
PreToolUse hook on every tool call, failing closed, decides it. Reads (Read,
Glob, Grep) reach the working copy and the dependencies it shares
(`.lake/packages`, Mathlib's sources) only, symlinks resolved; writes
(Write, Edit, MultiEdit, NotebookEdit) only where `Workspace.resolve(path,
write=True)` allows (the Scope, not protected, inside the working copy), and
never a known secret's value; Bash runs only the commands its rules name
(`Bash(lake build:*)`, Claude Code's prefix syntax; every part of a compound
command must match), each rewritten into the relay's client (`agents.relay`):
the product runs it in the sandbox for Worker-written code (no network, no
credential, nothing of your files but the working copy and the toolchain),
outside the engine's, in the foreground only (background tasks are switched
off); anything else is refused, and the refusal is the tool's error the model
receives. A PostToolUse hook redacts the secrets' values from every tool's
result before the model reads it, and restores `.lake/packages` after Bash.
No rule auto-approves a built-in tool, so what the CLI still asks the
`can_use_tool` callback gets the same decision. No settings file is loaded
(`setting_sources=[]`): a project's or user's `.claude/settings.json` could
auto-approve tools or run hooks of its own, and the standing rules are given
explicitly instead, in the same Worker prompt the API Worker gets, appended
to Claude Code's own system prompt. Only the MCP servers passed in are
started (`--strict-mcp-config`): each command-line server is started by the
product in the sandbox (its `.lake` read-only: it lives while the gates
compile) and reached through the relay; their tools are auto-approved. The
final report passes through the secrets' redaction.

The external prover: when the workspace has a desk whose prover is on, the
session also gets an in-process (SDK) MCP server, `prover`, whose tools
`mcp__prover__submit_to_prover`, `mcp__prover__prover_result` and
`mcp__prover__apply_prover_result` are the Workspace's own tools of those
names: the same refusals (not a declaration with a sorry, outside the Scope, a
proof of another statement…) come back as the tool's error. The CLI reaches
them through `mcp_message` control requests that the SDK answers in this
process; a call runs in a worker thread (a submission uploads the project),
one at a time. Likewise, an in-process server `library` gives the workspace's
`find_declaration` and `lean_goal` as `mcp__library__find_declaration` and
`mcp__library__lean_goal` (the goal view unless the configured Lean server has
one).

Limits (`agents.coding.CodingSession`): `max_turns` is also passed as
`--max-turns` (it bounds one round); what the budgets leave when the session
opens is `--max-budget-usd` (Claude Code checks it between model calls, so a
round may overshoot by one call); an interruption is the SDK's control
request, and a CLI that does not end the turn within the grace is killed.

Cost: one `Charge` per round, with the result's `usage` and, as cost, the
growth of its `total_cost_usd`. A round cut off without a result is charged
with the usage its assistant messages reported, at the price table's price.

Failures: a result the API failed raises `ModelUnavailable`, the key refused
`ModelRejected` (HTTP 401/403); a rate limit (HTTP 429 after the CLI's own
retries, or a `rate_limit_event` whose status is "rejected", which a claude.ai
login's plan limits give with their reset time) ends the session `limited`
(`RateLimited` for the one-shot model). A CLI that is missing, fails to start,
exits or breaks the protocol raises `ModelUnavailable` with what happened and
the tail of its stderr.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import weakref
from collections import deque
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.to_thread
import claude_agent_sdk
import structlog
from anyio.from_thread import BlockingPortal, start_blocking_portal
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ClaudeSDKError,
    CLIConnectionError,
    CLINotFoundError,
    McpSdkServerConfig,
    McpServerConfig,
    Message,
    ProcessError,
    RateLimitEvent,
    RateLimitInfo,
    ResultError,
    ResultMessage,
    SdkMcpTool,
    SystemMessage,
    TextBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
)

from agents.backends.claude_guard import Guard
from agents.coding import Ended, Login, Probe, Quarters, Setup, Turn, Watch, ending, find, logins, probe
from agents.config import LIBRARY_SERVER, PROVER_SERVER, WorkerConfig
from agents.ledger import Charge, Ledger
from agents.lsp import SERVER as LEAN_SERVER
from agents.model import Message as ChatMessage
from agents.model import (
    ModelRejected,
    ModelUnavailable,
    RateLimited,
    Reply,
    StopReason,
    System,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from agents.tools import PROVER_TOOLS, Workspace  # the prover's: a claude-code Worker's `prover` MCP server
from agents.worker import prompt
from state.errors import InfraError
from state.history import Usage

BACKEND = "claude-code"
DEFAULT_ALLOWED_TOOLS = ["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep",
                         "Bash(lake build:*)", "Bash(lake env lean:*)", "Bash(lake lean:*)"]
"""What the Worker may use, in Claude Code's permission-rule syntax."""
ENV = {"DISABLE_AUTOUPDATER": "1",  # an update started mid-cycle can break the next start-up
       "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # telemetry and error reports: only its API's calls
       "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"}  # a command still running would write .lake while the gates run
MIN_VERSION = (2, 1, 0)
"""The oldest Claude Code the product drives: its hooks' `updatedInput` and `updatedToolOutput` are 2.1's."""
FORWARDED = ("ANTHROPIC_", "CLAUDE_CODE_", "CLAUDE_AGENT_SDK_", *ENV)
"""The variables (by prefix) of the SDK's environment for the CLI that reach it in its sandbox: its key or token
(`ANTHROPIC_API_KEY`, `CLAUDE_CODE_OAUTH_TOKEN`), its settings, the SDK's markers. Nothing else of yours reaches
it; not `CLAUDE_CONFIG_DIR` either (its settings and login are in the session's home)."""
LAUNCHER = """#!{python} -I
import os
env = {env!r}
env.update((k, v) for k, v in os.environ.items() if k.startswith({forwarded!r}) and k not in env)
command = {command!r}
os.execve(command[0], command + __import__("sys").argv[1:], env)
"""
"""The executable the SDK starts (`cli_path`): the CLI in its sandbox."""
CONNECT_TIMEOUT_S = 60.0
POLL_S = 0.05
STDERR_LINES = 30

log = structlog.get_logger()

CLAUDE_CODE_NOTE = """
## Working in Claude Code

This session runs in Claude Code: the tools named above are replaced by Claude Code's own. Your tools, in
Claude Code's permission syntax: $tools. Check a Lean file with `lake env lean <file>`.$lake $ending $prover
"""
PROVER_BY_REPORT = ("To hand a hard sorry to the external prover, add a line `PROVER: <declaration>` to the report; "
                    "the proofs it returned are the files under `$state_dir/prover_results/`.")
PROVER_BY_TOOLS = ("The external prover's tools are `mcp__prover__submit_to_prover` (hand it declarations holding a "
                   "sorry; a job takes tens of minutes and its result reaches a later cycle), "
                   "`mcp__prover__prover_result` (show a proof it returned) and `mcp__prover__apply_prover_result` "
                   "(put that proof in place; check the file with `lake env lean` like any edit). A line "
                   "`PROVER: <declaration>` in the report also submits, after the gates (with your change if it "
                   "passed them, without it if not); the returned files are under `$state_dir/prover_results/`.")
LIBRARY_TOOLS = ("find_declaration", "lean_goal")
"""The Workspace's tools, those it offers, a claude-code Worker gets through the `library` MCP server (its Grep
reaches the dependencies' sources too, but a name looked up is found where a guessed pattern is not; `lean_goal`
unless the configured Lean server has one)."""


class ClaudeCode:
    """Claude Code as the Worker's `Engine` (`agents.coding`); see the module docstring."""

    name = BACKEND

    def __init__(self, setup: Setup) -> None:
        c = setup.config
        self.setup = setup
        self.model = setup.model
        self.workspace = setup.workspace
        self.allowed_tools = list(DEFAULT_ALLOWED_TOOLS if c.allowed_tools is None else c.allowed_tools)
        self.quarters = Quarters(setup, permitted=lambda command: self.guard.permits(command))
        try:
            self._prepare(setup)
        except BaseException:
            self.quarters.close()
            raise
        self._finalizer = weakref.finalize(self, _close, self._cli, self.quarters, self.login)

    def _prepare(self, setup: Setup) -> None:
        self.guard = Guard(setup.workspace, setup.sandbox, tuple(self.allowed_tools), self.quarters.run,
                           None if setup.lean_tools is None else frozenset(setup.lean_tools))
        self.tools = self.guard.tally
        # Command-line servers: started by the product in its sandbox, reached through the relay.
        self.mcp_servers: dict[str, Any] = {name: {"type": "stdio", "command": argv[0], "args": argv[1:]}
                                            for name, argv in self.quarters.mcp_servers().items()}
        self.cli = cli_of(setup.config.cli_path)
        self.session_id: str | None = None
        prover = setup.workspace.desk is not None and setup.workspace.desk.off is None
        if prover:
            self.mcp_servers[PROVER_SERVER] = workspace_server(setup.workspace, PROVER_SERVER, PROVER_TOOLS)
        offered = {spec.name for spec in setup.workspace.specs()} - set(setup.lean_tools or ())
        library = tuple(name for name in LIBRARY_TOOLS if name in offered)
        if library:
            self.mcp_servers[LIBRARY_SERVER] = workspace_server(setup.workspace, LIBRARY_SERVER, library)
        note = render_note(self.allowed_tools, setup.workspace.state_dir, prover=prover,
                           lake_dir=setup.sandbox.lake_dir, library=library)
        self.system_prompt = prompt(setup.rules, setup.lean_tools or (), prefix=f"mcp__{LEAN_SERVER}__") + note
        found = _login_file()
        self.login = Login.lend(found, self.quarters.home / ".claude" / ".credentials.json") \
            if found and not _keyed() else None
        self._cli = _Cli("the Worker's session", self._launcher() if self.cli is not None else None)

    def send(self, text: str, budget_usd: float | None, watch: Watch) -> Turn:
        if self.cli is None:
            raise ModelUnavailable(f"the claude CLI was not found {_where(self.setup.config.cli_path)}; install "
                                   "Claude Code or fix cli_path — the cycle is recorded as an infrastructure error")
        if self._cli.closed:
            raise ModelUnavailable("the claude CLI of this session was closed — the cycle is recorded as an "
                                   "infrastructure error")
        if not self._cli.open_:
            # The CLI's budget bounds its running total, which starts at this open: what the ledger has left.
            self._cli.open(self._options(budget_usd), CONNECT_TIMEOUT_S)
        turn = self._cli.converse(text, watch, self.setup.interrupt_grace_s)
        if turn.result is not None:
            self.session_id = turn.result.session_id
        log.info("claude_code.round", denials=len(turn.result.permission_denials or []) if turn.result else None)
        return turn.settled()

    def close(self) -> None:
        """End the CLI process and remove the session's private directory (idempotent)."""
        self._finalizer()

    def _options(self, budget_usd: float | None) -> ClaudeAgentOptions:
        return ClaudeAgentOptions(max_budget_usd=budget_usd,
            model=self.model, cwd=str(self.workspace.root), cli_path=self._cli.cli_path,
            system_prompt={"type": "preset", "preset": "claude_code", "append": self.system_prompt},
            tools=builtin_tools(self.allowed_tools),
            allowed_tools=auto_approved(self.mcp_servers),
            can_use_tool=self.guard.can_use_tool(),
            hooks={"PreToolUse": [self.guard.hook()], "PostToolUse": [self.guard.post_hook()]},
            permission_mode="default", setting_sources=[], max_turns=self.setup.limits.max_turns,
            effort=self.setup.config.effort,
            mcp_servers=cast(dict[str, McpServerConfig], self.mcp_servers), strict_mcp_config=True,
            env=dict(ENV), stderr=self._cli.stderr.append)

    def _launcher(self) -> str:
        """The executable the SDK starts: the CLI in the engine's sandbox, with the environment the SDK gives it
        cut to Claude Code's own variables (its key among them) and the allowlist."""
        assert self.cli is not None
        command, env = self.quarters.confined([str(self.cli)], {})
        launcher = self.quarters.root / "claude"
        launcher.write_text(LAUNCHER.format(python=sys.executable, env=env, forwarded=FORWARDED, command=command),
                            encoding="utf-8")
        launcher.chmod(0o700)
        return str(launcher)


ENGINE = ClaudeCode


def cli_of(configured: str | None) -> Path | None:
    """The claude CLI to run: `cli_path`, else the one bundled in claude-agent-sdk's wheel, else `claude` on PATH."""
    if configured:
        return Path(configured) if Path(configured).is_file() else None
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return bundled if bundled.is_file() else find("claude")


def check(config: WorkerConfig) -> Probe:
    """The configured Claude Code as found here, or why it cannot run a Worker (missing, too old, not answering)."""
    fix = ("install claude-agent-sdk (`pip install 'autoformalize[claude-code]'`) or Claude Code, or fix "
           "[agents.worker] cli_path")
    probed = probe("claude", cli_of(config.cli_path), MIN_VERSION, fix, _where(config.cli_path))
    if probed.problem is None and not _keyed() and _login_file() is None:
        return Probe(probed.program, probed.version, "claude has no credential: set ANTHROPIC_API_KEY (or "
                                                     "CLAUDE_CODE_OAUTH_TOKEN, which `claude setup-token` prints), "
                                                     "or log in once with `claude`")
    return probed


def _where(cli_path: str | None) -> str:
    return f"at {cli_path}" if cli_path else "bundled with claude-agent-sdk, on PATH or beside this Python"


def _keyed() -> bool:
    """Whether Claude Code runs on a key or token from the environment rather than its own login."""
    return any(os.environ.get(v) for v in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"))


def _login_file() -> Path | None:
    """Claude Code's own login (its `/login` on Linux keeps it in this file), when there is one."""
    return logins().get(BACKEND)


def _close(cli: _Cli, quarters: Quarters, login: Login | None) -> None:
    """The CLI ended, its login handed back (Claude Code refreshes it), its private directory removed."""
    cli.close()
    if login is not None:
        login.give_back()
    quarters.close()


class ClaudeCodeModel:
    """A tool-less Claude Code call for the one-shot roles (Planner, Evaluator, Consultant).

    Each `send` is one CLI process: the system prompt replaces Claude Code's, no
    tool, setting or MCP server is loaded, and the conversation is sent as one
    prompt. `Reply.usage` and `Reply.cost_usd` carry what the result reported.
    Cost rule: `Metered` charges `Reply.cost_usd` to its ledger, so a model
    wrapped in it (as the wiring does) must not be given a `ledger`; pass one
    only to a bare model, and it is charged to `role` there instead.
    """

    def __init__(self, model: str, timeout_s: float = 900.0, *, cli_path: str | None = None,
                 ledger: Ledger | None = None, role: str | None = None) -> None:
        if ledger is not None and not role:
            raise ValueError("a ClaudeCodeModel given a ledger needs the role its calls are charged to")
        self.name = model
        self.timeout_s = timeout_s
        self.cli_path = cli_path
        self.ledger = ledger
        self.role = role or ""

    def send(self, system: System, messages: list[ChatMessage], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        if tools:
            raise ValueError("the claude-code model serves tool-less roles; the Worker is a ClaudeCode engine")
        stderr: deque[str] = deque(maxlen=STDERR_LINES)
        options = ClaudeAgentOptions(
            model=self.name, cli_path=self.cli_path, system_prompt="\n\n".join(p for p in (system.stable,
                                                                                           system.volatile) if p),
            tools=[], allowed_tools=[], setting_sources=[], strict_mcp_config=True, max_turns=1,
            env={**ENV, "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(max_tokens)}, stderr=stderr.append)
        turn = anyio.run(self._ask, conversation(messages), options, stderr)
        result = turn.result
        if result is None:
            raise ModelUnavailable(f"the claude CLI ended without a result for model {self.name}: "
                                   f"{tail(stderr)}; the cycle is recorded as an infrastructure error")
        usage = usage_of(result.usage)
        if self.ledger is not None:
            self.ledger.add(Charge(self.role, BACKEND, turn.model or self.name, usage, result.total_cost_usd))
        if result.is_error:
            raise result_failure(result, f"a call of model {self.name}", turn.limit)
        stop = StopReason.MAX_TOKENS if result.stop_reason == "max_tokens" else StopReason.END
        log.info("model.call", backend=BACKEND, model=self.name, input_tokens=usage.input, output_tokens=usage.output,
                 cache_read_tokens=usage.cache_read, cache_write_tokens=usage.cache_write,
                 cost_usd=result.total_cost_usd)
        return Reply(text=(result.result or turn.text).strip(), usage=usage, stop=stop,
                     model=turn.model or self.name, cost_usd=result.total_cost_usd)

    async def _ask(self, prompt: str, options: ClaudeAgentOptions, stderr: deque[str]) -> _Turn:
        turn = _Turn()
        try:
            with anyio.fail_after(self.timeout_s):
                async for message in query(prompt=prompt, options=options):
                    turn.take(message)
        except TimeoutError:
            raise ModelUnavailable(f"the claude CLI did not answer within {self.timeout_s:.0f}s for model "
                                   f"{self.name}; the cycle is recorded as an infrastructure error") from None
        except Exception as e:  # the SDK's errors, and bare Exceptions for untyped ones: all are the CLI's
            if isinstance(e, ResultError) and turn.result is not None:
                return turn  # its error result was read before the CLI exited: `send` says what it means
            await anyio.sleep(POLL_S)  # let the last stderr lines arrive
            raise cli_failure(e, stderr, self.cli_path, "a call of model " + self.name,
                              started=turn.started) from e
        finally:
            gc.collect()  # the CLI's pipes finalized while this loop still runs (see `_disconnect`)
        return turn


# --- one conversation with one CLI process -------------------------------------------------------------------------


@dataclass
class _Turn(Turn):
    """What one round brought back, as the CLI's messages said it."""

    started: bool = False  # the CLI said `init`: it is past start-up
    result: ResultMessage | None = None
    step_usage: Usage = field(default_factory=Usage)  # what its assistant messages reported, one per model call
    limit: RateLimitInfo | None = None  # the last rate-limit state the CLI reported as rejected
    abandoned: bool = False  # the CLI did not end an interrupted turn in time
    failure: Exception | None = None
    _ids: set[str] = field(default_factory=set)

    def take(self, message: Message) -> None:
        if isinstance(message, SystemMessage) and message.subtype == "init":
            self.started = True
        elif isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
            self.awaiting_model = False
            self.model = message.model or self.model
            key = message.message_id or f"anonymous-{len(self._ids)}"
            if key not in self._ids:
                self._ids.add(key)
                self.calls += 1
                self.step_usage += usage_of(message.usage)
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            if text.strip():
                self.text = text
        elif isinstance(message, UserMessage) and message.parent_tool_use_id is None:
            self.awaiting_model = True
        elif isinstance(message, RateLimitEvent):
            info = message.rate_limit_info
            self.limit = info if info.status == "rejected" else None
        elif isinstance(message, ResultMessage):
            self.result = message
            self.awaiting_model = False

    def settled(self) -> Turn:
        """The round in the seam's terms, from its result (or, cut off, from what its steps reported)."""
        result = self.result
        if result is None:
            self.usage = self.step_usage
            return self
        self.usage = usage_of(result.usage)
        if result.subtype == "error_max_turns":
            self.ended = Ended.TURNS
        elif result.subtype == "error_max_budget_usd":
            self.ended = Ended.BUDGET
        elif result.is_error or result.subtype != "success":
            self.error = result_detail(result)
            limited = self.limit is not None or result.api_error_status == 429
            self.ended = Ended.LIMITED if limited else Ended.FAILED
            self.resets_at = resets_at(self.limit)
            self.rejected = result.api_error_status in (401, 403)
        else:
            self.ended = Ended.DONE
            self.text = (result.result or self.text)
        return self


class _Cli:
    """One claude CLI process and the event loop, in its own thread, that talks to it."""

    def __init__(self, what: str, cli_path: str | None) -> None:
        self.what = what
        self.cli_path = cli_path
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.closed = False
        self.cost_seen = 0.0  # the running total of the last result
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._client: ClaudeSDKClient | None = None

    @property
    def open_(self) -> bool:
        return self._client is not None

    def open(self, options: ClaudeAgentOptions, timeout_s: float) -> None:
        self._portal_cm = start_blocking_portal(name="claude-code")
        self._portal = self._portal_cm.__enter__()
        try:
            self._portal.call(self._connect, options, timeout_s)
        except BaseException:
            self.close()
            raise

    async def _connect(self, options: ClaudeAgentOptions, timeout_s: float) -> None:
        client = ClaudeSDKClient(options)
        try:
            with anyio.fail_after(timeout_s):
                await client.connect()
        except TimeoutError:
            raise ModelUnavailable(f"the claude CLI did not answer within {timeout_s:.0f}s at start-up: "
                                   f"{tail(self.stderr)}; the cycle is recorded as an infrastructure error") from None
        except Exception as e:  # the SDK's errors, and a bare Exception for an unanswered initialize
            await anyio.sleep(POLL_S)  # let the last stderr lines arrive
            raise cli_failure(e, self.stderr, self.cli_path, self.what, started=False) from e
        self._client = client

    def converse(self, text: str, limit: Watch, grace_s: float) -> _Turn:
        """Send `text` and read until the round's result; `limit` is polled, and a reason it gives interrupts."""
        assert self._portal is not None
        turn = self._portal.call(self._converse, text, limit, grace_s)
        if turn.failure is not None:
            raise cli_failure(turn.failure, self.stderr, self.cli_path, self.what, started=True)
        return turn

    async def _converse(self, text: str, limit: Watch, grace_s: float) -> _Turn:
        assert self._client is not None
        turn = _Turn(started=True)
        try:
            await self._client.query(text)
        except ClaudeSDKError as e:
            turn.failure = e
            return turn
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read, turn, tg.cancel_scope)
            await self._watch(turn, limit, grace_s)
            tg.cancel_scope.cancel()
        if turn.failure is not None:
            await anyio.sleep(POLL_S)  # let the last stderr lines arrive
        total = turn.result.total_cost_usd if turn.result is not None else None
        if total is not None:
            turn.cost = round(max(0.0, total - self.cost_seen), 9)
            self.cost_seen = total
        return turn

    async def _read(self, turn: _Turn, scope: anyio.CancelScope) -> None:
        assert self._client is not None
        try:
            async for message in self._client.receive_response():
                turn.take(message)
        except Exception as e:  # the SDK raises its errors, and bare Exceptions for untyped ones: all are the CLI's
            turn.failure = e
        finally:
            scope.cancel()

    async def _watch(self, turn: _Turn, limit: Watch, grace_s: float) -> None:
        """Return only to give up on the round; the reader cancels this when the round ends."""
        while (reason := limit(turn)) is None:
            await anyio.sleep(POLL_S)
        turn.interrupted_for = reason
        assert self._client is not None
        with anyio.move_on_after(grace_s):
            try:
                await self._client.interrupt()
            except Exception as e:  # a dead or deaf CLI: it is killed below
                log.warning("claude_code.interrupt_failed", error=str(e)[:300])
            await anyio.sleep(grace_s)  # the result that ends the interrupted turn cancels this wait
        turn.abandoned = True

    def close(self) -> None:
        """Disconnect (the SDK closes stdin, then terminates the process) and stop the loop; idempotent."""
        if self.closed:
            return
        self.closed = True
        portal, portal_cm, client = self._portal, self._portal_cm, self._client
        self._portal = self._portal_cm = None
        try:
            if portal is not None and client is not None:
                del client
                portal.call(_disconnect, self)
        except Exception as e:  # closing must not fail; the SDK's atexit hook reaps its children
            log.warning("claude_code.close_failed", error=str(e)[:300])
        finally:
            if portal_cm is not None:
                portal_cm.__exit__(None, None, None)


async def _disconnect(cli: _Cli) -> None:
    """The client's CLI ended, then what is left of its process's pipes finalized while this loop still runs: after
    the loop, the collector would finalize them and each one's finalizer would fail ("Event loop is closed")."""
    client, cli._client = cli._client, None
    try:
        if client is not None:
            await client.disconnect()
    finally:
        del client
        gc.collect()


# --- options, permissions, messages --------------------------------------------------------------------------------


def render_note(allowed_tools: list[str], state_dir: str, *, prover: bool = False, lake_dir: str = ".",
                library: tuple[str, ...] = ()) -> str:
    """The note on Claude Code; `prover`: the session has the external prover's MCP tools; `lake_dir`: the folder
    holding the Lake project, where commands run; `library`: the Workspace's tools it has through that server."""
    from string import Template

    tools = [*allowed_tools, *(f"mcp__{PROVER_SERVER}__{name}" for name in PROVER_TOOLS if prover),
             *(f"mcp__{LIBRARY_SERVER}__{name}" for name in library)]
    how = Template(PROVER_BY_TOOLS if prover else PROVER_BY_REPORT).substitute(state_dir=state_dir)
    lake = "" if lake_dir == "." else (f" Commands run in `{lake_dir}/`, the Lake project's folder: name files "
                                       "relative to it there.")
    return Template(CLAUDE_CODE_NOTE).substitute(tools=", ".join(tools) or "(none)", prover=how, lake=lake,
                                                 ending=ending(state_dir))


def workspace_server(workspace: Workspace, server: str, names: tuple[str, ...]) -> McpSdkServerConfig:
    """The in-process MCP server `server` whose tools are `workspace`'s tools `names`, refusals included (as error
    results). Calls run one at a time in a worker thread, off the event loop that talks to the CLI."""
    specs = {spec.name: spec for spec in workspace.specs()}
    lock = threading.Lock()

    def call(name: str, arguments: dict[str, Any]) -> ToolResult:
        with lock:
            return workspace.call(ToolCall(f"mcp-{name}", name, arguments))

    def make(name: str) -> SdkMcpTool[Any]:
        async def handler(arguments: dict[str, Any]) -> dict[str, Any]:
            result = await anyio.to_thread.run_sync(call, name, arguments)
            log.info("claude_code.workspace_tool", server=server, tool=name, arguments=arguments,
                     is_error=result.is_error)
            return {"content": [{"type": "text", "text": result.content}], "is_error": result.is_error}

        spec = specs[name]  # Claude Code has no lean_check: it checks a file with lake
        return SdkMcpTool(name, spec.description.replace("with lean_check", "with `lake env lean <file>`"),
                          spec.input_schema, handler)

    return create_sdk_mcp_server(server, tools=[make(name) for name in names])


def builtin_tools(allowed_tools: list[str]) -> list[str]:
    """The built-in tools to make available (`--tools`): the names the rules mention, MCP tools aside."""
    names = [rule.partition("(")[0] for rule in allowed_tools if not rule.startswith("mcp__")]
    return list(dict.fromkeys(names))


def auto_approved(mcp_servers: dict[str, Any]) -> list[str]:
    """The rules the CLI approves without asking (`--allowedTools`): every tool of the configured MCP servers, and
    nothing else (a rule would approve a built-in tool before the guard's callback is asked)."""
    return [f"mcp__{name}" for name in mcp_servers]


def conversation(messages: list[ChatMessage]) -> str:
    """A conversation as one prompt: a single message as it is, several as a transcript."""
    for m in messages:
        if m.tool_calls or m.tool_results:
            raise ValueError("the claude-code model takes text messages only")
    if len(messages) == 1:
        return messages[0].text
    names = {"user": "User", "assistant": "You (an earlier answer)"}
    return "\n\n".join(f"[{names.get(m.role, m.role)}]\n{m.text}" for m in messages)


def usage_of(raw: dict[str, Any] | None) -> Usage:
    raw = raw or {}
    return Usage(input=raw.get("input_tokens") or 0, output=raw.get("output_tokens") or 0,
                 cache_read=raw.get("cache_read_input_tokens") or 0,
                 cache_write=raw.get("cache_creation_input_tokens") or 0)


def tail(stderr: deque[str]) -> str:
    text = " | ".join(line.strip() for line in stderr if line.strip())
    return (text[-1500:] if text else "(nothing on stderr)")


def cli_failure(err: Exception, stderr: deque[str], cli_path: str | None, what: str, *,
                started: bool) -> ModelUnavailable:
    """The plain message for a CLI that could not be found, started or talked to."""
    infra = "the cycle is recorded as an infrastructure error"
    if isinstance(err, CLINotFoundError):
        if cli_path:
            return ModelUnavailable(f"the claude CLI was not found at {cli_path}; install Claude Code or fix "
                                    f"cli_path — {infra}")
        return ModelUnavailable(f"the claude CLI was not found on PATH (nor bundled with claude-agent-sdk); install "
                                f"Claude Code or set cli_path — {infra}")
    when = "during " + what if started else "at start-up"
    if isinstance(err, ProcessError):
        hint = "; it may be updating itself or not be logged in" if not started else ""
        return ModelUnavailable(f"the claude CLI exited with code {err.exit_code} {when}: {tail(stderr)}{hint} — "
                                f"{infra}")
    if isinstance(err, CLIConnectionError):
        return ModelUnavailable(f"the claude CLI stopped answering {when} ({err}): {tail(stderr)} — {infra}")
    return ModelUnavailable(f"the claude CLI broke the protocol {when} ({type(err).__name__}: {err}) — {infra}")


def result_detail(result: ResultMessage) -> str:
    """What a failed result says went wrong."""
    return ("; ".join(result.errors or []) or (result.result or "").strip() or result.subtype)[:1000]


def resets_at(limit: RateLimitInfo | None) -> datetime | None:
    """When a rejected rate limit lifts, as the CLI reported it (a Unix time), or None."""
    if limit is None or not limit.resets_at:
        return None
    return datetime.fromtimestamp(limit.resets_at, UTC)


def result_failure(result: ResultMessage, what: str, limit: RateLimitInfo | None = None) -> InfraError:
    """A result that reports an error the Worker did not cause (the API failed, the key was refused, a rate limit or
    a subscription's cap was reached, …)."""
    message = f"Claude Code ended {what} with an error ({result.subtype}): {result_detail(result)}"
    if limit is not None or result.api_error_status == 429:
        return RateLimited(f"{message}; the loop pauses until the limit lifts", resets_at(limit))
    if result.api_error_status in (401, 403):
        return ModelRejected(f"{message}; check the claude CLI's login or key")
    return ModelUnavailable(f"{message} — the cycle is recorded as an infrastructure error")
