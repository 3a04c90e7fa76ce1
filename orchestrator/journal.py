"""The cycle journal: what an interrupted cycle left, so the next one can recover.

It lives in the git directory (never in the working tree, never committed).
Written when a cycle starts, after each model call (with what the calls cost),
and when its commit exists; removed when the branch holds the cycle. Cycles that were interrupted and not yet recorded
travel with it, so two interruptions in a row lose neither record.
"""

from __future__ import annotations

import threading
from pathlib import Path

from pydantic import BaseModel, Field

from state.atomic import write_atomic
from state.history import HistoryRecord, Usage
from state.prover_jobs import ProverJob


class Unfinished(BaseModel):
    cycle: int
    base: str
    pid: int
    started_at: str
    # What its model calls cost so far, so a cycle that never lands still counts against the budgets.
    usage: dict[str, Usage] = Field(default_factory=dict)
    costs: dict[str, float | None] = Field(default_factory=dict)
    served_by: dict[str, list[str]] = Field(default_factory=dict)
    # Jobs it handed an external prover: they run on whether or not the cycle lands, so the next one adopts them.
    prover_jobs: list[ProverJob] = Field(default_factory=list)
    # Its record, once written: a commit that fails (a full disk, a broken index) must not lose what it says.
    record: HistoryRecord | None = None


class Entry(Unfinished):
    commit: str | None = None  # the cycle's commit, once made
    merging: bool = False  # the user's checkout is being fast-forwarded to `commit`
    unfinished: list[Unfinished] = Field(default_factory=list)  # earlier interrupted cycles, not yet recorded


class Journal:
    def __init__(self, git_dir: Path) -> None:
        self.path = git_dir / "autoformalize" / "journal.json"

    def read(self) -> Entry | None:
        try:
            return Entry.model_validate_json(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:  # unreadable: written atomically, so only a foreign or older file
            return None

    def write(self, entry: Entry) -> None:
        write_atomic(self.path, entry.model_dump_json())

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


class RoundJournal:
    """One journal for a parallel round: each item writes and clears its own entry through `view`, and the file
    holds them all, so a crash at any point leaves every item not yet landed to be recorded as interrupted.

    The item landing (the one whose entry has a commit) is the file's entry, the others travel as unfinished
    with what the round carried from before; the file goes once every item has landed."""

    def __init__(self, journal: Journal, carried: list[Unfinished]) -> None:
        self.journal = journal
        self.carried = carried
        self.entries: dict[int, Entry] = {}
        self._lock = threading.Lock()

    def view(self, cycle: int) -> ItemJournal:
        return ItemJournal(self, cycle)

    def put(self, entry: Entry) -> None:
        with self._lock:
            self.entries[entry.cycle] = entry
            self._flush()

    def drop(self, cycle: int) -> None:
        with self._lock:
            self.entries.pop(cycle, None)
            self._flush()

    def _flush(self) -> None:
        if not self.entries:
            self.journal.clear()
            return
        top = next((e for e in self.entries.values() if e.commit is not None), next(iter(self.entries.values())))
        others = [Unfinished.model_validate(e.model_dump(include=set(Unfinished.model_fields)))
                  for e in self.entries.values() if e is not top]
        self.journal.write(top.model_copy(update={"unfinished": [*others, *self.carried]}))


class ItemJournal(Journal):
    """One item's part of a `RoundJournal`, with a cycle's journal's interface."""

    def __init__(self, round_: RoundJournal, cycle: int) -> None:
        super().__init__(round_.journal.path.parent.parent)
        self.round = round_
        self.cycle = cycle

    def read(self) -> Entry | None:
        return self.round.entries.get(self.cycle)

    def write(self, entry: Entry) -> None:
        self.round.put(entry)

    def clear(self) -> None:
        self.round.drop(self.cycle)
