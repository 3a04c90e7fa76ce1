"""run.lock: one orchestrator per checkout.

The lock is filelock's existence lock: the file exists while held and records
the holder's pid and host. A holder on this host whose process has died leaves
a stale lock, which the next acquirer breaks; a holder on another host is never
second-guessed. The file's modification time is when it was taken.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from filelock import SoftFileLock, Timeout

from state.errors import LockHeld
from state.files import read_text


class LockStatus(StrEnum):
    FREE = "free"
    HELD = "held"
    STALE = "stale"


@dataclass(frozen=True)
class Holder:
    pid: int | None
    host: str | None
    started_at: datetime

    def describe(self) -> str:
        who = f"pid {self.pid}" if self.pid else "an unknown process"
        return f"{who} on {self.host or 'an unknown host'}, since {self.started_at:%Y-%m-%d %H:%M:%S} UTC"


@dataclass(frozen=True)
class LockState:
    status: LockStatus
    holder: Holder | None = None


def inspect_lock(path: Path) -> LockState:
    """Whether the lock is free, held by a live (or unprovably dead) process, or stale."""
    try:
        text = read_text(path)  # never through a link
        mtime = os.lstat(path).st_mtime
    except FileNotFoundError:
        return LockState(LockStatus.FREE)
    if text is None:
        return LockState(LockStatus.FREE)
    holder = _parse(text, mtime)
    if holder.pid is None:
        return LockState(LockStatus.STALE, holder)  # no record: left by an older tool or cut short
    if not same_host(holder.host):
        return LockState(LockStatus.HELD, holder)
    return LockState(LockStatus.HELD if pid_alive(holder.pid) else LockStatus.STALE, holder)


class RunLock:
    """Held for the duration of a cycle or a daemon run; `LockHeld` names the holder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = SoftFileLock(str(path), timeout=0, is_singleton=False)

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()  # breaks a stale lock of a dead process on this host
        except Timeout:
            state = inspect_lock(self.path)
            who = state.holder.describe() if state.holder else "another process"
            raise LockHeld(f"{self.path.name} is held by {who}; wait for it to finish, or stop it "
                           "(`autoformalize status` shows its heartbeat)") from None

    def release(self) -> None:
        self._lock.release()


def _parse(text: str, mtime: float) -> Holder:
    lines = text.splitlines()
    pid = int(lines[0]) if lines and lines[0].isdigit() else None
    host = lines[1] if len(lines) > 1 and pid is not None else None
    return Holder(pid, host, datetime.fromtimestamp(mtime, UTC))


def same_host(recorded: str | None) -> bool:
    # filelock may append a PID-namespace tag ("host?pidns-…") to the hostname.
    here = socket.gethostname()
    return recorded is not None and (recorded == here or recorded.startswith(here + "?"))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
