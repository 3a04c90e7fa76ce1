"""The file tree the gates read in a git work tree: exactly what `git add -A` would commit, or a loud failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.census import census
from gates.tree import DirTree
from orchestrator import workcopy
from orchestrator.git import Git
from state.errors import InfraError
from tests.conftest import git, write

AXIOM = "theorem a : True := trivial\naxiom trustMe : False\n"


def _repo(root: Path) -> Path:
    write(root, {"Book/A.lean": "theorem a : True := trivial\n", "Book/B.lean": "theorem b : True := trivial\n"})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_git_s_messages_on_stderr_never_become_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    monkeypatch.setenv("GIT_TRACE", "1")  # git writes its trace to stderr, before and between what it lists
    assert DirTree(repo).files() == ["Book/A.lean", "Book/B.lean"]


def test_a_failing_git_is_an_error_not_a_silent_walk(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".git" / "index").write_bytes(b"not an index")
    with pytest.raises(InfraError, match=r"`git ls-files` failed in .*index"):
        DirTree(repo).files()


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_a_flagged_file_is_read_as_git_would_commit_it(tmp_path: Path, flag: str) -> None:
    """With the flag, `git add -A` commits the index copy whatever the working copy holds; so do the gates."""
    repo = _repo(tmp_path)
    git(repo, "update-index", flag, "Book/A.lean")
    write(repo, {"Book/A.lean": AXIOM})
    (repo / "Book/B.lean").unlink() if flag == "--skip-worktree" else None
    git(repo, "update-index", flag, "Book/B.lean")
    tree = DirTree(repo)
    assert tree.files() == ["Book/A.lean", "Book/B.lean"]
    assert tree.read("Book/A.lean") == b"theorem a : True := trivial\n"
    assert [d.name for _, d in census(tree, ["Book"]).axioms()] == []
    git(repo, "add", "-A")
    assert git(repo, "show", ":Book/A.lean") == "theorem a : True := trivial\n"  # what git commits, indeed


def test_the_worker_s_working_copy_is_unflagged_before_the_gates(tmp_path: Path) -> None:
    """In the Worker's working copy the flags are cleared: the gates, the build and the commit see the disk."""
    repo = _repo(tmp_path)
    git(repo, "update-index", "--skip-worktree", "Book/A.lean", "Book/B.lean")
    write(repo, {"Book/A.lean": AXIOM})
    (repo / "Book/B.lean").unlink()
    work = Git(repo)
    assert workcopy.unflag(work) == ["Book/A.lean", "Book/B.lean"]
    assert (repo / "Book/B.lean").read_text() == "theorem b : True := trivial\n"  # checked out again, not deleted
    assert work.status_paths() == ["Book/A.lean"]
    assert [d.name for _, d in census(DirTree(repo), ["Book"]).axioms()] == ["trustMe"]
    assert workcopy.unflag(work) == []
