"""`[audit] mathlib_check` in the loop: a theorem the cycle closed that the library alone closes is recorded, and the
next Planner and Worker are told, as data; off (the default), no Lean run is spent on it."""

from __future__ import annotations

from pathlib import Path

from agents import briefs
from tests.orchestrator.harness import Project, config_text, evaluation, make_project, strategy, user_text
from tests.orchestrator.test_round import Workers, _edit, _finish, _parallel, items
from tests.standin.anthropic_server import AnthropicStandin


def close_hard(project: Project) -> None:
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "closed Book.hard by simp"})])
    project.agents.evaluate(evaluation(1))


def test_a_closed_theorem_the_library_has_is_recorded_and_told_to_the_next_planner_and_worker(
        tmp_path: Path, server: AnthropicStandin) -> None:
    project = make_project(tmp_path, server, config=config_text(audit={"mathlib_check": "on",
                                                                       "mathlib_timeout_s": 30}))
    close_hard(project)
    record, _ = project.cycle()
    assert record.outcome == "accepted", record.gates
    assert [(n.declaration, n.suggestion, n.constants) for n in record.mathlib_overlap] == [
        ("Book.hard", "Nat.add_zero n", ["Nat.add_zero"])]
    assert project.history()[-1].mathlib_overlap == record.mathlib_overlap

    project.agents.plan(strategy("Book/B.lean", target="Close `Book.other`."))
    project.agents.work([("finish", {"report": "nothing this time"})])
    project.agents.evaluate(evaluation(0))
    project.cycle()
    told = "- Book.hard (cycle 1) is Nat.add_zero: exact Nat.add_zero n"
    for role in ("planner", "worker"):
        text = user_text(project.agents.requests[role][-1])
        section = briefs.section(text, briefs.LIBRARY)
        # The orchestrator's words as text; what a Worker named, fenced as data.
        assert told in section and section.index("<<<DATA") < section.index(told), role


def test_off_no_theorem_is_tried(tmp_path: Path, server: AnthropicStandin) -> None:
    project = make_project(tmp_path, server)
    close_hard(project)
    record, _ = project.cycle()
    assert record.outcome == "accepted" and record.mathlib_overlap == []
    assert briefs.LIBRARY not in user_text(project.agents.requests["planner"][-1])


def test_each_item_of_a_round_is_checked_on_its_own_change(project: Project) -> None:
    _parallel(project, audit={"mathlib_check": "on", "mathlib_timeout_s": 30})
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), _finish())
    workers.work("other", _edit("Book/B.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))
    project.cycle()
    assert [(r.item, [n.suggestion for n in r.mathlib_overlap]) for r in project.history()] == [
        ("hard", ["Nat.add_zero n"]), ("other", ["Nat.zero_add n"])]
