"""The priors' reading of the tree: the successors counted from the files' kept tallies are those a reading of every
declaration's text gives, and a second reading of an unchanged file reads no text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from difficulty.priors import _successors, after, describe, words
from gates.census import Census, census
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
    got = {n: k for n, k in _successors(tree, names).items() if k}
    assert got == reference(tree, names)


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
