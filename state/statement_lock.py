"""statement_lock.json: the statements judged faithful to the book, by declaration, with their hashes.

A locked statement may change only when the strategy declares the restatement
(`RESTATE: <declaration> — <rationale>`); the integrity gate enforces it. A
file that cannot be read is an error, not an empty lock: silently unlocking
every statement is exactly what the lock exists to prevent.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from state.atomic import write_atomic
from state.errors import UsageError


class Locked(BaseModel):
    hash: str  # Decl.statement_hash: the signature and the context commands before it
    entity: str  # the textbook entity it formalizes
    score: int  # 3 faithful, 2 stronger
    cycle: int  # when it was judged


class StatementLock(BaseModel):
    statements: dict[str, Locked] = Field(default_factory=dict)  # declaration → its locked statement


def read_lock(path: Path) -> StatementLock:
    try:
        return StatementLock.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return StatementLock()
    except (ValidationError, ValueError) as e:
        raise UsageError(f"{path} cannot be read ({str(e).splitlines()[0]}); restore it from git history") from None


def write_lock(path: Path, lock: StatementLock) -> None:
    write_atomic(path, lock.model_dump_json(indent=2) + "\n")
