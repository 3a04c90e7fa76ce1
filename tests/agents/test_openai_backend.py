"""OpenAIModel through the real `openai` SDK, against the scripted Chat Completions stand-in."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from structlog.testing import capture_logs

from agents.backends.openai import ERROR_PREFIX, STREAM_FROM_MAX_TOKENS, OpenAIModel
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
from agents.tools import Workspace
from gates.build import LakeCompiler
from gates.config import BuildConfig
from state.history import Usage
from tests.conftest import sandbox
from tests.standin.openai_server import OpenAIStandin, RecordedRequest, text_reply, tool_call_reply

FAKE_KEY = "sk-proj-test-Hq4RmT8wN2-never-print-me"
"""The key the stand-in expects: distinctive, so a leak into a message or log is easy to spot."""
MODEL = "gpt-test-1"
SYSTEM = System(stable="You formalize textbooks in Lean 4.", volatile="Cycle 7: chapter 2.")
TOOLS = [
    ToolSpec("read_file", "Read a file of the repository.",
             {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ToolSpec("build", "Build the Lean project.", {"type": "object", "properties": {}}),
]
ASK = Message("user", "Prove double_pos.")
PLAIN, STREAMED = 1024, STREAM_FROM_MAX_TOKENS


@pytest.fixture(autouse=True)
def no_openai_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The developer's key, base URL, organisation or SDK logging must not reach a test, or a test's output."""
    for name in list(os.environ):
        if name.startswith("OPENAI_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def openai_server() -> Iterator[OpenAIStandin]:
    """A started stand-in that requires `FAKE_KEY`; the test fails if it asked for more than was scripted."""
    with OpenAIStandin(api_key=FAKE_KEY) as server:
        yield server
        assert not server.ran_out, f"the stand-in's script ran out {server.ran_out} time(s); enqueue more replies"


def make_model(server: OpenAIStandin, **options: Any) -> OpenAIModel:
    settings: dict[str, Any] = {"api_key": server.api_key, "base_url": server.base_url, "backoff_base_s": 0.0,
                                "backoff_max_s": 0.0, **options}
    return OpenAIModel(MODEL, settings.pop("timeout_s", 5.0), **settings)


# --- replies -------------------------------------------------------------------------------------------------------


def test_plain_reply_carries_text_usage_stop_and_model(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_text("The lemma follows from two_mul.", model="gpt-test-1-2026-01-01",
                               usage={"prompt_tokens": 2168, "completion_tokens": 9, "cached_tokens": 2048})

    reply = make_model(openai_server).send(SYSTEM, [ASK], max_tokens=PLAIN)

    assert reply == Reply(text="The lemma follows from two_mul.", tool_calls=[],
                          usage=Usage(input=120, output=9, cache_read=2048, cache_write=0), stop=StopReason.END,
                          model="gpt-test-1-2026-01-01")
    request = openai_server.last
    assert not request.streamed and request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert request.body == {"model": MODEL, "max_tokens": PLAIN, "messages": [
        {"role": "system", "content": f"{SYSTEM.stable}\n\n{SYSTEM.volatile}"},
        {"role": "user", "content": "Prove double_pos."}]}


@pytest.mark.parametrize("finish_reason, stop", [("length", StopReason.MAX_TOKENS),
                                                 ("content_filter", StopReason.OTHER), ("stop", StopReason.END)])
def test_finish_reasons_are_mapped(openai_server: OpenAIStandin, finish_reason: str, stop: StopReason) -> None:
    openai_server.enqueue_text("cut", finish_reason=finish_reason)
    assert make_model(openai_server).send(SYSTEM, [ASK], max_tokens=PLAIN).stop is stop


def test_tool_calls_finished_with_stop_still_ask_for_tool_results(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_tool_calls([("build", {})], finish_reason="stop")  # what some compatible servers send
    reply = make_model(openai_server).send(SYSTEM, [ASK], TOOLS, max_tokens=PLAIN)
    assert reply.stop is StopReason.TOOL_USE and [c.name for c in reply.tool_calls] == ["build"]


@pytest.mark.parametrize("reply", [
    text_reply("A longer answer, streamed in pieces.", usage={"prompt_tokens": 57, "completion_tokens": 12,
                                                              "cached_tokens": 7}),
    tool_call_reply([("read_file", {"path": "Book/Basic.lean", "lines": [1, 20]}), ("build", {})],
                    text="Reading first.", usage={"completion_tokens": 40}),
], ids=["text", "tool_calls"])
def test_streamed_reply_equals_plain_reply(openai_server: OpenAIStandin, reply: Any) -> None:
    openai_server.enqueue(reply)
    openai_server.enqueue(reply)
    model = make_model(openai_server)

    plain = model.send(SYSTEM, [ASK], TOOLS, max_tokens=PLAIN)
    streamed = model.send(SYSTEM, [ASK], TOOLS, max_tokens=STREAMED)

    assert streamed == plain
    assert plain.usage.output == reply.usage["completion_tokens"]
    first, second = openai_server.requests
    assert not first.streamed and "stream_options" not in first.body
    assert second.streamed and second.body["stream_options"] == {"include_usage": True}
    assert second.body["max_tokens"] == STREAMED


def test_streamed_tool_call_arguments_split_over_chunks_are_reassembled(openai_server: OpenAIStandin) -> None:
    calls = [("edit_file", {"path": "Book/Basic.lean", "old_string": "sorry", "new_string": "by simp [two_mul]"}),
             ("build", {"target": "Book"})]
    openai_server.enqueue(tool_call_reply(calls))
    # the real SDK shows how the stand-in splits the arguments on the wire
    client = openai.OpenAI(api_key=FAKE_KEY, base_url=openai_server.base_url, max_retries=0)
    pieces: dict[int, list[str]] = {}
    with client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "go"}], stream=True,
                                        stream_options={"include_usage": True}) as stream:
        for chunk in stream:
            for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                if delta.function and delta.function.arguments:
                    pieces.setdefault(delta.index, []).append(delta.function.arguments)
    assert [len(p) for p in pieces.values()] == [2, 2]
    openai_server.enqueue(tool_call_reply(calls))

    reply = make_model(openai_server).send(SYSTEM, [ASK], TOOLS, max_tokens=STREAMED)

    assert [(c.name, c.arguments) for c in reply.tool_calls] == [(name, args) for name, args in calls]
    assert all(c.id.startswith("call_standin") for c in reply.tool_calls)


