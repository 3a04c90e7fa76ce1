"""What the statement lock compares: a declaration's meaning, through every route a change can alter it, and
none of the proof-only changes that leave it alone (each case through the integrity gate)."""

from __future__ import annotations

import pytest

from gates import integrity
from gates.census import census
from gates.meaning import changed_meanings, closures, meanings, reached, touched
from gates.tree import MemTree
from tests.gates.helpers import gate_input

DEFS = ("namespace Book\n/-- Definition 1.1 A number is good when it exceeds 2. -/\n"
        "def Good (n : Nat) : Prop := n > 2\n\n/-- Theorem 1.2 Three is good. -/\n"
        "theorem three_good : Good 3 := by decide\nend Book\n")
OPEN = "open Nat\nnamespace Book\ntheorem t (n : Nat) : sqrt (n * n) = n := sorry\nend Book\n"
TWO = ("namespace Book\ntheorem helper : True := trivial\n\ntheorem locked (n : Nat) : n + 0 = n := by\n  sorry\n"
       "end Book\n")


def check(base: str, change: str, locked: list[str], strategy: str = "") -> integrity.GateResult:
    digests = meanings(gate_input({"Book/A.lean": base}, {}).before)
    return integrity.check(gate_input({"Book/A.lean": base}, {"Book/A.lean": change},
                                      locked={n: digests[n][0] for n in locked}, strategy=strategy))


@pytest.mark.parametrize(("base", "change", "locked", "named"), [
    (DEFS, DEFS.replace("n > 2", "n > 100"), ["Book.Good"], "Book.Good: its statement was judged faithful to the book "
                                                            "and is locked, and it changed"),
    (DEFS, DEFS.replace("n > 2", "n ≥ 0"), ["Book.three_good"], "Book.three_good: its statement was judged faithful "
     "to the book and is locked, and it states something else: it uses Book.Good, which changed"),
    (OPEN, OPEN.replace("open Nat", "open Real"), ["Book.t"], "Book.t: its statement"),
    (TWO, TWO.replace("namespace Book\n", "namespace Book\nvariable (h : 1 = 2)\ninclude h\n"), ["Book.locked"],
     "Book.locked: its statement"),
])
def test_a_change_of_meaning_is_caught_however_it_is_made(base: str, change: str, locked: list[str],
                                                          named: str) -> None:
    result = check(base, change, locked)
    assert not result.passed and named in result.detail


def test_a_name_written_from_the_root_names_the_declaration() -> None:
    # `_root_.Good` is `Good`: a statement naming a changed definition so has changed too, and so has a definition.
    base = ("def Good (n : Nat) : Prop := n > 2\n\nnamespace Book\ndef Good (n : Nat) : Prop := True\n\n"
            "def Better (n : Nat) : Prop := _root_.Good n\n\ntheorem three_good : _root_.Good 3 := by decide\n"
            "end Book\n")
    before = gate_input({"Book/A.lean": base}, {}).before
    after = gate_input({"Book/A.lean": base.replace("n > 2", "n > 100")}, {}).before

    changed = changed_meanings(before, after)

    assert changed["Book.three_good"] == "states something else: it uses Good, which changed"
    assert changed["Book.Better"] == "means something else: it uses Good, which changed"
    assert "Book.Good" not in changed


def test_a_copy_elsewhere_does_not_hide_a_changed_locked_statement() -> None:
    base = "namespace Book\ntheorem easy (n : Nat) : n + 0 = n := rfl\nend Book\n"
    inp = gate_input({"Book/A.lean": base}, {"Book/A.lean": base.replace("(n : Nat) :", "(n : Nat) (h : n = 0) :"),
                                             "Book/Z.lean": base},
                     locked={"Book.easy": meanings(gate_input({"Book/A.lean": base}, {}).before)["Book.easy"][0]})
    assert not integrity.check(inp).passed


@pytest.mark.parametrize("change", [
    TWO.replace("theorem locked", "set_option maxHeartbeats 400000 in\ntheorem locked").replace("  sorry", "  simp"),
    TWO.replace("theorem helper", "set_option maxHeartbeats 400000 in\ntheorem helper"),
    TWO.replace("theorem helper", "attribute [simp] Nat.add_zero\n\ntheorem helper"),
    TWO.replace("theorem helper : True := trivial", "theorem helper : True := by\n  trivial -- tidied"),
])
def test_proof_work_around_a_locked_statement_passes(change: str) -> None:
    result = check(TWO, change, ["Book.locked"])
    assert result.passed, result.detail


