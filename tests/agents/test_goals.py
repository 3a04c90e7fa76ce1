"""The goal view (`agents.goals`, the Worker's builtin `lean_goal`): where it asks Lean, and how it reads Lean's answer.

`tests/data/goals/Proofs.out` is what a real Lean printed for `Proofs.lean` marked at every line `MARKED` names
(Lean 4.28.0-pre compiled to WebAssembly, as `scripts/lean-wasm.sh` installs it; its wrapper's debug lines taken
out): the goals read from it are Lean's own. `tests/real` runs the same reading on that Lean in CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agents import goals
from agents.model import ToolCall
from agents.tools import Workspace
from gates.build import LakeCompiler
from gates.config import BuildConfig
from tests.conftest import git, sandbox, write

DATA = Path(__file__).parent.parent / "data" / "goals"
STANDIN = Path(__file__).parent.parent / "standin" / "lean_checker.py"
MARKED = [23, 19, 18, 15, 14, 13, 12, 10, 7, 6, 3, 2]  # bottom up, so each line number is still the source's
BOTH = "case left\nn : Nat\nh : 0 < n\n⊢ n + 0 = n\n\ncase right\nn : Nat\nh : 0 < n\n⊢ True"
RIGHT = "case right\nn : Nat\nh : 0 < n\n⊢ True"
STEP = "k : Nat\nih : 0 + k = k\n⊢ 0 + (k + 1) = 0 + k + 1"
SUCC = "case succ\nk : Nat\nih : 0 + k = k\n⊢ 0 + (k + 1) = k + 1"
# Each marked line's points as Lean answered: the goals ('' for none), None where Lean never got there.
LEAN = {
    2: ["n : Nat\nh : 0 < n\n⊢ n + 0 = n ∧ True", BOTH],
    3: [BOTH, RIGHT],  # a bullet: after it, its goal is gone
    6: ["a b : Nat\n⊢ a + b = b + a"],  # `… := by`: the block's start
    7: ["a b : Nat\n⊢ a + b = b + a", ""],
    10: ["n : Nat\n⊢ 0 + n = n", ""],  # after `induction … with` and all its alternatives
    12: [SUCC],  # `| succ k ih =>`: its block's start
    13: [STEP],  # a nested `have … := by`
    14: [STEP, ""],
    15: ["case succ\nk : Nat\nih : 0 + k = k\nstep : 0 + (k + 1) = 0 + k + 1\n⊢ 0 + (k + 1) = k + 1", ""],
    18: ["n : Nat\n⊢ n = n + 0", None],  # the tactic fails: Lean stops the block there
    19: [None, None],
    23: ["p : Prop\nhp : p\n⊢ p ∧ p", ""],  # the last tactic, a doc comment and a declaration below
}


def marks_of(source: str) -> tuple[str, dict[int, goals.Marked]]:
    text, out = source, {}
    for line in MARKED:
        out[line] = goals.marked(text, line, f"l{line}")
        text = out[line].text
    return text, out


def test_the_goals_are_read_from_what_a_real_lean_printed_for_the_marked_copy() -> None:
    text, marks = marks_of((DATA / "Proofs.lean").read_text(encoding="utf-8"))
    assert text == (DATA / "Proofs.marked.lean").read_text(encoding="utf-8"), "not the copy that Lean was given"
    output = (DATA / "Proofs.out").read_text(encoding="utf-8")
    assert {line: goals.read(output, m) for line, m in marks.items()} == LEAN


def test_a_copys_lines_are_told_as_the_files_and_the_inserted_ones_as_such() -> None:
    lines = "theorem t : True ∧ True := by\n  constructor\n  · trivial\n  · trivial\n"
    m = goals.marked(lines, 3)
    assert [p.at for p in m.points] == [3, 4]
    copy = m.text.splitlines()
    assert copy[goals.INSERTED + 2] == "  · trivial" and m.original(goals.INSERTED + 3) == (3, False)
    assert m.original(3) == (3, True) and m.original(2 * goals.INSERTED + 3) == (4, True)
    assert m.original(2 * goals.INSERTED + 4) == (4, False) and m.original(1) == (1, False)


@pytest.mark.parametrize(("line", "why"), [
    (0, "outside the file"), (7, "outside the file"), (4, "blank or a comment"), (6, "starts a command"),
    (3, "continues the tactic or term above it"), (5, "blank or a comment"),
])
def test_a_line_with_no_tactic_is_refused_saying_why(line: int, why: str) -> None:
    text = ("theorem t (n : Nat) : n = n := by\n  induction n with\n  | zero => rfl\n\n  -- note\n"
            "theorem u : True := trivial\n")
    with pytest.raises(ValueError, match=why):
        goals.points(text.splitlines(), line)


@pytest.mark.parametrize(("text", "line", "why"), [
    ("theorem t (a b c : Nat) (h1 : a = b) (h2 : b = c) : a = c := by\n  calc a = b := h1\n    _ = c := h2\n", 3,
     "continues the tactic or term above it"),  # a `calc` step
    ("theorem t : True := by\n  have h : True :=\n    by trivial\n  exact h\n", 3, "continues the tactic or term"),
    ("theorem t (a : Nat) : a + 0 = a := by\n  conv =>\n    lhs\n    rw [Nat.add_zero]\n", 3, "in a `conv` block"),
    ("theorem t (a : Nat) : a + 0 = a := by\n  conv =>\n    lhs\n", 2, "in a `conv` block"),
])
def test_a_place_the_markers_would_break_is_refused_saying_why(text: str, line: int, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        goals.points(goals.lean_lines(text), line)


def test_comments_are_read_as_lean_reads_them_and_lines_as_lean_numbers_them() -> None:
    # A comment ending in `by` opens nothing; a block comment's lines are no code, the block starts below them.
    assert [p.at for p in goals.points(["theorem t : True := by", "  trivial -- closed by"], 2)] == [2, 3]
    text = ["theorem t : True := by", "  /- first", "     second -/", "  trivial"]
    assert [p.at for p in goals.points(text, 1)] == [4]
    # Only `\n` ends a line for Lean: a line separator inside a comment does not, and CRLF files keep their `\r`.
    assert goals.lean_lines("a\u2028b\nc\r\nd\n") == ["a\u2028b", "c\r", "d"]
    m = goals.marked("theorem t : True := by\r\n  trivial\r\n", 2, "x")
    assert m.text.split("\n")[:2] == ["theorem t : True := by\r", '  trace "autoformalize goals x 0"']


def test_a_place_run_more_than_once_and_markers_the_files_code_printed() -> None:
    m = goals.marked("theorem t : True ∧ True := by\n  constructor\n  all_goals\n    trivial\n", 4, "x")
    twice = "\n".join([m.begin(0), m.begin(0), "case left\n⊢ True", "case right\n⊢ True", m.end(0), m.end(0),
                       m.begin(1), "", m.end(1)])
    assert goals.read(twice, m) == ["(this place ran 2 times: the goals of each run follow one another)\n"
                                    "case left\n⊢ True\ncase right\n⊢ True", ""]
    forged = "\n".join([m.begin(0), "⊢ False", m.end(0), "other output", m.begin(0), "⊢ True", m.end(0)])
    with pytest.raises(ValueError, match="the file's own code printed this tool's markers"):
        goals.read(forged, m)
    # A goal that looks like one of Lean's error lines is still a goal.
    odd = "\n".join([m.begin(0), 'h : s = "x.lean:1:2: error: boom"', "⊢ True", m.end(0)])
    assert goals.read(odd, m)[0] == 'h : s = "x.lean:1:2: error: boom"\n⊢ True'


def test_a_by_with_nothing_below_it_opens_no_block() -> None:
    with pytest.raises(ValueError, match="opens no block"):
        goals.points(["theorem t : True := by", "theorem u : True := trivial"], 1)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "work"
    write(root, {"Book/A.lean": "theorem add (a b : Nat) (h : 0 < a) : a + b = b + a := by\n  omega\n\n"
                                "theorem two : 1 + 1 = 2 ∧ True := by\n  constructor\n  · rfl\n  · trivial\n",
                 "Book/B.lean": "theorem broken : True := by\n  exact absurd_marker\n  trivial\n",
                 "lakefile.toml": 'name = "b"\n', ".gitignore": ".lake/\n"})
    git(root, "init", "-q")
    compiler = LakeCompiler(root, BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}"), sandbox())
    return Workspace(root, ["Book/*.lean"], [], ".prover-state", ["Book"], compiler)


def goal(ws: Workspace, **args: object) -> tuple[str, bool]:
    result = ws.call(ToolCall("g", "lean_goal", dict(args)))
    return result.content, result.is_error


def test_the_worker_sees_the_goals_before_and_after_a_tactic_and_the_file_is_untouched(ws: Workspace) -> None:
    before = (ws.root / "Book/A.lean").read_bytes()
    text, error = goal(ws, path="Book/A.lean", line=2)
    assert not error
    assert text == "before line 2:\na b : Nat\nh : 0 < a\n⊢ a + b = b + a\n\nafter line 2:\nno goals"
    assert goal(ws, path="Book/A.lean", line=1)[0] == "at the start of the block line 1 opens (line 2):\n" \
                                                      "a b : Nat\nh : 0 < a\n⊢ a + b = b + a"
    assert (ws.root / "Book/A.lean").read_bytes() == before
    assert not list((ws.root / ".lake/autoformalize").glob("*.lean")), "the copy is gone once Lean has answered"


def test_past_a_failed_tactic_lean_never_gets_there_and_its_error_is_told_at_the_files_line(ws: Workspace) -> None:
    text, error = goal(ws, path="Book/B.lean", line=3)
    assert not error
    assert text.startswith("before line 3: not reached") and "after line 3: not reached" in text
    assert "Lean's errors in the file:\n" in text and "\nBook/B.lean:2:8: error: type mismatch" in text


def test_where_the_stand_in_cannot_tell_the_goals_the_tool_says_so_and_invents_none(ws: Workspace) -> None:
    """After `constructor` only Lean knows the goals: the stand-in stops there, and the tool shows its failure."""
    text, _ = goal(ws, path="Book/A.lean", line=5)
    assert "not reached" in text and "⊢" not in text
    assert "Lean failed (exit 3):\nstand-in Lean: the goals at line" in text and "this model cannot" in text


def test_an_error_of_a_file_it_imports_is_told_as_that_files_never_as_this_ones(ws: Workspace) -> None:
    write(ws.root, {"Book/C.lean": "import Book.B\n\ntheorem c : True := by\n  trivial\n"})
    text, error = goal(ws, path="Book/C.lean", line=4)
    assert not error and "Lean's errors in the file:" not in text
    assert "Lean's errors in the files it imports:\nBook/B.lean:2:8: error: " in text


@pytest.mark.parametrize(("args", "why"), [
    ({"path": "Book/A.lean", "line": 2.9}, "line must be a whole number, not 2.9"),
    ({"path": "Book/A.lean", "line": float("inf")}, "line must be a whole number, not inf"),
    ({"path": "Book/A.lean", "line": True}, "line must be a whole number"),
    ({"path": "Book/A.lean", "line": 3}, "blank or a comment"),
    ({"path": "lakefile.toml", "line": 1}, "not a Lean file of the project"),
    ({"path": "Book/None.lean", "line": 1}, "no file Book/None.lean"),
    ({"path": "../outside.lean", "line": 1}, "refused"),
])
def test_a_request_with_no_goals_to_show_is_refused(ws: Workspace, args: dict[str, object], why: str) -> None:
    text, error = goal(ws, **args)
    assert error and text.startswith("refused") and why in text
