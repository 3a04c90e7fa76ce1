"""Lexical masking of Lean 4 source.

The census and the declaration index scan *code*: text in which every comment,
string literal and character literal has been blanked out, offsets preserved.
This module produces that masked text in one pass. Only the places where a
comment, string or character literal may start are visited one by one; the
rest is skipped by the regular-expression engine, which keeps a 250k-line tree
well inside a second.

Lean's rules that matter here (see `tests/gates/test_lexer.py` for each one):
block comments `/- -/` nest; `--` starts a line comment; a string may hold
escapes and, after an interpolation prefix such as `s!` or `m!`, code in
braces; raw strings are `r"…"`, `r#"…"#`; `'` opens a character literal only
where it cannot be the prime of an identifier (`h'`); `«…»` escapes an
identifier whose text is not lexed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

# Lean's `isLetterLike`, `isSubScriptAlnum` and the Latin ranges newer Lean
# releases accept, as regex character-class bodies.
LETTER_LIKE = (
    "\u03b1-\u03ba\u03bc-\u03c9"  # lower Greek except λ
    "\u0391-\u039f\u03a1\u03a2\u03a4-\u03a9"  # upper Greek except Π and Σ
    "\u03ca-\u03fb"  # Coptic
    "\u1f00-\u1ffe"  # polytonic Greek
    "\u2100-\u214f"  # letter-like symbols (ℕ, ℝ, …)
    "\U0001d49c-\U0001d59f"  # script, double-struck, Fraktur Latin
    "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017f"  # Latin-1 and Latin Extended-A
)
SUBSCRIPT = "\u2080-\u2089\u2090-\u209c\u1d62-\u1d6a\u2c7c"
ID_FIRST = f"A-Za-z_{LETTER_LIKE}"
ID_REST = f"{ID_FIRST}0-9'!?{SUBSCRIPT}"

# Words whose trailing `!` makes the following string interpolated, besides
# any identifier ending in `!` (`s!`, `m!`, `f!`, `throwError!` …).
INTERPOLATING_WORDS = frozenset(
    {"throwError", "throwErrorAt", "logInfo", "logWarning", "logError", "logInfoAt", "logWarningAt",
     "logErrorAt", "dbg_trace"}
)


class SpanKind(StrEnum):
    COMMENT = "comment"
    DOC = "doc"  # `/-- … -/`, attached to the next declaration
    MODULE_DOC = "module_doc"  # `/-! … -/`
    STRING = "string"
    CHAR = "char"


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    kind: SpanKind


@dataclass(slots=True)
class Lexed:
    """Source text, its masked twin (same length) and the masked spans in order."""

    text: str
    code: str
    spans: list[Span]
    problems: list[str] = field(default_factory=list)
    escaped: list[tuple[int, int]] = field(default_factory=list)  # the insides of `«…»` names (masked in `code`)


# Every alternative opens with a literal, so the regex engine skips in C to the
# next candidate; whether a `'` is a literal or a prime is decided afterwards.
_STARTS = re.compile(r"--|/-|\"|'|«")
_STARTS_IN_BRACES = re.compile(r"--|/-|\"|'|«|\{|\}")
_CHAR = re.compile(r"'(?:\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)|[^\\'\n])'")
_RAW_PREFIX = re.compile(rf"(?<![{ID_REST}])r(#*)$")
_ID_CHARS = re.compile(rf"[{ID_REST}]")
_BLOCK_EDGE = re.compile(r"/-|-/")
_STRING_BODY = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)
_INTERP_PIECE = re.compile(r'(?:[^"\\{]|\\.)*', re.DOTALL)
_PREFIX_WORD = re.compile(rf"([{ID_REST}.]+)\s*$")


class _Masker:
    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[Span] = []
        self.problems: list[str] = []
        self.guillemets: list[tuple[int, int]] = []

    def run(self) -> Lexed:
        self._code(0, in_braces=False)
        return Lexed(self.text, self._masked(), self.spans, self.problems, self.guillemets)

    def _code(self, pos: int, *, in_braces: bool) -> int:
        """Lex code from `pos`; inside interpolation braces, stop after the closing `}`."""
        text = self.text
        starts = _STARTS_IN_BRACES if in_braces else _STARTS
        depth = 0
        while (m := starts.search(text, pos)) is not None:
            start = m.start()
            token = m.group()
            if token == "--":
                end = text.find("\n", start)
                pos = len(text) if end < 0 else end
                self.spans.append(Span(start, pos, SpanKind.COMMENT))
            elif token == "/-":
                pos = self._block(start)
            elif token == '"':
                raw = _RAW_PREFIX.search(text, max(0, start - 16), start)
                pos = self._raw(raw.start(), len(raw.group(1))) if raw else self._string(start)
            elif token == "'":
                pos = start + 1
                char = None if start and _ID_CHARS.match(text, start - 1) else _CHAR.match(text, start)
                if char is not None:  # not the prime of `h'`
                    pos = char.end()
                    self.spans.append(Span(start, pos, SpanKind.CHAR))
            elif token == "«":
                end = text.find("»", start + 1)
                pos = len(text) if end < 0 else end + 1
                self.guillemets.append((start + 1, pos - 1 if end >= 0 else pos))
                if end < 0:
                    self._problem(start, "an escaped identifier «… is never closed")
            elif token == "{":
                depth += 1
                pos = start + 1
            else:  # "}"
                pos = start + 1
                if depth == 0:
                    return pos
                depth -= 1
        if in_braces:
            self._problem(len(text), "the file ends inside an interpolated string")
        return len(text)

    def _block(self, start: int) -> int:
        text = self.text
        kind = SpanKind.COMMENT
        if text.startswith("/--", start) and not text.startswith("/--/", start):
            kind = SpanKind.DOC
        elif text.startswith("/-!", start):
            kind = SpanKind.MODULE_DOC
        depth, pos = 1, start + 2
        while (m := _BLOCK_EDGE.search(text, pos)) is not None:
            pos = m.end()
            depth += 1 if m.group() == "/-" else -1
            if depth == 0:
                self.spans.append(Span(start, pos, kind))
                return pos
        self.spans.append(Span(start, len(text), kind))
        self._problem(start, "a block comment is never closed")
        return len(text)

    def _raw(self, start: int, hashes: int) -> int:
        body = start + 2 + hashes
        end = self.text.find('"' + "#" * hashes, body)
        if end < 0:
            self.spans.append(Span(start, len(self.text), SpanKind.STRING))
            self._problem(start, "a raw string is never closed")
            return len(self.text)
        end += 1 + hashes
        self.spans.append(Span(start, end, SpanKind.STRING))
        return end

    def _string(self, start: int) -> int:
        if self._interpolated(start):
            return self._interpolated_string(start)
        m = _STRING_BODY.match(self.text, start + 1)
        if m is None:
            self.spans.append(Span(start, len(self.text), SpanKind.STRING))
            self._problem(start, "a string literal is never closed")
            return len(self.text)
        self.spans.append(Span(start, m.end(), SpanKind.STRING))
        return m.end()

    def _interpolated(self, quote: int) -> bool:
        m = _PREFIX_WORD.search(self.text, max(0, quote - 40), quote)
        if m is None:
            return False
        word = m.group(1)
        return word.endswith("!") or word.rsplit(".", 1)[-1] in INTERPOLATING_WORDS

    def _interpolated_string(self, start: int) -> int:
        """Mask the literal pieces of `s!"a{x}b"`, lexing the braces as code."""
        text = self.text
        piece = start
        pos = start + 1
        while True:
            pos = _INTERP_PIECE.match(text, pos).end()  # type: ignore[union-attr]  # matches empty
            if pos >= len(text):
                self.spans.append(Span(piece, len(text), SpanKind.STRING))
                self._problem(start, "an interpolated string is never closed")
                return len(text)
            if text[pos] == '"':
                self.spans.append(Span(piece, pos + 1, SpanKind.STRING))
                return pos + 1
            self.spans.append(Span(piece, pos + 1, SpanKind.STRING))  # through `{`
            pos = self._code(pos + 1, in_braces=True)
            piece = pos - 1  # the closing `}` starts the next literal piece

    def _masked(self) -> str:
        text = self.text
        edits = [(s.start, s.end, " ") for s in self.spans]
        edits += [(a, b, "_") for a, b in self.guillemets]
        if not edits:
            return text
        edits.sort()
        out: list[str] = []
        pos = 0
        for start, end, fill in edits:
            if start < pos:  # a piece of an interpolated string already masked
                start = pos
            if end <= start:
                continue
            out.append(text[pos:start])
            out.append(_blank(text[start:end], fill))
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def _problem(self, offset: int, message: str) -> None:
        line = self.text.count("\n", 0, offset) + 1
        self.problems.append(f"line {line}: {message}")


def _blank(segment: str, fill: str) -> str:
    """Replace every character but newlines, so line numbers survive masking."""
    if "\n" not in segment:
        return fill * len(segment)
    return "\n".join(fill * len(part) for part in segment.split("\n"))


def lex(text: str) -> Lexed:
    """Mask comments, strings and character literals of one Lean source file."""
    return _Masker(text).run()
