"""The real coding agents the tests run as Workers, and the scripted models behind them.

- Claude Code: the `claude` CLI bundled in claude-agent-sdk's wheel (the SDK starts it), against the scripted
  Anthropic API (`tests.standin.anthropic_server`), with non-essential traffic off as the product runs it.
- Codex CLI: the `codex` the quick start installs at the version of `scripts/codex/package-lock.json` (linked
  into the virtual environment's `bin`), against the scripted Responses API (`tests.standin.responses_server`).

Where one cannot run, its tests are skipped with the reason, except in CI (`CI` set), where that is a failure:
CI installs both.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest

from tests.standin.anthropic_server import RecordedRequest, Reply, text_reply, tool_use_reply

CLAUDE = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
CODEX = shutil.which("codex", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
CLAUDE_MODEL = "claude-sonnet-4-5"  # one whose price the CLI knows: its results carry a cost
CODEX_MODEL = "gpt-5.5"  # one of Codex's catalogue with the plain tool set (a shell, a freeform apply_patch)
CODEX_PRICE = {"input": 1.25, "output": 10.0, "cache_read": 0.125, "cache_write": 0.0}  # as `[prices]` gives it


def _runs(cli: str | Path | None) -> str | None:
    """Why `cli` cannot run here, or None."""
    if cli is None or not Path(cli).exists():
        return "not installed"
    try:
        done = subprocess.run([str(cli), "--version"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return None if done.returncode == 0 else f"`--version` exited {done.returncode}: {done.stderr[-300:]}"


def need(name: str, cli: str | Path | None) -> None:
    """Skip the test when the engine cannot run here; in CI, fail it."""
    problem = _runs(cli)
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the {name} CLI cannot run in CI, which installs it ({cli}): {problem}")
    pytest.skip(f"the {name} CLI cannot run here ({cli}): {problem}; the quick start installs it")


Step = Sequence[tuple[str, dict[str, Any]]] | str | Reply | Callable[[RecordedRequest], Reply]


def working_directory(request: RecordedRequest) -> Path:
    """The directory Claude Code works in, as its system prompt tells the model."""
    found = re.search(r"Primary working directory: ([^\\\s]+)", json.dumps(request.body))
    if found is None:
        raise AssertionError("the request names no working directory")
    return Path(found.group(1))


def in_working_copy(*calls: tuple[str, dict[str, Any]]) -> Callable[[RecordedRequest], Reply]:
    """One answer of tool calls whose `file_path` values are relative to the working copy Claude Code runs in (the
    Worker's, somewhere under the cache directory)."""

    def answer(request: RecordedRequest) -> Reply:
        root = working_directory(request)
        return tool_use_reply([(name, {k: str(root / v) if k == "file_path" else v for k, v in args.items()})
                               for name, args in calls])

    return answer


class ClaudeModel:
    """The model behind the claude CLI: each request of its main loop (it carries the CLI's tools) gets the next
    step (tool calls, a closing text, any reply); any other request a plain text. Records every tool result the CLI
    sent back, in order."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.results: list[dict[str, Any]] = []
        self.requests: list[RecordedRequest] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        last = request.body["messages"][-1]["content"]
        if isinstance(last, list):
            self.results += [b for b in last if b.get("type") == "tool_result"]
        if not request.body.get("tools"):
            return text_reply("ok")
        self.requests.append(request)
        if not self.steps:
            return text_reply("(the script is over)")
        step = self.steps.pop(0)
        if isinstance(step, str):
            return text_reply(step)
        if callable(step):
            return step(request)
        if isinstance(step, Sequence):
            return tool_use_reply(list(step))
        return step

    def text(self, i: int) -> str:
        content = self.results[i]["content"]
        return content if isinstance(content, str) else json.dumps(content)

    def failed(self, i: int) -> bool:
        return bool(self.results[i].get("is_error"))
