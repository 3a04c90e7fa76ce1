"""Source rules of the integrity gate for what a kernel check cannot see, or sees too late: each added construct
refused, naming itself and the `[gates]` switch that allows it; allowed with the switch on; one the project
already had is not the change's fault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gates import integrity
from gates.base import GateInput
from gates.census import census
from gates.config import BuildConfig, GatesConfig
from gates.tree import DirTree, MemTree
from tests.conftest import git, write
from tests.gates.helpers import gate_input

A = """\
import Mathlib.Tactic

namespace Book

def weakLT : LT ℕ := ⟨fun _ _ => True⟩

theorem easy : True := trivial

theorem hard (n : ℕ) : n < n + 1 := by
  sorry

theorem other (n : ℕ) : 0 + n = n := by
  sorry

end Book
"""
B = "import Book.A\n\nnamespace Book\n\ntheorem uses : True := easy\n\nend Book\n"
BASE = {"Book/A.lean": A, "Book/B.lean": B, "Book.lean": "import Book.A\nimport Book.B\n"}
CLOSED = A.replace("n < n + 1 := by\n  sorry", "n < n + 1 := by\n  simp")


def check(a: str, *, base: dict[str, str] | None = None, **switches: bool) -> integrity.GateResult:
    return integrity.check(gate_input(base or BASE, {"Book/A.lean": a}, gates=GatesConfig(**switches)))


def added(text: str, where: str = "end Book") -> str:
    return A.replace(where, text + "\n" + where)


CONSTRUCTS = {
    "#guard_msgs": ("#guard_msgs (drop all) in\ntheorem t : True := by stop\n", "allow_guard_msgs",
                    "new #guard_msgs (it drops Lean's messages, the sorry warning and errors included; set [gates] "
                    "allow_guard_msgs to permit it)"),
    "elab": ('elab "cheat" : tactic => pure ()\n', "allow_meta_code",
             "new elab (meta code; set [gates] allow_meta_code"),
    "elab_rules": ("elab_rules : tactic | `(tactic| trivial) => pure ()\n", "allow_meta_code",
                   "new elab_rules (meta code; set [gates] allow_meta_code"),
    "macro_rules": ("macro_rules | `(tactic| trivial) => `(tactic| rfl)\n", "allow_meta_code",
                    "new macro_rules (meta code"),
    "@[command_elab]": ("@[command_elab Lean.Parser.Command.print] def e : Lean.Elab.Command.CommandElab := "
                        "fun _ => pure ()\n", "allow_meta_code",
                        "new @[command_elab] on Book.e (meta code; set [gates] allow_meta_code to permit it)"),
    "@[term_elab]": ("@[term_elab foo] def e : Lean.Elab.Term.TermElab := fun _ _ => default\n", "allow_meta_code",
                     "new @[term_elab] on Book.e"),
    "@[tactic]": ("@[tactic foo] def e : Lean.Elab.Tactic.Tactic := fun _ => pure ()\n", "allow_meta_code",
                  "new @[tactic] on Book.e"),
    "attribute [command_elab]": ("attribute [command_elab Lean.Parser.Command.print] easy\n", "allow_meta_code",
                                 "new `attribute [command_elab Lean.Parser.Command.print] easy` (meta code"),
    "run_elab": ("run_elab pure ()\n", "allow_meta_code",
                 "new run_elab (meta code run at build time; set [gates] allow_build_time_code and allow_meta_code"),
    "run_meta": ("run_meta pure ()\n", "allow_meta_code", "new run_meta (meta code run at build time"),
    "command syntax": ('syntax "#print" "axioms" ident : command\n', "allow_command_syntax",
                       "new syntax declaring a command (it could redefine `#print axioms`; set [gates] "
                       "allow_command_syntax to permit it)"),
    "command macro": ('macro "#print" "axioms" x:ident : command => `(#check $x)\n', "allow_command_syntax",
                      "new macro declaring a command"),
    "interpolatedStr": ('syntax "hide!" interpolatedStr(term) : term\n', "allow_command_syntax",
                        "new syntax taking `interpolatedStr` (the gates cannot tell its strings from plain ones"),
}


@pytest.mark.parametrize("name", list(CONSTRUCTS))
def test_each_construct_is_refused_naming_it_and_its_switch(name: str) -> None:
    text, switch, named = CONSTRUCTS[name]
    result = check(added(text))
    assert not result.passed and named in result.detail, result.detail
    switches = {switch: True, "allow_build_time_code": True}
    assert check(added(text), **switches).passed, check(added(text), **switches).detail


@pytest.mark.parametrize("module", ["Lean", "Lean.Elab.Command", "Lean.Meta"])
def test_a_new_import_of_lean_itself_is_meta_code(module: str) -> None:
    new = A.replace("import Mathlib.Tactic", f"import Mathlib.Tactic\nimport {module}")
    result = check(new)
    assert not result.passed
    assert f"Book/A.lean: new import {module} (meta code; set [gates] allow_meta_code to permit it)" in result.detail
    assert check(new, allow_meta_code=True).passed


def test_a_construct_the_project_already_had_is_not_the_change_s_fault() -> None:
    text = "#guard_msgs in\n#check 1\n\nmacro_rules | `(tactic| trivial) => `(tactic| rfl)\n"
    base = {**BASE, "Book/A.lean": added(text)}
    assert check(added(text).replace("  sorry\n\ntheorem other", "  simp\n\ntheorem other"), base=base).passed


def test_a_term_macro_and_notation_remain_ordinary() -> None:
    new = added('notation "‖" x "‖₊" => x\nmacro "triv" : tactic => `(tactic| trivial)\nsyntax "frob" term : term\n')
    assert check(new).passed, check(new).detail


HIDING = {
    "hide!": 'def hide! (s : String) : String := s\ndef x := hide! "{"\naxiom trustMe : False\ndef y := "}"\n',
    "logInfo": 'def x : Lean.MetaM Unit := Lean.logInfo "{"\naxiom trustMe : False\ndef y := "}"\n',
}


@pytest.mark.parametrize("name", list(HIDING))
def test_an_axiom_after_a_misleading_string_is_seen(name: str) -> None:
    result = check(added(HIDING[name]), allow_meta_code=True)
    assert not result.passed and "new axiom Book.trustMe" in result.detail, result.detail
    found = census(MemTree({"Book/A.lean": added(HIDING[name]).encode()}), ["Book"]).to_json()
    assert json.loads(json.dumps(found))["axioms"] == [{"name": "Book.trustMe", "file": "Book/A.lean",
                                                        "line": 17 if name == "hide!" else 16}]


def test_text_the_lexer_cannot_read_as_lean_does_is_refused() -> None:
    result = check(added('def x := frob! "{"}"}"\n'))
    assert not result.passed
    assert "new text the gates cannot read as Lean does: the string after `frob!` reads differently" in result.detail


# -- what a statement can see, in the change that closes its sorry -------------------------------------------


@pytest.mark.parametrize(("before_hard", "named"), [
    ("attribute [local instance] weakLT\n", "`attribute [local instance] weakLT` (line 9)"),
    ("attribute [instance] weakLT\n", "`attribute [instance] weakLT` (line 9)"),
    ("local instance : LT ℕ := weakLT\n", "an instance (line 9)"),
    ("instance cheatLT : LT ℕ := weakLT\n", "instance Book.cheatLT (line 9)"),
    ("open Cheat in\n", "`open Cheat in` (line 9)"),
])
def test_what_can_change_a_statement_may_not_come_with_its_proof(before_hard: str, named: str) -> None:
    new = CLOSED.replace("theorem hard", before_hard + "theorem hard")
    result = check(new)
    assert not result.passed
    assert (f"Book.hard: {named} added where its statement can see it, in the same change that closed its sorry: "
            "it can change what the statement means; land it in a change of its own, or set [gates] "
            "allow_context_with_proof") in result.detail, result.detail
    assert check(new, allow_context_with_proof=True).passed
    assert check(A.replace("theorem hard", before_hard + "theorem hard")).passed  # alone, without the proof


def test_an_open_without_in_is_named_too() -> None:
    result = check(CLOSED.replace("theorem hard", "open Cheat\ntheorem hard"))
    assert not result.passed
    assert "Book.hard: `open Cheat` (line 9) added where its statement can see it" in result.detail


def test_an_instance_in_an_imported_file_reaches_the_statement() -> None:
    base = {**BASE, "Book/B.lean": B, "Book/C.lean": "import Book.B\nimport Book.A\n\nnamespace Book\n\n"
            "theorem late (n : ℕ) : n < n + 1 := by\n  sorry\n\nend Book\n"}
    changes = {"Book/A.lean": A.replace("end Book", "instance cheatLT : LT ℕ := weakLT\n\nend Book"),
               "Book/C.lean": base["Book/C.lean"].replace("  sorry", "  simp")}
    result = integrity.check(gate_input(base, changes))
    assert not result.passed and "Book.late: instance Book.cheatLT (Book/A.lean:15)" in result.detail


def test_an_open_in_before_another_declaration_or_inside_a_proof_passes() -> None:
    new = CLOSED.replace("theorem easy", "open Cheat in\ntheorem easy").replace(
        "n < n + 1 := by\n  simp", "n < n + 1 := by\n  open Nat in simp")
    assert check(new).passed, check(new).detail


def test_an_honest_change_still_passes() -> None:
    result = check(CLOSED)
    assert result.passed, result.detail


def test_the_switches_are_documented_in_the_written_config() -> None:
    text = Path(integrity.__file__).with_name("config.py").read_text(encoding="utf-8")
    for switch in ("allow_guard_msgs", "allow_meta_code", "allow_command_syntax", "allow_context_with_proof"):
        assert f"{switch}: bool = False" in text


def test_an_import_of_a_file_git_ignores_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {**BASE, ".gitignore": "Book/build/\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    uses = A.replace("import Mathlib.Tactic", "import Mathlib.Tactic\nimport Book.build.Cheat")
    write(tmp_path, {"Book/build/Cheat.lean": "axiom trustMe : False\n", "Book/A.lean": uses})
    inp = GateInput(base=MemTree({k: v.encode() for k, v in BASE.items()}), changed=DirTree(tmp_path),
                    gates=GatesConfig(), build=BuildConfig(), lean_roots=["Book"], state_dir=".prover-state",
                    scope=["Book/**"], report="", cycle=1)
    result = integrity.check(inp)
    assert not result.passed
    assert ("Book/A.lean imports Book.build.Cheat, which no file that git would commit provides (it is missing, or "
            "git ignores it)") in result.detail
    assert "Book/build/Cheat.lean" not in {c.path for c in inp.changes}  # the ignored file can never land
