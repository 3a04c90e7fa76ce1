"""A parallel round's own serial parts: one Lean probe for every item's base listing, each landing item's new base
listed once."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator import mergequeue
from orchestrator.git import Git
from tests.conftest import git, write
from tests.orchestrator.harness import Project, evaluation
from tests.orchestrator.test_round import Workers, _edit, _finish, _lean, _parallel, _runs, items
from tests.standin.anthropic_server import RecordedRequest, Reply, text_reply, tool_use_reply

CDEF = _lean("Mathlib.Tactic", "def cdef : ℕ := 1\n\ntheorem c : cdef + 0 = cdef := by\n  sorry")
DDEF = _lean("Mathlib.Tactic", "def ddef : ℕ := 1\n\ntheorem d : ddef + 0 = ddef := by\n  sorry")


def _probes_before_the_workers(project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, files: dict[str, str],
                               **sections: Any) -> list[int]:
    """A round of items `c` and `d`, each closing its sorry: the probes Lean ran after the Planner answered and
    before the Workers' first turns."""
    _parallel(project, files=files, sandbox={"mode": "none", "env": ["STANDIN_LOG"]}, **sections)
    log = tmp_path / "standin.log"
    monkeypatch.setenv("STANDIN_LOG", str(log))
    planned: list[int] = []

    def plan(request: RecordedRequest) -> Reply:
        planned.append(len(_runs(log)))
        return text_reply(items(("c", ["Book/C.lean"]), ("d", ["Book/D.lean"])))

    started: list[int] = []
    both = threading.Barrier(2, timeout=60)  # neither item has gated yet: what ran is what came before the Workers

    def first(path: str) -> Callable[[RecordedRequest], Reply]:
        def step(request: RecordedRequest) -> Reply:
            both.wait()
            started.append(len([r for r in _runs(log)[planned[0]:] if "autoformalize/Probe" in r]))
            return tool_use_reply(_edit(path, "  sorry", "  rfl"))
        return step

    project.agents.add("planner", plan)
    workers = Workers(project)
    workers.work("c", first("Book/C.lean"), _finish())
    workers.work("d", first("Book/D.lean"), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))

    project.cycle()

    assert [r.outcome for r in project.history()] == ["accepted", "accepted"]
    listed = {json.loads(f.read_text())["module"] for f in (project.repo / ".git/autoformalize/env").glob("*.json")}
    assert {"Book.C", "Book.D"} <= listed
    return started


def test_a_round_asks_lean_for_its_items_base_listing_in_one_probe(project: Project, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """One probe (two Lean runs) lists what every item may alter, rather than one per item before its Worker; with
    no census batch, nothing was listed before it."""
    started = _probes_before_the_workers(project, monkeypatch, tmp_path, {"Book/C.lean": CDEF, "Book/D.lean": DDEF},
                                         gates={"kernel_census_batch": 0})

    assert started == [2, 2]


def test_a_round_whose_files_the_census_listed_asks_lean_nothing_more(project: Project, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    started = _probes_before_the_workers(project, monkeypatch, tmp_path, {"Book/C.lean": CDEF, "Book/D.lean": DDEF})

    assert started == [0, 0]


def test_the_merge_queue_lists_each_commits_files_once(project: Project, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A landing item reads the branch's new head for its history, census, gates and book: one `git ls-tree` each."""
    _parallel(project)
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), _finish())
    workers.work("other", _edit("Book/B.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))
    trace = tmp_path / "git.trace"
    land = mergequeue.requeue

    def traced(*args: Any) -> None:
        monkeypatch.setenv("GIT_TRACE", str(trace))
        try:
            land(*args)
        finally:
            monkeypatch.delenv("GIT_TRACE")

    monkeypatch.setattr(mergequeue, "requeue", traced)

    project.cycle()

    assert [r.outcome for r in project.history()] == ["accepted", "accepted"]
    listed = [line.split("ls-tree -r -z --name-only ", 1)[1] for line in trace.read_text().splitlines()
              if "built-in: git ls-tree -r -z --name-only " in line]
    assert listed and len(listed) == len(set(listed))


def test_a_listing_is_kept_for_a_commit_id_never_for_a_name(project: Project) -> None:
    repo = Git(project.repo)
    first = project.head()
    assert repo.listing("HEAD") == repo.listing(first) and "Book/A.lean" in repo.listing(first)
    write(project.repo, {"Book/New.lean": "theorem n : True := trivial\n"})
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-q", "-m", "a file more")
    assert "Book/New.lean" in repo.listing("HEAD") and "Book/New.lean" not in repo.listing(first)
