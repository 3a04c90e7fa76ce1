"""The interface of an external batch prover: submit sorries with their project, poll, fetch, cancel.

A prover works for tens of minutes on a copy of the project while the loop
goes on; the cycle's harvest phase polls it, and whichever closes a sorry
first — the Worker or the prover — wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from state.prover_jobs import Target

__all__ = ["Off", "Phase", "Poll", "Prover", "ProverError", "Target"]


class Phase(StrEnum):
    """Where a job stands at the prover."""

    RUNNING = "running"
    RETURNED = "returned"  # finished with files to fetch (a partial result included)
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Poll:
    phase: Phase
    detail: str = ""


@dataclass(frozen=True)
class Off:
    """No prover, and why."""

    reason: str


class ProverError(Exception):
    """The prover could not be reached or refused the request; the cycle logs it and goes on."""


class Prover(Protocol):
    name: str

    def submit(self, targets: list[Target], files: dict[str, bytes]) -> str:
        """Start a job filling the targets' sorries; `files` is the Lean project by repository-relative path.
        Returns the job's id."""
        ...

    def poll(self, job: str) -> Poll: ...

    def fetch(self, job: str) -> dict[str, str]:
        """The finished job's Lean files by repository-relative path."""
        ...

    def cancel(self, job: str) -> None: ...
