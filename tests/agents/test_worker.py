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
from tests.standin.anthropic_server import (
    AnthropicStandin,
    RecordedRequest,
    Reply,
    error_reply,
    prompt_tokens,
    text_reply,
    tool_use_reply,
)

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


BIG = "-- " + "x" * 96 + "\n"  # a 100-character line


def test_a_session_many_times_its_window_stays_inside_it_and_finishes(tmp_path: Path) -> None:
    # 300 turns, each reading 50,000 characters (cut to 4,000 as they come): 3.75 million tokens of results
    # through a 20,000-token window, which the stand-in enforces as the API does.
    write(tmp_path, {"Book/A.lean": "theorem a : True := sorry\n", "Book/Big.lean": BIG * 500})
    ws = Workspace(tmp_path, ["Book/*.lean"], [], ".prover-state", ["Book"],
                   LakeCompiler(tmp_path, BuildConfig(check_file=f"{sys.executable} -c pass {{file}}"), sandbox()))
    reads = [0]

    def answer(request: RecordedRequest) -> Reply:
        if request.body["system"][0]["text"].startswith("You summarize"):
            return text_reply(f"Goal: read Big.lean. Done: {reads[0]} reads. Open: keep reading.")
        reads[0] += 1
        return tool_use_reply([("read_file", {"path": "Book/Big.lean"})] if reads[0] <= 300
                              else [("finish", {"report": "read it all"})])

    with AnthropicStandin(api_key=FAKE_KEY, window=20_000) as server:
        for _ in range(400):
            server.enqueue(answer)
        model = AnthropicModel("claude-opus-4-6", 10, api_key=FAKE_KEY, base_url=server.base_url)
        s = WorkerSession(model, ws, "rules", Limits(400, 1e9, window=20_000, result_chars=4_000, keep_results=3))
        round_ = s.run("Read Book/Big.lean again and again.")
        requests = server.requests
    assert (round_.stop, round_.report, s.turns) == (Stop.FINISHED, "read it all", 301)
    assert s.context.trims == 300 and s.context.clears > 250 and s.context.compactions >= 1
    assert max(prompt_tokens(r.body) for r in requests) <= 20_000  # never refused for its length
    assert s.context.peak_input <= 20_000
    # Most of what each turn sends was sent before: the prompt cache serves it, clearing and summaries included.
    sent = s.usage.input + s.usage.cache_read + s.usage.cache_write
    assert s.usage.cache_read / sent > 0.7, s.usage
    summaries = [r for r in requests if "tools" not in r.body]
    assert len(summaries) == s.context.compactions
    # After a summary the session goes on from the opening, the summary and its last turn.
    after = next(r for r in requests[requests.index(summaries[0]) + 1:] if "tools" in r.body)
    opening = after.body["messages"][0]["content"][0]["text"]
    assert opening.startswith("Read Book/Big.lean again and again.") and "summarized" in opening
    assert len(after.body["messages"]) == 3
    # The cache breakpoints stay at the end of what is sent: the tools, and the last user turn.
    last = after.body["messages"][-1]["content"][-1]
    assert last.get("cache_control") == {"type": "ephemeral"}


def test_refused_for_its_length_after_a_summary_the_session_ends_as_context_with_its_work(
        anthropic_server: AnthropicStandin, workspace: Workspace) -> None:
    too_long = error_reply(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")
    anthropic_server.enqueue_tool_use([LIST])
    anthropic_server.enqueue_tool_use([("write_file", {"path": "Book/A.lean", "content": "theorem a : True := by\n"
                                                                                          "  trivial\n"})])
    anthropic_server.enqueue(too_long)
    anthropic_server.enqueue(text_reply("Goal: prove a. Done: wrote the proof."))
    anthropic_server.enqueue(too_long)
    s = session(anthropic_server, workspace, Limits(10, 100), [0.0])
    round_ = s.run("go")
    assert round_.stop is Stop.CONTEXT and s.turns == 2 and s.context.compactions == 1
    assert "outgrew the model's context window even summarized" in round_.report
    assert "trivial" in (workspace.root / "Book/A.lean").read_text()  # the work is there for the gates


def test_another_refusal_mid_session_keeps_the_work(anthropic_server: AnthropicStandin, workspace: Workspace) -> None:
    anthropic_server.enqueue_tool_use([LIST])
    anthropic_server.enqueue_error(400, "invalid_request_error", "messages: something the API did not like")
    s = session(anthropic_server, workspace, Limits(10, 100), [0.0])
    round_ = s.run("go")
    assert round_.stop is Stop.REFUSED and "something the API did not like" in round_.report


def test_at_four_fifths_of_its_turns_the_session_is_told_to_wrap_up_once(anthropic_server: AnthropicStandin,
                                                                          workspace: Workspace) -> None:
    seen: list[str] = []

    def listing(request: RecordedRequest) -> Reply:
        last = request.body["messages"][-1]["content"]
        seen.append(" ".join(b.get("text", "") for b in last if isinstance(b, dict)) if isinstance(last, list)
                    else last)
        return tool_use_reply([LIST])

    for _ in range(5):
        anthropic_server.enqueue(listing)
    s = session(anthropic_server, workspace, Limits(5, 1000), [0.0])
    assert s.run("go").stop is Stop.TURNS
    told = [i for i, text in enumerate(seen) if "Wrap up now" in text]
    assert told == [4] and "you have used 4 of your 5 model calls" in seen[4]


def test_at_four_fifths_of_its_time_the_session_is_told_to_wrap_up(anthropic_server: AnthropicStandin,
                                                                    workspace: Workspace) -> None:
    clock = [0.0]
    seen: list[str] = []

    def slow(request: RecordedRequest) -> Reply:
        clock[0] += 200  # a fifth of the session's 1,000 seconds a call
        seen.append(str(request.body["messages"][-1]["content"]))
        return tool_use_reply([LIST])

    for _ in range(5):
        anthropic_server.enqueue(slow)
    s = session(anthropic_server, workspace, Limits(100, 1000), clock)
    assert s.run("go").stop is Stop.TIME
    assert ["Wrap up now" in text for text in seen] == [False, False, False, False, True]
    assert "used 13 minutes of your 17 minutes" in seen[4]
