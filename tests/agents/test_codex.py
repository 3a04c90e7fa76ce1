"""Codex CLI as the Worker's engine: the real CLI (the version scripts/codex pins) against the scripted Responses
API. How it runs its tools, retries and reports a failed turn is its own; the product sets its sandbox and
settings, reads its events, interrupts it and holds it to the Worker's limits."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agents.backends.codex import check, failure, resets_at
from agents.coding import CodingSession, Ended, Setup
from agents.coding import session as open_session
from agents.config import BudgetConfig, WorkerConfig
from agents.ledger import Budget, Ledger
from agents.model import ModelRejected, ModelUnavailable
from agents.prices import Price
from agents.tools import Workspace
from agents.worker import Limits, Stop
from gates.build import LakeCompiler
from gates.config import BuildConfig
from gates.credentials import Secrets
from state.history import Usage
from tests.conftest import sandbox
from tests.engines import CODEX, CODEX_MODEL, CODEX_PRICE, need
from tests.standin.responses_server import ResponsesStandin, error, message, shell

KEY = "sk-codex-unit-Hf3Ka9-never-print-me"
REPORT = "## Worked on\ndouble_pos\n## Result\nproved"
NOW = datetime(2026, 12, 7, 4, 10, tzinfo=UTC)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ResponsesStandin]:
    need("codex", CODEX)
    with ResponsesStandin(api_key=KEY) as standin:
        monkeypatch.setenv("TEST_CODEX_KEY", KEY)
        yield standin


@pytest.fixture
def open_(make_repo: Callable[..., Path], server: ResponsesStandin) -> Iterator[Callable[..., CodingSession]]:
    repo = make_repo()
    sessions: list[CodingSession] = []

    def make(*replies: Any, limits: Limits | None = None, ledger: Ledger | None = None,
             stop: threading.Event | None = None, **config: Any) -> CodingSession:
        server.enqueue(*replies)
        confined = sandbox()
        workspace = Workspace(repo, ["Book/Basic.lean"], ["lakefile.toml"], ".prover-state", ["Book"],
                              LakeCompiler(repo, BuildConfig(), confined), secrets=Secrets({"TEST_CODEX_KEY": KEY}))
        worker = WorkerConfig(**{"backend": "codex", "model": CODEX_MODEL, "base_url": server.base_url,
                                 "api_key_env": "TEST_CODEX_KEY", "cli_path": CODEX, **config})
        setup = Setup(worker, CODEX_MODEL, workspace, "Never add an axiom.", limits or Limits(20, 120),
                      ledger or Ledger(), confined, stop or threading.Event(), interrupt_grace_s=3.0,
                      prices={CODEX_MODEL: Price(**CODEX_PRICE)})
        session = open_session(setup)
        sessions.append(session)
        return session

    yield make
    for session in sessions:
        session.close()


# --- rounds ----------------------------------------------------------------------------------------------------------


def test_a_round_is_charged_its_usage_at_the_configured_price_and_a_resume_only_its_growth(
        open_: Callable[..., CodingSession], server: ResponsesStandin) -> None:
    ledger = Ledger()
    session = open_(shell("echo hi"), message("first", usage={"input_tokens": 300, "cached_tokens": 100,
                                                              "output_tokens": 30}),
                    message("second", usage={"input_tokens": 50, "cached_tokens": 0, "output_tokens": 5}),
                    ledger=ledger)

    first = session.run("go")
    second = session.resume("The build gate failed.")

    assert (first.stop, first.report, second.report) == (Stop.FINISHED, "first", "second")
    assert [c.usage for c in ledger.charges] == [Usage(input=60 + 200, output=20 + 30, cache_read=40 + 100),
                                                 Usage(input=50, output=5)]
    assert ledger.charges[1].cost_usd == pytest.approx((50 * 1.25 + 5 * 10.0) / 1e6)
    assert session.turns == 3 and session.tools.calls["shell"].count == 1
    assert server.requests[2].body["prompt_cache_key"] == server.requests[0].body["prompt_cache_key"]


def test_the_turn_limit_interrupts_before_a_call_beyond_it_and_what_it_spent_is_charged(
        open_: Callable[..., CodingSession], server: ResponsesStandin) -> None:
    ledger = Ledger()
    session = open_(*[shell("true") for _ in range(6)], message(REPORT), limits=Limits(2, 120), ledger=ledger)

    done = session.run("go")

    assert done.stop is Stop.TURNS and session.turns == 2
    answered = len(server.requests)  # the third answer may be in flight when the interruption lands
    assert answered <= 3 and session.resume("more").stop is Stop.TURNS
    (charge,) = ledger.charges  # a round cut off reports no usage on --json: its session log does
    assert charge.usage.input >= 2 * 60 and charge.cost_usd is not None and charge.cost_usd > 0


def test_the_budget_stops_a_round_between_its_model_calls(open_: Callable[..., CodingSession],
                                                          server: ResponsesStandin) -> None:
    big = {"input_tokens": 100_000, "cached_tokens": 0, "output_tokens": 0}  # $0.125 a call at the test's price
    ledger = Ledger(budget=Budget(BudgetConfig(per_cycle_usd=0.3)))
    session = open_(*[shell("true", usage=big) for _ in range(8)], message(REPORT), ledger=ledger)

    done = session.run("go")

    assert done.stop is Stop.BUDGET and len(server.requests) <= 4  # stopped once its spend passed $0.30
    assert 0.3 < ledger.spent() < 0.3 + 2 * 0.125


def test_a_stop_request_interrupts_the_round_at_once(open_: Callable[..., CodingSession]) -> None:
    stop = threading.Event()
    session = open_(shell("sleep 60"), message(REPORT), stop=stop)
    threading.Timer(2.0, stop.set).start()

    started = time.monotonic()
    done = session.run("go")

    assert done.stop is Stop.STOPPED and time.monotonic() - started < 20
    assert "stopped at its stopped limit" in done.report


def test_the_time_limit_ends_a_round_whose_provider_stopped_answering(open_: Callable[..., CodingSession]) -> None:
    session = open_(message("late", delay_s=60), limits=Limits(10, 3.0))

    started = time.monotonic()
    done = session.run("go")

    assert done.stop is Stop.TIME and time.monotonic() - started < 20


def test_a_refused_key_is_the_keys_error(open_: Callable[..., CodingSession], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CODEX_KEY", "sk-wrong")

    with pytest.raises(ModelRejected, match="401"):
        open_(message(REPORT)).run("go")


def test_a_rate_limit_with_a_reset_time_ends_the_session_limited_until_then(
        open_: Callable[..., CodingSession]) -> None:
    resets = int(time.time()) + 3 * 3600
    session = open_(error(429, "usage_limit_reached", "The usage limit has been reached", resets_at=resets))

    done = session.run("go")

    assert done.stop is Stop.LIMITED and "usage limit" in done.report
    assert session.limited_until is not None
    assert abs(session.limited_until - datetime.fromtimestamp(resets, UTC)) < timedelta(minutes=1)


def test_a_cli_exiting_at_once_is_one_error_naming_what_it_said(open_: Callable[..., CodingSession],
                                                                 tmp_path: Path) -> None:
    broken = tmp_path / "codex"
    broken.write_text("#!/bin/sh\necho 'error: the sandbox helper is missing' >&2\nexit 1\n")
    broken.chmod(broken.stat().st_mode | stat.S_IXUSR)

    with pytest.raises(ModelUnavailable) as caught:
        open_(cli_path=str(broken)).run("go")

    assert str(caught.value).startswith("the codex CLI exited with code 1 before its turn ended: ")
    assert "the sandbox helper is missing" in str(caught.value)


def test_a_cli_killed_mid_session_is_an_infrastructure_error(open_: Callable[..., CodingSession]) -> None:
    native = Path(check(WorkerConfig(backend="codex", model="m", cli_path=CODEX, base_url="http://x")).program or "")

    def kill_the_cli(request: Any) -> Any:
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                if entry.name.isdigit() and (entry / "exe").resolve() == native.resolve():
                    os.kill(int(entry.name), signal.SIGKILL)
        time.sleep(1)
        return message("never read")

    with pytest.raises(ModelUnavailable, match=r"the codex CLI exited with code (-9|137) before its turn ended"):
        open_(kill_the_cli).run("go")


# --- the CLI as found ------------------------------------------------------------------------------------------------


def fake(tmp_path: Path, body: str) -> str:
    program = tmp_path / "codex"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(program)


def test_a_missing_old_or_broken_cli_is_one_line_naming_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    base = {"backend": "codex", "model": "m"}
    missing = check(WorkerConfig(**base, cli_path=str(tmp_path / "nowhere")))
    old = check(WorkerConfig(**base, cli_path=fake(tmp_path, "echo 'codex-cli 0.98.0'")))
    (tmp_path / "codex").unlink()
    broken = check(WorkerConfig(**base, cli_path=fake(tmp_path, "echo 'dyld: missing symbol' >&2; exit 127")))

    assert missing.problem == (f"the codex CLI was not found at {tmp_path / 'nowhere'}: npm install -g "
                               "@openai/codex@0.171.0, or fix [agents.worker] cli_path")
    assert old.problem is not None and "is 0.98.0, older than the 0.171.0 the product drives" in old.problem
    assert broken.problem is not None and "does not answer `--version` (dyld: missing symbol)" in broken.problem


def test_the_installed_cli_is_found_behind_npms_wrapper_and_needs_a_credential(monkeypatch: pytest.MonkeyPatch,
                                                                               tmp_path: Path) -> None:
    need("codex", CODEX)
    monkeypatch.setenv("HOME", str(tmp_path))  # no `codex login` here
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = WorkerConfig(backend="codex", model="m", cli_path=CODEX)

    without = check(config)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    found = check(config)

    assert without.problem == "codex has no credential: set OPENAI_API_KEY, or log in once with `codex login`"
    assert found.problem is None and found.version == "0.171.0"
    assert found.program is not None and not found.program.endswith(".js")  # the native binary, not node's wrapper


def test_the_cli_the_quick_start_links_beside_this_python_is_found_off_path(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    need("codex", CODEX)
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "codex").symlink_to(str(CODEX))
    monkeypatch.setattr("sys.executable", str(venv / "python"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    found = check(WorkerConfig(backend="codex", model="m"))

    assert found.problem is None and found.version == "0.171.0"
    monkeypatch.setattr("sys.executable", str(tmp_path / "elsewhere" / "python"))
    assert check(WorkerConfig(backend="codex", model="m")).problem == (
        f"the codex CLI was not found on PATH or beside this Python ({tmp_path / 'elsewhere'}): npm install -g "
        "@openai/codex@0.171.0, or set [agents.worker] cli_path")


def test_codex_config_cannot_take_the_products_settings() -> None:
    with pytest.raises(ValidationError, match=r"codex_config may not set sandbox_mode, shell_environment_policy\."):
        WorkerConfig(backend="codex", model="m", codex_config={"sandbox_mode": "danger-full-access",
                                                               "shell_environment_policy.inherit": "all"})
    with pytest.raises(ValidationError, match="codex_config keys are Codex settings' dotted names: ' sandbox_mode'"):
        WorkerConfig(backend="codex", model="m", codex_config={" sandbox_mode": "danger-full-access"})
    assert WorkerConfig(backend="codex", model="m", codex_config={"model_catalog_json": "/x.json"}).codex_config


def test_a_codex_config_table_reaches_codex_as_dotted_settings(open_: Callable[..., CodingSession],
                                                              server: ResponsesStandin) -> None:
    session = open_(message(REPORT), codex_config={"tools": {"view_image": False}, "model_verbosity": "high"})

    session.run("go")

    assert server.requests[0].body["text"]["verbosity"] == "high"  # the setting took
    arguments = session.engine.arguments()  # type: ignore[attr-defined]
    assert "tools.view_image=false" in arguments and "model_verbosity=\"high\"" in arguments


# --- what a failed turn says -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("message", "ended", "when", "rejected"), [
    ("You've hit your usage limit. Upgrade to Pro or try again at 5:06 AM.", Ended.LIMITED,
     datetime(2026, 12, 7, 5, 6, tzinfo=UTC), False),
    ("You've hit your usage limit. Try again at 3:02 AM.", Ended.LIMITED, datetime(2026, 12, 8, 3, 2, tzinfo=UTC),
     False),
    ("You've hit your usage limit. Try again at Dec 9th, 2026 1:15 PM.", Ended.LIMITED,
     datetime(2026, 12, 9, 13, 15, tzinfo=UTC), False),
    ("rate limit exceeded: Rate limit reached for gpt-5.5. Please try again in 1.5s.", Ended.LIMITED,
     NOW + timedelta(seconds=1.5), False),
    ("exceeded retry limit, last status: 429 Too Many Requests", Ended.LIMITED, None, False),
    ("unexpected status 401 Unauthorized: Incorrect API key provided", Ended.FAILED, None, True),
    ("Quota exceeded. Check your plan and billing details.", Ended.FAILED, None, True),
    ("You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage or try again at 5:06 AM.",
     Ended.LIMITED, datetime(2026, 12, 7, 5, 6, tzinfo=UTC), False),
    ("You hit your spend cap set in your workspace. Increase your spend cap to continue.", Ended.FAILED, None, True),
    ("stream disconnected before completion: model crashed", Ended.FAILED, None, False),
    # A 429 or "rate limit" inside another error's text is that error's, not a limit's.
    ("unexpected status 400 Bad Request: input too long: got a string with length 14290000", Ended.FAILED, None,
     False),
    ("unexpected status 500 Internal Server Error: request id req_7f3a429c0d; rate limit: n/a", Ended.FAILED,
     None, False),
])
def test_a_failed_turns_message_says_how_it_ended(message: str, ended: Ended, when: datetime | None,
                                                  rejected: bool) -> None:
    assert failure(message, NOW) == (ended, when, rejected)


def test_a_reset_time_in_minutes_or_hours() -> None:
    assert resets_at("try again in 20m", NOW) == NOW + timedelta(minutes=20)
    assert resets_at("try again in 2 hours", NOW) == NOW + timedelta(hours=2)
    assert resets_at("try again later", NOW) is None
