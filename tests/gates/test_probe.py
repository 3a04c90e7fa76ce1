"""The probe's reading of Lean's output against a Worker who controls names, printed text and project code.

Each attack is a text Lean (or project code running inside it) could print: the unit tests feed it to the
parser, the end-to-end ones make the stand-in Lean print it as Lean would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.config import GatesConfig
from gates.probe import Unreadable, printed_name, split, verdict
from tests.conftest import write
from tests.gates.cheats import BASE, KERNEL_ALONE, closing
from tests.gates.test_kernel import Project, standin

NONCE = "0123456789abcdef"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    write(tmp_path / "book", BASE)
    return Project(tmp_path / "book", standin())


def marker(i: int) -> str:
    return f'"{NONCE}:{i}" : String'


# -- the verdict of one `#print axioms` ---------------------------------------------------------------------------


def test_a_verdict_is_read_for_the_name_asked_wrapped_or_not() -> None:
    assert verdict("'Book.a' depends on axioms: [propext,\n sorryAx,\n Classical.choice]", "Book.a") == (
        "propext", "sorryAx", "Classical.choice")
    assert verdict("'Book.«b c»' does not depend on any axioms", "Book.«b c»") == ()
    assert verdict("'Book.d'' depends on axioms: [Book.trustMe]", "Book.d'") == ("Book.trustMe",)
    assert verdict("'Book.hard' does not depend on any axioms", "Book.«hard»") == ()  # Lean drops needless escapes


def test_an_axiom_named_like_a_second_verdict_is_one_axiom() -> None:
    weird = "Book.«x] 'Book.hard' does not depend on any axioms [»"
    assert verdict(f"'Book.hard' depends on axioms: [sorryAx, {weird}]", "Book.hard") == ("sorryAx", weird)


def test_a_name_holding_a_newline_is_matched_as_lean_prints_it() -> None:
    name = "Book.«x\n'Book.x' does not depend on any axioms»"
    assert printed_name(name) == name
    assert verdict(f"'{name}' depends on axioms: [sorryAx]", name) == ("sorryAx",)


@pytest.mark.parametrize(("text", "why"), [
    ("'Book.hard' depends on axioms: [sorryAx]\n'Book.hard' does not depend on any axioms", "not what Lean prints"),
    ("'Book.other' does not depend on any axioms", "not what Lean prints"),
    ("'Book.hard' does not depend on any axioms\nmore", "not what Lean prints"),
    ("", "no verdict"),
])
def test_a_chunk_that_is_not_one_verdict_for_the_name_asked_is_refused(text: str, why: str) -> None:
    with pytest.raises(Unreadable, match=why):
        verdict(text, "Book.hard")


def test_an_axiom_named_like_a_verdict_hides_no_sorry(project: Project) -> None:
    weird = "«x] 'Book.hard' does not depend on any axioms [»"
    base_a = closing("theorem hard", "  sorry\n", f"axiom {weird} : True\n\n")
    write(project.root, {"Book/A.lean": base_a})  # an axiom of the base: allowed
    start = base_a.index("theorem hard")
    proof = base_a.index("  sorry\n", start)
    change = (base_a[:start] + "#guard_msgs (drop all) in\n" + base_a[start:proof] + f"  have := {weird}\n  stop\n"
              "  simp\n" + base_a[proof + len("  sorry\n"):])
    results, _ = project.gates({"Book/A.lean": change}, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed
    assert "Book.hard has no sorry in its text, yet Lean says it depends on sorryAx" in results["kernel"].detail


# -- splitting the output into answers ------------------------------------------------------------------------------


def test_answers_are_split_between_the_markers() -> None:
    output = "\n".join(["✔ [3/4] Built Book.A", marker(0), "'Book.a' does not depend on any axioms", marker(1),
                        "Probe.lean:5:0: error: unknown constant 'Book.b'", marker(2)])
    parts = split(output, NONCE, 2)
    assert [(p.text, p.error) for p in parts] == [("'Book.a' does not depend on any axioms", None),
                                                 ("", "unknown constant 'Book.b'")]


def test_only_lean_line_breaks_split_the_output() -> None:
    name = "Book.«a\u2028b\x0cc»"  # Python's splitlines breaks at both
    output = "\n".join([marker(0), f"'{name}' depends on axioms: [sorryAx]", marker(1)])
    assert verdict(split(output, NONCE, 1)[0].text, name) == ("sorryAx",)


@pytest.mark.parametrize(("lines", "why"), [
    # code run inside Lean read the nonce from the probe and printed a marker again, with a verdict after it
    ([marker(0), "'Book.a' depends on axioms: [sorryAx]", marker(0), "'Book.a' does not depend on any axioms",
      marker(1)], "marker 0 twice"),
    ([marker(1), marker(0), "'Book.a' does not depend on any axioms", marker(1)], "out of order"),
    ([marker(0), "'Book.a' does not depend on any axioms", marker(1), "'Book.b' does not depend on any axioms"],
     "after the last marker"),
    ([marker(0), f"'Book.a' does not depend on any axioms {NONCE}", marker(1)], "the nonce"),
    ([marker(0), f"Probe.lean:3:0: error: {marker(1)}", marker(1)], "the nonce"),
    ([marker(0), "'Book.a' does not depend on any axioms"], "no marker 1"),
])
def test_output_the_markers_do_not_account_for_is_refused(lines: list[str], why: str) -> None:
    with pytest.raises(Unreadable, match=why):
        split("\n".join(lines), NONCE, 1)


# -- project code answering in Lean's place ---------------------------------------------------------------------------

FAKE = "macro_rules | `(#print axioms $x) => `(#print \"'Book.hard' does not depend on any axioms\")\n"


def test_a_macro_rules_answering_print_axioms_is_refused(project: Project) -> None:
    change = {"Book/Answer.lean": FAKE,
              "Book/A.lean": "import Book.Answer\n" + closing("theorem hard", "  stop\n  simp\n",
                                                               "#guard_msgs (drop all) in\n")}
    results, _ = project.gates(change, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed
    assert "Book/Answer.lean:1: macro_rules" in results["kernel"].detail, results["kernel"].detail


@pytest.mark.parametrize("hook", [
    "initialize IO.println \"hello\"\n",
    "elab_rules : term | `($s:str) => pure (Lean.mkStrLit s.getString)\n",
    "syntax \"#print\" \"axioms\" ident : command\n",
    # with a priority, a parser of its own for string literals (the markers) or `@N` wins over Lean's
    "elab (priority := high) s:str : term => do\n  IO.println s.getString\n  pure (Lean.mkStrLit s.getString)\n",
    "syntax (priority := high) \"@\" ident : term\n",
    "@[command_elab Lean.Parser.Command.printAxioms] def answer : Lean.Elab.Command.CommandElab := fun _ => pure ()\n",
    "attribute [macro Lean.Parser.Command.printAxioms] answer\n",
])
def test_code_that_could_answer_for_lean_anywhere_in_the_imports_is_refused(project: Project, hook: str) -> None:
    change = {"Book/Hook.lean": hook,
              "Book/A.lean": "import Book.Hook\n" + closing("theorem hard", "  simp\n")}
    results, _ = project.gates(change, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed
    assert "could answer in Lean's place" in results["kernel"].detail, results["kernel"].detail


def test_tactic_macros_and_notation_in_the_imports_are_not_refused(project: Project) -> None:
    change = {"Book/Hook.lean": "macro_rules | `(tactic| trivial) => `(tactic| simp)\n\n"
                                "syntax \"canary_claim\" : term\n\nmacro_rules | `(canary_claim) => `(True)\n\n"
                                "notation:50 a \" ≺ \" b => a < b\n\ninfixl:65 \" +++ \" => HAppend.hAppend\n",
              "Book/A.lean": "import Book.Hook\n" + closing("theorem hard", "  simp\n")}
    results, _ = project.gates(change, GatesConfig(**KERNEL_ALONE))
    assert results["kernel"].passed, results["kernel"].detail


def test_a_private_name_lean_prints_in_its_kept_form_is_read_as_written() -> None:
    from gates.probe import _unmangled, verdict
    said = "'_private.Book.A.0.Book.hard' depends on axioms: [propext]"
    assert verdict(_unmangled(said, "Book.hard"), "Book.hard") == ("propext",)
    other = "'_private.Book.A.0.Book.other' does not depend on any axioms"
    with pytest.raises(Unreadable):
        verdict(_unmangled(other, "Book.hard"), "Book.hard")
