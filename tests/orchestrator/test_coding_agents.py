"""Whole cycles whose Worker is a real coding agent: Claude Code (the CLI claude-agent-sdk bundles) against the
scripted Anthropic API, and Codex CLI against the scripted Responses API; the Planner and the Evaluator on the
scripted Anthropic API as usual. A proof lands; a cheating edit is refused by the gates; the budget stops a
session; a rate limit pauses the loop and counts as no failure; the Lean server's tools reach the stand-in
lean-lsp-mcp through the relay."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agents.config import LOOP_ROLES
from orchestrator.cli import main
from orchestrator.cycle import Options
from orchestrator.daemon import Limits, run_daemon
from tests.engines import (
    CLAUDE,
    CLAUDE_MODEL,
    CODEX,
    CODEX_MODEL,
    CODEX_PRICE,
    in_working_copy,
    need,
    working_directory,
)
from tests.orchestrator.harness import FAKE_KEY, Project, configure, evaluation, strategy
from tests.standin.anthropic_server import RecordedRequest, Reply, error_reply, text_reply, tool_use_reply
from tests.standin.responses_server import Response, ResponsesStandin, call, error, message, patch, shell

DATA = Path(__file__).resolve().parent.parent / "data" / "lean_lsp"
LSP = Path(__file__).resolve().parent.parent / "standin" / "lean_lsp_server.py"
REPORT = "## Worked on\nBook.hard\n## Result\nclosed by simp"
CODEX_KEY = "sk-codex-test-Qw8Jr4-never-print-me"
CLOSE = ("*** Begin Patch\n*** Update File: Book/A.lean\n@@\n theorem hard (n : ℕ) : n + 0 = n := by\n-  sorry\n"
         "+  simp\n*** End Patch\n")


# --- Claude Code -----------------------------------------------------------------------------------------------------


@pytest.fixture
def claude(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    need("claude", CLAUDE)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    configure(project, agents={"worker": {"backend": "claude-code", "model": CLAUDE_MODEL}})
    return project


def edit(old: str, new: str) -> list[Callable[[RecordedRequest], Reply]]:
    """Claude Code's steps to edit Book/A.lean in its working copy: it edits only a file it has read."""
    return [in_working_copy(("Read", {"file_path": "Book/A.lean"})),
            in_working_copy(("Edit", {"file_path": "Book/A.lean", "old_string": old, "new_string": new}))]


def test_a_claude_code_worker_closes_a_sorry_and_it_lands(claude: Project) -> None:
    claude.agents.plan(strategy("Book/A.lean"))
    claude.agents.add("worker", *edit("  sorry", "  simp"), text_reply(REPORT))
    claude.agents.evaluate(evaluation(1))

    record, cycle = claude.cycle()

    assert record.outcome == "accepted", record.gates
    assert "simp" in claude.show("HEAD", "Book/A.lean") and record.closed == ["Book.hard"]
    assert record.served_by["worker"] == [f"claude-code:{CLAUDE_MODEL}"] and (record.costs["worker"] or 0) > 0
    assert record.worker_stop == "finished" and "closed by simp" in cycle.session.report()  # type: ignore[union-attr]
    assert {name: s.count for name, s in record.tool_calls.items()} == {"Read": 1, "Edit": 1}
    assert claude.clean()


def test_a_claude_code_workers_cheat_is_refused_by_the_gates(claude: Project) -> None:
    cheat = "axiom shortcut : ∀ n : ℕ, n + 0 = n\n\ntheorem hard (n : ℕ) : n + 0 = n := by\n  exact shortcut n"
    claude.agents.plan(strategy("Book/A.lean"))
    claude.agents.add("worker", *edit("theorem hard (n : ℕ) : n + 0 = n := by\n  sorry", cheat), text_reply(REPORT))
    claude.agents.evaluate(evaluation(0))

    record, _ = claude.cycle()

    assert record.outcome == "rejected" and "sorry" in claude.show("HEAD", "Book/A.lean")
    assert any(g.name == "integrity" and not g.passed and "shortcut" in g.detail for g in record.gates)


