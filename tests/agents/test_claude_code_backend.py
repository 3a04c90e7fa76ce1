"""Claude Code behind the Worker session and the one-shot model, through the real claude-agent-sdk.

The SDK runs tests/standin/claude_cli.py as its `claude` executable (`cli_path`): the transport, the
control protocol (initialize, can_use_tool, interrupt), the message parsing and the options turned into
CLI flags are the SDK's own.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agents.backends.claude_code import DEFAULT_ALLOWED_TOOLS, ClaudeCodeModel, ClaudeCodeSession
from agents.config import AgentsConfig
from agents.ledger import Charge, Ledger
from agents.model import Message, ModelUnavailable, StopReason, System, ToolSpec
from agents.provers.base import Off
from agents.provers.config import ProverConfig
from agents.provers.desk import Desk
from agents.tools import Workspace
from agents.worker import Limits, Stop
from gates.build import LakeCompiler
from gates.config import BuildConfig
from state.errors import InfraError
from state.history import Usage
from state.prover_jobs import ProverJobs
from tests.agents.conftest import FAKE_KEY
from tests.conftest import GIT_ENV, git, sandbox

pytestmark = pytest.mark.filterwarnings("ignore::claude_agent_sdk.CanUseToolShadowedWarning")

CLI = str(Path(__file__).resolve().parents[1] / "standin" / "claude_cli.py")
MODEL = "claude-test-1"
SCOPE = ["Book/Basic.lean"]
USAGE = {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 64}
REPORT = "## Worked on\ndouble_pos\n## Result\nproved\n## Tried and failed\n-\n## Suggested next step\n-"
LIMITS = Limits(max_turns=10, timeout_s=60)
PROOF = "theorem double_pos (n : ℕ) (h : 0 < n) : 0 < double n := by\n  unfold double; omega\n"


class Standin:
    """The stand-in CLI's script and log, both files under the test's tmp_path."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.script_path, self.log_path = root / "standin-script.json", root / "standin-log.jsonl"
        monkeypatch.setenv("CLAUDE_STANDIN_SCRIPT", str(self.script_path))
        monkeypatch.setenv("CLAUDE_STANDIN_LOG", str(self.log_path))

    def script(self, *turns: dict[str, Any], **extra: Any) -> None:
        self.script_path.write_text(json.dumps({"turns": list(turns), **extra}), encoding="utf-8")

    def events(self, kind: str) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, lines) if e["event"] == kind]

    def options(self) -> dict[str, Any]:
        (start,) = self.events("start")
        return dict(start["options"])


def turn(*actions: dict[str, Any], cost: float = 0.25, usage: dict[str, int] | None = None,
         **result: Any) -> dict[str, Any]:
    return {"actions": list(actions), "total_cost_usd": cost, "usage": usage or USAGE, **result}


@pytest.fixture
def standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Standin:
    return Standin(tmp_path, monkeypatch)


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo()


@pytest.fixture
def workspace(repo: Path) -> Workspace:
    compiler = LakeCompiler(repo, BuildConfig(check_file=f"{sys.executable} -c pass {{file}}"), sandbox())
    return Workspace(repo, SCOPE, ["lakefile.toml"], ".prover-state", ["Book"], compiler)


@pytest.fixture
def make_session(workspace: Workspace) -> Iterator[Callable[..., ClaudeCodeSession]]:
    sessions: list[ClaudeCodeSession] = []

    def make(limits: Limits = LIMITS, **options: Any) -> ClaudeCodeSession:
        settings: dict[str, Any] = {"cli_path": CLI, "ledger": Ledger(), **options}
        session = ClaudeCodeSession(MODEL, workspace, "Never add an axiom.", limits, settings.pop("ledger"),
                                    settings.pop("sandbox", sandbox()), **settings)
        sessions.append(session)
        return session

    yield make
    for session in sessions:
        session.close()


# --- the Worker session --------------------------------------------------------------------------------------------


