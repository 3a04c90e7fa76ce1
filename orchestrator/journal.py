"""The cycle journal: what an interrupted cycle left, so the next one can recover.

It lives in the git directory (never in the working tree, never committed).
Written when a cycle starts and again when its commit exists; removed when
the branch holds the cycle.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from state.atomic import write_atomic


class Entry(BaseModel):
    cycle: int
    base: str  # the branch commit the cycle started from
    commit: str | None = None  # the cycle's commit, once made
    pid: int
    started_at: str


class Journal:
    def __init__(self, git_dir: Path) -> None:
        self.path = git_dir / "autoformalize" / "journal.json"

    def read(self) -> Entry | None:
        try:
            return Entry.model_validate_json(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:  # cut short by a crash while being written: atomic writes make this unlikely
            return None

    def write(self, entry: Entry) -> None:
        write_atomic(self.path, entry.model_dump_json())

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
