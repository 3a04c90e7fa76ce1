"""A whole cycle whose Worker uses the Lean server's tools (the stand-in lean-lsp-mcp, answering with recorded real
outputs): its calls are counted in the record, and the next Planner reads which tools were used."""

from __future__ import annotations

import shutil
import sys
import threading
from pathlib import Path

from agents.ledger import Ledger
from agents.lsp import DEFAULT_TOOLS
from agents.tools import Workspace
from agents.worker import Limits
from tests.orchestrator.harness import Project, config_text, evaluation, strategy, user_text

STANDIN = Path(__file__).resolve().parent.parent / "standin" / "lean_lsp_server.py"
DATA = Path(__file__).resolve().parent.parent / "data" / "lean_lsp"
GOAL = {"file_path": "Book/A.lean", "line": 8}


def test_the_workers_goal_and_search_calls_land_in_the_record(project: Project) -> None:
    project.commit_files({"autoformalize.toml": config_text(agents={"worker": {
        "lean_tools": "lean-lsp-mcp", "lean_lsp_command": [sys.executable, str(STANDIN), str(DATA)]}})}, "lean tools")
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("lean_goal", GOAL), ("lean_local_search", {"query": "hard"})],
                        [("lean_multi_attempt", {**GOAL, "snippets": ["simp", "omega"]})],
                        [("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("lean_goal", GOAL), ("lean_check", {"path": "Book/A.lean"})],
                        [("finish", {"report": "## Worked on\nBook.hard\n## Result\nclosed by simp"})])
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    assert record.outcome == "accepted", record.gates
    assert {name: stat.count for name, stat in record.tool_calls.items()} == {
        "lean_goal": 2, "lean_local_search": 1, "lean_multi_attempt": 1, "edit_file": 1, "lean_check": 1,
        "finish": 1}
    assert all(stat.seconds >= 0 for stat in record.tool_calls.values())
    assert project.history()[-1].tool_calls == record.tool_calls  # as written to history.jsonl
    first = project.agents.requests["worker"][0].body
    assert set(DEFAULT_TOOLS) <= {t["name"] for t in first["tools"]}
    seen = user_text(project.agents.requests["worker"][1])
    assert (DATA / "lean_goal.txt").read_text().strip() in seen and '"name": "hard"' in seen

    project.agents.plan(strategy("Book/B.lean"))
    project.agents.work([("finish", {"report": "nothing"})])
    project.agents.evaluate(evaluation(0))
    project.cycle()
    planner = user_text(project.agents.requests["planner"][-1])
    assert "## The Worker's tool calls in recent cycles" in planner
    assert "Cycles 1: lean_goal 2" in planner and "lean_multi_attempt 1" in planner


def test_a_claude_code_worker_gets_the_same_server_in_the_sandbox(project: Project) -> None:
    project.commit_files({"autoformalize.toml": config_text(agents={"worker": {
        "backend": "claude-code", "model": "claude-opus-4-6", "lean_tools": "lean-lsp-mcp",
        "lean_lsp_tools": ["lean_goal", "lean_multi_attempt"]}})}, "claude-code with lean tools")
    from agents.backends.claude_code import ClaudeCodeSession

    workspace = Workspace(project.repo, ["Book/A.lean"], [], ".prover-state", ["Book"],
                          project.deps().compiler(project.repo))
    session = project.deps().session(workspace, "rules", Limits(5, 60), Ledger(), threading.Event())
    try:
        assert isinstance(session, ClaudeCodeSession)
        server = session.mcp_servers["lean_lsp"]
        assert shutil.which("bwrap") in server["args"] and "env" not in server  # run in the sandbox
        assert server["args"][-3:] == [sys.executable, "-m", "lean_lsp_mcp"]
        assert f"LEAN_PROJECT_PATH={project.repo.resolve()}" in server["args"]
        assert "`mcp__lean_lsp__lean_goal`" in session.system_prompt
        assert session.guard.decide("mcp__lean_lsp__lean_goal", GOAL).allow is None
        assert session.guard.decide("mcp__lean_lsp__lean_hover_info", GOAL).allow is False
        assert session.tools is session.guard.tally
    finally:
        session.close()
