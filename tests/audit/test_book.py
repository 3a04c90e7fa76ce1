"""The book's trusted text and pairing: configured files as a commit holds them, else the pairing ledger, which
records a doc comment once, when its pairing first lands."""

from __future__ import annotations

import json

from audit.book import Book, ledger_at, trusted
from audit.config import AuditConfig
from gates.census import census
from gates.tree import MemTree
from state.pairing import Author, Pairing, render
from state.statement_lock import Locked, StatementLock

DOC = "/-- Theorem 2.1 For every natural number $n$, $0 + n = n$. -/\n"
LEAN = f"namespace Book\n\n{DOC}theorem zero_add' (n : ℕ) : 0 + n = n := by\n  simp\n\nend Book\n"
EDITED = LEAN.replace("For every natural number $n$,", "For every $n$ with $0 < n$,").replace(
    "(n : ℕ) :", "(n : ℕ) (h : 0 < n) :")
MAPPING = {"thm:3.1": {"lean_symbol": "Book.three", "statement": "Three holds."}}
THREE = "namespace Book\n\ntheorem three : 3 = 3 := rfl\n\nend Book\n"
STATE = ".prover-state"


def tree(**files: str) -> MemTree:
    return MemTree({path: text.encode() for path, text in files.items()})


def book(base: MemTree, ledger: Pairing | None = None, config: AuditConfig | None = None, cycle: int = 1) -> Book:
    if ledger is not None:
        base = MemTree({**base.contents, f"{STATE}/pairing.json": render(ledger).encode()})
    return Book.at(base, "0123456789abcdef", census(base, ["Book"]), config or AuditConfig(), STATE, cycle)


def after(**files: str) -> object:
    return census(tree(**files), ["Book"])


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
    trusted_book = book(base, cycle=4)
    edited = census(tree(**{"Book/A.lean": EDITED}), ["Book"])
    [entity] = trusted_book.entities(edited)
    assert entity.nl == "For every natural number $n$, $0 + n = n$."  # the base's, not the edit
    assert entity.lean == ["Book.zero_add'"] and "later edits of it are not read" in entity.source
    assert trusted_book.pairing(census(base, ["Book"])) == {"Book.zero_add'": "thm:2.1"}

    recorded = trusted_book.record(edited)
    first = recorded.entities["thm:2.1"]
    assert (first.nl, first.declaration, first.cycle, first.by) == (entity.nl, "Book.zero_add'", 4, Author.PERSON)
    assert first.declarations["Book.zero_add'"].by is Author.PERSON
    later = book(tree(**{"Book/A.lean": EDITED}), recorded)  # a later base holds the edit: the record still wins
    [entity] = later.entities(edited)
    assert entity.nl == "For every natural number $n$, $0 + n = n$."
    assert entity.source.startswith("the doc comment of Book.zero_add' as it first landed (Book/A.lean:3 at ")


def test_a_new_doc_comment_is_its_own_first_version_and_a_removed_heading_unpairs_nothing() -> None:
    empty = tree(**{"Book/A.lean": "namespace Book\nend Book\n"})
    fresh = book(empty)
    [entity] = fresh.entities(after(**{"Book/A.lean": LEAN}))
    assert entity.source == "the doc comment of Book.zero_add' (Book/A.lean:3), first written by this change"
    assert entity.fresh
    landed = fresh.record(after(**{"Book/A.lean": LEAN}))
    assert landed.entities["thm:2.1"].declarations["Book.zero_add'"].by is Author.WORKER

    without_doc = "\n".join(line for line in EDITED.split("\n") if not line.startswith("/--"))
    assert "Theorem" not in without_doc
    stripped = after(**{"Book/A.lean": without_doc})
    for base in (book(tree(**{"Book/A.lean": LEAN})), book(tree(**{"Book/A.lean": without_doc}), landed)):
        [entity] = base.entities(stripped)
        assert entity.id == "thm:2.1" and entity.lean == ["Book.zero_add'"] and not entity.fresh
        assert base.pairing(stripped) == {"Book.zero_add'": "thm:2.1"}


def test_a_rewritten_heading_re_keys_nothing_and_records_no_text() -> None:
    trusted_book = book(tree(**{"Book/A.lean": LEAN}))
    rekeyed = after(**{"Book/A.lean": EDITED.replace("Theorem 2.1 For every", "Lemma 2.1: for every")})
    assert [(e.id, e.lean, e.nl) for e in trusted_book.entities(rekeyed)] == [
        ("thm:2.1", ["Book.zero_add'"], "For every natural number $n$, $0 + n = n$.")]
    assert list(trusted_book.record(rekeyed).entities) == ["thm:2.1"]


