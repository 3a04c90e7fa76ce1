"""The integrity gate: each way of weakening a proof, named."""

from __future__ import annotations

import pytest

from gates import integrity
from gates.config import GatesConfig
from gates.meaning import meanings
from tests.gates.helpers import gate_input

A = """\
namespace Book

theorem hard (n : ℕ) : n + 0 = n := by
  sorry

theorem easy : True := trivial

end Book
"""
B = "import Book.A\n\nnamespace Book\n\ntheorem uses : True := easy\n\nend Book\n"
BASE = {"Book/A.lean": A, "Book/B.lean": B, "lakefile.toml": "name = \"book\"\n"}


def check(changes: dict[str, str | None], **kw: object) -> integrity.GateResult:
    return integrity.check(gate_input(BASE, changes, **kw))  # type: ignore[arg-type]


def test_closing_a_sorry_honestly_passes() -> None:
    result = check({"Book/A.lean": A.replace("  sorry", "  simp")})
    assert result.passed, result.detail


@pytest.mark.parametrize(
    ("addition", "named"),
    [
        ("axiom cheat : ∀ n : ℕ, n = 0\n", "new axiom Book.cheat"),
        ("@[simp] private axiom hidden : False\n", "new axiom Book.hidden"),
        ("theorem t : True := by admit\n", "new admit in Book.t"),
        ("theorem t : True := sorryAx _ false\n", "new sorryAx"),
        ("theorem t : 2 + 2 = 4 := by native_decide\n", "new native_decide"),
        ("set_option debug.skipKernelTC true in\ntheorem t : True := trivial\n", "new set_option debug.skipKernelTC"),
        ("theorem t : True := by\n  set_option debug.byAsSorry true in exact foo\n", "set_option debug.byAsSorry"),
        ("set_option warn.sorry false\n", "set_option warn.sorry"),
        ("@[implemented_by foo] theorem t : True := trivial\n", "@[implemented_by foo] on theorem Book.t"),
        ("macro \"cheat\" : tactic => `(tactic| sorry)\n", "sorry inside a macro/notation"),
        ("#exit\n", "#exit"),
    ],
)
def test_each_weakening_is_rejected_and_named(addition: str, named: str) -> None:
    result = check({"Book/A.lean": A.replace("end Book", addition + "\nend Book")})
    assert not result.passed
    assert named in result.detail, result.detail


def test_allowed_axioms_and_harmless_options_pass() -> None:
    extra = "axiom ok_ax : True\nset_option maxRecDepth 2000 in\ntheorem t : True := trivial\n"
    result = check({"Book/A.lean": A.replace("end Book", extra + "end Book")},
                   gates=GatesConfig(allowed_axioms=["Book.ok_ax"]))
    assert result.passed, result.detail


def test_an_existing_axiom_is_not_the_changes_fault() -> None:
    base = {**BASE, "Book/A.lean": A.replace("end Book", "axiom old : True\nend Book")}
    changed = base["Book/A.lean"].replace("  sorry", "  simp")
    result = integrity.check(gate_input(base, {"Book/A.lean": changed}))
    assert result.passed, result.detail


def test_restating_an_existing_axiom_is_a_new_axiom() -> None:
    base = {**BASE, "Book/A.lean": A.replace("end Book", "axiom old : True\nend Book")}
    changed = base["Book/A.lean"].replace("axiom old : True", "axiom old : ∀ n : ℕ, n = 0")
    result = integrity.check(gate_input(base, {"Book/A.lean": changed}))
    assert not result.passed and "new axiom Book.old" in result.detail


def test_editing_a_protected_file_is_rejected() -> None:
    result = check({"lakefile.toml": "name = \"book\"\n[leanOptions]\nmaxHeartbeats = 0\n"})
    assert not result.passed and "lakefile.toml is protected and was modified" in result.detail


def test_deleting_a_theorem_to_drop_its_sorry_is_rejected() -> None:
    result = check({"Book/A.lean": A.replace("theorem hard (n : ℕ) : n + 0 = n := by\n  sorry\n", "")})
    assert not result.passed
    assert "Book.hard held 1 sorry/admit in Book/A.lean and was deleted" in result.detail


def test_deleting_the_file_holding_it_is_rejected() -> None:
    result = check({"Book/A.lean": None})
    assert not result.passed and "Book.hard" in result.detail and "deleted" in result.detail


def test_renaming_a_sorried_theorem_is_rejected_and_named() -> None:
    result = check({"Book/A.lean": A.replace("theorem hard", "theorem hard'")})
    assert not result.passed and "renamed to Book.hard'" in result.detail


