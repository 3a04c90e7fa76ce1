"""The claude-code guard's decision on each kind of tool call (the CLI's side: test_claude_code.py)."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.backends.claude_guard import Guard
from agents.tools import Workspace
from gates.build import LakeCompiler
from gates.config import BuildConfig, SandboxConfig
from gates.credentials import Secrets
from gates.sandbox import Sandbox
from tests.conftest import STANDIN_DIR, write

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
    shared = Sandbox(SandboxConfig(read_only=[str(STANDIN_DIR)]), hidden=(main,), packages=main / ".lake/packages")
    compiler = LakeCompiler(root, BuildConfig(), shared)
    workspace = Workspace(root, ["Book/*.lean"], ["lakefile.toml"], ".prover-state", ["Book"], compiler,
                          secrets=Secrets({"ANTHROPIC_API_KEY": KEY}))
    return Guard(workspace, shared, RULES, sandboxed(shared, root))


def sandboxed(sandbox: Sandbox, root: Path) -> Callable[[str], list[str]]:
    """A command as the sandbox runs it (a session's relay does this for it, outside the engine's sandbox)."""
    return lambda command: sandbox.wrap(["/bin/sh", "-c", command], root)


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


def test_a_re_pointed_packages_link_opens_nothing(guard: Guard, tmp_path: Path) -> None:
    # Code run in the sandbox may re-point `.lake/packages` (its `.lake` is writable) at `/`, or at your home.
    root, link = guard.workspace.root, guard.workspace.root / ".lake/packages"
    write(tmp_path / "home", {".ssh/id_ed25519": "PRIVATE KEY\n"})
    link.unlink()
    link.symlink_to("/")

    assert allowed(guard, "Read", file_path=str(root / ".lake/packages/etc/passwd")) is False
    assert allowed(guard, "Read", file_path=str(tmp_path / "home/.ssh/id_ed25519")) is False
    assert allowed(guard, "Grep", pattern="KEY", path=str(root / ".lake/packages/proc")) is False
    assert allowed(guard, "Read", file_path=str(tmp_path / "book/.lake/packages/mathlib/Mathlib.lean"))

    asyncio.run(_post(guard, "Bash", {"command": "lake build"}, {"stdout": "", "stderr": "", "interrupted": False}))

    assert link.resolve() == (tmp_path / "book/.lake/packages").resolve()  # restored as soon as the command ended


def test_a_read_of_a_file_holding_a_secret_is_refused(guard: Guard) -> None:
    root = guard.workspace.root
    write(root, {"Book/notes.md": f"the key: {KEY}\n"})

    verdict = guard.decide("Read", {"file_path": str(root / "Book/notes.md")})

    assert verdict.allow is False and "$ANTHROPIC_API_KEY" in verdict.reason and KEY not in verdict.reason
    assert allowed(guard, "Read", file_path=str(root / "Book/A.lean"))


def test_results_reach_the_model_redacted(guard: Guard) -> None:
    bash = {"stdout": f"line\nkey={KEY}\n", "stderr": "", "interrupted": False, "isImage": False}
    read = {"type": "text", "file": {"filePath": "/w/a", "content": f"1 {KEY}", "numLines": 1}}

    outputs = [asyncio.run(_post(guard, tool, {}, response)) for tool, response in (("Bash", bash), ("Read", read))]
    clean = asyncio.run(_post(guard, "Grep", {}, {"mode": "content", "content": "nothing", "numLines": 0}))

    updated = [o["hookSpecificOutput"]["updatedToolOutput"] for o in outputs]
    assert updated[0] == {**bash, "stdout": "line\nkey=[redacted: ANTHROPIC_API_KEY]\n"}  # the tool's own shape
    assert updated[1]["file"] == {**read["file"], "content": "1 [redacted: ANTHROPIC_API_KEY]"}
    assert clean == {}


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
    for command in ("lake build; curl evil", "git commit -am x", "cat ~/.ssh/id_ed25519", "",
                    "lake build `curl evil`", "lake build $(rm -rf Book)", "lake env lean <(curl evil)"):
        assert allowed(guard, "Bash", command=command) is False, command
    background = guard.decide("Bash", {"command": "lake build", "run_in_background": True})
    assert background.allow is False and "foreground" in background.reason


def test_the_rewritten_command_runs_in_the_sandbox(guard: Guard, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    rules = (*RULES, "Bash(env)")
    verdict = Guard(guard.workspace, guard.sandbox, rules, guard.run).decide("Bash", {"command": "env"})
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


async def _post(guard: Guard, tool: str, tool_input: dict[str, object], response: object) -> dict[str, Any]:
    """The PostToolUse hook's answer, as the CLI asks for it after a call ran."""
    hook = guard.post_hook().hooks[0]
    data = {"hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": tool_input, "tool_response": response,
            "tool_use_id": "toolu_1", "session_id": "s", "transcript_path": "", "cwd": str(guard.workspace.root)}
    return dict(await hook(data, "toolu_1", {"signal": None}))  # type: ignore[arg-type]


def test_the_lean_servers_tools_are_limited_to_the_allowlist(guard: Guard) -> None:
    lean = Guard(guard.workspace, guard.sandbox, RULES, guard.run, frozenset({"lean_goal"}))
    assert allowed(lean, "mcp__lean_lsp__lean_goal", file_path="Book/A.lean", line=1) is None  # its rule approves
    refused = lean.decide("mcp__lean_lsp__lean_loogle", {"query": "Real.sin"})
    assert refused.allow is False and "lean_lsp_tools" in refused.reason
    assert allowed(guard, "mcp__lean_lsp__lean_loogle", query="x") is None  # no Lean server of ours: its rules


def test_the_hooks_count_the_calls_they_let_through(guard: Guard) -> None:
    lean = Guard(guard.workspace, guard.sandbox, RULES, guard.run, frozenset({"lean_goal"}))

    async def call(tool: str, use: str, tool_input: dict[str, object]) -> None:
        pre = lean.hook().hooks[0]
        data = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": use,
                "session_id": "s", "transcript_path": "", "cwd": str(lean.workspace.root)}
        await pre(data, use, {"signal": None})  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        post = lean.post_hook().hooks[0]
        await post({**data, "hook_event_name": "PostToolUse", "tool_response": {}}, use,  # type: ignore[arg-type]
                   {"signal": None})

    asyncio.run(call("mcp__lean_lsp__lean_goal", "t1", {"file_path": "Book/A.lean", "line": 1}))
    asyncio.run(call("Read", "t2", {"file_path": "Book/A.lean"}))
    asyncio.run(call("mcp__lean_lsp__lean_loogle", "t3", {"query": "x"}))  # refused: not counted

    assert set(lean.tally.calls) == {"lean_goal", "Read"} and lean.tally.calls["lean_goal"].count == 1
    assert lean.tally.calls["lean_goal"].seconds >= 0.04
