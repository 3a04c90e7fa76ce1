"""The book's trusted text: configured files as a commit holds them, and doc comments as they first landed."""

from __future__ import annotations

import json

from audit.book import Book, trusted
from audit.config import AuditConfig
from gates.census import census
from gates.tree import MemTree
from state.book_text import BookText

DOC = "/-- Theorem 2.1 For every natural number $n$, $0 + n = n$. -/\n"
LEAN = f"namespace Book\n\n{DOC}theorem zero_add' (n : ℕ) : 0 + n = n := by\n  simp\n\nend Book\n"
EDITED = LEAN.replace("For every natural number $n$,", "For every $n$ with $0 < n$,").replace(
    "(n : ℕ) :", "(n : ℕ) (h : 0 < n) :")
MAPPING = {"thm:3.1": {"lean_symbol": "Book.three", "statement": "Three holds."}}
THREE = "namespace Book\n\ntheorem three : 3 = 3 := rfl\n\nend Book\n"


def tree(**files: str) -> MemTree:
    return MemTree({path: text.encode() for path, text in files.items()})


def book(base: MemTree, first: BookText | None = None, config: AuditConfig | None = None) -> Book:
    return Book.at(base, "0123456789abcdef", census(base, ["Book"]), config or AuditConfig(), first or BookText())


def test_the_book_is_read_from_the_configured_files_of_the_base_only() -> None:
    base = tree(**{"Book/A.lean": THREE, "extraction/lean_status.json": json.dumps(MAPPING),
                   "notes/status.json": json.dumps({"thm:3.1": {"lean_symbol": "Book.three", "statement": "x"}})})
    found = book(base).entities(census(base, ["Book"]))
    assert [(e.id, e.nl, e.lean, e.source) for e in found] == [
        ("thm:3.1", "Three holds.", ["Book.three"], "extraction/lean_status.json [thm:3.1] at 0123456789ab")]
    narrow = book(base, config=AuditConfig(mappings=["notes/status.json"])).entities(census(base, ["Book"]))
    assert [e.nl for e in narrow] == ["x"]
    assert trusted(AuditConfig()) == ["blueprint/src/**", "**/lean_status.json", "**/entities/*.json"]


def test_a_doc_comment_is_the_books_text_as_it_first_landed() -> None:
    base = tree(**{"Book/A.lean": LEAN})
    trusted_book = book(base)
    after = census(tree(**{"Book/A.lean": EDITED}), ["Book"])
    [entity] = trusted_book.entities(after)
    assert entity.nl == "For every natural number $n$, $0 + n = n$."  # the base's, not the edit
    assert entity.lean == ["Book.zero_add'"] and "later edits are not read" in entity.source
    assert trusted_book.pairing(census(base, ["Book"])) == {"Book.zero_add'": "thm:2.1"}

    recorded = trusted_book.record(after, 4)
    first = recorded.docstrings["thm:2.1"]
    assert (first.nl, first.declaration, first.cycle) == (entity.nl, "Book.zero_add'", 4)
    later = book(tree(**{"Book/A.lean": EDITED}), recorded)  # a later base holds the edit: the record still wins
    [entity] = later.entities(after)
    assert entity.nl == "For every natural number $n$, $0 + n = n$."
    assert entity.source.startswith("the doc comment of Book.zero_add' as it first landed (Book/A.lean:3 at ")


def test_a_new_doc_comment_is_its_own_first_version_and_a_removed_one_still_pairs() -> None:
    empty = tree(**{"Book/A.lean": "namespace Book\nend Book\n"})
    [entity] = book(empty).entities(census(tree(**{"Book/A.lean": LEAN}), ["Book"]))
    assert entity.source == "the doc comment of Book.zero_add' (Book/A.lean:3), first written by this change"
    without_doc = "\n".join(line for line in EDITED.split("\n") if not line.startswith("/--"))
    assert "Theorem" not in without_doc
    stripped = census(tree(**{"Book/A.lean": without_doc}), ["Book"])
    [entity] = book(tree(**{"Book/A.lean": LEAN})).entities(stripped)
    assert entity.id == "thm:2.1" and entity.lean == ["Book.zero_add'"]