def test_only_touched_files_are_hashed_and_a_name_declared_elsewhere_is_not_new() -> None:
    other = "namespace Book\ntheorem dup : True := trivial\ntheorem still : 1 = 1 := rfl\nend Book\n"
    inp = gate_input({"Book/A.lean": TWO, "Book/B.lean": other},
                     {"Book/A.lean": TWO.replace("end Book", "theorem dup : 2 = 2 := rfl\nend Book")})
    assert touched(inp.before, inp.after) == {"Book/A.lean"}
    assert changed_meanings(inp.before, inp.after) == {"Book.dup": "changed"}
    assert changed_meanings(census(inp.base, ["Book"]), census(inp.changed, ["Book"])) == {"Book.dup": "changed"}
    gone = gate_input({"Book/A.lean": TWO.replace("end Book", "theorem dup : 2 = 2 := rfl\nend Book"),
                       "Book/B.lean": other}, {"Book/A.lean": TWO})  # one of two copies deleted
    assert changed_meanings(gone.before, gone.after) == {"Book.dup": "changed"}
    assert changed_meanings(census(gone.base, ["Book"]), census(gone.changed, ["Book"])) == {"Book.dup": "changed"}


CHAIN = ("namespace Book\ndef Base (n : Nat) : Prop := n > 2\n\ndef Nice (n : Nat) : Prop := Base n ∧ n < 9\n\n"
         "def Loop (n : Nat) : Prop := Nice n ∨ Loop2 n\n\ndef Loop2 (n : Nat) : Prop := Loop n\n\n"
         "theorem t : Nice 3 := by decide\nend Book\n")


def test_a_statement_naming_a_definition_that_names_a_changed_one_changed_too() -> None:
    inp = gate_input({"Book/A.lean": CHAIN}, {"Book/A.lean": CHAIN.replace("n > 2", "n ≥ 0")})
    changed = changed_meanings(inp.before, inp.after)
    assert changed["Book.t"].startswith("states something else: it uses Book.Nice")
    assert "Book.Base" in changed["Book.t"] and changed["Book.Nice"].startswith("means something else")
    assert {"Book.Loop", "Book.Loop2"} <= changed.keys()  # a cycle of definitions ends the walk


REACH = ("namespace Book\ndef base (n : Nat) : Nat := n\ndef even (n : Nat) : Prop := ∃ k, n = base k + base k\n"
         "def ping (n : Nat) : Nat := if n = 0 then 0 else pong (n - 1)\n"
         "def pong (n : Nat) : Nat := if n = 0 then 1 else ping (n - 1)\n"
         "theorem even_four : even 4 := ⟨2, rfl⟩\ntheorem ping_zero : ping 0 = 0 := by simp [ping, base]\n"
         "theorem bare : True := trivial\nend Book\n")


def test_a_statement_reaches_the_definitions_it_names_through_definitions_to_any_depth() -> None:
    found = census(MemTree({"Book/A.lean": REACH.encode()}))
    reach = reached(found, ["Book.even_four", "Book.ping_zero", "Book.bare", "Book.even", "Book.ping", "Book.gone"])
    assert reach == {"Book.even_four": ["Book.base", "Book.even"],
                     "Book.ping_zero": ["Book.ping", "Book.pong"],  # the proof's `base` is not the statement's
                     "Book.bare": [],
                     "Book.even": ["Book.base"],
                     "Book.ping": ["Book.pong"]}  # a cycle of definitions ends the walk; a name not declared has none


SHELVES = ("namespace One\ndef shift (n : Nat) : Nat := n + 1\ntheorem up (n : Nat) : n < shift n := by simp [shift]\n"
           "end One\n\nnamespace Two\ndef shift (n : Nat) : Nat := n + 2\nend Two\n\n"
           "namespace Three\nopen One\ntheorem up (n : Nat) : n < shift n := by simp [shift]\nend Three\n")


