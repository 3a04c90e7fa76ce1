"""The review queue, built from what a commit holds: a card per statement the book pairs and per definition it
reaches, ordered by risk, with the judges' verdicts, the successor tests and people's verdicts."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agents.model import Message, Reply, System, ToolSpec
from audit import successors as succ
from audit.run import Models, Options, audit
from gates.census import census
from gates.meaning import closures
from gates.successors import BROKE
from gates.tree import DirTree
from orchestrator.config import load_config
from orchestrator.review.cards import Card, Risk
from orchestrator.review.queue import Queue, build, select, states, to_json
from state.errors import UsageError
from state.history import Faithfulness, GateVerdict, HistoryRecord, Outcome
from tests.conftest import git, write
from tests.orchestrator.harness import Project, evaluation, strategy

DATA = Path(__file__).parent.parent / "data"
STATE = ".prover-state"
T0 = datetime(2026, 11, 1, tzinfo=UTC)
A = """\
import Mathlib.Tactic

namespace Book

def double (n : ℕ) : ℕ := 2 * n

def quad (n : ℕ) : ℕ := double (double n)

/-- Definition 1.1 A number is even when it is twice another. -/
def IsEven (n : ℕ) : Prop := ∃ k, n = double k

/-- Theorem 1.2 Four times a number is even. -/
theorem quad_even (n : ℕ) : IsEven (quad n) := by
  sorry

/-- Theorem 1.3 Twice a number is positive when it is. -/
theorem double_pos (n : ℕ) (h : 0 < n) : 0 < double n := by
  unfold double
  omega

end Book
"""
B = """\
import Book.A

namespace Book

/-- Theorem 2.1 Truth holds. -/
theorem plain : True := trivial

/-- Theorem 2.2 Zero is even. -/
theorem zero_even : IsEven 0 := ⟨0, rfl⟩

/-- Theorem 2.3 Two is even. -/
theorem two_even : IsEven 2 := ⟨1, rfl⟩

