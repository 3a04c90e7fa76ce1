"""Proof gap and statistics: the census beside the paper's grep method, on real files and on known traps."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from audit.stats import AXIOM, SORRY, grep_lines, proof_gap, statistics
from gates.census import census
from gates.tree import DirTree
from tests.conftest import write

DATA = Path(__file__).parent.parent / "data"

# Every way a `sorry` or an `axiom` can fool a line grep, or a line grep can miss one.
TRAPS = """\
namespace Traps

/-- A doc comment that says sorry. -/
def msg : String := "sorry, not a hole"

/- A block comment,
sorry on its own line,
axiom fake : False
-/

-- a line comment: sorry
theorem two : True ∧ True := ⟨sorry, sorry⟩

theorem named (x : Nat) : x = x := x.sorry_free ▸ rfl

theorem adm : 1 = 1 := by admit

private axiom hidden : 1 = 2

  axiom indented : 2 = 3

end Traps

axiom real_one : 0 = 1
"""


def test_proof_gap_on_real_files_agrees(tmp_path: Path) -> None:
    shutil.copytree(DATA / "lean", tmp_path, dirs_exist_ok=True)
    gap = proof_gap(tmp_path, census(DirTree(tmp_path)))
    # SOURCES.md hand count: the 5 sorries are all in BNStability.lean, one per line, none in prose.
    assert (gap.sorries, gap.admits, gap.axioms) == (5, 0, [])
    assert (gap.grep_sorry_lines, gap.grep_axiom_lines, gap.comment_lines) == (5, 0, 0)
    assert {g.file for g in gap.grep_sorry} == {"BNStability.lean"}
    assert gap.discrepancies == []


def test_grep_method_counts_what_the_census_ignores(tmp_path: Path) -> None:
    shutil.copytree(DATA / "lean", tmp_path, dirs_exist_ok=True)
    write(tmp_path, {"Traps.lean": TRAPS})
    gap = proof_gap(tmp_path, census(DirTree(tmp_path)))
    assert (gap.sorries, gap.admits) == (5 + 2, 1)  # the real five, and the two on line 12
    assert sorted(a.name or "" for a in gap.axioms) == ["Traps.hidden", "Traps.indented", "real_one"]
    # grep: the doc comment, the string, the block comment, the line comment, line 12 once, `x.sorry_free`
    # does not match `\bsorry\b`; `^axiom ` finds the one in the block comment and the real one only.
    assert gap.grep_sorry_lines == 5 + 5
    assert gap.grep_axiom_lines == 2
    assert gap.comment_lines == 1  # `-- a line comment: sorry`, which the `grep -v` does not remove
    why = {(d.file, d.line, d.what): (d.census, d.grep, d.reason) for d in gap.discrepancies}
    assert why == {
        ("Traps.lean", 3, "sorry"): (0, 1, "inside a doc comment"),
        ("Traps.lean", 4, "sorry"): (0, 1, "inside a string literal"),
        ("Traps.lean", 7, "sorry"): (0, 1, "inside a comment"),
        ("Traps.lean", 11, "sorry"): (0, 1, "inside a comment"),
        ("Traps.lean", 12, "sorry"): (2, 1, "2 `sorry` on one line: grep counts lines, the census counts terms"),
        ("Traps.lean", 16, "admit"): (1, 0, "`admit` is a hole that `\\bsorry\\b` does not match"),
        ("Traps.lean", 8, "axiom"): (0, 1, "inside a comment"),
        ("Traps.lean", 18, "axiom"): (1, 0, "modifiers or attributes before `axiom` on its line (`private axiom`, "
                                            "`@[…] axiom`)"),
        ("Traps.lean", 20, "axiom"): (1, 0, "indented: grep's `^axiom ` wants column 0"),
    }
    assert gap.to_json()["grep"]["sorry_lines"] == 10  # type: ignore[index]


def test_identifier_and_outside_the_roots(tmp_path: Path) -> None:
    write(tmp_path, {"Book/A.lean": "theorem t (h : P) : P := h.sorry'\n",
                     "scratch/B.lean": "theorem u : True := sorry\n"})
    gap = proof_gap(tmp_path, census(DirTree(tmp_path), ["Book"]))
    assert gap.sorries == 0 and gap.grep_sorry_lines == 2
    assert [d.reason for d in gap.discrepancies] == [
        "part of the name `h.sorry'`, not the term",
        "in a `.lean` file the census does not read (outside the project's Lean roots)"]


def _grep_pipeline(cwd: Path, command: str) -> set[tuple[str, int]]:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C.UTF-8"}, check=False)
    out = set()
    for line in done.stdout.splitlines():
        path, number, _ = line.split(":", 2)
        out.add((path.removeprefix("repo/"), int(number)))
    return out


@pytest.mark.skipif(shutil.which("grep") is None or shutil.which("bash") is None, reason="needs GNU grep and bash")
def test_python_replica_prints_what_gnu_grep_prints(tmp_path: Path) -> None:
    if "GNU grep" not in subprocess.run(["grep", "--version"], capture_output=True, text=True).stdout:
        pytest.skip("not GNU grep")
    repo = tmp_path / "repo"
    shutil.copytree(DATA / "lean", repo)
    write(repo, {"Traps.lean": TRAPS, ".lake/packages/M/X.lean": "sorry\naxiom m : False\n", "notes.md": "sorry\n",
                 "Sub/Deep.lean": "  sorry -- indented\nsorry_free sorry'\n"})
    (repo / "Bin.lean").write_bytes(b"sorry\0binary\nsorry\n")
    (repo / "Bad.lean").write_bytes(b"sorry \xff\nsorry fine\n")
    (repo / "Link.lean").symlink_to(repo / "Traps.lean")
    paper = "grep -rn '\\bsorry\\b' repo/ --include=\"*.lean\" | grep -v '^\\s*--'"
    ours = grep_lines(repo, SORRY, exclude_dirs=())  # the paper's sorry command excludes nothing
    assert {(g.file, g.line) for g in ours.lines} == _grep_pipeline(tmp_path, paper)
    assert sorted(ours.binary) == ["Bad.lean", "Bin.lean"]
    axioms = "grep -rn '^axiom ' repo/ --include=\"*.lean\" --exclude-dir=\".lake\""
    assert {(g.file, g.line) for g in grep_lines(repo, AXIOM).lines} == _grep_pipeline(tmp_path, axioms)


def test_statistics_by_kind(tmp_path: Path) -> None:
    write(tmp_path, {"Book/Kinds.lean": """\
