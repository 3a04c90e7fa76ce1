"""The reuse test on a project whose answer is known edge by edge, and the edge heuristics on a real blueprint."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.entities import Entity
from audit.extract import from_blueprint
from audit.reuse import Edge, EdgeType, Rate, Verdict, candidate_edges, citation_keys, reuse
from gates.census import Census, census
from gates.tree import DirTree
from tests.conftest import write

AUDIT = Path(__file__).parent.parent / "data" / "audit"

BASIC = """\
namespace Book

def double (n : ℕ) : ℕ := 2 * n

theorem double_add (a b : ℕ) : double (a + b) = double a + double b := by
  unfold double
  omega

theorem double_eq_zero_iff {n : ℕ} : double n = 0 ↔ n = 0 := by
  unfold double
  omega

theorem four_mul (n : ℕ) : 4 * n = 2 * n + 2 * n := by
  omega

end Book
"""

MORE = """\
import Book.Basic

namespace Book.Extra

theorem quad (a b c : ℕ) : Book.double (a + b + c) = Book.double (a + b) + Book.double c :=
  Book.double_add (a + b) c

theorem zero_of_double {n : ℕ} (h : double n = 0) : n = 0 :=
  double_eq_zero_iff.mp h

end Book.Extra

namespace Other
open Book

theorem five (n : ℕ) : 4 * n = 2 * n + 2 * n := four_mul n

-- Cites Theorem 1.2 in the book, but `omega` never names `double_add`.
theorem six (a b : ℕ) : 2 * (a + b) = 2 * a + 2 * b := by
  omega

