"""File trees the gates read: a directory on disk, or files held in memory.

The gates never trust what the Worker says it changed; they compare two trees
file by file. A tree lists repository-relative POSIX paths and reads bytes.

A directory inside a git work tree lists exactly the files `git add -A` would
commit there (tracked and present, or untracked and not ignored): no folder is
skipped by its name, so a Lean file under `Book/build/` is seen, and one git
ignores is not listed because it can never land. A tracked file flagged
`skip-worktree` or `assume-unchanged` is read as git's index holds it, which is
what `git add -A` leaves staged whatever the working copy says. Outside git
nothing says what would be committed, so every folder is read but git's own and
Lake's (`.lake`, `lake-packages`: dependency checkouts and build outputs, never
sources). Git failing for any other reason is an error, never a silent walk.

A symlink whose target lies outside the tree is not read through (its target is
no file of the tree) but is never forgotten either: `git add -A` would commit it
as a link, and a checkout elsewhere would follow it (`lakefile.lean ->
~/.ssh/id_rsa`). `DirTree.leaving` names every such link, and the scope gate
refuses a tree that holds one.
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
from state.paths import STATE_DIR

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
    """A directory on disk. Symlinks that leave it are not listed, but reported (`skipped`) and named (`leaving`)."""

    root: Path
    skipped: list[str] = field(default_factory=list)
    staged: frozenset[str] = frozenset()  # flagged entries, read from git's index
    _leaving: list[str] = field(default_factory=list, init=False, repr=False)  # found by the last `files`

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()

    def leaving(self) -> list[str]:
        """The symlinks `git add -A` would commit (outside git: every one but in `NOT_SOURCES`) whose target lies
        outside the tree, to a file or a folder, directly or through other links; sorted, as the tree is now."""
        self.files()
        return sorted(self._leaving)

    def files(self) -> list[str]:
        self.skipped.clear()
        self._leaving.clear()
        listing = committable(self.root)
        if listing is None:
            return self._walk()
        self.staged = listing.staged
        return sorted(set(self._present(listing.paths)) | listing.staged)

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
                    self._left(rel, f"{rel}: symlink to outside the tree skipped")
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
                    if not self._inside(base / name):
                        self._leaving.append(prefix + name)
                    continue
                keep.append(name)
            dirnames[:] = keep
            for name in filenames:
                path = base / name
                if path.is_symlink() and not self._inside(path):
                    self._left(prefix + name, f"{prefix}{name}: symlink to outside the tree skipped")
                    continue
                out.append(prefix + name)
        return sorted(out)

    def _left(self, rel: str, note: str) -> None:
        self.skipped.append(note)
        self._leaving.append(rel)

    def read(self, path: str) -> bytes:
        if path in self.staged:
            done = process.run([*_GIT, "cat-file", "blob", f":{path}"], self.root, GIT_TIMEOUT_S, apart=True)
            if done.exit_code != 0:
                raise OSError(f"{path}: git cannot show its staged content ({done.errors.strip()})")
            return done.data
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


@dataclass(frozen=True)
class Listing:
    """What `git add -A` would commit under a folder."""

    paths: list[str]
    staged: frozenset[str]  # flagged `skip-worktree` or `assume-unchanged`: git commits its index copy of them


def committable(root: Path) -> Listing | None:
    """The files under `root` that `git add -A` would commit, relative to it; None outside a git work tree (or
    when git lists nothing, as in a folder git ignores). Raises InfraError when git fails otherwise."""
    try:
        done = process.run([*_GIT, "ls-files", "-z", "-v", "--cached", "--others", "--exclude-standard"],
                           Path(root), GIT_TIMEOUT_S, apart=True)
    except InfraError:  # no git at all: nothing says what would be committed
        return None
    if done.exit_code != 0:
        if _outside(done):
            return None
        raise InfraError(f"`git ls-files` failed in {root} ({_status(done)}): {done.errors.strip()[-500:]}; fix the "
                         "repository (or run git there to see why)")
    paths, staged = [], set()
    for entry in done.output.split("\0"):
        if len(entry) < 3:
            continue
        tag, path = entry[0], entry[2:]
        paths.append(path)
        if tag == "S" or tag.islower():  # skip-worktree, or assume-unchanged (a lowercase tag)
            staged.add(path)
    return Listing(sorted(set(paths)), frozenset(staged)) if paths else None


def ignored(root: Path, path: str) -> bool:
    """Whether git ignores `path` (relative to `root`): such a file is never committed. Outside git, whether it is
    in a folder no tree lists there (`NOT_SOURCES`)."""
    try:
        done = process.run([*_GIT, "check-ignore", "-q", "--", path], Path(root), GIT_TIMEOUT_S, apart=True)
    except InfraError:
        return any(part in NOT_SOURCES for part in path.split("/")[:-1])
    if done.exit_code in (0, 1):
        return done.exit_code == 0
    if _outside(done):
        return any(part in NOT_SOURCES for part in path.split("/")[:-1])
    raise InfraError(f"`git check-ignore` failed in {root} ({_status(done)}): {done.errors.strip()[-500:]}")


def _outside(done: process.Completed) -> bool:
    """Whether git failed only because the folder is not in a work tree."""
    return done.exit_code == 128 and "not a git repository" in done.errors


def _status(done: process.Completed) -> str:
    return "timed out" if done.timed_out else f"exit {done.exit_code}"


def leaving(tree: Tree) -> list[str]:
    """The symlinks of `tree` whose target lies outside it. Only a tree on disk has links to follow: a commit holds
    a link as the text of its target (and every commit a cycle makes was a tree on disk this named first)."""
    return tree.leaving() if isinstance(tree, DirTree) else []


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


def is_lean_source(path: str, roots: Iterable[str], state_dir: str = STATE_DIR) -> bool:
    """Whether `path` is a Lean file of the project (under a Lean root, or its root file). Without roots, every
    Lean file but those of the state folder (where an external prover's returned copies are kept): no other folder
    is left out for its name, a hidden one included, since what is committed there can hold a `sorry` or an
    axiom all the same."""
    if not path.endswith(".lean"):
        return False
    roots = [r.strip("/") for r in roots]
    if not roots:
        return not path.startswith(f"{state_dir.strip('/')}/")
    return any(path == f"{r}.lean" or path.startswith(f"{r}/") for r in roots)
