"""Source rules of the integrity gate for what a kernel check cannot see, or sees too late: each added construct
refused, naming itself and the `[gates]` switch that allows it; allowed with the switch on; one the project
already had is not the change's fault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gates import integrity, reach
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
                       "new syntax declaring a command (one can add declarations and axioms no reading of the "
                       "text sees; set [gates] allow_command_syntax to permit it)"),
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
            "it can change what the statement means; land it in a change of its own") in result.detail, result.detail
    assert result.detail.endswith("or set [gates] allow_context_with_proof")
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


def test_an_instance_reaches_through_every_import_on_the_way() -> None:
    # `late` imports only `Book.B`, which imports `Book.A`: what A shows, `late` sees too.
    base = {**BASE, "Book/C.lean": C.replace("import Book.A", "import Book.B")}
    changes = {"Book/A.lean": A.replace("end Book", "instance cheatLT : LT ℕ := weakLT\n\nend Book"),
               "Book/C.lean": base["Book/C.lean"].replace("  sorry", "  simp")}
    result = integrity.check(gate_input(base, changes))
    assert not result.passed and "Book.late: instance Book.cheatLT (Book/A.lean:15)" in result.detail, result.detail


@pytest.mark.parametrize(("inside", "named"), [
    ("instance cheatLT : LT ℕ := weakLT\n", "instance Book.cheatLT (line 10)"),
    ("@[instance] def cheatLT : LT ℕ := weakLT\n", "instance Book.cheatLT (line 10)"),
    ("attribute [instance] weakLT\n", "`attribute [instance] weakLT` (line 10)"),
])
def test_an_instance_that_is_not_local_outlives_its_section(inside: str, named: str) -> None:
    # Only a `local` one ends with its section; a global one, or a global instance attribute, reaches on.
    new = CLOSED.replace("theorem hard", f"section\n{inside}end\n\ntheorem hard")
    result = check(new)
    assert not result.passed and f"Book.hard: {named} added where its statement can see it" in result.detail, \
        result.detail
    local = new.replace("instance cheatLT", "local instance cheatLT").replace("[instance]", "[local instance]")
    assert check(local).passed, check(local).detail


def test_an_open_in_before_another_declaration_or_inside_a_proof_passes() -> None:
    new = CLOSED.replace("theorem easy", "open Cheat in\ntheorem easy").replace(
        "n < n + 1 := by\n  simp", "n < n + 1 := by\n  open Nat in simp")
    assert check(new).passed, check(new).detail


PAD = "/- " + "x" * 90 + " -/ "
C = "import Book.A\n\nopen Book\n\nnamespace Book\n\ntheorem late (n : ℕ) : n < n + 1 := by\n  sorry\n\nend Book\n"
C_CLOSED = C.replace("  sorry", "  simp")


def closing(before_hard: str) -> dict[str, str]:
    return {"Book/A.lean": CLOSED.replace("theorem hard", before_hard + "theorem hard")}


# Each: (base files, the change, what the refusal names). Spellings the rules once missed.
EVASIONS = {
    "#guard_msgs glued": (BASE, {"Book/A.lean": added("theorem t0 : True := trivial#guard_msgs (drop all) in\n"
                                                      "theorem t : True := by stop\n")}, "new #guard_msgs"),
    "#exit glued": (BASE, {"Book/A.lean": added("theorem t0 : True := trivial#exit\n")}, "new #exit"),
    "#eval glued": (BASE, {"Book/A.lean": added('theorem t0 : True := trivial#eval IO.FS.writeFile "x" ""\n')},
                    "new #eval"),
    "«interpolatedStr»": (BASE, {"Book/A.lean": added('syntax "hide" «interpolatedStr»(term) : term\n')},
                          "new syntax taking `interpolatedStr`"),
    ": «command»": (BASE, {"Book/A.lean": added('syntax "#print" "axioms" ident : «command»\n')},
                    "new syntax declaring a command"),
    "command syntax, then a command": (BASE, {"Book/A.lean": added('syntax "#print" "axioms" ident : command\n'
                                                                   "declare_syntax_cat foo\n")},
                                       "new syntax declaring a command"),
    "import «Lean»": (BASE, {"Book/A.lean": A.replace("import Mathlib.Tactic", "import Mathlib.Tactic\nimport «Lean»")},
                      "new import Lean (meta code"),
    "import «Lean».Elab": (BASE, {"Book/A.lean": A.replace("import Mathlib.Tactic",
                                                           "import Mathlib.Tactic\nimport «Lean».Elab")},
                           "new import Lean.Elab (meta code"),
    "attribute /- 90 chars -/ [command_elab]": (BASE, {"Book/A.lean": added(
        f"attribute {PAD}[command_elab Lean.Parser.Command.print] easy\n")}, "(meta code; set [gates] allow_meta_code"),
    "attribute /- 90 chars -/ [implemented_by]": (BASE, {"Book/A.lean": added(
        f"def fake : True := trivial\nattribute {PAD}[implemented_by fake] easy\n")}, "[implemented_by fake] easy`"),
    "attribute /- 90 chars -/ [instance]": (BASE, closing(f"attribute {PAD}[instance] weakLT\n"),
                                            "[instance] weakLT` (line 9)"),
    "@[instance] def": (BASE, closing("@[instance] def cheatLT : LT ℕ := weakLT\n"), "instance Book.cheatLT (line 9)"),
    "@[local instance] def": (BASE, closing("@[local instance] def cheatLT : LT ℕ := weakLT\n"),
                              "instance Book.cheatLT (line 9)"),
    "indented open … in": (BASE, closing("  open Cheat in\n"), "`open Cheat in` (line 9)"),
    "indented open": (BASE, closing("  open Cheat\n"), "`open Cheat` (line 9)"),
    "open … in after a command on its line": (BASE, closing("theorem t0 : True := trivial open Cheat in\n"),
                                              "`open Cheat in` (line 9)"),
    "open … in moved from another declaration": ({**BASE, "Book/A.lean": A.replace("theorem easy",
                                                                                  "open Cheat in\ntheorem easy")},
                                                 {"Book/A.lean": CLOSED.replace("theorem hard",
                                                                                "open Cheat in\ntheorem hard")},
                                                 "`open Cheat in` (line 9)"),
    "open moved from after the statement": ({**BASE, "Book/A.lean": A.replace("end Book", "end Book\nopen Cheat\n")},
                                            closing("open Cheat\n"), "`open Cheat` (line 9)"),
    "local instance attribute moved": ({**BASE, "Book/A.lean": A.replace("end Book", "attribute [local instance] "
                                                                                     "weakLT\nend Book")},
                                       closing("attribute [local instance] weakLT\n"),
                                       "`attribute [local instance] weakLT` (line 9)"),
    "a second anonymous instance, same signature": (
        {**BASE, "Book/A.lean": A.replace("theorem easy", "instance : LT Bool := ⟨fun a b => a < b⟩\ntheorem easy")},
        {"Book/A.lean": CLOSED.replace("theorem easy", "instance : LT Bool := ⟨fun a b => a < b⟩\n"
                                       "instance (priority := high) : LT Bool := ⟨fun _ _ => True⟩\ntheorem easy")},
        "an instance (line 8)"),
    "an instance whose body changed": (
        {**BASE, "Book/A.lean": A.replace("theorem easy", "instance (priority := high) bookLT : LT ℕ := ⟨Nat.lt⟩\n"
                                          "\ntheorem easy")},
        {"Book/A.lean": CLOSED.replace("theorem easy", "instance (priority := high) bookLT : LT ℕ := "
                                       "⟨fun _ _ => True⟩\n\ntheorem easy")}, "instance Book.bookLT (line 7)"),
    "export before the statement": (BASE, closing("export Cheat (lt_irrefl)\n"), "`export Cheat (lt_irrefl)` (line 9)"),
    "scoped instance attribute in an imported file": (
        {**BASE, "Book/C.lean": C},
        {"Book/A.lean": A.replace("end Book", "attribute [scoped instance] weakLT\n\nend Book"),
         "Book/C.lean": C_CLOSED},
        "`attribute [scoped instance] weakLT` (Book/A.lean:15)"),
    "export in an imported file": ({**BASE, "Book/C.lean": C},
                                   {"Book/A.lean": A.replace("end Book", "end Book\nexport Cheat (lt_def)\n"),
                                    "Book/C.lean": C_CLOSED}, "`export Cheat (lt_def)` (Book/A.lean:16)"),
    "notation (priority := high) in an imported file": (
        {**BASE, "Book/C.lean": C},
        {"Book/A.lean": A.replace("end Book", 'notation:50 (priority := high) a:51 " < " b:51 => True ∨ a = b\n\n'
                                              "end Book"), "Book/C.lean": C_CLOSED}, "(Book/A.lean:15)"),
    "macro (priority := high) in an imported file": (
        {**BASE, "Book/C.lean": C},
        {"Book/A.lean": A.replace("end Book", 'macro:50 (priority := high) a:term:51 " < " b:term:51 : term => '
                                              "`(True)\n\nend Book"), "Book/C.lean": C_CLOSED}, "(Book/A.lean:15)"),
    "an instance a new import brings": (
        {**BASE, "Book/C.lean": C, "Book/I.lean": "namespace Book\n\ninstance cheatLT : LT ℕ := ⟨fun _ _ => True⟩\n\n"
                                                  "end Book\n"},
        {"Book/C.lean": C_CLOSED.replace("import Book.A", "import Book.A\nimport Book.I")},
        "instance Book.cheatLT (Book/I.lean:3)"),
    "#guard_msgs moved onto the closed theorem": (
        {**BASE, "Book/A.lean": A.replace("end Book", "/-- info: 1 -/\n#guard_msgs in\n#eval 1\n\nend Book")},
        {"Book/A.lean": A.replace("theorem hard", "#guard_msgs (drop all) in\ntheorem hard").replace(
            "n < n + 1 := by\n  sorry", "n < n + 1 := by\n  stop")}, "new #guard_msgs"),
    "an existing tactic elab rewritten": (
        {**BASE, "Book/A.lean": A.replace("end Book", 'elab "tidy" : tactic => pure ()\n\nend Book')},
        {"Book/A.lean": A.replace("end Book", 'elab "tidy" : tactic => Lean.addDecl (.axiomDecl { name := `Book.cheat, '
                                              "levelParams := [], type := .const ``False [], isUnsafe := false })\n\n"
                                              "end Book")}, "new elab (meta code"),
    "native_decide moved to another proof": (
        {**BASE, "Book/A.lean": A.replace("theorem easy : True := trivial",
                                          "theorem easy : 2 + 2 = 4 := by native_decide")},
        {"Book/A.lean": A.replace("n < n + 1 := by\n  sorry", "n < n + 1 := by\n  native_decide")},
        "new native_decide (+1)"),
    "simproc": (BASE, {"Book/A.lean": added("simproc cheatProc (Nat.succ _) := fun _ => return .continue\n")},
                "new simproc (meta code"),
    "@[simproc]": (BASE, {"Book/A.lean": added("@[simproc] def cheatProc : Lean.Meta.Simp.Simproc := fun _ => "
                                              "return .continue\n")}, "new @[simproc] on Book.cheatProc (meta code"),
    "@[norm_num]": (BASE, {"Book/A.lean": added("@[norm_num (_ : ℕ) + _] def ext : Mathlib.Meta.NormNum.NormNumExt "
                                               "where\n  eval _ := failure\n")}, "new @[norm_num] on Book.ext"),
    "@[positivity]": (BASE, {"Book/A.lean": added("@[positivity _ + _] def ext : Mathlib.Meta.Positivity.PositivityExt "
                                                 "where\n  eval _ _ _ := failure\n")}, "new @[positivity] on Book.ext"),
    "@[delab]": (BASE, {"Book/A.lean": added("@[delab app.Nat.Prime] def d : Lean.PrettyPrinter.Delaborator.Delab "
                                            ":= failure\n")}, "new @[delab] on Book.d"),
    "@[aesop … tactic]": (BASE, {"Book/A.lean": added("@[aesop safe tactic] def t : Lean.Elab.Tactic.TacticM Unit := "
                                                     "pure ()\n")}, "new @[aesop] on Book.t"),
    "a token holding `--`": (BASE, {"Book/A.lean": added('infixl:65 " +-- " => fun (a : Nat) (_ : Nat) => a\n')},
                             "new token: infixl declares `+--`"),
    'a token holding `"`': (BASE, {"Book/A.lean": added('notation:65 a " +\\" " b => a + b\n')},
                            'new token: notation declares `+"`'),
    "a token holding `«`": (BASE, {"Book/A.lean": added('prefix:max "x«" => id\n')}, "new token: prefix declares `x«`"),
    "a token holding `/-`": (BASE, {"Book/A.lean": added('postfix:max "!/-" => id\n')},
                             "new token: postfix declares `!/-`"),
    "a token holding a middle `'`": (BASE, {"Book/A.lean": added('syntax "+\'x" : term\n')},
                                     "new token: syntax declares `+'x`"),
    "a token of a letter only newer Lean reads": (BASE, {"Book/A.lean": added('notation "é" => 1\n')},
                                                  "new token: notation declares `é`"),
    "the base's own token across a comment start": (
        {**BASE, "Book/T.lean": 'infixl:65 " +-- " => fun (a : Nat) (_ : Nat) => a\n'},
        {"Book/A.lean": A.replace("import Mathlib.Tactic", "import Mathlib.Tactic\nimport Book.T").replace(
            "theorem easy", "def z : Nat := 1 +-- 2 axiom cheat : False\ntheorem easy")},
        "the project's token `+--` may be read here as one token"),
    "a string whose readings mask different code": (
        BASE, {"Book/A.lean": A.replace("n < n + 1 := by\n  sorry", 'n < n + 1 := warn! "{(by native_decide : '
                                        '2 + 2 = 4)}"')}, "the string after `warn!` reads differently"),
}


@pytest.mark.parametrize("name", list(EVASIONS))
def test_a_spelling_that_once_evaded_the_rules_is_refused(name: str) -> None:
    base, changes, named = EVASIONS[name]
    result = integrity.check(gate_input(base, changes))
    assert not result.passed and named in result.detail, result.detail


def test_an_open_in_inside_the_proof_or_another_proof_and_a_closed_section_pass() -> None:
    """Out of the statement's sight: inside its own proof, wrapping a tactic in another proof, in a section closed
    before it."""
    new = CLOSED.replace("n < n + 1 := by\n  simp", "n < n + 1 := by\n  open Nat in\n  simp").replace(
        "theorem easy : True := trivial", "theorem easy : True := by\n  open Classical in\n  trivial\n\nsection\n"
        "attribute [local instance] weakLT\nlocal instance : LT ℕ := weakLT\ntheorem h0 : True := trivial\nend")
    assert check(new).passed, check(new).detail
    opened = new.replace("section\n", "section\nopen Cheat\n")  # the statement lock weighs column-0 `open`s itself
    assert reach.problems(gate_input(BASE, {"Book/A.lean": opened})) == []


def test_a_new_import_of_a_file_with_nothing_in_sight_passes() -> None:
    base = {**BASE, "Book/C.lean": C, "Book/L.lean": "namespace Book\n\ntheorem helper : True := trivial\n\nend Book\n"}
    result = integrity.check(gate_input(base, {"Book/C.lean": C_CLOSED.replace("import Book.A",
                                                                                "import Book.A\nimport Book.L")}))
    assert result.passed, result.detail


def test_an_attribute_that_is_no_instance_may_stand_before_a_closed_statement() -> None:
    new = CLOSED.replace("theorem hard", "attribute [simp] easy\n\ntheorem hard")
    assert check(new).passed, check(new).detail


def test_a_harmless_attribute_or_a_registered_one_passes() -> None:
    new = added("register_simp_attr book_simps\n\n@[simp, ext, book_simps, aesop safe apply (rule_sets := [A, B]), "
                "gcongr, to_additive] theorem t0 : True := trivial\nattribute [norm_cast, local simp] t0\n")
    assert check(new).passed, check(new).detail


def test_a_construct_that_stays_where_it_was_is_not_the_change_s_fault() -> None:
    base = A.replace("theorem easy : True := trivial", "theorem easy : 2 + 2 = 4 := by native_decide").replace(
        "end Book", "/-- info: 1 -/\n#guard_msgs in\n#eval 1\n\nelab \"tidy\" : tactic => pure ()\n\nend Book")
    moved = base.replace("theorem other", "theorem extra : True := trivial\n\ntheorem other").replace(
        "n < n + 1 := by\n  sorry", "n < n + 1 := by\n  simp")
    result = check(moved, base={**BASE, "Book/A.lean": base}, allow_build_time_code=True, allow_meta_code=True)
    assert result.passed, result.detail


def test_an_honest_change_still_passes() -> None:
    result = check(CLOSED)
    assert result.passed, result.detail


def test_the_switches_are_documented_in_the_written_config() -> None:
    text = Path(integrity.__file__).with_name("config.py").read_text(encoding="utf-8")
    for switch in ("allow_guard_msgs", "allow_meta_code", "allow_command_syntax", "allow_context_with_proof"):
        assert f"{switch}: bool = False" in text


@pytest.mark.parametrize("spelling", ["Book.build.Cheat", "«Book».build.Cheat", "«Book».«build».Cheat"])
def test_an_import_of_a_file_git_ignores_is_refused(tmp_path: Path, spelling: str) -> None:
    write(tmp_path, {**BASE, ".gitignore": "Book/build/\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    uses = A.replace("import Mathlib.Tactic", f"import Mathlib.Tactic\nimport {spelling}")
    write(tmp_path, {"Book/build/Cheat.lean": "axiom trustMe : False\n", "Book/A.lean": uses})
    inp = GateInput(base=MemTree({k: v.encode() for k, v in BASE.items()}), changed=DirTree(tmp_path),
                    gates=GatesConfig(), build=BuildConfig(), lean_roots=["Book"], state_dir=".prover-state",
                    scope=["Book/**"], report="", cycle=1)
    result = integrity.check(inp)
    assert not result.passed
    assert ("Book/A.lean imports Book.build.Cheat, which no file that git would commit provides (it is missing, or "
            "git ignores it)") in result.detail
    assert "Book/build/Cheat.lean" not in {c.path for c in inp.changes}  # the ignored file can never land
