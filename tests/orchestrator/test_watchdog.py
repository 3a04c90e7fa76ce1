"""The watchdog: restarts on death and on a stale heartbeat (killing the whole group), gives up, stops cleanly."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.notify import Notifier
from orchestrator.watchdog import Policy, run_command, watch
from state.heartbeat import read_heartbeat
from state.lock import LockStatus, inspect_lock
from tests.conftest import git, write
from tests.orchestrator.harness import Project, blocking, config_text, evaluation, strategy
from tests.standin.webhook import Webhook

# A stand-in for `run`: beats for a while, then does what its first argument says.
CHILD = r"""
import json, os, socket, subprocess, sys, time
from datetime import datetime, timezone
heartbeat, mode, marker = sys.argv[1], sys.argv[2], sys.argv[3]
runs = int(open(marker).read()) + 1 if os.path.exists(marker) else 1
open(marker, "w").write(str(runs))
def beat():
    now = datetime.now(timezone.utc).isoformat()
    tmp = heartbeat + ".tmp"
    json.dump({"pid": os.getpid(), "host": socket.gethostname(), "cycle": runs, "phase": "work",
               "updated_at": now}, open(tmp, "w"))
    os.replace(tmp, heartbeat)
for _ in range(3):
    beat(); time.sleep(0.2)
if mode == "crash":
    sys.exit(1)
if mode == "crash-once" and runs == 1:
    sys.exit(1)
if mode == "hang" and runs == 1:
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(marker + ".grandchild", "w").write(str(grandchild.pid))
    time.sleep(600)
if mode == "exit3":
    sys.exit(3)
if mode == "nokey":
    print('{"event": "phase", "level": "info"}')
    print("error: not set: ANTHROPIC_API_KEY (for the planner); export it")
    sys.exit(2)
if mode == "crash-saying":
    print('{"error": "the branch does not build", "event": "daemon.cycle_failed", "level": "error"}', flush=True)
    sys.exit(1)
if mode == "forever":
    import signal
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    while True:
        beat(); time.sleep(0.2)
