"""Directive lines are honoured only on a line of their own, outside quotes, fences and comments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.context import escape
from gates import directives

HONOURED = [
    "RESTATE: Book.x — erratum",
    "  RESTATE: Book.x — erratum",
    "- RESTATE: Book.x — erratum",
    "3. RESTATE: Book.x — erratum",
]
IGNORED = [
    "> RESTATE: Book.x — erratum",  # a blockquote: someone else's words
    "\"RESTATE: Book.x — erratum\"",  # in quotes
    "`RESTATE: Book.x — erratum`",  # inline code
    "    RESTATE: Book.x — erratum",  # an indented code block
    "The Worker asked for RESTATE: Book.x — erratum",  # not at the start of the line
    "```\nRESTATE: Book.x — erratum\n```",  # a fence
    "~~~~text\nRESTATE: Book.x — erratum\n```\n~~~~",  # a longer fence, closed only by its own kind
    "```\nBook/A.lean:3:0: error: RESTATE: x\nRESTATE: Book.x — erratum\n",  # pasted output in an unclosed fence
    "<!--\nRESTATE: Book.x — erratum\n-->",  # an HTML comment
    "restate: Book.x — erratum",  # the keyword is upper case
]


@pytest.mark.parametrize("text", HONOURED)
def test_a_directive_on_a_line_of_its_own_is_honoured(text: str) -> None:
    assert directives.restatements(f"# Strategy\n\n{text}\n\n## Scope\n- Book/A.lean\n") == {"Book.x": "erratum"}


@pytest.mark.parametrize("text", IGNORED)
def test_a_quoted_fenced_or_embedded_directive_is_text(text: str) -> None:
    assert directives.restatements(f"# Strategy\n\n{text}\n\n## Scope\n- Book/A.lean\n") == {}


def test_each_keyword_has_its_reader() -> None:
    report = ("RESTRUCTURING: split hard\nSPLITTING: moving lemmas\nPROVER: `Book.a`\nPROVER: Book.b and more\n"
              "PROVER: Book.a\n> PROVER: Book.c\nRESTRUCTURING:\n")
    assert directives.first(report, "RESTRUCTURING") == "split hard"
    assert directives.first(report, "SPLITTING") == "moving lemmas"
    assert directives.names(report, "PROVER") == ["Book.a", "Book.b"]
    assert directives.first("RESTRUCTURING:   \n", "RESTRUCTURING") is None  # no rationale, no declaration


def test_a_fence_closes_only_with_its_own_kind_and_length() -> None:
    text = "````\n```\nRESTATE: A.a — inside\n````\nRESTATE: B.b — outside\n"
    assert directives.restatements(text) == {"B.b": "outside"}


def test_one_line_removes_directives_and_headings_quoted_or_not() -> None:
    text = ("Closed the sorry.\n## Scope\n- lakefile.toml\n> RESTATE: Book.x — erratum\n`PROVER: Book.y`\n"
            "  restructuring: lower case too\nDone, with a — dash.\n")
    assert directives.one_line(text, 200) == "Closed the sorry. - lakefile.toml Done, with a — dash."
    assert directives.one_line("word " * 100, 20) == "word word word word…"
    assert "\n" not in directives.one_line("a\nb\n\nc", 50)


HONOURED_TOO = ["1) RESTATE: Book.x — erratum", "12. RESTATE: Book.x — erratum", "   3. RESTATE: Book.x — erratum",
                "+\tRESTATE: Book.x — erratum", "* RESTATE: Book.x — erratum"]


@pytest.mark.parametrize("text", HONOURED + HONOURED_TOO)
def test_every_honoured_directive_is_stripped_and_escaped(text: str) -> None:
    assert directives.restatements(text) == {"Book.x": "erratum"}
    assert directives.strip(f"kept\n{text}") == "kept"
    assert escape(text) != text and directives.restatements(escape(text)) == {}


@given(st.lists(st.sampled_from([" ", "\t", "- ", "* ", "+ ", "1. ", "2) ", "> ", "`", "\"", "#", "\\", "_", "|"]),
                max_size=4),
       st.sampled_from(directives.KEYWORDS), st.sampled_from([":", " :", ": ", ":x"]))
def test_stripping_is_a_superset_of_honouring(prefix: list[str], keyword: str, colon: str) -> None:
    line = "".join(prefix) + keyword + colon + " Book.x — why"
    if directives.lines(line):
        assert directives.strip(line) == ""
        assert directives.lines(escape(line)) == []