end Other
"""


def entity(id: str, name: str, nl: str, lean: list[str], *, proof: str = "", uses: list[str] | None = None,
           terms: list[str] | None = None) -> Entity:
    return Entity(id=id, kind=name.split()[0].lower(), name=name, nl=nl, lean=lean, proof=proof, uses=uses or [],
                  terms=terms or [])


BOOK = [
    entity("def:1.1", "Definition 1.1", "The \\emph{double} of $n$ is $2n$.", ["Book.double"], terms=["double"]),
    entity("thm:1.2", "Theorem 1.2", "The double of a sum is the sum of the doubles.", ["Book.double_add"],
           uses=["def:1.1"]),
    entity("lem:1.3", "Lemma 1.3", "The double of $n$ is zero iff $n$ is zero.", ["Book.double_eq_zero_iff"]),
    entity("lem:1.4", "Lemma 1.4", "$4n = 2n + 2n$.", ["Book.four_mul"]),
    entity("thm:1.5", "Theorem 1.5", "Doubling a sum of three splits off the last term.", ["Book.Extra.quad"],
           proof="Apply Theorem~1.2 to $a + b$ and $c$."),
    entity("cor:1.6", "Corollary 1.6", "If the double of $n$ is zero, so is $n$.", ["Book.Extra.zero_of_double"],
           uses=["lem:1.3"]),
    entity("thm:1.7", "Theorem 1.7", "$4n = 2n + 2n$ again.", ["Other.five"], proof="This is Lemma 1.4."),
    entity("thm:1.8", "Theorem 1.8", "Multiplying a sum by two: the double of $a+b$.", ["Other.six"],
           proof="By Theorem 1.2."),
    entity("thm:1.9", "Theorem 1.9", "Not formalized yet.", [], proof="By Thm. 1.2."),
]


@pytest.fixture
def project(tmp_path: Path) -> Census:
    write(tmp_path, {"Book/Basic.lean": BASIC, "Book/More.lean": MORE})
    return census(DirTree(tmp_path), ["Book"])


def test_candidate_edges_of_the_book() -> None:
    edges = {(e.source, e.target): e for e in candidate_edges(BOOK)}
    assert {k: [str(t) for t in e.types] for k, e in edges.items()} == {
        ("thm:1.2", "def:1.1"): ["citation", "keyword"],
        ("lem:1.3", "def:1.1"): ["keyword"],
        ("thm:1.5", "thm:1.2"): ["citation"],
        ("cor:1.6", "def:1.1"): ["keyword"],
        ("cor:1.6", "lem:1.3"): ["citation"],
        ("thm:1.7", "lem:1.4"): ["citation"],
        ("thm:1.8", "def:1.1"): ["keyword"],
        ("thm:1.8", "thm:1.2"): ["citation"],
        ("thm:1.9", "thm:1.2"): ["citation"],
    }
    assert edges[("thm:1.5", "thm:1.2")].evidence == ["its proof cites “Theorem~1.2”"]
    assert edges[("thm:1.2", "def:1.1")].evidence[1] == "its statement mentions “double”, which def:1.1 introduces"
    assert edges[("thm:1.2", "def:1.1")].category == "both signals"


def test_reflection_in_the_lean_code(project: Census) -> None:
    report = reuse(BOOK, project)
    assert not report.filtered and report.unjudged == 0 and len(report.kept) == len(report.candidates) == 9
    result = {(r.edge.source, r.edge.target): r for r in report.tested}
    assert {k: r.reflected for k, r in result.items()} == {
        ("thm:1.2", "def:1.1"): True,
        ("lem:1.3", "def:1.1"): True,
        ("thm:1.5", "thm:1.2"): True,
        ("cor:1.6", "def:1.1"): True,
        ("cor:1.6", "lem:1.3"): True,
        ("thm:1.7", "lem:1.4"): True,
        ("thm:1.8", "def:1.1"): False,
        ("thm:1.8", "thm:1.2"): False,
    }
    # By full name; only relative to the enclosing namespace; through a projection; through `open`.
    assert result[("thm:1.5", "thm:1.2")].how == "`Book.Extra.quad` writes `Book.double_add`, which is " \
                                                 "`Book.double_add`"
    assert result[("lem:1.3", "def:1.1")].how == "`Book.double_eq_zero_iff` writes `double`, which is `Book.double`"
    assert result[("cor:1.6", "lem:1.3")].how == ("`Book.Extra.zero_of_double` writes `double_eq_zero_iff.mp`, "
                                                  "which is `Book.double_eq_zero_iff`")
    assert result[("thm:1.7", "lem:1.4")].how == "`Other.five` writes `four_mul`, which is `Book.four_mul`"
    assert [(e.source, e.target, why) for e, why in report.untested] == [
        ("thm:1.9", "thm:1.2", "the source has no Lean declaration in the project")]
    assert report.rates() == {"citation only": Rate(3, 4), "keyword only": Rate(2, 3), "both signals": Rate(1, 1),
                              "all": Rate(6, 8)}
    assert report.rates()["all"].rate == 0.75
    data = report.to_json()
    assert data["filtered"] is False and "Unfiltered" in str(data["note"]) and "lower bound" in str(data["note"])


def test_a_name_the_namespace_does_not_reach_is_not_counted(tmp_path: Path) -> None:
    write(tmp_path, {"Book/A.lean": "namespace Book\ntheorem t : True := trivial\nend Book\n",
                     "Book/B.lean": "namespace Else\ntheorem u : True := t\n"
                                    "theorem v (h : P) : True := h.t\nend Else\n"})
    entities = [entity("thm:1", "Theorem 1", "T.", ["Book.t"]),
                entity("thm:2", "Theorem 2", "By Theorem 1.", ["Else.u", "Else.v"])]
    [reflection] = reuse(entities, census(DirTree(tmp_path))).tested
    # `t` inside `Else` is not `Book.t` (no `open Book`); `h.t` may be field notation: listed, never counted.
    assert not reflection.reflected
    assert reflection.possible == ["`Else.v` writes `h.t`"]


def test_the_filter_decides_which_edges_count(project: Census) -> None:
    def judge(edge: Edge, source: Entity, target: Entity) -> Verdict | None:
        if edge.types == [EdgeType.KEYWORD]:
            return Verdict(False, "high", "a shared word")
        return None if source.id == "thm:1.8" else Verdict(True, "high", "cited")

    report = reuse(BOOK, project, judge)
    assert report.filtered
    assert len(report.kept) == 6 and report.unjudged == 1  # thm:1.8 → thm:1.2 kept without a verdict
    assert report.rates()["keyword only"] == Rate(0, 0)
    assert report.rates()["all"] == Rate(4, 5)
    data = report.to_json()
    assert data["rejected"] == 3 and "Unfiltered" not in str(data["note"])


def test_citation_keys_and_numbers() -> None:
    assert citation_keys(entity("thm:142C", "Theorem 142C", "", [])) == {("theorem", "142c")}
    assert citation_keys(Entity(id="F_entire", kind="lemma", name="F_entire", nl="")) == set()
    a = entity("def:2.1", "Definition 2.1", "A \\emph{widget} is a gadget.", [], terms=["widget"])
    b = entity("prop:2.1", "Proposition 2.1", "Every widgets is fine.", [])
    c = entity("thm:3", "Theorem 3", "See Definition 2.1, and Propositions 2.1 and 9.9.", [])
    edges = {(e.source, e.target) for e in candidate_edges([a, b, c])}
    # The kind keeps Definition 2.1 and Proposition 2.1 apart; Proposition 9.9 is nobody; "widgets" is plural.
    assert edges == {("prop:2.1", "def:2.1"), ("thm:3", "def:2.1"), ("thm:3", "prop:2.1")}


def test_real_blueprint_edges() -> None:
    entities, _ = from_blueprint(AUDIT / "dirichlet")
    edges = {(e.source, e.target): e for e in candidate_edges(entities)}
    assert len(edges) == 16
    # Explicit \uses edges, and one keyword edge: F_entire says "bad character", which def:bad_char introduces.
    assert [str(t) for t in edges[("F_entire", "def:bad_char")].types] == ["keyword"]
    assert [str(t) for t in edges[("F_entire", "def:bad_char_F")].types] == ["citation"]
    flt, _ = from_blueprint(AUDIT / "flt")
    flt_edges = {(e.source, e.target) for e in candidate_edges(flt)}
    # The real blueprint's three `\uses{hardly-ramified}` point nowhere; the keyword edge recovers them.
    for source in ("hardly-ramified-lifts", "hardly-ramified-spreads-out", "hardly-ramified-3adic-reducible"):
        assert (source, "hardly_ramified") in flt_edges
