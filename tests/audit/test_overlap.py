"""What an answer of `exact?` means for the Mathlib-overlap dimension: whose constants the suggestion uses, which
theorems are tried, and the document, per book and chapter, and the loop's notes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from audit import overlap
from audit.ask import Asked
from audit.exact import Answer, Kind
from audit.overlap import Constants, Status, Tried
from audit.rests import Support
from gates.build import LakeCompiler
from gates.census import Census, census
from gates.config import BuildConfig
from gates.listing import gather
from gates.tree import DirTree, MemTree
from state.history import HistoryRecord, LibraryProof, Outcome
from tests.conftest import sandbox

STANDIN = Path(__file__).parent.parent / "standin" / "lean_checker.py"
ROOTS = ["Book"]
A = """\
import Mathlib

open Real

namespace Book

def double (n : ℕ) : ℕ := n + n

theorem helper (n : ℕ) : double n = n + n := rfl

theorem le1 (k : ℕ) (h : k ≤ double k) : k ≤ k + 1 := by omega

theorem root (x : ℝ) (h : 0 ≤ sqrt x) : 0 ≤ sqrt x := h

theorem holed (n : ℕ) : n ≤ n * n := by
  sorry

theorem leans (n : ℕ) : n ≤ n * n + 1 := by
  have := holed n
  omega

end Book
"""
B = """\
import Book.A

namespace Book

theorem base_le (n : ℕ) : n ≤ n * 1 := by omega

alias base_le' := base_le

