"""The facts a score is capped by: measured from the two trees, never read from the report."""

from __future__ import annotations

import pytest

from gates.census import census
from gates.tree import MemTree
from orchestrator.facts import Facts, decomposed, measure

A = "namespace Book\n\ntheorem hard (n : ℕ) : n + 0 = n := by\n  sorry\n\nend Book\n"
STEPS = A.replace("  sorry", "  have h1 : n = n := sorry\n  have h2 : n + 0 = n := sorry\n  exact h2")
LEMMA = A.replace("theorem hard", "theorem step (n : ℕ) : n + 0 = n := by\n  sorry\n\ntheorem hard").replace(
    ":= by\n  sorry\n\nend", ":= step n\n\nend")
PADDED = A.replace("end Book", "theorem junk : True := by\n  sorry\n\nend Book")


def tree(text: str) -> MemTree:
    return MemTree({"Book/A.lean": text.encode()})


@pytest.mark.parametrize(("after", "split"), [(STEPS, ["Book.hard"]), (LEMMA, ["Book.hard"]), (PADDED, [])])
def test_a_decomposition_splits_an_existing_sorry_padding_does_not(after: str, split: list[str]) -> None:
    assert decomposed(census(tree(A), ["Book"]), census(tree(after), ["Book"])) == split


def test_the_score_is_capped_by_the_facts_whatever_the_evaluator_says() -> None:
    before = census(tree(A), ["Book"])
    declared = "RESTRUCTURING: hard in two steps"
    padded = measure(before, census(tree(PADDED), ["Book"]), [], declared, 6000)
    assert not padded.progress and padded.cap(2) == 0 and padded.cap(-1) == -1
    assert "sorries rose 1 → 2 without a decomposition" in padded.render()
    steps = measure(before, census(tree(STEPS), ["Book"]), [], declared, 6000)
    assert steps.progress and steps.cap(2) == 2
    assert not measure(before, census(tree(STEPS), ["Book"]), [], "> " + declared, 6000).progress  # undeclared
    closed = measure(before, census(tree(A.replace("sorry", "simp")), ["Book"]), [], "", 6000)
    assert closed.gains() == ["sorries fell 1 → 0"] and closed.cap(1) == 1
    assert not measure(before, None, [], "", 6000).progress  # did not land
    assert Facts(True, 3, 2, different=["thm:1"]).cap(2) == 0  # a DIFFERENT verdict outweighs a closed sorry
