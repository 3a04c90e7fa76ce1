"""Reading Lean's listing of its environment (`gates.env`), and the decisions made from it (`gates.environment`).

The listing is what the probe program prints (`gates/env_probe.lean`); these tests write it line by line as the
program does, then feed it to the reader, with the attacks a Worker controlling names and project code could try.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gates.census import census
from gates.config import GatesConfig
from gates.diagnostics import CheckResult
from gates.env import Const, Module, Unreadable, ask, declaration, generated, normal, printed, program, read
from gates.environment import Env, Unanswered
from gates.listing import Cache, chain, gather
from gates.tree import MemTree

NONCE = "a1b2c3d4e5f6a7b8c9d0e1f2"


@dataclass
class Listing:
    """Lines as the probe program prints them."""

    lines: list[str] = field(default_factory=list)
    mods: dict[str, int] = field(default_factory=dict)
    names: dict[str, int] = field(default_factory=dict)
    nodes: int = 0
    where: dict[str, str] = field(default_factory=dict)  # a module's file, where not Lake's or the toolchain's

    def emit(self, item: object) -> None:
        self.lines.append(f"{NONCE} {len(self.lines)} {json.dumps(item, separators=(',', ':'))}")

    def module(self, m: str) -> int:
        if m not in self.mods:
            self.mods[m] = len(self.mods)
            self.emit(["M", self.mods[m], m.split(".")])
        return self.mods[m]

    def name(self, n: str, home: str = "Init.Prelude") -> int:
        if n not in self.names:
            mid = self.module(home) if home else -1
            self.names[n] = len(self.names)
            self.emit(["N", self.names[n], [int(p) if p.isdigit() else p for p in n.split(".")], mid])
        return self.names[n]

    def node(self, *fields: object) -> int:
        self.emit(["X", self.nodes, *fields])
        self.nodes += 1
        return self.nodes - 1

    def const(self, module: str, name: str, kind: str = "def", *, type_: int | None = None, value: int | None = None,
              tu: tuple[str, ...] = (), vu: tuple[str, ...] = (), ax: tuple[str, ...] = (), line: int | None = 1,
              homes: dict[str, str] | None = None, holes: int | None = None) -> None:
        homes = homes or {}
        mid = self.module(module)
        n = self.name(name, module)
        t = type_ if type_ is not None else self.node("s", ["z"])
        if value is None and kind in ("def", "opaque"):
            value = self.node("n", "0")
        self.emit(["C", {"m": mid, "n": n, "k": kind, "u": [], "t": t, "v": value,
                         "tu": [self.name(x, homes.get(x, "Init.Prelude")) for x in tu],
                         "vu": [self.name(x, homes.get(x, "Init.Prelude")) for x in vu],
                         "ax": [self.name(x, homes.get(x, "Init.Prelude")) for x in ax], "r": line, "unsafe": False,
                         "h": int("sorryAx" in vu) if holes is None else holes}])

    def files(self) -> list[object]:
        """The toolchain's folder and each module's file: the project's under `/p`, `Init`'s the toolchain's."""
        out: list[object] = [["R", "/elan/toolchain", "/p"]]
        for m, i in self.mods.items():
            where = "/elan/toolchain/lib/lean/" if m.startswith("Init") else "/p/.lake/build/lib/lean/"
            out.append(["F", i, self.where.get(m, where + m.replace(".", "/") + ".olean")])
        return out

    def text(self, end: bool = True) -> str:
        """What the program prints: its lines, then (to its end) the modules' files and the last line."""
        tail = [json.dumps(x, separators=(",", ":")) for x in (self.files() if end else [])]
        lines = [*self.lines, *(f"{NONCE} {len(self.lines) + k} {x}" for k, x in enumerate(tail))]
        return "\n".join([*lines, *([f"{NONCE} {len(lines)} [\"E\",{len(lines)}]"] if end else [])])


def small() -> Listing:
    out = Listing()
    nat = out.node("c", out.name("Nat"), [])
    out.const("Book.A", "Book.f", type_=nat, value=out.node("n", "3"))
    out.const("Book.A", "Book.t", "thm", type_=out.node("a", out.node("c", out.name("Book.f", "Book.A"), []), nat),
              tu=("Book.f",), vu=("sorryAx",), ax=("sorryAx",), homes={"Book.f": "Book.A"})
    return out


