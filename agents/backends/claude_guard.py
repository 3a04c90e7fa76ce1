"""What a claude-code Worker may touch: one decision for every tool call, taken before Claude Code runs it.

What the real CLI (Claude Code 2.1.x, driven by claude-agent-sdk against a
scripted API) does, and why the guard is a hook:

- a rule of `--allowedTools` (`Read`, `Bash(lake build:*)`) approves a call
  before the `can_use_tool` callback is asked: an auto-approved Read reads
  `~/.ssh` or a symlink out of the working copy, an auto-approved Bash runs
  with the CLI's whole environment, API key included;
- without a rule, reads inside the working directory (symlinks resolved) and
  read-only shell commands there run without asking; the rest is asked;
- a PreToolUse hook is called for every tool call, approved by a rule or not;
  its "deny" stops the call, its "allow" with `updatedInput` runs the
  rewritten input without consulting the rules; a hook that raises or returns
  nothing usable counts as no decision unless its matcher says
  `on_failure="block"`, and one too slow blocks.

So one PreToolUse hook on every tool, `on_failure="block"` (the SDK refuses to
connect to a CLI that cannot honour it), takes the decision:

- Read, Glob, Grep, LS, NotebookRead: every path they name, symlinks
  resolved, lies in the working copy or in the dependencies it shares: the
  main checkout's `.lake/packages` as the sandbox was given it, never where
  the working copy's link points now (code run in the sandbox can re-point
  it: its `.lake` is writable); `/proc`, the home directory, the user's
  checkout are refused. A Read of a file holding a known secret's value is
  refused;
- Write, Edit, MultiEdit, NotebookEdit: where `Workspace.resolve(write=True)`
  allows (the Scope, not protected, in the working copy), and never a known
  secret's value in what they write;
- Bash: only the commands the rules name (every part of a compound command,
  no command substitution), in the foreground only, rewritten to `run`'s
  command: the relay's client (`agents.relay`), so that the product runs it
  in the sandbox for Worker-written code (`Sandbox.wrap`) with the
  allowlisted environment, outside the engine's own sandbox. The rules say
  what the Worker means to run; the sandbox is the boundary (`lake env lean
  --run X.lean` runs X, a redirection writes a file: inside it);
- TodoWrite: allowed; the MCP servers' tools: left to the rules that approve
  them (the prover's are the Workspace's own, confined there; a command-line
  server is started by the product in the sandbox with `.lake` read-only, as
  it lives while the gates compile, and reached through the relay), except
  the Lean server's (`mcp__lean_lsp__…`, with
  `lean_tools = "lean-lsp-mcp"`): only those `lean_lsp_tools` names;
- any other tool: refused.

The hooks also count the calls they let through, by tool name, with the time
from PreToolUse to PostToolUse: the record's `tool_calls`.

And one PostToolUse hook on every tool, after the call ran: a Bash command's
`.lake/packages` link is restored, and the result's strings have every known
secret's value replaced by `[redacted: NAME]` through `updatedToolOutput`
(Claude Code 2.1 replaces a built-in tool's result with it when the shape is
the tool's own, which redacting strings keeps). A PostToolUse hook cannot
withhold a result: one that fails only adds a note, so this one never raises,
and with a CLI that ignores `updatedToolOutput` results arrive unredacted —
which is why the Read of a secret-holding file is refused before it runs.
Background commands are refused and switched off
(`CLAUDE_CODE_DISABLE_BACKGROUND_TASKS`): one still running would write build
outputs while the gates compile.

No rule auto-approves a built-in tool any more, so what the CLI still asks of
`can_use_tool` gets the same decision: a read outside the working copy is
refused twice.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from claude_agent_sdk import (
    CanUseTool,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from agents.lsp import SERVER as LEAN_SERVER
from agents.tools import Refused, Tally, Workspace
from gates.credentials import Secrets
from gates.sandbox import Sandbox

READ_TOOLS = {"Read": ("file_path",), "NotebookRead": ("notebook_path",), "Glob": ("path",), "Grep": ("path",),
              "LS": ("path",)}
"""The reading tools, with the input fields naming a path."""
WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
"""The file-writing tools, with the input field naming the file."""
HARMLESS = {"TodoWrite"}
LEAN_PREFIX = f"mcp__{LEAN_SERVER}__"
_SEPARATORS = re.compile(r"&&|\|\||;|\||&|\n")
_SUBSTITUTION = re.compile(r"`|\$\(|<\(|>\(")
MAX_SCANNED = 16 * 1024 * 1024
"""The bytes of a file a Read is about to read that are searched for a secret's value."""

