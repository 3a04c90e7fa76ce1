"""What a strategy aims at: the holes in its Scope that its text names, else all of them."""

from __future__ import annotations

from gates.census import census
from gates.tree import MemTree
from orchestrator.targets import aimed, uses
from tests.orchestrator.harness import A, B, strategy

TREE = census(MemTree({"Book/A.lean": A.encode(), "Book/B.lean": B.encode()}), ["Book"])


def test_a_strategy_aims_at_the_holes_of_its_scope_that_it_names() -> None:
    assert aimed(strategy("Book/A.lean", "Book/B.lean", target="Close `other`."), ["Book/A.lean", "Book/B.lean"],
                 TREE) == ["Book.other"]
    assert aimed("Close Book.hard, then see.\n\n## Scope\n- Book/*.lean\n", ["Book/*.lean"], TREE) == ["Book.hard"]


def test_a_name_outside_the_scope_is_no_target() -> None:
    assert aimed(strategy("Book/A.lean", target="Close `Book.other` and `hard`."), ["Book/A.lean"], TREE) == \
        ["Book.hard"]


def test_a_strategy_naming_none_aims_at_every_hole_of_its_scope() -> None:
    text = strategy("Book/A.lean", "Book/B.lean", target="Make progress; it is hard work.")  # `hard` in prose
    assert aimed(text, ["Book/A.lean", "Book/B.lean"], TREE) == ["Book.hard", "Book.other"]


def test_a_name_only_a_prover_line_gives_is_the_provers_target() -> None:
    text = strategy("Book/A.lean", "Book/B.lean", target="Close `Book.other`.") + "\nPROVER: Book.hard\n"
    assert aimed(text, ["Book/A.lean", "Book/B.lean"], TREE) == ["Book.other"]


def test_a_scope_without_holes_aims_at_nothing() -> None:
    tree = census(MemTree({"Book/A.lean": A.replace("  sorry", "  simp").encode(), "Book/B.lean": B.encode()}),
                  ["Book"])
    assert aimed(strategy("Book/A.lean", target="State `Book.next`."), ["Book/A.lean"], tree) == []


def test_the_worker_reads_each_targets_users_and_the_line_where_each_uses_it() -> None:
    # B's `uses : True := Book.easy` names A's `easy` on its declaration's line (B line 5).
    assert uses(TREE, ["Book.easy", "Book.hard"]) == ("Book.easy (Book/A.lean), used by 1 declaration(s):\n"
                                                      "  Book.uses (Book/B.lean:5): theorem uses : True := Book.easy")


def test_users_are_capped_and_a_name_declared_twice_is_left_out() -> None:
    many = A.replace("end Book", "".join(f"theorem u{k} : True := easy\n\n" for k in range(5)) + "end Book")
    tree = census(MemTree({"Book/A.lean": many.encode(), "Book/B.lean": B.encode(),
                           "Book/C.lean": b"namespace Book\n\ntheorem hard : True := trivial\n\nend Book\n"}),
                  ["Book"])
    told = uses(tree, ["Book.easy", "Book.hard"], most=3)
    assert told.splitlines()[0] == "Book.easy (Book/A.lean), used by 6 declaration(s):"
    assert told.splitlines()[1:] == ["  Book.u0 (Book/A.lean:10): theorem u0 : True := easy",
                                     "  Book.u1 (Book/A.lean:12): theorem u1 : True := easy",
                                     "  Book.u2 (Book/A.lean:14): theorem u2 : True := easy", "  … and 3 more"]
