#!/usr/bin/env python3
"""A stand-in for the `claude` CLI (Claude Code) as the claude-agent-sdk drives it, scripted.

It speaks the subset of the stream-json protocol the SDK uses, with logic of its
own (it shares no code with autoformalize or the SDK):

- the command line the SDK builds (`--output-format stream-json --verbose
  --input-format stream-json`, `--model`, `--system-prompt` /
  `--append-system-prompt`, `--tools`, `--allowedTools`, `--disallowedTools`,
  `--max-turns`, `--permission-mode`, `--permission-prompt-tool`,
  `--mcp-config`, `--strict-mcp-config`, `--setting-sources=`, …); an option
  it does not know is refused as the real CLI refuses it (exit 1);
- on stdin, one JSON object a line: `control_request`s from the SDK
  (`initialize`, `interrupt`; others are acknowledged), `control_response`s to
  its own requests, and `user` messages; on stdout, one JSON object a line:
  per user message a `system`/`init`, `assistant` messages (one content block
  each), `user` messages carrying tool results, then a `result` whose
  `total_cost_usd` is the running total of the process (as the real CLI
  reports it in streaming-input sessions) and whose `usage` is the turn's;
- a tool call as Claude Code 2.1 handles it, in this order: Read refuses a
  path under /proc or /dev by itself; then the PreToolUse hooks the SDK
  registered in its `initialize` request (each matcher: `null`, `*`, a tool
  name or `A|B`), each asked with a `hook_callback` control request: "deny"
  ends the call with `PreToolUse:<Tool> hook error: <reason>`, "allow" runs it
  (with its `updatedInput`) without asking anything else; a callback that
  fails counts as no decision (a `system`/`informational` message says so)
  unless its matcher's `onFailure` is "block", and one that does not answer
  within its `timeout` (default 60 s) blocks. Then the permissions: a
  `--disallowedTools` rule denies, `bypassPermissions` allows, an
  `--allowedTools` rule allows (`Tool`, `Bash(prefix:*)`, `Bash(glob *)`,
  `Bash(exact)`; every part of a compound command must match), reads inside
  the working directory (symlinks resolved) and read-only shell commands
  (`cat`, `ls`, `head`, `tail`, `wc`, `grep`, `pwd`) whose paths are all
  inside it are allowed, `acceptEdits` allows edits inside the working directory,
  `dontAsk` denies, and anything else is asked of the SDK with a
  `can_use_tool` control request when it passed `--permission-prompt-tool
  stdio` (else denied). A denial becomes the tool's error result. An MCP tool
  is `mcp__<server>__<tool>`; the rules `mcp__<server>`, `mcp__<server>__*`
  and `mcp__<server>__<tool>` allow it, and `--tools` does not limit it;
- SDK MCP servers (`{"type": "sdk", ...}` entries of `--mcp-config`), which
  live in the SDK's process: before the first turn, each is connected once
  through `mcp_message` control requests carrying JSON-RPC (`initialize`, the
  `notifications/initialized` notification, `tools/list`), and its tools join
  the `init` message's `tools` (a server whose handshake failed is `failed`
  and has none). A call of one of its tools is the assistant's `tool_use`, the
  permission decision, then a `tools/call` request; the answer becomes the
  tool result (its `isError`, or a JSON-RPC error, an error result). A tool no
  server listed is refused as "No such tool available", as the real CLI
  refuses it. Other MCP servers are only reported as connected.

The script is the JSON file named by $CLAUDE_STANDIN_SCRIPT:

    {"startup": {"exit_code": 1, "stderr": "..."},   # optional: fail before reading stdin
     "session_id": "...",                            # optional (default: a fresh uuid)
     "turns": [                                      # one per user message, in order
       {"actions": [ACTION, ...],                    # each a model call of the turn
        "usage": {"input_tokens": 10, ...},          # this turn's usage
        "total_cost_usd": 0.25,                      # this turn's cost
        "subtype": "success", "is_error": false}]}   # optional overrides of the result

    ACTION: {"text": "..."}                          assistant text
            {"write": PATH, "content": "..."}        the Write tool
            {"edit": PATH, "old": "...", "new": "..."}   the Edit tool
            {"bash": "command"}                      the Bash tool (run by /bin/sh in the cwd)
            {"read": PATH}                           the Read tool (numbered lines, as Claude Code shows them)
            {"glob": PATTERN, "path": DIR}           the Glob tool (`path` optional)
            {"grep": PATTERN, "path": PATH}          the Grep tool, files with matches (`path` optional)
            {"mcp": SERVER, "tool": NAME, "args": {...}}   the tool `mcp__SERVER__NAME` of an SDK MCP server
            {"commit": "message"}                    Bash `git commit -qam <message>`
            {"wait": SECONDS}                        think that long; an interrupt ends the turn
            {"hang": true}                           stop answering anything (exit at stdin EOF)
            {"crash": EXIT_CODE, "stderr": "..."}    die mid-turn

With `--max-turns N`, a turn that would make more than N model calls ends with
`error_max_turns`; with `--max-budget-usd X`, a turn that takes the running
total over X ends with `error_max_budget_usd`. Every event (start with argv, parsed options and the
relevant environment; each user message, permission decision, tool result,
control request; exit) is appended as a JSON line to $CLAUDE_STANDIN_LOG when
that is set.
"""

