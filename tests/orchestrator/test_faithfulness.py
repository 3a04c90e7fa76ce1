"""Faithfulness in the loop: the judge reads each statement a cycle adds or changes for a textbook entity; a
different one opens an issue and reaches the Evaluator, a faithful one is locked against unannounced change."""

from __future__ import annotations

import json

import pytest

from audit.loop import issue_slug
from orchestrator.cycle import Options, run_cycle
from state.history import HistoryRecord
from tests.conftest import git, write
from tests.orchestrator.harness import Project, config_text, evaluation, strategy, user_text
from tests.standin.anthropic_server import RecordedRequest, Reply, text_reply

NEW = '''

/-- Theorem 2.1 For every natural number $n$, $0 + n = n$. -/
theorem zero_add' (n : ℕ) (h : 0 < n) : 0 + n = n := by
  simp
'''
EDIT = [("edit_file", {"path": "Book/B.lean", "old_string": "end Book", "new_string": NEW.strip() + "\n\nend Book"})]
RESTATED = [("edit_file", {"path": "Book/B.lean", "old_string": "(h : 0 < n) : 0 + n", "new_string": ": 0 + n"})]


def add_theorem(project: Project, score: tuple[bool, bool, int], reason: str = "as scripted") -> None:
    project.agents.plan(strategy("Book/B.lean", target="State Theorem 2.1."))
    project.agents.work(EDIT, "added Theorem 2.1")
    project.agents.judge(*score, reason=reason)
    project.agents.evaluate(evaluation(1))


def test_a_statement_judged_different_opens_an_issue_and_reaches_the_evaluator(project: Project) -> None:
    add_theorem(project, (False, True, 1), "Lean adds the hypothesis 0 < n")

    record, _ = project.cycle()

    assert record.outcome == "accepted"  # the gates decide what lands; the judge advises
    assert [(f.entity, f.declarations, f.score) for f in record.faithfulness] == [("thm:2.1", ["Book.zero_add'"], 1)]
    judged = user_text(project.agents.requests["judge"][0])
    assert "NAME: Theorem 2.1" in judged and "theorem zero_add' (n : ℕ) (h : 0 < n) : 0 + n = n" in judged
    assert "simp" not in judged  # the statement, not the proof
    assert "Book.zero_add'): DIFFERENT from the book — Lean adds the hypothesis 0 < n" in user_text(
        project.agents.requests["evaluator"][0])
    issue = project.show("HEAD", f".prover-state/issues/{issue_slug('thm:2.1')}.md")
    assert "## The judge's reason\n\nLean adds the hypothesis 0 < n" in issue and "$0 + n = n$" in issue
    assert not (project.repo / ".prover-state/statement_lock.json").exists()  # nothing to lock


def test_a_faithful_statement_is_locked_and_may_change_only_when_the_strategy_restates_it(project: Project) -> None:
    write(project.repo, {"autoformalize.toml": config_text(gates={"repair_rounds": 0})})
    git(project.repo, "commit", "-qam", "no repair rounds")
    add_theorem(project, (True, True, 3))
    first, _ = project.cycle()
    lock = json.loads(project.show("HEAD", ".prover-state/statement_lock.json"))["statements"]
    assert first.faithfulness[0].score == 3
    assert lock["Book.zero_add'"]["entity"] == "thm:2.1" and lock["Book.zero_add'"]["cycle"] == 1

    project.agents.plan(strategy("Book/B.lean", target="Drop the hypothesis."))
    project.agents.work(RESTATED, "dropped h")
    project.agents.evaluate(evaluation(0))
    refused, _ = project.cycle()
    integrity = next(g for g in refused.gates if g.name == "integrity")
    assert refused.outcome == "rejected" and not integrity.passed
    assert ("Book.zero_add': its statement was judged faithful to the book and is locked, and it changed; "
            "restating it needs a line `RESTATE: Book.zero_add' — <rationale>` in the strategy") in integrity.detail
    assert project.agents.calls["judge"] == 1
    told = user_text(project.agents.requests["planner"][1])
    assert "## Statements locked as faithful to the book" in told and "Book.zero_add'" in told

    project.agents.plan(strategy("Book/B.lean", target="RESTATE: Book.zero_add' — the book has no hypothesis"))
    project.agents.work(RESTATED, "dropped h")
    project.agents.judge(True, True, 3)
    project.agents.evaluate(evaluation(1))
    restated, _ = project.cycle()
    assert restated.outcome == "accepted" and restated.faithfulness[0].score == 3
    relocked = json.loads(project.show("HEAD", ".prover-state/statement_lock.json"))["statements"]
    assert relocked["Book.zero_add'"]["cycle"] == 3
    assert relocked["Book.zero_add'"]["hash"] != lock["Book.zero_add'"]["hash"]


