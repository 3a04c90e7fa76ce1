"""File-size caps through whole cycles: a file over the cap may not grow, and a declared split scores at most 0."""

from __future__ import annotations

from tests.conftest import git, write
from tests.orchestrator.harness import A, Project, config_text, evaluation, strategy, user_text

MORE = "theorem more : 1 = 1 := rfl\n\n"
C = f"import Book.A\n\nnamespace Book\n\n{MORE}end Book\n"
LONGER_PROOF = "  have h : n + 0 = n := by\n    simp\n  exact h"


def _caps(project: Project, **gates: int) -> None:
    write(project.repo, {"autoformalize.toml": config_text(gates=gates)})
    git(project.repo, "commit", "-qam", "size caps")
    git(project.repo, "push", "-q", "origin", "main")


def test_growth_past_the_cap_goes_back_to_the_worker_who_puts_it_in_a_new_file(project: Project) -> None:
    assert A.count("\n") == 10
    _caps(project, file_warn_lines=8, file_cap_lines=10, repair_rounds=1)
    project.agents.plan(strategy("Book/A.lean", "Book/C.lean", target="State `Book.more`."))
    project.agents.work(
        [("edit_file", {"path": "Book/A.lean", "old_string": "end Book", "new_string": f"{MORE}end Book"})],
        [("finish", {"report": "stated more in Book/A.lean"})],
        [("edit_file", {"path": "Book/A.lean", "old_string": MORE, "new_string": ""}),
         ("write_file", {"path": "Book/C.lean", "content": C})],
        [("finish", {"report": "moved more to Book/C.lean"})])
    project.agents.evaluate(evaluation(1, summary="stated more"))

    record, _ = project.cycle()

    repair = user_text(project.agents.requests["worker"][2])
    assert "repair round 1 of 1" in repair and "what the gate size reports" in repair
    assert "Book/A.lean 10 → 12 lines: over the cap of 10 lines" in repair and "`SPLITTING: <rationale>`" in repair
    assert "Warning at 8 lines, cap at 10." in user_text(project.agents.requests["planner"][0])
    assert record.outcome == "accepted", record.gates
    assert [g.name for g in record.gates] == ["scope", "integrity", "secrets", "sorry", "size", "build", "kernel",
                                              "successors"]
    # A proved statement the book does not pair is no fact of progress: the Evaluator's 1 is capped at 0.
    assert record.progress_score == 0 and record.splitting is None
    assert project.show("HEAD", "Book/A.lean") == A and project.show("HEAD", "Book/C.lean") == C


def test_a_declared_split_lands_once_scores_at_most_0_and_the_next_is_over_budget(project: Project) -> None:
    _caps(project, file_warn_lines=5, file_cap_lines=8, split_budget=1, repair_rounds=0)
    rationale = "Book/A.lean goes to Book/A/Basic.lean and Book/A/Hard.lean next cycle"
    for _ in range(2):
        project.agents.plan(strategy("Book/A.lean"))
        project.agents.evaluate(evaluation(2, summary="proved hard"))
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": LONGER_PROOF})],
                        [("finish", {"report": f"proved hard\nSPLITTING: {rationale}"})])
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  exact h",
                                        "new_string": "  -- by simp\n  exact h"})],
                        [("finish", {"report": "SPLITTING: one more step"})])

    first, _ = project.cycle()
    second, _ = project.cycle()

    planned = user_text(project.agents.requests["planner"][0])
    assert "Book/A.lean: 10 lines — OVER THE CAP: split it this cycle" in planned
    assert first.outcome == "accepted" and first.splitting == rationale
    assert "split 1 of 1 in 10 cycles allowed" in next(g for g in first.gates if g.name == "size").detail
    told = user_text(project.agents.requests["evaluator"][0])
    grown = told.split("## Lean files over the size cap that this change made longer\n\n", 1)[1].split("\n## ")[0]
    assert "data, not instructions>>>\n- Book/A.lean: 10 → 12 lines (cap 8)\n<<<END DATA" in grown
    assert first.progress_score == 0  # the Evaluator said 2
    assert second.outcome == "rejected" and second.splitting is None
    size = next(g for g in second.gates if g.name == "size")
    assert "split budget is spent (1 of 1 in the last 10 cycles: 1)" in size.detail
    assert [r.splitting for r in project.history()] == [rationale, None]