end Book
"""
FILES = {"lakefile.toml": 'name = "book"\n[[lean_lib]]\nname = "Book"\n',
         "lean-toolchain": "leanprover/lean4:v4.24.0\n", "Book.lean": "import Book.A\nimport Book.B\n",
         "Book/A.lean": A, "Book/B.lean": B, "autoformalize.toml": '[project]\nlean_roots = ["Book"]\n'}


def judged(cycle: int, entity: str, name: str, score: int | None, reason: str = "", **extra: object) -> HistoryRecord:
    return HistoryRecord(cycle=cycle, outcome=Outcome.ACCEPTED, finished_at=T0 + timedelta(days=cycle),
                         faithfulness=[Faithfulness(entity=entity, declarations=[name], score=score, reason=reason)],
                         **extra)  # type: ignore[arg-type]


HISTORY = [
    judged(1, "thm:1.2", "Book.quad_even", 1, "the book multiplies by four, Lean by sixteen",
           changed_files=["Book/A.lean"]),
    judged(2, "thm:1.3", "Book.double_pos", 2, "Lean asks for less"),
    judged(3, "thm:2.1", "Book.plain", 3, "same"),
    judged(4, "thm:2.2", "Book.zero_even", 3, "same"),
    judged(5, "def:1.1", "Book.IsEven", 3, "same"),
    HistoryRecord(cycle=6, outcome=Outcome.REJECTED, changed_files=["Book/B.lean"],
                  faithfulness=[Faithfulness(entity="thm:2.1", declarations=["Book.plain"], score=1)]),
]


def make(tmp_path: Path, history: list[HistoryRecord] = HISTORY, files: dict[str, str] | None = None) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    lines = "".join(r.to_line() + "\n" for r in history)
    write(repo, {**FILES, f"{STATE}/history.jsonl": lines, **(files or {})})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the project")
    return repo


def queue(repo: Path, rev: str = "HEAD") -> Queue:
    return build(repo, load_config(repo), rev=rev)


def card(q: Queue, name: str) -> Card:
    return next(c for c in q.cards if c.declaration == name)


def test_the_riskiest_statements_come_first_and_the_newest_first_among_equals(tmp_path: Path) -> None:
    q = queue(make(tmp_path))

    assert [(c.declaration, c.risk) for c in q.cards] == [
        ("Book.quad_even", Risk.DIFFERENT), ("Book.double_pos", Risk.STRONGER),
        ("Book.zero_even", Risk.UNTESTED), ("Book.plain", Risk.UNTESTED),  # cycle 4 touched zero_even, 3 plain
        ("Book.double", Risk.UNJUDGED), ("Book.quad", Risk.UNJUDGED), ("Book.two_even", Risk.UNJUDGED),
        ("Book.IsEven", Risk.JUDGED)]
    assert q.counts == {"different": 1, "stronger": 1, "untested": 2, "unjudged": 3, "judged": 1}
    assert q.commit == git(tmp_path / "repo", "rev-parse", "HEAD").strip() and q.problems == []
    first = q.cards[0]
    assert first.why == ("the loop's judge, cycle 1 found it different from the book: the book multiplies by four, "
                         "Lean by sixteen")
    assert card(q, "Book.plain").why == ("judged faithful by the loop's judge, cycle 3, but no successor test has "
                                         "shown that its users rely on what it says")
    # A rejected cycle's judgement was of a change that never landed: not the statement's.
    assert [j.cycle for j in card(q, "Book.plain").judgements] == [3]
    assert card(q, "Book.two_even").why == "never judged against the book"


def test_a_card_holds_the_book_the_lean_and_what_it_reaches_and_rests_on(tmp_path: Path) -> None:
    q = queue(make(tmp_path))
    quad_even = card(q, "Book.quad_even")
    assert (quad_even.kind, quad_even.entity, quad_even.entity_name, quad_even.chapter) == (
        "statement", "thm:1.2", "Theorem 1.2", "1")
    assert quad_even.book_text == "Four times a number is even."
    assert quad_even.book_source.startswith("the doc comment of Book.quad_even as it first landed (Book/A.lean:12 at ")
    assert quad_even.lean == "theorem quad_even (n : ℕ) : IsEven (quad n)"  # the statement, not the proof
    assert (quad_even.path, quad_even.line) == ("Book/A.lean", 13)
    assert quad_even.reaches == ["Book.IsEven", "Book.double", "Book.quad"]
    assert not quad_even.proved and quad_even.rests_on == ["Book.quad_even"]
    assert quad_even.cycles == [1] and quad_even.newest == 1
    assert quad_even.digest == closures(census(DirTree(tmp_path / "repo"), ["Book"]))["Book.quad_even"][0]
    assert card(q, "Book.double_pos").proved and card(q, "Book.double_pos").rests_on == []

    # A definition the book does not pair: a card of its own, whole, with the statements that rely on it.
    quad = card(q, "Book.quad")
    assert (quad.kind, quad.entity, quad.book_text, quad.chapter) == ("definition", "", "", "1")
    assert quad.lean == "def quad (n : ℕ) : ℕ := double (double n)" and quad.reaches == ["Book.double"]
    assert quad.why == "a definition no judge reads alone, which Book.quad_even rely on"
    assert card(q, "Book.double").why == ("a definition no judge reads alone, which Book.IsEven, Book.quad_even, "
                                          "Book.double_pos and 2 more rely on")
    # A definition the book pairs is a statement, shown once.
    assert [c.kind for c in q.cards if c.declaration == "Book.IsEven"] == ["statement"]
    assert card(q, "Book.IsEven").lean == "def IsEven (n : ℕ) : Prop := ∃ k, n = double k"


def test_the_filters_take_the_persons_state_and_the_judges_verdict(tmp_path: Path) -> None:
    repo = make(tmp_path)
    digest = closures(census(DirTree(repo), ["Book"]))
    write(repo, {"reviews.toml": "".join(
        f'[[review]]\ndeclaration = "{n}"\nverdict = "{v}"\nnote = "{note}"\ndigest = "{digest[n][0]}"\n\n'
        for n, v, note in (("Book.plain", "approve", ""), ("Book.double_pos", "comment", "h is the book's too")))})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "verdicts")
    q = queue(repo)

    assert [c.declaration for c in select(q, verdict="approved")] == ["Book.plain"]
    assert [c.declaration for c in select(q, verdict="commented")] == ["Book.double_pos"]
    assert "Book.plain" not in [c.declaration for c in select(q, verdict="unreviewed")]
    assert [c.declaration for c in select(q, verdict="unreviewed")][:2] == ["Book.quad_even", "Book.zero_even"]
    assert [c.declaration for c in select(q, verdict="different")] == ["Book.quad_even"]
    assert [c.declaration for c in select(q, verdict="stronger")] == ["Book.double_pos"]
    assert [c.declaration for c in select(q, verdict="faithful")] == ["Book.zero_even", "Book.plain", "Book.IsEven"]
    assert [c.declaration for c in select(q, verdict="unjudged")] == ["Book.double", "Book.quad", "Book.two_even"]
    assert [c.declaration for c in select(q, chapter="2", verdict="faithful")] == ["Book.zero_even", "Book.plain"]
    assert select(q, book="Tao") == [] and len(select(q, book="")) == len(q.cards)
    assert (card(q, "Book.plain").standing, card(q, "Book.plain").judged) == ("approved", "faithful")
    assert (card(q, "Book.double_pos").standing, card(q, "Book.double_pos").judged) == ("commented", "stronger")
    with pytest.raises(UsageError, match="no verdict `maybe`"):
        select(q, verdict="maybe")


def test_a_verdict_on_an_old_meaning_is_stale_and_not_applied(tmp_path: Path) -> None:
    repo = make(tmp_path)
    digest = closures(census(DirTree(repo), ["Book"]))["Book.plain"][0]
    ada = f'[[review]]\ndeclaration = "Book.plain"\nentity = "thm:2.1"\nverdict = "approve"\ndigest = "{digest}"\n\n'
    write(repo, {"reviews.toml": ada})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--author=Ada Reviewer <ada@example.org>", "-m", "approve plain by hand")
    # Bob's entries follow the blank line Ada's commit ended with: each is his, by its own line's commit.
    bob = (f'[[review]]\ndeclaration = "Book.plain"\nverdict = "comment"\nnote = "fine"\ndigest = "{digest}"\n\n'
           f'[[review]]\ndeclaration = "Book.plain"\nverdict = "maybe"\ndigest = "{digest}"\n')
    write(repo, {"reviews.toml": ada + bob})
    git(repo, "commit", "-q", "-a", "--author=Bob Reader <bob@example.org>", "-m", "comment through a pull request")
    reviewed = git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"Book/B.lean": B.replace("theorem plain : True", "theorem plain : True ∧ True").replace(
        ":= trivial", ":= ⟨trivial, trivial⟩")})
    git(repo, "commit", "-qam", "restate plain")

    now = card(queue(repo), "Book.plain")
    assert now.decision is None and now.comments == [] and [r.verdict for r in now.stale] == ["approve", "comment"]
    assert now.standing == "stale" and "unreviewed" in states(now)
    assert [r.reviewer for r in now.stale] == ["Ada Reviewer <ada@example.org>", "Bob Reader <bob@example.org>"]
    then = queue(repo, reviewed)
    held = card(then, "Book.plain")
    assert held.decision is not None and held.decision.reviewer == "Ada Reviewer <ada@example.org>"
    assert held.decision.at is not None and held.stale == [] and held.standing == "approved"
    assert [(r.note, r.reviewer) for r in held.comments] == [("fine", "Bob Reader <bob@example.org>")]
    assert then.problems == ["reviews.toml line 13 is not a verdict: verdict: Input should be 'approve', 'reject' or "
                             "'comment'"]
    assert then.commit == reviewed


def test_several_books_each_card_its_own(tmp_path: Path) -> None:
    repo = tmp_path / "reasbook"
    shutil.copytree(DATA / "reasbook_books" / "ReasBook", repo)
    write(repo, {"autoformalize.toml": '[project]\nlean_roots = ["Books", "Papers"]\n'})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "books")
    q = queue(repo)

    assert q.books == ["", "Analysis2_Tao_2022", "ConvexAnalysis_Rockafellar_1970"]
    tao = select(q, book="Analysis2_Tao_2022")
    assert {c.entity for c in tao} == {"Analysis2_Tao_2022/thm:1.1"} and len(tao) == 6
    rockafellar = select(q, book="ConvexAnalysis_Rockafellar_1970", chapter="1")
    assert [(c.kind, c.entity) for c in rockafellar] == [
        ("definition", ""), ("statement", "ConvexAnalysis_Rockafellar_1970/thm:1.1")]
    assert rockafellar[1].reaches == [rockafellar[0].declaration]  # the definition shown in its statement's book
    assert {c.entity for c in select(q, book="ConvexAnalysis_Rockafellar_1970", chapter="4")} == {
        "ConvexAnalysis_Rockafellar_1970/cor:4.7.2"}
    assert all(c.path.startswith(f"Books/{c.book}/") for c in q.cards if c.book)
    assert {c.path.split("/")[0] for c in select(q, book="")} == {"Papers"}


@dataclass
class ByName:
    """A judge model that answers from a script keyed by the entity's name in the request."""

    verdicts: dict[str, tuple[int, str]]
    name: str = "scripted"

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        asked = messages[-1].text
        score, reason = next(v for k, v in self.verdicts.items() if f"NAME: {k}\n" in asked)
        return Reply(json.dumps({"lean_implies_nl": score != 1, "nl_implies_lean": score == 3, "score": score,
                                 "reason": reason}))


