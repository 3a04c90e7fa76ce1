"""The heartbeat of a running cycle: rewritten at every phase change and at least every `heartbeat_s`."""

from __future__ import annotations

import os
import socket
import threading
from datetime import timedelta
from pathlib import Path
from types import TracebackType

import structlog

from orchestrator.deps import Clock
from state.heartbeat import Heartbeat, write_heartbeat

log = structlog.get_logger()


class Beat:
    def __init__(self, path: Path, every_s: float, clock: Clock, cycle: int | None = None) -> None:
        self.path = path
        self.every_s = every_s
        self.clock = clock
        now = clock.now()
        self.state = Heartbeat(pid=os.getpid(), host=socket.gethostname(), cycle=cycle, phase="starting",
                               updated_at=now, phase_started_at=now)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def __enter__(self) -> Beat:
        self._write()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
                 ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.phase("done" if kind is None else "stopped")

    def phase(self, name: str, limit_s: float | None = None, *, cycle: int | None = None) -> None:
        """Enter phase `name` (of `cycle`, if it changes), expected to end within `limit_s` seconds."""
        now = self.clock.now()
        with self._lock:
            deadline = now + timedelta(seconds=limit_s) if limit_s else None
            update: dict[str, object] = {"phase": name, "phase_started_at": now, "phase_deadline": deadline}
            if cycle is not None:
                update["cycle"] = cycle
            if name == "sync":  # a new cycle: the last round's items are done
                update["items"] = {}
            self.state = self.state.model_copy(update=update)
        log.info("phase", cycle=self.state.cycle, phase=name)
        self._write()

    def item(self, name: str, state: str) -> None:
        """Where item `name` of the running round stands (working, passed, rejected, landed, …)."""
        with self._lock:
            self.state = self.state.model_copy(update={"items": {**self.state.items, name: state}})
        log.info("item", cycle=self.state.cycle, item=name, state=state)
        self._write()

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self._write()

    def _write(self) -> None:
        with self._lock:
            self.state = self.state.model_copy(update={"updated_at": self.clock.now()})
            try:
                write_heartbeat(self.path, self.state)
            except OSError as e:  # a full disk must not kill the cycle; the watchdog will see a stale beat
                log.warning("heartbeat.unwritable", error=str(e))
