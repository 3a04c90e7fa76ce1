"""Fault injection: SIGKILL a cycle at every phase and inside the Worker, the gates and the commit, then run the
next cycle, and check every time that only whole cycles landed, no record is lost or doubled, the checkout is
clean and the lock is free. Also: a full disk under a state write, a corrupt heartbeat."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from orchestrator import workcopy
from orchestrator.git import Git
from orchestrator.watchdog import _heartbeat_age
from state.lock import LockStatus, inspect_lock
from tests.conftest import git, write
from tests.orchestrator.harness import Project, blocking, config_text, evaluation, strategy
from tests.orchestrator.test_crash import fake_git, start_cycle, wait_for
from tests.standin.anthropic_server import text_reply

EDIT = [("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})]
BLOCKING_ROLES = {"plan": "planner", "work": "worker", "evaluate": "evaluator", "escalate": "consultant"}
GIT_PAUSES = {"sync": "fetch", "bookkeeping": "cherry-pick --no-commit", "commit": "Autoformalize-Cycle",
              "push": "push", "merge": "merge --ff-only"}
CHECKER_PAUSES = {"baseline": "build", "gates": "check"}
LANDED = {"merge"}  # killed after the push, before the checkout moved: the cycle is on the remote
UNSTARTED = {"sync"}  # killed before the cycle took a number: nothing to record


def script_first_cycle(project: Project, block: str | None, release: threading.Event, inside: threading.Event
                       ) -> None:
    hang = blocking(inside, release)
    replies = {"planner": [text_reply(strategy("Book/A.lean"))], "evaluator": [text_reply(evaluation(0))],
               "consultant": [text_reply("## Diagnosis\nnone")]}
    for role, answers in replies.items():
        project.agents.add(role, hang if BLOCKING_ROLES.get(block or "") == role else answers[0])
    if block == "work":
        project.agents.add("worker", hang)
    elif block == "escalate":  # the Consultant is called after a cycle without progress by the facts
        project.agents.work("nothing closed")
    else:
        project.agents.work(EDIT, [("finish", {"report": "closed Book.hard"})])


@pytest.mark.parametrize("fault", ["sync", "baseline", "plan", "work", "gates", "evaluate", "escalate", "bookkeeping",
                                   "commit", "push", "merge"])
def test_a_kill_at_any_point_loses_no_cycle_and_lands_no_half(project: Project, tmp_path: Path, fault: str) -> None:
    # The stand-in Lean pauses inside the sandbox, where it may write only the working copy's build outputs.
    pause = ["STANDIN_PAUSE_ON", "STANDIN_PAUSE_MARKER"]
    write(project.repo, {"autoformalize.toml": config_text(loop={"heartbeat_s": 1, "escalate_after": 1},
                                                           sandbox={"env": pause})})
    git(project.repo, "commit", "-qam", "config")
    git(project.repo, "push", "-q", "origin", "main")
    base = project.head()
    marker = tmp_path / "paused"
    env: dict[str, str] = {}
    if fault in GIT_PAUSES:
        env = fake_git(tmp_path, GIT_PAUSES[fault])
        marker = Path(env["PAUSE_MARKER"])
    elif fault in CHECKER_PAUSES:
        marker = workcopy.location(Git(project.repo)) / ".lake" / "paused"
        env = {"STANDIN_PAUSE_ON": CHECKER_PAUSES[fault], "STANDIN_PAUSE_MARKER": str(marker)}
    inside, release = threading.Event(), threading.Event()
    script_first_cycle(project, fault, release, inside)

    child = start_cycle(project, env)
    try:
        wait_for(inside if fault in BLOCKING_ROLES else marker)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        release.set()
    # The stand-in checker or git, paused in their own process groups, may outlive the kill: not our concern.

    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work(EDIT, [("finish", {"report": "closed Book.hard"})])
    project.agents.evaluate(evaluation(1))
    project.agents.consult("## Diagnosis\nnone")
    record, cycle = project.cycle()

    history = [(r.cycle, r.outcome) for r in project.history()]
    if fault in UNSTARTED:
        assert history == [(1, "accepted")]
    else:
        assert [c for c, _ in history] == [1, 2], history  # none lost, none doubled
        assert history[0] == ((1, "accepted") if fault in LANDED else (1, "interrupted"))
    assert record.cycle == len(history) and project.head() == cycle.commit == project.remote_head()
    assert project.clean() and not (project.repo / ".git/autoformalize/journal.json").exists()
    assert inspect_lock(project.repo / ".prover-state/run.lock").status is LockStatus.FREE
    assert_whole_cycles(project, base)


def assert_whole_cycles(project: Project, base: str) -> None:
    """Every commit after `base` is one whole cycle: its trailer names the cycle its history ends with."""
    for sha in git(project.repo, "rev-list", "--reverse", f"{base}..HEAD").split():
        message = git(project.repo, "log", "-1", "--format=%B", sha)
        cycle = int(next(line for line in message.splitlines() if line.startswith("Autoformalize-Cycle:")).split()[1])
        history = git(project.repo, "show", f"{sha}:.prover-state/history.jsonl").splitlines()
        assert json.loads(history[-1])["cycle"] == cycle
        assert git(project.repo, "show", f"{sha}:.prover-state/cycle").strip() == str(cycle)


def test_a_full_disk_during_a_state_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "strategy.md"
    path.write_text("the old strategy\n")
    script = (f"import resource, signal, sys; sys.path[:0] = {sys.path!r}\n"
              "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # the disk is full after 4 KiB\n"
              "from pathlib import Path\nfrom state.atomic import write_atomic\n"
              f"try:\n    write_atomic(Path({str(path)!r}), 'x' * 100_000)\n"
              "except OSError as e:\n    print('OSError', e.errno)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("OSError"), done.stdout + done.stderr
    assert path.read_text() == "the old strategy\n"
    assert [p.name for p in tmp_path.iterdir()] == ["strategy.md"]  # no temp file left behind


def test_a_corrupt_heartbeat_counts_as_no_beat_since_the_start(tmp_path: Path) -> None:
    import time

    path = tmp_path / "heartbeat.json"
    path.write_text('{"pid": 12, "phase": "wo')
    started = time.monotonic() - 42
    assert 41 < _heartbeat_age(path, 12, started) < 60


def test_a_phase_past_its_deadline_is_stale_though_the_heartbeat_is_fresh(tmp_path: Path) -> None:
    import time
    from datetime import UTC, datetime, timedelta

    from state.heartbeat import Heartbeat, write_heartbeat

    now = datetime.now(UTC)
    path = tmp_path / "heartbeat.json"
    write_heartbeat(path, Heartbeat(pid=7, host="h", cycle=1, phase="land", updated_at=now,
                                    phase_started_at=now - timedelta(hours=2),
                                    phase_deadline=now - timedelta(minutes=5)))
    assert 299 < _heartbeat_age(path, 7, time.monotonic() - 10_000) < 400
    write_heartbeat(path, Heartbeat(pid=7, host="h", cycle=1, phase="work", updated_at=now,
                                    phase_started_at=now, phase_deadline=now + timedelta(hours=2)))
    assert _heartbeat_age(path, 7, time.monotonic() - 10_000) < 5
