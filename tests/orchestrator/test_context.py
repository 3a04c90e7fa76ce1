"""A Worker session that outgrows its model's context window: its work is still gated, and the record says so."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agents.config import AgentConfig
from orchestrator.commands.status import collect
from orchestrator.report.site import build
from orchestrator.wiring import served_window
from state.history import cached_share
from tests.orchestrator.harness import Project, config_text, evaluation, strategy
from tests.standin.anthropic_server import RecordedRequest, Reply, error_reply, text_reply, tool_use_reply
from tests.standin.openai_server import OpenAIStandin

TOO_LONG = error_reply(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")
EDIT = ("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})


def test_a_session_refused_for_its_length_lands_its_gated_work_as_context(project: Project) -> None:
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", tool_use_reply([("list_files", {})]), tool_use_reply([EDIT]), TOO_LONG, TOO_LONG)
    project.agents.add("summarizer", text_reply("Goal: close Book.hard. Done: simp closes it."))
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    assert record.outcome == "accepted" and record.worker_stop == "context"
    assert record.post_sorry_count == record.pre_sorry_count - 1  # the edit the session made, gated and landed
    ctx = record.worker_context
    assert ctx is not None and (ctx.turns, ctx.compactions) == (2, 1)
    assert record.usage["worker"].output > 0


def test_a_refusal_of_another_kind_mid_session_keeps_the_work(project: Project) -> None:
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", tool_use_reply([EDIT]),
                       error_reply(400, "invalid_request_error", "messages.3: something the API did not accept"))
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    assert record.outcome == "accepted" and record.worker_stop == "refused"
    assert record.post_sorry_count == record.pre_sorry_count - 1


def test_the_share_of_input_read_from_the_cache_is_in_status_and_on_the_dashboard(project: Project,
                                                                                   tmp_path: Path) -> None:
    cached = {"input_tokens": 100, "cache_read_input_tokens": 2_700, "cache_creation_input_tokens": 200}
    project.agents.add("planner", text_reply(strategy("Book/A.lean"), usage=cached))
    project.agents.add("worker", tool_use_reply([EDIT], usage=cached),
                       tool_use_reply([("finish", {"report": "closed"})], usage=cached))
    project.agents.add("evaluator", text_reply(evaluation(1), usage=cached))
    project.cycle()

    assert cached_share(project.history()) == 0.9
    assert collect(project.repo, datetime.now(UTC))["cached_share"] == 0.9
    html = build(project.repo, tmp_path / "site", datetime.now(UTC)).read_text()
    assert 'data-card="Cached input">90% <small>' in html


def test_an_openai_compatible_worker_uses_the_window_its_server_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    vllm = {"id": "local-model", "object": "model", "owned_by": "vllm", "max_model_len": 32768}
    monkeypatch.setenv("LOCAL_KEY", "local")
    with OpenAIStandin(models=[vllm]) as server:
        worker = AgentConfig(backend="openai", model="local-model", base_url=server.base_url, api_key_env="LOCAL_KEY")
        assert served_window(worker) == 32768
        assert served_window(worker.model_copy(update={"model": "unlisted"})) is None


def test_a_300_turn_session_many_times_its_window_lands_its_gated_change(project: Project) -> None:
    # Every request goes through a 20,000-token window the stand-in enforces; the Worker reads a 50,000-character
    # file 300 times (3.75 million tokens of results), then closes the sorry.
    project.commit_files({"autoformalize.toml": config_text(agents={"worker": {
        "context_tokens": 20_000, "tool_result_chars": 4_000, "keep_tool_results": 3, "max_turns": 400}}),
        "Book/Big.lean": ("-- " + "x" * 96 + "\n") * 500}, "a big file")
    project.server.window = 20_000
    reads = [0]

    def work(request: RecordedRequest) -> Reply:
        reads[0] += 1
        if reads[0] <= 300:
            return tool_use_reply([("read_file", {"path": "Book/Big.lean"})])
        return tool_use_reply([EDIT] if reads[0] == 301 else [("finish", {"report": "closed Book.hard"})])

    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", *[work] * 302)
    project.agents.add("summarizer", *[text_reply("Goal: close Book.hard. Done: read Book/Big.lean.")] * 10)
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    assert record.outcome == "accepted" and record.worker_stop == "finished"
    assert record.post_sorry_count == record.pre_sorry_count - 1
    ctx = record.worker_context
    assert ctx is not None and ctx.turns == 302 and ctx.trims == 300 and ctx.clears > 250 and ctx.compactions >= 1
    assert ctx.peak_input <= 20_000
    assert project.agents.calls["summarizer"] == ctx.compactions
