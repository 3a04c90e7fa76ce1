"""Readers and writers for the small state files: the counter, strategy, results, issues, attempts.

A state file is read, listed and written only as a regular file reached without a symbolic link at any component
of its absolute path (`read_bytes`, `regular_files`, `unlinked`): a Worker can commit a link, and one under
`<state>` must not show a file outside the repository (the environment of a process, a key) as an issue, nor
another file of the tree as the Consultant's advice, nor send a write outside the tree. The repository's path is
resolved where it is found (`orchestrator.repo.find_repo`, the working copies' `workcopy.location`), so a link
above it is never met here.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from state.atomic import write_atomic
from state.errors import UsageError
from state.paths import StatePaths

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,80}$")


class Linked(UsageError):
    """A state file reached through a symbolic link, or one that is not a regular file."""


def _refuse(path: Path, at: str, what: str, done: str = "read") -> Linked:
    return Linked(f"{path} is not {done}: {at} is {what}; state files are read and written only as regular files "
                  "reached without a symbolic link. Replace it with what git history holds (`git log -- <path>`), "
                  "or remove it")


def _descend(path: Path, *, directory: bool) -> int | None:
    """A descriptor of `path` (a directory when `directory`, else a regular file, opened for reading), each
    component of its absolute path opened in turn without following a link; None when a component is missing.
    Raises `Linked` at a link, or at a final component of the wrong kind."""
    absolute = Path(os.path.abspath(path))
    parts = absolute.parts
    fd = os.open(parts[0], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts[1:], start=1):
            last = i == len(parts) - 1
            dir_wanted = directory or not last
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_DIRECTORY if dir_wanted else os.O_NONBLOCK)
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except OSError as e:
                if e.errno == errno.ENOENT:
                    return None
                try:
                    mode = os.lstat(part, dir_fd=fd).st_mode
                except OSError:
                    return None
                here = Path(*parts[:i + 1])
                if stat.S_ISLNK(mode):
                    raise _refuse(absolute, str(here), "a symbolic link") from None
                if e.errno == errno.ENOTDIR and not last:
                    return None  # a file where a folder would be: nothing is there
                raise _refuse(absolute, str(here), "not a folder" if dir_wanted else "not a regular file") from None
            os.close(fd)
            fd = nxt
        if not directory and not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refuse(absolute, str(absolute), "not a regular file")
        out, fd = fd, -1
        return out
    finally:
        if fd >= 0:
            os.close(fd)


def read_bytes(path: Path) -> bytes | None:
    """The bytes of the state file at `path`, or None when there is none; raises `Linked` for one reached
    through a symbolic link or that is not a regular file."""
    fd = _descend(path, directory=False)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        os.set_blocking(f.fileno(), True)
        return f.read()


def regular_files(folder: Path, suffix: str) -> list[tuple[Path, float]]:
    """The regular files directly in `folder` whose names end with `suffix`, with their modification times;
    nothing when the folder is missing. A link or other entry among them is left out (it was never the
    orchestrator's); `folder` reached through a link raises `Linked`."""
    fd = _descend(folder, directory=True)
    if fd is None:
        return []
    try:
        with os.scandir(fd) as entries:
            return [(folder / e.name, e.stat(follow_symlinks=False).st_mtime) for e in entries
                    if e.name.endswith(suffix) and e.is_file(follow_symlinks=False)]
    finally:
        os.close(fd)


def unlinked(path: Path) -> Path:
    """`path`, once no component of it is a symbolic link (its folder need not exist yet): what a state file is
    written to. Raises `Linked` otherwise."""
    absolute = Path(os.path.abspath(path))
    for here in (*reversed(absolute.parents), absolute):
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            break
        if stat.S_ISLNK(mode):
            raise _refuse(absolute, str(here), "a symbolic link", "written")
    return path


def read_cycle(paths: StatePaths) -> int:
    """The number of the last completed cycle; 0 before the first."""
    data = read_bytes(paths.cycle)
    if data is None:
        return 0
    text = data.decode("utf-8", "replace").strip()
    try:
        return int(text or "0")
    except ValueError:
        raise UsageError(f"{paths.relative(paths.cycle)} holds {text[:40]!r}, not a cycle number; "
                         "put the number of the last completed cycle in it") from None


_REPORT = re.compile(r"cycle_(\d+)\.md")


def reports(paths: StatePaths) -> list[tuple[int, Path]]:
    """The task results (`task_results/cycle_N.md`, N padded or not) with their cycles, in cycle order."""
    return sorted((int(m.group(1)), p) for p, _ in regular_files(paths.task_results, ".md")
                  if (m := _REPORT.fullmatch(p.name)))


def reported(paths: StatePaths) -> int:
    """The latest cycle a task result is named for; 0 when there is none."""
    found = reports(paths)
    return found[-1][0] if found else 0


def last_cycle(paths: StatePaths, cycles: Iterable[int] = ()) -> int:
    """The last cycle run here: the counter, `cycles` (the history's) or the latest task result, whichever is
    later. A loop that ran here before (another's, its counter kept local or behind its reports) is continued
    after its last cycle, so no report of its is ever written over."""
    return max([read_cycle(paths), *cycles, reported(paths)])


def write_cycle(paths: StatePaths, cycle: int) -> None:
    write_atomic(paths.cycle, f"{cycle}\n")


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist (`read_bytes`: never through a link)."""
    data = read_bytes(path)
    # Universal newlines, as `Path.read_text` reads: `\r\n` and `\r` each a newline.
    return None if data is None else data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def write_text(path: Path, text: str) -> None:
    write_atomic(unlinked(path), text if text.endswith("\n") else text + "\n")


M = TypeVar("M", bound=BaseModel)


def read_model(path: Path, model: type[M]) -> M:
    """A JSON state file; the model's defaults when there is none. One that cannot be read stops the loop
    rather than be overwritten: it is committed, so git has the last good one."""
    data = read_bytes(path)
    return model() if data is None else parse_model(data, model, str(path))


def parse_model(data: bytes, model: type[M], name: str) -> M:
    try:
        return model.model_validate_json(data)
    except (ValidationError, ValueError) as e:
        raise UsageError(f"{name} cannot be read ({str(e).splitlines()[0]}); restore it from git history") from None


def write_model(path: Path, value: BaseModel) -> None:
    write_atomic(unlinked(path), value.model_dump_json(indent=2) + "\n")


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
    write_atomic(unlinked(paths.attempts), f"{current.rstrip()}\n\n### Cycle {cycle}\n{line.strip()}\n")


@dataclass(frozen=True)
class Issue:
    slug: str
    path: Path
    mtime: float

    def text(self) -> str:
        return read_text(self.path) or ""


def open_issues(paths: StatePaths) -> list[Issue]:
    """The issue files of `<state>/issues/` (not `closed/`), newest first: regular files only, never a link."""
    found = [Issue(p.stem, p, mtime) for p, mtime in regular_files(paths.issues, ".md")]
    return sorted(found, key=lambda i: (-i.mtime, i.slug))


def write_issue(paths: StatePaths, slug: str, body: str) -> Path:
    """Write `<state>/issues/<slug>.md`; the slug must be a plain file name."""
    if not _SLUG.match(slug):
        raise ValueError(f"issue slug {slug!r}: use lowercase letters, digits, '.', '_' and '-'")
    path = paths.issues / f"{slug}.md"
    write_text(path, body)
    return path
