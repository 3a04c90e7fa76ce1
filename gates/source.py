"""A lexed Lean file: lines and columns of offsets, and the statement of a declaration."""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from dataclasses import dataclass

from gates.lexer import ID_REST, Lexed, SpanKind

_HEADER = re.compile(
    rf"(?P<open>[(\[{{⟨⦃⟦])|(?P<close>[)\]}}⟩⦄⟧])|(?P<assign>:=)|(?P<bar>\|)"
    rf"|(?P<word>w(?<![{ID_REST}.]w)here|l(?<![{ID_REST}.]l)et|h(?<![{ID_REST}.]h)ave"
    rf"|d(?<![{ID_REST}.]d)eriving)(?![{ID_REST}])"
)


@dataclass(frozen=True, slots=True)
class Statement:
    lines: tuple[int, int]  # first and last line of the signature
    body: tuple[int, int] | None  # first and last line of the value or proof
    hash: str  # of the signature and the context commands before it
    text: str  # the signature, comments dropped and whitespace collapsed
    body_start: int  # offset where the value or proof starts (the end, when there is none)
    whole: str  # hash of signature and body
    end: int  # offset where the signature ends


class Source:
    """The text, its masked code, and offset arithmetic over both."""

    def __init__(self, lexed: Lexed) -> None:
        self.text = lexed.text
        self.code = lexed.code
        self.spans = lexed.spans
        self.span_starts = [s.start for s in lexed.spans]
        self.line_starts = [0, *itertools.accumulate(len(line) + 1 for line in self.text.split("\n"))]
        self.escaped = sorted(lexed.escaped)
        # The normalised text of each context command (variable, include, notation, …), in file order.
        self.contexts: list[str] = []

    def line(self, offset: int) -> int:
        """1-based line of `offset`."""
        return bisect.bisect_right(self.line_starts, offset)

    def column(self, offset: int) -> int:
        """0-based column of `offset`, in code points, as Lean reports it."""
        return offset - self.line_starts[bisect.bisect_right(self.line_starts, offset) - 1]

    def rstrip(self, start: int, end: int) -> int:
        """The end of the last non-blank code before `end`, at least `start`."""
        while end > start:
            window = max(start, end - 4096)
            stripped = len(self.code[window:end].rstrip())
            if stripped:
                return window + stripped
            end = window
        return start

    def statement(self, shape: str, kind: str, header: int, end: int, line: int, context: int) -> Statement:
        """The statement of a declaration whose signature starts at `header` and which ends at `end`,
        after the first `context` context commands of the file."""
        stmt_end, body_start = self._statement_end(shape, header, end)
        last = self.rstrip(header, stmt_end)
        lines = (line, max(line, self.line(max(last - 1, header))))
        body = (self.line(body_start), self.line(end - 1)) if body_start is not None and body_start < end else None
        text = self._normal(header, stmt_end)
        setting = "\n".join(self.contexts[:context])
        return Statement(lines, body, _digest(f"{kind} {text}\n{setting}"), text,
                         body_start if body_start is not None else end,
                         _digest(f"{kind} {text} {self._normal(stmt_end, end)}"), stmt_end)

    def _statement_end(self, shape: str, pos: int, limit: int) -> tuple[int, int | None]:
        """Where the signature ends, and where the body starts (None: no body)."""
        if shape == "axiom":
            return limit, None
        code = self.code
        depth = 0
        binders = 0  # `let`/`have` in the type, whose `:=` is not the body's
        for m in _HEADER.finditer(code, pos, limit):
            group = m.lastgroup
            if group == "open":
                depth += 1
            elif group == "close":
                depth = max(0, depth - 1)
            elif depth:
                continue
            elif group == "assign":
                if not binders:
                    return m.start(), m.start()
                binders -= 1
            elif group == "bar":
                at = m.start()
                if (at and code[at - 1] in "|<") or code[at + 1:at + 2] in ("|", ">"):
                    continue  # `||`, `<|`, `|>`
                line_start = code.rfind("\n", 0, at) + 1
                # Pattern-matching alternatives start lines; `|x|` inside a type does not.
                if shape == "inductive" or not code[line_start:at].strip():
                    return at, at
            elif (word := m.group("word")) in ("let", "have"):
                binders += 1
            elif word == "where" or shape in ("structure", "class", "inductive"):
                return m.start(), m.start()
        return limit, None

    def uncommented(self, start: int, end: int) -> str:
        """The text between offsets as written, comments dropped, trailing spaces and blank lines removed."""
        lines = (line.rstrip() for line in "".join(self._outside_comments(start, end)).split("\n"))
        return "\n".join(line for line in lines if line)

    def _normal(self, start: int, end: int) -> str:
        """The text between offsets with comments dropped and whitespace collapsed."""
        return " ".join(" ".join(self._outside_comments(start, end)).split())

    def _outside_comments(self, start: int, end: int) -> list[str]:
        pieces: list[str] = []
        pos = start
        first = max(0, bisect.bisect_left(self.span_starts, start) - 1)
        for span in itertools.islice(self.spans, first, None):
            if span.start >= end:
                break
            if span.end <= start or span.kind in (SpanKind.STRING, SpanKind.CHAR):
                continue
            pieces.append(self.text[pos:max(pos, span.start)])
            pos = max(pos, span.end)
        if pos < end:
            pieces.append(self.text[pos:end])
        return pieces


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
