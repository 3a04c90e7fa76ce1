"""The build outputs: what code run during the Worker's session wrote under `.lake` is gone before a gate compiles.

The writes below are the ones code in the sandbox can make there (its `.lake` is writable); the whole-cycle
attacks, compiled by the stand-in Lean in the real sandbox, are in test_sandbox_cycle.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator import buildoutputs, workcopy
from orchestrator.git import Git
from tests.conftest import git as run_git
from tests.conftest import write

OLEAN = ".lake/build/lib/lean/Book/A.olean"
OUTPUTS = {OLEAN: "genuine A", ".lake/build/lib/lean/Book/B.olean": "genuine B", ".lake/lakefile.olean": "config",
           ".lake/build/ir/Book/A.c": "c", ".lake/packages/mathlib/Mathlib.olean": "dependency"}


def test_every_new_or_changed_output_goes_and_nothing_else(tmp_path: Path) -> None:
    work, outside = tmp_path / "worker-0", tmp_path / "outside"
    write(work, OUTPUTS)
    write(outside, {"keep.txt": "not ours"})
    buildoutputs.take(work)
    olean, b, config = (work / p for p in (OLEAN, ".lake/build/lib/lean/Book/B.olean", ".lake/lakefile.olean"))
    times = os.stat(olean)
    olean.write_text("forged A!")  # the same size: only the ctime tells
    os.utime(olean, ns=(times.st_atime_ns, times.st_mtime_ns))
    (work / ".lake/b.tmp").write_text("forged B")
    os.replace(work / ".lake/b.tmp", b)  # replaced by a rename
    config.unlink()
    config.symlink_to(outside / "keep.txt")  # a link where a file was
    (work / ".lake/build/ir").rename(work / ".lake/build/ir2")  # a directory moved away…
    (work / ".lake/build/ir").symlink_to(outside)  # …and a link to elsewhere in its place
    write(work, {".lake/build/new/X.olean": "planted", ".lake/planted.olean": "planted"})
    os.link(work / ".lake/build/new/X.olean", work / ".lake/hardlink")

    removed = buildoutputs.restore(work)

    assert removed == 8
    assert sorted(str(p.relative_to(work)) for p in (work / ".lake").rglob("*")) == [
        ".lake/build", ".lake/build/lib", ".lake/build/lib/lean", ".lake/build/lib/lean/Book",
        ".lake/packages", ".lake/packages/mathlib", ".lake/packages/mathlib/Mathlib.olean"]
    assert (outside / "keep.txt").read_text() == "not ours"  # no link followed


def test_untouched_outputs_stay(tmp_path: Path) -> None:
    work = tmp_path / "worker-0"
    write(work, OUTPUTS)
    buildoutputs.take(work)

    assert buildoutputs.restore(work) == 0
    assert all((work / p).read_text() == text for p, text in OUTPUTS.items())


def test_a_change_that_landed_keeps_what_its_gates_built_one_that_did_not_loses_it(tmp_path: Path) -> None:
    work = tmp_path / "worker-0"
    write(work, OUTPUTS)
    for keep in (True, False):
        buildoutputs.take(work)
        write(work, {".lake/build/lib/lean/Book/C.olean": f"built by the gates, kept: {keep}"})

        buildoutputs.settle(work, keep=keep)

        assert (work / ".lake/build/lib/lean/Book/C.olean").exists() is keep
        assert buildoutputs.restore(work) == 0  # the record is forgotten: nothing more to undo


def test_a_cycle_killed_before_it_settled_is_undone_when_the_next_one_prepares(tmp_path: Path) -> None:
    repo = tmp_path / "book"
    write(repo, {"Book/A.lean": "theorem a : True := trivial\n", ".gitignore": ".lake/\n"})
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        run_git(repo, *args)
    git = Git(repo)
    work = workcopy.prepare(git, git.head()).root
    write(work, {OLEAN: "genuine A"})
    buildoutputs.take(work)  # the session starts…
    (work / OLEAN).write_text("forged A")  # …its code forges an output, and the process is killed

    workcopy.prepare(git, git.head())

    assert not (work / OLEAN).exists()
