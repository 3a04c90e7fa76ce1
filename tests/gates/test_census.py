"""The census over whole trees: generated ones with a known tally, and bad input."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from leangen import write_tree

from gates.census import census
from gates.imports import ImportGraph
from gates.tree import DirTree, MemTree
from orchestrator.cli import main
from tests.conftest import git, write


def test_generated_tree_matches_the_generators_tally(tmp_path: Path) -> None:
    tally = write_tree(tmp_path, files=30, decls_per_file=40, seed=7)
    result = census(DirTree(tmp_path), ["Book"])
    assert result.total_sorries == tally.sorries
    assert result.total_admits == tally.admits
    assert sorted(d.name for _, d in result.axioms()) == sorted(tally.axioms)
    assert sum(len(f.decls) for f in result.files.values()) == tally.decls
    per_decl: dict[str, int] = {}
    for loc in result.locations():
        assert loc.declaration is not None
        per_decl[loc.declaration] = per_decl.get(loc.declaration, 0) + 1
    assert per_decl == tally.per_decl
    assert result.problems == []


def test_outside_git_only_git_s_and_lake_s_folders_are_skipped(tmp_path: Path) -> None:
    for folder in (".lake/packages/mathlib", "lake-packages/std", ".git", "build/lib", "Book/build"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "X.lean").write_text("theorem x : True := sorry\n")
    (tmp_path / "Book" / "A.lean").write_text("theorem a : True := sorry\n")
    result = census(DirTree(tmp_path))
    assert list(result.files) == ["Book/A.lean", "Book/build/X.lean", "build/lib/X.lean"]


def test_in_a_repository_the_tree_is_what_git_would_commit(tmp_path: Path) -> None:
    files = {"Book/A.lean": "theorem a : True := sorry\n", "Book/build/Cheat.lean": "axiom cheat : False\n",
             "Book/node_modules/B.lean": "theorem b : True := sorry\n", "Book/Gone.lean": "theorem g : True := sorry\n",
             "Book/out/Skip.lean": "theorem s : True := sorry\n",
             ".lake/packages/m/M.lean": "theorem m : True := sorry\n", ".gitignore": ".lake/\nBook/out/\n"}
    write(tmp_path, files)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "Book/Gone.lean", ".gitignore")
    git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "Book/Gone.lean").unlink()  # tracked, deleted: no longer there to commit
    (tmp_path / "Book/Tracked.lean").write_text("theorem t : True := sorry\n")
    result = census(DirTree(tmp_path), ["Book"])
    assert list(result.files) == ["Book/A.lean", "Book/Tracked.lean", "Book/build/Cheat.lean",
                                  "Book/node_modules/B.lean"]
    assert [d.name for _, d in result.axioms()] == ["cheat"]
    assert sorted(census(DirTree(tmp_path / "Book"), ["build"]).files) == ["build/Cheat.lean"]


def test_lean_roots_limit_the_census(tmp_path: Path) -> None:
    for rel in ("Book/A.lean", "Book.lean", "Scratch/B.lean", "Bookish/C.lean"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("theorem a : True := sorry\n")
    assert sorted(census(DirTree(tmp_path), ["Book"]).files) == ["Book.lean", "Book/A.lean"]


def test_without_roots_only_the_state_folder_holds_no_project_file(tmp_path: Path) -> None:
    """The state folder keeps an external prover's returned copies of project files: they are not the project. No
    other folder is left out for its name: a committed file in a hidden one can hold a sorry or an axiom too."""
    for rel in ("Book/A.lean", ".prover-state/prover_results/job-1/Book/A.lean", "Book/.scratch/B.lean"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("theorem a : True := sorry\n")
    assert sorted(census(DirTree(tmp_path)).files) == ["Book/.scratch/B.lean", "Book/A.lean"]


def test_sorries_counts_committed_files_in_hidden_folders(make_repo: Callable[..., Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({".hid/A.lean": "theorem a : True := sorry\n", "sub/.x/B.lean": "axiom bad : False\n",
                      ".prover-state/prover_results/j/Book/C.lean": "theorem c : True := sorry\n"})
    (repo / "lakefile.toml").write_text('name = "book"\n')  # no library: no Lean roots, every Lean file counts
    git(repo, "commit", "-qam", "no roots")
    assert main(["sorries", "--json", "--repo", str(repo)]) == 0
    found = json.loads(capsys.readouterr().out)
    text = json.dumps(found)
    assert ".hid/A.lean" in text and "sub/.x/B.lean" in text and "bad" in text
    assert ".prover-state" not in text


def test_non_utf8_file_is_reported_and_still_counted(tmp_path: Path) -> None:
    (tmp_path / "A.lean").write_bytes(b"-- caf\xe9\ntheorem a : True := sorry\n")
    result = census(DirTree(tmp_path))
    assert result.total_sorries == 1
    assert any("not valid UTF-8 at byte 6" in p for p in result.problems)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_is_reported_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "A.lean").write_text("theorem a : True := sorry\n")
    locked = tmp_path / "B.lean"
    locked.write_text("theorem b : True := sorry\n")
    locked.chmod(0)
    result = census(DirTree(tmp_path))
    assert result.total_sorries == 1
    assert any(p.startswith("B.lean: cannot be read") for p in result.problems)


def test_unreadable_file_in_memory_tree_is_reported() -> None:
    class Flaky(MemTree):
        def read(self, path: str) -> bytes:
            if path == "B.lean":
                raise PermissionError(13, "Permission denied")
            return super().read(path)

    result = census(Flaky({"A.lean": b"theorem a : True := sorry\n", "B.lean": b""}))
    assert result.total_sorries == 1
    assert result.problems == ["B.lean: cannot be read (Permission denied); skipped"]


def test_symlinks_out_of_the_tree_are_skipped_and_reported(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "X.lean").write_text("theorem x : True := sorry\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "A.lean").write_text("theorem a : True := sorry\n")
    (tree / "Link.lean").symlink_to(outside / "X.lean")
    (tree / "Dir").symlink_to(outside, target_is_directory=True)
    (tree / "Inside.lean").symlink_to(tree / "A.lean")
    result = census(DirTree(tree))
    assert sorted(result.files) == ["A.lean", "Inside.lean"]
    assert sorted(result.problems) == ["Dir: symlinked directory not followed",
                                       "Link.lean: symlink to outside the tree skipped"]


def test_file_ending_inside_a_comment_is_reported(tmp_path: Path) -> None:
    (tmp_path / "A.lean").write_text("theorem a : True := sorry\n/- unfinished")
    result = census(DirTree(tmp_path))
    assert result.total_sorries == 1
    assert result.problems == ["A.lean: line 2: a block comment is never closed"]


def test_json_shape(tmp_path: Path) -> None:
    (tmp_path / "A.lean").write_text("namespace N\naxiom ax : False\ntheorem a : True := by admit\nend N\n")
    assert census(DirTree(tmp_path)).to_json() == {
        "total_sorries": 0,
        "total_admits": 1,
        "axioms": [{"name": "N.ax", "file": "A.lean", "line": 2}],
        "locations": [{"file": "A.lean", "line": 3, "column": 23, "declaration": "N.a", "keyword": "admit"}],
    }


HIDES = 'namespace Book\ndef msg : String := throwError "{ "\naxiom trustMe : False\n-- " }"\nend Book\n'


def _tree(files: dict[str, str]) -> MemTree:
    return MemTree({path: text.encode() for path, text in files.items()})


@pytest.mark.parametrize(("imports", "seen"), [
    ("import Book.Plain\n", True),  # `Book.Plain` imports nothing: `throwError` is its own function
    ("import Book.Meta\n", False),  # `Book.Meta` imports Lean: `throwError` is Lean's keyword
    ("import Book.Plain\nimport Book.Meta\n", False),
    ("import «Book».«Plain»\n", True),
])
def test_a_file_s_keywords_come_through_the_project_s_imports(imports: str, seen: bool) -> None:
    files = {"Book/Plain.lean": "def throwError (s : String) : String := s\n", "Book/Meta.lean": "import Lean\n",
             "Book/A.lean": imports + HIDES}
    result = census(_tree(files), ["Book"])
    assert [d.name for _, d in result.axioms()] == (["Book.trustMe"] if seen else [])
    assert not [m for m in result.files["Book/A.lean"].markers if m.kind == "ambiguous"]


def test_a_changed_import_reads_its_unchanged_importers_again() -> None:
    """`Book.Meta` stops importing Lean: the unchanged `Book.A` importing it now holds a plain string."""
    files = {"Book/Meta.lean": "import Lean\n", "Book/A.lean": "import Book.Meta\n" + HIDES}
    before = census(_tree(files), ["Book"])
    assert [d.name for _, d in before.axioms()] == []
    changed = {**files, "Book/Meta.lean": "def throwError (s : String) : String := s\n"}
    after = before.replace(_tree(changed), ["Book/Meta.lean"], ["Book"])
    assert [d.name for _, d in after.axioms()] == ["Book.trustMe"]
    assert after.files["Book/A.lean"] is not before.files["Book/A.lean"]
    same = before.replace(_tree(files), ["Book/Meta.lean"], ["Book"])
    assert same.files["Book/A.lean"] is before.files["Book/A.lean"]  # nothing it reads changed: kept


def test_a_long_import_chain_is_followed_without_recursion() -> None:
    files = {f"Book/M{i}.lean": f"import Book.M{i + 1}\n" for i in range(3000)}
    files["Book/M3000.lean"] = "import Lean\n"
    files["Book/M0.lean"] += HIDES
    assert [d.name for _, d in census(_tree(files), ["Book"]).axioms()] == []


def test_an_import_with_escaped_components_is_the_module_it_names() -> None:
    files = {"Book/A.lean": "theorem foo : True := trivial\n", "Book/B.lean": "import «Book».A\n",
             "Book/C.lean": "import «Book».«A»\n", "Book/D.lean": "import Book.A\n"}
    result = census(_tree(files), ["Book"])
    assert result.files["Book/B.lean"].imports == ["Book.A"]
    assert ImportGraph(result).dependents({"Book/A.lean"}) == {"Book/A.lean", "Book/B.lean", "Book/C.lean",
                                                              "Book/D.lean"}
