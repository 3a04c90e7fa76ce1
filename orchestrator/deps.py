"""The outside things a cycle depends on, each behind one small interface."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from agents.ledger import Ledger
from agents.lsp import LeanServer
from agents.model import Model
from agents.provers.base import Off, Prover
from agents.tools import Workspace
from agents.worker import Limits, Session
from gates.base import Compiler
from gates.credentials import Secrets


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


class SessionFactory(Protocol):
    """Opens the Worker's session in its workspace, charging the cycle's ledger; `model`, when given, instead of
    the configured one (`[agents.worker] hard_model`)."""

    def __call__(self, workspace: Workspace, rules: str, limits: Limits, ledger: Ledger,
                 stop: threading.Event, model: str | None = None) -> Session: ...


@dataclass
class Deps:
    model: Callable[[str, Ledger], Model]  # role name, the cycle's ledger → its model, metered
    compiler: Callable[[Path], Compiler]  # working copy → its compiler
    clock: Clock
    session: SessionFactory
    ci: CIStatus | None = None
    prover: Prover | Off = field(default_factory=lambda: Off('[prover] backend = "none"'))
    secrets: Secrets = field(default_factory=Secrets)  # values redacted from tool results, refused in changes
    lean: Callable[[Path], LeanServer | None] = lambda root: None
    """Lean's language server for a read-only session in the working copy `root`, when the Worker has one
    (`[agents.worker] lean_tools`); the caller closes it."""
