"""prover_jobs.json: every job handed to an external prover, and what became of it."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from state.files import read_model, write_model


class Target(BaseModel):
    """A declaration holding a sorry, and the file it is in."""

    model_config = ConfigDict(frozen=True)

    declaration: str
    file: str


class JobStatus(StrEnum):
    SUBMITTED = "submitted"
    RETURNED = "returned"
    CANCELLED = "cancelled"
    FAILED = "failed"


class Use(StrEnum):
    USED = "used"  # an accepted cycle closed a target with the prover's proof
    UNUSED = "unused"  # its targets were closed otherwise, or the change carrying its proof was rejected


class ProverJob(BaseModel):
    id: str
    prover: str
    submitted_cycle: int
    submitted_at: datetime
    targets: list[Target]
    status: JobStatus = JobStatus.SUBMITTED
    finished_at: datetime | None = None  # returned, cancelled or failed
    proved: list[str] = Field(default_factory=list)  # targets the returned files hold without a sorry
    use: Use | None = None
    used_cycle: int | None = None
    closed: list[str] = Field(default_factory=list)  # targets whose sorry an accepted cycle closed with its proof
    note: str = ""

    @property
    def open(self) -> bool:
        return self.status is JobStatus.SUBMITTED


class ProverJobs(BaseModel):
    jobs: list[ProverJob] = Field(default_factory=list)


def tally(jobs: ProverJobs) -> dict[str, object]:
    """Jobs by status and by use, and the sorries the prover's proofs closed."""
    return {"jobs": len(jobs.jobs),
            "by_status": {s.value: n for s in JobStatus if (n := sum(j.status is s for j in jobs.jobs))},
            "by_use": {u.value: n for u in Use if (n := sum(j.use is u for j in jobs.jobs))},
            "sorries_closed": sum(len(j.closed) for j in jobs.jobs)}


def read_jobs(path: Path) -> ProverJobs:
    return read_model(path, ProverJobs)


def write_jobs(path: Path, jobs: ProverJobs) -> None:
    write_model(path, jobs)