def test_a_claude_code_worker_is_held_to_what_the_budget_leaves(claude: Project) -> None:
    configure(claude, agents={"worker": {"backend": "claude-code", "model": CLAUDE_MODEL}},
              budget={"per_cycle_usd": 1.0})
    big = {"input_tokens": 120_000, "output_tokens": 0}  # $0.36 a call at the CLI's own price

    def read(request: RecordedRequest) -> Reply:
        return tool_use_reply([("Read", {"file_path": str(working_directory(request) / "Book/A.lean")})], usage=big)

    claude.agents.plan(strategy("Book/A.lean"))
    claude.agents.add("worker", *[read] * 4, text_reply(REPORT))
    claude.agents.evaluate(evaluation(0))

    record, _ = claude.cycle()

    assert record.worker_stop == "budget"  # the CLI stopped itself at what the cycle's budget left it
    assert claude.agents.calls["worker"] == 3 and record.costs["worker"] == pytest.approx(1.08)


def test_a_claude_code_rate_limit_pauses_the_loop_without_failing_or_stalling(
        claude: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("LOOP_KEY", FAKE_KEY)  # the loop's API roles, on a key of their own
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", FAKE_KEY)  # the Worker: a claude.ai login, with a plan's limits
    configure(claude, agents={"worker": {"backend": "claude-code", "model": CLAUDE_MODEL},
                              **{role: {"api_key_env": "LOOP_KEY"} for role in LOOP_ROLES if role != "worker"},
                              "judge": {"api_key_env": "LOOP_KEY"}})
    resets = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    limit = {"anthropic-ratelimit-unified-status": "rejected",
             "anthropic-ratelimit-unified-reset": str(int(resets.timestamp())),
             "anthropic-ratelimit-unified-representative-claim": "five_hour"}
    claude.agents.plan(strategy("Book/A.lean"))
    claude.agents.add("worker", error_reply(429, "rate_limit_error", "usage limit", headers=limit))

    record, _ = claude.cycle()

    assert record.outcome == "no_change" and record.paused and record.paused_until == resets
    assert record.worker_stop == "limited" and "5-hour limit" in (record.error or "")
    assert claude.agents.calls["evaluator"] == 0  # nothing to evaluate: the cycle waits for the limit
    assert main(["cycle", "--repo", str(claude.repo)]) == 0  # a scheduled run does nothing until then
    assert [r.cycle for r in claude.history()] == [1]
    assert main(["status", "--repo", str(claude.repo)]) == 0
    assert f"paused     until {resets.isoformat()[:16]}" in capsys.readouterr().out


def test_a_claude_code_worker_calls_the_lean_servers_tools_through_the_relay(claude: Project) -> None:
    configure(claude, agents={"worker": {"backend": "claude-code", "model": CLAUDE_MODEL, "lean_tools": "lean-lsp-mcp",
                                         "lean_lsp_command": [sys.executable, str(LSP), str(DATA)]}})
    goal = {"file_path": "Book/A.lean", "line": 8}
    claude.agents.plan(strategy("Book/A.lean"))
    claude.agents.work([("mcp__lean_lsp__lean_goal", goal)], [("mcp__lean_lsp__lean_loogle", {"query": "Nat.add"})],
                       REPORT)
    claude.agents.evaluate(evaluation(0))

    record, _ = claude.cycle()

    requests = claude.agents.requests["worker"]
    offered = {t["name"] for t in requests[0].body["tools"]}
    assert {"mcp__lean_lsp__lean_goal", "mcp__lean_lsp__lean_multi_attempt"} <= offered
    assert "mcp__library__lean_goal" not in offered  # the server's goal view stands in for the builtin one
    assert (DATA / "lean_goal.txt").read_text().strip() in results(requests[1])  # the stand-in server's answer
    # A tool the configuration does not allow is not offered: the CLI itself refuses it.
    assert "No such tool available: mcp__lean_lsp__lean_loogle" in results(requests[2])
    assert record.tool_calls["lean_goal"].count == 1


def results(request: RecordedRequest) -> str:
    """The text of every tool result the request carries."""
    out = []
    for sent in request.body["messages"]:
        for block in sent["content"] if isinstance(sent["content"], list) else []:
            if block.get("type") == "tool_result":
                inner = block.get("content")
                out += [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner or []]
    return "\n".join(out)


# --- Codex CLI -------------------------------------------------------------------------------------------------------


@pytest.fixture
def codex_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ResponsesStandin]:
    with ResponsesStandin(api_key=CODEX_KEY) as standin:
        monkeypatch.setenv("TEST_CODEX_KEY", CODEX_KEY)
        yield standin
        assert not standin.ran_out, f"the Responses script ran out {standin.ran_out} time(s)"


