"""`exact?` as the audit asks it and reads Lean's answer: the probe file, and the message shapes Lean's source prints
(`Lean.Elab.Tactic.LibrarySearch`, `Lean.Meta.Tactic.TryThis`; lean4#9966 and #10524 changed the shape)."""

from __future__ import annotations

import pytest

from audit.exact import Kind, names, probe, read
from gates.diagnostics import CheckResult
from gates.index import index_source

NONCE = "5f0c9a1e2b3d4c5e6f708192"
FILE = "P.lean"
CHECKED = f'"{NONCE}" : String'  # what `#check "<nonce>"` prints, bare


def answer(*lines: str, code: int = 0, seconds: float = 1.5) -> CheckResult:
    return CheckResult("lake lean P.lean", code, "\n".join(lines) + "\n", seconds)


BOOK = """\
import Mathlib

namespace Book

/-- Lemma 1 -/
@[simp] theorem one (n : ℕ) : n ≤ n + 1 := by
  omega

theorem two (a b : ℕ) (h : a ≤ b) :
    a ≤ b + 1 := by
  exact Nat.le_succ_of_le h

theorem three : True := trivial

end Book
"""


def test_the_probe_is_the_file_up_to_the_theorem_proved_by_exact_and_nothing_after_it() -> None:
    index = index_source("Book/A.lean", BOOK)
    two = next(d for d in index.decls if d.name == "Book.two")
    text = probe(BOOK, two, NONCE)
    head = BOOK[:BOOK.index("theorem two")]
    assert text == (f'{head}#check "{NONCE}"\nset_option pp.fullNames true in\nset_option pp.fieldNotation false in\n'
                    "theorem two (a b : ℕ) (h : a ≤ b) :\n    a ≤ b + 1 := by\n  exact?\n")
    one = next(d for d in index.decls if d.name == "Book.one")
    # The doc comment and the attribute stay with the theorem, after the options that apply to it.
    assert probe(BOOK, one, NONCE).endswith(
        "in\n/-- Lemma 1 -/\n@[simp] theorem one (n : ℕ) : n ≤ n + 1 := by\n  exact?\n")


@pytest.mark.parametrize("lines", [
    # Before lean4#9966: `addSuggestion` logs `m!"{header}{s}"` with the header `Try this: `.
    [CHECKED, "Try this: exact Nat.le_succ n"],
    # lean4#9966: the suggestion on its own line, indented.
    [CHECKED, "Try this:", "  exact Nat.le_succ n"],
    # lean4#10524 (v4.25 on): an `[apply]` button before it.
    [CHECKED, "Try this:", "  [apply] exact Nat.le_succ n"],
    # Newer `lean` prints an information message after its position, and Lake after `info:`.
    [f"{FILE}:9:0: info: {CHECKED}", f"{FILE}:12:2: info: Try this:", "  [apply] exact Nat.le_succ n"],
    [f"info: {FILE}:9:0: {CHECKED}", f"info: {FILE}:12:2: Try this: exact Nat.le_succ n"],
    [f"{FILE}:9:0-9:20: info: {CHECKED}", f"{FILE}:12:2-12:8: info: Try this:", "  [apply] exact Nat.le_succ n"],
])
def test_every_shape_of_try_this_reads_as_the_same_suggestion(lines: list[str]) -> None:
    got = read(answer(*lines), NONCE)
    assert (got.kind, got.suggestion, got.valid) == (Kind.FOUND, "Nat.le_succ n", True)


def test_a_long_suggestion_keeps_its_lines_and_the_tactic_around_the_term_is_dropped() -> None:
    got = read(answer(CHECKED, "Try this:", "  [apply] (expose_names; exact", "      Nat.le_trans (Nat.le_succ n)",
                      "        h)", "warning: something else"), NONCE)
    assert got.suggestion == "Nat.le_trans (Nat.le_succ n)\n  h"
    refined = read(answer(CHECKED, "Try this: refine Nat.le_trans ?_ h"), NONCE)
    assert refined.suggestion == "Nat.le_trans ?_ h"


