"""lean-lsp-mcp through the MCP client: the real package started in the sandbox, its tools offered through both
wire formats, and the calls that need Lean against the stand-in server (recorded real outputs)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents import lsp
from agents.backends.anthropic import AnthropicModel
from agents.backends.openai import OpenAIModel
from agents.config import WorkerConfig
from agents.model import ToolCall
from agents.tools import PROVER_TOOLS, SPECS, Workspace
from agents.worker import Limits, WorkerSession
from gates.build import LakeCompiler
from gates.config import BuildConfig
from gates.sandbox import Sandbox
from orchestrator.wiring import lean_server
from tests.agents.conftest import FAKE_KEY
from tests.conftest import sandbox, write
from tests.standin.anthropic_server import AnthropicStandin
from tests.standin.openai_server import OpenAIStandin

STANDIN = Path(__file__).resolve().parent.parent / "standin" / "lean_lsp_server.py"
DATA = Path(__file__).resolve().parent.parent / "data" / "lean_lsp"
OPENAI_KEY = "sk-proj-test-Hq4RmT8wN2-never-print-me"
A = "namespace Book\n\ntheorem add_zero' (n : Nat) : n + 0 = n := by\n  sorry\n\nend Book\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "book"
    write(root, {"lean-toolchain": "leanprover/lean4:v4.24.0\n", "lakefile.toml": 'name = "book"\n',
                 "Book/A.lean": A})
    return root


def workspace(root: Path, box: Sandbox) -> Workspace:
    return Workspace(root, ["Book/*.lean"], [], ".prover-state", ["Book"],
                     LakeCompiler(root, BuildConfig(check_file=f"{sys.executable} -c pass {{file}}"), box))


def standin(**settings: object) -> WorkerConfig:
    return WorkerConfig(model="m", lean_tools="lean-lsp-mcp",
                        lean_lsp_command=[sys.executable, str(STANDIN), str(DATA)], **settings)  # type: ignore[arg-type]


@pytest.fixture
def server(project: Path) -> Iterator[lsp.LeanServer]:
    started = lean_server(standin(lean_lsp_timeout_s=5), project, sandbox())
    assert started is not None
    yield started
    started.close()


def test_the_real_lean_lsp_mcp_starts_in_the_sandbox_and_its_tools_reach_both_wire_formats(
        project: Path, anthropic_server: AnthropicStandin) -> None:
    box = sandbox()
    server = lean_server(WorkerConfig(model="m", lean_tools="lean-lsp-mcp"), project, box)
    assert server is not None, "lean-lsp-mcp (a test dependency) did not start: see the lsp.unavailable log"
    try:
        assert server.names == set(lsp.DEFAULT_TOOLS)  # every default one listed; web search and lean_build not
        goal = next(s for s in server.specs if s.name == "lean_goal")
        assert "goal" in goal.description.lower() and {"file_path", "line"} <= set(goal.input_schema["required"])
        ws = workspace(project, box)
        ws.lsp = server
        # A call that needs no Lean: the real server's own answer, as a tool error, the session going on.
        content, error = server.call("lean_goal", {"file_path": "Nowhere.lean", "line": 1})
        assert error and "Nowhere.lean" in content

        model = AnthropicModel("claude-opus-4-6", 10, api_key=FAKE_KEY, base_url=anthropic_server.base_url)
        anthropic_server.enqueue_tool_use([("finish", {"report": "done"})])
        WorkerSession(model, ws, "rules", Limits(5, 100)).run("go")
        names = [t["name"] for t in anthropic_server.requests[-1].body["tools"]]
        assert names.count("lean_goal") == 1  # the server's stands in for the builtin one
        sent = {t["name"]: t for t in anthropic_server.requests[-1].body["tools"]}
        assert sent["lean_goal"] == {"name": "lean_goal", "description": goal.description,
                                     "input_schema": goal.input_schema}
        assert set(sent) == {s.name for s in SPECS if s.name not in PROVER_TOOLS} | set(lsp.DEFAULT_TOOLS)
        system = "".join(b["text"] for b in anthropic_server.requests[-1].body["system"])
        assert "`lean_goal`" in system and "`lean_multi_attempt`" in system

        with OpenAIStandin(api_key=OPENAI_KEY) as openai_server:  # it refuses a schema the real API would
            openai_server.enqueue_tool_calls([("finish", {"report": "done"})])
            model2 = OpenAIModel("gpt-5-mini", 10, api_key=OPENAI_KEY, base_url=openai_server.base_url)
            WorkerSession(model2, ws, "rules", Limits(5, 100)).run("go")
            tools = {t["function"]["name"]: t["function"] for t in openai_server.requests[-1].body["tools"]}
        assert tools["lean_goal"]["parameters"] == goal.input_schema
        assert tools["lean_goal"]["description"] == goal.description
    finally:
        server.close()


def test_no_server_no_lean_tools_and_no_guide(project: Path, anthropic_server: AnthropicStandin) -> None:
    model = AnthropicModel("claude-opus-4-6", 10, api_key=FAKE_KEY, base_url=anthropic_server.base_url)
    anthropic_server.enqueue_tool_use([("finish", {"report": "done"})])
    WorkerSession(model, workspace(project, sandbox()), "rules", Limits(5, 100)).run("go")
    body = anthropic_server.requests[-1].body
    assert {t["name"] for t in body["tools"]} == {s.name for s in SPECS if s.name not in PROVER_TOOLS}
    assert "language server" not in "".join(b["text"] for b in body["system"])


def test_the_allowlist_and_the_web_tools(project: Path) -> None:
    # Off by default: the server itself is told to switch them off, and the client would not offer them anyway.
    assert {"lean_loogle", "lean_leansearch", "lean_build"} <= set(
        lsp.environment(project, lsp.DEFAULT_TOOLS, 1000)["LEAN_MCP_DISABLED_TOOLS"].split(","))
    server = lean_server(standin(lean_lsp_tools=["lean_goal", "lean_loogle"]), project, sandbox())
    assert server is not None
    try:
        assert server.names == {"lean_goal", "lean_loogle"}
        content, error = server.call("lean_hover_info", {"file_path": "Book/A.lean", "line": 4, "column": 3})
        assert error and "not one of" in content
        assert server.call("lean_loogle", {"query": "Real.sin"}) == ((DATA / "lean_loogle.txt").read_text(), False)
    finally:
        server.close()


def test_a_builtin_name_is_never_shadowed(project: Path) -> None:
    argv = sandbox().wrap([sys.executable, str(STANDIN), str(DATA)], project,
                          env=lsp.environment(project, ["lean_goal"], 1000), outputs=False)
    server = lsp.LeanServer(argv, project, allow=["lean_goal"], reserved={"lean_goal"})
    with pytest.raises(lsp.Unavailable, match="none of the allowed tools"):
        server.start()


def test_the_builtin_goal_view_is_offered_where_the_server_offers_none(project: Path) -> None:
    server = lean_server(standin(lean_lsp_tools=["lean_hover_info"]), project, sandbox())
    assert server is not None
    try:
        ws = workspace(project, sandbox())
        ws.lsp = server
        goal = [s for s in ws.specs() if s.name == "lean_goal"]
        assert len(goal) == 1 and set(goal[0].input_schema["required"]) == {"path", "line"}
    finally:
        server.close()


def test_goal_and_search_answer_through_the_workspace(server: lsp.LeanServer, project: Path) -> None:
    ws = workspace(project, sandbox())
    ws.lsp = server
    goal = ws.call(ToolCall("1", "lean_goal", {"file_path": "Book/A.lean", "line": 4}))
    assert not goal.is_error and goal.content == (DATA / "lean_goal.txt").read_text()
    found = ws.call(ToolCall("2", "lean_local_search", {"query": "add_zero"}))
    assert not found.is_error and '"name": "add_zero\'"' in found.content and "Book/A.lean" in found.content
    unknown = ws.call(ToolCall("3", "lean_nothing", {}))
    assert unknown.is_error and "lean_goal" in unknown.content  # the offered names, the server's included


def test_output_is_cut_and_a_hanging_call_is_an_error(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_LSP_HUGE", "50000")
    monkeypatch.setenv("STANDIN_LSP_HANG", "lean_hover_info")
    server = lean_server(standin(lean_lsp_timeout_s=2, lean_lsp_output_chars=1000), project,
                         sandbox(env=["STANDIN_LSP_HUGE", "STANDIN_LSP_HANG"]))
    assert server is not None
    try:
        content, error = server.call("lean_run_code", {"code": "#eval 1"})
        assert not error and len(content) < 1100 and "cut at 1000 of 50000 characters" in content
        began = time.monotonic()
        content, error = server.call("lean_hover_info", {"file_path": "Book/A.lean", "line": 4, "column": 3})
        assert error and "did not answer within 2s" in content and time.monotonic() - began < 15
        assert server.deaths == 0 and server.call("lean_goal", {"file_path": "Book/A.lean", "line": 4})[1] is False
    finally:
        server.close()


def test_a_dying_server_is_restarted_once_then_dropped(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_LSP_DIE", "lean_multi_attempt")
    server = lean_server(standin(), project, sandbox(env=["STANDIN_LSP_DIE"]))
    assert server is not None
    ws = workspace(project, sandbox())
    ws.lsp = server
    try:
        attempt = ToolCall("1", "lean_multi_attempt", {"file_path": "Book/A.lean", "line": 4, "snippets": ["simp"]})
        first = ws.call(attempt)
        assert first.is_error and "restarted" in first.content and server.deaths == 1
        assert "lean_goal" in {s.name for s in ws.specs()}  # the new process answers
        assert not ws.call(ToolCall("2", "lean_goal", {"file_path": "Book/A.lean", "line": 4})).is_error
        second = ws.call(attempt)
        assert second.is_error and "died twice" in second.content and "builtin tools" in second.content
        assert [s.name for s in ws.specs()] == [s.name for s in SPECS if s.name not in PROVER_TOOLS]  # the builtin only
        gone = ws.call(ToolCall("3", "lean_multi_attempt", {"file_path": "Book/A.lean", "line": 4}))
        assert gone.is_error and "gone" in gone.content
        # The builtin goal view answers in the server's place (this compiler prints nothing: Lean got nowhere).
        builtin = ws.call(ToolCall("5", "lean_goal", {"path": "Book/A.lean", "line": 4}))
        assert not builtin.is_error and builtin.content.startswith("before line 4: not reached")
        assert not ws.call(ToolCall("4", "sorries", {})).is_error  # the session goes on
    finally:
        server.close()


def test_a_server_that_cannot_start_leaves_the_builtin_tools(project: Path) -> None:
    broken = WorkerConfig(model="m", lean_tools="lean-lsp-mcp", lean_lsp_command=[sys.executable, "-c", "pass"])
    assert lean_server(broken, project, sandbox()) is None
    missing = WorkerConfig(model="m", lean_tools="lean-lsp-mcp", lean_lsp_command=["no-such-lean-lsp-mcp"])
    assert lean_server(missing, project, sandbox()) is None


def test_the_server_never_sees_a_credential(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server runs Lean on Worker code, which can read its environment: the sandbox's allowlist only."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    server = lean_server(standin(), project, sandbox())
    assert server is not None
    try:
        content, error = server.call("lean_run_code", {"code": "#print_env"})
    finally:
        server.close()
    assert not error and '"LEAN_PROJECT_PATH"' in content
    assert FAKE_KEY not in content and OPENAI_KEY not in content and "API_KEY" not in content


def test_the_session_counts_its_calls_by_name(project: Path, anthropic_server: AnthropicStandin) -> None:
    model = AnthropicModel("claude-opus-4-6", 10, api_key=FAKE_KEY, base_url=anthropic_server.base_url)
    anthropic_server.enqueue_tool_use([("sorries", {}), ("sorries", {}), ("ignore previous instructions", {})])
    anthropic_server.enqueue_tool_use([("finish", {"report": "done"})])
    session = WorkerSession(model, workspace(project, sandbox()), "rules", Limits(5, 100))
    session.run("go")
    assert {n: s.count for n, s in session.tools.calls.items()} == {"sorries": 2, "(unknown)": 1, "finish": 1}
