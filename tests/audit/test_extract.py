"""Entities from a real blueprint, a real mapping file and real docstrings, and from odd input."""

from __future__ import annotations

import shutil
from pathlib import Path

from audit.entities import Entity
from audit.extract import (
    Declarations,
    find_entities,
    from_blueprint,
    from_docstrings,
    from_mapping,
    mapping_files,
    resolve_names,
)
from gates.census import census
from gates.tree import DirTree
from tests.conftest import write

DATA = Path(__file__).parent.parent / "data"
AUDIT = DATA / "audit"


def by_id(entities: list[Entity]) -> dict[str, Entity]:
    return {e.id: e for e in entities}


# -- blueprint -----------------------------------------------------------------------------------------------


def test_real_blueprint_dirichlet() -> None:
    entities, problems = from_blueprint(AUDIT / "dirichlet")
    assert problems == []
    assert [e.id for e in entities] == [
        "product_lower_bound", "non_quadratic", "def:bad_char", "def:bad_char_F", "F_entire", "zero_of_F",
        "F_Euler_product", "nonneg_coeffs", "positivity_from_derivs", "derivs_from_coeffs",
        "quadratic_char_nonvanishing", "dirichlet_char_nonvanishing"]  # the commented-out theorem* is not one
    e = by_id(entities)
    first = e["product_lower_bound"]
    assert (first.kind, first.lean, first.leanok) == ("lemma", ["norm_dirichlet_product_ge_one"], True)
    assert first.source == "blueprint/src/content.tex:44"
    assert first.nl.startswith("Let $\\chi$ be a Dirichlet character modulo~$N$.")
    assert "\\begin{equation}" in first.nl and "\\label" not in first.nl and "\\leanok" not in first.nl
    assert first.proof == "This follows from a trigonometric inequality."
    assert "We're trying to prove the following theorem:" in first.context
    assert "It should *not* include" not in first.context  # comments are not prose
    # No \chapter anywhere: the chapter is the section.
    assert {x.chapter for x in entities} == {"A more detailed plan"}
    # \uses in the proof, \ref, and \eqref to an equation inside another statement all count.
    assert e["non_quadratic"].uses == ["product_lower_bound"]
    assert e["quadratic_char_nonvanishing"].uses == ["F_entire", "zero_of_F", "F_Euler_product", "nonneg_coeffs",
                                                     "positivity_from_derivs", "derivs_from_coeffs"]
    assert e["def:bad_char"].terms == ["bad character"]
    assert e["def:bad_char_F"].uses == ["def:bad_char"] and e["def:bad_char_F"].lean == ["BadChar.F"]
    assert e["F_Euler_product"].lean == [] and not e["F_Euler_product"].leanok
    assert e["dirichlet_char_nonvanishing"].kind == "theorem"


def test_real_blueprint_flt_follows_inputs_and_proves() -> None:
    entities, problems = from_blueprint(AUDIT / "flt")
    e = by_id(entities)
    assert len(entities) == 9
    assert {x.chapter for x in entities} == {"Reducibility of p-torsion of the Frey curve"}
    assert e["FLT.Wiles_Frey'"].lean == ["FLT.Wiles_Frey"] and e["FLT.Wiles_Frey'"].leanok
    assert e["FLT.Wiles_Frey'"].uses == ["Frey_curve_hardly_ramified", "hardly_ramified_reducible"]
    # A proof far below its statement, found by \proves; its \uses spans two lines.
    target = e["hardly_ramified_reducible"]
    assert target.proof.startswith("Assume for a contradiction")
    assert target.uses == ["hardly-ramified-lifts", "hardly-ramified-spreads-out", "hardly-ramified-3adic-reducible"]
    assert e["hardly_ramified"].terms == ["hardly ramified"]
    # The chapters content.tex inputs but this excerpt lacks are reported with file and line; the
    # commented-out \input is not read at all.
    missing = [p for p in problems if "no such file" in p]
    assert len(missing) == 13
    assert missing[0] == "blueprint/src/content.tex:3: \\input{chapter/ch01introduction}: no such file"
    assert not any("ch03frey}" in p for p in problems)
    # The real blueprint's typo `hardly-ramified` (the label is `hardly_ramified`) is reported by name.
    dangling = [p for p in problems if "hardly-ramified}" in p]
    assert dangling == [
        f"blueprint/src/chapter/ch02point5freyreduction.tex:{line}: {label}: \\uses{{hardly-ramified}} names no "
        "label of the blueprint" for line, label in ((145, "hardly-ramified-lifts"),
                                                      (158, "hardly-ramified-spreads-out"),
                                                      (182, "hardly-ramified-3adic-reducible"))]