def test_a_number_repeated_in_another_folder_re_keys_no_entity() -> None:
    one = "namespace Book\n\n/-- Theorem 1.1 One holds. -/\ntheorem one : 1 = 1 := rfl\n\nend Book\n"
    other = one.replace("One holds.", "For positive n, one holds.").replace("theorem one", "theorem one'")
    base = tree(**{"Book/Ch1/A.lean": one})
    trusted_book = book(base)
    both = after(**{"Book/Ch1/A.lean": one, "Book/Ch2/B.lean": other})
    found = {e.id: (e.lean, e.nl, e.fresh) for e in trusted_book.entities(both)}
    assert found["thm:1.1"] == (["Book.one"], "One holds.", False)
    assert found["Ch2/thm:1.1"] == (["Book.one'"], "For positive n, one holds.", True)
    assert "Ch1/thm:1.1" not in found
    recorded = trusted_book.record(both)
    assert recorded.entities["thm:1.1"].nl == "One holds."  # keyed as it first landed, for good
    again = book(tree(**{"Book/Ch1/A.lean": one, "Book/Ch2/B.lean": other}), recorded)
    assert {e.id: e.lean for e in again.entities(both)} == {"thm:1.1": ["Book.one"], "Ch2/thm:1.1": ["Book.one'"]}


def test_a_declaration_joins_its_headings_entity_and_a_person_removing_one_unpairs_it() -> None:
    two = LEAN.replace("end Book", f"{DOC}theorem zero_add'' (n : ℕ) : 0 + n = n := by\n  simp\n\nend Book")
    trusted_book = book(tree(**{"Book/A.lean": LEAN}))
    for touching in (None, {"Book.zero_add''"}):  # the judge asks for what a change touched: the joined entity
        [entity] = trusted_book.entities(after(**{"Book/A.lean": two}), touching)
        assert entity.lean == ["Book.zero_add'", "Book.zero_add''"] and not entity.fresh
    assert trusted_book.entities(after(**{"Book/A.lean": LEAN}), {"Book.hard"}) == []
    recorded = trusted_book.record(after(**{"Book/A.lean": two}))
    assert list(recorded.entities["thm:2.1"].declarations) == ["Book.zero_add'", "Book.zero_add''"]
    # A person deleted one in a commit of their own: the base is theirs, so the loop drops it.
    person = book(tree(**{"Book/A.lean": LEAN}), recorded)
    assert list(person.record(None).entities["thm:2.1"].declarations) == ["Book.zero_add'"]


def test_the_books_lean_names_mean_what_they_meant_at_the_base() -> None:
    mapping = {"thm:2.1": {"lean_symbol": "zero_add'", "statement": "For every natural number $n$, $0 + n = n$."}}
    plain = LEAN.replace(DOC, "")
    base = tree(**{"Book/A.lean": plain, "extraction/lean_status.json": json.dumps(mapping)})
    decoy = plain + "\ntheorem zero_add' (n : ℕ) : 0 + n = n := by\n  simp\n"  # a root name ending the same
    assert book(base).pairing(after(**{"Book/A.lean": decoy})) == {"Book.zero_add'": "thm:2.1"}


def test_version_0_is_migrated_keeping_each_declarations_first_key() -> None:
    first = {"nl": "For every natural number $n$, $0 + n = n$.", "declaration": "Book.zero_add'",
             "source": "Book/A.lean:3 at 0123456789ab", "cycle": 2}
    rekeyed = {**first, "nl": "For positive $n$, $0 + n = n$.", "source": "Book/A.lean:3", "cycle": 7}
    old = {"docstrings": {"thm:2.1": first, "A/thm:2.1": rekeyed}}
    lock = StatementLock(statements={"Book.zero_add'": Locked(hash="h", entity="A/thm:2.1", score=3, cycle=7)})
    base = MemTree({"Book/A.lean": LEAN.encode(), f"{STATE}/book_text.json": json.dumps(old).encode(),
                    f"{STATE}/statement_lock.json": lock.model_dump_json().encode()})
    ledger, migrated = ledger_at(base, STATE)
    assert migrated and list(ledger.entities) == ["thm:2.1"]
    assert ledger.entities["thm:2.1"].nl == first["nl"] and ledger.entities["thm:2.1"].by is Author.MIGRATED
    trusted_book = Book.at(base, "0123456789abcdef", census(base, ["Book"]), AuditConfig(), STATE, 9)
    assert trusted_book.migrated and trusted_book.realign(lock).statements["Book.zero_add'"].entity == "thm:2.1"
    [entity] = trusted_book.entities(after(**{"Book/A.lean": EDITED}))
    assert (entity.id, entity.nl) == ("thm:2.1", first["nl"])
