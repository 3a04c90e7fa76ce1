"""A whole cycle whose Worker uses the Lean server's tools (the stand-in lean-lsp-mcp, answering with recorded real
outputs): its calls are counted in the record, and the next Planner reads which tools were used."""

from __future__ import annotations

import sys
from pathlib import Path

from agents.lsp import DEFAULT_TOOLS
from tests.orchestrator.harness import Project, config_text, evaluation, strategy, user_text
from tests.standin.anthropic_server import RecordedRequest, Reply, text_reply, tool_use_reply

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


def test_the_planner_reads_lean_goals_through_the_same_server_without_running_code(project: Project) -> None:
    project.commit_files({"autoformalize.toml": config_text(agents={"worker": {
        "lean_tools": "lean-lsp-mcp", "lean_lsp_command": [sys.executable, str(STANDIN), str(DATA)]}})}, "lean tools")

    def answer(request: RecordedRequest) -> Reply:
        assert (DATA / "lean_goal.txt").read_text().strip() in user_text(request), "answered before the goal"
        return text_reply(strategy("Book/A.lean"))

    project.agents.add("planner", tool_use_reply([("lean_goal", GOAL)]), answer)
    project.agents.work([("finish", {"report": "nothing yet"})])
    project.agents.evaluate(evaluation(0))

    record, _ = project.cycle()

    assert record.scope == ["Book/A.lean"]
    offered = {t["name"] for t in project.agents.requests["planner"][0].body["tools"]}
    assert {"lean_goal", "lean_hover_info", "lean_local_search"} <= offered and "read_file" in offered
    assert not offered & {"lean_multi_attempt", "lean_run_code", "lean_verify", "lean_code_actions"}
    # The result is the repository's data to the Planner, fenced like a file it read.
    assert "<<<DATA" in user_text(project.agents.requests["planner"][1])
