"""What the gates compare of a base and a change is read from the files that differ (`Census.changes`), with the
answers the whole trees give: the proofs traded for a sorry and the closes that lean on a sorried declaration,
over random trees and edits (declarations moving between files, renamed, restated, names declared twice)."""

from __future__ import annotations

import re

from hypothesis import event, given, settings
from hypothesis import strategies as st

from gates import sorry
from gates.census import Census, census
from gates.index import FileIndex
from gates.lexer import ID_FIRST, ID_REST
from gates.tree import MemTree

NAMES = ["foo", "bar", "A.foo", "B.foo", "B.bar", "qux"]
# A declaration: its name, its statement, whether it holds a sorry, and the name its proof uses (if any).
DECL = st.tuples(st.sampled_from(NAMES), st.sampled_from(["True", "1 = 1"]), st.booleans(),
                 st.one_of(st.none(), st.sampled_from(NAMES)))
FILE = st.lists(DECL, min_size=1, max_size=4, unique_by=lambda d: d[0])  # Lean: a name once a file
TREE = st.dictionaries(st.integers(0, 4), FILE, max_size=5)
# A change: files rewritten or removed (None), several at once.
EDITS = st.lists(st.dictionaries(st.integers(0, 4), st.one_of(st.none(), FILE), min_size=1, max_size=3), min_size=1,
                 max_size=4)
_NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")


def text(decls: list[tuple[str, str, bool, str | None]]) -> str:
    body = []
    for name, statement, hole, uses in decls:
        proof = "sorry" if hole else (f"by exact {uses}" if uses else "rfl")
        body.append(f"theorem {name} : {statement} := {proof}")
    return "\n\n".join(body) + "\n"


def indexed(files: dict[int, list[tuple[str, str, bool, str | None]]],
            kept: dict[tuple[str, str], FileIndex]) -> Census:
    """The tree's census; a file whose text was indexed before keeps that index, as the cache of indexes does."""
    texts = {f"Book/F{i}.lean": text(decls) for i, decls in sorted(files.items())}
    tree = census(MemTree({path: t.encode() for path, t in texts.items()}), ["Book"])
    tree.files = {path: kept.setdefault((path, texts[path]), index) for path, index in tree.files.items()}
    return tree


def traded_whole(before: Census, after: Census) -> list[str]:
    """Every declaration of the base followed, as the gate did before it read only the files that differ."""
    now, old_keys = after.by_key, before.by_key.keys()
    out: list[str] = []
    gone: dict[str, list[str]] = {}
    for path, old in before.decls():
        if old.holes:
            continue
        mine = [d for d in after.files[path].decls if d.key == old.key] if path in after.files else []
        new = mine[-1] if mine else now.get(old.key)
        if new is None:
            gone.setdefault(old.statement_hash, []).append(old.name or "")
        elif new.holes:
            out.append(old.name or "")
    for _, new in after.decls():
        if new.holes and new.key not in old_keys and new.statement_hash in gone:
            out += [f"{name} (now {new.name})" for name in gone[new.statement_hash]]
    return out


def leaners_whole(before: Census, after: Census) -> dict[str, list[str]]:
    """Every declaration of the change walked for the names holding a hole."""
    holed = {h.name for h in after.holed()}
    closed = [(name, new) for h in before.holed()
              if h.name not in holed and (new := after.by_key.get(h.name)) is not None and (name := new.name)]
    holding: dict[str, str] = {}
    for _, d in after.decls():
        if d.name and d.name in holed:
            holding[d.name] = d.name
            holding.setdefault(d.name.rsplit(".", 1)[-1], d.name)
    out: dict[str, list[str]] = {}
    for name, new in closed:
        if used := {holding[n] for n in _NAMES.findall(new.body_code) if n in holding} - {name}:
            out[name] = sorted(used)
    return out


@settings(max_examples=200, deadline=None)
@given(TREE, EDITS)
def test_what_the_files_that_differ_say_is_what_the_whole_trees_say(
        start: dict[int, list[tuple[str, str, bool, str | None]]],
        edits: list[dict[int, list[tuple[str, str, bool, str | None]] | None]]) -> None:
    kept: dict[tuple[str, str], FileIndex] = {}
    files = dict(start)
    before = indexed(files, kept)
    for change in edits:
        for i, content in change.items():
            if content is None:
                files.pop(i, None)
            else:
                files[i] = content
        after = indexed(files, kept)
        differ, keys = before.changes(after)
        assert set(differ) == {p for p in before.files.keys() | after.files.keys()
                               if before.files.get(p) is not after.files.get(p)}
        assert keys >= {d.key for p in differ for c in (before, after) if p in c.files for d in c.files[p].decls}
        traded, leaners = sorry._traded(before, after), sorry._leaners(before, after)
        assert traded == traded_whole(before, after) and leaners == leaners_whole(before, after)
        event(f"traded {bool(traded)}, leaners {bool(leaners)}")
        before = after


def test_a_name_in_two_files_is_followed_twin_by_twin() -> None:
    """A name proved in one file and holding a sorry in a later one (Lean allows two private ones): a change that
    leaves the proved one traded nothing, whatever else it does; one that puts a sorry in it traded its proof."""
    kept: dict[tuple[str, str], FileIndex] = {}
    files = {0: [("foo", "True", False, None)], 1: [("foo", "True", True, None)], 2: [("bar", "True", True, None)]}
    before = indexed(files, kept)
    assert sorry._traded(before, indexed({**files, 2: [("bar", "True", False, None)]}, kept)) == []
    assert sorry._traded(before, indexed({**files, 1: [("qux", "True", True, None)]}, kept)) == []
    assert sorry._traded(before, indexed({**files, 0: [("foo", "True", True, None)]}, kept)) == ["foo"]


def test_both_twins_gone_and_one_statement_back_with_a_sorry_is_a_trade() -> None:
    """Two proved twins of different statements both removed while a new declaration with the earlier one's
    statement holds a sorry: that proof was traded, whichever twin the name stood for."""
    kept: dict[tuple[str, str], FileIndex] = {}
    files = {0: [("foo", "1 = 1", False, None)], 1: [("foo", "True", False, None)], 2: [("qux", "True", True, None)]}
    before = indexed(files, kept)
    after = indexed({0: [("bar", "1 = 1", True, None)], 1: [("B.bar", "True", False, None)],
                     2: [("qux", "True", False, None)]}, kept)
    assert before.holes == after.holes
    assert sorry._traded(before, after) == ["foo (now bar)"]


def test_a_short_name_stands_for_the_first_declaration_so_ending() -> None:
    """`foo` written where `A.foo` and `B.foo` both hold a sorry: the one declared first, in file order."""
    for first, second in (("A.foo", "B.foo"), ("B.foo", "A.foo")):
        kept: dict[tuple[str, str], FileIndex] = {}
        files = {0: [(first, "True", True, None)], 1: [(second, "True", True, None)], 2: [("qux", "True", True, None)]}
        before = indexed(files, kept)
        after = indexed({**files, 2: [("qux", "True", False, "foo")]}, kept)
        assert sorry._leaners(before, after) == {"qux": [first]}
        assert sorry.leaning(before, after) == [f"qux (uses {first})"]
