"""The facts a score is capped by: measured from the two trees, never read from the report."""

from __future__ import annotations

import pytest

from audit.entities import Entity
from audit.loop import Judged
from gates.census import census
from gates.tree import MemTree
from orchestrator.facts import Facts, decomposed, faithful_at, measure
from state.history import Faithfulness
from state.reviews import Review, Verdict, standing, unanswered
from state.statement_lock import Locked, StatementLock

A = "namespace Book\n\ntheorem hard (n : ℕ) : n + 0 = n := by\n  sorry\n\nend Book\n"
STEPS = A.replace("  sorry", "  have h1 : n = n := sorry\n  have h2 : n + 0 = n := sorry\n  exact h2")
LEMMA = A.replace("theorem hard", "theorem step (n : ℕ) : n + 0 = n := by\n  sorry\n\ntheorem hard").replace(
    ":= by\n  sorry\n\nend", ":= step n\n\nend")
PADDED = A.replace("end Book", "theorem junk : True := by\n  sorry\n\nend Book")


def tree(text: str) -> MemTree:
    return MemTree({"Book/A.lean": text.encode()})


PAD_IN_PLACE = A.replace("  sorry", "  have _ : True := sorry\n  sorry")
UNUSED_LEMMA = A.replace("  sorry", "  have _ : True := trivial\n  sorry").replace(
    "theorem hard", "theorem step : True := by\n  sorry\n\ntheorem hard")


@pytest.mark.parametrize(("after", "split"), [(LEMMA, ["Book.hard"]), (STEPS, []), (PAD_IN_PLACE, []),
                                              (PADDED, []), (UNUSED_LEMMA, [])],
                         ids=["lemma-used", "steps-in-place", "padded-in-place", "padded", "lemma-unused"])
def test_a_decomposition_is_a_new_hole_the_split_declaration_uses(after: str, split: list[str]) -> None:
    assert decomposed(census(tree(A), ["Book"]), census(tree(after), ["Book"])) == split


def test_the_score_is_capped_by_the_facts_whatever_the_evaluator_says() -> None:
    before = census(tree(A), ["Book"])
    declared = "RESTRUCTURING: hard in two steps"
    padded = measure(before, census(tree(PADDED), ["Book"]), [], declared, 6000, settled=())
    assert not padded.progress and padded.cap(2) == 0 and padded.cap(-1) == -1
    assert "sorries rose 1 → 2 without a decomposition" in padded.render()
    for text in (PAD_IN_PLACE, STEPS):  # nothing has to use a hole added inside the proof
        assert not measure(before, census(tree(text), ["Book"]), [], declared, 6000, settled=()).progress
    lemma = LEMMA.replace("theorem hard", "theorem step2 (n : ℕ) : n = n := by\n  sorry\n\ntheorem hard").replace(
        ":= step n\n", ":= (step2 n) ▸ step n\n")
    split = measure(before, census(tree(lemma), ["Book"]), [], declared, 6000, settled=())
    assert split.progress and split.cap(2) == 2 and split.decomposed == ["Book.hard"]
    assert split.parts == {"Book.hard": ["Book.step", "Book.step2"]}  # the record's `parts`: what inherits from it
    assert not measure(before, census(tree(lemma), ["Book"]), [], "> " + declared, 6000, settled=()).progress
    closed = measure(before, census(tree(A.replace("sorry", "simp")), ["Book"]), [], "", 6000, settled=())
    assert closed.gains() == ["sorries closed in Book.hard (sorries and admits 1 → 0)"] and closed.cap(1) == 1
    assert not measure(before, None, [], "", 6000, settled=()).progress  # did not land
    assert Facts(True, 3, 2, different=["thm:1"]).cap(2) == 0  # a DIFFERENT verdict outweighs a closed sorry


TWO = A.replace("  sorry", "  have h : n = n := sorry\n  sorry")
OTHER = A.replace("theorem hard", "theorem other (n : ℕ) : n + 0 = n := by\n  sorry\n\ntheorem hard")
MOVED = OTHER.replace(":= by\n  sorry\n\nend", ":= by\n  exact other n\n\nend")


@pytest.mark.parametrize(("base", "after"), [(TWO, A), (OTHER, MOVED)], ids=["merged", "moved"])
def test_a_sorry_merged_or_moved_is_no_progress(base: str, after: str) -> None:
    facts = measure(census(tree(base), ["Book"]), census(tree(after), ["Book"]), [], "", 6000, settled=())
    assert not facts.progress and facts.cap(2) == 0


