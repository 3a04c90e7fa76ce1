"""The declaration index: kinds, qualified names, spans, statement hashes, markers."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from gates.index import Decl, _alternation, index_source

DATA = Path(__file__).parent.parent / "data" / "lean"


def decls(source: str) -> list[Decl]:
    return index_source("T.lean", source).decls


def test_every_kind_after_modifiers_and_attributes() -> None:
    source = """\
@[simp] theorem a : True := trivial
lemma b : True := trivial
private noncomputable def c : Nat := 1
protected abbrev d := Nat
instance e : Inhabited Nat := ⟨0⟩
@[ext] structure F where
  x : Nat
class G (α : Type) where
  op : α → α
inductive H | one | two
axiom i : False
opaque j : Nat
example : True := trivial
partial def k : Nat → Nat := k
unsafe def l : Nat := 0
"""
    assert [(d.kind, d.name) for d in decls(source)] == [
        ("theorem", "a"), ("lemma", "b"), ("def", "c"), ("abbrev", "d"), ("instance", "e"), ("structure", "F"),
        ("class", "G"), ("inductive", "H"), ("axiom", "i"), ("opaque", "j"), ("example", None), ("def", "k"),
        ("def", "l")]
    by_name = {d.name: d for d in decls(source)}
    assert by_name["a"].attributes == ("simp",)
    assert by_name["c"].modifiers == ("private", "noncomputable")


def test_names_are_qualified_by_namespaces_not_sections() -> None:
    source = """\
namespace A.B
theorem x : True := trivial
section S
variable (n : Nat)
def y := n
end S
namespace C
theorem z : True := trivial
end C
theorem _root_.top : True := trivial
theorem D.w : True := trivial
end B
theorem v : True := trivial
end A
theorem u : True := trivial
"""
    assert [d.name for d in decls(source)] == ["A.B.x", "A.B.y", "A.B.C.z", "top", "A.B.D.w", "A.v", "u"]
    assert index_source("T.lean", source).problems == []


def test_end_with_one_component_closes_one_namespace_scope() -> None:
    source = "namespace A.B\nend B\ntheorem x : True := trivial\nend A\ntheorem y : True := trivial\n"
    assert [d.name for d in decls(source)] == ["A.x", "y"]


def test_mismatched_end_is_reported() -> None:
    index = index_source("T.lean", "namespace A\nend B\nend\n")
    assert len(index.problems) == 2


def test_noncomputable_section_and_mutual() -> None:
    source = """\
noncomputable section
namespace N
mutual
def even : Nat → Bool | 0 => true | n+1 => odd n
def odd : Nat → Bool | 0 => false | n+1 => even n
end
theorem t : True := trivial
end N
end
"""
    assert [d.name for d in decls(source)] == ["N.even", "N.odd", "N.t"]


def test_anonymous_instances_examples_and_priorities() -> None:
    source = """\
instance : Inhabited Nat := ⟨0⟩
instance (priority := 100) named : Inhabited Bool := ⟨true⟩
instance [Inhabited α] : Inhabited (List α) := ⟨[]⟩
scoped instance sc : Inhabited Unit := ⟨()⟩
"""
    assert [(d.kind, d.name) for d in decls(source)] == [
        ("instance", None), ("instance", "named"), ("instance", None), ("instance", "sc")]


def test_instance_words_that_are_not_declarations() -> None:
    source = """\
structure P where
  x : Nat
deriving Repr
deriving instance BEq for P
attribute [local instance] foo
attribute [instance] bar
@[instance] def baz : Inhabited Nat := ⟨1⟩
class inductive Q | a | b
"""
    assert [(d.kind, d.name) for d in decls(source)] == [("structure", "P"), ("def", "baz"), ("class", "Q")]


def test_statement_and_body_lines() -> None:
    source = """\
/-- doc -/
theorem t (n : ℕ)
    (h : 0 < n) :
    n ≠ 0 := by
  omega

def f : Nat → Nat
  | 0 => 1
  | n + 1 => n

structure S where
  x : Nat

axiom ax : ∀ n : ℕ,
  n = n
"""
    t, f, s, ax = decls(source)
    assert (t.line, t.statement, t.body) == (2, (2, 4), (4, 5))
    assert (f.statement, f.body) == ((7, 7), (8, 9))
    assert (s.statement, s.body) == ((11, 11), (11, 12))
    assert (ax.statement, ax.body) == ((14, 15), None)


def test_colon_equals_inside_binders_does_not_end_the_statement() -> None:
    (t,) = decls("theorem t (x : Nat := 1) (h : let y := x; y = 1) : x = 1 := by\n  simp\n")
    assert t.statement == (1, 1) and t.body == (1, 2)


def test_statement_hash_ignores_layout_comments_and_name() -> None:
    a = decls("theorem a (n : Nat) : n = n := rfl\n")[0]
    b = decls("theorem b  (n : Nat) -- why\n    : n /- c -/ = n := by rfl\n")[0]
    c = decls("theorem a (n : Nat) : n + 0 = n := rfl\n")[0]
    assert a.statement_hash == b.statement_hash
    assert a.statement_hash != c.statement_hash


def test_holes_know_their_declaration() -> None:
    index = index_source("T.lean", """\
