"""What a patch made elsewhere may write: read by git itself, in a real repository, before anything is applied."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator import patchcheck
from orchestrator.git import Git, GitError
from tests.conftest import git, write


def _repo(root: Path) -> Git:
    write(root, {"Book/A.lean": "theorem a : True := trivial\n", "Book/gen.log": "tracked though ignored\n",
                 ".gitignore": ".lake/\n*.log\n"})
    os.symlink("A.lean", root / "Book/Same.lean")
    git(root, "init", "-q")
    git(root, "add", "-A", "--force")
    git(root, "commit", "-q", "-m", "base")
    return Git(root)


def _patch(work: Git, change: list[list[str]]) -> bytes:
    """The patch of what `work`'s files hold now and of `change` (git commands run there after), made and undone."""
    git(work.root, "add", "-A", "--force")
    for args in change:
        git(work.root, *args)
    patch = subprocess.run(["git", "diff", "--binary", "--cached", "HEAD"], cwd=work.root, check=True,
                           capture_output=True).stdout
    git(work.root, "reset", "-q", "--hard", "HEAD")
    git(work.root, "clean", "-fdqx")
    return patch


def test_a_regular_change_a_rename_a_deleted_link_and_a_tracked_ignored_file_pass(tmp_path: Path) -> None:
    work = _repo(tmp_path / "repo")
    write(work.root, {"Book/gen.log": "changed\n"})
    patch = _patch(work, [["mv", "Book/A.lean", "Book/B.lean"], ["rm", "-q", "Book/Same.lean"]])

    assert patchcheck.refusals(work, "HEAD", patch) == []
    assert work.patch_modes(patch, "HEAD") == {"Book/A.lean": "000000", "Book/B.lean": "100644",
                                               "Book/Same.lean": "000000", "Book/gen.log": "100644"}


def test_a_file_made_a_link_and_a_submodule_are_refused(tmp_path: Path) -> None:
    work = _repo(tmp_path / "repo")
    (work.root / "Book/A.lean").unlink()
    (work.root / "Book/A.lean").symlink_to("/etc/hostname")
    commit = git(work.root, "rev-parse", "HEAD").strip()
    patch = _patch(work, [["update-index", "--add", "--cacheinfo", f"160000,{commit},Book/Sub"]])

    assert patchcheck.refusals(work, "HEAD", patch) == ["Book/A.lean (a symlink)",
                                                        "Book/Sub (mode 160000, not a regular file)"]


def test_an_ignored_untracked_path_is_named_with_its_rule(tmp_path: Path) -> None:
    work = _repo(tmp_path / "repo")
    write(work.root, {"Book/new.log": "planted\n"})

    assert patchcheck.refusals(work, "HEAD", _patch(work, [])) == [
        "Book/new.log (ignored by git: .gitignore:2: *.log)"]


def test_a_patch_git_cannot_read_or_apply_is_an_error(tmp_path: Path) -> None:
    work = _repo(tmp_path / "repo")
    with pytest.raises(GitError):
        patchcheck.refusals(work, "HEAD", b"not a patch\n")
    stale = (b"diff --git a/Book/A.lean b/Book/A.lean\n--- a/Book/A.lean\n+++ b/Book/A.lean\n"
             b"@@ -1 +1 @@\n-theorem other : True := trivial\n+theorem a : True := by trivial\n")
    with pytest.raises(GitError, match="patch does not apply"):
        patchcheck.refusals(work, "HEAD", stale)


def test_build_outputs_are_refused_whatever_the_ignore_rules_say(tmp_path: Path) -> None:
    # A project whose ignore rules forgot `.lake`: Lake's outputs and an older Lake's `lakefile.olean` are still
    # never taken from a patch (every Lean run here trusts them, no gate reads them).
    work = _repo(tmp_path / "repo")
    write(work.root, {".gitignore": "*.log\n"})
    git(work.root, "commit", "-qam", "no .lake rule")
    write(work.root, {".lake/build/lib/Book/A.trace": "{}\n", ".lake/packages/mathlib/Mathlib.lean": "-- forged\n",
                      "lakefile.olean": "planted\n", "Book/A.ilean": "planted\n"})

    assert patchcheck.refusals(work, "HEAD", _patch(work, [])) == [
        ".lake/build/lib/Book/A.trace (under .lake: Lake's build outputs and dependencies)",
        ".lake/packages/mathlib/Mathlib.lean (under .lake: Lake's build outputs and dependencies)",
        "Book/A.ilean (a Lean build output)", "lakefile.olean (a Lean build output)"]


def test_a_patch_that_would_not_apply_is_still_refused_by_name(tmp_path: Path) -> None:
    work = _repo(tmp_path / "repo")
    write(work.root, {".lake/build/lib/Book/A.olean": "planted\n"})
    patch = _patch(work, []) + (b"diff --git a/Book/A.lean b/Book/A.lean\n--- a/Book/A.lean\n+++ b/Book/A.lean\n"
                                b"@@ -1 +1 @@\n-theorem other : True := trivial\n+theorem a : True := by trivial\n")

    assert patchcheck.refusals(work, "HEAD", patch) == [
        ".lake/build/lib/Book/A.olean (under .lake: Lake's build outputs and dependencies)"]


def test_the_old_name_of_a_rename_counts_too(tmp_path: Path) -> None:
    # `git apply --numstat` names a rename by its new name; the index has the old one, which must pass as well.
    work = _repo(tmp_path / "repo")
    write(work.root, {".lake/kept.lean": "theorem k : True := trivial\n"})
    git(work.root, "add", "--force", ".lake/kept.lean")
    git(work.root, "commit", "-qm", "a file under .lake, tracked")

    patch = _patch(work, [["mv", ".lake/kept.lean", "Book/Kept.lean"]])

    assert work.patch_paths(patch) == ["Book/Kept.lean"]
    assert patchcheck.refusals(work, "HEAD", patch) == [
        ".lake/kept.lean (under .lake: Lake's build outputs and dependencies)"]