namespace Book

def a : Nat := 1
noncomputable def b : Nat := 2
private def c : Nat := 3
protected def d : Nat := 4
@[simp] def e : Nat := 5
theorem f : True := trivial
lemma g : True := trivial
structure S where
  x : Nat
class C (α : Type) where
  op : α → α
class inductive CI : Prop
  | mk
instance : C Nat := ⟨id⟩
instance named : C Bool := ⟨id⟩
inductive I
  | z
abbrev Ab := Nat
axiom ax : True
opaque op : Nat
example : True := trivial
/-
def commented : Nat := 0
-/

end Book
"""})
    stats = statistics(tmp_path, census(DirTree(tmp_path)))
    assert stats.declarations == {"def": 5, "theorem": 1, "lemma": 1, "structure": 1, "class": 2, "instance": 2,
                                  "inductive": 1, "abbrev": 1, "axiom": 1, "opaque": 1, "example": 1}
    assert (stats.noncomputable_defs, stats.private_defs, stats.theorems_and_lemmas) == (1, 1, 2)
    assert stats.named == 15  # all 17 but the example and the anonymous instance
    assert (stats.files, stats.lines) == (1, 28)
    # The paper's def grep misses `protected def` and `@[simp] def` but counts the one in a block comment.
    assert stats.grep == {"files": 1, "wc_lines": 28, "def_lines": 4, "theorem_lemma_lines": 2}
    assert stats.to_json()["theorem+lemma"] == 2


def test_statistics_on_real_files() -> None:
    stats = statistics(DATA / "lean", census(DirTree(DATA / "lean")))
    # SOURCES.md's hand counts, summed over the five files.
    assert {k: v for k, v in stats.declarations.items() if v} == {"def": 13, "theorem": 11, "lemma": 10,
                                                                   "example": 13}
    assert stats.noncomputable_defs == 5 and stats.files == 5