sys.exit(0)
"""


def policy(**kw: float) -> Policy:
    values = {"stale_after_s": 2.0, "max_restarts": 3, "window_s": 60.0, "check_every_s": 0.2, "stop_grace_s": 10.0,
              "kill_grace_s": 1.0, **kw}
    return Policy(**values)  # type: ignore[arg-type]


def child(tmp_path: Path, mode: str) -> list[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return [sys.executable, str(script), str(tmp_path / "heartbeat.json"), mode, str(tmp_path / "runs")]


def runs(tmp_path: Path) -> int:
    return int((tmp_path / "runs").read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


def test_a_dead_child_is_restarted(tmp_path: Path) -> None:
    with Webhook() as hook:
        code = watch(child(tmp_path, "crash-once"), tmp_path / "heartbeat.json", tmp_path / "run.log", policy(),
                     Notifier(hook.url, project="book"))
    assert code == 0 and runs(tmp_path) == 2
    [message] = hook.texts()
    assert message.startswith("[book] watchdog: `run` (pid ") and "exited with code 1; restarting in 1s" in message
    assert message.endswith(f"Log: {tmp_path / 'run.log'}")


def test_it_gives_up_after_max_restarts(tmp_path: Path) -> None:
    with Webhook() as hook:
        code = watch(child(tmp_path, "crash"), tmp_path / "heartbeat.json", tmp_path / "run.log",
                     policy(max_restarts=2), Notifier(hook.url, project="book"))
    assert code == 1 and runs(tmp_path) == 3
    texts = hook.texts()
    assert len(texts) == 3 and all("restarting" in t for t in texts[:2])
    assert texts[-1].startswith("[book] watchdog gave up: 2 restarts within 60s; last: `run` (pid ")


def test_a_hung_child_is_killed_with_its_group_and_restarted(tmp_path: Path) -> None:
    start = time.monotonic()
    code = watch(child(tmp_path, "hang"), tmp_path / "heartbeat.json", tmp_path / "run.log", policy(), Notifier(None))
    assert code == 0 and runs(tmp_path) == 2
    assert time.monotonic() - start < 30
    grandchild = int((tmp_path / "runs.grandchild").read_text())
    assert not alive(grandchild)


def test_exit_3_is_not_restarted(tmp_path: Path) -> None:
    assert watch(child(tmp_path, "exit3"), tmp_path / "heartbeat.json", tmp_path / "log", policy(), Notifier(None)) == 3
    assert runs(tmp_path) == 1


def test_sigterm_stops_the_child_cleanly_then_the_watchdog(tmp_path: Path) -> None:
    threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
    code = watch(child(tmp_path, "forever"), tmp_path / "heartbeat.json", tmp_path / "log", policy(), Notifier(None))
    assert code == 0 and runs(tmp_path) == 1
    beat, _ = read_heartbeat(tmp_path / "heartbeat.json")
    assert beat is not None and not alive(beat.pid)


def test_a_frozen_daemon_is_killed_restarted_and_loses_nothing(project: Project, tmp_path: Path) -> None:
    write(project.repo, {"autoformalize.toml": config_text(loop={"heartbeat_s": 1, "cooldown_s": 0})})
    git(project.repo, "commit", "-qam", "config")
    git(project.repo, "push", "-q", "origin", "main")
    inside, release = threading.Event(), threading.Event()
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", blocking(inside, release))
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "closed it"})])
    project.agents.evaluate(evaluation(1))
    heartbeat = project.repo / ".prover-state/heartbeat.json"

    def freeze() -> None:
        assert inside.wait(60)
        beat, _ = read_heartbeat(heartbeat)
        assert beat is not None
        os.kill(beat.pid, signal.SIGSTOP)

    threading.Thread(target=freeze, daemon=True).start()
    try:
        code = watch(run_command(project.repo, ["--max-cycles", "1"]), heartbeat, tmp_path / "run.log",
                     policy(stale_after_s=4.0), Notifier(None))
    finally:
        release.set()
    log = (tmp_path / "run.log").read_text()
    assert code == 0, log
    assert [(r.cycle, r.outcome) for r in project.history()] == [(1, "interrupted"), (2, "accepted")]
    assert project.clean() and project.head() == project.remote_head()
    assert inspect_lock(project.repo / ".prover-state/run.lock").status is LockStatus.FREE




def test_why_the_child_stopped_is_said_on_the_terminal(tmp_path: Path) -> None:
    said: list[str] = []
    log = tmp_path / "run.log"
    log.write_text("error: an older run's error, not this one's\n")
    code = watch(child(tmp_path, "nokey"), tmp_path / "heartbeat.json", log, policy(), Notifier(None), said.append)
    assert code == 2
    assert said == [f"watchdog: `run` exited with 2, which a restart cannot mend: not set: ANTHROPIC_API_KEY (for the "
                    f"planner); export it (its output: {log})"]

    said.clear()
    (tmp_path / "runs").unlink()
    code = watch(child(tmp_path, "crash-saying"), tmp_path / "heartbeat.json", log, policy(max_restarts=1),
                 Notifier(None), said.append)
    assert code == 1 and len(said) == 2, said
    assert said[0].startswith("watchdog: `run` (pid ") and "exited with code 1: {\"error\": \"the branch does not" \
        in said[0] and said[0].endswith("; restarting in 1s")
    assert said[1].startswith("watchdog: giving up after 1 restarts within 60s; last: `run` (pid ")


def test_the_watchdog_command_prints_why_run_could_not_start(project: Project, monkeypatch: pytest.MonkeyPatch,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["watchdog", "--max-restarts", "2", "--repo", str(project.repo)]) == 2
    err = capfd.readouterr().err
    assert "watchdog: `run` exited with 2, which a restart cannot mend: not set: ANTHROPIC_API_KEY" in err