namespace N
theorem t : True := by
  sorry
instance : Inhabited Nat := ⟨sorry⟩
end N
macro "cheat" : tactic => `(tactic| sorry)
""")
    assert [(h.declaration, h.owner, h.in_macro) for h in index.holes] == [
        ("N.t", "theorem@2", False), (None, "instance@4", False), (None, None, True)]
    assert [d.holes for d in index.decls] == [1, 1]


def test_markers_and_imports() -> None:
    index = index_source("T.lean", """\
import Mathlib.Tactic
import Book.Chapter1
set_option maxHeartbeats 400000 in
theorem t : True := by native_decide
theorem u : True := by
  set_option debug.skipKernelTC true in exact sorryAx _ false
#exit
""")
    assert index.imports == ["Mathlib.Tactic", "Book.Chapter1"]
    assert sorted((m.kind, m.detail, m.declaration or "") for m in index.markers) == sorted([
        ("set_option", "maxHeartbeats", ""), ("native_decide", "native_decide", "t"),
        ("set_option", "debug.skipKernelTC", "u"), ("sorryAx", "sorryAx", "u"), ("#exit", "#exit", "")])


@pytest.mark.parametrize(
    ("name", "sorries", "kinds"),
    [
        ("BNStability.lean", 5, {"def": 3, "lemma": 4, "theorem": 1}),
        ("Section441B.lean", 0, {"def": 4, "lemma": 3, "theorem": 5}),
        ("Section431.lean", 0, {"def": 2, "lemma": 3, "theorem": 5}),
        ("rawStrings.lean", 0, {"example": 13}),
        ("StrInterpolation.lean", 0, {"def": 4}),
    ],
)
def test_real_files_match_hand_counts(name: str, sorries: int, kinds: dict[str, int]) -> None:
    index = index_source(name, (DATA / name).read_text(encoding="utf-8"))
    assert index.sorries == sorries
    assert Counter(d.kind for d in index.decls) == kinds
    assert index.problems == []


def test_real_file_sorries_are_in_named_declarations() -> None:
    index = index_source("BNStability.lean", (DATA / "BNStability.lean").read_text(encoding="utf-8"))
    assert all(h.declaration and h.declaration.startswith("ButcherTableau.") for h in index.holes)
    assert len({h.declaration for h in index.holes}) == 5


def test_an_attribute_command_is_read_past_any_comment_before_its_brackets() -> None:
    """`attribute /- … -/ [instance] x`: Lean's whitespace holds comments of any length; the `instance` inside the
    brackets declares nothing."""
    index = index_source("T.lean", f"attribute /- {'x' * 90} -/ [instance] weakLT\ntheorem t : True := trivial\n")
    assert [d.kind for d in index.decls] == ["theorem"]
    assert [(m.kind, m.args) for m in index.markers] == [("attribute", "instance")]


@pytest.mark.parametrize(("source", "axioms", "sorries"), [
    ("def x := 2axiom cheat : False\n", ["cheat"], 0),  # a numeral ends before a letter: `2`, then `axiom`
    ("def x := 0x1Fsorry\n", [], 1),
    ("def x := 2.sorry\n", [], 1),
    ("def x := h.2axiom c : False\n", ["c"], 0),  # a field index, then `axiom`
    ("def x := f ''sorry\n", [], 1),
    ("def x := Foo.sorry + is_sorry + addend + x2axiom\n", [], 0),  # the middle of a name
])
def test_a_keyword_glued_to_a_numeral_or_a_symbol_is_seen(source: str, axioms: list[str], sorries: int) -> None:
    index = index_source("T.lean", source)
    assert ([d.name for d in index.axioms], index.sorries) == (axioms, sorries)


def test_a_word_list_is_matched_exactly_by_its_factored_pattern() -> None:
    words = ["d", "def", "deriving", "decreasing_by", "do", "theorem", "the"]
    pattern = re.compile(_alternation(words))
    assert [w for w in words if pattern.fullmatch(w)] == words
    assert not [w for w in ("", "de", "deri", "dx", "theorems", "th", "x") if pattern.fullmatch(w)]