def test_a_judge_that_cannot_answer_is_recorded_and_the_change_still_lands(project: Project) -> None:
    project.agents.plan(strategy("Book/B.lean", target="State Theorem 2.1."))
    project.agents.work(EDIT, "added Theorem 2.1")
    project.agents.add("judge", text_reply("not json"), text_reply("still not json"))
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()
    assert record.outcome == "accepted" and record.faithfulness[0].score is None
    assert (record.faithfulness[0].error or "").startswith("unreadable answer")
    assert "not judged: unreadable answer" in user_text(project.agents.requests["evaluator"][0])


def test_the_judge_can_be_turned_off(project: Project) -> None:
    write(project.repo, {"autoformalize.toml": config_text(audit={"judge_in_loop": False})})
    git(project.repo, "commit", "-qam", "no judge")
    add_theorem(project, (True, True, 3))
    project.agents.scripts["judge"].clear()
    record, _ = project.cycle()
    assert record.outcome == "accepted" and record.faithfulness == [] and project.agents.calls["judge"] == 0


def test_an_uncommitted_audit_does_not_stop_a_cycle(project: Project) -> None:
    write(project.repo, {".prover-state/audit/latest.json": "{}\n"})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing to do")
    project.agents.evaluate(evaluation(0))
    record, _ = project.cycle()
    assert record.outcome == "no_change"
    assert (project.repo / ".prover-state/audit/latest.json").read_text() == "{}\n"



TOUCH_A = [("edit_file", {"path": "Book/A.lean", "old_string": "theorem easy : True := trivial",
                          "new_string": "theorem easy : True := by trivial"})]


def unrelated_cycle(project: Project) -> HistoryRecord:
    project.agents.plan(strategy("Book/A.lean", target="Tidy Book.easy."))
    project.agents.work(TOUCH_A, "tidied")
    project.agents.evaluate(evaluation(0))
    return project.cycle()[0]


def lock_a_theorem(project: Project, **config: dict[str, object]) -> None:
    write(project.repo, {"autoformalize.toml": config_text(**{"gates": {"repair_rounds": 0}, **config})})
    git(project.repo, "commit", "-qam", "no repair rounds")
    add_theorem(project, (True, True, 3))
    assert project.cycle()[0].faithfulness[0].score == 3


def test_a_restatement_the_judge_could_not_read_does_not_land_and_does_not_jam_the_loop(project: Project) -> None:
    lock_a_theorem(project)
    before = project.show("HEAD", ".prover-state/statement_lock.json")
    project.agents.plan(strategy("Book/B.lean", target="RESTATE: Book.zero_add' — the book has no hypothesis"))
    project.agents.work(RESTATED, "dropped h")
    project.agents.add("judge", text_reply("not json"), text_reply("still not json"))
    project.agents.evaluate(evaluation(1))
    restated, _ = project.cycle()
    assert restated.outcome == "rejected" and restated.faithfulness[0].score is None
    verdict = restated.gates[-1]
    assert verdict.name == "restatement" and not verdict.passed
    assert "the judge could not judge thm:2.1 (unreadable answer" in verdict.detail
    assert restated.progress_score == 0 and "(h : 0 < n)" in project.show("HEAD", "Book/B.lean")
    assert project.show("HEAD", ".prover-state/statement_lock.json") == before  # still locked, as judged
    assert unrelated_cycle(project).outcome == "accepted"


def test_with_the_judge_off_the_lock_is_not_enforced(project: Project) -> None:
    lock_a_theorem(project)
    write(project.repo, {"autoformalize.toml": config_text(gates={"repair_rounds": 0},
                                                           audit={"judge_in_loop": False})})
    git(project.repo, "commit", "-qam", "judge off")
    git(project.repo, "push", "-q", "origin", "main")
    project.agents.plan(strategy("Book/B.lean", target="Drop the hypothesis."))
    project.agents.work(RESTATED, "dropped h")
    project.agents.evaluate(evaluation(0))
    assert project.cycle()[0].outcome == "accepted" and project.agents.calls["judge"] == 1


def test_an_unfaithful_issue_is_closed_once_the_statement_is_judged_faithful(project: Project) -> None:
    add_theorem(project, (False, True, 1), "Lean adds the hypothesis 0 < n")
    project.cycle()
    issue = f".prover-state/issues/{issue_slug('thm:2.1')}.md"
    assert "judged it different" in project.show("HEAD", issue)
    project.agents.plan(strategy("Book/B.lean", target="RESTATE: Book.zero_add' — drop the hypothesis the book has "
                                                       "not"))
    project.agents.work(RESTATED, "dropped h")
    project.agents.judge(True, True, 3)
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()
    assert record.faithfulness[0].score == 3 and not (project.repo / issue).exists()