def test_a_listing_is_read_into_modules_constants_and_homes() -> None:
    got = read("✔ [3/4] Built Book.A\n" + small().text() + "\n", NONCE)  # Lake's lines around it are not ours
    a = got.modules["Book.A"]
    assert set(a.consts) == {"Book.f", "Book.t"}
    assert a.consts["Book.t"].sorry and a.consts["Book.t"].type_uses == ("Book.f",)
    assert a.consts["Book.t"].value is None and a.consts["Book.f"].value is not None
    assert a.homes["Book.f"] == "Book.A" and a.homes["sorryAx"] == "Init.Prelude"
    assert got.lines == len(small().lines) + 1 + len(small().mods)  # and the files'


def test_lines_lean_prints_with_a_position_prefix_are_read_too() -> None:
    lines = small().text().split("\n")
    lines[0] = "Probe.lean:40:0: info: " + lines[0]
    assert "Book.A" in read("\n".join(lines), NONCE).modules


@pytest.mark.parametrize(("edit", "why"), [
    (lambda ls: [*ls[:2], "x " + ls[2], *ls[3:]], "holds the nonce where the program never prints it"),
    (lambda ls: [ls[1], ls[0], *ls[2:]], "where line 0 was due"),
    (lambda ls: [*ls[:3], ls[2], *ls[3:]], "where line 3 was due"),
    (lambda ls: ls[:-1], "no last line"),
    (lambda ls: [*ls, ls[-1]], "a line after the last"),
    (lambda ls: [*ls[:-1], ls[-1].replace('["E",', '["E",9')], "counts"),
    (lambda ls: [*ls[:1], ls[1][:-3], *ls[2:]], "is not JSON"),
])
def test_a_listing_out_of_order_cut_or_forged_is_unreadable(edit: object, why: str) -> None:
    lines = small().text().split("\n")
    with pytest.raises(Unreadable, match=why):
        read("\n".join(edit(lines)), NONCE)  # type: ignore[operator]


def test_a_node_naming_a_child_not_yet_printed_is_unreadable() -> None:
    out = Listing()
    out.node("a", 5, 6)
    with pytest.raises(Unreadable, match="named before it was printed"):
        read(out.text(), NONCE)


def test_a_theorem_two_modules_both_hold_is_listed_under_each() -> None:
    # Lean lets two modules realize one equation lemma; the name's home is the first, each module lists its own copy.
    out = Listing()
    out.name("Book.f.eq_1", "Book.A")
    out.const("Book.A", "Book.f.eq_1", "thm")
    out.const("Book.B", "Book.f.eq_1", "thm")
    got = read(out.text(), NONCE).modules
    assert "Book.f.eq_1" in got["Book.A"].consts and "Book.f.eq_1" in got["Book.B"].consts


def test_a_theorem_with_a_value_or_a_definition_without_one_is_unreadable() -> None:
    out = Listing()
    out.const("Book.A", "Book.t", "thm", value=out.node("n", "1"))
    with pytest.raises(Unreadable, match="a thm with a value"):
        read(out.text(), NONCE)


def test_a_constant_listed_twice_is_unreadable() -> None:
    out = Listing()
    out.const("Book.A", "Book.f")
    out.const("Book.A", "Book.f")
    with pytest.raises(Unreadable, match="listed twice"):
        read(out.text(), NONCE)


# -- asking Lean: only a whole answer is taken, and only a whole answer is kept -------------------------------


class Lean:
    """Lean at the process boundary: the imports build, then the program prints `answer` under the nonce it was
    given (cut off before its last `cut` lines, as a Lean killed mid-output would leave it), exiting `status`."""

    def __init__(self, answer: Listing, *, cut: int = 0, status: int = 0) -> None:
        self.answer, self.cut, self.status = answer, cut, status

    def probe(self, text: str) -> CheckResult:
        found = re.search(r'^def nonce : String := "([0-9a-f]+)"$', text, re.M)
        if found is None:  # the file of imports
            return CheckResult("lean Imports.lean", 0, "", 0.1)
        raise AssertionError("the program is run by `read`, over the built outputs")

    def read(self, text: str) -> CheckResult:
        found = re.search(r'^def nonce : String := "([0-9a-f]+)"$', text, re.M)
        assert found is not None
        lines = self.answer.text().split("\n")
        shown = "\n".join(lines[:len(lines) - self.cut]).replace(NONCE, found.group(1))
        return CheckResult("lean Probe.lean", self.status, shown, 0.1)


def two() -> Listing:
    out = Listing()
    out.const("Book.A", "Book.f")
    out.const("Book.B", "Book.g", "thm", vu=("sorryAx",), ax=("sorryAx",))
    return out


