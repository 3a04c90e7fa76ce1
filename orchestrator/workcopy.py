"""The Worker's isolated working copy: a git worktree of the branch, with Lean's caches shared.

It lives outside the git directory, under the user's cache directory
(`$XDG_CACHE_HOME/autoformalize/<repository>-<hash>/`, else `~/.cache/…`): code
the Worker wrote that runs in it can reach neither the git directory's hooks
nor the state files, and the sandbox shows it the working copy alone.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import structlog

from agents.tools import SCRATCH
from gates.sandbox import link_packages
from orchestrator import buildoutputs
from orchestrator.git import Git, GitError

WORKER = "worker-0"  # a cycle's Worker; the items of a parallel round use worker-1, worker-2, …
PREPARING = 8  # working copies a round prepares at once: git's work there is mostly waiting on the disk

log = structlog.get_logger()


def git_dir(git: Git) -> Path:
    return Path(git.run("rev-parse", "--absolute-git-dir"))


def common_dir(git: Git) -> Path:
    """The repository's git directory, shared by all its worktrees."""
    return git.common_dir()


def cache_dir() -> Path:
    """The user's cache directory (XDG), where the working copies live; resolved, as a repository's path is, so
    no symbolic link stands above a working copy's state files (`state.files` reads none through one)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return ((Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "autoformalize").resolve()


def location(git: Git, worker: str = WORKER) -> Path:
    """A Worker's working copy of this repository: one per repository (its git directory's path) and Worker."""
    common = common_dir(git)
    name = common.parent.name if common.name == ".git" else common.name.removesuffix(".git")
    key = hashlib.sha256(str(common).encode()).hexdigest()[:16]
    return cache_dir() / f"{name}-{key}" / worker


def prepare(git: Git, base: str, lake_dir: str = ".", worker: str = WORKER) -> Git:
    """The working copy at `base`: created once, then reset each cycle so its build outputs stay warm. `lake_dir`:
    the Lake project's folder, whose `.lake` holds the outputs and the dependencies."""
    remove_former(git)
    return _prepare(git, base, lake_dir, worker)


def prepare_all(git: Git, base: str, lake_dir: str, workers: list[str]) -> list[Git]:
    """`prepare` for each of `workers` (a round's items), at once: each copy's checkout is its own."""
    if not workers:
        return []
    remove_former(git)
    with ThreadPoolExecutor(max_workers=min(len(workers), PREPARING)) as pool:
        return list(pool.map(lambda worker: _prepare(git, base, lake_dir, worker), workers))


def _prepare(git: Git, base: str, lake_dir: str, worker: str) -> Git:
    path = location(git, worker)
    work = git.worktree(path, base)
    buildoutputs.recover(path, lake_dir)  # a cycle killed mid-way: what its session wrote goes before any build
    link_packages(path / lake_dir, git.root / lake_dir / ".lake" / "packages")
    return work


def remove_former(git: Git) -> None:
    """Remove a working copy left inside the git directory by an earlier version (within reach of its hooks)."""
    former = common_dir(git) / "autoformalize" / "work"
    if not former.exists():
        return
    for path in sorted(p for p in former.iterdir() if p.is_dir()):
        try:
            git.run("worktree", "remove", "--force", "--force", str(path))
        except GitError as e:  # not a registered worktree any more: its files alone are left
            log.info("workcopy.former_removed", path=str(path), note=str(e)[:200])
    shutil.rmtree(former, ignore_errors=True)
    git.run("worktree", "prune")


def unflag(work: Git) -> list[str]:
    """Clear `skip-worktree` and `assume-unchanged` in the working copy, and check out what such a file lacks on
    disk: with a flag git neither shows nor commits a file's changes while the build compiles what is on disk, so
    the gates, the build and the commit would not see one change. Returns the paths that were flagged."""
    listed = work.run("ls-files", "-z", "-v").split("\0")
    flagged = [entry[2:] for entry in listed if len(entry) > 2 and (entry[0] == "S" or entry[0].islower())]
    if flagged:
        for flag in ("--no-skip-worktree", "--no-assume-unchanged"):  # one mode per call: the last given wins
            work.run("update-index", flag, "--", *flagged)
        missing = [p for p in flagged if not (work.root / p).exists()]
        if missing:
            work.run("checkout", "--", *missing)
        log.warning("workcopy.unflagged", paths=flagged[:20], count=len(flagged))
    return flagged


def drop_scratch(work: Git, base: str) -> None:
    """The scratch folder as `base` has it (absent, usually): the Worker's experiments never reach the gates."""
    path = work.root / SCRATCH
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    if work.run("ls-tree", "--name-only", base, "--", SCRATCH):
        work.run("checkout", base, "--", SCRATCH)
