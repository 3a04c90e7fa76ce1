"""The sorry gate: counting, declared restructurings, and their budget."""

from __future__ import annotations

from gates import sorry
from gates.census import census
from gates.config import GatesConfig
from gates.tree import MemTree
from state.history import HistoryRecord
from tests.gates.helpers import gate_input, record
from tests.gates.test_env import const, module

BASE = {"Book/A.lean": "theorem a : True := sorry\ntheorem b : True := sorry\n"}
TWO_MORE = ("theorem a : True := sorry\n"
            "theorem b : True := by\n  have h1 : True := sorry\n  have h2 : True := sorry\n  sorry\n")
SPLIT = "RESTRUCTURING: split b into two lemmas so each can be attacked alone"


def test_closing_a_sorry_passes() -> None:
    result = sorry.check(gate_input(BASE, {"Book/A.lean": "theorem a : True := trivial\ntheorem b : True := sorry\n"}))
    assert result.passed and "2 → 1" in result.detail


def test_a_sorry_moved_into_a_string_or_comment_is_not_counted() -> None:
    moved = 'theorem a : True := trivial\ntheorem b : True := trivial\ndef note := "sorry" -- sorry\n'
    result = sorry.check(gate_input(BASE, {"Book/A.lean": moved}))
    assert result.passed and "2 → 0" in result.detail


def test_a_sorry_inside_interpolation_braces_is_counted() -> None:
    hidden = 'theorem a : True := sorry\ntheorem b : True := sorry\ndef note := s!"{sorry}"\n'
    result = sorry.check(gate_input(BASE, {"Book/A.lean": hidden}))
    assert not result.passed and "2 → 3" in result.detail


def test_admits_count_with_sorries() -> None:
    result = sorry.check(gate_input(BASE, {"Book/A.lean": "theorem a : True := by admit\ntheorem b : True := sorry\n"
                                                          "theorem c : True := by admit\n"}))
    assert not result.passed and "2 → 3" in result.detail


def test_unexplained_rise_is_rejected() -> None:
    result = sorry.check(gate_input(BASE, {"Book/A.lean": TWO_MORE}))
    assert not result.passed and "declares no `RESTRUCTURING" in result.detail


def test_declared_restructuring_within_budget_passes() -> None:
    history = [record(12, restructuring="earlier split")]
    result = sorry.check(gate_input(BASE, {"Book/A.lean": TWO_MORE}, report=f"Did it.\n{SPLIT}\n", cycle=20,
                                    history=history))
    assert result.passed, result.detail
    assert "restructuring 2 of 2" in result.detail


def test_restructuring_over_budget_is_rejected() -> None:
    history = [record(12, restructuring="one"), record(15, restructuring="two"), record(16)]
    result = sorry.check(gate_input(BASE, {"Book/A.lean": TWO_MORE}, report=SPLIT, cycle=20, history=history))
    assert not result.passed
    assert "budget is spent (2 of 2 in the last 10 cycles: 12, 15)" in result.detail


def test_restructurings_outside_the_window_do_not_count() -> None:
    history = [record(5, restructuring="old"), record(10, restructuring="old too"), record(15, restructuring="x")]
    result = sorry.check(gate_input(BASE, {"Book/A.lean": TWO_MORE}, report=SPLIT, cycle=20, history=history))
    assert result.passed, result.detail


def test_a_rise_larger_than_one_restructuring_may_make_is_rejected() -> None:
    result = sorry.check(gate_input(BASE, {"Book/A.lean": TWO_MORE}, report=SPLIT,
                                    gates=GatesConfig(max_sorry_increase=1)))
    assert not result.passed and "(+2), more than the 1 one restructuring may add" in result.detail


def test_the_declaration_must_be_a_line_of_its_own_with_a_rationale() -> None:
    for report in ("I did some RESTRUCTURING: a b", "RESTRUCTURING:", "restructuring: lower case"):
        result = sorry.check(gate_input(BASE, {"Book/A.lean": TWO_MORE}, report=report))
        assert not result.passed, report


def test_reference_script_records_count_towards_the_budget() -> None:
    kept = HistoryRecord(cycle=14, pre_sorry_count=3, post_sorry_count=5, summary="split the lemma")
    reverted = HistoryRecord(cycle=15, pre_sorry_count=3, post_sorry_count=5, summary="REVERTED: sorry count increased")
    assert kept.was_restructuring and not reverted.was_restructuring
    result = sorry.check(gate_input(BASE, {"Book/A.lean": TWO_MORE}, report=SPLIT, cycle=20,
                                    history=[kept, reverted, record(16, restructuring="x")]))
    assert not result.passed and "14, 16" in result.detail


def test_a_proof_traded_for_a_sorry_is_found_by_its_statement_under_a_new_name() -> None:
    base = "theorem helper : 1 = 1 := rfl\ntheorem hard : 2 = 2 := by\n  sorry\n"
    renamed = "theorem helper' : 1 = 1 := by\n  sorry\ntheorem hard : 2 = 2 := rfl\n"
    kept = "theorem helper : 1 = 1 := rfl\ntheorem other : 1 = 1 := by\n  sorry\ntheorem hard : 2 = 2 := rfl\n"

    def traded(after: str) -> list[str]:
        return sorry.traded(census(MemTree({"A.lean": base.encode()})), census(MemTree({"A.lean": after.encode()})))

    assert traded(renamed) == ["helper (now helper')"]
    assert traded(kept) == []  # the proof is still there: a new statement with a sorry is new work


def test_holes_only_lean_sees_are_named_ten_at_most_then_how_many_more() -> None:
    names = [f"h{i:02}" for i in range(12)]
    text = "".join(f"theorem {n} : True := trivial\n" for n in names)
    inp = gate_input({"Book/A.lean": text}, {"Book/A.lean": text})
    for side in (inp.before, inp.after):  # held as they were: no rise
        side.lean["Book/A.lean"] = module(*(const(n, vu=("sorryAx",)) for n in names))
    result = sorry.check(inp)
    assert result.passed
    assert result.detail == ("sorries+admits 12 → 12; counted as holes, Lean says they hold sorryAx though their text "
                             f"has no sorry: {', '.join(names[:10])} and 2 more")
