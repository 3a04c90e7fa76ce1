"""Ways a Worker could make a change look like progress without proving anything, each closed and named.

The compiler is the stand-in Lean, which elaborates a proof written without the word `sorry` to `sorryAx` where
Lean does (`stop` is `repeat sorry` in Lean core; `apply?` admits goals it cannot close; a macro can expand to
`sorry`), and lists the environment as the probe asks: the kernel gate reads the hole from there.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from gates import integrity, scope
from gates.config import GatesConfig
from gates.scope import InvalidStrategy, parse_scope
from orchestrator.kernelcheck import gate_change
from state.history import HistoryRecord
from tests.conftest import sandbox, write
from tests.gates.helpers import gate_input, record
from tests.gates.test_kernel import standin

A = """\
import Mathlib.Tactic
import Book.Tactic

namespace Book

def double (n : ℕ) : ℕ := 2 * n

theorem easy : True := trivial

theorem proved (n : ℕ) : n + 0 = n := by
  simp

theorem hard (n : ℕ) : 0 < double (n + 1) := by
  sorry

theorem hard2 (n : ℕ) : n * 1 = n := by
  sorry

end Book
"""
BASE = {"Book/A.lean": A, "Book/Tactic.lean": 'macro "cheat" : tactic => `(tactic| sorry)\n',
        "Book.lean": "import Book.A\n", "lakefile.toml": 'name = "book"\n[[lean_lib]]\nname = "Book"\n'}


def verdicts(new_a: str, report: str = "", history: list[HistoryRecord] | None = None,
             gates: GatesConfig | None = None) -> dict[str, tuple[bool, str]]:
    """The gates on `A` changed to `new_a`, as a cycle runs them, in a copy of the project with the stand-in Lean."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "book"
        write(root, BASE)
        build = standin()
        from gates.build import LakeCompiler
        results, _ = gate_change(root, LakeCompiler(root, build, sandbox()), build, gates or GatesConfig(), ["Book"],
                                 {"Book/A.lean": new_a}, report=report, history=history or [])
    return {g.name: (g.passed, g.detail) for g in results}


HIDDEN = {
    "stop": "  stop\n  simp",
    "apply?": "  apply?",
    "a macro defined elsewhere": "  cheat",
}


@pytest.mark.parametrize("name", list(HIDDEN))
def test_a_proof_that_lean_says_uses_sorry_is_not_a_proof(name: str) -> None:
    v = verdicts(A.replace("  sorry\n\ntheorem hard2", HIDDEN[name] + "\n\ntheorem hard2"))
    assert v["build"][0] and v["sorry"][0]  # it compiles, and its text shows one sorry fewer …
    assert not v["kernel"][0]  # … Lean's environment holds the same hole
    assert "Book.hard (line 13) holds sorryAx, though no sorry or admit is written" in v["kernel"][1]


@pytest.mark.parametrize(("spelling", "named"), [
    ("exact _root_.sorryAx _ false", "sorryAx (as `_root_.sorryAx`)"),
    ("exact «sorryAx» _ false", "sorryAx (as `«sorryAx»`)"),
    ("exact Lean.ofReduceBool _ _ rfl", "ofReduceBool (as `Lean.ofReduceBool`)"),
    ("decide +native", "native_decide (as `+native`)"),
    ("decide (config := { native := true })", "native_decide (as `native := true`)"),
])
def test_kernel_bypasses_are_named_however_they_are_spelled(spelling: str, named: str) -> None:
    v = verdicts(A.replace("n * 1 = n := by\n  sorry", f"n * 1 = n := by\n  {spelling}"))
    assert not v["integrity"][0] and named in v["integrity"][1], v["integrity"]


def test_an_escaped_option_name_is_still_the_option() -> None:
    new = A.replace("theorem hard (n", "set_option «debug».byAsSorry true in\ntheorem hard (n")
    v = verdicts(new)
    assert not v["integrity"][0] and "set_option debug.byAsSorry" in v["integrity"][1]


@pytest.mark.parametrize("code", ['#eval IO.FS.writeFile "../../x" ""', "run_cmd pure ()",
                                  'def leak : String := include_str "/etc/passwd"', "initialize pure ()"])
def test_code_run_at_build_time_is_refused_unless_allowed(code: str) -> None:
    new = A.replace("end Book", f"{code}\n\nend Book")
    v = verdicts(new)
    assert not v["integrity"][0] and "code run at build time" in v["integrity"][1]
    meta = code.split()[0] in ("run_cmd", "initialize", "#eval")  # meta code too: both switches
    inp = gate_input(BASE, {"Book/A.lean": new}, gates=GatesConfig(allow_build_time_code=True))
    assert integrity.check(inp).passed is not meta
    if meta:
        assert "set [gates] allow_meta_code to permit it" in integrity.check(inp).detail
        both = GatesConfig(allow_build_time_code=True, allow_meta_code=True)
        assert integrity.check(gate_input(BASE, {"Book/A.lean": new}, gates=both)).passed


