"""The Worker's working copy lives outside the git directory, and no git command of the loop runs a hook."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from orchestrator import workcopy
from orchestrator.git import Git
from tests.conftest import git
from tests.orchestrator.harness import Project, evaluation, strategy

HOOKS = ("pre-commit", "post-commit", "post-checkout", "post-merge", "reference-transaction", "pre-push",
         "post-rewrite", "prepare-commit-msg", "commit-msg")


def test_the_working_copy_is_under_the_cache_directory_keyed_by_repository(project: Project, tmp_path: Path) -> None:
    here = workcopy.location(Git(project.repo))

    assert here.parent.parent == tmp_path / "cache" / "autoformalize"  # $XDG_CACHE_HOME, as the tests set it
    assert here.parent.name.startswith("book-") and here.name == "worker-0"
    other = tmp_path / "elsewhere" / "book"
    other.mkdir(parents=True)
    git(other, "init", "-q")
    assert workcopy.location(Git(other)).parent.name != here.parent.name  # same name, another repository


def test_a_former_working_copy_inside_the_git_directory_is_removed(project: Project) -> None:
    former = project.repo / ".git/autoformalize/work/worker-0"
    git(project.repo, "worktree", "add", "-q", "--detach", str(former), "HEAD")
    (former / ".lake/build").mkdir(parents=True)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing to do")
    project.agents.evaluate(evaluation(0))

    project.cycle()

    assert not (project.repo / ".git/autoformalize/work").exists()
    listed = git(project.repo, "worktree", "list", "--porcelain")
    assert str(former) not in listed and str(workcopy.location(Git(project.repo))) in listed


def test_no_hook_runs_in_a_whole_cycle(project: Project, tmp_path: Path) -> None:
    ran = tmp_path / "hooks-ran"
    hooks = project.repo / ".git/hooks"
    for name in HOOKS:
        (hooks / name).write_text(f"#!/bin/sh\necho {name} >> {ran}\n")
        (hooks / name).chmod(0o755)
    git(project.repo, "commit", "-q", "--allow-empty", "-m", "a plain git commit runs them")
    assert ran.read_text().split()[:1] == ["pre-commit"]
    ran.unlink()
    git(project.repo, "reset", "-q", "--hard", "HEAD~1")
    ran.unlink(missing_ok=True)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "closed Book.hard"})])
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    assert record.outcome == "accepted" and project.remote_head() == project.head()
    assert not ran.exists(), ran.read_text()  # worktree checkout, commits, cherry-pick, push, merge: none ran one
    assert os.access(hooks / "post-commit", os.X_OK)


def test_a_rounds_working_copies_are_prepared_at_once_each_at_the_base(project: Project) -> None:
    repo = Git(project.repo)
    names = [f"worker-{k}" for k in range(1, 6)]
    copies = workcopy.prepare_all(repo, project.head(), ".", names)
    assert [c.root for c in copies] == [workcopy.location(repo, n) for n in names]
    assert all(c.head() == project.head() and not c.dirty() for c in copies)
    (copies[0].root / "Book/A.lean").write_text("a session's edit")
    (copies[1].root / "Stray.lean").write_text("a session's file")
    shutil.rmtree(copies[2].root)  # its folder gone, its registration left
    (Path(copies[3].run("rev-parse", "--absolute-git-dir")) / "index.lock").write_text("")  # a killed git's lock
    git(project.repo, "commit", "-q", "--allow-empty", "-m", "the branch moved")

    again = workcopy.prepare_all(repo, project.head(), ".", names)

    assert [c.root for c in again] == [c.root for c in copies]
    assert all(c.head() == project.head() and not c.dirty() for c in again)
    assert (again[0].root / "Book/A.lean").read_text() == (project.repo / "Book/A.lean").read_text()
    listed = git(project.repo, "worktree", "list", "--porcelain")
    assert all(listed.count(f"worktree {c.root}\n") == 1 for c in again)


def test_working_copies_made_at_once_never_read_each_others_half_made_metadata(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`git worktree add` reads every other worktree's metadata: two adds at once can find one half-written."""
    repo = Git(project.repo)
    names = [f"worker-{k}" for k in range(1, 8)]
    for attempt in range(12):  # each time new copies, under a new cache directory
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"cache-{attempt}"))
        copies = workcopy.prepare_all(repo, project.head(), ".", names)
        assert all(c.head() == project.head() and not c.dirty() and (c.root / "Book/A.lean").is_file()
                   for c in copies)