def test_sorries_fell_names_the_declarations_it_closed() -> None:
    two = "namespace Book\n\ntheorem a : True := by\n  sorry\n\ntheorem b : True := by\n  sorry\n\nend Book\n"
    facts = measure(census(tree(two), ["Book"]), census(tree(two.replace("  sorry", "  trivial", 1)), ["Book"]),
                    [], "", 6000, settled=())
    assert facts.gains() == ["sorries closed in Book.a (sorries and admits 2 → 1)"] and facts.progress


def judged(score: int, source: str, fresh: bool) -> Judged:
    entity = Entity(id="thm:2.1", kind="theorem", name="Theorem 2.1", nl="", lean=["Book.hard"], source=source,
                    fresh=fresh)
    return Judged(entity, "", Faithfulness(entity="thm:2.1", declarations=["Book.hard"], score=score), {})


def test_a_faithful_verdict_counts_only_against_the_books_trusted_text() -> None:
    base = census(tree(A), ["Book"])
    after = census(tree(A.replace("theorem hard", "/-- Theorem 2.1 n + 0 = n. -/\ntheorem hard")), ["Book"])
    own = measure(base, after, [judged(3, "the doc comment of Book.hard, first written by this change", True)], "",
                  6000, settled=())
    assert not own.progress and own.faithful == []
    book = measure(base, after, [judged(3, "blueprint/src/ch2.tex:4 at abc", False)], "", 6000, settled=())
    assert book.progress and book.faithful == ["thm:2.1"]


@pytest.mark.parametrize(("score", "counted"), [(3, True), (2, True), (1, False)])
def test_faithful_or_stronger_counts_and_different_does_not(score: int, counted: bool) -> None:
    # The judge's rubric: 3 faithful, 2 stronger than the book (still a formalization of it), 1 different.
    base = census(tree(A), ["Book"])
    facts = measure(base, base, [judged(score, "blueprint/src/ch2.tex:4 at abc", False)], "", 6000, settled=())
    assert facts.faithful == (["thm:2.1"] if counted else []) and facts.different == ([] if counted else ["thm:2.1"])


def test_a_faithful_verdict_counts_only_for_an_entity_not_faithful_at_the_base() -> None:
    base = census(tree(A), ["Book"])
    after = census(tree(A.replace("  sorry", "  simp")), ["Book"])
    copy = measure(base, after, [judged(3, "blueprint/src/ch2.tex:4 at abc", False)], "", 6000, settled={"thm:2.1"})
    assert copy.faithful == [] and "judged faithful" not in " ".join(copy.gains())
    lock = StatementLock(statements={"Book.old": Locked(hash="h", entity="thm:9", score=2, cycle=1)})
    assert faithful_at(lock, {"Book.old": "thm:2.1"}) == {"thm:2.1", "thm:9"}  # the pairing's id, and the lock's


def test_a_statement_a_person_rejected_counts_as_different_whatever_the_judge_says() -> None:
    base = census(tree(A), ["Book"])
    after = census(tree(A.replace("  sorry", "  simp")), ["Book"])
    rejected = unanswered(standing([Review(declaration="Book.hard", verdict=Verdict.REJECT, digest="h-rejected")],
                                   {"Book.hard": ["h-new"]}))
    faithful = judged(3, "blueprint/src/ch2.tex:4 at abc", False)
    as_rejected = Judged(faithful.entity, "", faithful.verdict, {"Book.hard": "h-rejected"})
    facts = measure(base, after, [as_rejected], "", 6000, settled=(), rejected=rejected)
    assert facts.faithful == [] and facts.different == ["thm:2.1"]
    assert not facts.progress and facts.cap(3) == 0  # sorries were closed, yet the score is held down
    assert "- against: rejected by a person (reviews.toml), whatever the judge said: thm:2.1" in facts.render()
    restated = Judged(faithful.entity, "", faithful.verdict, {"Book.hard": "h-new"})  # a meaning it was not
    # rejected at: the rejection no longer applies to it as a verdict, but nothing a judge says answers it
    again = measure(base, after, [restated], "", 6000, settled=(), rejected=rejected)
    assert again.faithful == [] and again.different == ["thm:2.1"] and again.cap(3) == 0
    approved = unanswered(standing([Review(declaration="Book.hard", verdict=Verdict.REJECT, digest="h-rejected"),
                                    Review(declaration="Book.hard", verdict=Verdict.APPROVE, digest="h-new")],
                                   {"Book.hard": ["h-new"]}))
    assert approved == {}  # a person approved the restatement: the judge's verdict counts again
    answered = measure(base, after, [restated], "", 6000, settled=(), rejected=approved)
    assert answered.faithful == ["thm:2.1"] and answered.different == [] and answered.cap(3) == 3
    lock = StatementLock(statements={"Book.hard": Locked(hash="h-rejected", entity="thm:2.1", score=3, cycle=1)})
    assert faithful_at(lock, {"Book.hard": "thm:2.1"}) == {"thm:2.1"}
    assert faithful_at(lock, {"Book.hard": "thm:2.1"}, rejected) == set()  # the judge's lock settles nothing


