"""What a result rests on (`audit/rests.py`): a hole Lean sees counts, whether Lean or the declaration index answers
for the declaration resting on it."""

from __future__ import annotations

from pathlib import Path

from audit.rests import Support
from gates.census import census
from gates.tree import MemTree
from tests.conftest import write
from tests.gates.cheats import BASE, closing
from tests.gates.test_kernel import Project, standin

USES = ("import Book.A\n\nnamespace Book\n\ntheorem uses (n : ℕ) : 0 < quad n := quad_pos n\n\n"
        "theorem again (n : ℕ) : 0 < quad n := uses n\n\nend Book\n")


def test_a_hole_only_lean_sees_is_rested_on_whoever_answers(tmp_path: Path) -> None:
    # `quad_pos` holds a hole no text shows (`stop`); `uses` is proved through it, so it is not proved.
    write(tmp_path / "book", {**BASE, "Book/A.lean": closing("theorem quad_pos", "  stop\n  simp\n"),
                              "Book/Uses.lean": USES})
    _, inp = Project(tmp_path / "book", standin()).gates({})
    tree = inp.before
    assert "Book/Uses.lean" in tree.lean and ("Book/A.lean", "Book.quad_pos") in tree.hidden_holes()

    assert Support(tree, ["Book"]).rests_on("Book.uses") == ["Book.quad_pos"]  # Lean's terms
    assert Support(tree, ["Book"]).rests_on("Book.again") == ["Book.quad_pos"]  # through a proof that is whole
    del tree.lean["Book/Uses.lean"]  # its listing not kept: the declaration index answers for it
    assert Support(tree, ["Book"]).rests_on("Book.uses") == ["Book.quad_pos"]
    assert Support(tree, ["Book"]).rests_on("Book.again") == ["Book.quad_pos"]
    assert Support(tree, ["Book"]).rests_on("Book.easy") == []


CHAINED = ("namespace Book\ntheorem far : True := sorry\n\ntheorem near : True := sorry\n\n"
           "theorem step : True := far\n\ndef size : Nat := 2\n\ntheorem whole : size = 2 := rfl\n\n"
           "theorem top : True ∧ size = 2 := ⟨(fun _ _ => trivial) near step, whole⟩\nend Book\n")


def test_by_the_index_holes_are_found_nearest_first_and_only_where_a_walk_leads_to_one() -> None:
    support = Support(census(MemTree({"Book/A.lean": CHAINED.encode()}), ["Book"]), ["Book"])
    assert support.rests_on("Book.top") == ["Book.near", "Book.far"]  # through `step`, one further away
    assert support.rests_on("Book.step") == ["Book.far"] and support.rests_on("Book.far") == ["Book.far"]
    assert support.rests_on("Book.whole") == [] and support.rests_on("Book.size") == []