LEAN = """\
namespace Book

def double (n : ℕ) : ℕ := 2 * n

theorem double_pos (n : ℕ) (h : 0 < n) : 0 < double n := by
  unfold double; omega

end Book
"""


def test_blueprint_lean_names_are_checked_against_the_project(tmp_path: Path) -> None:
    write(tmp_path, {"Book/Basic.lean": LEAN, "blueprint/src/content.tex": """\
\\chapter{Doubling}
\\begin{definition}[Double]\\label{def:double}\\lean{Book.double}\\leanok
The \\emph{double} of $n$ is $2n$.
\\end{definition}
\\begin{theorem}\\label{thm:pos}
  \\lean{double_pos, Book.missing}
  \\uses{def:double}
  The double of a positive number is positive.
\\end{theorem}
"""})
    entities, problems = from_blueprint(tmp_path, census(DirTree(tmp_path)))
    e = by_id(entities)
    assert e["def:double"].name == "Double" and e["def:double"].terms == ["Double", "double"]
    assert e["def:double"].chapter == "Doubling"
    assert e["thm:pos"].lean == ["Book.double_pos", "Book.missing"]  # the short name resolved to the full one
    assert problems == ["blueprint/src/content.tex:5: thm:pos: Lean name `Book.missing` names no declaration of "
                        "the project (a dependency's name, a typo, or not written yet)"]


def test_blueprint_odd_input_is_reported_not_fatal(tmp_path: Path) -> None:
    write(tmp_path, {"blueprint/src/content.tex": """\
\\section{Odd}
\\begin{lemma}\\label{lem:a}\\lean{A.a}
  Uses \\foo{bar}, \\newthing and \\mathcal{E} freely.
\\end{lemma}
\\begin{proof}
  \\uses{lem:a}
\\end{proof}
\\begin{proof}
  A second proof follows nothing.
\\end{proof}
\\end{theorem}
\\begin{lemma}\\label{lem:open}
  \\lean{B.b
  Never closed.
\\begin{theorem}\\label{thm:c}\\uses{lem:open}
  After it.
\\end{theorem}
\\begin{lemma}\\label{lem:a}
  Same label again.
\\end{lemma}
\\input{../../../outside}
"""})
    entities, problems = from_blueprint(tmp_path)
    e = by_id(entities)
    assert list(e) == ["lem:a", "lem:open", "thm:c"]
    assert e["lem:a"].nl == "Uses \\foo{bar}, \\newthing and \\mathcal{E} freely."  # unknown macros kept as text
    assert e["lem:open"].nl == "\\lean{B.b\nNever closed."  # read up to the next statement
    assert e["lem:open"].lean == []
    assert e["thm:c"].uses == ["lem:open"]
    assert problems == [
        "blueprint/src/content.tex:11: \\end{theorem} closes no \\begin{theorem}",
        "blueprint/src/content.tex:12: \\begin{lemma} is never closed; read up to line 15",
        "blueprint/src/content.tex:8: a proof that follows no statement; ignored",
        "blueprint/src/content.tex:13: \\lean without a closed {…} argument",
        "blueprint/src/content.tex:18: label `lem:a` already used at blueprint/src/content.tex:2; this statement "
        "is skipped",
        "blueprint/src/content.tex:21: \\input{../../../outside}: outside the project; not read",
    ]


def test_no_blueprint_is_no_entities(tmp_path: Path) -> None:
    assert from_blueprint(tmp_path) == ([], [])


# -- mapping file --------------------------------------------------------------------------------------------


