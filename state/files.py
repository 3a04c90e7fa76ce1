"""Readers and writers for the small state files: the counter, strategy, results, issues, attempts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from state.atomic import write_atomic
from state.errors import UsageError
from state.paths import StatePaths

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,80}$")


def read_cycle(paths: StatePaths) -> int:
    """The number of the last completed cycle; 0 before the first."""
    try:
        text = paths.cycle.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return 0
    try:
        return int(text or "0")
    except ValueError:
        raise UsageError(f"{paths.relative(paths.cycle)} holds {text[:40]!r}, not a cycle number; "
                         "put the number of the last completed cycle in it") from None


def write_cycle(paths: StatePaths, cycle: int) -> None:
    write_atomic(paths.cycle, f"{cycle}\n")


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def write_text(path: Path, text: str) -> None:
    write_atomic(path, text if text.endswith("\n") else text + "\n")


M = TypeVar("M", bound=BaseModel)


def read_model(path: Path, model: type[M]) -> M:
    """A JSON state file; the model's defaults when there is none. One that cannot be read stops the loop
    rather than be overwritten: it is committed, so git has the last good one."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return model()
    return parse_model(data, model, str(path))


def parse_model(data: bytes, model: type[M], name: str) -> M:
    try:
        return model.model_validate_json(data)
    except (ValidationError, ValueError) as e:
        raise UsageError(f"{name} cannot be read ({str(e).splitlines()[0]}); restore it from git history") from None


def write_model(path: Path, value: BaseModel) -> None:
    write_atomic(path, value.model_dump_json(indent=2) + "\n")


def read_strategy(paths: StatePaths) -> str | None:
    return read_text(paths.strategy)


def write_strategy(paths: StatePaths, text: str) -> None:
    write_text(paths.strategy, text)


def write_task_result(paths: StatePaths, cycle: int, text: str) -> Path:
    path = paths.task_result(cycle)
    write_text(path, text)
    return path


def append_attempt(paths: StatePaths, cycle: int, line: str) -> None:
    """Add the Evaluator's compacted line to attempts.md, in the reference script's layout."""
    current = read_text(paths.attempts) or "# Attempts\n"
    write_atomic(paths.attempts, f"{current.rstrip()}\n\n### Cycle {cycle}\n{line.strip()}\n")


@dataclass(frozen=True)
class Issue:
    slug: str
    path: Path
    mtime: float

    def text(self) -> str:
        return read_text(self.path) or ""


def open_issues(paths: StatePaths) -> list[Issue]:
    """The issue files of `<state>/issues/` (not `closed/`), newest first."""
    if not paths.issues.is_dir():
        return []
    found = [Issue(p.stem, p, p.stat().st_mtime) for p in paths.issues.glob("*.md") if p.is_file()]
    return sorted(found, key=lambda i: (-i.mtime, i.slug))


def write_issue(paths: StatePaths, slug: str, body: str) -> Path:
    """Write `<state>/issues/<slug>.md`; the slug must be a plain file name."""
    if not _SLUG.match(slug):
        raise ValueError(f"issue slug {slug!r}: use lowercase letters, digits, '.', '_' and '-'")
    path = paths.issues / f"{slug}.md"
    write_text(path, body)
    return path