@pytest.mark.parametrize("max_tokens", [PLAIN, STREAMED])
def test_a_server_that_reports_no_usage_is_logged(openai_server: OpenAIStandin, max_tokens: int) -> None:
    openai_server.enqueue(dataclasses.replace(text_reply("ok"), usage_reported=False))
    with capture_logs() as events:
        reply = make_model(openai_server).send(SYSTEM, [ASK], max_tokens=max_tokens)
    assert reply.text == "ok" and reply.usage == Usage()
    assert [e["event"] for e in events] == ["model.no_usage", "model.call"]


def test_a_stream_that_ends_without_a_finish_reason_is_retried(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_text("The proof goes by indu", finish_reason=None)
    openai_server.enqueue_text("The proof goes by induction.")
    with capture_logs() as events:
        reply = make_model(openai_server).send(SYSTEM, [ASK], max_tokens=STREAMED)
    assert reply.text == "The proof goes by induction."
    assert "the stream ended before the reply said it was finished" in events[0]["error"]


# --- tools ---------------------------------------------------------------------------------------------------------


def echo_tool_results(request: RecordedRequest) -> Any:
    """Answers with the tool messages the request carried, as `id:content` lines."""
    return text_reply("\n".join(f"{m['tool_call_id']}:{m['content']}" for m in request.body["messages"]
                                if m["role"] == "tool"))


def test_tool_call_round_trip_sends_results_back_under_the_call_ids(openai_server: OpenAIStandin) -> None:
    ids = openai_server.enqueue_tool_calls([("read_file", {"path": "Book/Basic.lean"}), ("build", {})],
                                           text="Let me look.")
    openai_server.enqueue(echo_tool_results)
    model = make_model(openai_server)

    first = model.send(SYSTEM, [ASK], TOOLS, max_tokens=PLAIN)
    assert first.stop is StopReason.TOOL_USE and first.text == "Let me look."
    assert first.tool_calls == [ToolCall(ids[0], "read_file", {"path": "Book/Basic.lean"}),
                                ToolCall(ids[1], "build", {})]

    results = Message("user", tool_results=(ToolResult(ids[0], "theorem double_pos ..."),
                                            ToolResult(ids[1], "error: unknown identifier", is_error=True)))
    second = model.send(SYSTEM, [ASK, first.as_message(), results], TOOLS, max_tokens=PLAIN)

    assert second.text == f"{ids[0]}:theorem double_pos ...\n{ids[1]}:{ERROR_PREFIX}error: unknown identifier"
    body = openai_server.last_body
    assert body["messages"][2] == {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"id": ids[0], "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "Book/Basic.lean"}'}},
        {"id": ids[1], "type": "function", "function": {"name": "build", "arguments": "{}"}}]}
    assert body["messages"][3:] == [
        {"role": "tool", "tool_call_id": ids[0], "content": "theorem double_pos ..."},
        {"role": "tool", "tool_call_id": ids[1], "content": "ERROR: error: unknown identifier"}]
    assert body["tools"] == [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.input_schema}} for t in TOOLS]