def test_moving_a_sorried_theorem_to_another_file_passes() -> None:
    hard = "theorem hard (n : ℕ) : n + 0 = n := by\n  sorry\n"
    result = check({"Book/A.lean": A.replace(hard, ""), "Book/C.lean": f"namespace Book\n{hard}end Book\n"})
    assert result.passed, result.detail


def test_weakening_the_statement_while_closing_the_sorry_is_rejected() -> None:
    weaker = A.replace("theorem hard (n : ℕ) : n + 0 = n := by\n  sorry",
                       "theorem hard (n : ℕ) : True := by\n  trivial")
    result = check({"Book/A.lean": weaker})
    assert not result.passed and "statement changed in the same change that closed its sorry" in result.detail


def test_changing_a_definition_a_statement_names_while_closing_one_of_its_sorries_is_rejected() -> None:
    # Closing one sorry of two is closing too: a definition the statement uses may not change with it.
    two = ("namespace Book\n\ndef Good (n : ℕ) : Prop := n > 2\n\ntheorem hard (n : ℕ) : Good (n + 3) := by\n"
           "  have h : n + 3 > 2 := by sorry\n  sorry\n\nend Book\n")
    base = {"Book/A.lean": two, "lakefile.toml": 'name = "book"\n'}
    weaker = two.replace("n > 2", "True").replace("  sorry\n\nend", "  trivial\n\nend")

    result = integrity.check(gate_input(base, {"Book/A.lean": weaker}))

    assert not result.passed
    assert ("Book.hard: Book.Good, which its statement uses, changed in the same change that closed its sorry"
            in result.detail), result.detail
    kept = two.replace("n > 2", "True")  # the definition alone, no sorry closed: a change of its own
    assert integrity.check(gate_input(base, {"Book/A.lean": kept})).passed


def test_changing_a_statement_and_keeping_the_sorry_passes() -> None:
    restated = A.replace("n + 0 = n", "0 + n = n")
    result = check({"Book/A.lean": restated})
    assert result.passed, result.detail


def test_reformatting_a_statement_while_closing_passes() -> None:
    reformatted = A.replace("theorem hard (n : ℕ) : n + 0 = n := by\n  sorry",
                            "theorem hard (n : ℕ) :\n    n + 0 = n := by -- by simp\n  simp")
    result = check({"Book/A.lean": reformatted})
    assert result.passed, result.detail


def locked_easy() -> dict[str, str]:
    return {"Book.easy": meanings(gate_input(BASE, {}).before)["Book.easy"][0]}


@pytest.mark.parametrize(("change", "what"), [
    (A.replace("theorem easy : True := trivial", "theorem easy : 1 = 1 := rfl"), "changed"),
    (A.replace("theorem easy : True := trivial", "theorem easy' : True := trivial"), "was deleted or renamed"),
])
def test_a_locked_statement_may_not_change_unannounced(change: str, what: str) -> None:
    result = check({"Book/A.lean": change}, locked=locked_easy())
    assert not result.passed
    assert f"Book.easy: its statement was judged faithful to the book and is locked, and it {what}" in result.detail


def test_a_restatement_needs_its_rationale() -> None:
    change = {"Book/A.lean": A.replace("theorem easy : True := trivial", "theorem easy : 1 = 1 := rfl")}
    bare = check(change, locked=locked_easy(), strategy="## Target\nRESTATE: Book.easy\n")
    assert not bare.passed and "the strategy's `RESTATE: Book.easy` gives no rationale" in bare.detail
    declared = check(change, locked=locked_easy(), strategy="RESTATE: `Book.easy` — the book says 1 = 1\n")
    assert declared.passed, declared.detail


def test_a_statement_paired_with_the_book_may_not_change_unannounced_locked_or_not() -> None:
    change = {"Book/A.lean": A.replace("theorem easy : True := trivial", "theorem easy : 1 = 1 := rfl")}
    refused = check(change, paired={"Book.easy"})
    assert not refused.passed
    assert ("Book.easy: its statement is paired with a statement of the book, and it changed; restating it needs a "
            "line `RESTATE: Book.easy — <rationale>` in the strategy") in refused.detail
    assert check(change, paired={"Book.easy"}, strategy="RESTATE: Book.easy — the book says 1 = 1\n").passed
    assert check(change).passed  # not paired with the book: a change of meaning is the Worker's business
    reproved = check({"Book/A.lean": A.replace("True := trivial", "True := by trivial")}, paired={"Book.easy"})
    assert reproved.passed, reproved.detail


