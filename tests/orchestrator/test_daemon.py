"""`run`: cycles one after another, backoff after infrastructure errors, stop conditions, graceful stops."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

from orchestrator.cycle import Options
from orchestrator.daemon import Limits, run_daemon
from state.lock import LockStatus, inspect_lock
from tests.conftest import git, write
from tests.orchestrator.harness import PLAN, Project, blocking, config_text, evaluation, strategy
from tests.standin.anthropic_server import RecordedRequest, Reply, error_reply, text_reply

EDIT = [("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})]


def configure(project: Project, **loop: object) -> None:
    write(project.repo, {"autoformalize.toml": config_text(loop={"heartbeat_s": 1, "cooldown_s": 0, **loop})})
    git(project.repo, "commit", "-qam", "config")
    git(project.repo, "push", "-q", "origin", "main")


def idle_cycle(project: Project, score: int = 0) -> None:
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing to do")
    project.agents.evaluate(evaluation(score))


def daemon(project: Project, **limits: object) -> str:
    return run_daemon(project.repo, project.config, project.deps(), Limits(**limits), Options())  # type: ignore[arg-type]


def test_it_runs_the_cycles_asked_for_then_stops(project: Project) -> None:
    configure(project)
    for _ in range(3):
        idle_cycle(project)
    assert daemon(project, max_cycles=3) == "ran the 3 cycle(s) asked for"
    assert [r.cycle for r in project.history()] == [1, 2, 3]
    assert inspect_lock(project.repo / ".prover-state/run.lock").status is LockStatus.FREE
    assert project.clean() and project.head() == project.remote_head()


def test_an_infrastructure_error_is_recorded_backed_off_and_survived(project: Project) -> None:
    configure(project, backoff_s=0.2)
    project.agents.add("planner", *[error_reply(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})
                                    for _ in range(6)])
    idle_cycle(project)
    started = time.monotonic()
    assert daemon(project, max_cycles=2).startswith("ran the 2")
    assert time.monotonic() - started >= 0.2
    assert [(r.cycle, r.outcome) for r in project.history()] == [(1, "error"), (2, "no_change")]
    assert "overloaded" in (project.history()[0].error or "").lower()


def test_run_says_on_the_terminal_why_a_cycle_failed_and_how_long_it_waits(project: Project) -> None:
    configure(project, backoff_s=0.2)
    project.agents.add("planner", *[error_reply(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})
                                    for _ in range(6)])
    idle_cycle(project)
    said: list[str] = []
    run_daemon(project.repo, project.config, project.deps(), Limits(max_cycles=2), Options(), say=said.append)
    assert len(said) == 1, said  # the second cycle, which worked, is not news
    assert said[0].startswith("cycle 1 failed: ") and "overloaded" in said[0].lower()
    assert said[0].endswith("; the next cycle in 0s (failure 1 in a row, backing off)")


def test_the_total_budget_stops_it_before_the_next_cycle(project: Project) -> None:
    write(project.repo, {"autoformalize.toml": config_text(loop={"heartbeat_s": 1, "cooldown_s": 0},
                                                           budget={"total_usd": 0.0001})})
    git(project.repo, "commit", "-qam", "budget")
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing")
    project.agents.evaluate(evaluation(0))
    reason = daemon(project)
    assert "budget" in reason
    # The Planner's first call could cross the limit, so it was refused: the cycle records an error and stops.
    assert [r.outcome for r in project.history()] == ["error"] and project.agents.calls["planner"] == 0
    assert (project.history()[0].progress_score, project.history()[0].score) == (0, None)  # kept in -2..2, unscored


def test_it_stops_when_the_book_is_done(project: Project) -> None:
    configure(project)
    proved = {f"Book/{name}.lean": (project.repo / f"Book/{name}.lean").read_text().replace("  sorry", "  simp")
              for name in ("A", "B")}
    project.commit_files({"plan.md": PLAN + "\n- [x] Chapter 1\n", **proved})
    assert daemon(project) == "done: no sorry left and every target in the plan is checked off"
    assert project.history() == []


def test_a_stop_request_abandons_the_cycle_at_a_safe_point(project: Project) -> None:
    configure(project)
    options = Options()

    def stop_while_working(request: RecordedRequest) -> Reply:
        options.stop.set()  # as SIGTERM would, while the Worker's model call is in flight
        return text_reply("done")

    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", stop_while_working)
    base = project.head()
    reason = run_daemon(project.repo, project.config, project.deps(), Limits(), options)
    assert reason.startswith("stopped on request")
    assert project.head() == base and project.agents.calls["evaluator"] == 0
    assert inspect_lock(project.repo / ".prover-state/run.lock").status is LockStatus.FREE

    idle_cycle(project)
    daemon(project, max_cycles=1)
    assert [(r.cycle, r.outcome) for r in project.history()] == [(1, "interrupted"), (2, "no_change")]


def test_an_unreachable_remote_keeps_the_commit_local_until_a_later_cycle_pushes_it(project: Project) -> None:
    configure(project)
    hidden = project.remote.with_name("remote-away.git")
    project.remote.rename(hidden)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work(EDIT, [("finish", {"report": "closed it"})])
    project.agents.evaluate(evaluation(1))
    daemon(project, max_cycles=1)
    assert project.history()[-1].outcome == "accepted" and project.clean()
    local = project.head()

    hidden.rename(project.remote)
    idle_cycle(project)
    daemon(project, max_cycles=1)
    assert project.remote_head() == project.head()
    assert git(project.repo, "merge-base", "--is-ancestor", local, project.remote_head()) == ""


def test_two_runs_at_once_the_second_exits_3_naming_the_first(project: Project) -> None:
    configure(project)
    inside, release = threading.Event(), threading.Event()
    project.agents.add("planner", blocking(inside, release, strategy("Book/A.lean")))
    first = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", "--max-cycles", "1", "--repo",
                              str(project.repo)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert inside.wait(30)
        second = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--repo", str(project.repo)],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 3
        assert f"held by pid {first.pid}" in second.stderr
    finally:
        release.set()
        first.send_signal(signal.SIGTERM)
        first.wait(60)


def test_sigterm_stops_a_running_daemon_cleanly_with_exit_0(project: Project) -> None:
    configure(project)
    inside = threading.Event()

    def slow_worker(request: RecordedRequest) -> Reply:
        inside.set()
        time.sleep(1.5)
        return text_reply("still thinking")

    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", slow_worker)
    child = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", "--repo", str(project.repo)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert inside.wait(30)
    child.send_signal(signal.SIGTERM)
    output, _ = child.communicate(timeout=60)
    assert child.returncode == 0, output
    assert "stopped on request" in output
    assert inspect_lock(project.repo / ".prover-state/run.lock").status is LockStatus.FREE
    assert project.clean()


def test_a_cycle_over_its_own_budget_ends_but_the_next_starts_afresh(project: Project) -> None:
    write(project.repo, {"autoformalize.toml": config_text(loop={"heartbeat_s": 1, "cooldown_s": 0},
                                                           budget={"per_cycle_usd": 1.0})})
    git(project.repo, "commit", "-qam", "budget")
    # $0.995 of the cycle's $1.00 on the Planner: the Worker's and the Evaluator's calls are refused.
    project.agents.add("planner", text_reply(strategy("Book/A.lean"), usage={"input_tokens": 199_000}))
    idle_cycle(project)
    assert daemon(project, max_cycles=2) == "ran the 2 cycle(s) asked for"
    assert [r.cycle for r in project.history()] == [1, 2]
    assert project.history()[0].worker_stop == "budget" and project.history()[1].progress_score == 0


def test_once_the_day_is_spent_it_sleeps_until_the_next_utc_day(project: Project) -> None:
    write(project.repo, {"autoformalize.toml": config_text(loop={"heartbeat_s": 1, "cooldown_s": 0},
                                                           budget={"per_day_usd": 1.0})})
    git(project.repo, "commit", "-qam", "budget")
    project.agents.add("planner", text_reply(strategy("Book/A.lean"), usage={"input_tokens": 199_000}))
    project.agents.evaluate(evaluation(0))
    options = Options()
    reasons: list[str] = []
    thread = threading.Thread(target=lambda: reasons.append(
        run_daemon(project.repo, project.config, project.deps(), Limits(max_cycles=3), options)))
    thread.start()
    heartbeat = project.repo / ".prover-state/heartbeat.json"
    deadline = time.monotonic() + 30
    beat: dict[str, str] = {}
    while time.monotonic() < deadline and beat.get("phase") != "budget":
        time.sleep(0.05)
        beat = json.loads(heartbeat.read_text()) if heartbeat.exists() else {}
    options.stop.set()
    thread.join(timeout=10)
    assert beat["phase"] == "budget"
    resume = datetime.fromisoformat(beat["phase_deadline"])
    assert (resume.hour, resume.minute, resume.second) == (0, 0, 0) and resume > datetime.now(UTC)
    assert reasons == ["stopped on request"]
    assert [(r.cycle, r.outcome, r.worker_stop) for r in project.history()] == [(1, "no_change", "budget")]
