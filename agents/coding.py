"""Coding agents as the Worker: the one seam every engine joins (Claude Code, Codex CLI, …), and the session that
holds any of them to the Worker's limits.

An `Engine` is one coding-agent CLI working in the Worker's working copy. `send` gives it the next user message of
one conversation (the first round's brief, then each repair round's gate report), reads its events until its turn
ends, and interrupts it when the watch names a reason; `close` ends whatever process it holds. What one turn brought
back is a `Turn`, in the same terms for every engine. Each engine's module says how its CLI is started, confined and
read, and names its `Engine` class `ENGINE`; it is `agents.backends.<backend>` (a dash an underscore), so a third
engine is one module and its name in `agents.config.ENGINES`, and `[agents.worker] backend` picks it.

`CodingSession` is the Worker's `Session` over any engine:

- the limits as `WorkerSession` has them: `max_turns` counts model calls over the whole session, `timeout_s` runs
  from construction, and a stop request, the deadline or the turn limit interrupts the round (a call beyond the
  turn limit is never made: the watch fires as soon as tool results went back at the limit); `token_budget` and
  the ledger's budget guard are checked before each round, and what the budgets leave is handed to the engine
  (an engine with a budget flag of its own is held to it between model calls);
- one `Charge` per round, at the cost the engine reported or, when it reports none, at the price of its usage in
  the price table (unknown for an unpriced model: recorded as null, never 0);
- a rate limit or a subscription's usage cap ends the session with `Stop.LIMITED` and the reset time the engine
  gave (`limited_until`); what the Worker did before it is still gated, and the cycle pauses the loop
  (`orchestrator.cycle`);
- a failure the Worker did not cause (the API, the key, the CLI itself) raises `ModelUnavailable` or
  `ModelRejected`: the cycle is recorded as an infrastructure error;
- the report is the engine's final message of the round, with every known secret's value redacted.
"""

from __future__ import annotations

import importlib
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from string import Template
from typing import Any, Protocol

import structlog

from agents.config import ENGINES, WorkerConfig
from agents.ledger import BudgetExceeded, Charge, Ledger
from agents.model import ModelRejected, ModelUnavailable
from agents.prices import Price, cost
from agents.relay import CLIENT, Relay
from agents.tools import Tally, Workspace
from agents.worker import Context, Limits, Round, Stop, joined, reached
from gates.sandbox import Sandbox
from state.atomic import write_atomic
from state.history import Usage

log = structlog.get_logger()

VERSION_TIMEOUT_S = 30.0
ENDING = """Record a blocker by writing a new file `$state_dir/issues/<slug>.md` (never an existing one). Do not
commit; the loop commits for you. There is no `finish` tool: when you are done, end your turn with the report (the
headings above, the `RESTRUCTURING:` line if you raised the number of sorries or traded a proof for a sorry, and the
`SPLITTING:` line if you made a file over the size cap longer, each on a line of its own) as your final message.
That message is the report."""
"""How a Worker in any coding agent records a blocker and ends: the part of each engine's note they share."""
MODULES = {name: f"agents.backends.{name.replace('-', '_')}" for name in ENGINES}
"""Each coding-agent backend and its module: `ENGINE(setup)` is its `Engine`, and `check(config)` says why its CLI
cannot run here."""


class Ended(StrEnum):
    """How an engine's turn ended, in the engine's own terms."""

    DONE = "done"  # the agent ended its turn; its last message is the report
    TURNS = "turns"  # the engine's own turn limit
    BUDGET = "budget"  # the engine's own spending limit
    LIMITED = "limited"  # a rate limit or usage cap; `Turn.resets_at` when it said when it lifts
    FAILED = "failed"  # an error the Worker did not cause: the API, the key, the CLI


@dataclass
class Turn:
    """What one round brought back from an engine."""

    calls: int = 0  # model calls made in the round
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None  # what the engine says the round cost; None: priced from its usage
    model: str = ""  # the model that served it, as the engine reports it
    text: str = ""  # the agent's last message
    ended: Ended | None = None  # None: cut off (interrupted, or the CLI died) before the turn ended
    error: str = ""  # FAILED or LIMITED: what the engine said
    rejected: bool = False  # FAILED because the provider refused the key or the login
    resets_at: datetime | None = None  # LIMITED: when the limit lifts, as the engine said
    interrupted_for: Stop | None = None  # the watch's reason, when it interrupted the round
    awaiting_model: bool = False  # tool results went back: the next thing the engine does is a model call


Watch = Callable[[Turn], Stop | None]
"""Polled with the round so far; a reason it names interrupts the engine."""


