"""Where each state file of SPEC §2 lives in a formalization repository."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STATE_DIR = ".prover-state"
"""The state folder's default name (`[project] state_dir`)."""


@dataclass(frozen=True)
class StatePaths:
    """Paths of the state files under `<repo>/<state_dir>`."""

    repo: Path
    state_dir: str = STATE_DIR

    @property
    def root(self) -> Path:
        return self.repo / self.state_dir

    @property
    def cycle(self) -> Path:
        return self.root / "cycle"

    @property
    def strategy(self) -> Path:
        return self.root / "strategy.md"

    @property
    def task_results(self) -> Path:
        return self.root / "task_results"

    def task_result(self, cycle: int) -> Path:
        return self.task_results / f"cycle_{cycle:03d}.md"

    @property
    def issues(self) -> Path:
        return self.root / "issues"

    @property
    def history(self) -> Path:
        return self.root / "history.jsonl"

    @property
    def attempts(self) -> Path:
        return self.root / "attempts.md"

    @property
    def heartbeat(self) -> Path:
        return self.root / "heartbeat.json"

    @property
    def lock(self) -> Path:
        return self.root / "run.lock"

    @property
    def audit(self) -> Path:
        """The latest `autoformalize audit` (JSON and Markdown); the user's to commit, the loop never writes it."""
        return self.root / "audit"

    @property
    def statement_lock(self) -> Path:
        return self.root / "statement_lock.json"

    @property
    def pairing(self) -> Path:
        """The pairing ledger: which declarations formalize an entity known from a doc comment, and its text
        (`pairing.py`)."""
        return self.root / "pairing.json"

    @property
    def book_text(self) -> Path:
        """Version 0 of the ledger's texts, read once to write `pairing` (`pairing.migrate`)."""
        return self.root / "book_text.json"

    @property
    def prover_jobs(self) -> Path:
        return self.root / "prover_jobs.json"

    @property
    def prover_results(self) -> Path:
        """One directory per returned job, holding the Lean files the prover returned."""
        return self.root / "prover_results"

    def relative(self, path: Path) -> str:
        """`path` relative to the repository, as POSIX."""
        return path.relative_to(self.repo).as_posix()
