"""Claude Code as the Worker's engine and as the one-shot model: the real CLI (bundled in claude-agent-sdk's wheel,
started by the SDK) against the scripted Anthropic API.

What the CLI does with each tool call (run it, refuse it, run the rewritten command), how it retries, what it
charges and how it ends a turn are its own; the guard's hooks, the relay and the engine's sandbox are what the
product puts around it.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agents.backends.claude_code import DEFAULT_ALLOWED_TOOLS, ClaudeCodeModel, check
from agents.coding import CodingSession, Setup
from agents.coding import session as open_session
from agents.config import BudgetConfig, WorkerConfig
from agents.ledger import Budget, Ledger
from agents.model import Message, ModelRejected, ModelUnavailable, RateLimited, StopReason, System, ToolSpec
from agents.prices import Price
from agents.provers.base import Off
from agents.provers.config import ProverConfig
from agents.provers.desk import Desk
from agents.tools import Workspace
from agents.worker import Limits, Stop
from gates.build import LakeCompiler
from gates.config import BuildConfig
from gates.credentials import Secrets
from state.history import Usage
from state.prover_jobs import ProverJobs
from tests.agents.conftest import FAKE_KEY
from tests.conftest import GIT_ENV, git, sandbox, write
from tests.engines import CLAUDE, CLAUDE_MODEL, ClaudeModel, need
from tests.standin.anthropic_server import AnthropicStandin, Reply, error_reply, text_reply, tool_use_reply

REPORT = "## Worked on\ndouble_pos\n## Result\nproved\n## Tried and failed\n-\n## Suggested next step\n-"
PROOF = "  unfold double; omega"
SONNET = {"input": 3.0, "output": 15.0}  # the CLI's own price of claude-sonnet-4-5, USD per million tokens


@pytest.fixture(autouse=True)
def _cli(monkeypatch: pytest.MonkeyPatch) -> None:
    need("claude", CLAUDE)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")  # a scripted error is final, not retried for minutes


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicStandin]:
    with AnthropicStandin(api_key=FAKE_KEY, validate=False) as standin:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.base_url)
        yield standin


class Opened:
    """Sessions opened by a test, each on a fresh Setup; all closed at the end."""

    def __init__(self, repo: Path, server: AnthropicStandin) -> None:
        self.repo = repo
        self.server = server
        self.sessions: list[CodingSession] = []

    def __call__(self, model: ClaudeModel | None = None, *, limits: Limits | None = None,
                 ledger: Ledger | None = None, stop: threading.Event | None = None, grace_s: float = 10.0,
                 workspace: Workspace | None = None, servers: dict[str, dict[str, Any]] | None = None,
                 lean_tools: list[str] | None = None, prices: dict[str, Price] | None = None,
                 **config: Any) -> CodingSession:
        if model is not None:
            for _ in range(60):
                self.server.enqueue(model)
        confined = sandbox()
        workspace = workspace or Workspace(self.repo, ["Book/Basic.lean"], ["lakefile.toml"], ".prover-state",
                                           ["Book"], LakeCompiler(self.repo, BuildConfig(), confined),
                                           secrets=Secrets({"ANTHROPIC_API_KEY": FAKE_KEY}))
        setup = Setup(WorkerConfig(backend="claude-code", model=CLAUDE_MODEL, **config), CLAUDE_MODEL, workspace,
                      "Never add an axiom.", limits or Limits(20, 120), ledger or Ledger(), confined,
                      stop or threading.Event(),
                      servers or {}, lean_tools, prices or {}, interrupt_grace_s=grace_s)
        session = open_session(setup)
        self.sessions.append(session)
        return session


@pytest.fixture
def open_(repo: Path, server: AnthropicStandin) -> Iterator[Opened]:
    opened = Opened(repo, server)
    yield opened
    for session in opened.sessions:
        session.close()


def read_then_edit(repo: Path, new: str = PROOF) -> list[tuple[str, dict[str, Any]]]:
    """Claude Code edits only files it has read."""
    path = str(repo / "Book/Basic.lean")
    return [("Read", {"file_path": path}), ("Edit", {"file_path": path, "old_string": "  sorry", "new_string": new})]


def charged(usage: Usage) -> float:
    return (usage.input * SONNET["input"] + usage.output * SONNET["output"]) / 1e6


# --- a round ---------------------------------------------------------------------------------------------------------


def test_a_round_edits_in_its_scope_reports_and_is_charged_what_the_cli_reports(open_: Opened, repo: Path) -> None:
    read, edit = read_then_edit(repo)
    ledger = Ledger()
    session = open_(ClaudeModel([read], [edit], REPORT), ledger=ledger)

    done = session.run("Prove double_pos.")

    assert (done.stop, done.report, session.turns) == (Stop.FINISHED, REPORT, 3)
    assert PROOF in (repo / "Book/Basic.lean").read_text(encoding="utf-8")
    (charge,) = ledger.charges
    assert (charge.backend, charge.model, charge.usage) == ("claude-code", CLAUDE_MODEL, Usage(input=30, output=15))
    assert charge.cost_usd == pytest.approx(charged(charge.usage))  # the CLI's own price of what it used
    assert {name: stat.count for name, stat in session.tools.calls.items()} == {"Read": 1, "Edit": 1}


def test_a_price_in_prices_wins_over_the_clis_own_figure(open_: Opened) -> None:
    ledger = Ledger()
    mine = Price(input=1.0, output=2.0, cache_read=0.1, cache_write=1.25)  # a negotiated rate, say

    open_(ClaudeModel(REPORT), ledger=ledger, prices={CLAUDE_MODEL: mine}).run("go")

    (charge,) = ledger.charges
    assert charge.cost_usd == pytest.approx((10 * 1.0 + 5 * 2.0) / 1e6)  # not the CLI's $3/$15


def test_writes_outside_the_scope_are_refused_by_the_guard(open_: Opened, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.lean"
    lakefile = str(repo / "lakefile.toml")
    model = ClaudeModel([("Write", {"file_path": str(repo / "Book/Other.lean"), "content": "x"})],
                        [("Write", {"file_path": str(outside), "content": "x"})],
                        [("Read", {"file_path": lakefile})],
                        [("Edit", {"file_path": lakefile, "old_string": "book", "new_string": "b"})], REPORT)

    assert open_(model).run("go").stop is Stop.FINISHED

    assert not (repo / "Book/Other.lean").exists() and not outside.exists()
    assert 'name = "book"' in (repo / "lakefile.toml").read_text(encoding="utf-8")
    assert model.failed(0) and "Book/Other.lean is outside the Scope" in model.text(0)
    assert model.failed(1) and f"{outside} is outside the repository" in model.text(1)
    assert model.failed(3) and "lakefile.toml is protected" in model.text(3)
    assert all(model.text(i).startswith(f"PreToolUse:{tool} hook error: refused: ")
               for i, tool in ((0, "Write"), (1, "Write"), (3, "Edit")))


def test_bash_runs_the_allowed_commands_through_the_relay_in_the_sandbox(open_: Opened, repo: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    base = git(repo, "rev-parse", "HEAD").strip()
    model = ClaudeModel([("Bash", {"command": "env"})], [("Bash", {"command": "git commit --allow-empty -m x"})],
                        [("Bash", {"command": "curl -s http://example.com"})], REPORT)

    open_(model, allowed_tools=[*DEFAULT_ALLOWED_TOOLS, "Bash(env)", "Bash(git commit:*)"]).run("go")

    env, _, curl = (model.text(i) for i in range(3))
    assert "HOME=/tmp/home" in env and FAKE_KEY not in env and "ANTHROPIC" not in env  # the Worker code's sandbox
    assert model.failed(1) and git(repo, "rev-parse", "HEAD").strip() == base  # no git directory in there
    assert model.failed(2) and "may only run these commands" in curl


def test_a_repair_round_continues_the_same_session_charged_by_the_growth_of_its_total(open_: Opened,
                                                                                     repo: Path) -> None:
    read, edit = read_then_edit(repo)
    ledger = Ledger()
    session = open_(ClaudeModel("first report", [read], [edit], "second report"), ledger=ledger)

    first = session.run("go")
    second = session.resume("The build gate failed: Book/Basic.lean:9: unsolved goals")

    assert (first.report, second.report) == ("first report", "second report")
    assert session.report() == "## Round 1\n\nfirst report\n\n## Round 2\n\nsecond report"
    conversation = json.dumps(open_.server.requests[-1].body["messages"])
    assert '"go"' in conversation and "first report" in conversation and "unsolved goals" in conversation
    assert [c.usage for c in ledger.charges] == [Usage(input=10, output=5), Usage(input=30, output=15)]
    assert ledger.charges[1].cost_usd == pytest.approx(charged(Usage(input=30, output=15)))
    assert session.turns == 4


def test_the_worker_prompt_and_the_allowed_tools_reach_the_model(open_: Opened) -> None:
    model = ClaudeModel(REPORT)

    open_(model, limits=Limits(17, 60)).run("go")

    (request,) = model.requests
    system = " ".join(b["text"] for b in request.body["system"])
    assert "Never add an axiom." in system and "RESTRUCTURING:" in system and "## Working in Claude Code" in system
    assert "Bash(lake env lean:*)" in system and ".prover-state/issues/<slug>.md" in system
    # The Workspace's goal view through the `library` server (no `find_declaration`: this Workspace adds none).
    assert {t["name"] for t in request.body["tools"]} == {"Read", "Write", "Edit", "Glob", "Grep", "Bash",
                                                          "mcp__library__lean_goal"}
    assert "mcp__library__lean_goal" in system
    assert request.body["model"] == CLAUDE_MODEL


def test_with_the_prover_off_there_are_no_prover_tools(open_: Opened, repo: Path, tmp_path: Path) -> None:
    confined = sandbox()
    workspace = Workspace(repo, ["Book/Basic.lean"], ["lakefile.toml"], ".prover-state", ["Book"],
                          LakeCompiler(repo, BuildConfig(), confined),
                          desk=Desk(ProverConfig(), Off("ARISTOTLE_API_KEY is not set"), ProverJobs(),
                                    tmp_path / "results", lambda: datetime.now(UTC), 1, ".prover-state"))
    model = ClaudeModel([("mcp__prover__submit_to_prover", {"declarations": "double_pos"})], REPORT)

    assert open_(model, workspace=workspace).run("go").stop is Stop.FINISHED

    assert model.failed(0) and "No such tool available: mcp__prover__submit_to_prover" in model.text(0)
    system = " ".join(b["text"] for b in model.requests[0].body["system"])
    assert "add a line `PROVER: <declaration>` to the report" in system


# --- limits ----------------------------------------------------------------------------------------------------------


def slow(seconds: float, arrived: threading.Event | None = None) -> Callable[[Any], Reply]:
    """An answer that takes `seconds`; `arrived` is set when its request comes."""

    def answer(request: Any) -> Reply:
        if arrived is not None:
            arrived.set()
        time.sleep(seconds)
        return text_reply("too late")

    return answer


def test_a_stop_request_interrupts_the_round(open_: Opened, repo: Path) -> None:
    read, _ = read_then_edit(repo)
    stop, waiting = threading.Event(), threading.Event()
    session = open_(ClaudeModel([read], slow(20, waiting)), stop=stop)
    threading.Thread(target=lambda: waiting.wait(60) and stop.set(), daemon=True).start()  # mid-call

    started = time.monotonic()
    done = session.run("go")

    assert done.stop is Stop.STOPPED and time.monotonic() - started < 15
    assert "stopped at its stopped limit without a report" in done.report
    assert session.resume("more").stop is Stop.STOPPED and len(open_.server.requests) == 2  # nothing more sent


def test_the_time_limit_ends_a_round_whose_model_stopped_answering(open_: Opened) -> None:
    session = open_(ClaudeModel(slow(30)), limits=Limits(10, 2.0), grace_s=2.0)

    started = time.monotonic()
    done = session.run("go")

    assert done.stop is Stop.TIME and time.monotonic() - started < 15


def test_max_turns_ends_the_session_before_a_call_beyond_it(open_: Opened, repo: Path) -> None:
    path = str(repo / "Book/Basic.lean")
    model = ClaudeModel(*[[("Read", {"file_path": path})]] * 5, REPORT)
    session = open_(model, limits=Limits(2, 60))

    done = session.run("go")

    assert done.stop is Stop.TURNS and session.turns == 2 and len(model.requests) == 2
    assert session.resume("again").stop is Stop.TURNS


def test_the_budget_the_ledger_leaves_stops_the_cli(open_: Opened, repo: Path) -> None:
    path = str(repo / "Book/Basic.lean")
    big = {"input_tokens": 100_000, "output_tokens": 0}  # $0.30 a call at the CLI's own price
    model = ClaudeModel(*[tool_use_reply([("Read", {"file_path": path})], usage=big)] * 5, REPORT)
    ledger = Ledger(budget=Budget(BudgetConfig(per_cycle_usd=0.5)))
    session = open_(model, ledger=ledger)

    done = session.run("go")

    assert done.stop is Stop.BUDGET and len(model.requests) == 2  # the CLI stopped once $0.60 passed $0.50
    assert ledger.spent() == pytest.approx(0.6)


# --- rate limits -----------------------------------------------------------------------------------------------------


def test_an_api_rate_limit_ends_the_session_limited(open_: Opened) -> None:
    model = ClaudeModel(error_reply(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute "
                                                             "rate limit"))

    done = open_(model).run("go")

    assert done.stop is Stop.LIMITED and "rate-limited" in done.report and "exceeded" in done.report


def test_a_subscriptions_cap_ends_the_session_limited_until_it_resets(open_: Opened,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", FAKE_KEY)  # a claude.ai login: the CLI reads the plan's limits
    resets = int(time.time()) + 3 * 3600
    headers = {"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": str(resets),
               "anthropic-ratelimit-unified-representative-claim": "five_hour",
               "anthropic-ratelimit-unified-5h-status": "rejected", "anthropic-ratelimit-unified-5h-reset": str(resets)}
    session = open_(ClaudeModel(error_reply(429, "rate_limit_error", "usage limit", headers=headers)))

    done = session.run("go")

    assert done.stop is Stop.LIMITED and "5-hour limit" in done.report
    assert session.limited_until == datetime.fromtimestamp(resets, UTC)


def test_the_one_shot_model_raises_a_rate_limit(server: AnthropicStandin) -> None:
    server.enqueue(error_reply(429, "rate_limit_error", "slow down"))

    with pytest.raises(RateLimited, match="429"):
        ClaudeCodeModel(CLAUDE_MODEL, 60).send(System("s"), [Message("user", "hi")])


# --- failures of the CLI -----------------------------------------------------------------------------------------


def test_a_missing_cli_is_an_infrastructure_error(open_: Opened, tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere" / "claude")
    with pytest.raises(ModelUnavailable) as caught:
        open_(ClaudeModel(), cli_path=missing).run("go")
    assert str(caught.value) == (f"the claude CLI was not found at {missing}; install Claude Code or fix cli_path — "
                                 "the cycle is recorded as an infrastructure error")
    assert (check(WorkerConfig(backend="claude-code", model="m", cli_path=missing)).problem or "").startswith(
        f"the claude CLI was not found at {missing}: install claude-agent-sdk")


def test_a_cli_exiting_at_start_up_is_one_error_naming_what_it_said(open_: Opened, tmp_path: Path) -> None:
    broken = tmp_path / "claude"
    broken.write_text("#!/bin/sh\necho 'Another process is currently updating Claude' >&2\nexit 1\n")
    broken.chmod(broken.stat().st_mode | stat.S_IXUSR)

    with pytest.raises(ModelUnavailable) as caught:
        open_(ClaudeModel(), cli_path=str(broken)).run("go")

    assert str(caught.value).startswith("the claude CLI exited with code 1 at start-up: ")
    assert "Another process is currently updating Claude" in str(caught.value)
    problem = check(WorkerConfig(backend="claude-code", model="m", cli_path=str(broken))).problem
    assert problem is not None and "does not answer `--version`" in problem


def test_an_old_cli_or_one_without_a_credential_is_refused_by_the_check(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    old = tmp_path / "claude"
    old.write_text("#!/bin/sh\necho '1.0.72 (Claude Code)'\n")
    old.chmod(old.stat().st_mode | stat.S_IXUSR)

    problem = check(WorkerConfig(backend="claude-code", model="m", cli_path=str(old))).problem

    assert problem is not None and "is 1.0.72, older than the 2.1.0 the product drives" in problem
    bundled = check(WorkerConfig(backend="claude-code", model="m"))
    assert bundled.problem == ("claude has no credential: set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN, which "
                               "`claude setup-token` prints), or log in once with `claude`")
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", FAKE_KEY)
    bundled = check(WorkerConfig(backend="claude-code", model="m"))
    assert bundled.problem is None and bundled.program == str(CLAUDE) and bundled.version.startswith("2.1.")


def test_a_cli_killed_mid_session_is_an_infrastructure_error(open_: Opened) -> None:
    def kill_the_cli(request: Any) -> Reply:
        for pid in (int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()):
            try:
                if Path(f"/proc/{pid}/exe").resolve() == CLAUDE.resolve():
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
        time.sleep(1)
        return text_reply("never read")

    with pytest.raises(ModelUnavailable) as caught:
        open_(ClaudeModel(kill_the_cli)).run("go")

    assert "the claude CLI" in str(caught.value) and "infrastructure error" in str(caught.value)


def test_a_refused_key_is_the_keys_error(open_: Opened, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")

    with pytest.raises(ModelRejected, match="check the claude-code CLI's login or key"):
        open_(ClaudeModel(REPORT)).run("go")


def test_an_api_error_result_is_an_infrastructure_error(open_: Opened) -> None:
    model = ClaudeModel(error_reply(529, "overloaded_error", "Overloaded"))

    with pytest.raises(ModelUnavailable, match="Overloaded"):
        open_(model).run("go")


# --- the one-shot model ----------------------------------------------------------------------------------------------


def test_the_one_shot_model_replies_with_usage_and_the_clis_cost(server: AnthropicStandin) -> None:
    server.enqueue(text_reply('{"score": 1}', usage={"input_tokens": 900, "output_tokens": 12}))
    ledger = Ledger()
    model = ClaudeCodeModel(CLAUDE_MODEL, 60, ledger=ledger, role="evaluator")

    reply = model.send(System("You score cycles.", "Cycle 4."),
                       [Message("user", "Score it."), Message("assistant", "7"), Message("user", "JSON only.")],
                       max_tokens=2048)

    assert (reply.text, reply.stop, reply.usage) == ('{"score": 1}', StopReason.END, Usage(input=900, output=12))
    assert reply.cost_usd == pytest.approx(charged(Usage(input=900, output=12)))
    assert [(c.role, c.backend) for c in ledger.charges] == [("evaluator", "claude-code")]
    body = server.requests[-1].body
    assert " ".join(b["text"] for b in body["system"]).endswith("You score cycles.\n\nCycle 4.")
    assert not body.get("tools") and body["max_tokens"] == 2048
    texts = [b["text"] for m in body["messages"] for b in m["content"] if b.get("type") == "text"]
    assert "[User]\nScore it.\n\n[You (an earlier answer)]\n7\n\n[User]\nJSON only." in texts


def test_the_one_shot_model_takes_no_tools() -> None:
    model = ClaudeCodeModel(CLAUDE_MODEL, 10)
    with pytest.raises(ValueError, match="tool-less roles"):
        model.send(System("s"), [Message("user", "hi")], [ToolSpec("read_file", "Read a file.", {})])
    with pytest.raises(ValueError, match="needs the role"):
        ClaudeCodeModel(CLAUDE_MODEL, 10, ledger=Ledger())


# --- confinement -----------------------------------------------------------------------------------------------------


def test_reads_outside_the_working_copy_are_refused(open_: Opened, repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_ed25519"
    write(secret.parent, {"id_ed25519": "PRIVATE KEY\n"})
    (repo / "Book" / "notes.lean").symlink_to(secret)
    model = ClaudeModel([("Read", {"file_path": str(secret)})],
                        [("Read", {"file_path": str(repo / "Book/notes.lean")})],
                        [("Glob", {"pattern": f"{secret.parent}/*"})],
                        [("Grep", {"pattern": "PRIVATE", "path": str(secret.parent)})],
                        [("Read", {"file_path": str(repo / "Book/Basic.lean")})], REPORT)

    open_(model).run("go")

    for i in range(4):
        assert model.failed(i) and "outside the working copy" in model.text(i), model.text(i)
        assert "PRIVATE KEY" not in model.text(i)
    assert not model.failed(4) and "double_pos" in model.text(4)


def test_results_reach_the_model_redacted(open_: Opened, repo: Path) -> None:
    write(repo, {"Book/notes.md": f"the key is {FAKE_KEY}\n"})
    model = ClaudeModel([("Bash", {"command": "cat Book/notes.md"})],
                        [("Grep", {"pattern": "key is", "path": str(repo / "Book"), "output_mode": "content"})],
                        [("Read", {"file_path": str(repo / "Book/notes.md")})], REPORT)

    open_(model, allowed_tools=[*DEFAULT_ALLOWED_TOOLS, "Bash(cat Book/notes.md)"]).run("go")

    bash, grep, read = (model.text(i) for i in range(3))
    assert FAKE_KEY not in bash + grep + read
    assert "the key is [redacted: ANTHROPIC_API_KEY]" in bash and "[redacted: ANTHROPIC_API_KEY]" in grep
    assert model.failed(2) and "holds the value of $ANTHROPIC_API_KEY" in read


def test_commands_never_run_in_the_background(open_: Opened) -> None:
    model = ClaudeModel([("Bash", {"command": "lake build", "run_in_background": True})], REPORT)

    open_(model).run("go")

    assert model.failed(0) and "run_in_background" in model.text(0), model.text(0)


def test_the_cli_reads_no_settings_or_memory_of_your_home(open_: Opened) -> None:
    home = Path(os.environ["HOME"])
    write(home, {".claude/CLAUDE.md": "USER MEMORY MARKER\n",
                 ".claude/settings.json": '{"permissions": {"allow": ["Bash"]}}'})
    model = ClaudeModel([("Bash", {"command": "env"})], REPORT)

    open_(model).run("go")

    assert "USER MEMORY MARKER" not in json.dumps(model.requests[0].body)
    assert model.failed(0) and "may only run these commands" in model.text(0)  # no settings of yours approve it


def test_past_a_guard_that_let_everything_through_the_cli_still_sees_none_of_your_files(
        open_: Opened, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The engine's own sandbox is the second wall: with the guard's read check gone (as a bug would take it), the
    # CLI's Read of your home, of a file elsewhere or of another process's environment finds nothing.
    from agents.backends.claude_guard import Guard

    monkeypatch.setattr(Guard, "_readable", lambda self, path: True)
    write(Path(os.environ["HOME"]), {".ssh/id_ed25519": "PRIVATE KEY\n"})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-another-key")
    model = ClaudeModel([("Read", {"file_path": f"{os.environ['HOME']}/.ssh/id_ed25519"})],
                        [("Read", {"file_path": str(tmp_path / "secret-elsewhere.txt")})],
                        [("Read", {"file_path": "/proc/1/environ"})], REPORT)
    (tmp_path / "secret-elsewhere.txt").write_text("ELSEWHERE\n")

    open_(model).run("go")

    texts = [model.text(i) for i in range(3)]
    assert all(model.failed(i) for i in range(3)), texts
    assert not any(secret in t for t in texts for secret in ("PRIVATE KEY", "ELSEWHERE", "sk-openai-another-key"))
    assert "does not exist" in texts[0] and "does not exist" in texts[1]
