"""Codex CLI as the Worker's engine (`[agents.worker] backend = "codex"`), through `codex exec --json`.

What the real CLI (0.171, measured against a scripted Responses endpoint) does, and how it is driven here:

- One process per round. The first round runs `codex exec … -` with the brief on stdin; a repair round
  `codex exec … resume <thread> -`, which continues the same thread from its rollout under the session's
  private CODEX_HOME. A resume keeps no setting, so every round is given all of them again. stdin is closed
  after the prompt: Codex reads it to its end.
- Its events, one JSON object a line: `thread.started` (the thread's id), `item.started` / `item.completed`
  (`command_execution`, `file_change`, `mcp_tool_call`, `agent_message`, `reasoning`, …), then `turn.completed`
  with the thread's usage so far, or `error` and `turn.failed` with a message. A round's usage is what grew since
  the last `turn.completed`; its model calls, as far as the events show them, one for each batch of items that
  follows the tool results (parallel calls in one answer count once each).
- Codex's own sandbox is on: `workspace-write`, so its commands write the working copy only (not `/tmp`, not
  its TMPDIR), with no network; exec asks for no approval (it has no one to ask: a call needing one is refused).
  Its commands get the core environment only (`shell_environment_policy.inherit = "core"`, no key), a plain
  shell (no login shell, no snapshot of a shell's startup files), no web search, no plugins, no skills, no
  analytics; the repository's AGENTS.md is not read (the standing rules carry the loop's and the project's). The
  Worker's system prompt is Codex's `developer_instructions`, after Codex's own.
- The whole process runs in the product's engine sandbox (`Sandbox.engine`): its network reaches the provider,
  it writes the working copy and its private home, and sees nothing else; Codex's sandbox runs inside it. Each
  configured command-line MCP server (lean-lsp-mcp) is started by the product in its sandbox for Worker-written
  code and reached through the relay (`agents.relay`), its tools approved for use (exec could not ask) and
  required, so that they are offered from the first request.
- The provider: with `[agents.worker] base_url` or a key variable set, Codex is pointed at a model provider of the
  product's (the Responses API at that URL, default OpenAI's, the key read from `api_key_env`, default
  OPENAI_API_KEY); with neither, Codex uses its own login (`codex login`: the product copies its `auth.json` into
  the session's home and back).
- Interruption: SIGINT to Codex ends its turn at once and the thread stays resumable; an interrupted round that
  has not ended after `interrupt_grace_s` is killed. Codex reports usage only when a turn ends: the budgets are
  held between rounds, and a round is bounded by the turn and time limits.
- A failed turn's message says what happened: a usage cap ("You've hit your usage limit … try again at 5:06 AM")
  or a rate limit ("… 429 Too Many Requests", "rate limit exceeded … try again in 1.5s") pauses the loop
  (`Ended.LIMITED`, with the reset time when it names one); "401 Unauthorized" or an exhausted quota is the key's;
  anything else the provider's or the CLI's. Codex reports no cost: its usage is priced from the price table and
  `[prices]`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from datetime import datetime, timedelta
from pathlib import Path
from string import Template
from typing import Any

import structlog
import tomli_w

from agents.coding import Ended, Login, Probe, Quarters, Setup, Turn, Watch, ending, find, logins, probe
from agents.config import WorkerConfig
from agents.lsp import SERVER as LEAN_SERVER
from agents.model import ModelUnavailable
from agents.tools import Tally
from agents.worker import prompt
from gates.process import descendants
from gates.sandbox import elan_home
from state.history import Usage

BACKEND = "codex"
MIN_VERSION = (0, 171, 0)
"""The oldest Codex the product drives: the flags and events here are that release's."""
INSTALL = "npm install -g @openai/codex@0.171.0"
PROVIDER = "autoformalize"
LIMITED = re.compile(r"^(you[’']ve hit your usage limit|rate limit exceeded:)|\bstatus:? 429 too many requests\b|"
                     r"^exceeded retry limit, last status: 429\b", re.IGNORECASE)
"""A failed turn's message as Codex words a usage cap, a rate limit, or a 429 its retries did not outlast (at its
start: a server's own message quoted inside another error does not pause the loop)."""
REJECTED = re.compile(r"\b401 unauthorized\b|^quota exceeded\b|\binsufficient_quota\b|^you hit your spend cap\b",
                      re.IGNORECASE)