log = structlog.get_logger()


@dataclass(frozen=True)
class Verdict:
    allow: bool | None  # None: no decision here (an MCP tool: its rule approves it)
    reason: str = ""
    updated: dict[str, Any] | None = None  # the input to run instead (a Bash command, sandboxed)


@dataclass(frozen=True)
class Guard:
    workspace: Workspace
    sandbox: Sandbox
    rules: tuple[str, ...]  # the allowed tools, in Claude Code's permission-rule syntax
    run: Callable[[str], list[str]]  # the command that runs an allowed one confined (the relay's client)
    lean_tools: frozenset[str] | None = None  # the Lean server's tools allowed, when the session has that server
    tally: Tally = field(default_factory=Tally)  # the calls the hooks saw, by name (the Lean server's unprefixed)
    started: dict[str, tuple[str, float]] = field(default_factory=dict)  # tool_use_id → (name, when)

    def decide(self, name: str, tool_input: dict[str, Any]) -> Verdict:
        """The decision on one call; never raises (a failing hook would count as a block, but say nothing)."""
        try:
            verdict = self._decide(name, tool_input)
        except Exception as e:  # whatever went wrong, the call does not run
            verdict = Verdict(False, f"refused: the call could not be checked ({type(e).__name__}: {e})")
        if verdict.allow is False:
            log.info("claude_code.denied", tool=name, reason=verdict.reason[:300])
        return verdict

    def _decide(self, name: str, tool_input: dict[str, Any]) -> Verdict:
        lean = name.removeprefix(LEAN_PREFIX)
        if self.lean_tools is not None and lean != name and lean not in self.lean_tools:
            return Verdict(False, f"refused: {lean} is not among the Lean server's tools allowed here "
                                  f"({', '.join(sorted(self.lean_tools))}; see [agents.worker] lean_lsp_tools)")
        if name.startswith("mcp__"):
            return Verdict(None)
        if name not in {*_tools(self.rules), *HARMLESS}:
            return Verdict(False, f"refused: {name} is not allowed here; the tools are {', '.join(self.rules)}")
        if name in READ_TOOLS:
            return self._read(name, tool_input)
        if name in WRITE_TOOLS:
            return self._write(name, tool_input)
        if name == "Bash":
            return self._bash(tool_input)
        if name in HARMLESS:
            return Verdict(True)
        return Verdict(False, f"refused: {name} cannot be confined to the working copy, so it is not allowed")

    def _read(self, name: str, tool_input: dict[str, Any]) -> Verdict:
        paths = [tool_input[f] for f in READ_TOOLS[name] if tool_input.get(f)]
        pattern = tool_input.get("pattern") if name == "Glob" else None
        if isinstance(pattern, str) and (pattern.startswith(("/", "~")) or ".." in Path(pattern).parts):
            paths.append(_static_prefix(pattern))
        for path in paths:
            if not isinstance(path, str) or not self._readable(path):
                return Verdict(False, f"refused: {path} is outside the working copy; reads are confined to it "
                                      "and to its dependencies under .lake/packages")
        leaked = self._secrets_in(paths[0]) if name in ("Read", "NotebookRead") and paths else []
        if leaked:
            return Verdict(False, f"refused: {paths[0]} holds the value of {', '.join('$' + n for n in leaked)}, a "
                                  "credential; it is not read")
        return Verdict(True)

    def _readable(self, path: str) -> bool:
        """Within the working copy or the shared dependencies: the main checkout's `.lake/packages` as the
        sandbox knows it, never where the working copy's link points now (code in the sandbox can re-point it)."""
        root = self.workspace.root
        real = (root / Path(path).expanduser()).resolve()
        roots = [root, root.resolve(), *([self.sandbox.packages.resolve()] if self.sandbox.packages else [])]
        return any(real == r or r in real.parents for r in roots)

    def _secrets_in(self, path: str) -> list[str]:
        """The secrets whose values a file to be read holds (its first `MAX_SCANNED` bytes)."""
        real = (self.workspace.root / Path(path).expanduser()).resolve()
        if not self.workspace.secrets.values or not real.is_file():
            return []
        with real.open("rb") as f:
            return self.workspace.secrets.found(f.read(MAX_SCANNED).decode("utf-8", errors="replace"))

    def _write(self, name: str, tool_input: dict[str, Any]) -> Verdict:
        path = tool_input.get(WRITE_TOOLS[name])
        if not isinstance(path, str):
            return Verdict(False, f"refused: give {name} the file's path")
        try:
            self.workspace.resolve(relative(self.workspace.root, path), write=True)
        except Refused as e:
            return Verdict(False, f"refused: {e}")
        leaked = self.workspace.secrets.found("\n".join(_strings(tool_input)))
        if leaked:
            return Verdict(False, f"refused: what {name} would write holds the value of "
                                  f"{', '.join('$' + n for n in leaked)}, a credential; leave it out")
        return Verdict(True)

    def _bash(self, tool_input: dict[str, Any]) -> Verdict:
        command = tool_input.get("command")
        bash = [r for r in self.rules if r.partition("(")[0] == "Bash"]
        if not isinstance(command, str) or not command.strip() or not _permitted(command, bash):
            return Verdict(False, f"refused: this session may only run these commands: {', '.join(bash) or 'none'}"
                                  " (each part of a compound command; no `...`, $(...), <(...) or >(...))")
        if tool_input.get("run_in_background"):
            return Verdict(False, "refused: commands run in the foreground only (the gates must never compile "
                                  "while one of yours still runs); run it again without run_in_background")
        return Verdict(True, updated={**tool_input, "command": shlex.join(self.run(command))})

    def permits(self, command: str) -> bool:
        """Whether the rules let `command` run (the relay asks again before it runs one)."""
        return _permitted(command, [r for r in self.rules if r.partition("(")[0] == "Bash"])

    # -- the two ways the CLI asks ----------------------------------------------------------------

    def hook(self) -> HookMatcher:
        """The PreToolUse hook on every tool; a failure blocks the call."""

        async def pre_tool_use(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
            if data["hook_event_name"] != "PreToolUse":
                return {}
            verdict = self.decide(data["tool_name"], dict(data["tool_input"]))
            if verdict.allow is not False:
                self.tally.add(data["tool_name"].removeprefix(LEAN_PREFIX), 0.0)
                if tool_use_id:
                    self.started[tool_use_id] = (data["tool_name"].removeprefix(LEAN_PREFIX), time.monotonic())
            if verdict.allow is None:
                return {}
            out: dict[str, Any] = {"hookEventName": "PreToolUse",
                                   "permissionDecision": "allow" if verdict.allow else "deny",
                                   "permissionDecisionReason": verdict.reason or "within the working copy"}
            if verdict.updated is not None:
                out["updatedInput"] = verdict.updated
            return {"hookSpecificOutput": out}  # type: ignore[typeddict-item]

        return HookMatcher(matcher=None, hooks=[pre_tool_use], on_failure="block")

    def post_hook(self) -> HookMatcher:
        """The PostToolUse hook on every tool: after a Bash command, the dependencies' link is restored; every
        result's strings have the secrets' values redacted (`updatedToolOutput`, same shape, so the CLI takes it).
        A PostToolUse hook cannot withhold a result (failing, it only adds a note), so this one never raises."""

        async def post_tool_use(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
            if data["hook_event_name"] != "PostToolUse":
                return {}
            began = self.started.pop(tool_use_id, None) if tool_use_id else None
            if began is not None:
                self.tally.add(began[0], time.monotonic() - began[1], count=0)
            if data["tool_name"] == "Bash":
                try:
                    self.sandbox.relink(self.workspace.root)
                except OSError as e:
                    log.error("claude_code.relink_failed", error=str(e)[:300])
            response = data["tool_response"]
            redacted = _redacted(response, self.workspace.secrets)
            if redacted == response:
                return {}
            log.info("claude_code.redacted", tool=data["tool_name"])
            return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": redacted}}

        return HookMatcher(matcher=None, hooks=[post_tool_use], on_failure="block")

    def can_use_tool(self) -> CanUseTool:
        """The permission callback: the same decision, for whatever the CLI still asks."""

        async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext
                               ) -> PermissionResult:
            verdict = self.decide(name, tool_input)
            if verdict.allow:
                return PermissionResultAllow(updated_input=verdict.updated)
            return PermissionResultDeny(message=verdict.reason or f"refused: {name} is not allowed here")

        return can_use_tool


def relative(root: Path, path: str) -> str:
    """`path` relative to `root` when it lies under it (Claude Code passes absolute paths), else unchanged, so
    `Workspace.resolve` checks the Scope on the repository-relative name and refuses what lies outside."""
    p = Path(path)
    if not p.is_absolute():
        return path
    for candidate in (p, p.parent.resolve() / p.name):  # the root may be spelled through a symlink
        try:
            return candidate.relative_to(root).as_posix()
        except ValueError:
            continue
    return path


def _tools(rules: Iterable[str]) -> set[str]:
    return {rule.partition("(")[0] for rule in rules}


def _permitted(command: str, rules: list[str]) -> bool:
    """Whether every part of `command` matches a Bash rule (`Bash`, `Bash(*)`, `Bash(prefix:*)`, `Bash(glob *)`,
    `Bash(exact)`), as Claude Code matches them, and no part substitutes another command's output (which would
    run a command no rule names). The rules say what the Worker means to run; the sandbox, not they, bounds what
    it can do: `lake env lean --run X.lean` runs X's `main`, a redirection writes a file, both inside it."""
    if _SUBSTITUTION.search(command):
        return any(_matches(rule, command) and rule in ("Bash", "Bash(*)") for rule in rules)
    parts = [p.strip() for p in _SEPARATORS.split(command) if p.strip()]
    return bool(parts) and all(any(_matches(rule, part) for rule in rules) for part in parts)


def _redacted(value: Any, secrets: Secrets) -> Any:
    """`value` (a tool's result: strings, lists, dicts) with the secrets' values redacted in every string."""
    if isinstance(value, str):
        return secrets.redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, secrets) for v in value]
    return value


def _matches(rule: str, command: str) -> bool:
    _, paren, spec = rule.partition("(")
    spec = spec[:-1] if paren and spec.endswith(")") else spec
    if not paren or spec in ("", "*"):
        return True
    if spec.endswith(":*"):
        return command == spec[:-2] or command.startswith(spec[:-2] + " ")
    if "*" in spec:
        return fnmatch.fnmatchcase(command, spec)
    return command == spec


def _static_prefix(pattern: str) -> str:
    """The directory a glob pattern starts from: its parts before the first wildcard."""
    parts = []
    for part in Path(pattern).parts:
        if any(c in part for c in "*?[{"):
            break
        parts.append(part)
    return str(Path(*parts)) if parts else "."


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
