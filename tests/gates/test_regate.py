"""What a re-applied change compiles again: only files whose imports hold both it and what landed since its base."""

from __future__ import annotations

from gates.census import Census, census
from gates.regate import plan
from gates.tree import MemTree

ROOTS = ["Book"]


def tree(**files: str) -> Census:
    """`A="import Book.B …"` is Book/A.lean."""
    body = "\n\nnamespace Book\n\nend Book\n"
    return census(MemTree({f"Book/{k}.lean": f"{v}{body}".encode() for k, v in files.items()}), ROOTS)


def lean(*names: str) -> set[str]:
    return {f"Book/{n}.lean" for n in names}


def test_disjoint_changes_compile_nothing_again_and_keep_the_kernel_verdict() -> None:
    merged = tree(A="import Mathlib", B="import Mathlib", C="import Book.A")
    r = plan(merged, lean("B"), lean("A") | {".prover-state/history.jsonl", "plan.md"}, ROOTS)
    assert r.files == frozenset() and not r.kernel


def test_a_file_importing_both_sides_is_compiled_again() -> None:
    """B's change is harmless alone and A's too; C imports both, so only C can tell."""
    merged = tree(A="import Mathlib", B="import Mathlib", C="import Book.A\nimport Book.B", D="import Book.C")
    r = plan(merged, lean("B"), lean("A"), ROOTS)
    assert r.files == lean("C", "D") and r.kernel


def test_a_change_importing_what_landed_is_compiled_again() -> None:
    """A renamed a lemma (or removed an instance) that B's new proof uses: B imports A."""
    merged = tree(A="import Mathlib", B="import Book.A", E="import Mathlib")
    r = plan(merged, lean("B"), lean("A"), ROOTS)
    assert r.files == lean("B") and r.kernel


def test_what_landed_importing_the_change_is_compiled_again() -> None:
    merged = tree(A="import Book.B", B="import Mathlib")
    assert plan(merged, lean("B"), lean("A"), ROOTS).files == lean("A")


def test_a_transitive_import_counts() -> None:
    merged = tree(A="import Mathlib", M="import Book.A", B="import Book.M")
    assert plan(merged, lean("B"), lean("A"), ROOTS).files == lean("B")


def test_a_file_deleted_by_what_landed_that_the_change_imports() -> None:
    merged = tree(B="import Book.A")  # A is gone: B still names its module
    assert plan(merged, lean("B"), lean("A"), ROOTS).files == lean("B")


def test_a_file_the_change_deletes_that_what_landed_imports() -> None:
    merged = tree(A="import Book.B")
    assert plan(merged, lean("B"), lean("A"), ROOTS).files == lean("A")


def test_a_file_added_by_what_landed_under_a_module_the_change_imports() -> None:
    """An import that named nothing of the project at the base resolves to a new file in the merged tree."""
    merged = census(MemTree({"Book/B.lean": b"import Book.Extra\n", "Book/Extra.lean": b"import Mathlib\n"}), ROOTS)
    assert plan(merged, lean("B"), lean("Extra"), ROOTS).files == lean("B")


def test_lake_or_toolchain_files_on_either_side_regate_in_full() -> None:
    merged = tree(A="import Mathlib", B="import Mathlib")
    for path in ("lakefile.toml", "lean-toolchain", "sub/lake-manifest.json", "scripts/Gen.lean"):
        assert plan(merged, lean("B"), lean("A") | {path}, ROOTS).files is None
        assert plan(merged, lean("B") | {path}, lean("A"), ROOTS).files is None


def test_with_build_time_code_any_other_file_regates_in_full() -> None:
    """`include_str` can read a file no import names."""
    merged = tree(A="import Mathlib", B="import Mathlib")
    theirs = lean("A") | {"data/table.txt"}
    assert plan(merged, lean("B"), theirs, ROOTS).files == frozenset()
    r = plan(merged, lean("B"), theirs, ROOTS, build_time_code=True)
    assert r.files is None and r.kernel
    assert r.why == "data/table.txt changed, which Lean may read outside the import graph: every gate runs again"


def test_a_declaration_the_change_names_outside_its_imports_is_asked_again() -> None:
    """The kernel gate excuses a sorryAx by the verdicts on the project declarations a proof names, wherever they
    are: one in a file that imports what landed may answer otherwise now."""
    merged = census(MemTree({
        "Book/A.lean": b"import Mathlib\n\nnamespace Book\n\ntheorem a : True := trivial\n\nend Book\n",
        "Book/C.lean": b"import Book.A\n\nnamespace Book\n\ntheorem c : True := trivial\n\nend Book\n",
        "Book/B.lean": b"import Mathlib\n\nnamespace Book\n\ntheorem b : True := Book.c\n\nend Book\n"}), ROOTS)
    r = plan(merged, lean("B"), lean("A"), ROOTS)
    assert r.files == frozenset() and r.kernel and "Book/C.lean" in r.why
    assert not plan(merged, lean("B"), lean("E"), ROOTS).kernel


def test_a_changed_lock_entry_in_a_file_the_change_reaches_is_asked_again() -> None:
    merged = census(MemTree({
        "Book/A.lean": b"import Mathlib\n\nnamespace Book\n\ntheorem a : True := trivial\n\nend Book\n",
        "Book/B.lean": b"import Mathlib\n\nnamespace Book\n\ntheorem b : True := trivial\n\nend Book\n"}), ROOTS)
    relocked = plan(merged, lean("B"), lean("A"), ROOTS, relocked={"Book.b"})
    assert relocked.kernel
    assert relocked.why == ("the statement lock changed for Book.b since the change was gated: the kernel gate asks "
                            "Lean again")
    assert not plan(merged, lean("B"), lean("A"), ROOTS, relocked={"Book.a"}).kernel
