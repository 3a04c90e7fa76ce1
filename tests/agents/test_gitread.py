"""The project's history, read-only, as the cycle found it: an agent's revision or path never passes for an
option, and a commit off the branch is not shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.gitread import GitReader
from agents.tools import Refused, invoke
from tests.conftest import git, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path, {"Book/A.lean": "theorem a : True := sorry\n"})
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "state a")
    write(tmp_path, {"Book/A.lean": "theorem a : True := trivial\n", "Book/B.lean": "theorem b : True := trivial\n"})
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "close a (cycle 2)")
    return tmp_path


def test_log_show_and_blame_read_the_branch_as_the_cycle_found_it(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-qb", "elsewhere")
    write(repo, {"Book/A.lean": "theorem a : False := sorry\n"})
    git(repo, "commit", "-qam", "a change off the branch")
    off = git(repo, "rev-parse", "HEAD").strip()
    (tool,) = GitReader(repo, base).tools()
    log = tool.run(action="log")
    assert "close a (cycle 2)" in log and "state a" in log and "off the branch" not in log
    assert "state a" not in tool.run(action="log", path="Book/B.lean")
    assert tool.run(action="log", grep="CYCLE 2").count("\n") == 1  # a fixed string, any case
    first = log.splitlines()[0].split()[0]
    shown = tool.run(action="show", commit=first, path="Book/A.lean")
    assert "close a (cycle 2)" in shown and "+theorem a : True := trivial" in shown and "Book/B.lean" not in shown
    assert "theorem a : True := trivial" in tool.run(action="blame", path="Book/A.lean", start_line=1, end_line=1)
    for args in ({"action": "show", "commit": off}, {"action": "show", "commit": "--output=/tmp/x"},
                 {"action": "blame", "path": "../secret"}, {"action": "blame", "path": "-L1,1"},
                 {"action": "rebase"}):
        answer, error = invoke("git", tool.run, args)
        assert error and answer.startswith("refused:"), (args, answer)
    with pytest.raises(Refused):
        tool.run(action="show", commit="HEAD")  # the checkout's HEAD moved since: not the cycle's branch