def audited(repo: Path, verdicts: dict[str, tuple[int, str]], tested: list[succ.Tested], when: datetime) -> str:
    """The document `autoformalize audit --successors` writes, its judge scripted and its mutants' outcomes given."""
    measured = succ.Measured(tested, population=len(tested), sampled=False, seed=0)
    doc = audit(repo, census(DirTree(repo), ["Book"]), Models(judge=ByName(verdicts)), Options(concurrency=1), when,
                successors=measured)
    return json.dumps(doc)


def outcome(status: succ.Status, kind: succ.Kind = succ.Kind.VACUITY) -> succ.Outcome:
    return succ.Outcome(kind=kind, change="the conclusion replaced by True", status=status,
                        killed_by=["Book.zero_even"] if status is succ.Status.KILLED else [])


def test_the_audits_judges_and_successor_tests_reach_the_cards(tmp_path: Path) -> None:
    repo = make(tmp_path, history=[judged(4, "thm:2.2", "Book.zero_even", 3, "same")])
    verdicts = {"Theorem 2.1": (3, "same"), "Theorem 2.2": (1, "the audit reads it as different"),
                "Theorem 2.3": (3, "same"), "Theorem 1.2": (3, "same"), "Theorem 1.3": (2, "weaker hypothesis"),
                "Definition 1.1": (3, "same")}
    tested = [succ.Tested(declaration="Book.plain", file="Book/B.lean", line=6, users=["Book.zero_even"],
                          mutants=[outcome(succ.Status.KILLED)], verdict=succ.Verdict.TESTED),
              succ.Tested(declaration="Book.two_even", file="Book/B.lean", line=12, users=["Book.other"],
                          mutants=[outcome(succ.Status.SURVIVED)], verdict=succ.Verdict.UNTESTED)]
    # The audit ran before cycle 4 judged zero_even again: its verdict is of an older text.
    write(repo, {f"{STATE}/audit/latest.json": audited(repo, verdicts, tested, T0 + timedelta(days=2))})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "audit")
    q = queue(repo)

    plain = card(q, "Book.plain")
    assert [(j.by, j.verdict, j.reason, j.rubric, j.current) for j in plain.judgements] == [
        ("the audit's direct judge", "faithful", "same", "default", True)]
    assert plain.successors == ("tested: 1 of 1 mutants break a user (1 users: Book.zero_even) (the audit's "
                                "successor test)")
    assert plain.risk is Risk.JUDGED
    assert plain.why == "judged faithful by the audit's direct judge, and its users test it"
    two = card(q, "Book.two_even")
    assert two.risk is Risk.UNTESTED and two.successors is not None and two.successors.startswith("untested: 0 of 1")
    assert two.why.endswith("but its successor test says: untested")
    zero = card(q, "Book.zero_even")
    assert [(j.by, j.verdict, j.current) for j in zero.judgements] == [
        ("the loop's judge, cycle 4", "faithful", True), ("the audit's direct judge", "different", False)]
    assert zero.judgements[1].reason == "(judged before cycle 4 changed it) the audit reads it as different"
    assert zero.risk is Risk.UNTESTED  # the audit's older "different" does not count
    assert card(q, "Book.double_pos").risk is Risk.STRONGER
    assert q.audit == f"{STATE}/audit/latest.json, generated {(T0 + timedelta(days=2)).isoformat()}"


