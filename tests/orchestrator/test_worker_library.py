"""Whole cycles in which the Worker looks in the library: the main checkout's dependencies (Mathlib's sources under
`.lake/packages`, linked into its working copy) through `find_declaration`, `search` and `read_file` — the API
Worker's own tools, and Claude Code's `library` MCP server."""

from __future__ import annotations

import json

import pytest

from tests.engines import CLAUDE, CLAUDE_MODEL, need
from tests.orchestrator.harness import Project, configure, evaluation, strategy, user_text
from tests.standin.anthropic_server import text_reply, tool_use_reply

DEP = ".lake/packages/mathlib/Mathlib/Order/Basic.lean"
LEMMA = "namespace Order\n\ntheorem le_refl' (a : Nat) : a ≤ a := Nat.le_refl a\n\nend Order\n"
REPORT = "## Worked on\nBook.hard\n## Result\nfound Order.le_refl' in Mathlib"


@pytest.fixture
def library(project: Project) -> Project:
    """The project with a dependency in its checkout's `.lake/packages` (which git ignores)."""
    (project.repo / DEP).parent.mkdir(parents=True)
    (project.repo / DEP).write_text(LEMMA)
    return project


def test_the_worker_finds_searches_and_reads_a_dependencys_lemma(library: Project) -> None:
    library.agents.plan(strategy("Book/A.lean"))
    library.agents.work([("find_declaration", {"name": "le_refl'"})],
                        [("search", {"pattern": r"le_refl'"}),
                         ("search", {"pattern": r"le_refl'", "glob": ".lake/packages/mathlib/Mathlib/**/*.lean"}),
                         ("read_file", {"path": DEP})],
                        REPORT)
    library.agents.evaluate(evaluation(0))

    library.cycle()

    opening, found, read = library.agents.requests["worker"][:3]
    assert "find_declaration" in [t["name"] for t in opening.body["tools"]]
    assert f"-- {DEP}:3 (theorem Order.le_refl')\ntheorem le_refl'" in user_text(found)
    answers = user_text(read)
    assert "(no matches)\n[the dependencies under .lake/packages/ (mathlib) were not searched" in answers
    assert f"{DEP}:3: theorem le_refl'" in answers
    assert "[searched 1 Lean file(s) of .lake/packages/ (mathlib)]" in answers
    assert LEMMA in answers


def test_a_claude_code_worker_finds_a_dependencys_lemma_through_the_library_server(
        library: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    need("claude", CLAUDE)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    configure(library, agents={"worker": {"backend": "claude-code", "model": CLAUDE_MODEL}})
    library.agents.plan(strategy("Book/A.lean"))
    library.agents.add("worker", tool_use_reply([("mcp__library__find_declaration", {"name": "le_refl'"}),
                                                 ("mcp__library__lean_goal", {"path": "Book/A.lean", "line": 8})]),
                       text_reply(REPORT))
    library.agents.evaluate(evaluation(0))

    record, _ = library.cycle()

    opening, answered = library.agents.requests["worker"][:2]
    assert "mcp__library__find_declaration" in [t["name"] for t in opening.body["tools"]]
    assert "mcp__library__find_declaration" in " ".join(b["text"] for b in opening.body["system"])
    assert f"-- {DEP}:3 (theorem Order.le_refl')" in user_text(answered)
    assert record.tool_calls["mcp__library__find_declaration"].count == 1
    # The goal view too, answered by Lean from a copy of the file (the stand-in knows a block's first goal).
    assert "mcp__library__lean_goal" in [t["name"] for t in opening.body["tools"]]
    goals = "before line 8:\nn : ℕ\n⊢ n + 0 = n\n\nafter line 8:\nno goals"
    assert json.dumps(goals)[1:-1] in user_text(answered)  # the CLI passes MCP's JSON on