def test_real_openmath_mapping_with_its_entity_files() -> None:
    root = AUDIT / "openmath"
    [path] = mapping_files(root)
    entities, problems = from_mapping(path, root)
    assert problems == []
    e = by_id(entities)
    assert list(e) == ["cor:342D", "def:110A", "def:356A", "lem:110B", "lem:441B", "thm:101A", "thm:110C", "thm:142C"]
    thm = e["thm:110C"]
    assert (thm.kind, thm.name, thm.chapter) == ("theorem", "Theorem 110C", "1")
    assert thm.lean == ["OpenMath.Chapter1.Section110.ode_existence_uniqueness"]  # lean_status wins over the
    assert thm.leanok                                                            # entity file's stale null
    assert thm.nl.startswith("Consider an initial value problem") and "\\begin{theorem}" not in thm.nl
    assert thm.proof.startswith("Let \\( M \\) denote") and thm.context.startswith("Consider the initial value")
    assert thm.terms == ["Existence and uniqueness of solutions"]
    assert thm.uses == []  # its dependencies are a keyword match and an LLM guess, not citations
    assert e["def:110A"].terms == ["Lipschitz condition in its second variable",
                                   "Lipschitz constant for ordinary differential equations"]
    assert e["thm:101A"].lean == ["OpenMath.Chapter1.Section101.kepler_H_const",
                                  "OpenMath.Chapter1.Section101.kepler_A_const"]
    assert not e["def:356A"].leanok  # in_progress
    assert e["cor:342D"].lean == [] and e["cor:342D"].kind == "corollary" and e["cor:342D"].nl == ""
    assert e["lem:441B"].lean == ["cInverseLog_neg"]
    assert e["thm:110C"].source == "extraction/formalization_data/lean_status.json [thm:110C]"


def test_mapping_short_names_resolve_or_are_reported(tmp_path: Path) -> None:
    shutil.copytree(AUDIT / "openmath" / "extraction", tmp_path / "extraction")
    # The real Section441B.lean at the recorded commit predates `cInverseLog_neg`: reported by name.
    write(tmp_path, {"OpenMath/Chapter4/Section441B.lean": (DATA / "lean" / "Section441B.lean").read_text()})
    entities, problems = from_mapping(mapping_files(tmp_path)[0], tmp_path, census(DirTree(tmp_path)))
    assert "extraction/formalization_data/lean_status.json [lem:441B]: lem:441B: Lean name `cInverseLog_neg` names " \
           "no declaration of the project (a dependency's name, a typo, or not written yet)" in problems
    # Once written (in its file's namespace), the short name resolves to the full one.
    write(tmp_path, {"OpenMath/Chapter4/Extra.lean": "namespace OpenMath.Chapter4.Section441B\n"
                     "theorem cInverseLog_neg (n : ℕ) (h : 1 ≤ n) : cInverseLog n < 0 := sorry\nend "
                     "OpenMath.Chapter4.Section441B\n"})
    entities, problems = from_mapping(mapping_files(tmp_path)[0], tmp_path, census(DirTree(tmp_path)))
    assert by_id(entities)["lem:441B"].lean == ["OpenMath.Chapter4.Section441B.cInverseLog_neg"]
    assert not any("cInverseLog_neg" in p for p in problems)


def test_mapping_odd_shapes(tmp_path: Path) -> None:
    write(tmp_path, {"a/lean_status.json": '[{"id": "thm:1", "lean": ["X.y"], "statement": "S."}, 7, {"no": 1}]',
                     "b/lean_status.json": "{not json"})
    [a, b] = mapping_files(tmp_path)
    entities, problems = from_mapping(a, tmp_path)
    assert [(x.id, x.lean, x.nl, x.kind) for x in entities] == [("thm:1", ["X.y"], "S.", "theorem")]
    assert problems == ["a/lean_status.json: row 1 is not an object with an id; skipped",
                        "a/lean_status.json: row 2 is not an object with an id; skipped"]
    entities, problems = from_mapping(b, tmp_path)
    assert entities == [] and problems[0].startswith("b/lean_status.json: cannot be read as JSON")


# -- docstrings ---------------------------------------------------------------------------------------------


