"""`autoformalize watchdog`: keeps `run` alive through crashes and hangs.

The child runs in its own process group. It is restarted when it dies, or when
its heartbeat is older than `stale_after` — a hung process is killed first,
its whole group: TERM, a grace period, KILL. Restarts back off, and after
`max_restarts` within `window_s` the watchdog gives up. SIGTERM or SIGINT to
the watchdog stops the child cleanly, then the watchdog, with exit 0.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

import structlog

from gates.process import kill_tree
from orchestrator.notify import Event, Notifier
from state.heartbeat import read_heartbeat

log = structlog.get_logger()


@dataclass(frozen=True)
class Policy:
    stale_after_s: float
    max_restarts: int = 5
    window_s: float = 3600.0
    check_every_s: float = 5.0
    stop_grace_s: float = 600.0  # how long a stopping child may take to reach its next safe point
    kill_grace_s: float = 10.0


def watch(command: list[str], heartbeat: Path, log_path: Path, policy: Policy, notify: Notifier,
          say: Callable[[str], None] = lambda line: None) -> int:
    """Supervise `command` (an `autoformalize run`); the exit code of the watchdog. Why a child stopped, and what
    the watchdog does about it, goes to `say` (the terminal) as well as to the log."""
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.warning("watchdog.signal", signal=signal.Signals(signum).name, action="stopping the child")
        stopping.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    restarts: collections.deque[float] = collections.deque()
    try:
        while True:
            offset = log_path.stat().st_size if log_path.is_file() else 0
            child = _start(command, log_path)
            started = time.monotonic()
            log.info("watchdog.started", pid=child.pid, log=str(log_path))
            why = _supervise(child, heartbeat, policy, stopping, started)
            if stopping.is_set():
                _stop(child, policy)
                log.info("watchdog.stopped", child_exit=child.returncode)
                return 0
            if why is None:  # the child exited by itself
                code = child.returncode
                if code == 0:
                    log.info("watchdog.child_finished")
                    return 0
                told = last_error(log_path, offset)
                if code in (2, 3):  # bad usage or configuration, or another holder of the lock: a restart cannot help
                    notify.send(Event.GIVE_UP, reason=f"`run` exited with {code}, which a restart cannot mend",
                                log=log_path)
                    say(f"watchdog: `run` exited with {code}, which a restart cannot mend: {told or 'it said nothing'} "
                        f"(its output: {log_path})")
                    return code
                why = f"`run` (pid {child.pid}) exited with code {code}" + (f": {told}" if told else "")
            now = time.monotonic()
            restarts.append(now)
            while restarts and restarts[0] < now - policy.window_s:
                restarts.popleft()
            if len(restarts) > policy.max_restarts:
                log.error("watchdog.give_up", reason=why)
                say(f"watchdog: giving up after {len(restarts) - 1} restarts within {policy.window_s:.0f}s; last: "
                    f"{why} (its output: {log_path})")
                notify.send(Event.GIVE_UP, reason=f"{len(restarts) - 1} restarts within {policy.window_s:.0f}s; "
                                                  f"last: {why}", log=log_path)
                return 1
            wait = min(300.0, 2.0 ** (len(restarts) - 1))
            log.warning("watchdog.restart", reason=why, in_s=wait)
            say(f"watchdog: {why}; restarting in {wait:.0f}s")
            notify.send(Event.RESTART, reason=why, wait=f"{wait:.0f}", log=log_path)
            if stopping.wait(wait):
                return 0
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def last_error(log_path: Path, offset: int) -> str | None:
    """What the child said last about why it failed, in its output after `offset`: its `error: …` line, else the
    last log line holding an error."""
    try:
        with log_path.open("rb") as f:
            f.seek(offset)
            lines = f.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        if line.startswith("error: "):
            return line.removeprefix("error: ").strip()[:1000]
    for line in reversed(lines):
        if '"error"' in line or "error=" in line or "Traceback" in line:
            return line.strip()[:1000]
    return None


def _start(command: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def _supervise(child: subprocess.Popen[bytes], heartbeat: Path, policy: Policy, stopping: threading.Event,
               started: float) -> str | None:
    """Wait until the child exits (None), hangs (the reason; it is killed), or a stop is requested."""
    while not stopping.wait(policy.check_every_s):
        if child.poll() is not None:
            return None
        age = _heartbeat_age(heartbeat, child.pid, started)
        if age > policy.stale_after_s:
            why = (f"`run` (pid {child.pid}) is stale: no beat, or its phase past its deadline, for {age:.0f}s "
                   f"(stale after {policy.stale_after_s:.0f}s)")
            log.error("watchdog.hung", pid=child.pid, heartbeat_age_s=round(age))
            kill_tree(child.pid, policy.kill_grace_s, reap=child.poll)
            child.wait()
            return why
    return None


def _heartbeat_age(path: Path, pid: int, started: float) -> float:
    """How stale the child is: seconds since its last beat (since its start if it has not beaten yet, or the
    file is corrupt), or, when its phase has outrun its deadline, seconds past that deadline — the heartbeat
    thread keeps beating while a phase hangs, so the deadline is what shows a hang."""
    beat, _ = read_heartbeat(path)
    since_start = time.monotonic() - started
    if beat is None or beat.pid != pid:
        return since_start
    now = datetime.now(UTC)
    age = min(since_start, (now - _utc(beat.updated_at)).total_seconds())
    if beat.phase_deadline is not None:
        age = max(age, (now - _utc(beat.phase_deadline)).total_seconds())
    return age


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _stop(child: subprocess.Popen[bytes], policy: Policy) -> None:
    """Ask the child's group to stop at its next safe point; kill it if it takes longer than the grace period."""
    if child.poll() is not None:
        return
    try:
        os.killpg(child.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        child.wait(policy.stop_grace_s)
    except subprocess.TimeoutExpired:
        log.warning("watchdog.kill", pid=child.pid, after_s=policy.stop_grace_s)
        kill_tree(child.pid, policy.kill_grace_s, reap=child.poll)
        child.wait()


def run_command(repo: Path, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "orchestrator", "run", "--repo", str(repo), *args]
