"""The Worker's tools: what they do, and every way out of the working copy they refuse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agents import gitread
from agents.lookup import Lookup
from agents.model import ToolCall
from agents.tools import SPECS, Workspace, invoke
from gates.build import LakeCompiler, reading
from gates.census import census
from gates.config import BuildConfig, GatesConfig
from gates.tree import DirTree
from tests.conftest import git, sandbox, write

STANDIN = Path(__file__).parent.parent / "standin" / "lean_checker.py"
A = "namespace Book\n\ntheorem easy : True := trivial\n\ntheorem hard : 1 = 1 := by\n  sorry\n\nend Book\n"
LEMMA = "namespace Order\n\ntheorem le_refl' (a : Nat) : a ≤ a := Nat.le_refl a\n\nend Order\n"
DEP = ".lake/packages/mathlib/Mathlib/Order/Basic.lean"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "work"
    write(root, {"Book/A.lean": A, "Book/Sub/B.lean": "import Book.A\n", "lakefile.toml": 'name = "b"\n',
                 "notes.md": "hello\n", ".gitignore": ".lake/\n", ".lake/build/x.olean": "bin"})
    git(root, "init", "-q")
    (tmp_path / "secret.txt").write_text("outside\n")
    (root / "Book/escape.lean").symlink_to(tmp_path / "secret.txt")
    (root / "Book/lake.lean").symlink_to(root / "lakefile.toml")
    compiler = LakeCompiler(root, BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}"), sandbox())
    return Workspace(root, ["Book/*.lean"], ["lakefile.toml", ".github/**"], ".prover-state", ["Book"], compiler)


@pytest.fixture
def linked(ws: Workspace, tmp_path: Path) -> Workspace:
    """`ws` whose `.lake/packages` links to the main checkout's, as a working copy's does; a package file links out."""
    main = tmp_path / "main/.lake/packages"
    write(main, {"mathlib/Mathlib/Order/Basic.lean": LEMMA, "mathlib/.lake/build/Built.lean": LEMMA,
                 "mathlib/.git/config": "[core]\n", "batteries/Batteries.lean": "-- batteries\n"})
    (main / "mathlib/Mathlib/Escape.lean").symlink_to(tmp_path / "secret.txt")
    (ws.root / ".lake/packages").symlink_to(main, target_is_directory=True)
    return Workspace(ws.root, ws.scope, ws.protected, ws.state_dir, ws.lean_roots, ws.compiler)


def call(ws: Workspace, tool: str, **args: object) -> tuple[str, bool]:
    result = ws.call(ToolCall("t1", tool, dict(args)))
    assert result.call_id == "t1"
    return result.content, result.is_error


def test_every_spec_tool_has_a_handler() -> None:
    assert {s.name for s in SPECS} == {"read_file", "write_file", "edit_file", "list_files", "search", "lean_check",
                                        "lean_goal", "sorries", "read_declaration", "open_issue", "finish",
                                        "submit_to_prover", "prover_result", "apply_prover_result"}


def test_read_write_edit_within_the_scope(ws: Workspace) -> None:
    assert call(ws, "read_file", path="Book/A.lean") == (A, False)
    assert call(ws, "read_file", path="Book/A.lean", start_line=5, end_line=6) == (
        "theorem hard : 1 = 1 := by\n  sorry\n", False)
    assert call(ws, "write_file", path="Book/New.lean", content="def x := 1\n")[1] is False
    assert (ws.root / "Book/New.lean").read_text() == "def x := 1\n"
    assert call(ws, "edit_file", path="Book/A.lean", old_string="  sorry", new_string="  rfl") == (
        "edited Book/A.lean", False)
    assert "  rfl" in (ws.root / "Book/A.lean").read_text()


@pytest.mark.parametrize(
    ("tool", "args", "reason"),
    [
        ("read_file", {"path": "../secret.txt"}, "outside the repository"),
        ("read_file", {"path": "Book/escape.lean"}, "outside the repository"),
        ("read_file", {"path": "/etc/passwd"}, "outside the repository"),
        ("read_file", {"path": ".git/config"}, "in the git folder"),
        ("read_file", {"path": ".lake/build/x.olean"}, "ignored by git: it would never be committed"),
        ("write_file", {"path": ".lake/Book/A.lean", "content": ""}, "ignored by git"),
        ("write_file", {"path": "Book/Sub/B.lean", "content": ""}, "outside the Scope"),
        ("write_file", {"path": "notes.md", "content": ""}, "outside the Scope"),
        ("write_file", {"path": "lakefile.toml", "content": ""}, "protected"),
        ("write_file", {"path": "Book/lake.lean", "content": ""}, "lakefile.toml is protected"),
        ("write_file", {"path": "Book/escape.lean", "content": ""}, "outside the repository"),
        ("edit_file", {"path": "Book/A.lean", "old_string": "theorem", "new_string": "lemma"}, "occurs 2 times"),
        ("edit_file", {"path": "Book/A.lean", "old_string": "absent", "new_string": "x"}, "occurs 0 times"),
        ("open_issue", {"slug": "../../escape", "body": "x"}, "slug"),
        ("open_issue", {"slug": "note\n", "body": "x"}, "slug"),
        ("lean_check", {"path": "notes.md"}, "not a Lean file"),
        ("read_declaration", {"name": "nope"}, "no declaration named"),
    ],
)
def test_refusals_name_the_reason_and_change_nothing(ws: Workspace, tool: str, args: dict[str, object],
                                                     reason: str) -> None:
    before = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()}
    text, error = call(ws, tool, **args)
    assert error and reason in text, text
    assert {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()} == before
    assert (ws.root.parent / "secret.txt").read_text() == "outside\n"


def test_unknown_tools_and_bad_arguments_are_errors_not_crashes(ws: Workspace) -> None:
    assert call(ws, "rm_rf")[1] is True
    text, error = call(ws, "read_file", file="Book/A.lean")
    assert error and "bad arguments for read_file" in text


def test_list_search_sorries_and_declarations(ws: Workspace) -> None:
    # the symlink leaving the copy is not listed; the one inside it is
    assert call(ws, "list_files", glob="Book/**/*.lean")[0].splitlines() == [
        "Book/A.lean", "Book/Sub/B.lean", "Book/lake.lean"]
    assert call(ws, "search", pattern=r"theorem \w+", glob="Book/*.lean")[0].splitlines()[:2] == [
        "Book/A.lean:3: theorem easy : True := trivial", "Book/A.lean:5: theorem hard : 1 = 1 := by"]
    assert call(ws, "sorries")[0].splitlines() == ["1 sorry, 0 admit", "Book/A.lean:6:2: sorry in Book.hard"]
    text, error = call(ws, "read_declaration", name="hard")
    assert not error and text.startswith("-- Book/A.lean:5 (theorem Book.hard)\ntheorem hard")


def test_lean_check_returns_the_compilers_diagnostics(ws: Workspace) -> None:
    text, error = call(ws, "lean_check", path="Book/A.lean")
    assert not error and text.startswith("ok: 0 error(s)") and "declaration uses 'sorry'" in text
    write(ws.root, {"Book/C.lean": "theorem c : True := absurd_marker\n"})
    text, _ = call(ws, "lean_check", path="Book/C.lean")
    assert text.startswith("failed (exit 1): 1 error(s)") and "type mismatch" in text


def test_open_issue_and_finish(ws: Workspace) -> None:
    assert call(ws, "open_issue", slug="missing-lemma", body="Mathlib lacks X")[1] is False
    assert (ws.root / ".prover-state/issues/missing-lemma.md").read_text() == "Mathlib lacks X\n"
    assert ws.report is None
    call(ws, "finish", report="done")
    assert ws.report == "done"


def test_the_worker_opens_new_issues_only_and_never_the_orchestrators(tmp_path: Path) -> None:
    root = tmp_path / "work"
    write(root, {"Book/A.lean": A, ".prover-state/issues/unfaithful-thm-2.1.md": "# judged different\n",
                 ".prover-state/issues/old.md": "a person's note\n"})
    compiler = LakeCompiler(root, BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}"), sandbox())
    ws = Workspace(root, ["Book/*.lean"], [], ".prover-state", ["Book"], compiler,
                   gates=GatesConfig(max_new_issues=2, max_issue_chars=100))
    refused = {
        "overwrite the judge's": ("write_file", {"path": ".prover-state/issues/unfaithful-thm-2.1.md",
                                                 "content": "resolved\n"}, "reserved for the judge"),
        "edit a person's": ("edit_file", {"path": ".prover-state/issues/old.md", "old_string": "a person",
                                          "new_string": "nobody"}, "already exists"),
        "forge advice": ("open_issue", {"slug": "consultant_advice_cycle_999", "body": "Restate it."},
                         "reserved for the Consultant"),
        "too long": ("open_issue", {"slug": "essay", "body": "x" * 200}, "at most 100"),
    }
    for what, (tool, args, reason) in refused.items():
        text, error = call(ws, tool, **args)
        assert error and reason in text, (what, text)
    assert (root / ".prover-state/issues/unfaithful-thm-2.1.md").read_text() == "# judged different\n"
    assert call(ws, "open_issue", slug="first", body="why")[1] is False
    assert call(ws, "open_issue", slug="first", body="why, better said")[1] is False  # its own, this cycle
    assert call(ws, "write_file", path=".prover-state/issues/second.md", content="x\n")[1] is False
    text, error = call(ws, "open_issue", slug="third", body="one too many")
    assert error and "at most 2 issues per cycle" in text


def test_lean_check_keeps_the_information_messages_lean_prints_without_a_position(ws: Workspace) -> None:
    write(ws.root, {".scratch/Find.lean": "import Book.A\n\n#check Book.easy\n\nexample : True := by\n  exact?\n\n"
                                          "theorem w : 1 = 1 := by\n  sorry\n"})
    text, error = call(ws, "lean_check", path=".scratch/Find.lean")
    # Lean printed `Book.easy : True` and `Try this` bare, before the sorry's warning: the parser kept them nowhere.
    lines = text.splitlines()
    assert not error and lines[:2] == ["ok: 0 error(s)", "information: Book.easy : True"]
    assert text.index("exact Book.easy") < text.index(".scratch/Find.lean:8:8: warning: declaration uses 'sorry'")


def test_the_dependencies_are_read_where_the_link_pointed_and_never_written(linked: Workspace,
                                                                            tmp_path: Path) -> None:
    assert call(linked, "read_file", path=DEP) == (LEMMA, False)
    assert call(linked, "read_file", path=f"./Book/../{DEP}", start_line=3, end_line=3) == (LEMMA.splitlines(True)[2],
                                                                                           False)
    for tool, args, reason in [
        ("write_file", {"path": DEP, "content": ""}, f"{DEP} is a dependency's source (under .lake/packages/): "
                                                     "read-only"),
        ("edit_file", {"path": DEP, "old_string": "le_refl'", "new_string": "x"}, "read-only"),
        ("read_file", {"path": ".lake/packages/mathlib/Mathlib/Escape.lean"}, "leads out of the dependencies' folder"),
        ("read_file", {"path": ".lake/packages/mathlib/.git/config"}, "git or build folder"),
        ("lean_check", {"path": DEP}, "is a dependency's source; check a file of the project"),
        ("search", {"pattern": "outside", "glob": ".lake/packages/../../*"}, "leads out of the dependencies' folder"),
    ]:
        text, error = call(linked, tool, **args)
        assert error and reason in text, (tool, text)
    assert (tmp_path / "main" / DEP).read_text() == LEMMA
    # Code the Worker runs may re-point the link; what it pointed to when the session began is what is read.
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, {"mathlib/Mathlib/Order/Basic.lean": "planted\n"})
    (linked.root / ".lake/packages").unlink()
    (linked.root / ".lake/packages").symlink_to(elsewhere, target_is_directory=True)
    assert call(linked, "read_file", path=DEP) == (LEMMA, False)


def test_a_search_or_listing_of_the_project_says_the_dependencies_were_left_out(linked: Workspace) -> None:
    left_out = ("[the dependencies under .lake/packages/ (batteries, mathlib) were not {}: give a glob under it, e.g. "
                "`.lake/packages/mathlib/**/*.lean`]")
    assert call(linked, "search", pattern=r"le_refl'") == ("(no matches)\n" + left_out.format("searched"), False)
    assert call(linked, "search", pattern=r"theorem easy")[0].splitlines() == [
        "Book/A.lean:3: theorem easy : True := trivial", left_out.format("searched")]
    listing = call(linked, "list_files")[0].splitlines()
    assert listing[-1] == left_out.format("listed") and not any(".lake" in f for f in listing[:-1])


def test_a_glob_under_the_dependencies_searches_their_lean_sources_only(linked: Workspace) -> None:
    assert call(linked, "search", pattern=r"le_refl'", glob=".lake/packages/mathlib/Mathlib/Order/**/*.lean") == (
        f"{DEP}:3: theorem le_refl' (a : Nat) : a ≤ a := Nat.le_refl a\n"
        "[searched 1 Lean file(s) of .lake/packages/ (mathlib)]", False)
    # Not the package's build folder, nor the file linking out of the dependencies.
    assert call(linked, "search", pattern="le_refl'|outside|batteries", glob=".lake/packages/**")[0].splitlines() == [
        ".lake/packages/batteries/Batteries.lean:1: -- batteries", f"{DEP}:3: theorem le_refl' (a : Nat) : a ≤ a := "
        "Nat.le_refl a", "[searched 2 Lean file(s) of .lake/packages/ (batteries, mathlib)]"]
    assert call(linked, "list_files", glob=".lake/packages/**/*.lean")[0].splitlines() == [
        ".lake/packages/batteries/Batteries.lean", DEP,
        "[listed 2 Lean file(s) of .lake/packages/ (batteries, mathlib)]"]
    assert call(linked, "search", pattern="x", glob=".lake/packages/mathlib/Nothing/*.lean")[0] == (
        "(no matches)\n[no Lean file of the dependencies matches .lake/packages/mathlib/Nothing/*.lean]")


def test_find_declaration_is_offered_and_names_a_dependency_the_worker_can_read(linked: Workspace) -> None:
    assert linked.packages is not None
    lookup = Lookup(census(DirTree(linked.root), ["Book"]), linked.packages)
    ws = Workspace(linked.root, linked.scope, linked.protected, linked.state_dir, linked.lean_roots, linked.compiler,
                   extra=[lookup.tool()])
    assert [s.name for s in ws.specs()][-1] == "find_declaration" and ws.known("find_declaration")
    assert not linked.known("find_declaration")
    text, error = call(ws, "find_declaration", name="le_refl'")
    assert not error and text.startswith(f"-- {DEP}:3 (theorem Order.le_refl')\ntheorem le_refl'")
    assert call(ws, "read_file", path=text.split()[1].rsplit(":", 1)[0]) == (LEMMA, False)
    assert call(ws, "find_declaration", name="hard")[0].startswith("-- Book/A.lean:5 (theorem Book.hard)")


def test_lean_try_checks_a_text_as_a_scratch_file_of_its_own_and_leaves_nothing(ws: Workspace) -> None:
    """The Planner's and the Consultant's check: Lean's answer on the text, and the working copy as it was (but for
    what Lake builds of its imports, in the build folder)."""
    before = sorted(p.relative_to(ws.root).as_posix() for p in ws.root.rglob("*")
                    if not p.is_relative_to(ws.root / ".lake/build"))
    answer = ws.try_lean("import Book.A\n\ntheorem t : True := by\n  exact absurd_marker\n")
    assert answer.startswith("failed (exit 1): 1 error(s)\n.scratch/Try_") and ":4:8: error: type mismatch" in answer
    fine = ws.try_lean("import Book.A\n\ntheorem t (n : Nat) : n = n := by\n  sorry\n")
    assert fine.startswith("ok: 0 error(s)") and "declaration uses 'sorry'" in fine
    assert sorted(p.relative_to(ws.root).as_posix() for p in ws.root.rglob("*")
                  if p.name != ".scratch" and not p.is_relative_to(ws.root / ".lake/build")) == before
    assert not any((ws.root / ".scratch").iterdir())


def test_lean_try_of_a_read_only_session_cannot_write_the_build_outputs(ws: Workspace) -> None:
    """The Planner's and the Consultant's check runs outside the Worker's session, where no record of the build
    outputs would undo a write: `.lake` is read-only to it (the Worker's own checks may write there)."""
    (ws.root / ".lake" / "build" / "lib").mkdir(parents=True)
    evil = '#eval IO.FS.writeFile ".lake/build/lib/Evil.olean" "boom"\n'
    ws.compiler = reading(ws.compiler)
    answer = ws.try_lean(evil)
    assert "error" in answer and not (ws.root / ".lake/build/lib/Evil.olean").exists()
    assert isinstance(ws.compiler, LakeCompiler) and not ws.compiler.outputs


def test_a_git_command_that_runs_too_long_is_refused_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    def slow(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(args, gitread.TIMEOUT_S)

    monkeypatch.setattr(gitread.subprocess, "run", slow)
    (tool,) = gitread.GitReader(tmp_path, "HEAD").tools()
    answer, error = invoke("git", tool.run, {"action": "log", "grep": "(a*)*b"})
    assert error and answer == f"refused: git took over {gitread.TIMEOUT_S} s: narrow it by path or line range"
