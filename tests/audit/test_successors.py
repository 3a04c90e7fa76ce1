"""The successor tests' parts that need no Lean: who uses a statement (names resolved in the files that see it),
the mutants of a statement, the verdicts; and the users found in real projects against the pairs T2 released
(tests/data/t2, see tests/data/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit.successors import Kind, Outcome, Status, Users, Verdict, drop_hypothesis, mutants, verdict, weaken
from gates.census import Census, census
from gates.index import Decl, index_source
from gates.tree import DirTree
from tests.conftest import write

T2 = Path(__file__).parents[1] / "data" / "t2"
ADELE = "adele-ring_locally-compact"


def pairs(dataset: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (T2 / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r["dataset_name"] == dataset]


def located(found: Census, path: str, code: str) -> Decl:
    """The declaration of `path` whose text is T2's `code` (a short name alone may be declared twice in a file)."""
    index = found.files[path]
    first = next(line for line in code.splitlines() if line.split()[:1] and not line.startswith(("@[", "/-", "[")))
    at = index.text.find(first)
    assert at >= 0, first
    return next(d for d in index.decls if d.start <= at < d.end)


def test_the_users_found_in_the_adele_ring_project_agree_with_t2_where_t2_named_a_real_user() -> None:
    found = census(DirTree(T2 / "adele"), ["AdeleRingLocallyCompact"])
    users = Users(found)
    agree, disagree = [], []
    for p in pairs(ADELE):
        t_path, s_path = p["target"].rsplit("/", 1)[0], p["successor"].rsplit("/", 1)[0]
        target, successor = located(found, t_path, p["target_code"]), located(found, s_path, p["successor_code"])
        assert target.name is not None and successor.name is not None
        mine = {(path, d.name) for path, d in users.of(t_path, target.name)}
        (agree if (s_path, successor.name) in mine else disagree).append((target.name, successor.name, s_path))

    assert len(pairs(ADELE)) == 17  # what T2's released data holds of this project (research_papers.prop.jsonl)
    assert len(agree) == 13
    # Where T2 pairs by short name: each `algebraMap_apply` with the other file's, which neither file imports, and
    # `mixedEmbedding_eq_algebraMap_comp`, whose `algebraMap_apply` is its own namespace's; and a name that is a
    # prefix of the one used (`isUniformizer_ne_zero'` is another theorem).
    assert sorted((t.rsplit(".", 1)[-1], s.rsplit(".", 1)[-1]) for t, s, _ in disagree) == [
        ("algebraMap_apply", "algebraMap_apply"), ("algebraMap_apply", "algebraMap_apply"),
        ("algebraMap_apply", "mixedEmbedding_eq_algebraMap_comp"),
        ("isUniformizer_ne_zero", "eq_pow_uniformizer_mul_unit")]
    finite, infinite = ("AdeleRingLocallyCompact/RingTheory/DedekindDomain/FiniteAdeleRing.lean",
                        "AdeleRingLocallyCompact/NumberTheory/NumberField/InfiniteAdeleRing.lean")
    assert not {finite, infinite} & users.graph.imported([finite]) - {finite}
    assert infinite not in users.graph.dependents({finite})
    eq_pow = located(found, "AdeleRingLocallyCompact/FromLocalClassFieldTheory/LocalClassFieldTheory.lean",
                     next(p["successor_code"] for p in pairs(ADELE) if "eq_pow" in p["successor"]))
    named = {n for _, n in users.named(
        "AdeleRingLocallyCompact/FromLocalClassFieldTheory/LocalClassFieldTheory.lean", eq_pow)}
    assert "IsDedekindDomain.HeightOneSpectrum.AdicCompletionIntegers.isUniformizer_ne_zero'" in named
    assert "IsDedekindDomain.HeightOneSpectrum.AdicCompletionIntegers.isUniformizer_ne_zero" not in named


def test_t2s_math2001_pairs_of_homework_problems_of_one_name_are_not_users(tmp_path: Path) -> None:
    math2001 = pairs("math2001")
    files: dict[str, dict[str, str]] = {}
    for p in math2001:
        for ident, code in ((p["target"], p["target_code"]), (p["successor"], p["successor_code"])):
            path, name = ident.rsplit("/", 1)
            files.setdefault(path, {"": p["header"]}).setdefault(name, code)
    write(tmp_path, {path: "\n\n".join(decls.values()) + "\n" for path, decls in files.items()})
    found = census(DirTree(tmp_path), ["Math2001", "Library"])
    users = Users(found)

    homework = [p for p in math2001 if "/Homework/" in p["successor"]]
    assert len(math2001) == 34 and len(homework) == 31  # and three `pow`s: `Odd.pow` paired with other `pow`s
    for p in math2001:
        path, short = p["target"].rsplit("/", 1)
        target = next(d for d in found.files[path].decls if d.name and d.name.rsplit(".", 1)[-1] == short)
        assert target.name is not None
        assert users.of(path, target.name) == [], p["successor"]


