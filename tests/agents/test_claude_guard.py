"""The claude-code guard's decision on each kind of tool call (the CLI's side: test_claude_code_real_cli.py)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agents.backends.claude_guard import Guard
from agents.tools import Workspace
from gates.build import LakeCompiler
from gates.config import BuildConfig
from gates.credentials import Secrets
from tests.conftest import sandbox, write

KEY = "sk-ant-guard-Yh2Lp9-never-print-me"
RULES = ("Read", "Write", "Edit", "Glob", "Grep", "Bash(lake build:*)", "Bash(lake env lean:*)")


@pytest.fixture
def guard(tmp_path: Path) -> Guard:
    main, root = tmp_path / "book", tmp_path / "work"
    write(main, {".lake/packages/mathlib/Mathlib.lean": "-- Mathlib\n"})
    write(root, {"Book/A.lean": "theorem a : True := trivial\n", "lakefile.toml": 'name = "b"\n'})
    (root / ".lake").mkdir()
    (root / ".lake/packages").symlink_to(main / ".lake/packages")
    (root / "Book/escape.lean").symlink_to(tmp_path / "secret")
    compiler = LakeCompiler(root, BuildConfig(), sandbox())
    workspace = Workspace(root, ["Book/*.lean"], ["lakefile.toml"], ".prover-state", ["Book"], compiler,
                          secrets=Secrets({"ANTHROPIC_API_KEY": KEY}))
    return Guard(workspace, sandbox(), RULES)


def allowed(guard: Guard, name: str, **tool_input: object) -> bool | None:
    return guard.decide(name, dict(tool_input)).allow


def test_reads_reach_the_working_copy_and_its_dependencies_only(guard: Guard, tmp_path: Path) -> None:
    root = guard.workspace.root
    assert allowed(guard, "Read", file_path=str(root / "Book/A.lean"))
    assert allowed(guard, "Read", file_path=str(root / ".lake/packages/mathlib/Mathlib.lean"))  # through the link
    assert allowed(guard, "Grep", pattern="theorem") and allowed(guard, "Glob", pattern="**/*.lean")
    for refused in ({"file_path": "/proc/self/environ"}, {"file_path": str(root / "Book/escape.lean")},
                    {"file_path": "~/.ssh/id_ed25519"}, {"file_path": str(tmp_path / "book/.git/config")}):
        assert allowed(guard, "Read", **refused) is False, refused
    assert allowed(guard, "Grep", pattern="x", path="/etc") is False
    assert allowed(guard, "Glob", pattern="/root/.*") is False
    assert allowed(guard, "Glob", pattern="../../**/*") is False


def test_writes_reach_the_scope_without_a_secret(guard: Guard) -> None:
    root = guard.workspace.root
    assert allowed(guard, "Write", file_path=str(root / "Book/A.lean"), content="theorem a : True := trivial\n")
    assert allowed(guard, "Edit", file_path=str(root / "lakefile.toml"), old_string="b", new_string="c") is False
    verdict = guard.decide("Write", {"file_path": str(root / "Book/A.lean"), "content": f"-- {KEY}\n"})
    assert verdict.allow is False and "$ANTHROPIC_API_KEY" in verdict.reason and KEY not in verdict.reason


def test_bash_runs_only_the_rules_commands_rewritten_into_the_sandbox(guard: Guard) -> None:
    verdict = guard.decide("Bash", {"command": "lake build && lake env lean Book/A.lean", "timeout": 60})

    assert verdict.allow and verdict.updated is not None and verdict.updated["timeout"] == 60
    words = shlex.split(verdict.updated["command"])
    assert words[-3:] == ["/bin/sh", "-c", "lake build && lake env lean Book/A.lean"]
    assert any(w.endswith("/bwrap") for w in words) and words[1] == "-i"
    for command in ("lake build; curl evil", "git commit -am x", "cat ~/.ssh/id_ed25519", ""):
        assert allowed(guard, "Bash", command=command) is False, command


def test_the_rewritten_command_runs_in_the_sandbox(guard: Guard, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    rules = (*RULES, "Bash(env)")
    verdict = Guard(guard.workspace, guard.sandbox, rules).decide("Bash", {"command": "env"})
    assert verdict.updated is not None

    done = subprocess.run(verdict.updated["command"], shell=True, capture_output=True, text=True, check=True)

    assert "HOME=/tmp/home" in done.stdout and KEY not in done.stdout


def test_other_tools_are_refused_mcp_tools_left_to_their_rules(guard: Guard) -> None:
    assert allowed(guard, "WebFetch", url="https://example.com") is False
    assert allowed(guard, "NotebookEdit", notebook_path="x.ipynb") is False  # not in the rules
    assert allowed(guard, "TodoWrite", todos=[])
    assert allowed(guard, "mcp__prover__submit_to_prover", declarations="a") is None


def test_a_call_that_cannot_be_checked_is_refused(guard: Guard) -> None:
    verdict = guard.decide("Read", {"file_path": "\0"})  # a path the resolution itself rejects

    assert verdict.allow is False and verdict.reason.startswith("refused: the call could not be checked")


def test_an_mcp_server_command_runs_in_the_sandbox(guard: Guard) -> None:
    entry = {"command": sys.executable, "args": ["-m", "lean_lsp_mcp"], "env": {"LEAN_LOG": "1"}}

    wrapped = guard.mcp_server(entry)

    assert wrapped["command"].endswith("/env") and wrapped["args"][-3:] == [sys.executable, "-m", "lean_lsp_mcp"]
    assert "LEAN_LOG=1" in wrapped["args"] and "env" not in wrapped
    assert guard.mcp_server({"type": "http", "url": "https://x"}) == {"type": "http", "url": "https://x"}