def test_an_answer_cut_short_or_ended_in_an_error_is_no_answer() -> None:
    # What a cut answer left out (here the hole of `Book.g`) would otherwise read as clean.
    whole = ask(Lean(two()), ["Book.A", "Book.B"])
    assert whole.problem is None and whole.modules["Book.B"].consts["Book.g"].sorry

    for lean, why in ((Lean(two(), cut=1), "the program did not run to its end"),
                      (Lean(two(), cut=3), "the program did not run to its end"),
                      (Lean(two(), status=1), "Lean reported an error while listing the environment")):
        got = ask(lean, ["Book.A", "Book.B"])
        assert got.modules == {} and got.problem is not None and why in got.problem, got.problem


def test_every_module_asked_must_be_answered() -> None:
    only_a = Listing()
    only_a.const("Book.A", "Book.f")
    got = ask(Lean(only_a), ["Book.A", "Book.B"])
    assert got.modules == {} and got.problem == "Lean listed nothing for Book.B"

    unknown = two()
    unknown.emit(["U", unknown.module("Book.C")])
    got = ask(Lean(unknown), ["Book.A", "Book.B", "Book.C"])
    assert got.modules == {} and got.problem == "Lean's environment does not hold Book.C"


def test_every_module_lean_loaded_is_answered_with_its_file() -> None:
    got = ask(Lean(two()), ["Book.A", "Book.B"])
    assert got.project == "/p"
    assert got.files == {"Init.Prelude": "/elan/toolchain/lib/lean/Init/Prelude.olean",
                         "Book.A": "/p/.lake/build/lib/lean/Book/A.olean",
                         "Book.B": "/p/.lake/build/lib/lean/Book/B.olean"}

    class Filesless(Lean):
        def read(self, text: str) -> CheckResult:
            got = super().read(text)
            got.output = "\n".join(line for line in got.output.split("\n")
                                   if '["F",' not in line and '["R",' not in line)
            nonce = re.search(r'^def nonce : String := "([0-9a-f]+)"$', text, re.M)
            assert nonce is not None
            lines = got.output.split("\n")[:-1]
            got.output = "\n".join([*lines, f'{nonce.group(1)} {len(lines)} ["E",{len(lines)}]'])
            return got

    missing = ask(Filesless(two()), ["Book.A", "Book.B"])
    assert missing.modules == {}
    assert missing.problem == "Lean's listing does not say which file each module was loaded from"


def test_a_name_no_module_declares_is_no_answer() -> None:
    # The kernel adds no constant whose terms name a constant it does not hold: such a listing came from an `.olean`
    # Lean did not write from checked code.
    ghost = Listing()
    ghost.const("Book.A", "Book.boom", "thm", vu=("Ghost.ax",), homes={"Ghost.ax": ""})
    got = ask(Lean(ghost), ["Book.A"])
    assert got.modules == {} and got.problem is not None
    assert "Book.boom uses Ghost.ax" in got.problem and "no module of its environment declares" in got.problem
    assert read(ghost.text(), NONCE).unknown == [("Book.boom", "Ghost.ax")]


def test_the_program_asks_for_any_module_name_as_written() -> None:
    # A module's name reaches the program as JSON in a Lean string: quotes, backslashes, non-ASCII letters.
    text = program("0123abcd", ["Book.Über", 'Book.«a"b\\c»'])
    line = next(line for line in text.splitlines() if line.startswith("def wanted : String := "))
    literal = line.removeprefix("def wanted : String := ")
    assert literal[0] == literal[-1] == '"'
    assert json.loads(re.sub(r"\\(.)", r"\1", literal[1:-1])) == [["Book", 'a"b\\c'], ["Book", "Über"]]
    assert 'def nonce : String := "0123abcd"\n' in text