def test_a_round_writes_in_its_scope_and_reports(standin: Standin, make_session: Callable[..., ClaudeCodeSession],
                                                 repo: Path) -> None:
    standin.script(turn({"write": "Book/Basic.lean", "content": PROOF}, {"text": REPORT}))
    ledger = Ledger()
    session = make_session(ledger=ledger)

    done = session.run("Prove double_pos.")

    assert (done.stop, done.report, session.turns) == (Stop.FINISHED, REPORT, 2)
    assert (repo / "Book/Basic.lean").read_text(encoding="utf-8") == PROOF
    (decided,) = standin.events("permission")  # the guard's hook allowed it: nothing else was asked
    assert (decided["tool"], decided["asked"], decided["allowed"], decided["hook"]) == ("Write", False, True, True)
    assert ledger.charges == [Charge("worker", "claude-code", MODEL, Usage(input=120, output=30, cache_read=2000,
                                                                          cache_write=64), 0.25)]


def test_writes_outside_the_scope_are_denied_by_the_guard(
        standin: Standin, make_session: Callable[..., ClaudeCodeSession], repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.lean"
    standin.script(turn({"write": "Book/Other.lean", "content": "x"}, {"write": str(outside), "content": "x"},
                        {"edit": "lakefile.toml", "old": "book", "new": "b"}, {"text": REPORT}))

    done = make_session().run("go")

    assert done.stop is Stop.FINISHED
    assert not (repo / "Book/Other.lean").exists() and not outside.exists()
    assert 'name = "book"' in (repo / "lakefile.toml").read_text(encoding="utf-8")
    results = [(e["tool"], e["content"], e["is_error"]) for e in standin.events("tool_result")]
    denied = "PreToolUse:{} hook error: refused: "
    assert results == [
        ("Write", denied.format("Write") + "Book/Other.lean is outside the Scope (Book/Basic.lean: Lean files, and "
                                           "other files only where an entry names them); blockers go to open_issue",
         True),
        ("Write", denied.format("Write") + f"{outside} is outside the repository", True),
        ("Edit", denied.format("Edit") + "lakefile.toml is protected", True)]
    assert standin.events("permission") == []  # the hook's denial is final


def test_bash_runs_only_the_allowed_commands_and_those_inside_the_sandbox(
        standin: Standin, make_session: Callable[..., ClaudeCodeSession], repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    base = git(repo, "rev-parse", "HEAD").strip()
    edit = {"edit": "Book/Basic.lean", "old": "  sorry", "new": "  unfold double; omega"}
    standin.script(turn(edit, {"commit": "wip"}, {"text": REPORT}))

    make_session().run("go")  # the default tools: lake and lean commands only

    assert git(repo, "rev-parse", "HEAD").strip() == base
    denied = standin.events("tool_result")[-1]
    assert denied["content"].startswith("PreToolUse:Bash hook error: refused: this session may only run these "
                                        "commands: Bash(lake build:*)")

    standin.log_path.unlink()
    git(repo, "checkout", "-q", "--", ".")
    standin.script(turn(edit, {"commit": "wip"}, {"bash": "env; cat /proc/1/environ"}, {"text": REPORT}))
    rules = [*DEFAULT_ALLOWED_TOOLS, "Bash(git commit:*)", "Bash(env)", "Bash(cat /proc/1/environ)"]
    make_session(allowed_tools=rules).run("go")

    # A rule lets the command run, inside the sandbox: the checkout is read-only there, nothing holds the key.
    assert git(repo, "rev-parse", "HEAD").strip() == base
    commit, env = standin.events("tool_result")[-2:]
    assert commit["is_error"] and any(why in commit["content"] for why in (
        "Read-only file system", "dubious ownership"))  # as root the sandbox's user does not own the checkout
    assert "HOME=/tmp/home" in env["content"] and FAKE_KEY not in env["content"]  # cat may fail: pid 1 is not ours
    assert env["input"]["command"].split()[0] == shutil.which("env") and "/bwrap " in env["input"]["command"]


def test_a_repair_round_continues_the_same_session(standin: Standin, make_session: Callable[..., ClaudeCodeSession],
                                                  repo: Path) -> None:
    fix = {"edit": "Book/Basic.lean", "old": "  sorry", "new": "  unfold double; omega"}
    standin.script(turn({"text": "first report"}, cost=0.25),
                   turn(fix, {"text": "second report"}, cost=0.5, usage={"input_tokens": 7, "output_tokens": 3}))
    ledger = Ledger()
    session = make_session(ledger=ledger)

    first = session.run("go")
    second = session.resume("The build gate failed: Book/Basic.lean:9: unsolved goals")

    assert (first.report, second.report) == ("first report", "second report")
    assert session.report() == "## Round 1\n\nfirst report\n\n## Round 2\n\nsecond report"
    assert len(standin.events("start")) == 1  # one CLI process for the whole session
    users = standin.events("user")
    assert [u["text"] for u in users] == ["go", "The build gate failed: Book/Basic.lean:9: unsolved goals"]
    assert users[0]["session_id"] == users[1]["session_id"] == session.session_id
    assert "omega" in (repo / "Book/Basic.lean").read_text(encoding="utf-8")
    # The CLI reports total_cost_usd as a running total (0.25, then 0.75): each round is charged its growth.
    assert [(c.cost_usd, c.usage) for c in ledger.charges] == [
        (0.25, Usage(input=120, output=30, cache_read=2000, cache_write=64)), (0.5, Usage(input=7, output=3))]
    assert session.turns == 3


def test_the_options_reach_the_cli(standin: Standin, make_session: Callable[..., ClaudeCodeSession],
                                   repo: Path) -> None:
    standin.script(turn({"text": REPORT}))
    lean_lsp = {"type": "stdio", "command": sys.executable, "args": ["-m", "lean_lsp_mcp"],
                "env": {"LEAN_PROJECT_PATH": str(repo)}}
    make_session(Limits(17, 60), mcp_servers={"lean-lsp": lean_lsp}).run("go")

    options = standin.options()
    assert options["model"] == MODEL and options["max_turns"] == "17"
    assert standin.events("start")[0]["cwd"] == str(repo)
    assert options["tools"] == ["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "Bash"]
    assert options["allowedTools"] == ["mcp__lean-lsp"]  # a rule would approve a built-in tool past the guard
    assert (options["permission_mode"], options["permission_prompt_tool"]) == ("default", "stdio")
    assert options["setting_sources"] == [] and options["strict_mcp_config"] is True
    server = options["mcp_config"]["mcpServers"]["lean-lsp"]  # the Lean server it starts runs in the sandbox
    assert (server["type"], server["command"], "env" in server) == ("stdio", shutil.which("env"), False)
    assert server["args"][-3:] == [sys.executable, "-m", "lean_lsp_mcp"] and shutil.which("bwrap") in server["args"]
    assert f"LEAN_PROJECT_PATH={repo}" in server["args"]
    hooks = standin.events("control")[0]["request"]["hooks"]
    assert [[m["hookCallbackIds"] for m in hooks[event]] for event in ("PreToolUse", "PostToolUse")] == [
        [["hook_0"]], [["hook_1"]]]
    assert "system_prompt" not in options  # Claude Code's own prompt, with the Worker's appended
    appended = options["append_system_prompt"]
    assert "Never add an axiom." in appended and "RESTRUCTURING:" in appended and "## Suggested next step" in appended
    assert "Bash(lake env lean:*)" in appended and ".prover-state/issues/<slug>.md" in appended
    assert standin.events("start")[0]["env"]["DISABLE_AUTOUPDATER"] == "1"


def test_with_the_prover_off_there_are_no_prover_tools(standin: Standin, make_session: Callable[..., ClaudeCodeSession],
                                                       workspace: Workspace, tmp_path: Path) -> None:
    workspace.desk = Desk(ProverConfig(), Off("ARISTOTLE_API_KEY is not set"), ProverJobs(), tmp_path / "results",
                          lambda: datetime.now(UTC), 1, ".prover-state")
    standin.script(turn({"mcp": "prover", "tool": "submit_to_prover", "args": {"declarations": "double_pos"}},
                        {"text": REPORT}))

    assert make_session().run("go").stop is Stop.FINISHED

    options = standin.options()
    assert "mcp_config" not in options and not options.get("allowedTools")
    assert "add a line `PROVER: <declaration>` to the report" in options["append_system_prompt"]
    (result,) = standin.events("tool_result")  # the real CLI's answer to a tool no server offers
    assert result["content"] == "<tool_use_error>Error: No such tool available: mcp__prover__submit_to_prover" \
                                "</tool_use_error>" and result["is_error"]
    assert standin.events("mcp") == []


def test_no_configured_mcp_server_may_take_the_prover_tools_name() -> None:
    worker = {"backend": "claude-code", "model": MODEL, "mcp_servers": {"prover": {"command": "x"}}}
    with pytest.raises(ValidationError, match="the MCP server name 'prover' is taken"):
        AgentsConfig.model_validate({"worker": worker})


# --- limits ----------------------------------------------------------------------------------------------------------


def test_a_stop_request_interrupts_the_round(standin: Standin, make_session: Callable[..., ClaudeCodeSession]) -> None:
    standin.script(turn({"write": "Book/Basic.lean", "content": PROOF}, {"wait": 30}), turn({"text": "unused"}))
    stop = threading.Event()
    ledger = Ledger()
    session = make_session(stop=stop, ledger=ledger)
    threading.Timer(0.5, stop.set).start()

    started = time.monotonic()
    done = session.run("go")

    assert done.stop is Stop.STOPPED and time.monotonic() - started < 5
    assert "stopped at its stopped limit without a report" in done.report
    assert [e["subtype"] for e in standin.events("control")] == ["initialize", "interrupt"]
    assert [c.cost_usd for c in ledger.charges] == [0.25]  # the interrupted turn's result is still charged
    assert session.resume("more").stop is Stop.STOPPED
    assert len(standin.events("user")) == 1  # nothing more was sent


def test_the_time_limit_kills_a_cli_that_stopped_answering(
        standin: Standin, make_session: Callable[..., ClaudeCodeSession]) -> None:
    standin.script(turn({"text": "thinking"}, {"hang": True}))
    session = make_session(Limits(10, 1.0), interrupt_grace_s=0.5)

    started = time.monotonic()
    done = session.run("go")

    assert done.stop is Stop.TIME and time.monotonic() - started < 6
    assert standin.events("exit") == [{"event": "exit", "pid": standin.events("start")[0]["pid"], "code": 0}]


def test_max_turns_ends_the_session(standin: Standin, make_session: Callable[..., ClaudeCodeSession]) -> None:
    write = {"write": "Book/Basic.lean", "content": PROOF}
    standin.script(turn(write, write, write, {"text": REPORT}))
    session = make_session(Limits(2, 60))

    done = session.run("go")

    assert done.stop is Stop.TURNS and session.turns == 2
    assert session.resume("again").stop is Stop.TURNS


# --- failures of the CLI -----------------------------------------------------------------------------------------


def test_a_missing_cli_is_an_infrastructure_error(make_session: Callable[..., ClaudeCodeSession],
                                                  tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere" / "claude")
    with pytest.raises(ModelUnavailable) as caught:
        make_session(cli_path=missing).run("go")
    assert str(caught.value) == (f"the claude CLI was not found at {missing}; install Claude Code or fix cli_path — "
                                 "the cycle is recorded as an infrastructure error")
    with pytest.raises(ModelUnavailable, match="the claude CLI was not found at"):
        ClaudeCodeModel(MODEL, 10, cli_path=missing).send(System("s"), [Message("user", "hi")])


def test_a_cli_exiting_at_start_up_is_an_infrastructure_error(
        standin: Standin, make_session: Callable[..., ClaudeCodeSession]) -> None:
    standin.script(startup={"exit_code": 1, "stderr": "Another process is currently updating Claude"})
    with pytest.raises(ModelUnavailable) as caught:
        make_session().run("go")
    assert isinstance(caught.value, InfraError)
    assert str(caught.value) == ("the claude CLI exited with code 1 at start-up: Another process is currently "
                                 "updating Claude; it may be updating itself or not be logged in — the cycle is "
                                 "recorded as an infrastructure error")


def test_a_cli_crashing_mid_session_is_an_infrastructure_error(
        standin: Standin, make_session: Callable[..., ClaudeCodeSession]) -> None:
    standin.script(turn({"text": "working"}, {"crash": 3, "stderr": "FATAL: out of memory"}))
    with pytest.raises(ModelUnavailable) as caught:
        make_session().run("go")
    assert str(caught.value).startswith("the claude CLI exited with code 3 during the Worker's session: ")
    assert "FATAL: out of memory" in str(caught.value)


def test_an_api_error_result_is_an_infrastructure_error(
        standin: Standin, make_session: Callable[..., ClaudeCodeSession]) -> None:
    standin.script(turn({"text": "API Error: 529 Overloaded"}, is_error=True))
    ledger = Ledger()
    with pytest.raises(ModelUnavailable, match=r"ended the Worker's session with an error \(success\): API Error"):
        make_session(ledger=ledger).run("go")
    assert [c.cost_usd for c in ledger.charges] == [0.25]


# --- the one-shot model ----------------------------------------------------------------------------------------------


def test_the_one_shot_model_replies_with_usage_and_cost(standin: Standin) -> None:
    standin.script(turn({"text": '{"score": 1}'}, cost=0.031, usage={"input_tokens": 900, "output_tokens": 12}))
    ledger = Ledger()
    model = ClaudeCodeModel(MODEL, 10, cli_path=CLI, ledger=ledger, role="evaluator")

    reply = model.send(System("You score cycles.", "Cycle 4."),
                       [Message("user", "Score it."), Message("assistant", "7"), Message("user", "JSON only.")],
                       max_tokens=2048)

    assert (reply.text, reply.stop, reply.model, reply.cost_usd) == ('{"score": 1}', StopReason.END, MODEL, 0.031)
    assert reply.usage == Usage(input=900, output=12)
    assert ledger.charges == [Charge("evaluator", "claude-code", MODEL, Usage(input=900, output=12), 0.031)]
    options = standin.options()
    assert options["system_prompt"] == "You score cycles.\n\nCycle 4."
    assert options["tools"] == [] and "allowedTools" not in options and "permission_prompt_tool" not in options
    assert (options["setting_sources"], options["max_turns"]) == ([], "1")
    assert standin.events("start")[0]["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "2048"
    (user,) = standin.events("user")
    assert user["text"] == "[User]\nScore it.\n\n[You (an earlier answer)]\n7\n\n[User]\nJSON only."


def test_the_one_shot_model_takes_no_tools() -> None:
    model = ClaudeCodeModel(MODEL, 10, cli_path=CLI)
    with pytest.raises(ValueError, match="tool-less roles"):
        model.send(System("s"), [Message("user", "hi")], [ToolSpec("read_file", "Read a file.", {})])
    with pytest.raises(ValueError, match="needs the role"):
        ClaudeCodeModel(MODEL, 10, ledger=Ledger())


def test_the_standin_refuses_an_option_it_does_not_know() -> None:
    done = subprocess.run([CLI, "--no-such-option"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "unknown option '--no-such-option'" in done.stderr


def test_reads_outside_the_working_copy_are_refused(standin: Standin, make_session: Callable[..., ClaudeCodeSession],
                                                   repo: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("PRIVATE\n")
    (repo / "Book/link.lean").symlink_to(tmp_path / "secret.txt")
    standin.script(turn({"read": "Book/Basic.lean"}, {"read": str(tmp_path / "secret.txt")}, {"read": "Book/link.lean"},
                        {"read": "/proc/self/environ"}, {"glob": f"{tmp_path}/*.txt"}, {"text": REPORT}))

    assert make_session().run("go").stop is Stop.FINISHED

    inside, outside, link, proc, glob = standin.events("tool_result")
    assert not inside["is_error"] and "double_pos" in inside["content"]
    for refused in (outside, link, glob):
        assert refused["is_error"] and "outside the working copy" in refused["content"], refused
        assert "PRIVATE" not in refused["content"]
    assert proc["is_error"] and "device or process file" in proc["content"]  # Claude Code's own refusal
    assert [e["callback"] for e in standin.events("hook")] == ["hook_0"] * 4  # every call but the /proc one
