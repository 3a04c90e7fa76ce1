"""Cost accounting, price overrides, budgets and fallback endpoints, through whole cycles."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from agents.config import BudgetConfig
from agents.ledger import Limit
from orchestrator.cli import main
from orchestrator.cycle import Interrupted, Options, run_cycle
from orchestrator.cyclestate import budget_of
from orchestrator.wiring import check_endpoints, loop_roles
from state.errors import UsageError
from state.history import HistoryRecord, Outcome, append_record
from tests.conftest import git, write
from tests.orchestrator.harness import Project, config_text, evaluation, strategy
from tests.standin.anthropic_server import RecordedRequest, Reply, error_reply, text_reply, tool_use_reply
from tests.standin.openai_server import OpenAIStandin

EDIT = ("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})
OPUS = {"input": 5.0, "output": 25.0, "cache_read": 0.5, "cache_write": 6.25}  # USD per million tokens
SONNET = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}


def configure(project: Project, **sections: dict[str, object]) -> None:
    write(project.repo, {"autoformalize.toml": config_text(**sections)})
    git(project.repo, "commit", "-qam", "config")
    git(project.repo, "push", "-q", "origin", "main")


def priced(usage: dict[str, int], price: dict[str, float]) -> float:
    return sum(usage.get(k, 0) * price[k] for k in price) / 1e6


def test_usage_and_cost_add_up_across_repair_rounds(project: Project) -> None:
    big = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 5000,
           "cache_creation_input_tokens": 300}
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker",
                       tool_use_reply([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry",
                                                      "new_string": "  exact absurd_marker"})], usage=big),
                       tool_use_reply([("finish", {"report": "done"})], usage=big),
                       tool_use_reply([("edit_file", {"path": "Book/A.lean", "old_string": "  exact absurd_marker",
                                                      "new_string": "  simp"})], usage=big),
                       tool_use_reply([("finish", {"report": "fixed"})], usage=big))
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    worker = record.usage["worker"]
    assert (worker.input, worker.output, worker.cache_read, worker.cache_write) == (4000, 800, 20000, 1200)
    expected_worker = 4 * priced({"input": 1000, "output": 200, "cache_read": 5000, "cache_write": 300}, OPUS)
    assert record.costs["worker"] == pytest.approx(expected_worker)
    assert record.cost_usd == pytest.approx(sum(v for v in record.costs.values() if v is not None))
    assert record.served_by == {"planner": ["anthropic:claude-opus-4-6"], "worker": ["anthropic:claude-opus-4-6"],
                                "evaluator": ["anthropic:claude-sonnet-4-6"]}


def test_a_price_in_the_config_overrides_the_table(project: Project) -> None:
    configure(project, prices={"claude-sonnet-4-6": {"input": 1000.0, "output": 0.0, "cache_read": 0.0,
                                                     "cache_write": 0.0}})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing")
    project.agents.evaluate(evaluation(0))
    record, _ = project.cycle()
    assert record.costs["evaluator"] == pytest.approx(10 * 1000.0 / 1e6)


def test_a_rate_limit_storm_hands_the_call_to_the_fallback_and_the_record_says_so(project: Project) -> None:
    configure(project, agents={"planner": {"model": "claude-opus-4-6",
                                           "fallbacks": [{"backend": "anthropic", "model": "claude-sonnet-4-6"}]}})
    storm = [error_reply(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"}) for _ in range(6)]
    project.agents.add("planner", *storm)  # the primary's six attempts
    project.agents.plan(strategy("Book/A.lean"))  # answered for the fallback
    project.agents.work("nothing")
    project.agents.evaluate(evaluation(0))

    record, _ = project.cycle()

    assert record.outcome == "no_change"
    assert record.served_by["planner"] == ["anthropic:claude-sonnet-4-6"]
    assert record.costs["planner"] == pytest.approx(priced({"input": 10, "output": 5}, SONNET))
    planner_requests = project.agents.requests["planner"]
    assert [r.body["model"] for r in planner_requests] == ["claude-opus-4-6"] * 6 + ["claude-sonnet-4-6"]


def test_the_cycle_budget_ends_the_worker_and_its_work_is_still_gated(project: Project) -> None:
    configure(project, budget={"per_cycle_usd": 1.0})
    expensive = {"input_tokens": 150_000, "output_tokens": 10}  # $0.75 on Opus
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", tool_use_reply([EDIT], usage=expensive))  # the next call could cross $1.00
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    assert record.worker_stop == "budget" and record.outcome == "accepted"
    assert project.agents.calls["worker"] == 1
    assert "per_cycle_usd" in (project.repo / ".prover-state/task_results/cycle_001.md").read_text()


def test_the_day_budget_counts_what_earlier_cycles_spent_today(project: Project) -> None:
    configure(project, budget={"per_day_usd": 5.0})
    history = project.repo / ".prover-state/history.jsonl"
    append_record(history, HistoryRecord(cycle=1, outcome=Outcome.ACCEPTED, cost_usd=4.99,
                                         finished_at=datetime.now(UTC)))
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-qm", "spent today")
    git(project.repo, "push", "-q", "origin", "main")

    record, cycle = project.cycle()

    assert record.outcome == "error" and cycle.ledger.refused is Limit.DAY and "per_day_usd" in (record.error or "")
    assert project.agents.calls["planner"] == 0


def test_cycle_does_nothing_once_today_is_spent(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, budget={"per_day_usd": 5.0})
    append_record(project.repo / ".prover-state/history.jsonl",
                  HistoryRecord(cycle=1, outcome=Outcome.ACCEPTED, costs={"planner": 5.0, "evaluator": None},
                                finished_at=datetime.now(UTC)))
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-qm", "spent today")
    head = project.head()
    assert main(["cycle", "--repo", str(project.repo)]) == 0  # a scheduled job is not a failure
    assert "Today's budget is spent ($5.00 of [budget] per_day_usd $5.00)" in capsys.readouterr().out
    assert project.server.requests == [] and project.head() == head


def test_a_price_is_found_under_the_configured_name_when_the_server_answers_a_dated_one(
        project: Project, openai_server: OpenAIStandin) -> None:
    configure(project, agents={"evaluator": {"backend": "openai", "model": "gpt-4o-mini",
                                             "base_url": openai_server.base_url, "api_key_env": "TEST_OPENAI_KEY"}},
              prices={"gpt-4o-mini": {"input": 0.15, "output": 0.6, "cache_read": 0.075, "cache_write": 0.0}})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing")
    openai_server.enqueue_text(evaluation(0), model="gpt-4o-mini-2024-07-18",
                               usage={"prompt_tokens": 1000, "completion_tokens": 100})
    record, _ = project.cycle()
    assert record.costs["evaluator"] == pytest.approx((1000 * 0.15 + 100 * 0.6) / 1e6)
    assert record.served_by["evaluator"] == ["openai:gpt-4o-mini-2024-07-18"]


def test_a_budget_with_an_unpriced_model_is_refused_before_anything_runs(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, agents={"evaluator": {"backend": "openai", "model": "local-qwen",
                                             "api_key_env": "ANTHROPIC_API_KEY"}}, budget={"total_usd": 10.0})
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert ('a [budget] is set but these models have no known price: local-qwen (the evaluator); add '
            '[prices."<model>"]') in capsys.readouterr().err
    assert project.server.requests == []


def test_the_budgets_count_the_known_part_of_a_partly_priced_cycle(project: Project) -> None:
    records = [HistoryRecord(cycle=1, outcome=Outcome.ACCEPTED, costs={"planner": 1.2, "evaluator": None},
                             finished_at=datetime.now(UTC))]
    budget = budget_of(BudgetConfig(total_usd=1.0), records, datetime.now(UTC))
    assert records[0].cost_usd is None and budget.total_usd == pytest.approx(1.2) and budget.today_usd == 1.2
    assert budget.tightest(0.0) == (Limit.TOTAL, pytest.approx(-0.2))


def test_the_spend_of_a_cycle_that_never_landed_is_recorded_and_counted(project: Project) -> None:
    configure(project, budget={"total_usd": 1.0})
    stop = threading.Event()

    def worker_then_stop(request: RecordedRequest) -> Reply:
        stop.set()  # SIGTERM arrives while the Worker's expensive call is in flight
        return tool_use_reply([EDIT], usage={"input_tokens": 150_000, "output_tokens": 0})  # $0.75

    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", worker_then_stop)
    with pytest.raises(Interrupted):
        run_cycle(project.repo, project.config, project.deps(), Options(stop=stop))
    project.agents.add("planner", text_reply(strategy("Book/A.lean"), usage={"input_tokens": 60_000}))  # $0.30

    record, cycle = project.cycle()

    interrupted = project.history()[0]
    assert interrupted.outcome == "interrupted" and interrupted.costs["worker"] == pytest.approx(0.75)
    assert interrupted.usage["worker"].input == 150_000 and interrupted.cost_usd == pytest.approx(0.75 + 0.000175)
    # $0.75 + $0.30 leaves the Worker no room under the $1.00 total:
    assert record.worker_stop == "budget" and cycle.ledger.refused is Limit.TOTAL


def test_anthropic_auth_token_satisfies_the_credential_check(project: Project,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "bearer-token")
    check_endpoints(project.config, loop_roles(project.config))
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN")
    with pytest.raises(UsageError, match="not set: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"):
        check_endpoints(project.config, loop_roles(project.config))


def test_settings_a_claude_code_session_would_ignore_are_refused(project: Project,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, agents={"worker": {"backend": "claude-code", "model": "claude-opus-4-6",
                                          "fallbacks": [{"backend": "openai", "model": "deepseek-chat"}]}})
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert "a claude-code session cannot fall back to another endpoint" in capsys.readouterr().err
    configure(project, agents={"evaluator": {"backend": "claude-code", "model": "claude-opus-4-6",
                                             "api_key_env": "MY_KEY"}})
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert "a claude-code endpoint takes no base_url or api_key_env" in capsys.readouterr().err


def test_cycle_refuses_with_exit_1_once_the_total_budget_is_spent(project: Project,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, budget={"total_usd": 2.0})
    append_record(project.repo / ".prover-state/history.jsonl",
                  HistoryRecord(cycle=1, outcome=Outcome.ACCEPTED, cost_usd=2.5))
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-qm", "spent")
    assert main(["cycle", "--repo", str(project.repo)]) == 1
    assert "the total budget is spent: $2.50 of [budget] total_usd $2.00" in capsys.readouterr().err
    assert project.server.requests == []


def test_status_shows_tokens_by_role_and_the_budget(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, budget={"total_usd": 50.0})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing")
    project.agents.evaluate(evaluation(0))
    project.cycle()
    capsys.readouterr()
    assert main(["status", "--json", "--repo", str(project.repo)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["tokens_by_role"]["planner"] == {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0}
    assert status["budget"]["total_usd"] == 50.0
    assert main(["status", "--repo", str(project.repo)]) == 0
    human = capsys.readouterr().out
    assert "tokens     planner: 10 in, 0 cached, 5 out" in human and "budget     total $50.00" in human




@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStandin]:
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-openai-test-key")
    with OpenAIStandin(api_key="sk-openai-test-key") as server:
        yield server


def test_an_overloaded_anthropic_planner_falls_back_to_an_openai_compatible_server(
        project: Project, openai_server: OpenAIStandin) -> None:
    configure(project, agents={"planner": {"model": "claude-opus-4-6", "fallbacks": [
        {"backend": "openai", "model": "gpt-oss-120b", "base_url": openai_server.base_url,
         "api_key_env": "TEST_OPENAI_KEY"}]}})
    project.agents.add("planner", *[error_reply(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})
                                    for _ in range(6)])
    openai_server.enqueue_text(strategy("Book/A.lean"))
    project.agents.work("nothing")
    project.agents.evaluate(evaluation(0))

    record, _ = project.cycle()

    assert record.outcome == "no_change" and record.served_by["planner"] == ["openai:gpt-oss-120b"]
    assert record.costs["planner"] is None and record.cost_usd is None  # no known price: null, not 0
    assert openai_server.last_body["messages"][0]["content"].startswith("You are the Planner")


def test_a_role_on_an_openai_compatible_server(project: Project, openai_server: OpenAIStandin) -> None:
    configure(project, agents={"evaluator": {"backend": "openai", "model": "qwen2.5-72b-instruct",
                                             "base_url": openai_server.base_url, "api_key_env": "TEST_OPENAI_KEY"}},
              prices={"qwen2.5-72b-instruct": {"input": 1.0, "output": 2.0, "cache_read": 0.1,
                                               "cache_write": 0.0}})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing")
    openai_server.enqueue_text(evaluation(-1, summary="nothing happened"),
                               usage={"prompt_tokens": 1000, "completion_tokens": 100, "cached_tokens": 400})

    record, _ = project.cycle()

    assert record.summary == "nothing happened" and record.progress_score == -1
    usage = record.usage["evaluator"]
    assert (usage.input, usage.cache_read, usage.output) == (600, 400, 100)
    assert record.costs["evaluator"] == pytest.approx((600 * 1.0 + 400 * 0.1 + 100 * 2.0) / 1e6)


def test_a_missing_claude_cli_is_an_infrastructure_error(project: Project) -> None:
    configure(project, agents={"worker": {"backend": "claude-code", "model": "claude-test-1",
                                          "cli_path": "/nonexistent/claude"}})
    project.agents.plan(strategy("Book/A.lean"))

    record, cycle = project.cycle()

    assert record.outcome == "error" and cycle.infra
    assert "claude" in (record.error or "") and project.agents.calls["evaluator"] == 0


def test_a_worker_on_an_openai_compatible_server_uses_the_same_tools(project: Project,
                                                                     openai_server: OpenAIStandin) -> None:
    configure(project, agents={"worker": {"backend": "openai", "model": "deepseek-chat",
                                          "base_url": openai_server.base_url, "api_key_env": "TEST_OPENAI_KEY"}})
    project.agents.plan(strategy("Book/A.lean"))
    openai_server.enqueue_tool_calls([EDIT], usage={"prompt_tokens": 500, "completion_tokens": 20})
    openai_server.enqueue_tool_calls([("lean_check", {"path": "Book/A.lean"})])
    openai_server.enqueue_tool_calls([("finish", {"report": "closed Book.hard with simp"})])
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    assert record.outcome == "accepted" and record.served_by["worker"] == ["openai:deepseek-chat"]
    assert project.show("HEAD", "Book/A.lean").count("simp") == 1
    tool_messages = [m for m in openai_server.last_body["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"].startswith("ok: 0 error(s)")  # lean_check's answer went back


@pytest.mark.parametrize("name", ["prover", "library"])
def test_a_configured_server_may_not_take_a_name_the_product_serves(project: Project, name: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, agents={"worker": {"backend": "claude-code", "model": "claude-opus-4-6",
                                          "mcp_servers": {name: {"command": "true"}}}})
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert f"the MCP server name {name!r} is taken by" in capsys.readouterr().err