def test_same_role_messages_merge_and_tool_messages_come_first(openai_server: OpenAIStandin) -> None:
    ids = openai_server.enqueue_tool_calls([("build", {})])
    openai_server.enqueue_text("ok")
    model = make_model(openai_server)
    first = model.send(System("Rules."), [ASK, Message("user", "Chapter 2 only.")], TOOLS, max_tokens=PLAIN)
    conversation = [ASK, Message("user", "Chapter 2 only."), first.as_message(), Message("assistant", " \n"),
                    Message("user", "Note: the build is slow."),
                    Message("user", tool_results=(ToolResult(ids[0], "ok"),))]

    model.send(System("Rules."), conversation, TOOLS, max_tokens=PLAIN)

    sent = openai_server.last_body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[0]["content"] == "Rules."
    assert sent[1]["content"] == "Prove double_pos.\n\nChapter 2 only."
    assert sent[2]["content"] is None and [c["id"] for c in sent[2]["tool_calls"]] == ids
    assert sent[4]["content"] == "Note: the build is slow."


def test_a_user_message_with_tool_calls_is_a_programming_error(openai_server: OpenAIStandin) -> None:
    with pytest.raises(ValueError, match="user message cannot carry tool calls"):
        make_model(openai_server).send(SYSTEM, [Message("user", "x", tool_calls=(ToolCall("t", "build", {}),))])
    assert openai_server.requests == []


@pytest.mark.parametrize("max_tokens", [PLAIN, STREAMED])
def test_malformed_arguments_are_kept_for_the_tool_layer_to_refuse(openai_server: OpenAIStandin, tmp_path: Path,
                                                                   max_tokens: int) -> None:
    raws = ['{"path": "Book/Basic.lean"',  # cut off
            "path=Book/Basic.lean",
            '["Book/Basic.lean"]',  # JSON, but not an object
            ""]  # what some servers send for no arguments
    openai_server.enqueue_tool_calls([("read_file", raw) for raw in raws])

    reply = make_model(openai_server).send(SYSTEM, [ASK], TOOLS, max_tokens=max_tokens)

    assert [c.arguments for c in reply.tool_calls] == [{"_unparsed": raw} for raw in raws[:3]] + [{}]
    compiler = LakeCompiler(tmp_path, BuildConfig(), sandbox())
    workspace = Workspace(tmp_path, ["*.lean"], [], ".prover-state", ["."], compiler)
    for call in reply.tool_calls:
        result = workspace.call(call)
        assert result.is_error and result.content.startswith("bad arguments for read_file"), result