def test_a_file_over_the_cap_shrinking_is_no_progress_however_it_shrinks() -> None:
    """Size-cap farming: a file over the cap lands, then each cycle joins two lines of it. Sizes are never progress
    (a file over the cap growing still counts against a change)."""
    big = A.replace("end Book", "\n".join(f"theorem t{i} : True := by\n  trivial\n-- note {i}\n" for i in range(30))
                    + "\nend Book")
    cap = 50
    assert census(tree(big), ["Book"]).files["Book/A.lean"].lines > cap
    for smaller in (big.replace("\n\n", "\n").replace("-- note", ""),  # blank lines and comments
                    big.replace("theorem t29 : True := by\n  trivial", "theorem t29 : True := by trivial"),  # code
                    big.replace("theorem t29 : True := by\n  trivial\n", "")):  # a declaration moved out
        shrunk = measure(census(tree(big), ["Book"]), census(tree(smaller), ["Book"]), [], "", cap, settled=())
        assert not shrunk.progress and shrunk.cap(2) == 0
    grown = measure(census(tree(big), ["Book"]), census(tree(big + "\n-- x\ntheorem u : True := trivial\n"),
                                                         ["Book"]), [], "", cap, settled=())
    assert grown.grew == ["Book/A.lean"]


# Junk farming: the target's sorry "split" into `True` parts the target merely `have`s, then a part closed a cycle.
JUNK = A.replace("theorem hard", "theorem junk1 : True := by\n  sorry\n\ntheorem junk2 : True := by\n  sorry\n\n"
                 "theorem hard").replace("  sorry\n\nend", "  have _ := junk1\n  have _ := junk2\n  sorry\n\nend")


def test_closing_a_part_of_a_recent_split_is_progress_only_with_the_statement_it_was_split_from() -> None:
    base = census(tree(JUNK), ["Book"])
    split = {"Book.junk1": "Book.hard", "Book.junk2": "Book.hard"}  # as the split's record has its parts
    one = measure(base, census(tree(JUNK.replace("junk1 : True := by\n  sorry", "junk1 : True := by\n  trivial")),
                               ["Book"]), [], "", 6000, settled=(), split=split)
    assert one.closed == ["Book.junk1"] and one.waiting == {"Book.junk1": "Book.hard"}
    assert not one.progress and one.cap(2) == 0
    assert "not counted: the sorry closed in Book.junk1, a part split from Book.hard, which still holds one" \
        in one.render()
    # Long after the split (outside its window, so no `split` given), or with the statement itself, it counts.
    assert measure(base, census(tree(JUNK.replace("junk1 : True := by\n  sorry", "junk1 : True := by\n  trivial")),
                                ["Book"]), [], "", 6000, settled=()).progress
    whole = JUNK.replace("junk1 : True := by\n  sorry", "junk1 : True := by\n  trivial").replace(
        "junk2 : True := by\n  sorry", "junk2 : True := by\n  trivial").replace("  have _ := junk2\n  sorry",
                                                                                  "  have _ := junk2\n  simp")
    done = measure(base, census(tree(whole), ["Book"]), [], "", 6000, settled=(), split=split)
    assert done.progress and done.waiting == {} and set(done.closed) == {"Book.hard", "Book.junk1", "Book.junk2"}
    # The statement's own sorry moved into a third part it now rests on: still open, so still not counted.
    core = JUNK.replace("theorem hard", "theorem core (n : ℕ) : n + 0 = n := by\n  sorry\n\ntheorem hard").replace(
        "  have _ := junk2\n  sorry", "  have _ := junk2\n  exact core n")
    parts = {**split, "Book.core": "Book.hard"}
    one = measure(census(tree(core), ["Book"]), census(tree(core.replace("junk1 : True := by\n  sorry",
                                                                         "junk1 : True := by\n  trivial")), ["Book"]),
                  [], "", 6000, settled=(), split=parts)
    assert one.waiting == {"Book.junk1": "Book.hard"} and not one.progress
