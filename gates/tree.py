"""File trees the gates read: a directory on disk, or files held in memory.

The gates never trust what the Worker says it changed; they compare two trees
file by file. A tree lists repository-relative POSIX paths and reads bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

# Build outputs, dependency checkouts and tool caches: never project sources.
IGNORED_DIRS = frozenset(
    {".git", ".lake", "lake-packages", ".elan", "build", "node_modules", "__pycache__", ".venv", "venv",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox"}
)


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
        out: list[str] = []
        self.skipped.clear()
        for dirpath, dirnames, filenames in os.walk(self.root):
            base = Path(dirpath)
            rel = base.relative_to(self.root).as_posix()
            prefix = "" if rel == "." else rel + "/"
            keep = []
            for name in sorted(dirnames):
                if name in IGNORED_DIRS:
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
