"""The Worker session: its limits end it with what it has, and a repair round continues the same session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agents.backends.anthropic import AnthropicModel
from agents.tools import Workspace
from agents.worker import Limits, Stop, WorkerSession
from gates.build import LakeCompiler
from gates.config import BuildConfig
from tests.agents.conftest import FAKE_KEY
from tests.conftest import sandbox, write
from tests.standin.anthropic_server import AnthropicStandin, RecordedRequest, Reply, tool_use_reply

LIST = ("list_files", {})


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    write(tmp_path, {"Book/A.lean": "theorem a : True := sorry\n"})
    return Workspace(tmp_path, ["Book/*.lean"], [], ".prover-state", ["Book"],
                     LakeCompiler(tmp_path, BuildConfig(check_file=f"{sys.executable} -c pass {{file}}"), sandbox()))


def session(server: AnthropicStandin, workspace: Workspace, limits: Limits, clock: list[float]) -> WorkerSession:
    model = AnthropicModel("claude-opus-4-6", 10, api_key=FAKE_KEY, base_url=server.base_url)
    return WorkerSession(model, workspace, "rules", limits, clock=lambda: clock[0])


def test_finish_ends_the_round_with_its_report(anthropic_server: AnthropicStandin, workspace: Workspace) -> None:
    anthropic_server.enqueue_tool_use([LIST])
    anthropic_server.enqueue_tool_use([("finish", {"report": "all done"})])
    s = session(anthropic_server, workspace, Limits(10, 100), [0.0])
    round_ = s.run("go")
    assert (round_.stop, round_.report, s.turns) == (Stop.FINISHED, "all done", 2)
    assert s.usage.input == 20


def test_the_time_limit_stops_between_calls(anthropic_server: AnthropicStandin, workspace: Workspace) -> None:
    clock = [0.0]
    s = session(anthropic_server, workspace, Limits(10, 100), clock)

    def tick(request: RecordedRequest) -> Reply:
        clock[0] += 60  # each call takes a minute of the session's 100 seconds
        return tool_use_reply([LIST])

    for _ in range(3):
        anthropic_server.enqueue(tick)
    round_ = s.run("go")
    assert round_.stop is Stop.TIME and s.turns == 2
    assert "stopped at its time limit without a report" in round_.report


def test_the_token_budget_stops_the_session(anthropic_server: AnthropicStandin, workspace: Workspace) -> None:
    for _ in range(3):
        anthropic_server.enqueue_tool_use([LIST], usage={"input_tokens": 400, "output_tokens": 100,
                                                         "cache_read_input_tokens": 10_000})
    s = session(anthropic_server, workspace, Limits(10, 1000, token_budget=1000), [0.0])
    round_ = s.run("go")
    assert round_.stop is Stop.TOKENS and s.turns == 2  # cache reads do not count against the budget


def test_a_repair_round_is_the_next_turn_of_the_same_session(anthropic_server: AnthropicStandin,
                                                              workspace: Workspace) -> None:
    anthropic_server.enqueue_tool_use([("finish", {"report": "first"})])
    anthropic_server.enqueue_tool_use([("finish", {"report": "second"})])
    s = session(anthropic_server, workspace, Limits(10, 100), [0.0])
    s.run("go")
    s.resume("the build gate failed: fix it")
    messages = anthropic_server.last_body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    last = messages[-1]["content"]
    assert last[0]["type"] == "tool_result" and last[-1]["text"] == "the build gate failed: fix it"
    assert s.report() == "## Round 1\n\nfirst\n\n## Round 2\n\nsecond"