class Engine(Protocol):
    """One coding-agent CLI holding one conversation in the working copy."""

    name: str  # the backend's name, as `[agents.worker] backend` and the ledger know it
    model: str
    tools: Tally  # the tool calls it made, by name, as far as this side can see them
    session_id: str | None  # the engine's own id of the conversation, once known

    def send(self, text: str, budget_usd: float | None, watch: Watch) -> Turn:
        """One round: `text` as the conversation's next user message. `budget_usd`: what the ledger leaves, for an
        engine that can hold itself to it. Raises `ModelUnavailable` for a CLI that could not be started or
        talked to."""
        ...

    def close(self) -> None:
        """End the process and its children (idempotent)."""
        ...


@dataclass(frozen=True)
class Setup:
    """What a coding agent's session starts from: its settings, the brief's rules, the MCP servers, the limits."""

    config: WorkerConfig  # `[agents.worker]`: the engine's own settings (its CLI, tools, effort, endpoint)
    model: str  # the model this session opens with (the Worker's, or its `hard_model`)
    workspace: Workspace  # the working copy, its Scope and its secrets
    rules: str  # the standing rules the Worker's system prompt carries
    limits: Limits
    ledger: Ledger
    sandbox: Sandbox  # what confines every command and server the engine starts
    stop: threading.Event = field(default_factory=threading.Event)
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)  # name → a stdio server's command entry
    lean_tools: list[str] | None = None  # the Lean server's tools allowed, when `mcp_servers` holds it
    prices: dict[str, Price] = field(default_factory=dict)  # `[prices]`, over the price table
    interrupt_grace_s: float = 10.0  # how long an interrupted round may take to end before the CLI is killed
    role: str = "worker"