end Book
"""


def tree(files: dict[str, str]) -> Census:
    return census(MemTree({p: t.encode() for p, t in files.items()}), ROOTS)


def target(found: Census, name: str) -> overlap.Target:
    return next(t for t in overlap.targets(found, Support(found, ROOTS)) if t.name == name)


FOUND = {"Book.helper": "thm", "Book.double": "def", "Book.le1": "thm"}


@pytest.mark.parametrize(("suggestion", "status", "outside", "own"), [
    ("Book.helper k", Status.OWN, [], ["Book.helper"]),  # the project's own theorem: original, as the paper counts
    ("Nat.le_trans (Book.helper k).le (Nat.le_succ k)", Status.OWN, ["Nat.le_trans", "Nat.le_succ"], ["Book.helper"]),
    ("Nat.le_succ k", Status.OVERLAP, ["Nat.le_succ"], []),
    # A definition of the project is the statement's vocabulary, not a result: the library theorem still closes it.
    ("Nat.le_trans h (Nat.le_refl (Book.double k))", Status.OVERLAP, ["Nat.le_trans", "Nat.le_refl"], []),
    ("fun a => h", Status.LOCAL, [], []),  # its own hypothesis
])
def test_a_suggestion_is_original_with_a_project_theorem_and_overlaps_with_the_library_alone(
        suggestion: str, status: Status, outside: list[str], own: list[str]) -> None:
    found = tree({"Book/A.lean": A})
    tried = overlap.classify(target(found, "Book.le1"), Answer(kind=Kind.FOUND, suggestion=suggestion),
                             Constants(FOUND))
    assert (tried.status, tried.constants, tried.project) == (status, outside, own)


def test_a_name_the_statement_writes_is_its_vocabulary_even_printed_in_full() -> None:
    found = tree({"Book/A.lean": A})
    root = target(found, "Book.root")
    tried = overlap.classify(root, Answer(kind=Kind.FOUND, suggestion="le_of_eq (congrArg Real.sqrt rfl) |>.trans h"),
                             Constants(FOUND))
    assert tried.constants == ["le_of_eq", "congrArg", "rfl"]  # `Real.sqrt` is the statement's `sqrt`, `h` its own
    assert overlap.classify(root, Answer(kind=Kind.FOUND, suggestion="h"), Constants(FOUND)).status is Status.LOCAL


def test_not_found_is_original_and_a_timeout_or_an_error_is_neither() -> None:
    le1 = target(tree({"Book/A.lean": A}), "Book.le1")
    statuses = [overlap.classify(le1, Answer(kind=k, message="why"), Constants(FOUND)).status
                for k in (Kind.NONE, Kind.TIMEOUT, Kind.ERROR)]
    assert statuses == [Status.ORIGINAL, Status.TIMEOUT, Status.ERROR]


def test_the_project_is_decided_by_module_from_leans_listing_the_census_standing_in_without_it(
        make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"Book.lean": "import Book.B\n", "Book/A.lean": A, "Book/B.lean": B})
    found = census(DirTree(repo), ROOTS)
    compiler = LakeCompiler(repo, BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}", timeout_s=60,
                                              read_file=f"{sys.executable} {STANDIN} env {{file}}"), sandbox())
    listed = gather(compiler, found, ROOTS, ["Book/B.lean"], "c", None)
    assert listed.problem is None
    lean, source = overlap.constants(found, ["Book/B.lean"], listed.modules)
    text, fallback = overlap.constants(found, ["Book/B.lean"], None)
    assert (source, fallback) == ("lean", "census")
    # `alias` makes a theorem no declaration of the text names: only Lean's listing knows it is the project's.
    alias = Answer(kind=Kind.FOUND, suggestion="Book.base_le' k")
    base = target(found, "Book.base_le")
    assert overlap.classify(base, alias, lean["Book/B.lean"]).status is Status.OWN
    assert overlap.classify(base, alias, text["Book/B.lean"]).status is Status.OVERLAP
    # What the census declares, and what is named under it (`Foo.ext`), is the project's.
    assert text["Book/B.lean"].kind("Book.helper") == "thm" and text["Book/B.lean"].kind("Book.double.ext") == "?"
    assert text["Book/B.lean"].kind("Nat.le_succ") is None and lean["Book/B.lean"].kind("Nat.le_succ") is None


def test_only_proved_theorems_named_once_are_tried_and_a_sample_is_reproducible() -> None:
    found = tree({"Book/A.lean": A, "Book/C.lean": "namespace Book\n\ntheorem helper : True := trivial\n\nend Book\n",
                  "Book/D.lean": "theorem t1 : True := trivial\ntheorem t2 : True := trivial\nlemma t3 : True := "
                                 "trivial\n"})
    names = [t.name for t in overlap.targets(found, Support(found, ROOTS))]
    # Not `holed` (a sorry), not `leans` (on it), not `double` (a definition), not `Book.helper` (declared twice).
    assert names == ["Book.le1", "Book.root", "t1", "t2", "t3"]
    everything = overlap.targets(found, Support(found, ROOTS))
    for seed in range(6):  # the tree's order does not matter: the same seed draws the same theorems
        drawn = [t.name for t in overlap.sample(everything, 2, seed)]
        assert drawn == [t.name for t in overlap.sample(list(reversed(everything)), 2, seed)] and len(drawn) == 2
    assert [t.name for t in overlap.sample(everything, None, seed=7)] == names


def test_a_theorem_the_change_closed_is_one_holed_at_the_base_and_whole_now() -> None:
    before = tree({"Book/A.lean": A})
    after = tree({"Book/A.lean": A.replace("  sorry", "  nlinarith [Nat.zero_le n]")})
    assert overlap.closed(before, after) == ["Book.holed"]
    assert overlap.closed(before, before) == []


def tried(name: str, status: Status, file: str = "Book/A.lean", constants: list[str] | None = None) -> Tried:
    return Tried(declaration=name, file=file, line=3, status=status, suggestion="Nat.le_succ k" if status in (
        Status.OVERLAP, Status.OWN) else None, constants=constants or [])


def test_the_document_is_the_papers_row_with_each_overlap_and_its_chapter() -> None:
    results = [tried("Book.a", Status.OVERLAP, constants=["Nat.le_succ"]), tried("Book.b", Status.OWN),
               tried("Book.c", Status.ORIGINAL), tried("Book.d", Status.TIMEOUT),
               tried("Book.e", Status.OVERLAP, "Book/Ch2/B.lean", ["Nat.add_comm"])]
    entities = [{"id": "Theorem 1", "book": "Butcher", "chapter": "1", "lean": ["Book.a", "Book.b"]},
                {"id": "Theorem 2", "book": "Butcher", "chapter": "2", "lean": ["Book.x"]}]
    doc = overlap.document(results, population=9, sampled=True, seed=4, unasked=["Book.f"], limit_s=60,
                           source="lean", entities=entities, asked=3, cached=2)
    assert {k: doc[k] for k in ("proofs", "overlap", "rate", "timeouts", "own", "original", "unasked")} == {
        "proofs": 5, "overlap": 2, "rate": 0.4, "timeouts": 1, "own": 1, "original": 1, "unasked": 1}
    assert doc["items"] == [
        {"declaration": "Book.a", "suggestion": "Nat.le_succ k", "constants": ["Nat.le_succ"], "file": "Book/A.lean",
         "line": 3, "valid": True},
        {"declaration": "Book.e", "suggestion": "Nat.le_succ k", "constants": ["Nat.add_comm"],
         "file": "Book/Ch2/B.lean", "line": 3, "valid": True}]
    assert doc["timed_out"] == ["Book.d"] and doc["sample"] == {"size": 6, "seed": 4}
    assert doc["books"] == [
        {"book": "Butcher", "chapter": "1", "by": "entity", "proofs": 2, "overlap": 1, "rate": 0.5},
        {"book": None, "chapter": "Book", "by": "file", "proofs": 2, "overlap": 0, "rate": 0.0},
        {"book": None, "chapter": "Book/Ch2", "by": "file", "proofs": 1, "overlap": 1, "rate": 1.0}]
    rows = [dict(e) for e in entities]
    overlap.attach(rows, results)
    assert [r["mathlib"] for r in rows] == [
        [{"declaration": "Book.a", "status": "overlap", "suggestion": "Nat.le_succ k", "constants": ["Nat.le_succ"]},
         {"declaration": "Book.b", "status": "own", "suggestion": "Nat.le_succ k", "constants": []}], None]
    text = "\n".join(overlap.markdown(doc))
    assert "| this project | 5 | 40% (2) |" in text and "| `Book.e` | Book/Ch2/B.lean:3 | Nat.add_comm |" in text
    assert overlap.summary_line(doc) == ("Mathlib overlap (exact?): 2 of 5 proofs (40.0%); 1 timed out, 1 not asked")


def test_the_loop_tells_the_overlaps_of_theorems_still_in_the_tree_newest_first() -> None:
    def record(cycle: int, *names: str) -> HistoryRecord:
        return HistoryRecord(cycle=cycle, outcome=Outcome.ACCEPTED, mathlib_overlap=[
            LibraryProof(declaration=n, suggestion=f"Nat.le_succ {cycle}", constants=["Nat.le_succ"]) for n in names])

    now = tree({"Book/A.lean": A})
    text = overlap.told([record(1, "Book.le1", "Book.gone"), record(2, "Book.helper"), record(3, "Book.le1")], now)
    assert text.splitlines() == ["- Book.le1 (cycle 3) is Nat.le_succ: exact Nat.le_succ 3",
                                 "- Book.helper (cycle 2) is Nat.le_succ: exact Nat.le_succ 2"]
    asked = Asked(answers={"Book.le1": Answer(kind=Kind.FOUND, suggestion="Nat.le_succ k")})
    notes = overlap.notes(overlap.tried([target(now, "Book.le1")], asked, {"Book/A.lean": Constants(FOUND)}))
    assert notes == [LibraryProof(declaration="Book.le1", suggestion="Nat.le_succ k", constants=["Nat.le_succ"])]