def test_only_a_whole_answer_is_kept(tmp_path: Path) -> None:
    tree = census(MemTree({"Book/A.lean": b"def f := 0\n", "Book/B.lean": b"import Book.A\ntheorem g : True := by\n"
                           b"  stop\n  trivial\n"}), ["Book"])
    cache = Cache(tmp_path / "env")

    cut = gather(Lean(two(), cut=1), tree, ["Book"], {"Book/B.lean"}, "chain", cache)

    assert cut.problem is not None and cut.modules == {} and cut.fresh == {}  # nothing to keep, nothing to use
    whole = gather(Lean(two()), tree, ["Book"], {"Book/B.lean"}, "chain", cache)
    assert whole.problem is None and set(whole.fresh) == {"Book/A.lean", "Book/B.lean"}

    for key, module in whole.fresh.values():  # what the loop keeps (`kernelcheck`)
        cache.put(key, module)
    again = gather(Lean(Listing()), tree, ["Book"], {"Book/B.lean"}, "chain", cache)
    assert (again.runs, again.fresh, again.modules) == (0, {}, whole.modules)  # Lean not asked again
    vouched = gather(Lean(Listing()), tree, ["Book"], {"Book/B.lean"}, "other chain", None, known=whole.modules)
    assert (vouched.runs, vouched.modules) == (0, whole.modules)
    moved = gather(Lean(two()), tree, ["Book"], {"Book/B.lean"}, "other chain", cache)
    assert moved.runs == 2 and set(moved.fresh) == {"Book/A.lean", "Book/B.lean"}  # another key: asked


def test_with_build_time_code_every_file_but_lean_sources_and_state_keys_the_listings() -> None:
    # `include_str` may read any file: a data file changes every key; a Lean file (keyed by its closure) or the
    # orchestrator's state (which every cycle rewrites and no change may write) does not change the chain.
    base = {"Book/A.lean": b"def f := 0\n", "data.txt": b"1\n", ".prover-state/cycle": b"3\n"}
    gates = GatesConfig(allow_build_time_code=True)

    def keyed(files: dict[str, bytes], config: GatesConfig = gates) -> str:
        return chain("toolchain", MemTree(files), ["Book"], config, ".prover-state")

    assert keyed({**base, "data.txt": b"2\n"}) != keyed(base)
    assert keyed({**base, "Book/A.lean": b"def f := 1\n"}) == keyed(base)
    assert keyed({**base, ".prover-state/cycle": b"4\n"}) == keyed(base)
    assert keyed(base, GatesConfig()) == "toolchain"  # without build-time code: the toolchain alone


# -- digests -----------------------------------------------------------------------------------------------------

TERMS = st.recursive(
    st.one_of(st.tuples(st.just("c"), st.sampled_from(["Nat", "Book.f", "Book.g", "HAdd.hAdd"])),
              st.tuples(st.just("n"), st.integers(0, 9).map(str)), st.tuples(st.just("b"), st.integers(0, 3))),
    lambda inner: st.one_of(st.tuples(st.just("a"), inner, inner), st.tuples(st.just("l"), inner, inner),
                            st.tuples(st.just("p"), inner, inner)),
    max_leaves=12)


def digest_of(term: tuple, order: int) -> str:
    """`term`'s type digest, printed with its subterms shared or not (`order` picks), as one constant."""
    out = Listing()
    memo: dict[tuple, int] = {}

    def put(t: tuple) -> int:
        if order % 2 and t in memo:
            return memo[t]
        if t[0] == "c":
            i = out.node("c", out.name(t[1]), [])
        elif t[0] == "n":
            i = out.node("n", t[1])
        elif t[0] == "b":
            i = out.node("b", t[1])
        else:
            a, b = (put(t[1]), put(t[2])) if order < 2 else reversed((put(t[2]), put(t[1])))
            i = out.node(t[0], a, b)
        memo[t] = i
        return i

    out.const("Book.A", "Book.s", "thm", type_=put(term))
    return read(out.text(), NONCE).modules["Book.A"].consts["Book.s"].type


@settings(max_examples=150, deadline=None)
@given(TERMS, TERMS, st.integers(0, 3), st.integers(0, 3))
def test_two_terms_have_one_digest_exactly_when_they_are_the_same_term(a: tuple, b: tuple, i: int, j: int) -> None:
    assert (digest_of(a, i) == digest_of(b, j)) == (a == b)


# -- owners, holes, meanings -----------------------------------------------------------------------------------


def const(name: str, kind: str = "def", *, module: str = "Book.A", type_: str = "T", value: str | None = "V",
          tu: tuple[str, ...] = (), vu: tuple[str, ...] = (), line: int | None = 1) -> Const:
    return Const(name=name, module=module, kind=kind, type=type_, value=None if kind == "thm" else value,
                 shape=kind, type_uses=tu, value_uses=vu, axioms=(), line=line)


def module(*consts: Const, name: str = "Book.A", homes: dict[str, str] | None = None) -> Module:
    return Module(module=name, consts={c.name: c for c in consts},
                  homes={**{u: name for c in consts for u in c.uses}, **(homes or {})})