"""A failed turn's message as Codex words a refused key, an exhausted quota or a workspace's spend cap (waiting
does not cure them)."""
TOOL_ITEMS = {"command_execution": "shell", "file_change": "apply_patch", "web_search": "web_search"}
DISABLED = ("plugins", "apps", "shell_snapshot", "unbounded_connection_retries", "goals", "multi_agent", "hooks")
POLL_S = 0.05
STDERR_LINES = 30

log = structlog.get_logger()

CODEX_NOTE = """
## Working in Codex

This session runs in Codex: the tools named above are replaced by Codex's own. Edit files with `apply_patch`; run
commands with your shell tool (check a Lean file with `lake env lean <file>`; `trace_state` in a copy under
`.scratch/` prints the goals where it stands).$lake Your commands run in a sandbox:
they may write the working copy only, and have no network. Files outside the Scope may be edited, but a change that
touches one is refused by the gates, so keep to the Scope. $ending To hand a hard sorry to the external prover, add
a line `PROVER: <declaration>` to the report.
"""


class Codex:
    """Codex as the Worker's `Engine` (`agents.coding`); see the module docstring."""

    name = BACKEND

    def __init__(self, setup: Setup, *, program: str | None = None) -> None:
        self.setup = setup
        self.model = setup.model
        self.tools = Tally()
        self.session_id: str | None = None
        self.program = program or executable(setup.config)
        self.quarters = Quarters(setup)
        self.codex_home = self.quarters.home / ".codex"
        self.codex_home.mkdir()
        found = _login_file()
        login = Login.lend(found, self.codex_home / "auth.json") if found and not self._keyed() else None
        lake = setup.sandbox.lake_dir
        note = Template(CODEX_NOTE).substitute(
            ending=ending(setup.workspace.state_dir),
            lake="" if lake == "." else f" Run Lake in `{lake}/`, the Lake project's folder.")
        self.system_prompt = prompt(setup.rules, setup.lean_tools or (), prefix=f"mcp__{LEAN_SERVER}__") + note
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._seen = Usage()  # the thread's usage when the last round ended
        self.rollout = _Rollout(self.codex_home)
        self._process: subprocess.Popen[bytes] | None = None
        self._finalizer = weakref.finalize(self, _close, self.quarters, login)

    def send(self, text: str, budget_usd: float | None, watch: Watch) -> Turn:
        command, env = self.quarters.confined([self.program, *self.arguments()], self.environment())
        try:
            process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, cwd=self.setup.workspace.root, start_new_session=True)
        except OSError as e:
            raise ModelUnavailable(f"the codex CLI could not be started ({e}); {INSTALL}, or set [agents.worker] "
                                   "cli_path — the cycle is recorded as an infrastructure error") from e
        self._process = process
        turn = Turn()
        state = _Reading(self, turn)
        start = self._seen  # the thread's usage before this round
        reader = threading.Thread(target=state.read, args=(process,), name="codex-events", daemon=True)
        errors = threading.Thread(target=self._errors, args=(process,), name="codex-stderr", daemon=True)
        reader.start()
        errors.start()
        try:
            assert process.stdin is not None
            process.stdin.write(text.encode())
            process.stdin.close()
        except OSError:
            pass  # it died at once: what it said is read below
        interrupted_at: float | None = None
        while reader.is_alive() or process.poll() is None:
            if (total := self.rollout.usage(self.session_id)) is not None:  # what it spent so far, call by call
                turn.usage = _minus(total, start)
            if interrupted_at is None and (reason := watch(turn)) is not None:
                turn.interrupted_for = reason
                interrupted_at = time.monotonic()
                _signal(process, signal.SIGINT)
            if interrupted_at is not None and time.monotonic() - interrupted_at > self.setup.interrupt_grace_s:
                _kill(process)
                break
            reader.join(POLL_S)
        status = process.wait()
        reader.join(5)
        errors.join(1)
        self._process = None
        # What the round spent: its end's own count, else (cut off, failed) the session log's last one.
        total = state.total or self.rollout.usage(self.session_id)
        if total is not None:
            turn.usage, self._seen = _minus(total, start), total
        if turn.ended is None and turn.interrupted_for is None:
            raise ModelUnavailable(f"the codex CLI exited with code {status} before its turn ended: "
                                   f"{' | '.join(self.stderr) or '(nothing on stderr)'} — the cycle is recorded as "
                                   "an infrastructure error")
        log.info("codex.round", status=status, calls=turn.calls, thread=self.session_id, ended=str(turn.ended))
        return turn

    def close(self) -> None:
        """End a running round's process and remove the session's private directory (idempotent)."""
        if self._process is not None:
            _kill(self._process)
        self._finalizer()

    def arguments(self) -> list[str]:
        """`codex exec`'s arguments for the next round: every setting, then the thread to resume, then `-` (the
        prompt on stdin)."""
        s, c = self.setup, self.setup.config
        settings: dict[str, Any] = {
            "sandbox_workspace_write.network_access": False,
            "sandbox_workspace_write.exclude_slash_tmp": True,
            "sandbox_workspace_write.exclude_tmpdir_env_var": True,
            "shell_environment_policy.inherit": "core",
            "shell_environment_policy.set.ELAN_HOME": str(elan_home()),
            "allow_login_shell": False, "web_search": "disabled", "analytics.enabled": False,
            "project_doc_max_bytes": 0, "skills.include_instructions": False, "skills.bundled.enabled": False,
            "check_for_update_on_startup": False, "developer_instructions": self.system_prompt}
        if c.effort:
            settings["model_reasoning_effort"] = c.effort
        if self._keyed():
            settings |= {"model_provider": PROVIDER, f"model_providers.{PROVIDER}.name": PROVIDER,
                         f"model_providers.{PROVIDER}.base_url": c.base_url or "https://api.openai.com/v1",
                         f"model_providers.{PROVIDER}.wire_api": "responses"}
            if os.environ.get(self._key_variable()):  # a local server may want none
                settings[f"model_providers.{PROVIDER}.env_key"] = self._key_variable()
        for name, argv in self.quarters.mcp_servers().items():
            settings |= {f"mcp_servers.{name}.command": argv[0], f"mcp_servers.{name}.args": argv[1:],
                         f"mcp_servers.{name}.required": True,
                         f"mcp_servers.{name}.default_tools_approval_mode": "approve"}
        settings |= _flat(c.codex_config)  # `WorkerConfig` refuses the keys that are the product's
        flags = ["--json", "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules",
                 "-C", str(s.workspace.root), "-m", self.model, "-s", "workspace-write",
                 *(a for name in DISABLED for a in ("--disable", name)),
                 *(a for key, value in settings.items() for a in ("-c", f"{key}={_toml(value)}"))]
        return ["exec", *flags, *(["resume", self.session_id] if self.session_id else []), "-"]

    def environment(self) -> dict[str, str]:
        """Codex's environment beside the sandbox's allowlist: its home, and its one key."""
        env = {"CODEX_HOME": str(self.codex_home)}
        if key := os.environ.get(self._key_variable()):
            env[self._key_variable()] = key
        return env

    def _key_variable(self) -> str:
        return self.setup.config.api_key_env or "OPENAI_API_KEY"

    def _keyed(self) -> bool:
        """Whether the session runs on a key (the product's provider) rather than Codex's own login."""
        return bool(os.environ.get(self._key_variable())) or self.setup.config.base_url is not None

    def _errors(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode(errors="replace").strip()
            if line and not line.startswith("Reading additional input from stdin"):
                self.stderr.append(self.setup.workspace.secrets.redact(line)[:500])


class _Reading:
    """One round's events, read into its `Turn`."""

    def __init__(self, engine: Codex, turn: Turn) -> None:
        self.engine = engine
        self.turn = turn
        self.started: dict[str, tuple[str, float]] = {}  # item id → (tool, when)
        self.fresh = True  # no item seen since the round started or tool results went back
        self.total: Usage | None = None  # the thread's usage, as `turn.completed` reported it

    def read(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            try:
                event = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                self.take(event)

    def take(self, event: dict[str, Any]) -> None:
        kind, turn = event.get("type"), self.turn
        if kind == "thread.started":
            self.engine.session_id = str(event.get("thread_id") or "") or self.engine.session_id
        elif kind in ("item.started", "item.completed") and isinstance(event.get("item"), dict):
            self.item(kind, event["item"])
        elif kind == "turn.completed":
            self.total = _usage(event.get("usage") or {})
            turn.ended, turn.awaiting_model = Ended.DONE, False
        elif kind == "turn.failed":
            message = str((event.get("error") or {}).get("message") or "")
            turn.error = self.engine.setup.workspace.secrets.redact(message)
            turn.ended, turn.resets_at, turn.rejected = failure(message, datetime.now().astimezone())
        elif kind == "error":
            log.info("codex.error", message=str(event.get("message"))[:300])

    def item(self, kind: str, item: dict[str, Any]) -> None:
        turn = self.turn
        if turn.awaiting_model or self.fresh:  # a new answer of the model's
            turn.calls += 1
            turn.awaiting_model = self.fresh = False
        name = _tool(item)
        key = str(item.get("id"))
        if name is not None and kind == "item.started":
            self.started[key] = (name, time.monotonic())
            self.engine.tools.add(name, 0.0)
        elif name is not None:
            began = self.started.pop(key, None)
            if began is None:
                self.engine.tools.add(name, 0.0)
            else:
                self.engine.tools.add(name, time.monotonic() - began[1], count=0)
            turn.awaiting_model = True
        elif item.get("type") == "agent_message" and kind == "item.completed":
            turn.text = str(item.get("text") or "")


class _Rollout:
    """The thread's session log, which Codex appends as it goes (`CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl`):
    its `token_count` events carry the thread's usage after each model call, where `--json` reports it only when a
    turn ends (never for one cut off)."""

    def __init__(self, codex_home: Path) -> None:
        self.codex_home = codex_home
        self.path: Path | None = None
        self.offset = 0
        self.total: Usage | None = None

    def usage(self, thread: str | None) -> Usage | None:
        """The thread's usage so far (the log's last count), reading only what was appended since the last call."""
        if self.path is None and thread:
            found = sorted(self.codex_home.glob(f"sessions/**/rollout-*{thread}.jsonl"))
            self.path = found[-1] if found else None
        if self.path is None:
            return self.total
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return self.total
        whole = data[:data.rfind(b"\n") + 1]  # a line still being written is read next time
        self.offset += len(whole)
        for line in whole.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            payload = event.get("payload") if isinstance(event, dict) else None
            info = payload.get("info") if isinstance(payload, dict) and payload.get("type") == "token_count" else None
            if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
                self.total = _usage(info["total_token_usage"])
        return self.total


ENGINE = Codex


def executable(config: WorkerConfig) -> str:
    """The Codex binary to run: `cli_path`, else `codex` on PATH; npm's wrapper script is followed to the native
    binary it launches (signals reach that one, and a killed wrapper would orphan it)."""
    found = Path(config.cli_path) if config.cli_path else find("codex")
    if found is None or not found.exists():
        raise ModelUnavailable(f"the codex CLI was not found {_where(config)}: {_fix(config)} — the cycle is "
                               "recorded as an infrastructure error")
    return str(native(found))


def native(path: Path) -> Path:
    """The native binary behind npm's `codex` wrapper (`@openai/codex/bin/codex.js`), or `path` itself."""
    real = path.resolve()
    if real.suffix != ".js" or real.parent.name != "bin":
        return real
    package = real.parent.parent  # …/node_modules/@openai/codex
    for root in (package / "node_modules" / "@openai", package.parent):
        for candidate in sorted(root.glob("codex-*/vendor/*/bin/codex")):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    return real


def check(config: WorkerConfig) -> Probe:
    """The configured Codex as found here, or why it cannot run a Worker (missing, too old, not answering, no
    credential)."""
    found = Path(config.cli_path) if config.cli_path else find("codex")
    program = native(found) if found is not None and found.exists() else None
    probed = probe("codex", program, MIN_VERSION, _fix(config), _where(config))
    key = config.api_key_env or "OPENAI_API_KEY"
    if probed.problem is None and not os.environ.get(key) and config.base_url is None and _login_file() is None:
        return Probe(probed.program, probed.version, f"codex has no credential: set {key}, or log in once with "
                                                     "`codex login`")
    return probed


def _where(config: WorkerConfig) -> str:
    if config.cli_path:
        return f"at {config.cli_path}"
    return f"on PATH or beside this Python ({Path(sys.executable).parent})"


def _fix(config: WorkerConfig) -> str:
    return f"{INSTALL}, or {'fix' if config.cli_path else 'set'} [agents.worker] cli_path"


def failure(message: str, now: datetime) -> tuple[Ended, datetime | None, bool]:
    """What a failed turn's message says: how it ended, when a limit lifts (when it says), whether the key or
    login was refused."""
    if LIMITED.search(message):
        return Ended.LIMITED, resets_at(message, now), False
    if REJECTED.search(message):
        return Ended.FAILED, None, True
    return Ended.FAILED, None, False


def resets_at(message: str, now: datetime) -> datetime | None:
    """The time a limit's message says it lifts: "try again in 1.5s" (or m, h), "try again at 5:06 AM" (the next
    such local time), "try again at Dec 8th, 2026 5:06 AM"; None when it says none."""
    later = re.search(r"try again in (\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?|h|hours?)\b", message, re.I)
    if later:
        unit = later.group(2).lower()
        seconds = float(later.group(1)) * (0.001 if unit == "ms" else 60 if unit.startswith("m") and unit != "ms"
                                           else 3600 if unit.startswith("h") else 1)
        return now + timedelta(seconds=seconds)
    at = re.search(r"try again at (.+?)\.?\s*$", message, re.I)
    if not at:
        return None
    when = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", at.group(1).strip())
    for form in ("%I:%M %p", "%b %d, %Y %I:%M %p", "%B %d, %Y %I:%M %p", "%b %d %I:%M %p"):
        try:
            parsed = datetime.strptime(when, form)
        except ValueError:
            continue
        if form == "%I:%M %p":
            moment = now.replace(hour=parsed.hour, minute=parsed.minute, second=0, microsecond=0)
            return moment if moment > now else moment + timedelta(days=1)
        year = parsed.year if "%Y" in form else now.year
        return parsed.replace(year=year, tzinfo=now.tzinfo)
    return None


def _tool(item: dict[str, Any]) -> str | None:
    """The tool an item is a call of, as the record names it (a Lean server's tool without its prefix)."""
    kind = str(item.get("type"))
    if kind == "mcp_tool_call":
        return str(item.get("tool")) if item.get("server") == "lean_lsp" else f"mcp__{item.get('server')}__" \
                                                                               f"{item.get('tool')}"
    return TOOL_ITEMS.get(kind)


def _usage(raw: dict[str, Any]) -> Usage:
    """A `turn.completed` usage: input as Codex reports it holds the cached and cache-written tokens."""
    cached = int(raw.get("cached_input_tokens") or 0)
    written = int(raw.get("cache_write_input_tokens") or 0)
    return Usage(input=max(0, int(raw.get("input_tokens") or 0) - cached - written), output=int(
        raw.get("output_tokens") or 0), cache_read=cached, cache_write=written)


def _minus(a: Usage, b: Usage) -> Usage:
    return Usage(input=max(0, a.input - b.input), output=max(0, a.output - b.output),
                 cache_read=max(0, a.cache_read - b.cache_read), cache_write=max(0, a.cache_write - b.cache_write))


def _flat(settings: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Settings whose values are tables as one dotted key a value (`-c` takes a value, not a table)."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            out |= _flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def _toml(value: Any) -> str:
    """A value as `-c key=value` takes it: TOML."""
    return tomli_w.dumps({"v": value}).partition("=")[2].strip()


def _login_file() -> Path | None:
    """Codex's own login (`codex login`), when there is one."""
    return logins().get(BACKEND)


def _signal(process: subprocess.Popen[bytes], sig: int) -> None:
    """`sig` to Codex: every process below `process` (inside the engine's sandbox, its init ignores it), and
    `process` itself when it is Codex (no sandbox)."""
    for pid in [*descendants(process.pid), process.pid]:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            continue


def _kill(process: subprocess.Popen[bytes]) -> None:
    """The process and everything below it, at once (the engine's sandbox dies with its parent)."""
    if process.poll() is None:
        for pid in [process.pid, *descendants(process.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        log.warning("codex.unkillable", pid=process.pid)


def _close(quarters: Quarters, login: Login | None) -> None:
    """The session's login handed back (Codex refreshes it), then its private directory removed."""
    if login is not None:
        login.give_back()
    quarters.close()
