"""The priors' reading of the tree: the successors counted from the files' kept tallies are those a reading of every
declaration's text gives, a reading brought up to date file by file through any sequence of edits answers as a
first reading of the same tree does, and a second reading of an unchanged file reads no text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from difficulty.priors import Reading, after, describe, words
from gates.census import Census, census
from gates.env import Const, Module
from gates.index import FileIndex
from gates.lexer import ID_FIRST, ID_REST
from gates.tree import MemTree

NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")
DECLARED = ["foo", "bar", "baz", "qux"]
# How a proof may write a name: short, qualified, from the root, or one that only ends like it.
FORMS = ["foo", "Book.foo", "_root_.Book.foo", "bar", "Book.bar", "Other.bar", "baz", "Book.Sub.baz", "qux",
         "Nat.succ", "xfoo"]


def reference(tree: Census, names: set[str]) -> dict[str, int]:
    """The count as the definition says it: each declaration's text read, a name counted once per declaration that
    writes something standing for it, the declaration itself aside."""
    out: dict[str, int] = {}
    for _, d in tree.decls():
        assert d.source is not None
        found = set()
        for token in NAMES.findall(d.source.code, d.start, d.end):
            plain = token.rstrip(".").removeprefix("_root_.")
            found |= {n for n in names if n == plain or n.endswith("." + plain)}
        found.discard(d.name)
        for n in found:
            out[n] = out.get(n, 0) + 1
    return {n: k for n, k in out.items() if k}


def source(decls: list[tuple[str, list[str]]]) -> str:
    body = "\n\n".join(f"theorem {name} : True := by\n  have := {' '.join(uses) or 'trivial'}\n  trivial"
                       for name, uses in decls)
    return f"namespace Book\n\n{body}\n\nend Book\n"


files = st.lists(st.lists(st.tuples(st.sampled_from(DECLARED), st.lists(st.sampled_from(FORMS), max_size=4)),
                          min_size=1, max_size=4), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(files)
def test_the_tallies_count_what_a_reading_of_each_declaration_counts(content: list[list[tuple[str, list[str]]]]
                                                                     ) -> None:
    tree = census(MemTree({f"Book/F{i}.lean": source(decls).encode() for i, decls in enumerate(content)}), ["Book"])
    names = {"Book.foo", "Book.bar", "Book.Sub.baz", "Book.qux", "Other.bar"}
    reading = Reading(("Book",))
    reading.update(tree)
    got = {n: k for n in names if (k := reading._successors(n))}
    assert got == reference(tree, names)


# One declaration: its kind, its name, the names its statement and its proof write, whether it holds a sorry, and
# how many hypotheses lengthen its statement (its size's bin).
DECL = st.tuples(st.sampled_from(["theorem", "def"]), st.sampled_from(DECLARED), st.lists(st.sampled_from(FORMS),
                 max_size=2), st.lists(st.sampled_from(FORMS), max_size=3), st.booleans(), st.sampled_from([0, 6, 12]))
# A file: whether it imports the first, and its declarations; a tree: the files present, by number.
FILE = st.tuples(st.booleans(), st.lists(DECL, min_size=1, max_size=4))
TREE = st.dictionaries(st.integers(0, 3), FILE, max_size=4)


def written(imports: bool, decls: list[tuple[str, str, list[str], list[str], bool, int]]) -> str:
    body = []
    for kind, name, said, used, hole, long in decls:
        proof = "sorry" if hole else " + ".join(used) or "0"
        hypotheses = " ".join(f"(h{i} : True)" for i in range(long))
        if kind == "def":
            body.append(f"def {name} {hypotheses} ({' '.join(f'x{i} : {t}' for i, t in enumerate(said))}) : Nat := "
                        f"{proof}")
        else:
            body.append(f"theorem {name} {hypotheses} : {' = '.join(said) or 'True'} := by\n"
                        f"  have := {' '.join(used) or 'trivial'}\n  {'sorry' if hole else 'trivial'}")
    return ("import Book.F0\n\n" if imports else "") + "namespace Book\n\n" + "\n\n".join(body) + "\n\nend Book\n"


# An edit: file i given new content, or removed (None).
EDITS = st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), FILE)), min_size=1, max_size=6)
NAMES_ASKED = [f"{space}.{n}" for space in ("Book", "Other") for n in DECLARED] + ["Book.Sub.baz", "Book.gone"]


def indexed(files: dict[int, tuple[bool, list[tuple[str, str, list[str], list[str], bool, int]]]],
            kept: dict[tuple[str, str], FileIndex]) -> Census:
    """The tree's census, a file whose text was indexed before keeping that index (as the cache of indexes gives
    it: only the files that changed are read again)."""
    texts = {f"Book/F{i}.lean": written(*content) for i, content in sorted(files.items())}
    tree = census(MemTree({path: text.encode() for path, text in texts.items()}), ["Book"])
    tree.files = {path: kept.setdefault((path, texts[path]), index) for path, index in tree.files.items()}
    return tree


def same(warm: Reading, tree: Census) -> None:
    cold = Reading(("Book",))
    cold.update(tree)
    assert warm.answer(NAMES_ASKED) == cold.answer(NAMES_ASKED)
    assert (warm.counts, warm.twins, warm.selfs, warm.defining) == (cold.counts, cold.twins, cold.selfs,
                                                                    cold.defining)


@settings(max_examples=150, deadline=None)
@given(TREE, EDITS)
def test_a_reading_brought_up_to_date_answers_as_a_first_reading(
        start: dict[int, tuple[bool, list[tuple[str, str, list[str], list[str], bool, int]]]],
        edits: list[tuple[int, tuple[bool, list[tuple[str, str, list[str], list[str], bool, int]]] | None]]) -> None:
    """Edits, renames, files added and removed, headers changed, one file at a time: after each the reading kept
    from the trees before answers for every name as a first reading of that tree does."""
    kept: dict[tuple[str, str], FileIndex] = {}
    files = dict(start)
    warm = Reading(("Book",))
    warm.update(indexed(files, kept))
    warm.answer(NAMES_ASKED)
    for i, content in edits:
        if content is None:
            files.pop(i, None)
        else:
            files[i] = content
        tree = indexed(files, kept)
        warm.update(tree)
        same(warm, tree)


def test_a_hole_only_lean_reports_reaches_the_reading_though_no_file_changed() -> None:
    """The same indexes, and then Lean's listing of the file: `Book.foo` holds a hole its text does not show, and
    `Book.aux`, a declaration no text names, holds one."""
    files = {0: (False, [("theorem", "foo", [], ["bar"], False, 0), ("theorem", "bar", [], [], False, 0)])}
    kept: dict[tuple[str, str], FileIndex] = {}
    warm = Reading(("Book",))
    tree = indexed(files, kept)
    warm.update(tree)
    assert warm.answer(["Book.foo", "Book.aux"])["Book.foo"].holes == 0
    sorry = dict(kind="thm", module="Book.F0", type="T", value=None, shape="thm", type_uses=(), axioms=(), line=1)
    listing = Module(module="Book.F0", homes={"sorryAx": "Init.Prelude"}, consts={
        "Book.foo": Const(name="Book.foo", value_uses=("sorryAx",), **sorry),  # type: ignore[arg-type]
        "Book.bar": Const(name="Book.bar", value_uses=(), **sorry),  # type: ignore[arg-type]
        "Book.aux": Const(name="Book.aux", value_uses=("sorryAx",), **sorry)})  # type: ignore[arg-type]
    listed = indexed(files, kept)
    assert listed.files == tree.files
    listed.lean["Book/F0.lean"] = listing
    warm.update(listed)
    got = warm.answer(["Book.foo", "Book.aux"])
    assert got["Book.foo"].holes == 1 and got["Book.aux"].holes == 1 and got["Book.aux"].file == "Book/F0.lean"
    same(warm, listed)


def test_a_second_reading_of_an_unchanged_file_reads_no_text() -> None:
    text = source([("foo", ["bar"]), ("bar", ["foo", "Book.foo"]), ("baz", ["Book.foo", "_root_.Book.bar"])])
    tree = census(MemTree({"Book/A.lean": text.replace("theorem baz : True := by\n  have", "theorem baz : True := by\n"
                                                       "  sorry\n  have").encode()}), ["Book"])
    first = describe(tree, ["Book"], ["Book.foo", "Book.bar", "Book.baz"])
    index = tree.files["Book/A.lean"]
    assert "priors.words" in index.memo and "priors.tally" in index.memo
    written = words(index)[1].written  # of `bar`: each name once
    assert {"foo", "Book.foo", "True", "trivial"} <= set(written) and len(written) == len(set(written))
    assert first["Book.foo"].groups[-1] == ("2–3 successors", 1 / 3)  # bar and baz; itself aside
    assert after(tree) == {"Book.baz": ()} and first["Book.baz"].holes == 1
    index.origin = None  # no text to read any more: what a second reading needs is kept
    for d in index.decls:
        d.origin = None
    assert describe(tree, ["Book"], ["Book.foo", "Book.bar", "Book.baz"]) == first


def test_a_name_two_files_declare_is_read_from_the_first() -> None:
    one = [("theorem", "foo", [], [], True, 0)]
    tree = indexed({2: (False, one), 1: (False, one)}, {})
    assert describe(tree, ["Book"], ["Book.foo"])["Book.foo"].file == "Book/F1.lean"


def test_a_declaration_whose_statement_alone_grows_is_read_again() -> None:
    """Only its size's bin moves: no name it reads is written more or less often."""
    kept: dict[tuple[str, str], FileIndex] = {}
    warm = Reading(("Book",))
    for long, size in ((6, "0–99"), (12, "100–199")):
        tree = indexed({0: (False, [("theorem", "foo", [], [], False, long)])}, kept)
        warm.update(tree)
        assert warm.answer(["Book.foo"])["Book.foo"].groups[1] == (f"statement {size} characters", 1 / 3)


def test_a_reading_that_failed_halfway_is_read_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """An error while the kept reading is brought up to date leaves nothing half done for the next call."""
    kept: dict[tuple[str, str], FileIndex] = {}
    tree = indexed({0: (False, [("theorem", "foo", [], [], True, 0)])}, kept)
    describe(tree, ["Book"], ["Book.foo"])
    changed = indexed({0: (False, [("theorem", "foo", [], [], True, 12)])}, kept)  # only its statement grew
    monkeypatch.setattr(Census, "holed", lambda self: (_ for _ in ()).throw(OSError("disk")))
    with pytest.raises(OSError):
        describe(changed, ["Book"], ["Book.foo"])
    monkeypatch.undo()
    assert describe(changed, ["Book"], ["Book.foo"])["Book.foo"].groups[1] == ("statement 100–199 characters", 1 / 3)
