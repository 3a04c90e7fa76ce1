"""The Worker's tools: what they do, and every way out of the working copy they refuse."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agents.model import ToolCall
from agents.tools import SPECS, Workspace
from gates.build import LakeCompiler
from gates.config import BuildConfig, GatesConfig
from tests.conftest import git, sandbox, write

STANDIN = Path(__file__).parent.parent / "standin" / "lean_checker.py"
A = "namespace Book\n\ntheorem easy : True := trivial\n\ntheorem hard : 1 = 1 := by\n  sorry\n\nend Book\n"


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


def call(ws: Workspace, tool: str, **args: object) -> tuple[str, bool]:
    result = ws.call(ToolCall("t1", tool, dict(args)))
    assert result.call_id == "t1"
    return result.content, result.is_error


def test_every_spec_tool_has_a_handler() -> None:
    assert {s.name for s in SPECS} == {"read_file", "write_file", "edit_file", "list_files", "search", "lean_check",
                                        "sorries", "read_declaration", "open_issue", "finish", "submit_to_prover",
                                        "prover_result", "apply_prover_result"}


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