class Quarters:
    """An engine session's private directory, removed on close: its HOME (its settings, sessions and login), its
    temporary files, and the relay (`agents.relay`) through which it reaches the processes the product runs for it
    confined: each configured command-line MCP server, and the commands `permitted` allows (None: none)."""

    def __init__(self, setup: Setup, permitted: Callable[[str], bool] | None = None) -> None:
        self.setup = setup
        self.permitted = permitted
        # In the system's temporary directory: a Unix socket's path must stay short.
        self.root = Path(tempfile.mkdtemp(prefix="autoformalize-engine-"))
        self.home.mkdir()
        self.tmp.mkdir()
        self.relay = Relay(self.root / "relay.sock", secrets.token_urlsafe(24), self._resolve,
                           on_error=lambda line: log.warning("engine.relay", detail=line[:500]))

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    def mcp_servers(self) -> dict[str, list[str]]:
        """Each configured command-line MCP server as the command the engine starts: the relay's client."""
        return {name: self.relay.client("mcp", name) for name, entry in self.setup.mcp_servers.items()
                if isinstance(entry.get("command"), str) and entry.get("type", "stdio") == "stdio"}

    def run(self, command: str) -> list[str]:
        """The command the engine runs for one shell command of the Worker's: the relay's client."""
        return self.relay.client("run", command)

    def confined(self, args: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The engine's own command and environment, in its sandbox (`Sandbox.engine`)."""
        s = self.setup
        return s.sandbox.engine(args, s.workspace.root, self.home, {"TMPDIR": str(self.tmp), **env},
                                shown=[Path(sys.executable), CLIENT, self.relay.path], writable=[self.tmp])

    def close(self) -> None:
        self.relay.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _resolve(self, request: dict[str, Any]) -> list[str]:
        s = self.setup
        if request["kind"] == "mcp":
            entry = s.mcp_servers.get(str(request.get("name")))
            if entry is None:
                raise ValueError(f"no MCP server is configured as {request.get('name')!r}")
            # It lives through the gates' compiles: nothing it runs may write the build outputs they read.
            return s.sandbox.wrap([entry["command"], *entry.get("args", [])], s.workspace.root,
                                  env=entry.get("env") or {}, outputs=False)
        command = str(request.get("command", ""))
        if self.permitted is None or not self.permitted(command):
            raise ValueError("not a command this session may run")
        return s.sandbox.wrap(["/bin/sh", "-c", command], s.workspace.root)


class CodingSession:
    """The Worker's `Session` over an engine; see the module docstring."""

    def __init__(self, engine: Engine, workspace: Workspace, limits: Limits, ledger: Ledger, *,
                 role: str = "worker", stop: threading.Event | None = None,
                 prices: dict[str, Price] | None = None) -> None:
        self.engine = engine
        self.workspace = workspace
        self.limits = limits
        self.ledger = ledger
        self.role = role
        self.stop = stop if stop is not None else threading.Event()
        self.prices = prices or {}
        self.turns = 0
        self.rounds: list[Round] = []
        self.context = Context()  # the engine keeps its own context; only the turns are known here
        self.usage = Usage()
        self.limited_until: datetime | None = None
        self.deadline = time.monotonic() + limits.timeout_s
        self.ended: Stop | None = None  # why the session was closed
        self.tools: Tally = engine.tools
        self._room: float | None = None  # what the budgets left when the round under way started

    @property
    def session_id(self) -> str | None:
        return self.engine.session_id

    # -- the Session protocol -------------------------------------------------------------

    def run(self, prompt: str) -> Round:
        """The first round: the strategy and context as the opening message."""
        return self._round(prompt)

    def resume(self, feedback: str) -> Round:
        """A repair round: the gates' report as the next message of the same conversation."""
        return self._round(feedback)

    def report(self) -> str:
        return joined(self.rounds)

    def close(self, why: Stop = Stop.STOPPED) -> None:
        """End the engine's process (idempotent). Later rounds end at once, for `why` (the first reason given)."""
        self.ended = self.ended or why
        self.engine.close()

    @property
    def closed(self) -> bool:
        return self.ended is not None

    # -- rounds ---------------------------------------------------------------------------

    def _round(self, text: str) -> Round:
        stop = self._limit()
        if stop is not None:
            self.close(stop)
            return self._end(stop, self._placeholder(stop))
        try:
            self.ledger.admit(self.role, 0.0)  # a round's worst case is unknown: refuse only once over a limit
        except BudgetExceeded as e:
            self.close(Stop.BUDGET)
            return self._end(Stop.BUDGET, f"(The session stopped: {e}. {self.turns} model calls were made.)")
        self._room = self.ledger.headroom()
        try:
            turn = self.engine.send(text, self._room, self._watch)
        except Exception:
            self.close()
            raise
        self._charge(turn)
        self.turns += turn.calls
        stop, report = self._outcome(turn)
        if stop not in (Stop.FINISHED, Stop.ENDED) or turn.interrupted_for is not None:
            self.close(turn.interrupted_for or stop)  # a limit was reached, even if the report beat it: no more rounds
        log.info("worker.round", backend=self.engine.name, stop=str(stop), turns=self.turns,
                 session=self.engine.session_id)
        return self._end(stop, report)

    def _limit(self) -> Stop | None:
        """Why no round may start now, or None; what ended the session ends every later round."""
        return reached(self.limits, self.stop, self.turns, time.monotonic() >= self.deadline, self.usage) \
            or self.ended

    def _watch(self, turn: Turn) -> Stop | None:
        """Why a round under way must be interrupted, or None."""
        if self.stop.is_set():
            return Stop.STOPPED
        if time.monotonic() >= self.deadline:
            return Stop.TIME
        if turn.awaiting_model and self.turns + turn.calls >= self.limits.max_turns:  # no call beyond the limit
            return Stop.TURNS
        if self._room is not None and turn.cost is None and (self._price(turn) or 0.0) > self._room:
            return Stop.BUDGET  # an engine reporting its usage as it goes, and no budget of its own
        return None

    def _charge(self, turn: Turn) -> None:
        if turn.usage == Usage() and turn.cost is None:
            return
        self.usage += turn.usage
        self.ledger.add(Charge(self.role, self.engine.name, turn.model or self.engine.model, turn.usage,
                               self._price(turn)))

    def _price(self, turn: Turn) -> float | None:
        """What the round cost: at `[prices]` when they name its model (an engine's own figure for a model it does
        not know is a guess), else the engine's figure, else at the price table (by the configured name first:
        engines report resolved or dated ids)."""
        model = turn.model or self.engine.model
        if turn.cost is not None and not ({model, self.engine.model} & self.prices.keys()):
            return turn.cost
        price = cost(self.engine.model, turn.usage, self.prices)
        return price if price is not None or model == self.engine.model else cost(model, turn.usage, self.prices)

    def _outcome(self, turn: Turn) -> tuple[Stop, str]:
        if turn.ended is Ended.LIMITED:
            self.limited_until = turn.resets_at
            when = f" until {turn.resets_at.isoformat(timespec='minutes')}" if turn.resets_at else ""
            log.warning("worker.rate_limited", backend=self.engine.name, until=when.strip(), error=turn.error[:300])
            return Stop.LIMITED, (f"(The session stopped: {self.engine.name} is rate-limited{when}: "
                                  f"{turn.error[:300]}. {self.turns} model calls were made.)")
        done = turn.ended is Ended.DONE
        if turn.interrupted_for is not None and not done:  # a report that beat the interruption still counts
            return turn.interrupted_for, self._placeholder(turn.interrupted_for)
        if turn.ended is Ended.TURNS:
            return Stop.TURNS, self._placeholder(Stop.TURNS)
        if turn.ended is Ended.BUDGET:
            return Stop.BUDGET, self._placeholder(Stop.BUDGET)
        if turn.ended is Ended.FAILED:
            message = f"{self.engine.name} ended the Worker's session with an error: {turn.error[:1000]}"
            if turn.rejected:
                raise ModelRejected(f"{message}; check the {self.engine.name} CLI's login or key")
            raise ModelUnavailable(f"{message} — the cycle is recorded as an infrastructure error")
        if turn.ended is None:
            raise ModelUnavailable(f"{self.engine.name} ended the round without finishing its turn — the cycle is "
                                   "recorded as an infrastructure error")
        report = self.workspace.secrets.redact(turn.text.strip())
        return (Stop.FINISHED, report) if report else (Stop.ENDED, "(The Worker ended without a report.)")

    def _placeholder(self, stop: Stop) -> str:
        return f"(The session stopped at its {stop.value} limit without a report; {self.turns} model calls were made.)"

    def _end(self, stop: Stop, report: str) -> Round:
        done = Round(stop, report)
        self.rounds.append(done)
        return done


@dataclass(frozen=True)
class Probe:
    """What an engine's CLI answered `--version` with: where it is, its version, or why it cannot run a Worker."""

    program: str | None
    version: str = ""
    problem: str | None = None

    def line(self, name: str) -> str:
        """One line for `doctor` and the dry run."""
        return self.problem or f"{name} {self.version} at {self.program}"


def probe(name: str, program: Path | None, minimum: tuple[int, ...], fix: str, missing: str) -> Probe:
    """Run `program --version` (an engine's CLI, `name`): its version, or the one line saying what is wrong and how
    to fix it (`fix`): not found (`missing` says where it was looked for), not running, not answering, older than
    `minimum`."""
    if program is None or not program.exists():
        return Probe(None, problem=f"the {name} CLI was not found {missing}: {fix}")
    try:
        done = subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Probe(str(program), problem=f"the {name} CLI at {program} does not run ({e}): {fix}")
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        tail = (done.stderr or done.stdout).strip()[-300:] or f"exit code {done.returncode}"
        return Probe(str(program), problem=f"the {name} CLI at {program} does not answer `--version` ({tail}): {fix}")
    version = ".".join(found.groups())
    if tuple(int(g) for g in found.groups()) < minimum:
        return Probe(str(program), version, f"the {name} CLI at {program} is {version}, older than the "
                                            f"{'.'.join(map(str, minimum))} the product drives: {fix}")
    return Probe(str(program), version)


def logins() -> dict[str, Path]:
    """Each engine's own login on this machine (a subscription's tokens), where its CLI keeps it."""
    places = {"claude-code": Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / ".credentials.json",
              "codex": Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "auth.json"}
    return {name: path for name, path in places.items() if path.is_file()}


@dataclass(frozen=True)
class Login:
    """A CLI's own login lent to one session: copied into its private home, and handed back if the CLI refreshed
    it there — unless the original changed meanwhile (another session refreshed it first: its tokens win, those
    lent here may have been revoked by that refresh)."""

    source: Path
    copy: Path
    lent: bytes

    @classmethod
    def lend(cls, source: Path, copy: Path) -> Login:
        lent = source.read_bytes()
        copy.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(copy, lent)
        copy.chmod(0o600)
        return cls(source, copy, lent)

    def give_back(self) -> None:
        try:
            used = self.copy.read_bytes()
            if used != self.lent and self.source.read_bytes() == self.lent:
                write_atomic(self.source, used)
        except OSError as e:  # the session ends all the same; the login it was lent is still there
            log.warning("engine.login_not_handed_back", path=str(self.source), error=str(e)[:300])


def ending(state_dir: str) -> str:
    """`ENDING` for a loop whose state is in `state_dir`."""
    return Template(ENDING).substitute(state_dir=state_dir)


def find(program: str) -> Path | None:
    """An engine's executable: on PATH, else beside this Python (the quick start links Codex into its virtual
    environment's `bin`, which need not be on PATH)."""
    found = shutil.which(program) or shutil.which(program, path=str(Path(sys.executable).parent))
    return Path(found) if found else None


def check(config: WorkerConfig) -> Probe:
    """The Worker's engine (`config.backend`, one of `ENGINES`) as found here."""
    found: Probe = importlib.import_module(MODULES[config.backend]).check(config)
    return found


def session(setup: Setup) -> CodingSession:
    """The Worker session of the coding agent `setup.config.backend` names (one of `ENGINES`)."""
    engine: Engine = importlib.import_module(MODULES[setup.config.backend]).ENGINE(setup)
    return CodingSession(engine, setup.workspace, setup.limits, setup.ledger, role=setup.role, stop=setup.stop,
                         prices=setup.prices)
