"""The size gate: an over-cap file may not grow, except by a declared split within its budget."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gates import size
from gates.base import GateResult
from gates.config import GatesConfig
from gates.registry import CHEAP
from state.history import HistoryRecord, Outcome
from tests.gates.helpers import gate_input

CAPS = GatesConfig(file_warn_lines=4, file_cap_lines=6, split_budget=1, restructure_window=10)
SPLIT = "## Result\nmoved half out\nSPLITTING: Book/A.lean is split over two cycles; the import must come first"


def lean(n: int, name: str = "t") -> str:
    """`n` lines of Lean."""
    return "".join(f"theorem {name}{i} : True := trivial\n" for i in range(n))


def check(base: dict[str, str], changes: dict[str, str | None], **kw: object) -> GateResult:
    return size.check(gate_input(base, changes, gates=CAPS, **kw))  # type: ignore[arg-type]


def splits(*cycles: int) -> list[HistoryRecord]:
    return [HistoryRecord(cycle=c, outcome=Outcome.ACCEPTED, splitting="earlier step") for c in cycles]


def test_the_size_gate_runs_with_the_cheap_gates() -> None:
    assert size.NAME in CHEAP


def test_growing_a_file_over_the_cap_fails_and_says_what_to_do() -> None:
    result = check({"Book/A.lean": lean(7)}, {"Book/A.lean": lean(9)})
    assert not result.passed
    assert "Book/A.lean 7 → 9 lines" in result.detail and "cap of 6 lines" in result.detail
    assert "move declarations to a new file" in result.detail and "`SPLITTING: <rationale>`" in result.detail


def test_crossing_the_cap_counts_as_growth() -> None:
    result = check({"Book/A.lean": lean(6)}, {"Book/A.lean": lean(7)})
    assert not result.passed and "Book/A.lean 6 → 7 lines" in result.detail


def test_a_declared_split_within_budget_passes() -> None:
    result = check({"Book/A.lean": lean(7)}, {"Book/A.lean": lean(8)}, report=SPLIT, cycle=20, history=splits(5))
    assert result.passed, result.detail
    assert "split 1 of 1 in 10 cycles allowed (Book/A.lean is split over two cycles" in result.detail


def test_a_declared_split_over_budget_fails() -> None:
    result = check({"Book/A.lean": lean(7)}, {"Book/A.lean": lean(8)}, report=SPLIT, cycle=20, history=splits(15))
    assert not result.passed
    assert "split budget is spent (1 of 1 in the last 10 cycles: 15)" in result.detail


def test_the_declaration_must_be_a_line_of_its_own_with_a_rationale() -> None:
    for report in ("I am SPLITTING: the file", "SPLITTING:", "splitting: lower case"):
        assert not check({"Book/A.lean": lean(7)}, {"Book/A.lean": lean(8)}, report=report).passed, report


def test_shrinking_or_leaving_an_over_cap_file_passes() -> None:
    moved = check({"Book/A.lean": lean(9)}, {"Book/A.lean": lean(5), "Book/A2.lean": lean(4, "u")})
    assert moved.passed, moved.detail
    assert "Book/A.lean has 5 lines, over the warning of 4" in moved.detail
    untouched = check({"Book/A.lean": lean(9), "Book/B.lean": lean(1)}, {"Book/B.lean": lean(2)})
    assert untouched.passed and "Book/A.lean" not in untouched.detail


def test_an_edit_that_keeps_an_over_cap_file_as_long_passes_with_a_note() -> None:
    result = check({"Book/A.lean": lean(8)}, {"Book/A.lean": lean(8, "renamed")})
    assert result.passed and "Book/A.lean has 8 lines, over the cap of 6" in result.detail


def test_a_new_file_over_the_cap_grows_from_zero() -> None:
    result = check({"Book/A.lean": lean(1)}, {"Book/New.lean": lean(7)})
    assert not result.passed and "Book/New.lean 0 → 7 lines" in result.detail


def test_a_file_between_warning_and_cap_passes_with_a_note() -> None:
    result = check({"Book/A.lean": lean(3)}, {"Book/A.lean": lean(5)})
    assert result.passed and "Book/A.lean has 5 lines, over the warning of 4" in result.detail


def test_only_lean_files_under_the_roots_count() -> None:
    result = check({"Book/A.lean": lean(1)}, {"notes/long.md": "x\n" * 50, "Other/B.lean": lean(9)})
    assert result.passed, result.detail


def test_lines_are_counted_as_the_census_counts_them() -> None:
    unterminated = lean(6) + "theorem last : True := trivial"  # a seventh line without its newline
    assert not check({"Book/A.lean": lean(6)}, {"Book/A.lean": unterminated}).passed
    assert check({"Book/A.lean": lean(5)}, {"Book/A.lean": lean(5) + "theorem last : True := trivial"}).passed


def test_the_warning_may_not_exceed_the_cap() -> None:
    with pytest.raises(ValidationError, match=r"file_warn_lines \(7000\) is above file_cap_lines \(6000\)"):
        GatesConfig(file_warn_lines=7000)
    assert GatesConfig(file_warn_lines=10, file_cap_lines=10).file_cap_lines == 10