def test_malformed_arguments_go_back_as_valid_json(openai_server: OpenAIStandin) -> None:
    ids = openai_server.enqueue_tool_calls([("read_file", "{oops")])
    openai_server.enqueue_text("Sorry, fixed.")
    model = make_model(openai_server)
    first = model.send(SYSTEM, [ASK], TOOLS, max_tokens=PLAIN)

    model.send(SYSTEM, [ASK, first.as_message(), Message("user", tool_results=(
        ToolResult(ids[0], "bad arguments", is_error=True),))], TOOLS, max_tokens=PLAIN)

    sent = openai_server.last_body["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent) == {"_unparsed": "{oops"}


@pytest.mark.parametrize("body, complaint", [
    ({"messages": [{"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "c1", "content": "x"}]},
     "must be a response to a preceeding message with 'tool_calls'"),
    ({"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "build", "arguments": "{}"}}]},
                   {"role": "tool", "tool_call_id": "c1", "content": "x"},
                   {"role": "tool", "tool_call_id": "c2", "content": "x"}]},
     "'tool_call_id' of 'c2' not found"),
    ({"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "build", "arguments": "{}"}}]},
                   {"role": "user", "content": "and?"}]},
     "did not have response messages: c1"),
    ({"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "build", "arguments": {}}}]}]},
     "expected a string, but got dict"),
    ({"messages": [{"role": "user", "content": "go"}], "stream_options": {"include_usage": True}},
     "only allowed when 'stream' is enabled"),
    ({"messages": [{"role": "user", "content": "go"}], "tools": [{"type": "function", "function": {"name": "a b"}}]},
     "does not match pattern"),
], ids=["tool-without-call", "unknown-call-id", "unanswered-call", "object-arguments", "stream-options", "tool-name"])
def test_the_stand_in_refuses_what_the_api_refuses(openai_server: OpenAIStandin, body: dict[str, Any],
                                                   complaint: str) -> None:
    client = openai.OpenAI(api_key=FAKE_KEY, base_url=openai_server.base_url, max_retries=0)
    with pytest.raises(openai.BadRequestError, match=re.escape(complaint)):
        client.post("/chat/completions", body={"model": MODEL, **body}, cast_to=object)
    assert openai_server.ran_out == 0  # refused before the (empty) script was asked


# --- failures ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("header, value", [("retry-after", "0"), ("retry-after-ms", "20")])
def test_rate_limit_waits_as_retry_after_says_then_succeeds(openai_server: OpenAIStandin, header: str,
                                                            value: str) -> None:
    openai_server.enqueue_error(429, "requests", "Rate limit reached for gpt-test-1 on requests per min (RPM).",
                                code="rate_limit_exceeded", headers={header: value})
    openai_server.enqueue_text("ok")
    # a backoff this long would hang the test: only honouring retry-after keeps it quick
    model = make_model(openai_server, backoff_base_s=30.0, backoff_max_s=60.0)

    started = time.monotonic()
    reply = model.send(SYSTEM, [ASK], max_tokens=PLAIN)

    assert time.monotonic() - started < 5
    assert reply.text == "ok"
    assert len(openai_server.requests) == 2
    assert openai_server.requests[0].body == openai_server.requests[1].body


@pytest.mark.parametrize("max_tokens", [PLAIN, STREAMED])
def test_overload_storm_exhausts_attempts(openai_server: OpenAIStandin, max_tokens: int) -> None:
    for _ in range(3):
        openai_server.enqueue_error(503, "server_error", "The engine is currently overloaded, please try again later.")

    with pytest.raises(ModelUnavailable, match=r"after 3 attempts; last error: HTTP 503 server_error: The engine "
                                               r"is currently overloaded") as caught:
        make_model(openai_server, max_attempts=3).send(SYSTEM, [ASK], max_tokens=max_tokens)
    assert len(openai_server.requests) == 3
    assert openai_server.base_url in str(caught.value)


@pytest.mark.parametrize("status, kind", [(500, "server_error"), (502, "bad_gateway"), (408, "timeout"),
                                          (409, "conflict")])
def test_server_errors_are_retried(openai_server: OpenAIStandin, status: int, kind: str) -> None:
    openai_server.enqueue_error(status, kind, "try again")
    openai_server.enqueue_text("ok")
    assert make_model(openai_server).send(SYSTEM, [ASK], max_tokens=PLAIN).text == "ok"
    assert len(openai_server.requests) == 2


def test_an_error_inside_a_stream_is_retried(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_error(500, "server_error", "The server had an error while processing your request.",
                                in_stream=True)
    openai_server.enqueue_text("ok")
    with capture_logs() as events:
        assert make_model(openai_server).send(SYSTEM, [ASK], max_tokens=STREAMED).text == "ok"
    assert "error inside the stream, server_error: The server had an error" in events[0]["error"]


def test_an_invalid_request_reported_inside_a_stream_is_rejected_at_once(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_error(400, "invalid_request_error", "Invalid 'tools[0].function.parameters'.",
                                in_stream=True)
    with pytest.raises(ModelRejected, match="error inside the stream, invalid_request_error: Invalid 'tools"):
        make_model(openai_server).send(SYSTEM, [ASK], max_tokens=STREAMED)
    assert len(openai_server.requests) == 1


def test_an_exhausted_quota_is_rejected_at_once(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_error(429, "insufficient_quota", "You exceeded your current quota, please check your plan "
                                "and billing details.", code="insufficient_quota")
    with pytest.raises(ModelRejected, match=r"no quota left .* You exceeded your current quota"):
        make_model(openai_server).send(SYSTEM, [ASK], max_tokens=PLAIN)
    assert len(openai_server.requests) == 1


@pytest.mark.parametrize(("kind", "message", "code"), [
    ("invalid_request_error", "This model's maximum context length is 128000 tokens. However, your messages resulted "
     "in 130000 tokens. Please reduce the length of the messages.", "context_length_exceeded"),  # OpenAI
    ("BadRequestError", "This model's maximum context length is 32768 tokens. However, you requested 33792 tokens "
     "(25600 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
     None),  # vLLM
])
def test_a_request_longer_than_the_window_is_told_apart(openai_server: OpenAIStandin, kind: str, message: str,
                                                        code: str | None) -> None:
    openai_server.enqueue_error(400, kind, message, code=code)
    with pytest.raises(ContextTooLong, match="maximum context length"):
        make_model(openai_server).send(SYSTEM, [ASK], max_tokens=PLAIN)
    assert len(openai_server.requests) == 1


def test_slow_answers_time_out_and_are_retried(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_text("late", delay_s=2)
    openai_server.enqueue_text("late", delay_s=2)
    with pytest.raises(ModelUnavailable, match=r"after 2 attempts; last error: no answer within the 0.1s timeout"):
        make_model(openai_server, timeout_s=0.1, max_attempts=2).send(SYSTEM, [ASK], max_tokens=PLAIN)
    assert len(openai_server.requests) == 2


def test_a_stream_that_stalls_is_retried(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_text("late", stall_s=2)
    openai_server.enqueue_text("ok")
    reply = make_model(openai_server, timeout_s=0.3).send(SYSTEM, [ASK], max_tokens=STREAMED)
    assert reply.text == "ok"
    assert len(openai_server.requests) == 2


def test_a_stream_that_trickles_past_the_timeout_is_abandoned_and_retried(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_text("slow but alive", pace_s=0.1)  # 5 chunks, each read well within the timeout
    openai_server.enqueue_text("ok")
    with capture_logs() as events:
        reply = make_model(openai_server, timeout_s=0.3).send(SYSTEM, [ASK], max_tokens=STREAMED)
    assert reply.text == "ok"
    assert "the streamed reply ran past the 0.3s timeout" in events[0]["error"]


def test_no_server_gives_unavailable_after_the_attempts() -> None:
    with OpenAIStandin() as gone:
        url = gone.base_url
    model = OpenAIModel(MODEL, 1.0, api_key="k", base_url=url, max_attempts=2, backoff_base_s=0, backoff_max_s=0)
    with pytest.raises(ModelUnavailable, match="after 2 attempts; last error: connection failed"):
        model.send(SYSTEM, [ASK], max_tokens=PLAIN)


def test_a_wrong_key_is_rejected_at_once(openai_server: OpenAIStandin) -> None:
    model = make_model(openai_server, api_key="sk-wrong-key-0000")
    with pytest.raises(ModelRejected, match=r"rejected the key \(HTTP 401 invalid_api_key: Incorrect API key "
                                            r"provided: sk-\*+0000.*Check that OPENAI_API_KEY"):
        model.send(SYSTEM, [ASK], max_tokens=PLAIN)
    assert len(openai_server.requests) == 1


@pytest.mark.parametrize("status, kind, message", [
    (403, "invalid_request_error", "Project does not have access to model gpt-test-1"),
    (404, "invalid_request_error", "The model `gpt-test-1` does not exist or you do not have access to it."),
    (400, "invalid_request_error", "This model's maximum context length is 128000 tokens."),
])
def test_refusals_are_rejected_at_once_with_the_api_message(openai_server: OpenAIStandin, status: int, kind: str,
                                                            message: str) -> None:
    openai_server.enqueue_error(status, kind, message)
    with pytest.raises(ModelRejected, match=re.escape(f"HTTP {status} {kind}: {message}")):
        make_model(openai_server).send(SYSTEM, [ASK], max_tokens=PLAIN)
    assert len(openai_server.requests) == 1


# --- credentials and configuration ---------------------------------------------------------------------------------


def test_a_missing_key_is_rejected_before_any_request(openai_server: OpenAIStandin,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelRejected, match=r"set OPENAI_API_KEY .* any value"):
        OpenAIModel(MODEL, 5.0, base_url=openai_server.base_url)
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin-test")  # enough for the SDK, useless for chat completions
    with pytest.raises(ModelRejected, match="OPENAI_API_KEY"):
        OpenAIModel(MODEL, 5.0, base_url=openai_server.base_url)
    assert openai_server.requests == []


def test_key_and_base_url_come_from_the_environment(openai_server: OpenAIStandin,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.enqueue_text("from the environment")

    reply = OpenAIModel(MODEL, 5.0).send(SYSTEM, [ASK], max_tokens=PLAIN)

    assert reply.text == "from the environment"  # the stand-in answers 401 to any other key


def test_openai_itself_gets_max_completion_tokens(openai_server: OpenAIStandin,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy"):  # the stand-in answers for api.openai.com, never the real one
        monkeypatch.setenv(name, openai_server.proxy_url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    openai_server.enqueue_text("ok")
    openai_server.enqueue_text("ok")
    model = OpenAIModel(MODEL, 5.0, api_key=FAKE_KEY, base_url="http://api.openai.com/v1")

    model.send(SYSTEM, [ASK], max_tokens=PLAIN)
    model.send(SYSTEM, [ASK], max_tokens=STREAMED)

    assert [r.headers["host"] for r in openai_server.requests] == ["api.openai.com"] * 2
    assert [r.body.get("max_completion_tokens") for r in openai_server.requests] == [PLAIN, STREAMED]
    assert all("max_tokens" not in r.body for r in openai_server.requests)


def test_each_call_logs_one_event_with_model_attempt_tokens_and_duration(openai_server: OpenAIStandin) -> None:
    openai_server.enqueue_error(429, "requests", "slow down", headers={"retry-after": "0"})
    openai_server.enqueue_text("ok", usage={"prompt_tokens": 39, "completion_tokens": 4, "cached_tokens": 9})

    with capture_logs() as events:
        make_model(openai_server).send(SYSTEM, [ASK], max_tokens=PLAIN)

    retry, call = events
    assert retry["event"] == "model.retry" and retry["attempt"] == 1 and "HTTP 429" in retry["error"]
    assert retry["wait_s"] == 0 and retry["backend"] == "openai"
    assert call["event"] == "model.call" and call["log_level"] == "info" and call["backend"] == "openai"
    assert {k: call[k] for k in ("model", "attempt", "input_tokens", "output_tokens", "cache_read_tokens",
                                 "cache_write_tokens")} == {
        "model": MODEL, "attempt": 2, "input_tokens": 30, "output_tokens": 4, "cache_read_tokens": 9,
        "cache_write_tokens": 0}
    assert call["duration_s"] >= 0


def test_the_key_appears_in_no_message_and_no_log(openai_server: OpenAIStandin, caplog: pytest.LogCaptureFixture,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)  # the SDK's and httpx2's debug logging too
    model = make_model(openai_server, max_attempts=2)
    openai_server.enqueue_error(429, "requests", "slow down", headers={"retry-after": "0"})
    openai_server.enqueue_text("ok")
    openai_server.enqueue_error(401, "invalid_request_error", "Incorrect API key provided", code="invalid_api_key")
    openai_server.enqueue_error(503, "server_error", "Overloaded")
    openai_server.enqueue_error(503, "server_error", f"Overloaded, key {FAKE_KEY}")  # an echoing server
    openai_server.enqueue_error(400, "invalid_request_error", f"key {FAKE_KEY} is malformed")

    model.send(SYSTEM, [ASK], max_tokens=PLAIN)
    errors: list[BaseException] = []
    for expected in (ModelRejected, ModelUnavailable, ModelRejected):
        with pytest.raises(expected) as caught:
            model.send(SYSTEM, [ASK], max_tokens=PLAIN)
        errors.append(caught.value)

    assert "Overloaded, key [redacted]" in str(errors[1])
    assert "[redacted] is malformed" in str(errors[2])
    assert all(FAKE_KEY not in str(error) for error in errors)
    chained: BaseException | None = errors[0]
    while chained is not None:  # the SDK's errors behind ours too (those of the echoing server quote it verbatim)
        assert FAKE_KEY not in str(chained)
        chained = chained.__cause__
    out, err = capsys.readouterr()
    assert FAKE_KEY not in out + err + caplog.text
    assert "model.call" in out + err + caplog.text  # the log went somewhere we looked


def test_a_server_enforcing_its_window_refuses_as_openai_does() -> None:
    with OpenAIStandin(api_key=FAKE_KEY, window=50) as server:
        with pytest.raises(ContextTooLong, match=r"maximum context length is 50 tokens. However, your messages "
                                                 r"resulted in \d+ tokens"):
            make_model(server).send(SYSTEM, [ASK] * 20, max_tokens=PLAIN)
        assert len(server.requests) == 1 and server.pending == 0


def test_the_window_is_what_the_server_reports() -> None:
    vllm = {"id": "qwen2.5-72b-instruct", "object": "model", "created": 1732000000, "owned_by": "vllm",
            "root": "Qwen/Qwen2.5-72B-Instruct", "parent": None, "max_model_len": 32768}
    with OpenAIStandin(api_key=FAKE_KEY, models=[vllm]) as server:
        assert OpenAIModel("qwen2.5-72b-instruct", 5, api_key=FAKE_KEY, base_url=server.base_url).window() \
            == 32768
        assert OpenAIModel("another-model", 5, api_key=FAKE_KEY, base_url=server.base_url).window() is None
    with OpenAIStandin(api_key=FAKE_KEY) as server:  # OpenAI's own listing says nothing of windows
        assert OpenAIModel("gpt-5-mini", 5, api_key=FAKE_KEY, base_url=server.base_url).window() is None
        assert OpenAIModel("gpt-5-mini", 5, api_key="wrong", base_url=server.base_url).window() is None