from __future__ import annotations

import fnmatch
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, NoReturn

VERSION = "2.1.330"
VALUED = {"--output-format", "--input-format", "--system-prompt", "--system-prompt-file", "--append-system-prompt",
          "--tools", "--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools", "--max-turns",
          "--max-budget-usd", "--model", "--fallback-model", "--permission-mode", "--permission-prompt-tool",
          "--mcp-config", "--settings", "--add-dir", "--max-thinking-tokens", "--effort", "--json-schema",
          "--setting-sources", "--resume", "--session-id", "--betas", "--plugin-dir"}
FLAGS = {"--verbose", "--strict-mcp-config", "--include-partial-messages", "--continue", "--fork-session",
         "--include-hook-events", "--session-mirror"}
LISTS = {"--tools", "--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools",
         "--setting-sources", "--betas"}
EDIT_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
READ_TOOLS = {"Read": "file_path", "Glob": "path", "Grep": "path"}
READ_ONLY_COMMANDS = {"cat", "ls", "head", "tail", "wc", "grep", "pwd"}
HOOK_TIMEOUT_S = 60.0
ENV_SHOWN = ("CLAUDE_CODE_ENTRYPOINT", "CLAUDE_AGENT_SDK_VERSION", "DISABLE_AUTOUPDATER",
             "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "PWD")


class Interrupted(Exception):
    """The SDK asked to stop the turn."""


def log(event: str, **fields: Any) -> None:
    path = os.environ.get("CLAUDE_STANDIN_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"event": event, "pid": os.getpid(), **fields}) + "\n")


def parse_args(argv: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in VALUED:
            if not eq:
                if i + 1 >= len(argv):
                    die(1, f"error: option '{name} <value>' argument missing")
                i += 1
                value = argv[i]
            key = name.lstrip("-").replace("-", "_").replace("allowed_tools", "allowedTools")
            if name in LISTS:
                options[key] = split_list(value)
            elif name == "--add-dir":
                options.setdefault(key, []).append(value)
            else:
                options[key] = value
        elif arg in FLAGS:
            options[arg.lstrip("-").replace("-", "_")] = True
        else:
            die(1, f"error: unknown option '{arg}'")
        i += 1
    if "mcp_config" in options:
        options["mcp_config"] = json.loads(options["mcp_config"])
    return options


def split_list(value: str) -> list[str]:
    """A comma- or space-separated list, as the CLI splits it: not inside parentheses (`Bash(lake build:*)`)."""
    items, current, depth = [], "", 0
    for char in value:
        depth += (char == "(") - (char == ")")
        if depth == 0 and (char == "," or char.isspace()):
            items.append(current)
            current = ""
        else:
            current += char
    return [item for item in [*items, current] if item]


def die(code: int, stderr: str = "") -> NoReturn:
    if stderr:
        sys.stderr.write(stderr.rstrip("\n") + "\n")
        sys.stderr.flush()
    log("exit", code=code)
    os._exit(code)


class Cli:
    def __init__(self, options: dict[str, Any], script: dict[str, Any]) -> None:
        self.options = options
        self.turns: list[dict[str, Any]] = list(script.get("turns", []))
        self.session_id = options.get("resume") or script.get("session_id") or str(uuid.uuid4())
        self.model = options.get("model") or "claude-standin"
        self.cwd = Path.cwd()
        self.out_lock = threading.Lock()
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.pending: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self.interrupt = threading.Event()
        self.hung = False
        self.total_cost = 0.0
        self.calls = 0
        self.turn_index = 0
        self.mcp_tools: dict[str, list[str]] | None = None  # per SDK server, the tools it listed (once connected)
        self.rpc_id = 0
        self.hooks: dict[str, list[dict[str, Any]]] = {}  # the SDK's hook matchers, per event

    # -- i/o -------------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        if self.hung:
            return
        with self.out_lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def read_stdin(self) -> None:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            if self.hung:
                continue
            message = json.loads(line)
            kind = message.get("type")
            if kind == "control_request":
                self.control(message)
            elif kind == "control_response":
                response = message["response"]
                waiter = self.pending.pop(response.get("request_id"), None)
                if waiter is not None:
                    waiter[1].append(response)
                    waiter[0].set()
            elif kind == "user":
                self.inbox.put(message)
        if self.hung:
            die(0)
        self.inbox.put(None)

    def control(self, message: dict[str, Any]) -> None:
        request = message["request"]
        subtype = request.get("subtype")
        log("control", subtype=subtype, request=request)
        response: dict[str, Any] = {}
        if subtype == "initialize":
            self.hooks = request.get("hooks") or {}
            response = {"commands": [], "output_style": "default", "available_output_styles": ["default"],
                        "models": [], "account": {}, "pid": os.getpid(), "hooks_applied": True,
                        "hook_on_failure_supported": True}
        elif subtype == "interrupt":
            self.interrupt.set()
        self.send({"type": "control_response",
                   "response": {"subtype": "success", "request_id": message["request_id"], "response": response}})

    def ask(self, request: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """The SDK's answer; `{"subtype": "timeout"}` when it did not come within `timeout_s`."""
        request_id = f"standin-{uuid.uuid4().hex[:12]}"
        done = threading.Event()
        box: list[dict[str, Any]] = []
        self.pending[request_id] = (done, box)
        self.send({"type": "control_request", "request_id": request_id, "request": request})
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not done.wait(0.02):
            if self.interrupt.is_set():
                raise Interrupted
            if deadline is not None and time.monotonic() > deadline:
                self.pending.pop(request_id, None)
                return {"subtype": "timeout"}
        return box[0]

    # -- a turn ----------------------------------------------------------------------------

    def run(self) -> None:
        threading.Thread(target=self.read_stdin, daemon=True).start()
        while True:
            message = self.inbox.get()
            if message is None:
                die(0)
            self.turn(message)

    def turn(self, message: dict[str, Any]) -> None:
        content = message["message"]["content"]
        log("user", session_id=self.session_id, text=content, turn=self.turn_index)
        self.interrupt.clear()
        reads_state = os.environ.get("CLAUDE_CODE_SDK_READS_SESSION_STATE") == "1"
        if reads_state:
            self.send({"type": "system", "subtype": "session_state_changed", "state": "running",
                       "sdk_host_only": True, "session_id": self.session_id, "uuid": str(uuid.uuid4())})
        if self.mcp_tools is None:
            self.mcp_tools = {name: self.mcp_connect(name) for name in self.sdk_servers()}
        self.send(self.init_message())
        if self.turn_index >= len(self.turns):
            self.finish({}, 0, "", subtype="error_during_execution", is_error=True,
                        errors=[f"standin: the script has no turn {self.turn_index + 1}"])
            return
        script = self.turns[self.turn_index]
        self.turn_index += 1
        started, calls, last_text = time.monotonic(), 0, ""
        denials: list[dict[str, Any]] = []
        max_turns = int(self.options.get("max_turns") or 0)
        try:
            for action in script.get("actions", []):
                if self.interrupt.is_set():
                    raise Interrupted
                if "crash" in action:
                    die(int(action["crash"]), action.get("stderr", ""))
                if action.get("hang"):
                    self.hung = True
                    while True:
                        time.sleep(3600)
                if "wait" in action:
                    if self.interrupt.wait(float(action["wait"])):
                        raise Interrupted
                    continue
                if max_turns and calls >= max_turns:
                    self.finish(script, calls, "", subtype="error_max_turns", is_error=True,
                                errors=[f"Reached maximum number of turns ({max_turns})"], reason="max_turns",
                                denials=denials, started=started)
                    return
                calls += 1
                if "text" in action:
                    last_text = action["text"]
                    self.assistant({"type": "text", "text": last_text})
                else:
                    denial = self.tool(action)
                    if denial is not None:
                        denials.append(denial)
        except Interrupted:
            self.finish(script, calls, "", subtype="error_during_execution", is_error=True,
                        errors=["Request interrupted by user"], reason="aborted_streaming", denials=denials,
                        started=started)
            return
        self.finish(script, calls, last_text, subtype=script.get("subtype", "success"),
                    is_error=bool(script.get("is_error", False)), denials=denials, started=started)

    def init_message(self) -> dict[str, Any]:
        servers = self.options.get("mcp_config", {}).get("mcpServers", {})
        listed = self.mcp_tools or {}
        status = {n: "connected" if listed.get(n, []) is not None else "failed" for n in servers}
        mcp_tools = [f"mcp__{n}__{t}" for n, tools in listed.items() for t in tools or []]
        return {"type": "system", "subtype": "init", "cwd": str(self.cwd), "session_id": self.session_id,
                "tools": [*self.options.get("tools", []), *mcp_tools],
                "mcp_servers": [{"name": n, "status": status[n]} for n in servers],
                "model": self.model, "permissionMode": self.options.get("permission_mode", "default"),
                "slash_commands": [], "apiKeySource": "none", "claude_code_version": VERSION,
                "output_style": "default", "agents": [], "skills": [], "plugins": [], "uuid": str(uuid.uuid4())}

    def assistant(self, block: dict[str, Any]) -> None:
        self.calls += 1
        self.send({"type": "assistant", "message": {
            "id": f"msg_standin_{self.calls}", "type": "message", "role": "assistant", "model": self.model,
            "content": [block], "stop_reason": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}, "parent_tool_use_id": None,
            "session_id": self.session_id, "uuid": str(uuid.uuid4())})

    def finish(self, script: dict[str, Any], calls: int, text: str, *, subtype: str, is_error: bool,
               errors: list[str] | None = None, reason: str = "completed", denials: list[Any] | None = None,
               started: float | None = None) -> None:
        usage = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0, **script.get("usage", {})}
        self.total_cost += float(script.get("total_cost_usd", 0.0))
        budget = self.options.get("max_budget_usd")
        if budget is not None and self.total_cost > float(budget) and subtype == "success":
            subtype, is_error, reason = "error_max_budget_usd", True, "max_budget_usd"
            errors = [f"Reached maximum budget (${float(budget)})"]
        elapsed = int((time.monotonic() - (started or time.monotonic())) * 1000)
        result: dict[str, Any] = {
            "type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": elapsed,
            "duration_api_ms": elapsed, "num_turns": calls, "stop_reason": "end_turn" if text else None,
            "session_id": self.session_id, "total_cost_usd": round(self.total_cost, 10), "usage": usage,
            "modelUsage": {self.model: {"inputTokens": usage["input_tokens"],
                                        "outputTokens": usage["output_tokens"], "costUSD": self.total_cost}},
            "permission_denials": denials or [], "terminal_reason": reason, "uuid": str(uuid.uuid4())}
        if subtype == "success":
            result["result"] = text
        if errors:
            result["errors"] = errors
        self.send(result)
        if os.environ.get("CLAUDE_CODE_SDK_READS_SESSION_STATE") == "1":
            self.send({"type": "system", "subtype": "session_state_changed", "state": "idle",
                       "sdk_host_only": True, "session_id": self.session_id, "uuid": str(uuid.uuid4())})

    # -- tools -----------------------------------------------------------------------------

    def tool(self, action: dict[str, Any]) -> dict[str, Any] | None:
        """Call one tool as the model would; the denial (for the result's permission_denials), if any."""
        name, tool_input = self.tool_call(action)
        tool_id = f"toolu_standin_{uuid.uuid4().hex[:12]}"
        self.assistant({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        content: str | list[dict[str, Any]]
        allowed, message = True, ""
        if name.startswith("mcp__") and not self.mcp_listed(name):
            content, is_error = f"<tool_use_error>Error: No such tool available: {name}</tool_use_error>", True
        elif name == "Read" and re.match(r"^/(proc|dev)(/|$)", str(tool_input.get("file_path", ""))):
            content, is_error = (f"<tool_use_error>Cannot read '{tool_input['file_path']}': this path names a device "
                                 "or process file that this tool does not read.</tool_use_error>"), True
        elif (hook := self.pre_tool_use(name, tool_input, tool_id))[1] is not None:  # a hook blocked it
            allowed, content, is_error = False, hook[1] or "", True
        else:
            if hook[0] is not None:  # a hook allowed it, with this input
                allowed, tool_input, message = True, hook[0], ""
                log("permission", tool=name, input=tool_input, allowed=True, message="", asked=False, hook=True)
            else:
                allowed, tool_input, message = self.permission(name, tool_input, tool_id)
            if not allowed:
                content, is_error = message, True
            elif name.startswith("mcp__"):
                content, is_error = self.mcp_call(name, tool_input)
            else:
                content, is_error = self.execute(name, tool_input)
        log("tool_result", tool=name, input=tool_input, content=content, is_error=is_error)
        self.send({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}]},
            "parent_tool_use_id": None, "session_id": self.session_id, "uuid": str(uuid.uuid4()),
            "tool_use_result": content if is_error else {"ok": True}})
        return None if allowed else {"tool_name": name, "tool_use_id": tool_id, "tool_input": tool_input}

    def tool_call(self, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if "write" in action:
            return "Write", {"file_path": self.absolute(action["write"]), "content": action.get("content", "")}
        if "edit" in action:
            return "Edit", {"file_path": self.absolute(action["edit"]), "old_string": action["old"],
                            "new_string": action["new"], "replace_all": False}
        if "bash" in action:
            return "Bash", {"command": action["bash"], "description": "run a command"}
        if "commit" in action:
            return "Bash", {"command": f"git commit -qam {shlex.quote(action['commit'])}",
                            "description": "commit the work"}
        if "mcp" in action:
            return f"mcp__{action['mcp']}__{action['tool']}", dict(action.get("args", {}))
        if "read" in action:
            return "Read", {"file_path": self.absolute(action["read"])}
        if "glob" in action:
            return "Glob", {"pattern": action["glob"], **({"path": action["path"]} if "path" in action else {})}
        if "grep" in action:
            return "Grep", {"pattern": action["grep"], **({"path": action["path"]} if "path" in action else {})}
        raise SystemExit(f"standin: unknown action {action}")

    def absolute(self, path: str) -> str:
        return str(Path(path) if Path(path).is_absolute() else self.cwd / path)

    def permission(self, name: str, tool_input: dict[str, Any], tool_id: str) -> tuple[bool, dict[str, Any], str]:
        """(allowed, the input to run, the denial message)."""
        mode = self.options.get("permission_mode", "default")
        asked, decision = False, None
        if any(self.rule_matches(r, name, tool_input) for r in self.options.get("disallowedTools", [])):
            decision = (False, f"Permission to use {name} has been denied.")
        elif (mode == "bypassPermissions" or self.allowed_by_rules(name, tool_input) or self.harmless(name, tool_input)
              or (mode == "acceptEdits" and name in EDIT_TOOLS and self.inside_cwd(tool_input.get("file_path", "")))):
            decision = (True, "")
        elif mode == "dontAsk":
            decision = (False, f"Permission to use {name} has been denied because Claude Code is running in "
                               "don't ask mode.")
        elif self.options.get("permission_prompt_tool") == "stdio":
            asked = True
            response = self.ask({"subtype": "can_use_tool", "tool_name": name, "input": tool_input,
                                 "permission_suggestions": [], "tool_use_id": tool_id,
                                 "blocked_path": tool_input.get("file_path")})
            if response.get("subtype") == "error":
                decision = (False, f"Tool permission request failed: {response.get('error')}")
            else:
                body = response.get("response", {})
                if body.get("behavior") == "allow":
                    tool_input = body.get("updatedInput", tool_input)
                    decision = (True, "")
                else:
                    decision = (False, body.get("message", "denied"))
        else:
            decision = (False, f"Claude requested permissions to use {name}, but you haven't granted it yet.")
        log("permission", tool=name, input=tool_input, allowed=decision[0], message=decision[1], asked=asked)
        return decision[0], tool_input, decision[1]

    def pre_tool_use(self, name: str, tool_input: dict[str, Any], tool_id: str
                     ) -> tuple[dict[str, Any] | None, str | None]:
        """Run the PreToolUse hooks: (the input an "allow" runs, or None; the error of a block, or None)."""
        for matcher in self.hooks.get("PreToolUse", []):
            pattern = matcher.get("matcher")
            if pattern not in (None, "", "*") and name not in str(pattern).split("|"):
                continue
            for callback in matcher.get("hookCallbackIds", []):
                data = {"session_id": self.session_id, "transcript_path": "", "cwd": str(self.cwd),
                        "permission_mode": self.options.get("permission_mode", "default"),
                        "hook_event_name": "PreToolUse", "tool_name": name, "tool_input": tool_input,
                        "tool_use_id": tool_id}
                response = self.ask({"subtype": "hook_callback", "callback_id": callback, "input": data,
                                     "tool_use_id": tool_id}, float(matcher.get("timeout") or HOOK_TIMEOUT_S))
                log("hook", callback=callback, tool=name, response=response)
                if response.get("subtype") == "timeout":
                    return None, ("PreToolUse hook did not respond before its timeout (host client may be "
                                  "unreachable). The tool call was not executed; other configured hooks may not "
                                  "have completed.")
                output = response.get("response") if response.get("subtype") == "success" else None
                specific = output.get("hookSpecificOutput") if isinstance(output, dict) else None
                if not isinstance(output, dict):
                    failed = (f"Hook callback {callback} failed: the SDK host replied with an error or an invalid "
                              "answer.")
                    if matcher.get("onFailure") == "block":
                        return None, (f'PreToolUse:{name} hook error: [callback]: failed; blocking because '
                                      f'onFailure is "block"\n{failed}')
                    self.send({"type": "system", "subtype": "informational", "level": "warning",
                               "content": f"PreToolUse: {failed} Its answer was treated as empty.",
                               "tag": "hook_callback_failed", "session_id": self.session_id,
                               "uuid": str(uuid.uuid4())})
                    continue
                decided = specific if isinstance(specific, dict) else {}
                if decided.get("permissionDecision") == "deny":
                    return None, f"PreToolUse:{name} hook error: {decided.get('permissionDecisionReason', '')}"
                if decided.get("permissionDecision") == "allow":
                    return decided.get("updatedInput") or tool_input, None
        return None, None

    def harmless(self, name: str, tool_input: dict[str, Any]) -> bool:
        """What Claude Code runs without asking: reads inside the working directory, read-only commands there."""
        if name in READ_TOOLS:
            return self.inside_cwd(tool_input.get(READ_TOOLS[name]) or str(self.cwd))
        if name != "Bash":
            return False
        try:
            words = shlex.split(tool_input.get("command", ""))
        except ValueError:
            return False
        if not words or words[0] not in READ_ONLY_COMMANDS or any(c in tool_input["command"] for c in "|;&<>$`"):
            return False
        return all(self.inside_cwd(w) for w in words[1:] if not w.startswith("-"))

    def inside_cwd(self, path: str) -> bool:
        try:
            (self.cwd / path).resolve().relative_to(self.cwd.resolve())
            return True
        except ValueError:
            return False

    def allowed_by_rules(self, name: str, tool_input: dict[str, Any]) -> bool:
        rules = self.options.get("allowedTools", [])
        if name != "Bash":
            return any(self.rule_matches(r, name, tool_input) for r in rules)
        parts = [p.strip() for p in re.split(r"&&|\|\||;|\|", tool_input.get("command", "")) if p.strip()]
        return bool(parts) and all(any(self.rule_matches(r, "Bash", {"command": p}) for r in rules) for p in parts)

    @staticmethod
    def rule_matches(rule: str, name: str, tool_input: dict[str, Any]) -> bool:
        if name.startswith("mcp__"):  # a server's rule covers all its tools
            server = name.rsplit("__", 1)[0]
            return rule in (name, server, server + "__*")
        tool, paren, spec = rule.partition("(")
        if tool != name:
            return False
        spec = spec[:-1] if paren and spec.endswith(")") else spec
        if not paren or spec in ("", "*"):
            return True
        if name != "Bash":
            return False  # path rules are not modelled: they match nothing here
        command = tool_input.get("command", "").strip()
        if spec.endswith(":*"):
            prefix = spec[:-2]
            return command == prefix or command.startswith(prefix + " ")
        if "*" in spec:
            return fnmatch.fnmatchcase(command, spec)
        return command == spec

    # -- SDK MCP servers -------------------------------------------------------------------

    def sdk_servers(self) -> list[str]:
        servers = self.options.get("mcp_config", {}).get("mcpServers", {})
        return [name for name, entry in servers.items() if entry.get("type") == "sdk"]

    def rpc(self, server: str, method: str, params: dict[str, Any], *, notify: bool = False) -> dict[str, Any]:
        """One JSON-RPC message to an SDK server through the SDK; the JSON-RPC response (`error` on a failed
        control request)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.rpc_id += 1
            message["id"] = self.rpc_id
        response = self.ask({"subtype": "mcp_message", "server_name": server, "message": message})
        if response.get("subtype") == "error":
            answer: dict[str, Any] = {"error": {"code": -32603, "message": str(response.get("error"))}}
        else:
            answer = response.get("response", {}).get("mcp_response") or {}
        log("mcp", server=server, message=message, response=answer)
        return answer

    def mcp_connect(self, server: str) -> list[str] | None:
        """The handshake; the tools the server lists, or None when it failed."""
        hello = self.rpc(server, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                "clientInfo": {"name": "claude-code", "version": VERSION}})
        if "result" not in hello:
            return None
        self.rpc(server, "notifications/initialized", {}, notify=True)
        listed = self.rpc(server, "tools/list", {})
        if "result" not in listed:
            return None
        return [t["name"] for t in listed["result"].get("tools", [])]

    def mcp_listed(self, name: str) -> bool:
        return any(name == f"mcp__{server}__{t}" for server, tools in (self.mcp_tools or {}).items()
                   for t in tools or [])

    def mcp_call(self, name: str, tool_input: dict[str, Any]) -> tuple[str | list[dict[str, Any]], bool]:
        server, tool = next((s, t) for s, tools in (self.mcp_tools or {}).items() for t in tools or []
                            if name == f"mcp__{s}__{t}")
        answer = self.rpc(server, "tools/call", {"name": tool, "arguments": tool_input})
        if "error" in answer:
            return f"MCP error {answer['error'].get('code')}: {answer['error'].get('message')}", True
        result = answer.get("result", {})
        blocks = [{"type": "text", "text": b["text"]} for b in result.get("content", []) if b.get("type") == "text"]
        if result.get("isError"):
            return "\n".join(b["text"] for b in blocks), True
        return blocks, False

    def execute(self, name: str, tool_input: dict[str, Any]) -> tuple[str, bool]:
        if name == "Write":
            path = Path(tool_input["file_path"])
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(tool_input["content"], encoding="utf-8")
            return f"File created successfully at: {path}", False
        if name == "Edit":
            path = Path(tool_input["file_path"])
            text = path.read_text(encoding="utf-8")
            if tool_input["old_string"] not in text:
                return "String to replace not found in file.", True
            path.write_text(text.replace(tool_input["old_string"], tool_input["new_string"], 1), encoding="utf-8")
            return f"The file {path} has been updated.", False
        if name == "Read":
            path = self.cwd / tool_input["file_path"]
            if not path.is_file():
                return "<tool_use_error>File does not exist.</tool_use_error>", True
            lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
            return "\n".join(f"{i}\t{line}" for i, line in enumerate(lines, start=1)), False
        if name == "Glob":
            base = self.cwd / tool_input.get("path", ".")
            pattern = tool_input["pattern"]
            found = sorted(str(p) for p in (Path("/").glob(pattern.lstrip("/")) if pattern.startswith("/")
                                            else base.glob(pattern)))
            return "\n".join(found) or "No files found", False
        if name == "Grep":
            base = self.cwd / tool_input.get("path", ".")
            files = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file()]
            regex = re.compile(tool_input["pattern"])
            hits = [str(p) for p in files if regex.search(p.read_text(encoding="utf-8", errors="replace"))]
            return (f"Found {len(hits)} file{'s' if len(hits) != 1 else ''}\n" + "\n".join(hits)) if hits \
                else "No files found", False
        done = subprocess.run(tool_input["command"], shell=True, cwd=self.cwd, capture_output=True, text=True,
                              timeout=60)
        output = (done.stdout + done.stderr).strip()
        return (output or f"(exit {done.returncode})"), done.returncode != 0


def main() -> None:
    options = parse_args(sys.argv[1:])
    log("start", argv=sys.argv[1:], cwd=os.getcwd(), options=options,
        env={k: os.environ[k] for k in ENV_SHOWN if k in os.environ})
    script_path = os.environ.get("CLAUDE_STANDIN_SCRIPT")
    if not script_path:
        die(2, "standin: set CLAUDE_STANDIN_SCRIPT to the JSON script")
    script = json.loads(Path(script_path).read_text(encoding="utf-8"))
    startup = script.get("startup")
    if startup:
        die(int(startup.get("exit_code", 1)), startup.get("stderr", ""))
    Cli(options, script).run()


if __name__ == "__main__":
    main()
