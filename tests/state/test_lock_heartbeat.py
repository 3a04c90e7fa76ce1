"""The run lock (free, held, stale; another host is never broken) and the heartbeat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from state.errors import LockHeld
from state.heartbeat import Heartbeat, read_heartbeat, write_heartbeat
from state.lock import LockStatus, RunLock, inspect_lock

DATA = Path(__file__).parent.parent / "data" / "openmath"


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_free_held_and_released(tmp_path: Path) -> None:
    path = tmp_path / "run.lock"
    assert inspect_lock(path).status is LockStatus.FREE
    with RunLock(path):
        state = inspect_lock(path)
        assert state.status is LockStatus.HELD
        assert state.holder is not None and state.holder.pid == os.getpid()
    assert inspect_lock(path).status is LockStatus.FREE


def test_a_second_holder_is_refused_with_pid_and_host(tmp_path: Path) -> None:
    path = tmp_path / "run.lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        f"import sys, time; sys.path[:0] = {sys.path!r}\n"
        "from pathlib import Path\nfrom state.lock import RunLock\n"
        f"lock = RunLock(Path({str(path)!r})); lock.acquire(); print('held', flush=True); time.sleep(30)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld, match=f"held by pid {holder.pid} on "):
            RunLock(path).acquire()
        assert inspect_lock(path).status is LockStatus.HELD
    finally:
        holder.kill()
        holder.wait()
    # The holder died without releasing: the lock is stale, and the next acquirer breaks it.
    assert inspect_lock(path).status is LockStatus.STALE
    with RunLock(path):
        assert inspect_lock(path).holder.pid == os.getpid()  # type: ignore[union-attr]


def test_a_lock_recorded_by_a_dead_process_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "run.lock"
    import socket

    path.write_text(f"{dead_pid()}\n{socket.gethostname()}\n")
    assert inspect_lock(path).status is LockStatus.STALE


def test_a_lock_held_on_another_host_is_never_broken(tmp_path: Path) -> None:
    path = tmp_path / "run.lock"
    path.write_text(f"{dead_pid()}\nsome-other-host.example\n")
    state = inspect_lock(path)
    assert state.status is LockStatus.HELD and state.holder and state.holder.host == "some-other-host.example"
    with pytest.raises(LockHeld, match=r"some-other-host\.example"):
        RunLock(path).acquire()
    assert path.exists()


def test_an_empty_lock_file_of_the_reference_script_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "run.lock"
    path.write_text("")
    assert inspect_lock(path).status is LockStatus.STALE


def test_heartbeat_round_trip_and_age(tmp_path: Path) -> None:
    path = tmp_path / "heartbeat.json"
    now = datetime(2026, 11, 21, 12, tzinfo=UTC)
    beat = Heartbeat(pid=42, host="h", cycle=3, phase="work", updated_at=now - timedelta(seconds=90),
                     phase_started_at=now - timedelta(seconds=100), phase_deadline=now + timedelta(hours=2))
    write_heartbeat(path, beat)
    read, problem = read_heartbeat(path)
    assert problem is None and read == beat and read.age(now) == 90
    assert set(json.loads(path.read_text())) == {"pid", "host", "cycle", "phase", "updated_at", "phase_started_at",
                                                 "phase_deadline"}


def test_reference_heartbeat_loads() -> None:
    beat, problem = read_heartbeat(DATA / "openmath_heartbeat.json")
    assert problem is None and beat is not None
    assert (beat.pid, beat.cycle, beat.phase, beat.host) == (62251, 269, "worker", None)


def test_a_corrupt_heartbeat_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "heartbeat.json"
    path.write_text('{"pid": 1, "pha')
    beat, problem = read_heartbeat(path)
    assert beat is None and problem is not None and "unreadable" in problem