def test_a_short_name_resolves_to_the_declaration_its_file_sees(tmp_path: Path) -> None:
    write(tmp_path, {
        "Hw/One.lean": "theorem problem1 (x : ℕ) (h : 0 < x) : x ≠ 0 := by omega\n\n"
                       "theorem again : (1 : ℕ) ≠ 0 := problem1 1 (by decide)\n",
        "Hw/Two.lean": "theorem problem1 (y : ℤ) : y = y := rfl\n\ntheorem uses_two : (2 : ℤ) = 2 := problem1 2\n",
        "Hw/Later.lean": "import Hw.One\n\ntheorem later : (3 : ℕ) ≠ 0 := problem1 3 (by decide)\n",
        "Hw/Unrelated.lean": "theorem writes_it : (4 : ℕ) ≠ 0 := problem1 4 (by decide)\n"})
    users = Users(census(DirTree(tmp_path), ["Hw"]))

    assert [d.name for _, d in users.of("Hw/One.lean", "problem1")] == ["later", "again"]
    assert [d.name for _, d in users.of("Hw/Two.lean", "problem1")] == ["uses_two"]


def _decl(text: str) -> Decl:
    return index_source("A.lean", text).decls[0]


def test_the_mutants_of_a_statement() -> None:
    d = _decl("/-- doc -/\n@[simp] theorem qux (n : ℕ) (h : 0 < n) : n * 1 = n ∧ 0 < n := by\n  omega\n")
    got = {m.kind: m for m in mutants(d)}
    assert got[Kind.VACUITY].text == "theorem qux (n : ℕ) (h : 0 < n) : True := trivial"
    assert got[Kind.HYPOTHESIS].text == "/-- doc -/\n@[simp] theorem qux (n : ℕ) : n * 1 = n ∧ 0 < n := sorry"
    assert got[Kind.CONCLUSION].text == "/-- doc -/\n@[simp] theorem qux (n : ℕ) (h : 0 < n) : n * 1 = n := sorry"

    # A binder a later one or the conclusion mentions is not dropped; an instance or implicit never is.
    assert drop_hypothesis("{α : Type} [Group α] (a : α) (ha : a ≠ 1) (hb : ha = ha)", "a * a = a") == (
        "{α : Type} [Group α] (a : α) (ha : a ≠ 1)", "a * a = a", "`(hb : ha = ha)`")
    assert drop_hypothesis("(a b : ℕ) (h₁ h₂ : a < b)", "a ≤ b") == ("(a b : ℕ) (h₁ : a < b)", "a ≤ b",
                                                                      "`(h₂ : a < b)`")
    assert drop_hypothesis("(n : ℕ)", "0 < n → n ≠ 0") == ("(n : ℕ)", "n ≠ 0", "the premise `0 < n`")
    assert drop_hypothesis("(n : ℕ)", "n = n") is None

    assert weaken("∀ x : ℕ, 0 < x → x ≠ 0 ∧ x ≥ 1") == ("∀ x : ℕ, 0 < x → x ≠ 0", "the conjunct `x ≥ 1` dropped")
    assert weaken("a ∈ s ↔ a ∈ t") == ("a ∈ s → a ∈ t", "`↔` weakened to `→`")
    assert weaken("0 < n → (a < b)") is None  # only what the top level shows
    assert weaken("p → a < b") == ("p → a ≤ b", "`<` weakened to `≤`")
    assert weaken("∃ n, n = 2 ∧ (f n = 0 ∨ True)") == ("∃ n, n = 2", "the conjunct `(f n = 0 ∨ True)` dropped")
    assert weaken("f x = 3") is None
    assert weaken("p → q ↔ r") is None and drop_hypothesis("(n : ℕ)", "p → q ↔ r") is None  # `(p → q) ↔ r`
    assert weaken("¬ a < b") is None  # `¬ a ≤ b` would be stronger


@pytest.mark.parametrize(("statuses", "expected"), [
    ([Status.KILLED, Status.KILLED], Verdict.TESTED),
    ([Status.KILLED, Status.SURVIVED, Status.INVALID], Verdict.WEAK),
    ([Status.SURVIVED, Status.SURVIVED], Verdict.UNTESTED),
    ([Status.INVALID, Status.TIMEOUT], Verdict.UNCHECKED),
])
def test_verdicts(statuses: list[Status], expected: Verdict) -> None:
    outcomes = [Outcome(kind=Kind.VACUITY, change="", status=s) for s in statuses]
    assert verdict(["user"], outcomes) is expected
    assert verdict([], []) is Verdict.NO_USERS