def test_with_approval_required_a_restatement_needs_a_persons_approval_of_that_very_change() -> None:
    change = {"Book/A.lean": A.replace("theorem easy : True := trivial", "theorem easy : 1 = 1 := rfl")}
    strict = GatesConfig(restate_requires_approval=True)
    declared = "RESTATE: Book.easy — the book says 1 = 1\n"
    digest = locked_easy()["Book.easy"]
    refused = check(change, paired={"Book.easy"}, strategy=declared, gates=strict)
    assert not refused.passed
    assert (f'add `[[restate]]` with `declaration = "Book.easy"` and `from = "{digest}"` to '
            "approved_restatements.toml and commit it") in refused.detail

    def approved(text: str, where: str = "approved_restatements.toml") -> integrity.GateResult:
        return integrity.check(gate_input({**BASE, where: text}, change, paired={"Book.easy"}, strategy=declared,
                                          gates=strict))

    approval = f'[[restate]]\ndeclaration = "Book.easy"\nfrom = "{digest}"\nreason = "erratum"\n'
    assert approved(approval).passed
    assert not approved(approval.replace(digest, "0" * 16)).passed  # another statement's approval
    assert not approved(approval, "elsewhere.toml").passed
    assert "approved_restatements.toml cannot be read" in approved("[[restate\n").detail
    # the Worker cannot approve its own restatement: the file is protected, and read from the base
    forged = integrity.check(gate_input(BASE, {**change, "approved_restatements.toml": approval},
                                        paired={"Book.easy"}, strategy=declared, gates=strict))
    assert not forged.passed and "approved_restatements.toml is protected and was added" in forged.detail


def test_a_statement_a_person_approved_is_locked_and_restated_only_with_a_new_approval() -> None:
    change: dict[str, str | None] = {"Book/A.lean": A.replace("theorem easy : True := trivial",
                                                              "theorem easy : 1 = 1 := rfl")}
    digest = locked_easy()["Book.easy"]
    person = {"Book.easy": digest}  # approved in the base's reviews.toml; the judge never saw it
    declared = "RESTATE: Book.easy — the book says 1 = 1\n"
    bare = check(change, approved=person)
    assert not bare.passed
    assert ("Book.easy: its statement was approved by a person (reviews.toml) and is locked, and it changed; "
            "restating it needs a line `RESTATE: Book.easy — <rationale>` in the strategy, and a person's approval "
            "of the restatement") in bare.detail
    unapproved = check(change, approved=person, strategy=declared)  # restate_requires_approval is off
    assert not unapproved.passed
    assert ("a person approved this statement, so only a person may approve a change of it: add `[[restate]]` with "
            f'`declaration = "Book.easy"` and `from = "{digest}"`') in unapproved.detail
    approval = f'[[restate]]\ndeclaration = "Book.easy"\nfrom = "{digest}"\n'
    both = integrity.check(gate_input({**BASE, "approved_restatements.toml": approval}, change, approved=person,
                                      strategy=declared))
    assert both.passed, both.detail
    reproved = check({"Book/A.lean": A.replace("True := trivial", "True := by trivial")}, approved=person)
    assert reproved.passed, reproved.detail


def test_a_statement_a_person_rejected_may_be_restated_without_a_declaration() -> None:
    change: dict[str, str | None] = {"Book/A.lean": A.replace("theorem easy : True := trivial",
                                                              "theorem easy : 1 = 1 := rfl")}
    assert not check(change, locked=locked_easy(), paired={"Book.easy"}).passed
    rejected = check(change, locked=locked_easy(), paired={"Book.easy"}, rejected={"Book.easy"},
                     gates=GatesConfig(restate_requires_approval=True))
    assert rejected.passed, rejected.detail  # neither the judge's lock nor the pairing holds it any more


def test_a_locked_statement_with_a_new_proof_passes() -> None:
    result = check({"Book/A.lean": A.replace("theorem easy : True := trivial", "theorem easy : True := by trivial")},
                   locked=locked_easy())
    assert result.passed, result.detail


def test_restate_lines_in_the_ways_people_write_them() -> None:
    assert integrity.restatements("RESTATE: Book.easy—the book says 1 = 1\n- RESTATE: `A.b` -- why\n"
                                  "  RESTATE: C.d: because\n> RESTATE: E.f — quoted, so not a declaration\n") == {
        "Book.easy": "the book says 1 = 1", "A.b": "why", "C.d": "because"}


def test_closing_a_sorry_in_a_definitions_body_passes() -> None:
    base = {**BASE, "Book/C.lean": "namespace Book\ndef seed : Nat := sorry\nend Book\n"}
    result = integrity.check(gate_input(base, {"Book/C.lean": "namespace Book\ndef seed : Nat := 3\nend Book\n"}))
    assert result.passed, result.detail


def test_a_set_option_in_to_close_a_sorry_passes() -> None:
    result = check({"Book/A.lean": A.replace("theorem hard", "set_option maxHeartbeats 400000 in\ntheorem hard")
                    .replace("  sorry", "  simp")})
    assert result.passed, result.detail
