"""The small state files: counter, strategy, task results, issues, attempts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from state.errors import UsageError
from state.files import (
    Linked,
    append_attempt,
    open_issues,
    read_cycle,
    read_strategy,
    read_text,
    regular_files,
    write_cycle,
    write_issue,
    write_strategy,
    write_task_result,
)
from state.history import HistoryRecord, append_record, read_history
from state.paths import StatePaths


def test_cycle_counter(tmp_path: Path) -> None:
    paths = StatePaths(tmp_path)
    assert read_cycle(paths) == 0
    write_cycle(paths, 12)
    assert read_cycle(paths) == 12 and paths.cycle.read_text() == "12\n"
    paths.cycle.write_text("268")  # the reference script's form
    assert read_cycle(paths) == 268
    paths.cycle.write_text("twelve")
    with pytest.raises(UsageError, match="not a cycle number"):
        read_cycle(paths)


def test_strategy_and_task_results(tmp_path: Path) -> None:
    paths = StatePaths(tmp_path, "state")
    assert read_strategy(paths) is None
    write_strategy(paths, "# Strategy\n## Scope\n- Book/A.lean")
    assert read_strategy(paths) == "# Strategy\n## Scope\n- Book/A.lean\n"
    assert write_task_result(paths, 7, "done") == tmp_path / "state/task_results/cycle_007.md"
    assert paths.task_result(1138).name == "cycle_1138.md"


def test_issues_newest_first_and_slugs_checked(tmp_path: Path) -> None:
    paths = StatePaths(tmp_path)
    import os

    older = write_issue(paths, "old-blocker", "# old\n")
    os.utime(older, (1_000_000, 1_000_000))
    write_issue(paths, "consultant_advice_cycle_012", "# advice\n")
    (paths.issues / "closed").mkdir()
    (paths.issues / "closed" / "done.md").write_text("x")
    assert [i.slug for i in open_issues(paths)] == ["consultant_advice_cycle_012", "old-blocker"]
    for bad in ("../escape", "a/b", "", "UPPER"):
        with pytest.raises(ValueError):
            write_issue(paths, bad, "x")


def test_attempts_keep_the_reference_layout(tmp_path: Path) -> None:
    paths = StatePaths(tmp_path)
    append_attempt(paths, 3, "tried induction on n; stuck at the successor case")
    append_attempt(paths, 4, "switched to strong induction")
    assert paths.attempts.read_text() == ("# Attempts\n\n### Cycle 3\ntried induction on n; stuck at the successor "
                                          "case\n\n### Cycle 4\nswitched to strong induction\n")


def test_no_state_file_is_read_listed_or_written_through_a_symbolic_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "environ").write_text("ANTHROPIC_API_KEY=sk-ant-outside\n")
    paths = StatePaths(tmp_path / "repo")
    write_issue(paths, "real", "# A real issue\n")
    os.symlink(outside / "environ", paths.issues / "consultant_advice_cycle_009.md")
    os.symlink("real.md", paths.issues / "alias.md")  # inside the tree: not followed either
    assert [i.slug for i in open_issues(paths)] == ["real"]

    os.symlink(outside / "environ", paths.history)
    os.symlink(outside, paths.task_results)
    for read in (lambda: read_history(paths.history), lambda: read_text(paths.task_result(1)),
                 lambda: regular_files(paths.task_results, ".md"), lambda: write_task_result(paths, 1, "x")):
        with pytest.raises(Linked, match="is a symbolic link"):
            read()
    assert not (outside / "cycle_001.md").exists()
    with pytest.raises(Linked, match="is a symbolic link"):
        append_record(paths.history, HistoryRecord(cycle=1))
    assert (outside / "environ").read_text() == "ANTHROPIC_API_KEY=sk-ant-outside\n"

    os.mkfifo(paths.root / "strategy.md")  # never blocks, never read
    with pytest.raises(Linked, match="is not a regular file"):
        read_strategy(paths)
    assert read_text(paths.root / "missing" / "x.md") is None and read_text(paths.issues / "real.md" / "x") is None