def test_the_judge_phase_deadline_grows_with_what_it_judges(project: Project) -> None:
    limits: dict[str, float] = {}

    class Beat:
        def phase(self, name: str, limit: float, **_: object) -> None:
            limits[name] = limit

    two = NEW + NEW.replace("2.1", "2.2").replace("zero_add'", "zero_add''")
    project.agents.plan(strategy("Book/B.lean", target="State Theorems 2.1 and 2.2."))
    project.agents.work([("edit_file", {"path": "Book/B.lean", "old_string": "end Book",
                                        "new_string": two.strip() + "\n\nend Book"})], "added both")
    project.agents.judge(True, True, 3)
    project.agents.judge(True, True, 3)
    project.agents.evaluate(evaluation(1))
    run_cycle(project.repo, project.config, project.deps(), Options(), beat=Beat())  # type: ignore[arg-type]
    assert limits["judge"] == project.config.agents.judge.timeout_s * 2 * 2


def test_with_approval_required_a_restatement_lands_once_a_person_approved_it(project: Project) -> None:
    lock_a_theorem(project, gates={"repair_rounds": 0, "restate_requires_approval": True})
    declared = strategy("Book/B.lean", target="RESTATE: Book.zero_add' — the book has no hypothesis")
    project.agents.plan(declared)
    project.agents.work(RESTATED, "dropped h")
    project.agents.evaluate(evaluation(1))
    refused, _ = project.cycle()
    integrity = next(g for g in refused.gates if g.name == "integrity")
    assert refused.outcome == "rejected" and "restatements need a person's approval" in integrity.detail
    digest = integrity.detail.split('`from = "')[1].split('"')[0]

    project.commit_files({"approved_restatements.toml": f'[[restate]]\ndeclaration = "Book.zero_add\'"\n'
                                                        f'from = "{digest}"\nreason = "erratum"\n'}, "approve")
    project.agents.plan(declared)
    project.agents.work(RESTATED, "dropped h")
    project.agents.judge(True, True, 3)
    project.agents.evaluate(evaluation(1))
    landed, _ = project.cycle()
    assert landed.outcome == "accepted" and landed.restated == ["Book.zero_add'"]
    assert next(g for g in landed.gates if g.name == "restatement").passed


def theorem(heading: str, name: str) -> list[tuple[str, dict[str, str]]]:
    text = NEW.replace("Theorem 2.1", heading).replace("zero_add'", name).strip()
    return [("edit_file", {"path": "Book/B.lean", "old_string": "end Book", "new_string": text + "\n\nend Book"})]


def stated_different(project: Project, heading: str, name: str, reason: str) -> str:
    """A cycle adding the theorem `name` under `heading`, which the judge finds different: its entity's id."""
    project.agents.plan(strategy("Book/B.lean", target=f"State {heading}."))
    project.agents.work(theorem(heading, name), f"added {heading}")
    project.agents.judge(False, True, 1, reason=reason)
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()
    return record.faithfulness[0].entity


def test_a_decoy_whose_id_differs_only_in_case_neither_overwrites_nor_settles_the_real_finding(
        project: Project) -> None:
    """`Theorem 2.1A` beside the real `Theorem 2.1a`: their findings were one file (the name lower-cased the id),
    so the decoy's overwrote the real one and, restated faithful, deleted it. Each id has its own file now."""
    real = stated_different(project, "Theorem 2.1a", "real", "Lean adds 0 < n")
    finding = f".prover-state/issues/{issue_slug(real)}.md"
    held = project.show("HEAD", finding)

    decoy = stated_different(project, "Theorem 2.1A", "decoy", "the decoy differs")
    assert decoy != real and decoy.lower() == real.lower()  # one file under the old names
    assert project.show("HEAD", finding) == held and "the decoy differs" in project.show(
        "HEAD", f".prover-state/issues/{issue_slug(decoy)}.md")

    project.agents.plan(strategy("Book/B.lean", target="RESTATE: Book.decoy — drop the hypothesis"))
    project.agents.work([("edit_file", {"path": "Book/B.lean", "old_string": "decoy (n : ℕ) (h : 0 < n) : 0 + n",
                                        "new_string": "decoy (n : ℕ) : 0 + n"})], "dropped h")
    project.agents.judge(True, True, 3)
    project.agents.evaluate(evaluation(1))
    third, _ = project.cycle()
    assert third.outcome == "accepted" and third.faithfulness[0].entity == decoy
    assert not (project.repo / f".prover-state/issues/{issue_slug(decoy)}.md").exists()
    assert project.show("HEAD", finding) == held  # the real statement's finding stands