def test_users_the_loops_successors_gate_found_broken_are_the_changed_statements_successor_result(
        tmp_path: Path) -> None:
    detail = (f"2 user(s) of 2 altered constant(s) compiled as at the base; broken successors (evidence, not locked):\n"
              f"Book.zero_even (Book/B.lean), as it was at the base, {BROKE} Book.IsEven: type mismatch\n"
              f"Book.two_even (Book/B.lean), as it was at the base, {BROKE} double_pos: unknown constant")
    history = [judged(1, "thm:1.3", "Book.double_pos", 3, "same"), judged(2, "thm:2.2", "Book.zero_even", 3, "same"),
               judged(3, "def:1.1", "Book.IsEven", 3, "same", changed_files=["Book/A.lean"],
                      gates=[GateVerdict(name="successors", passed=True, detail=detail)])]
    q = queue(make(tmp_path, history=history))
    assert card(q, "Book.IsEven").successors == (
        f"broken successors (cycle 3's successors gate): Book.zero_even (Book/B.lean), as it was at the base, {BROKE} "
        "Book.IsEven: type mismatch")
    double_pos = card(q, "Book.double_pos")  # named by its short name: its users relied on it
    assert double_pos.successors is not None and double_pos.successors.endswith("double_pos: unknown constant")
    assert double_pos.risk is Risk.JUDGED
    zero_even = card(q, "Book.zero_even")  # a user that broke is not a statement its users test
    assert zero_even.successors is None and zero_even.risk is Risk.UNTESTED
    assert card(q, "Book.double").successors is None  # `double_pos` does not name `double`