def test_a_proof_whose_tactic_did_not_elaborate_again_is_still_a_proof() -> None:
    # `addSuggestionIfValid`: `throwError` with the tactic indented under the line, then a hint paragraph.
    got = read(answer(CHECKED, f"{FILE}:12:2: error: found a proof, but the corresponding tactic failed:",
                      "  (expose_names; exact Nat.le_succ n)", "",
                      "It may be possible to correct this proof by adding type annotations, explicitly specifying "
                      "implicit arguments, or eliminating unnecessary function abstractions.", code=1), NONCE)
    assert (got.kind, got.suggestion, got.valid) == (Kind.FOUND, "Nat.le_succ n", False)


@pytest.mark.parametrize("message", ["`exact?` could not close the goal.",
                                     "`exact?` could not close the goal. Try `apply?` to see partial suggestions."])
def test_exact_finding_nothing_is_not_found(message: str) -> None:
    got = read(answer(CHECKED, f"{FILE}:12:2: error: {message}", code=1), NONCE)
    assert (got.kind, got.suggestion) == (Kind.NONE, None)
    assert got.message == message


def test_running_out_of_time_is_a_timeout_never_an_answer() -> None:
    killed = read(answer(CHECKED, code=None, seconds=120.2), NONCE)  # type: ignore[arg-type]
    assert killed.kind is Kind.TIMEOUT and "120" in killed.message
    heartbeats = read(answer(CHECKED, f"{FILE}:12:2: error: (deterministic) timeout at `whnf`, maximum number of "
                                      "heartbeats (200000) has been reached",
                             "Use `set_option maxHeartbeats <num>` to set the limit.", code=1), NONCE)
    assert heartbeats.kind is Kind.TIMEOUT and "heartbeats" in heartbeats.message


def test_a_try_this_printed_before_the_theorem_is_not_its_answer() -> None:
    # An earlier `simp?` of the file printed one; the theorem's own `exact?` found nothing.
    got = read(answer("Try this: simp only [Nat.le_succ]", CHECKED, f"{FILE}:12:2: error: `exact?` could not close "
                      "the goal.", code=1), NONCE)
    assert got.kind is Kind.NONE


def test_no_answer_about_the_theorem_is_an_error() -> None:
    broken = read(answer(f"{FILE}:3:0: error: unknown identifier 'foo'", CHECKED, "Try this: exact trivial", code=1),
                  NONCE)
    assert broken.kind is Kind.ERROR and "errors before the theorem" in broken.message
    unreached = read(answer("error: Book/A.lean:3:0: unknown module prefix 'Mathlib'", "error: build failed", code=1),
                     NONCE)
    assert unreached.kind is Kind.ERROR and "did not reach" in unreached.message
    silent = read(answer(CHECKED), NONCE)
    assert silent.kind is Kind.ERROR and "no answer" in silent.message


def test_the_names_a_suggestion_writes_leave_out_what_it_binds() -> None:
    assert names("Nat.le_trans (Nat.le_succ n) h") == ["Nat.le_trans", "Nat.le_succ", "n", "h"]
    assert names("fun a => Nat.add_le_add_right a k") == ["Nat.add_le_add_right", "k"]
    # A binder's type names constants; an anonymous-constructor pattern binds.
    assert names("fun (x : Fin n) ⟨a, b⟩ ↦ Book.foo x a (List.length b)") == ["Fin", "n", "Book.foo", "List.length"]
    assert names('_root_.Foo.bar "Nat.lie" x.1 (F a).mpr') == ["Foo.bar", "x", "F", "a"]
    assert names("_private.Book.A.0.Book.helper n a✝") == ["Book.helper", "n"]
    assert names("∃ x ∈ s, Set.Mem x s") == ["s", "Set.Mem"]