def test_what_a_statement_reaches_is_the_definition_its_namespace_resolves_else_every_one_it_may_mean() -> None:
    found = census(MemTree({"Book/A.lean": SHELVES.encode()}))
    assert reached(found, ["One.up", "Three.up"]) == {"One.up": ["One.shift"],
                                                      "Three.up": ["One.shift", "Two.shift"]}  # `open` not followed
    # The meaning check still takes every definition a name may mean: a change to either `shift` changes `One.up`.
    changed = census(MemTree({"Book/A.lean": SHELVES.replace("n + 2", "n + 3").encode()}))
    assert "One.up" in changed_meanings(found, changed)


def test_a_closure_digest_moves_with_every_definition_the_statement_reaches_and_with_nothing_else() -> None:
    def whole(text: str, other: str = "") -> dict[str, list[str]]:
        files = {"Book/A.lean": text.encode(), **({"Book/B.lean": other.encode()} if other else {})}
        return closures(census(MemTree(files), ["Book"]))

    base = whole(DEFS)
    own = meanings(census(MemTree({"Book/A.lean": DEFS.encode()}), ["Book"]))
    assert base["Book.Good"] == own["Book.Good"]  # it reaches no definition: its own meaning
    assert base["Book.three_good"] != own["Book.three_good"]  # it reaches `Good`
    assert whole(DEFS.replace("n > 2", "n > 100"))["Book.three_good"] != base["Book.three_good"]
    assert whole(DEFS.replace("by decide", "by norm_num"))["Book.three_good"] == base["Book.three_good"]
    assert whole(DEFS, "namespace Book\ndef Bad : Prop := False\nend Book\n")["Book.three_good"] == \
        base["Book.three_good"]
    assert set(closures(census(MemTree({"Book/A.lean": DEFS.encode()}), ["Book"]), only=["Book.three_good"])) == \
        {"Book.three_good"}


def test_a_persons_approval_holds_what_the_statement_means_whole_and_a_proof_change_keeps_it() -> None:
    approved = {"Book.three_good": closures(gate_input({"Book/A.lean": DEFS}, {}).before)["Book.three_good"][0]}
    proof = integrity.check(gate_input({"Book/A.lean": DEFS}, {"Book/A.lean": DEFS.replace("by decide", "by norm_num")},
                                       approved=approved))
    assert proof.passed, proof.detail
    weakened = integrity.check(gate_input({"Book/A.lean": DEFS}, {"Book/A.lean": DEFS.replace("n > 2", "n > 0")},
                                          approved=approved))
    assert not weakened.passed and "Book.three_good: its statement was approved by a person" in weakened.detail


def test_a_statement_reaches_a_definition_through_dot_notation_and_never_through_its_own_variables() -> None:
    text = ("namespace Book\ndef Weak : Set Nat := {n | n > 2}\ntheorem t : Weak.Nonempty := sorry\n"
            "def Nat.Good (n : Nat) : Prop := n > 2\ntheorem u (n : Nat) : n.Good := sorry\n"
            "theorem v (f : Nat → Nat) (x : Nat) : f x = x := sorry\nend Book\n")
    other = "namespace Chapter9\ndef x : Nat := 0\nend Chapter9\n"
    found = census(MemTree({"Book/A.lean": text.encode(), "Book/B.lean": other.encode()}), ["Book"])
    assert reached(found, ["Book.t", "Book.u", "Book.v"]) == {"Book.t": ["Book.Weak"], "Book.u": ["Book.Nat.Good"],
                                                                "Book.v": []}
    weakened = census(MemTree({"Book/A.lean": text.replace("{n | n > 2}", "Set.univ").encode(),
                               "Book/B.lean": other.encode()}), ["Book"])
    assert "Book.t" in changed_meanings(found, weakened)
    assert closures(found, only=["Book.t"]) != closures(weakened, only=["Book.t"])


def test_a_closure_is_the_same_whatever_order_the_files_come_in() -> None:
    good = "namespace Book\nprivate def Good (n : Nat) : Prop := n > {k}\nend Book\n"
    files = {"Book/A.lean": good.format(k=2).encode(), "Book/Z.lean": good.format(k=3).encode(),
             "Book/T.lean": b"namespace Book\ntheorem t : Good 3 := sorry\nend Book\n"}
    digests = {tuple(closures(census(MemTree(dict(order)), ["Book"]), only=["Book.t"])["Book.t"])
               for order in (list(files.items()), list(reversed(files.items())))}
    assert len(digests) == 1