def test_a_hole_lean_generated_for_a_declaration_counts_for_it() -> None:
    m = module(const("Book.f", vu=("Book.f._proof_1",)), const("Book.f._proof_1", "thm", vu=("sorryAx",), line=None),
               const("Book.g.match_1", vu=("sorryAx",), line=None), const("Book.g", vu=("Book.g.match_1",)),
               const("Book.instHoldsEqNatHAddOfNat", vu=("sorryAx",)), const("Book.M", "thm", vu=("sorryAx",)),
               const("Book.M.inst", vu=("sorryAx",)), const("Book.M.proof_7", "thm", vu=("sorryAx",)),
               const("Book.s", "thm", tu=("sorryAx",)), homes={"sorryAx": "Init.Prelude"})
    assert m.holes() == {"Book.f": ["Book.f._proof_1"], "Book.g": ["Book.g.match_1"],
                         "Book.instHoldsEqNatHAddOfNat": ["Book.instHoldsEqNatHAddOfNat"], "Book.M": ["Book.M"],
                         "Book.M.inst": ["Book.M.inst"],  # named after another by a command: its own …
                         "Book.M.proof_7": ["Book.M.proof_7"]}  # … and so is one named like an auxiliary M does not use
    # `Book.s` states something about a sorried term (an equation lemma of a sorried definition): not a hole itself.


def test_a_lemma_lean_made_on_demand_for_another_module_s_declaration_is_its_hole_not_this_module_s() -> None:
    # `Book.A.f` is sorried; `Book.B` asked for its equation lemmas first, so Lean stored them in `Book.B`.
    made = [const(f"Book.A.f.{s}", "thm", module="Book.B", tu=("Book.A.f",), vu=("Book.A.f", "sorryAx"), line=None)
            for s in ("eq_1", "eq_def", "eq_unfold", "induct", "fun_cases")]
    own = const("Book.B.g.eq_1", "thm", module="Book.B", tu=("Book.B.g",), vu=("Book.B.g", "sorryAx"), line=None)
    m = module(*made, own, const("Book.B.g", module="Book.B", vu=("Book.B.g.eq_1",)), name="Book.B",
               homes={"Book.A.f": "Book.A", "sorryAx": "Init.Prelude"})
    assert m.holes() == {"Book.B.g": ["Book.B.g.eq_1"]}
    assert all(m.foreign(c.name) for c in made) and not m.foreign("Book.B.g.eq_1") and not m.foreign("Book.B.g")
    # Named like one, but declared by a command of this module (`f` is no recursive definition, so the name is free):
    # its sorry is this module's.
    written = const("Book.A.f.induct", "thm", module="Book.B", tu=("Book.A.f",), vu=("sorryAx",), line=7)
    w = module(written, name="Book.B", homes={"Book.A.f": "Book.A", "sorryAx": "Init.Prelude"})
    assert w.holes() == {"Book.A.f.induct": ["Book.A.f.induct"]} and not w.foreign("Book.A.f.induct")


def test_generated_names_are_lean_s_auxiliary_ones() -> None:
    assert generated("T._proof_1") and generated("T.match_2") and generated("T.eq_def") and generated("A._auxLemma.3")
    assert all(generated(f"T.{s}") for s in ("eq_unfold", "induct", "mutual_induct", "induct_unfolding", "fun_cases",
                                             "match_1.splitter", "match_1.congr_eq_2"))
    assert not generated("Book.instLTGrade") and not generated("Book.M.inst") and not generated("Book.proofs")
    assert printed(["Book", "a b", 0, "3"]) == "Book.«a b».0.«3»"
    assert normal("Book.«mono»") == "Book.mono" and normal("«Book.mono»") == "«Book.mono»"


PROJECT = ("Book.A", "Book.B")


def env(*consts: Const) -> Env:
    by_module: dict[str, list[Const]] = {}
    for c in consts:
        by_module.setdefault(c.module, []).append(c)
    homes = {"Nat": "Init.Prelude", "sorryAx": "Init.Prelude"}
    return Env([module(*cs, name=m, homes=homes) for m, cs in by_module.items()], PROJECT)