@pytest.mark.parametrize("whose", ["this entity's", "another id's"])
def test_a_finding_under_the_name_findings_had_before_is_settled_and_another_ids_is_left(
        project: Project, whose: str) -> None:
    """A repository whose findings an earlier version wrote (`unfaithful-thm-2.1.md`: the id lower-cased, its colon
    made a dash) has them settled by the same verdicts; one under that name about another id (`thm-2.1`, which the
    old names could not tell apart) is not this entity's, and stays."""
    add_theorem(project, (False, True, 1), "Lean adds the hypothesis 0 < n")
    project.cycle()
    issues = project.repo / ".prover-state/issues"
    own, old = issues / f"{issue_slug('thm:2.1')}.md", issues / "unfaithful-thm-2.1.md"
    if whose == "this entity's":
        own.rename(old)
    else:  # its quoted text naming thm:2.1 as a finding's head would
        old.write_text(own.read_text().replace("(thm:2.1; ", "(thm-2.1; ") + "\nTheorem 2.1 (thm:2.1; Book/B.lean)\n")
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-qm", "a finding as an earlier version named it")
    git(project.repo, "push", "-q", "origin", "main")
    project.agents.plan(strategy("Book/B.lean", target="RESTATE: Book.zero_add' — drop the hypothesis"))
    project.agents.work(RESTATED, "dropped h")
    project.agents.judge(True, True, 3)
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()
    assert record.outcome == "accepted" and record.faithfulness[0].score == 3
    assert not own.exists() and old.exists() == (whose == "another id's")


SWAPPED = '''

def ZeroAddHolds (n : ℕ) : Prop := 0 + n = n

/-- Theorem 2.1 For every natural number $n$, $0 + n = n$. -/
theorem zero_add' (n : ℕ) : ZeroAddHolds n := by
  simp [ZeroAddHolds]
'''


def careful_judge(request: RecordedRequest) -> Reply:
    """A judge that reads what it is shown: a statement whose definition says `True` is not the book's."""
    empty = "Prop := True" in user_text(request)
    return text_reply(json.dumps({"lean_implies_nl": not empty, "nl_implies_lean": True, "score": 1 if empty else 3,
                                  "reason": "ZeroAddHolds is True" if empty else "as the book"}))


def test_a_locked_statement_weakened_through_the_definition_it_names_is_judged_as_it_now_means(
        project: Project) -> None:
    """The statement's own text never changes; its definition becomes `True`. The judge reads the definitions a
    statement reaches with it, so what it judges is what the statement means."""
    write(project.repo, {"autoformalize.toml": config_text(gates={"repair_rounds": 0})})
    git(project.repo, "commit", "-qam", "no repair rounds")
    project.agents.plan(strategy("Book/B.lean", target="State Theorem 2.1."))
    project.agents.work([("edit_file", {"path": "Book/B.lean", "old_string": "end Book",
                                        "new_string": SWAPPED.strip() + "\n\nend Book"})], "added Theorem 2.1")
    project.agents.add("judge", careful_judge)
    project.agents.evaluate(evaluation(1))
    first, _ = project.cycle()
    assert first.outcome == "accepted" and first.faithfulness[0].score == 3
    assert "def ZeroAddHolds (n : ℕ) : Prop := 0 + n = n" in user_text(project.agents.requests["judge"][0])

    project.agents.plan(strategy("Book/B.lean", target="RESTATE: Book.zero_add' — a simpler definition"))
    project.agents.work([("edit_file", {"path": "Book/B.lean", "old_string": "Prop := 0 + n = n",
                                        "new_string": "Prop := True"}),
                         ("edit_file", {"path": "Book/B.lean", "old_string": "simp [ZeroAddHolds]",
                                        "new_string": "trivial"})], "simplified ZeroAddHolds")
    project.agents.add("judge", careful_judge)
    project.agents.evaluate(evaluation(1))
    swapped, _ = project.cycle()
    shown = user_text(project.agents.requests["judge"][1])
    assert "theorem zero_add' (n : ℕ) : ZeroAddHolds n" in shown and "Prop := True" in shown
    assert swapped.outcome == "rejected" and swapped.faithfulness[0].score == 1
    assert "Prop := 0 + n = n" in project.show("HEAD", "Book/B.lean")