@pytest.mark.parametrize("exit_line", ["  #exit\n", "theorem stop_here : True := trivial #exit\n"])
def test_exit_anywhere_is_seen(exit_line: str) -> None:
    v = verdicts(A.replace("theorem hard (n", exit_line + "\ntheorem hard (n"))
    assert not v["integrity"][0] and "#exit" in v["integrity"][1]


def test_a_hypothesis_added_through_variable_and_include_is_a_statement_change() -> None:
    new = (A.replace("theorem hard (n", "variable (cheat : False)\ninclude cheat\n\ntheorem hard (n")
           .replace("0 < double (n + 1) := by\n  sorry", "0 < double (n + 1) := by\n  exact cheat.elim"))
    v = verdicts(new)
    assert not v["integrity"][0]
    assert "Book.hard: what its statement means (the variables, includes" in v["integrity"][1]


def test_redefining_notation_before_a_statement_is_a_statement_change() -> None:
    new = (A.replace("theorem hard (n", "local macro_rules | `($_ < $_) => `(True)\n\ntheorem hard (n")
           .replace("0 < double (n + 1) := by\n  sorry", "0 < double (n + 1) := by\n  trivial"))
    v = verdicts(new)
    assert not v["integrity"][0] and "what its statement means" in v["integrity"][1]


def test_changing_a_definition_a_statement_uses_while_closing_it_is_refused() -> None:
    new = (A.replace("def double (n : ℕ) : ℕ := 2 * n", "def double (n : ℕ) : ℕ := n")
           .replace("0 < double (n + 1) := by\n  sorry", "0 < double (n + 1) := by\n  simp [double]"))
    v = verdicts(new)
    assert not v["integrity"][0]
    assert "Book.hard: Book.double, which its statement uses, changed" in v["integrity"][1]


def test_trading_a_proof_for_a_sorry_needs_a_declared_restructuring() -> None:
    new = (A.replace("  simp\n\ntheorem hard (n", "  sorry\n\ntheorem hard (n")
           .replace("n * 1 = n := by\n  sorry", "n * 1 = n := by\n  simp"))
    v = verdicts(new)
    assert not v["integrity"][0] and "Book.proved was proved and now holds a sorry" in v["integrity"][1]
    assert verdicts(new, report="RESTRUCTURING: proved breaks after the Mathlib bump")["integrity"][0]
    quoted = verdicts(new, report="> RESTRUCTURING: proved breaks after the Mathlib bump")
    assert not quoted["integrity"][0]  # a quoted declaration is not one


def test_trading_a_proof_for_a_sorry_spends_the_budget_whatever_the_net_count() -> None:
    """The count does not rise (one sorry closed, one proof traded), yet it is a restructuring."""
    new = (A.replace("  simp\n\ntheorem hard (n", "  sorry\n\ntheorem hard (n")
           .replace("n * 1 = n := by\n  sorry", "n * 1 = n := by\n  simp"))
    report = "RESTRUCTURING: proved breaks after the Mathlib bump"
    spent = [record(15, restructuring="split"), record(17, restructuring="again")]
    v = verdicts(new, report=report, history=spent)
    assert not v["integrity"][0] and v["sorry"][0]
    assert ("Book.proved: a proof traded for a sorry is a restructuring, and the restructuring budget is spent "
            "(2 of 2 in the last 10 cycles: 15, 17)") in v["integrity"][1]
    none = verdicts(new, report=report, gates=GatesConfig(restructure_budget=0))
    assert "the restructuring budget is spent (0 of 0 in the last 10 cycles)" in none["integrity"][1]


def test_closing_by_appeal_to_a_sorried_lemma_is_named() -> None:
    new = (A.replace("theorem hard (n", "theorem key {p : Prop} : p := by\n  sorry\n\ntheorem hard (n")
           .replace("  sorry\n\ntheorem hard2", "  exact key\n\ntheorem hard2")
           .replace("n * 1 = n := by\n  sorry", "n * 1 = n := by\n  exact key"))
    v = verdicts(new)
    assert "closed only by appeal to a sorried declaration: Book.hard (uses Book.key), Book.hard2 (uses Book.key)" \
        in v["sorry"][1]


def test_the_attribute_command_form_of_implemented_by_is_seen() -> None:
    v = verdicts(A.replace("end Book", "attribute [implemented_by easy] proved\n\nend Book"))
    assert not v["integrity"][0] and "attribute [implemented_by easy] proved" in v["integrity"][1]


def test_the_worker_may_not_write_the_orchestrators_state() -> None:
    inp = gate_input(BASE, {".prover-state/history.jsonl": '{"cycle": 99}\n'}, scope=["**"])
    result = integrity.check(inp)
    assert not result.passed and ".prover-state/history.jsonl belongs to the orchestrator" in result.detail


def test_glob_entries_match_whole_files_and_bad_globs_are_invalid() -> None:
    assert not scope.matches("Book/A.lean/x", ["Book/*.lean"])
    assert scope.matches("Book/Sub/A.lean", ["Book/Sub"])
    with pytest.raises(InvalidStrategy, match="not a valid glob"):
        parse_scope("## Scope\n- Book/[z-a].lean\n")
