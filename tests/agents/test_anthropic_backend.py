"""AnthropicModel through the real `anthropic` SDK, against the scripted Messages API stand-in."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from structlog.testing import capture_logs

from agents.backends.anthropic import STREAM_FROM_MAX_TOKENS, AnthropicModel
from agents.model import (
    ContextTooLong,
    Message,
    ModelRejected,
    ModelUnavailable,
    Reply,
    StopReason,
    System,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from state.history import Usage
from tests.agents.conftest import FAKE_KEY
from tests.standin.anthropic_server import AnthropicStandin, RecordedRequest, text_reply, tool_use_reply

MODEL = "claude-test-1"
SYSTEM = System(stable="You formalize textbooks in Lean 4.", volatile="Cycle 7: chapter 2.")
TOOLS = [
    ToolSpec("read_file", "Read a file of the repository.",
             {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ToolSpec("build", "Build the Lean project.", {"type": "object", "properties": {}}),
]
ASK = Message("user", "Prove double_pos.")
PLAIN, STREAMED = 1024, STREAM_FROM_MAX_TOKENS


def make_model(server: AnthropicStandin, **options: Any) -> AnthropicModel:
    settings: dict[str, Any] = {"api_key": server.api_key, "base_url": server.base_url, "backoff_base_s": 0.0,
                                "backoff_max_s": 0.0, **options}
    return AnthropicModel(MODEL, settings.pop("timeout_s", 5.0), **settings)


def cache_marks(body: dict[str, Any]) -> list[str]:
    """Where the request puts cache_control, as paths like `system.0` or `messages.2.content.1`."""
    marks = [f"system.{i}" for i, b in enumerate(body.get("system", [])) if "cache_control" in b]
    marks += [f"tools.{i}" for i, t in enumerate(body.get("tools", [])) if "cache_control" in t]
    marks += [f"messages.{i}.content.{j}" for i, m in enumerate(body["messages"])
              for j, b in enumerate(m["content"]) if "cache_control" in b]
    return marks


# --- replies -------------------------------------------------------------------------------------------------------


def test_plain_reply_carries_text_usage_stop_and_model(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_text("The lemma follows from two_mul.", model="claude-test-1-20260101", usage={
        "input_tokens": 120, "output_tokens": 9, "cache_read_input_tokens": 2048, "cache_creation_input_tokens": 64})

    reply = make_model(anthropic_server).send(SYSTEM, [ASK], max_tokens=PLAIN)

    assert reply == Reply(text="The lemma follows from two_mul.", tool_calls=[],
                          usage=Usage(input=120, output=9, cache_read=2048, cache_write=64), stop=StopReason.END,
                          model="claude-test-1-20260101")
    request = anthropic_server.last
    assert not request.streamed
    assert request.body["model"] == MODEL and request.body["max_tokens"] == PLAIN
    assert request.body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Prove double_pos.", "cache_control": {"type": "ephemeral"}}]}]


@pytest.mark.parametrize("stop_reason, stop", [("max_tokens", StopReason.MAX_TOKENS), ("refusal", StopReason.OTHER),
                                               ("stop_sequence", StopReason.END)])
def test_stop_reasons_are_mapped(anthropic_server: AnthropicStandin, stop_reason: str, stop: StopReason) -> None:
    anthropic_server.enqueue_text("cut", stop_reason=stop_reason)
    assert make_model(anthropic_server).send(SYSTEM, [ASK], max_tokens=PLAIN).stop is stop


@pytest.mark.parametrize("reply", [
    text_reply("A longer answer, streamed in pieces.", usage={"input_tokens": 50, "output_tokens": 12,
                                                              "cache_read_input_tokens": 7}),
    tool_use_reply([("read_file", {"path": "Book/Basic.lean", "lines": [1, 20]}), ("build", {})],
                   text="Reading first.", usage={"output_tokens": 40, "cache_creation_input_tokens": 300}),
], ids=["text", "tool_use"])
def test_streamed_reply_equals_plain_reply(anthropic_server: AnthropicStandin, reply: Any) -> None:
    anthropic_server.enqueue(reply)
    anthropic_server.enqueue(reply)
    model = make_model(anthropic_server)

    plain = model.send(SYSTEM, [ASK], TOOLS, max_tokens=PLAIN)
    streamed = model.send(SYSTEM, [ASK], TOOLS, max_tokens=STREAMED)

    assert streamed == plain
    assert [r.streamed for r in anthropic_server.requests] == [False, True]
    assert plain.usage.output == reply.usage["output_tokens"]


# --- tools ---------------------------------------------------------------------------------------------------------


def echo_tool_results(request: RecordedRequest) -> Any:
    """Answers with the tool results the request carried, as `id:is_error:content` lines."""
    blocks = request.body["messages"][-1]["content"]
    return text_reply("\n".join(f"{b['tool_use_id']}:{b['is_error']}:{b['content']}" for b in blocks
                                if b["type"] == "tool_result"))


def test_tool_use_round_trip_sends_results_back_under_the_call_ids(anthropic_server: AnthropicStandin) -> None:
    ids = anthropic_server.enqueue_tool_use([("read_file", {"path": "Book/Basic.lean"}), ("build", {})],
                                            text="Let me look.")
    anthropic_server.enqueue(echo_tool_results)
    model = make_model(anthropic_server)

    first = model.send(SYSTEM, [ASK], TOOLS, max_tokens=PLAIN)
    assert first.stop is StopReason.TOOL_USE and first.text == "Let me look."
    assert first.tool_calls == [ToolCall(ids[0], "read_file", {"path": "Book/Basic.lean"}),
                                ToolCall(ids[1], "build", {})]

    results = Message("user", tool_results=(ToolResult(ids[0], "theorem double_pos ..."),
                                            ToolResult(ids[1], "error: unknown identifier", is_error=True)))
    second = model.send(SYSTEM, [ASK, first.as_message(), results], TOOLS, max_tokens=PLAIN)

    assert second.text == f"{ids[0]}:False:theorem double_pos ...\n{ids[1]}:True:error: unknown identifier"
    sent = anthropic_server.last_body["messages"]
    assert sent[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": ids[0], "name": "read_file", "input": {"path": "Book/Basic.lean"}},
        {"type": "tool_use", "id": ids[1], "name": "build", "input": {}}]}
    assert [(b["type"], b["tool_use_id"], b["is_error"]) for b in sent[2]["content"]] == [
        ("tool_result", ids[0], False), ("tool_result", ids[1], True)]


def test_cache_breakpoints_on_stable_system_last_tool_and_last_user_block(anthropic_server: AnthropicStandin) -> None:
    ids = anthropic_server.enqueue_tool_use([("build", {})])
    anthropic_server.enqueue_text("Done.")
    model = make_model(anthropic_server)
    first = model.send(SYSTEM, [ASK], TOOLS, max_tokens=PLAIN)
    results = Message("user", "Continue.", tool_results=(ToolResult(ids[0], "ok"),))

    model.send(SYSTEM, [ASK, first.as_message(), results], TOOLS, max_tokens=PLAIN)

    body = anthropic_server.last_body
    assert body["system"] == [
        {"type": "text", "text": SYSTEM.stable, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": SYSTEM.volatile}]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "text"]
    assert cache_marks(body) == ["system.0", "tools.1", "messages.2.content.1"]
    assert cache_marks(anthropic_server.requests[0].body) == ["system.0", "tools.1", "messages.0.content.0"]


def test_system_without_volatile_part_and_no_tools(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_text("ok")
    make_model(anthropic_server).send(System("Rules."), [ASK], max_tokens=PLAIN)
    body = anthropic_server.last_body
    assert body["system"] == [{"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}}]
    assert "tools" not in body


def test_same_role_messages_merge_with_tool_results_first(anthropic_server: AnthropicStandin) -> None:
    ids = anthropic_server.enqueue_tool_use([("build", {})])
    anthropic_server.enqueue_text("ok")
    model = make_model(anthropic_server)
    first = model.send(SYSTEM, [ASK, Message("user", "Chapter 2 only.")], TOOLS, max_tokens=PLAIN)
    conversation = [ASK, Message("user", "Chapter 2 only."), first.as_message(), Message("assistant", " \n"),
                    Message("user", "Note: the build is slow."),
                    Message("user", tool_results=(ToolResult(ids[0], "ok"),))]

    model.send(SYSTEM, conversation, TOOLS, max_tokens=PLAIN)

    sent = anthropic_server.last_body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [b["type"] for b in sent[0]["content"]] == ["text", "text"]
    assert [b["type"] for b in sent[2]["content"]] == ["tool_result", "text"]


def test_a_user_message_with_tool_calls_is_a_programming_error(anthropic_server: AnthropicStandin) -> None:
    with pytest.raises(ValueError, match="user message cannot carry tool calls"):
        make_model(anthropic_server).send(SYSTEM, [Message("user", "x", tool_calls=(ToolCall("t", "build", {}),))])
    assert anthropic_server.requests == []


# --- failures ------------------------------------------------------------------------------------------------------


def test_rate_limit_waits_as_retry_after_says_then_succeeds(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_error(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit.",
                                   headers={"retry-after": "0"})
    anthropic_server.enqueue_text("ok")
    # a backoff this long would hang the test: only honouring retry-after keeps it quick
    model = make_model(anthropic_server, backoff_base_s=30.0, backoff_max_s=60.0)

    started = time.monotonic()
    reply = model.send(SYSTEM, [ASK], max_tokens=PLAIN)

    assert time.monotonic() - started < 5
    assert reply.text == "ok"
    assert len(anthropic_server.requests) == 2
    assert anthropic_server.requests[0].body == anthropic_server.requests[1].body


@pytest.mark.parametrize("max_tokens", [PLAIN, STREAMED])
def test_overload_storm_exhausts_attempts(anthropic_server: AnthropicStandin, max_tokens: int) -> None:
    for _ in range(3):
        anthropic_server.enqueue_error(529, "overloaded_error", "Overloaded")

    with pytest.raises(ModelUnavailable, match=r"after 3 attempts; last error: HTTP 529 overloaded_error: Overloaded"):
        make_model(anthropic_server, max_attempts=3).send(SYSTEM, [ASK], max_tokens=max_tokens)
    assert len(anthropic_server.requests) == 3


@pytest.mark.parametrize("status, kind", [(500, "api_error"), (503, "api_error"), (408, "timeout_error")])
def test_server_errors_are_retried(anthropic_server: AnthropicStandin, status: int, kind: str) -> None:
    anthropic_server.enqueue_error(status, kind, "try again")
    anthropic_server.enqueue_text("ok")
    assert make_model(anthropic_server).send(SYSTEM, [ASK], max_tokens=PLAIN).text == "ok"
    assert len(anthropic_server.requests) == 2


def test_overload_inside_a_stream_is_retried(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_error(529, "overloaded_error", "Overloaded", in_stream=True)
    anthropic_server.enqueue_text("ok")
    assert make_model(anthropic_server).send(SYSTEM, [ASK], max_tokens=STREAMED).text == "ok"
    assert len(anthropic_server.requests) == 2


def test_slow_answers_time_out_and_are_retried(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_text("late", delay_s=2)
    anthropic_server.enqueue_text("late", delay_s=2)
    with pytest.raises(ModelUnavailable, match=r"after 2 attempts; last error: no answer within the 0.1s timeout"):
        make_model(anthropic_server, timeout_s=0.1, max_attempts=2).send(SYSTEM, [ASK], max_tokens=PLAIN)
    assert len(anthropic_server.requests) == 2


def test_a_stream_that_stalls_is_retried(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_text("late", stall_s=2)
    anthropic_server.enqueue_text("ok")
    reply = make_model(anthropic_server, timeout_s=0.3).send(SYSTEM, [ASK], max_tokens=STREAMED)
    assert reply.text == "ok"
    assert len(anthropic_server.requests) == 2


def test_a_stream_that_trickles_past_the_timeout_is_abandoned_and_retried(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_text("slow but alive", pace_s=0.1)  # 8 events, each read well within the timeout
    anthropic_server.enqueue_text("ok")
    with capture_logs() as events:
        reply = make_model(anthropic_server, timeout_s=0.3).send(SYSTEM, [ASK], max_tokens=STREAMED)
    assert reply.text == "ok"
    assert "the streamed reply ran past the 0.3s timeout" in events[0]["error"]


def test_no_server_gives_unavailable_after_the_attempts() -> None:
    with AnthropicStandin() as gone:
        url = gone.base_url
    model = AnthropicModel(MODEL, 1.0, api_key="k", base_url=url, max_attempts=2, backoff_base_s=0, backoff_max_s=0)
    with pytest.raises(ModelUnavailable, match="after 2 attempts; last error: connection failed"):
        model.send(SYSTEM, [ASK], max_tokens=PLAIN)


@pytest.mark.parametrize("status, kind", [(401, "authentication_error"), (403, "permission_error")])
def test_a_refused_key_is_rejected_at_once(anthropic_server: AnthropicStandin, status: int, kind: str) -> None:
    anthropic_server.enqueue_error(status, kind, "invalid x-api-key")
    with pytest.raises(ModelRejected, match=rf"rejected the key \(HTTP {status} {kind}: invalid x-api-key"):
        make_model(anthropic_server).send(SYSTEM, [ASK], max_tokens=PLAIN)
    assert len(anthropic_server.requests) == 1


def test_a_bad_request_is_rejected_with_the_api_message(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_error(400, "invalid_request_error", "max_tokens: 999999 > 64000, the maximum")
    with pytest.raises(ModelRejected, match="max_tokens: 999999 > 64000, the maximum"):
        make_model(anthropic_server).send(SYSTEM, [ASK], max_tokens=PLAIN)
    assert len(anthropic_server.requests) == 1


def test_a_request_longer_than_the_window_is_told_apart() -> None:
    with AnthropicStandin(api_key=FAKE_KEY, window=50) as server:
        with pytest.raises(ContextTooLong, match=r"context window .*prompt is too long: \d+ tokens > 50 maximum"):
            AnthropicModel(MODEL, 5.0, api_key=FAKE_KEY, base_url=server.base_url).send(SYSTEM, [ASK] * 20,
                                                                                  max_tokens=PLAIN)
        assert len(server.requests) == 1 and server.pending == 0  # refused at once, never retried
    with AnthropicStandin(api_key=FAKE_KEY) as server:
        server.enqueue_error(400, "invalid_request_error", "max_tokens: 999999 > 64000, the maximum")
        with pytest.raises(ModelRejected) as caught:
            AnthropicModel(MODEL, 5.0, api_key=FAKE_KEY, base_url=server.base_url).send(SYSTEM, [ASK], max_tokens=PLAIN)
        assert not isinstance(caught.value, ContextTooLong)


# --- credentials and configuration ---------------------------------------------------------------------------------


def test_a_missing_key_is_rejected_before_any_request(anthropic_server: AnthropicStandin) -> None:
    with pytest.raises(ModelRejected, match="ANTHROPIC_API_KEY"):
        AnthropicModel(MODEL, 5.0, base_url=anthropic_server.base_url)
    assert anthropic_server.requests == []


def test_key_and_base_url_come_from_the_environment(anthropic_server: AnthropicStandin,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert anthropic_server.api_key is not None
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_server.api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
    anthropic_server.enqueue_text("from the environment")

    reply = AnthropicModel(MODEL, 5.0).send(SYSTEM, [ASK], max_tokens=PLAIN)

    assert reply.text == "from the environment"  # the stand-in answers 401 to any other key


def test_each_call_logs_one_event_with_model_attempt_tokens_and_duration(anthropic_server: AnthropicStandin) -> None:
    anthropic_server.enqueue_error(429, "rate_limit_error", "slow down", headers={"retry-after": "0"})
    anthropic_server.enqueue_text("ok", usage={"input_tokens": 30, "output_tokens": 4, "cache_read_input_tokens": 9})

    with capture_logs() as events:
        make_model(anthropic_server).send(SYSTEM, [ASK], max_tokens=PLAIN)

    retry, call = events
    assert retry["event"] == "model.retry" and retry["attempt"] == 1 and "HTTP 429" in retry["error"]
    assert retry["wait_s"] == 0
    assert call["event"] == "model.call" and call["log_level"] == "info"
    assert {k: call[k] for k in ("model", "attempt", "input_tokens", "output_tokens", "cache_read_tokens")} == {
        "model": MODEL, "attempt": 2, "input_tokens": 30, "output_tokens": 4, "cache_read_tokens": 9}
    assert call["duration_s"] >= 0


def test_the_key_appears_in_no_message_and_no_log(anthropic_server: AnthropicStandin, caplog: pytest.LogCaptureFixture,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    key = anthropic_server.api_key
    assert key is not None
    caplog.set_level(logging.DEBUG)  # the SDK's and httpx2's debug logging too
    model = make_model(anthropic_server, max_attempts=2)
    anthropic_server.enqueue_error(429, "rate_limit_error", "slow down", headers={"retry-after": "0"})
    anthropic_server.enqueue_text("ok")
    anthropic_server.enqueue_error(401, "authentication_error", "invalid x-api-key")
    anthropic_server.enqueue_error(529, "overloaded_error", "Overloaded")
    anthropic_server.enqueue_error(529, "overloaded_error", "Overloaded")
    anthropic_server.enqueue_error(400, "invalid_request_error", f"key {key} is malformed")  # an echoing server

    model.send(SYSTEM, [ASK], max_tokens=PLAIN)
    errors: list[BaseException] = []
    for expected in (ModelRejected, ModelUnavailable, ModelRejected):
        with pytest.raises(expected) as caught:
            model.send(SYSTEM, [ASK], max_tokens=PLAIN)
        errors.append(caught.value)

    assert "[redacted] is malformed" in str(errors[-1])
    for error in errors[:-1]:  # the SDK's own errors behind ours too (the echoing one quotes the body verbatim)
        chained: BaseException | None = error
        while chained is not None:
            assert key not in str(chained)
            chained = chained.__cause__
    assert key not in str(errors[-1])
    out, err = capsys.readouterr()
    assert key not in out + err + caplog.text
    assert "model.call" in out + err + caplog.text  # the log went somewhere we looked