def test_the_json_form_has_the_cards_keys_and_the_risks_name(tmp_path: Path) -> None:
    q = queue(make(tmp_path))
    doc = json.loads(to_json(q.cards))
    assert doc["format"] == 1 and [c["declaration"] for c in doc["cards"]] == [c.declaration for c in q.cards]
    first = doc["cards"][0]
    assert first["risk"] == "different" and first["judged"] == "different" and first["standing"] == "unreviewed"
    assert set(first) == set(q.cards[0].model_dump()) and first["judgements"][0]["cycle"] == 1


def test_the_loops_own_judge_of_a_real_cycle_is_on_the_card(project: Project) -> None:
    new = ("\n\n/-- Theorem 2.1 For every natural number $n$, $0 + n = n$. -/\n"
           "theorem zero_add' (n : ℕ) (h : 0 < n) : 0 + n = n := by\n  simp\n")
    project.agents.plan(strategy("Book/B.lean", target="State Theorem 2.1."))
    project.agents.work([("edit_file", {"path": "Book/B.lean", "old_string": "end Book",
                                        "new_string": new.strip() + "\n\nend Book"})], "added Theorem 2.1")
    project.agents.judge(False, True, 1, reason="Lean adds the hypothesis 0 < n")
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()
    assert record.outcome == "accepted"

    q = queue(project.repo)
    first = q.cards[0]
    assert (first.declaration, first.entity, first.risk) == ("Book.zero_add'", "thm:2.1", Risk.DIFFERENT)
    assert [(j.by, j.verdict, j.reason) for j in first.judgements] == [
        ("the loop's judge, cycle 1", "different", "Lean adds the hypothesis 0 < n")]
    assert first.cycles == [1] and first.book_text == "For every natural number $n$, $0 + n = n$."
    assert "recorded in cycle 1" in first.book_source
