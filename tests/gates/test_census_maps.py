"""A census's maps over every file (its declarations in order, the last declaration of each key, the files
declaring each name) derived from another census's through the files that differ are those made afresh: over
random sequences of edits, renames, files added and removed, a declaration moving between files, and for a census
`replace`d from another."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gates import census as module
from gates.census import Census, census
from gates.index import FileIndex
from gates.tree import MemTree

NAMES = ["foo", "bar", "baz", "Sub.qux"]
# A declaration: its kind, its name (None: an anonymous instance) and whether it holds a sorry.
DECL = st.tuples(st.sampled_from(["theorem", "def", "instance"]), st.one_of(st.none(), st.sampled_from(NAMES)),
                 st.booleans())
FILE = st.lists(DECL, min_size=1, max_size=4)
TREE = st.dictionaries(st.integers(0, 5), FILE, max_size=6)
EDITS = st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), FILE)), min_size=1, max_size=6)


def written(decls: list[tuple[str, str | None, bool]]) -> str:
    body = []
    for kind, name, hole in decls:
        proof = "sorry" if hole else "trivial"
        if kind == "instance":
            body.append(f"instance {name + ' ' if name else ''}: Inhabited Nat := ⟨0⟩")
        else:
            body.append(f"{kind} {name or 'anon'} : True := {proof}")
    return "namespace Book\n\n" + "\n\n".join(body) + "\n\nend Book\n"


def indexed(files: dict[int, list[tuple[str, str | None, bool]]], kept: dict[tuple[str, str], FileIndex]) -> Census:
    """The tree's census, a file whose text was indexed before keeping that index, as the cache of indexes does."""
    texts = {f"Book/F{i}.lean": written(decls) for i, decls in sorted(files.items())}
    tree = census(MemTree({path: text.encode() for path, text in texts.items()}), ["Book"])
    tree.files = {path: kept.setdefault((path, texts[path]), index) for path, index in tree.files.items()}
    return tree


FRESH = module._fresh


def fresh(c: Census) -> tuple[object, ...]:
    m = FRESH(c.files)
    return m.decls, m.located, m.by_key, m.holders, m.declaring, frozenset(m.names), m.names


def mapped(c: Census) -> tuple[object, ...]:
    return list(c.decls()), c.located, c.by_key, module._maps(c).holders, c._declaring, c.named, module._maps(c).names


@settings(max_examples=150, deadline=None)
@given(TREE, EDITS)
def test_maps_derived_through_the_files_that_differ_are_those_made_afresh(
        start: dict[int, list[tuple[str, str | None, bool]]],
        edits: list[tuple[int, list[tuple[str, str | None, bool]] | None]]) -> None:
    kept: dict[tuple[str, str], FileIndex] = {}
    files = dict(start)
    before = indexed(files, kept)
    assert mapped(before) == fresh(before)
    afresh: list[Census] = []
    module._fresh = lambda files: afresh.append(files) or FRESH(files)  # type: ignore[assignment, func-returns-value]
    try:
        for i, content in edits:
            if content is None:
                files.pop(i, None)
            else:
                files[i] = content
            texts = {f"Book/F{j}.lean": written(decls).encode() for j, decls in files.items()}
            after = before.replace(MemTree(texts), [f"Book/F{i}.lean"], ["Book"])  # derived from `before`'s
            assert mapped(after) == fresh(after)
            before = indexed(files, kept)  # derived from the last maps made, `after`'s, though no file is its
            assert mapped(before) == fresh(before)
    finally:
        module._fresh = FRESH
    assert afresh == [] or len(files) > module.DERIVED_UP_TO


@settings(max_examples=100, deadline=None)
@given(TREE)
def test_the_paths_declaring_a_name_are_those_a_walk_of_the_declarations_finds(
        files: dict[int, list[tuple[str, str | None, bool]]]) -> None:
    tree = indexed(files, {})
    for name in [f"Book.{n}" for n in NAMES] + ["Book.anon", "Book.gone"]:
        assert tree.declaring(name) == [path for path, d in tree.decls() if d.name == name]


def test_a_census_listing_its_files_in_another_order_is_mapped_afresh() -> None:
    """`x` is declared in both files, with a hole in B's: the last declaration of a key is B's in the order A, B and
    A's in the order B, A, whatever the census mapped before listed."""
    a, b = indexed({0: [("theorem", "foo", False)], 1: [("theorem", "foo", True)]}, {}).files.values()
    first = Census({"Book/F1.lean": b, "Book/F0.lean": a})
    assert first.by_key["Book.foo"] is a.decls[0]
    second = Census({"Book/F0.lean": a, "Book/F1.lean": b})
    assert second.by_key["Book.foo"] is b.decls[0] and second.by_key["Book.foo"].holes
