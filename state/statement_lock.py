"""statement_lock.json: the statements judged faithful to the book, by declaration, with their hashes.

A locked statement may change only when the strategy declares the restatement
(`RESTATE: <declaration> — <rationale>`); the integrity gate enforces it on the
text, the kernel gate on what Lean's environment says it means (its meaning
digest, when a toolchain answered; lock files without one still read). A
file that cannot be read is an error, not an empty lock: silently unlocking
every statement is exactly what the lock exists to prevent.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from state.files import read_model, write_model


class Locked(BaseModel):
    hash: str  # Decl.statement_hash: the signature and the context commands before it
    entity: str  # the textbook entity it formalizes
    score: int  # 3 faithful, 2 stronger
    cycle: int  # when it was judged
    fingerprint: str | None = None  # its meaning as Lean's environment gives it (`Env.meaning`), where Lean answered
    toolchain: str | None = None  # the toolchain and listing format it was computed under: meanings compare within one


class StatementLock(BaseModel):
    statements: dict[str, Locked] = Field(default_factory=dict)  # declaration → its locked statement


def read_lock(path: Path) -> StatementLock:
    return read_model(path, StatementLock)


def write_lock(path: Path, lock: StatementLock) -> None:
    write_model(path, lock)
