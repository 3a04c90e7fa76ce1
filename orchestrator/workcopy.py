"""The Worker's isolated working copy: a git worktree of the branch, with Lean's caches shared."""

from __future__ import annotations

from pathlib import Path

from orchestrator.git import Git

WORKER = "worker-0"  # one Worker per cycle for now; the name keeps room for more


def git_dir(git: Git) -> Path:
    return Path(git.run("rev-parse", "--absolute-git-dir"))


def prepare(git: Git, base: str) -> Git:
    """The working copy at `base`: created once, then reset each cycle so its build outputs stay warm."""
    path = git_dir(git) / "autoformalize" / "work" / WORKER
    work = git.worktree(path, base)
    share_packages(git.root, path)
    return work


def share_packages(main: Path, work: Path) -> None:
    """Point the working copy's `.lake/packages` (Mathlib and other dependencies) at the main checkout's."""
    source = main / ".lake" / "packages"
    target = work / ".lake" / "packages"
    if not source.is_dir():
        return
    if target.is_symlink():
        if target.resolve() == source.resolve():
            return
        target.unlink()  # left pointing elsewhere: the repository moved
    elif target.exists():
        return  # a real directory of its own: leave it
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(source, target_is_directory=True)