def codex_worker(server: ResponsesStandin, **extra: object) -> dict[str, object]:
    return {"backend": "codex", "model": CODEX_MODEL, "base_url": server.base_url, "api_key_env": "TEST_CODEX_KEY",
            "cli_path": CODEX, **extra}


@pytest.fixture
def codex(project: Project, codex_server: ResponsesStandin) -> Project:
    need("codex", CODEX)
    configure(project, agents={"worker": codex_worker(codex_server)}, prices={CODEX_MODEL: CODEX_PRICE})
    return project


def test_a_codex_worker_closes_a_sorry_and_it_lands(codex: Project, codex_server: ResponsesStandin) -> None:
    codex.agents.plan(strategy("Book/A.lean"))
    codex_server.enqueue(patch(CLOSE, usage={"input_tokens": 1000, "cached_tokens": 600, "output_tokens": 50}),
                         shell("lake env lean Book/A.lean"), message(REPORT))
    codex.agents.evaluate(evaluation(1))

    record, cycle = codex.cycle()

    assert record.outcome == "accepted", record.gates
    assert "simp" in codex.show("HEAD", "Book/A.lean") and record.closed == ["Book.hard"]
    assert record.served_by["worker"] == [f"codex:{CODEX_MODEL}"]
    worker = record.usage["worker"]
    assert (worker.input, worker.cache_read) == (400 + 2 * 60, 600 + 2 * 40)  # the three answers' usage
    assert record.costs["worker"] == pytest.approx((520 * 1.25 + 680 * 0.125 + 90 * 10.0) / 1e6)  # at [prices]
    assert {name: s.count for name, s in record.tool_calls.items()} == {"apply_patch": 1, "shell": 1}
    assert "closed by simp" in cycle.session.report()  # type: ignore[union-attr]
    request = codex_server.requests[0]
    assert "You are the Worker" in request.text() and "## Working in Codex" in request.text()
    assert CODEX_KEY not in "\n".join(codex_server.requests[1].outputs())


def test_a_codex_workers_cheat_is_refused_and_a_repair_round_resumes_its_thread(
        codex: Project, codex_server: ResponsesStandin) -> None:
    configure(codex, agents={"worker": codex_worker(codex_server)}, prices={CODEX_MODEL: CODEX_PRICE},
              gates={"repair_rounds": 1})
    cheat = ("*** Begin Patch\n*** Update File: Book/A.lean\n@@\n-theorem hard (n : ℕ) : n + 0 = n := by\n-  sorry\n"
             "+axiom shortcut : ∀ n : ℕ, n + 0 = n\n+\n+theorem hard (n : ℕ) : n + 0 = n := by\n+  exact shortcut n\n"
             "*** End Patch\n")
    undo = ("*** Begin Patch\n*** Update File: Book/A.lean\n@@\n-axiom shortcut : ∀ n : ℕ, n + 0 = n\n-\n"
            "-theorem hard (n : ℕ) : n + 0 = n := by\n-  exact shortcut n\n+theorem hard (n : ℕ) : n + 0 = n := by\n"
            "+  simp\n*** End Patch\n")
    codex.agents.plan(strategy("Book/A.lean"))
    codex_server.enqueue(patch(cheat), message("done"), patch(undo), message(REPORT))
    codex.agents.evaluate(evaluation(1))

    record, _ = codex.cycle()

    assert record.outcome == "accepted", record.gates
    assert "shortcut" not in codex.show("HEAD", "Book/A.lean")
    repair = codex_server.requests[2]
    assert "new axiom Book.shortcut" in repair.text()  # the gates' report, in the same thread as round one
    assert '"done"' in json.dumps(repair.body["input"]) and repair.body["prompt_cache_key"] == \
        codex_server.requests[0].body["prompt_cache_key"]


