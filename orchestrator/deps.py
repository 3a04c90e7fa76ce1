"""The outside things a cycle depends on, each behind one small interface."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from agents.model import Model
from gates.base import Compiler


class Clock(Protocol):
    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class CIStatus(Protocol):
    """The conclusion of the branch's last CI run: "success", "failure", or None when unknown."""

    def conclusion(self, commit: str) -> str | None: ...


@dataclass
class Deps:
    model: Callable[[str], Model]  # role name → its model
    compiler: Callable[[Path], Compiler]  # working copy → its compiler
    clock: Clock
    ci: CIStatus | None = None
