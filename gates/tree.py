"""File trees the gates read: a directory on disk, or files held in memory.

The gates never trust what the Worker says it changed; they compare two trees
file by file. A tree lists repository-relative POSIX paths and reads bytes.

A directory inside a git work tree lists exactly the files `git add -A` would
commit there (tracked and present, or untracked and not ignored): no folder is
skipped by its name, so a Lean file under `Book/build/` is seen, and one git
ignores is not listed because it can never land. Outside git nothing says what
would be committed, so every folder is read but git's own and Lake's (`.lake`,
`lake-packages`: dependency checkouts and build outputs, never sources).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from gates import process
from state.errors import InfraError

# Folders read nowhere outside git: git's own, and Lake's dependency checkouts and build outputs.
NOT_SOURCES = frozenset({".git", ".lake", "lake-packages"})
GIT_TIMEOUT_S = 120
# A repository's own settings must not run a program while it is listed.
_GIT = ("git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")


class Tree(Protocol):
    def files(self) -> list[str]:
        """Every file, as sorted repository-relative POSIX paths."""
        ...

    def read(self, path: str) -> bytes:
        """The bytes of one file; raises OSError when it cannot be read."""
        ...


class OutsideTree(OSError):
    """A path that leaves the tree, directly or through a symlink."""


@dataclass
class DirTree:
    """A directory on disk. Symlinks that leave it are skipped and reported."""

    root: Path
    skipped: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()

    def files(self) -> list[str]:
        self.skipped.clear()
        listed = committable(self.root)
        return self._walk() if not listed else self._present(listed)

    def _present(self, listed: list[str]) -> list[str]:
        """The listed paths that are files here (a deleted tracked file is not; a submodule is a folder)."""
        out: list[str] = []
        for rel in listed:
            path = self.root / rel
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                if not self._inside(path):
                    self.skipped.append(f"{rel}: symlink to outside the tree skipped")
                    continue
                if path.is_dir():
                    self.skipped.append(f"{rel}: symlinked directory not followed")
                    continue
            elif not stat.S_ISREG(mode):
                continue
            out.append(rel)
        return sorted(out)

    def _walk(self) -> list[str]:
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            base = Path(dirpath)
            rel = base.relative_to(self.root).as_posix()
            prefix = "" if rel == "." else rel + "/"
            keep = []
            for name in sorted(dirnames):
                if name in NOT_SOURCES:
                    continue
                if (base / name).is_symlink():
                    self.skipped.append(f"{prefix}{name}: symlinked directory not followed")
                    continue
                keep.append(name)
            dirnames[:] = keep
            for name in filenames:
                path = base / name
                if path.is_symlink() and not self._inside(path):
                    self.skipped.append(f"{prefix}{name}: symlink to outside the tree skipped")
                    continue
                out.append(prefix + name)
        return sorted(out)

    def read(self, path: str) -> bytes:
        return self.resolve(path).read_bytes()

    def resolve(self, path: str) -> Path:
        """The real location of `path`, refused when it is outside the tree."""
        candidate = self.root / path
        if not self._inside(candidate):
            raise OutsideTree(f"{path}: outside {self.root}")
        return candidate

    def _inside(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.root)
        except ValueError:
            return False
        return True


def committable(root: Path) -> list[str] | None:
    """The files under `root` that `git add -A` would commit, relative to it; None outside a git work tree (or
    when git lists nothing, as in a folder git ignores)."""
    try:
        done = process.run([*_GIT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], Path(root),
                           GIT_TIMEOUT_S)
    except InfraError:  # no git at all: nothing says what would be committed
        return None
    if done.exit_code != 0:
        return None
    return sorted({_path(p) for p in done.output.split("\0") if p}) or None


def _path(entry: str) -> str:
    """An entry of `ls-files -z`, without a warning git wrote to the same stream before it."""
    if entry.startswith(("warning: ", "error: ")) and "\n" in entry:
        return entry.rsplit("\n", 1)[1]
    return entry


def ignored(root: Path, path: str) -> bool:
    """Whether git ignores `path` (relative to `root`): such a file is never committed. Outside git, whether it is
    in a folder no tree lists there (`NOT_SOURCES`)."""
    try:
        done = process.run([*_GIT, "check-ignore", "-q", "--", path], Path(root), GIT_TIMEOUT_S)
    except InfraError:
        done = None
    if done is None or done.exit_code not in (0, 1):  # not a git work tree
        return any(part in NOT_SOURCES for part in path.split("/")[:-1])
    return done.exit_code == 0


@dataclass
class MemTree:
    """Files held in memory: a snapshot, or a tree built for a test."""

    contents: Mapping[str, bytes]

    def files(self) -> list[str]:
        return sorted(self.contents)

    def read(self, path: str) -> bytes:
        try:
            return self.contents[path]
        except KeyError:
            raise FileNotFoundError(path) from None


class ChangeKind(StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    kind: ChangeKind


def diff(base: Tree, changed: Tree, *, only: Iterable[str] | None = None) -> list[Change]:
    """What differs between two trees, by content. `only` limits the paths compared."""
    base_files = set(base.files())
    changed_files = set(changed.files())
    paths = sorted(base_files | changed_files) if only is None else sorted(set(only))
    out: list[Change] = []
    for path in paths:
        before, after = path in base_files, path in changed_files
        if before and not after:
            out.append(Change(path, ChangeKind.DELETED))
        elif after and not before:
            out.append(Change(path, ChangeKind.ADDED))
        elif before and after and base.read(path) != changed.read(path):
            out.append(Change(path, ChangeKind.MODIFIED))
    return out


def is_lean_source(path: str, roots: Iterable[str]) -> bool:
    """Whether `path` is a Lean file of the project (under a Lean root, or its root file). Without roots, every
    Lean file outside hidden folders: a module name cannot start with a dot, and the state folder (where an
    external prover's returned copies are kept) is one."""
    if not path.endswith(".lean"):
        return False
    roots = [r.strip("/") for r in roots]
    if not roots:
        return not any(part.startswith(".") for part in path.split("/")[:-1])
    return any(path == f"{r}.lean" or path.startswith(f"{r}/") for r in roots)