def test_a_codex_worker_is_held_to_the_budget_between_its_rounds(codex: Project,
                                                                 codex_server: ResponsesStandin) -> None:
    dear = {**CODEX_PRICE, "input": 1000.0}  # USD per million input tokens: 2,000 tokens cost $2
    configure(codex, agents={"worker": codex_worker(codex_server)}, prices={CODEX_MODEL: dear},
              gates={"repair_rounds": 1}, budget={"per_cycle_usd": 1.0})
    codex.agents.plan(strategy("Book/A.lean"))
    codex_server.enqueue(patch(CLOSE.replace("+  simp", "+  exact absurd_marker"),
                               usage={"input_tokens": 2_000, "cached_tokens": 0, "output_tokens": 0}),
                         message("done"))  # $2.06 at [prices], over the cycle's $1.00
    codex.agents.evaluate(evaluation(0))

    record, _ = codex.cycle()

    assert record.outcome == "rejected" and record.worker_stop == "budget"  # no repair round was started
    assert len(codex_server.requests) <= 2  # stopped as soon as its log showed the first answer's spend
    assert (record.costs["worker"] or 0) >= 2_000 * 1000.0 / 1e6


def test_a_codex_worker_sees_nothing_of_your_home_the_checkout_or_other_keys(
        codex: Project, codex_server: ResponsesStandin, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (codex.repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\necho HOOK\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-another-key")
    probe = (f"cat {home}/.ssh/id_ed25519; cat {codex.repo}/.git/hooks/pre-commit; ls {codex.repo}/.prover-state; "
             "env; echo hi > /tmp/out.txt; echo done")
    codex.agents.plan(strategy("Book/A.lean"))
    codex_server.enqueue(shell(probe), message(REPORT))
    codex.agents.evaluate(evaluation(0))

    codex.cycle()

    (output,) = codex_server.requests[1].outputs()
    assert "PRIVATE KEY" not in output and "HOOK" not in output and "history.jsonl" not in output
    assert CODEX_KEY not in output and "sk-openai-another-key" not in output and "ANTHROPIC" not in output
    assert "No such file or directory" in output and "\ndone\n" in output
    assert "/tmp/out.txt: Read-only file system" in output  # Codex's own sandbox: the working copy only
    assert not (tmp_path / "out.txt").exists()


def test_a_codex_rate_limit_pauses_the_loop_until_the_time_it_names(
        codex: Project, codex_server: ResponsesStandin) -> None:
    codex.agents.plan(strategy("Book/A.lean"))
    codex_server.enqueue(error(429, "usage_limit_reached", "The usage limit has been reached",
                               resets_at=int(time.time()) + 7200, plan_type="plus"))

    record, _ = codex.cycle()

    assert record.outcome == "no_change" and record.paused and record.worker_stop == "limited"
    assert record.paused_until is not None and record.paused_until > datetime.now(UTC) + timedelta(minutes=5)
    assert "usage limit" in (record.error or "") and codex.agents.calls["evaluator"] == 0


def test_a_paused_cycle_is_no_stall_the_consultant_is_not_called_for_it(codex: Project,
                                                                        codex_server: ResponsesStandin) -> None:
    configure(codex, agents={"worker": codex_worker(codex_server)}, prices={CODEX_MODEL: CODEX_PRICE},
              loop={"heartbeat_s": 1, "escalate_after": 2})
    codex.agents.plan(strategy("Book/A.lean"))
    codex_server.enqueue(error(429, "rate_limit_exceeded", "Rate limit reached for requests"))
    first, _ = codex.cycle()
    codex.agents.plan(strategy("Book/A.lean"))
    codex_server.enqueue(message("nothing to do"))
    codex.agents.evaluate(evaluation(0))

    second, _ = codex.cycle()

    assert first.paused and not second.paused and not second.made_progress
    assert codex.agents.calls["consultant"] == 0 and second.consultant is None  # one stalled cycle, not two


def test_a_codex_rate_limit_without_a_reset_time_backs_off_and_the_daemon_waits(
        codex: Project, codex_server: ResponsesStandin) -> None:
    configure(codex, agents={"worker": codex_worker(codex_server)}, prices={CODEX_MODEL: CODEX_PRICE},
              loop={"heartbeat_s": 1, "cooldown_s": 0, "pause_s": 600})
    codex.agents.plan(strategy("Book/A.lean"))
    codex_server.enqueue(error(429, "rate_limit_exceeded", "Rate limit reached for requests"))
    options = Options()
    reasons: list[str] = []
    thread = threading.Thread(target=lambda: reasons.append(
        run_daemon(codex.repo, codex.config, codex.deps(), Limits(max_cycles=3), options)))
    thread.start()
    beat = wait_for_phase(codex.repo, "paused")
    options.stop.set()
    thread.join(timeout=20)

    (record,) = codex.history()
    assert record.paused and record.error and "429" in record.error
    assert record.paused_until is not None and record.finished_at is not None
    assert timedelta(seconds=590) <= record.paused_until - record.finished_at <= timedelta(seconds=610)
    assert datetime.fromisoformat(beat["phase_deadline"]) == pytest.approx(record.paused_until,
                                                                           abs=timedelta(seconds=5))
    assert reasons == ["stopped on request"]


def test_a_missing_engine_is_one_error_line_before_any_model_is_paid(
        codex: Project, codex_server: ResponsesStandin, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(codex, agents={"worker": codex_worker(codex_server, cli_path=str(tmp_path / "nowhere/codex"))},
              prices={CODEX_MODEL: CODEX_PRICE})

    assert main(["cycle", "--repo", str(codex.repo)]) == 2

    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"error: the codex CLI was not found at {tmp_path / 'nowhere/codex'}: npm install -g "
                    "@openai/codex@0.171.0, or fix [agents.worker] cli_path (for the worker)")
    assert codex.agents.calls["planner"] == 0 and codex_server.requests == []


def test_a_codex_worker_calls_the_lean_servers_tools_through_the_relay(
        codex: Project, codex_server: ResponsesStandin) -> None:
    configure(codex, agents={"worker": codex_worker(codex_server, lean_tools="lean-lsp-mcp",
                                                    lean_lsp_command=[sys.executable, str(LSP), str(DATA)])},
              prices={CODEX_MODEL: CODEX_PRICE})
    codex.agents.plan(strategy("Book/A.lean"))
    goal = {"file_path": "Book/A.lean", "line": 8}
    codex_server.enqueue(Response([call("lean_goal", goal, namespace="mcp__lean_lsp")]), message(REPORT))
    codex.agents.evaluate(evaluation(0))

    record, _ = codex.cycle()

    (output,) = codex_server.requests[1].outputs()
    assert (DATA / "lean_goal.txt").read_text().strip()[:200] in output
    assert record.tool_calls["lean_goal"].count == 1


def wait_for_phase(repo: Path, phase: str, timeout_s: float = 120) -> dict[str, str]:
    heartbeat = repo / ".prover-state/heartbeat.json"
    deadline = time.monotonic() + timeout_s
    beat: dict[str, str] = {}
    while time.monotonic() < deadline and beat.get("phase") != phase:
        time.sleep(0.05)
        beat = json.loads(heartbeat.read_text()) if heartbeat.exists() else {}
    assert beat.get("phase") == phase, beat
    return beat