def test_a_meaning_follows_types_and_definitions_but_not_proofs() -> None:
    base = [const("Book.s", "thm", tu=("Book.d", "Nat"), vu=("Book.lemma",)),
            const("Book.d", tu=("Nat",), vu=("Book.e",)), const("Book.e", module="Book.B"),
            const("Book.lemma", "thm", vu=("Book.other",)), const("Book.other")]
    was = env(*base).meaning("Book.s")
    deeper = [c if c.name != "Book.e" else const("Book.e", module="Book.B", value="W") for c in base]
    assert env(*deeper).meaning("Book.s") != was  # two levels down, in another module
    proof = [c if c.name != "Book.other" else const("Book.other", value="W") for c in base]
    assert env(*proof).meaning("Book.s") == was  # what the proof uses is not what it states


def test_a_meaning_that_reaches_a_module_not_listed_cannot_be_computed() -> None:
    e = env(const("Book.s", "thm", tu=("Book.d",)))
    e.homes["Book.d"] = "Book.B"
    with pytest.raises(Unanswered, match=r"Book\.d"):
        e.meaning("Book.s")


GRAPH = st.lists(st.tuples(st.sampled_from(["def", "thm"]), st.lists(st.integers(0, 9), max_size=3),
                           st.lists(st.integers(0, 9), max_size=3)), min_size=2, max_size=10)


@settings(max_examples=200, deadline=None)
@given(GRAPH, st.integers(0, 9), st.integers(0, 9))
def test_an_edit_changes_a_meaning_exactly_when_the_statement_reaches_what_was_edited(graph: list, start: int,
                                                                                     edited: int) -> None:
    """Constants `c0 … cn` whose types and values use others; `start` is a statement (its type is what it means),
    `edited` a constant whose type (and value, for a definition) changes."""
    start, edited = start % len(graph), edited % len(graph)
    names = [f"Book.c{i}" for i in range(len(graph))]

    def build(edit: bool) -> Env:
        out = []
        for i, (kind, tu, vu) in enumerate(graph):
            changed = edit and i == edited
            out.append(const(names[i], kind, module=PROJECT[i % 2], type_="T2" if changed else "T",
                             value="V2" if changed else "V", tu=tuple(names[j % len(graph)] for j in tu),
                             vu=tuple(names[j % len(graph)] for j in vu)))
        return Env([module(*[c for c in out if c.module == m], name=m) for m in PROJECT], PROJECT)

    reach, todo = set(), [names[j % len(graph)] for j in graph[start][1]]
    while todo:  # through types always, through values of definitions
        n = todo.pop()
        if n in reach or n == names[start]:
            continue
        reach.add(n)
        kind, tu, vu = graph[names.index(n)]
        todo += [names[j % len(graph)] for j in [*tu, *(vu if kind == "def" else [])]]
    expected = edited == start or names[edited] in reach
    assert (build(False).meaning(names[start]) != build(True).meaning(names[start])) == expected


def test_an_equation_lemma_of_a_sorried_definition_in_its_own_module_is_the_definition_s_hole() -> None:
    # `rw [f]` after `f` in its file realizes `f.eq_1` there; nothing of `f` uses it.
    eq = const("Book.f.eq_1", "thm", tu=("Book.f",), vu=("sorryAx",), line=None)
    m = module(const("Book.f", vu=("sorryAx",)), eq, const("Book.t", "thm", vu=("Book.f.eq_1",)),
               homes={"sorryAx": "Init.Prelude"})
    assert m.holes() == {"Book.f": ["Book.f", "Book.f.eq_1"]}


def test_only_a_lemma_lean_makes_on_demand_is_another_module_s() -> None:
    # `proof_N`, `match_N`: made with their declaration, in its module; one named so in another is written there.
    for name in ("Book.A.f.proof_1", "Book.A.f.match_2", "Book.A.f._aux"):
        c = const(name, "thm", module="Book.B", tu=("Book.A.f",), vu=("sorryAx",), line=None)
        m = module(c, name="Book.B", homes={"Book.A.f": "Book.A", "sorryAx": "Init.Prelude"})
        assert not m.foreign(name) and m.holes() == {name: [name]}


@pytest.mark.parametrize(("name", "owner"), [
    ("Book.f.eq_1", "Book.f"), ("Book.f.match_1.splitter", "Book.f"), ("Book.t._proof_1", "Book.t"),
    ("_private.Book.A.0.Book.g.eq_def", "_private.Book.A.0.Book.g"),
    ("_private.Book.A.0.Book.g", "_private.Book.A.0.Book.g"),
    ("Book.main", "Book.main"), ("Nat.succ", "Nat.succ")])
def test_a_generated_constant_belongs_to_its_declaration_a_private_prefix_kept(name: str, owner: str) -> None:
    assert declaration(name) == owner