def test_real_docstrings_reasbook_and_openmath(tmp_path: Path) -> None:
    shutil.copytree(AUDIT / "reasbook", tmp_path, dirs_exist_ok=True)
    shutil.copy(DATA / "lean" / "BNStability.lean", tmp_path / "BNStability.lean")
    entities, problems = from_docstrings(census(DirTree(tmp_path)))
    assert problems == []
    e = by_id(entities)
    # Definition 1.11 and Proposition 1.11 share a number: the kind keeps them apart. "Helper for
    # Proposition 1.12" is not a heading.
    assert sorted(e) == ["def:1.10", "def:1.11", "def:1.12", "prop:1.11", "thm:357C"]
    assert e["def:1.10"].lean == ["openBall"] and e["def:1.10"].terms == ["Balls"]
    assert e["def:1.10"].nl.startswith("Let `(X,d)` be a metric space") and e["def:1.10"].chapter == "1"
    assert e["def:1.10"].source == "Chap01/section02.lean:12"
    assert e["prop:1.11"].lean == ["proposition_1_11"] and e["prop:1.11"].leanok
    bn = e["thm:357C"]  # `/-- **Theorem 357C**: … -/`
    assert (bn.name, bn.lean, bn.nl) == ("Theorem 357C", ["ButcherTableau.alg_stable_implies_bn_stable"],
                                         "algebraic stability implies BN-stability.")
    assert not bn.leanok  # its proof is a sorry


def test_docstrings_in_a_small_project(tmp_path: Path) -> None:
    write(tmp_path, {"Book/Ch2.lean": """\
namespace Book

/-- Theorem 2.3. Every natural number is at least zero. -/
theorem nonneg (n : ℕ) : 0 ≤ n := Nat.zero_le n

/-- **Lemma 2.4** (Doubling): doubling is monotone. -/
@[simp] lemma double_mono {a b : ℕ} (h : a ≤ b) : 2 * a ≤ 2 * b := by omega

/-- Theorem 2.5: the case `n = 0`. -/
theorem split_zero : 0 + 0 = 0 := rfl

/-- Theorem 2.5: the case `n = 1`. -/
theorem split_one : 1 + 0 = 1 := sorry

/-- Helper for Theorem 2.3. -/
theorem helper : True := trivial

/- Theorem 9.9: a plain comment, not a doc comment. -/
theorem plain : True := trivial

/-- Theorem 3.1 -/
theorem bare : True := trivial

end Book
"""})
    entities, problems = from_docstrings(census(DirTree(tmp_path)))
    e = by_id(entities)
    assert sorted(e) == ["lem:2.4", "thm:2.3", "thm:2.5", "thm:3.1"]
    assert (e["thm:2.3"].nl, e["thm:2.3"].lean) == ("Every natural number is at least zero.", ["Book.nonneg"])
    assert (e["lem:2.4"].kind, e["lem:2.4"].terms, e["lem:2.4"].nl) == ("lemma", ["Doubling"],
                                                                        "doubling is monotone.")
    assert e["thm:2.5"].lean == ["Book.split_zero", "Book.split_one"] and not e["thm:2.5"].leanok
    assert problems == ["Book/Ch2.lean:21: the doc comment of `Book.bare` has a heading but no statement"]


# -- all sources -------------------------------------------------------------------------------------------


def test_find_entities_merges_sources_by_id(tmp_path: Path) -> None:
    write(tmp_path, {
        "Book/Basic.lean": """\
namespace Book

/-- Theorem 2.3: the double of a positive number is positive. -/
theorem double_pos (n : ℕ) (h : 0 < n) : 0 < 2 * n := by omega

/-- Theorem 7.1: restated in the blueprint under another label. -/
theorem seven : True := trivial

/-- Lemma 4.2: only a docstring pairs this one. -/
theorem four : True := trivial

end Book
""",
        "blueprint/src/content.tex": """\
\\begin{theorem}\\label{thm:2.3}\\lean{Book.double_pos}
The double of a positive number is positive.
\\end{theorem}
\\begin{theorem}\\label{main}\\lean{Book.seven}
True.
\\end{theorem}
""",
        "data/lean_status.json": '{"thm:2.3": {"lean_symbol": "double_pos", "status": "formalized", '
                                 '"context": "Some prose."}, "def:1.1": {"lean_symbol": null, "statement": "A def."}}',
    })
    entities, problems = find_entities(tmp_path, census(DirTree(tmp_path)))
    assert problems == []
    e = by_id(entities)
    assert list(e) == ["thm:2.3", "main", "def:1.1", "lem:4.2"]  # Theorem 7.1 is `main` again: dropped
    merged = e["thm:2.3"]
    assert merged.source == "blueprint/src/content.tex:1"  # the blueprint came first and wins
    assert merged.lean == ["Book.double_pos"] and merged.chapter == "content"  # no \chapter: the file's name
    assert merged.leanok and merged.context == "Some prose."  # what the blueprint left empty, the mapping filled
    assert e["lem:4.2"].lean == ["Book.four"]


