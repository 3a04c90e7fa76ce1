"""Whole cycles with scripted Workers: the records say what each cycle aimed at and did, and the loop uses the
difficulty it learns from them."""

from __future__ import annotations

from tests.orchestrator.harness import A, Project, evaluation, strategy

PROVED = A.replace("  sorry", "  simp")
CLOSE = [("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})]


def fail(project: Project, plan: str) -> None:
    """A cycle whose Worker gives up."""
    project.agents.plan(plan)
    project.agents.work([("finish", {"report": "no luck"})])
    project.agents.evaluate(evaluation(0, "nothing closed", stuck_on="Book.hard"))


def test_the_records_name_what_each_cycle_aimed_at_and_closed(project: Project) -> None:
    fail(project, strategy("Book/A.lean", "Book/B.lean", target="Close `Book.hard`."))
    first, _ = project.cycle()
    project.agents.plan(strategy("Book/A.lean", target="Close `hard`."))
    project.agents.work(CLOSE, [("finish", {"report": "closed it"})])
    project.agents.evaluate(evaluation(1))
    second, _ = project.cycle()

    assert (first.targets, first.closed, first.opened) == (["Book.hard"], [], [])
    assert (second.outcome, second.targets, second.closed) == ("accepted", ["Book.hard"], ["Book.hard"])
    assert first.worker_model == second.worker_model == "claude-opus-4-6"
    assert [(r.targets, r.closed) for r in project.history()] == [(["Book.hard"], []), (["Book.hard"], ["Book.hard"])]