def test_a_name_two_declarations_could_mean_is_ambiguous_never_the_first_found(tmp_path: Path) -> None:
    both = "namespace Book\ntheorem t : True := trivial\ntheorem u : True := trivial\nend Book\n"
    write(tmp_path, {"Book/A.lean": both,
                     "Book/B.lean": "theorem t : True := trivial\n",
                     "Book/C.lean": "namespace Book\ntheorem u : True := trivial\nend Book\n"})
    names = Declarations.of(census(DirTree(tmp_path)))
    assert names.resolve("t") == (None, ["Book.t", "t"])  # the exact full name does not win over the other
    assert names.resolve("_root_.t") == ("t", ["t"])
    assert names.resolve("Book.t") == ("Book.t", ["Book.t"])
    assert names.resolve("Book.u") == (None, ["Book.u (Book/A.lean, Book/C.lean)"])  # two files repeat it
    assert names.resolve("u", file="Book/A.lean") == (None, ["Book.u (Book/A.lean, Book/C.lean)"])
    e = Entity(id="thm:1", kind="theorem", name="Theorem 1", nl="", lean=["t", "Book.t"], source="m.json")
    problems: list[str] = []
    resolve_names(e, names, problems)
    assert e.lean == ["Book.t"] and problems == ["m.json: thm:1: Lean name `t` is ambiguous: Book.t, t; it pairs "
                                                 "with none of them"]


def test_books_that_number_alike_are_told_apart_one_book_in_chapter_folders_is_not(tmp_path: Path) -> None:
    # Two books' mapping files and doc comments both have a Theorem 1.1: one entity per book.
    write(tmp_path, {
        "Books/Tao/lean_status.json": '[{"id": "thm:1.1", "lean": ["Tao.a"], "statement": "A.", "uses": ["def:1"]}]',
        "Books/Rudin/lean_status.json": '[{"id": "thm:1.1", "lean": ["Rudin.a"], "statement": "B."}]',
        "Books/Tao/Ch1.lean": "/-- Theorem 2.1 Tao's. -/\ntheorem Tao.b : True := trivial\n",
        "Books/Rudin/Ch1.lean": "/-- Theorem 2.1 Rudin's. -/\ntheorem Rudin.b : True := trivial\n"})
    entities, _ = find_entities(tmp_path, census(DirTree(tmp_path)))
    e = by_id(entities)
    assert sorted(e) == ["Rudin/thm:1.1", "Rudin/thm:2.1", "Tao/thm:1.1", "Tao/thm:2.1"]
    assert e["Tao/thm:1.1"].lean == ["Tao.a"] and e["Tao/thm:1.1"].uses == ["Tao/def:1"]
    assert (e["Rudin/thm:2.1"].book, e["Rudin/thm:2.1"].lean) == ("Rudin", ["Rudin.b"])
    # One book whose chapters are folders numbers each result once: no book to tell apart.
    one = tmp_path / "one"
    write(one, {"Book/Ch1/A.lean": "/-- Theorem 1.1 First. -/\ntheorem a : True := trivial\n",
                "Book/Ch2/B.lean": "/-- Theorem 2.1 Second. -/\ntheorem b : True := trivial\n"})
    entities, _ = find_entities(one, census(DirTree(one)))
    assert sorted(x.id for x in entities) == ["thm:1.1", "thm:2.1"] and {x.book for x in entities} == {""}
