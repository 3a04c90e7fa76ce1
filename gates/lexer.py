"""Lexical masking of Lean 4 source.

The census and the declaration index scan *code*: text in which every comment,
string literal and character literal has been blanked out, offsets preserved.
This module produces that masked text in one pass. Only the places where a
comment, string or character literal may start are visited one by one; the
rest is skipped by the regular-expression engine, which keeps a 250k-line tree
well inside a second.

It follows Lean's tokenizer (`whitespace`, `tokenFnAux`, `identFnAux`,
`numberFnAux`, `rawStrLitFnAux` in `src/Lean/Parser/Basic.lean`,
`interpolatedStrFn` in `src/Lean/Parser/StrInterpolation.lean`); each rule is
tested in `tests/gates/test_lexer.py`, and the whole against an independent
reference lexer on generated text:

- `--` starts a line comment; `/-` a block comment, whose next character Lean
  skips before `/- -/` nest; `/--` and `/-!` are doc comments, after which Lean
  skips blanks and comments before the body.
- `"` starts a string, raw (`r"…"`, `r#"…"#`) only when the `r` starts a token:
  not in `xr"…"`, `x.r"…"` or `` `r"…" ``.
- `'` starts a character literal only where a token starts and the next
  character is not `'` (`f '' s`): after a letter of a name (`h'`, `x₁'`) it
  is a prime, after a symbol ending in `'` (`⁻¹'`, `Σ'`) part of it.
- A string is interpolated (its `{…}` holding code) only after a keyword
  whose syntax takes `interpolatedStr(term)`: `INTERPOLATING` right after the
  keyword, `INTERPOLATING_AFTER` after its arguments. Any other name, even one
  ending in `!` or `?` (`hide!`, `logInfo`, `Lean.throwError`), is followed by
  a plain string.
- `«…»` escapes a name whose text is not lexed.

Where the reading depends on what the source cannot show (a string after a
name ending in `!` or `?`, which a project's own syntax may make a keyword;
after `dbg_trace`, interpolated in a term and plain in a tactic; a character
literal right after a symbol that may end in `'`), both readings are computed,
and when they differ the spot is recorded in `Lexed.ambiguous`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache

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

# Keywords whose next argument is `interpolatedStr(term)`, each from Lean's own syntax:
# `s!` src/Init/Data/ToString/Macro.lean, `f!` src/Init/Data/Format/Macro.lean, `m!` src/Lean/Message.lean,
# `throwError` src/Lean/Exception.lean, `println!` src/Init/System/IO.lean, `reportIssue!` and
# `reportDbgIssue!` src/Lean/Meta/Tactic/Grind/Types.lean and src/Lean/Meta/Sym/SymM.lean,
# `reportEMatchIssue!` src/Lean/Meta/Tactic/Grind/EMatch.lean.
INTERPOLATING = frozenset({"s!", "f!", "m!", "throwError", "println!", "reportIssue!", "reportDbgIssue!",
                           "reportEMatchIssue!"})
# Keywords whose interpolated string follows arguments: `T` a term at max precedence, `I` a name, `]` itself.
# `throwErrorAt` src/Lean/Exception.lean; `throwNamedError`, `logNamedError`, `logNamedWarning` and their `…At`
# forms src/Lean/ErrorExplanation.lean, later src/Lean/Parser/Term.lean; `trace[` src/Lean/Util/Trace.lean,
# `trace_goal[` src/Lean/Meta/Tactic/Grind/Types.lean, `Macro.trace[` src/Init/NotationExtra.lean,
# `aesop_trace[` Aesop's Aesop/Tracing.lean.
INTERPOLATING_AFTER = {
    "throwErrorAt": "T", "throwNamedErrorAt": "TI", "throwNamedError": "I", "logNamedErrorAt": "TI",
    "logNamedError": "I", "logNamedWarningAt": "TI", "logNamedWarning": "I",
    "trace_goal[": "I]", "trace[": "I]", "Macro.trace[": "I]", "aesop_trace[": "I]",
}
# `dbg_trace` takes `interpolatedStr(term)` as a term and in `do` (src/Lean/Parser/Term.lean), a plain `str` as a
# tactic (src/Init/Tactics.lean).
EITHER = frozenset({"dbg_trace"})
# Keywords ending in `!` whose string argument is a plain term (src/Lean/Parser/Term.lean).
PLAIN = frozenset({"panic!", "assert!", "debug_assert!", "unreachable!"})
# Symbol tokens ending in `'`: core `Σ'`, `×'` (src/Init/NotationExtra.lean); Mathlib's `⁻¹'`, `∑'`, `∏'`.
QUOTE_TOKENS = ("⁻¹'", "Σ'", "×'", "∑'", "∏'")


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
    ambiguous: list[tuple[int, str]] = field(default_factory=list)  # (offset, why) where Lean's reading is unknown


_BLANK = re.compile(r"[ \t\r\n]*")
_BLANK_STARTS = frozenset(" \t\r\n-/")
_BLOCK_EDGE = re.compile(r"/-|-/")
_CHAR = re.compile(r"'(?:\\(?:[\\\"'rnt]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})|[^\\'])'")
_STRING_BODY = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)
_INTERP_PIECE = re.compile(r'(?:[^"\\{]|\\.)*', re.DOTALL)
_RAW_BEFORE = re.compile(r"r(#*)\Z")
_RAW_AT = re.compile(r"r(#*)\"")
_ID_FIRST_CHAR = re.compile(f"[{ID_FIRST}]")
_ID_REST_CHAR = re.compile(f"[{ID_REST}]")
_RUN_END = re.compile(f"[{ID_REST}]+\\Z")
_NAME_PART = rf"(?:«[^»]*»|[{ID_FIRST}][{ID_REST}]*)"
_NAME = re.compile(rf"{_NAME_PART}(?:\.{_NAME_PART})*")
_GUILLEMETS = re.compile(r"«([^»]*)»")
# Lean's numerals: binary, octal, hexadecimal, decimal with `_` separators, an optional `.` and exponent.
_NUMBER = re.compile(r"0[bB][01_]*|0[oO][0-7_]*|0[xX][0-9a-fA-F_]*"
                     r"|[0-9][0-9_]*(?:\.(?:[0-9][0-9_]*)?)?(?:[eE][+-]?[0-9][0-9_]*)?")
_FIELD_INDEX = re.compile(r"[0-9]*")
_FRACTION = re.compile(r"[0-9][0-9_]*(?:[eE][+-]?[0-9][0-9_]*)?")
_GROUPS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "‹": "›", "⦃": "⦄"}
_KEYWORDS = "|".join(re.escape(k) for k in sorted(INTERPOLATING_AFTER, key=len, reverse=True))
_KEYWORD_HINTS = ("throwErrorAt", "NamedError", "NamedWarning", "trace[", "trace_goal[")
_WINDOW = 256  # how far back a name is read
_PRIME_AFTER = frozenset("ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ_'")
_QUOTE_TOKEN_ENDS = frozenset(t[-2] for t in QUOTE_TOKENS)
# After these, a character literal cannot be the tail of a longer symbol token.
_BEFORE_CHAR = frozenset(" \t\r\n([{⟨,;:=|$@")


@cache
def _starts(closer: str | None, keywords: bool) -> re.Pattern[str]:
    """Where a literal, a comment or (inside a group) a bracket may begin."""
    alternatives = [r"--", r"/-", '"', "'", "«"]
    if closer is not None:
        opener = next(o for o, c in _GROUPS.items() if c == closer)
        alternatives += [re.escape(opener), re.escape(closer)]
    if keywords:
        alternatives.append(_KEYWORDS)
    return re.compile("|".join(alternatives))


class _Masker:
    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[Span] = []
        self.problems: list[str] = []
        self.guillemets: list[tuple[int, int]] = []
        self.ambiguous: list[tuple[int, str]] = []
        self.keywords = any(k in text for k in _KEYWORD_HINTS)
        self.floor = 0  # everything before it is lexed, and a token starts there

    def run(self) -> Lexed:
        self._code(0, None)
        return Lexed(self.text, self._masked(), self.spans, self.problems, self.guillemets, self.ambiguous)

    def _code(self, pos: int, closer: str | None) -> int:
        """Lex code from `pos`; inside a bracket group, stop after the `closer` that ends it."""
        text = self.text
        starts = _starts(closer, self.keywords)
        opener = next((o for o, c in _GROUPS.items() if c == closer), None)
        depth = 0
        while (m := starts.search(text, pos)) is not None:
            start = m.start()
            token = m.group()
            if token == "--":
                pos = self._line_comment(start)
            elif token == "/-":
                pos = self._block(start)
            elif token == '"':
                pos = self._quote(start)
            elif token == "'":
                pos = self._apostrophe(start)
            elif token == "«":
                pos = self._escaped(start)
            elif token == opener:
                depth += 1
                pos = start + 1
            elif token == closer:
                pos = start + 1
                if depth == 0:
                    return pos
                depth -= 1
            else:
                pos = self._keyword(start, token)
        if closer == "}":
            self._problem(len(text), "the file ends inside an interpolated string")
        elif closer is not None:
            self._problem(len(text), f"the file ends before a closing `{closer}`")
        return len(text)

    # -- comments ------------------------------------------------------------

    def _line_comment(self, start: int) -> int:
        end = self.text.find("\n", start)
        end = len(self.text) if end < 0 else end
        self.spans.append(Span(start, end, SpanKind.COMMENT))
        self.floor = end
        return end

    def _block(self, start: int) -> int:
        text = self.text
        third = text[start + 2:start + 3]
        if third == "-" or third == "!":
            kind = SpanKind.DOC if third == "-" else SpanKind.MODULE_DOC
            end = self._closed(self._doc_blank(start + 3))
        else:  # Lean skips the character after `/-` before it looks for `/-` or `-/`
            kind = SpanKind.COMMENT
            end = self._closed(start + 3)
        if end is None:
            self._problem(start, "a block comment is never closed")
            end = len(text)
        self.spans.append(Span(start, end, kind))
        self.floor = end
        return end

    def _closed(self, pos: int) -> int | None:
        """The end of the `-/` closing a block comment whose body starts at `pos`, nesting counted."""
        depth = 1
        while (m := _BLOCK_EDGE.search(self.text, pos)) is not None:
            pos = m.end()
            depth += 1 if m.group() == "/-" else -1
            if depth == 0:
                return pos
        return None

    def _doc_blank(self, pos: int) -> int:
        """Lean's whitespace after the `/--` token: blanks, line comments, block comments that are not docs."""
        text = self.text
        if text[pos:pos + 1] not in _BLANK_STARTS:
            return pos
        while True:
            pos = _BLANK.match(text, pos).end()  # type: ignore[union-attr]  # matches empty
            if text.startswith("--", pos):
                newline = text.find("\n", pos)
                pos = len(text) if newline < 0 else newline
            elif text.startswith("/-", pos) and not text.startswith(("/--", "/-!"), pos):
                closed = self._closed(pos + 3)
                if closed is None:
                    return len(text)
                pos = closed
            else:
                return pos

    def _blank(self, pos: int) -> int:
        """Skip blanks and comments between two tokens, masking the comments."""
        text = self.text
        while True:
            pos = _BLANK.match(text, pos).end()  # type: ignore[union-attr]  # matches empty
            if text.startswith("--", pos):
                pos = self._line_comment(pos)
            elif text.startswith("/-", pos):
                pos = self._block(pos)
            else:
                return pos

    # -- literals --------------------------------------------------------------

    def _quote(self, start: int) -> int:
        """A `"` in code: a raw, interpolated or plain string."""
        text = self.text
        raw = _RAW_BEFORE.search(text, max(self.floor, start - _WINDOW), start) if text[start - 1:start] in (
            "r", "#") else None
        if raw is not None and self._token_start(raw.start(), self.floor, name=True):
            return self._raw(raw.start(), len(raw.group(1)))
        word, keyword = self._word_before(start)
        if keyword and word in INTERPOLATING:
            return self._interpolated_string(start)
        if keyword and (word in EITHER or (word[-1:] in ("!", "?") and word not in PLAIN)):
            interpolated = word in EITHER
            if self._probe(start) != self._plain_end(start):
                how = ("interpolated in a term, plain in a tactic" if interpolated else
                       f"plain, unless `{word}` is syntax taking `interpolatedStr`")
                self._ambiguous(start, f"the string after `{word}` reads differently as plain and as interpolated "
                                       f"text (Lean reads it {how}); write it so both readings agree")
            if interpolated:
                return self._interpolated_string(start)
        return self._string(start)

    def _string(self, start: int) -> int:
        end = self._plain_end(start)
        if end is None:
            self._problem(start, "a string literal is never closed")
            end = len(self.text)
        self.spans.append(Span(start, end, SpanKind.STRING))
        self.floor = end
        return end

    def _plain_end(self, start: int) -> int | None:
        m = _STRING_BODY.match(self.text, start + 1)
        return None if m is None else m.end()

    def _probe(self, start: int) -> int:
        """Where `start` ends when read as an interpolated string, nothing recorded."""
        probe = _Masker(self.text)
        probe.floor = start
        return probe._interpolated_string(start)

    def _raw(self, start: int, hashes: int) -> int:
        body = start + 2 + hashes
        end = self.text.find('"' + "#" * hashes, body)
        if end < 0:
            self._problem(start, "a raw string is never closed")
            end = len(self.text)
        else:
            end += 1 + hashes
        self.spans.append(Span(start, end, SpanKind.STRING))
        self.floor = end
        return end

    def _interpolated_string(self, start: int) -> int:
        """Mask the literal pieces of `s!"a{x}b"`, lexing the braces as code."""
        text = self.text
        piece = start
        pos = start + 1
        while True:
            pos = _INTERP_PIECE.match(text, pos).end()  # type: ignore[union-attr]  # matches empty
            if pos >= len(text):
                self.spans.append(Span(piece, len(text), SpanKind.STRING))
                self.floor = len(text)
                self._problem(start, "an interpolated string is never closed")
                return len(text)
            if text[pos] == '"':
                self.spans.append(Span(piece, pos + 1, SpanKind.STRING))
                self.floor = pos + 1
                return pos + 1
            self.spans.append(Span(piece, pos + 1, SpanKind.STRING))
            self.floor = pos + 1
            pos = self._code(pos + 1, "}")
            piece = pos - 1  # the closing `}` starts the next literal piece

    def _apostrophe(self, start: int) -> int:
        """A `'` in code: a character literal, the token `''`, a prime, or the end of a symbol such as `⁻¹'`."""
        text = self.text
        if not self._token_start(start, self.floor, name=False):
            return start + 1
        before = text[start - 1] if start > self.floor else " "
        m = _CHAR.match(text, start)
        if before in _QUOTE_TOKEN_ENDS and any(text.startswith(t, start + 1 - len(t)) for t in QUOTE_TOKENS):
            if m is not None and _risky(m.group()):
                self._ambiguous(start, "a character literal right after a symbol ending in `'`; put a space "
                                       "before it")
            self.floor = start + 1
            return start + 1
        if text.startswith("'", start + 1):
            self.floor = start + 2
            return start + 2
        if m is None:
            return start + 1  # no literal: Lean reports an error here
        if before not in _BEFORE_CHAR and not _ID_REST_CHAR.match(before) and _risky(m.group()):
            self._ambiguous(start, f"a character literal right after `{before}`, which may be the end of a "
                                   "symbol ending in `'`; put a space before it")
        self.spans.append(Span(start, m.end(), SpanKind.CHAR))
        self.floor = m.end()
        return m.end()

    def _escaped(self, start: int) -> int:
        end = self.text.find("»", start + 1)
        if end < 0:
            self._problem(start, "an escaped identifier «… is never closed")
            end = len(self.text)
            self.guillemets.append((start + 1, end))
        else:
            self.guillemets.append((start + 1, end))
            end += 1
        self.floor = end
        return end

    # -- keywords with arguments before their string -----------------------------

    def _keyword(self, start: int, word: str) -> int:
        """`throwErrorAt ref "…"`, `trace[cls] "…"`: lex the arguments, then the string as interpolated."""
        text = self.text
        if not self._token_start(start, self.floor, name=True):
            return start + 1
        pos = start + len(word)
        if not word.endswith("[") and self._name_goes_on(pos):
            return pos  # a longer name, such as `throwErrorAtFoo`
        for arg in INTERPOLATING_AFTER[word]:
            pos = self._blank(pos)
            if arg == "T":
                after = self._term_max(pos)
            elif arg == "I":
                after = self._name(pos)
            else:
                after = pos + 1 if text.startswith(arg, pos) else None
            if after is None:
                self.floor = pos
                return pos
            pos = after
        pos = self._blank(pos)
        self.floor = pos
        return self._interpolated_string(pos) if text.startswith('"', pos) else pos

    def _name_goes_on(self, pos: int) -> bool:
        text = self.text
        return bool(_ID_REST_CHAR.match(text, pos)) or (
            text.startswith(".", pos) and (text.startswith("«", pos + 1) or bool(_ID_FIRST_CHAR.match(text, pos + 1))))

    def _name(self, pos: int) -> int | None:
        m = _NAME.match(self.text, pos)
        if m is None:
            return None
        for g in _GUILLEMETS.finditer(self.text, pos, m.end()):
            self.guillemets.append((g.start(1), g.end(1)))
        return m.end()

    def _term_max(self, pos: int) -> int | None:
        """The end of a term at max precedence starting at `pos` (a name, literal or bracket group, then
        `.field` and `[i]`), lexed; None when none starts there."""
        text = self.text
        if pos >= len(text):
            return None
        ch = text[pos]
        end: int | None
        if ch == "@":
            return self._term_max(pos + 1)
        if ch in _GROUPS:
            end = self._code(pos + 1, _GROUPS[ch])
        elif ch == '"':
            end = self._quote(pos)
        elif ch == "'":
            end = self._apostrophe(pos)
        elif (raw := _RAW_AT.match(text, pos)) is not None:
            end = self._raw(pos, len(raw.group(1)))
        elif ch.isdigit():
            end = _NUMBER.match(text, pos).end()  # type: ignore[union-attr]  # a digit starts a numeral
        elif ch == "`":
            end = self._name(pos + (2 if text.startswith("``", pos) else 1))
        else:
            end = self._name(pos)
        while end is not None and end < len(text):
            if text[end] == "." and end + 1 < len(text) and text[end + 1].isdigit():
                end = _NUMBER.match(text, end + 1).end()  # type: ignore[union-attr]
            elif text[end] == "." and (field_end := self._name(end + 1)) is not None:
                end = field_end
            elif text[end] == "[":
                end = self._code(end + 1, "]")
            else:
                break
        if end is not None:
            self.floor = max(self.floor, end)
        return end

    # -- token boundaries --------------------------------------------------------

    def _token_start(self, pos: int, floor: int, *, name: bool) -> bool:
        """Whether a token starts at `pos`, the text from `floor` to it being code. With `name`, whether a name
        read there is read as a keyword or raw-string prefix: not after `.` (a field, or a dotted name) or
        `` ` `` (a name literal)."""
        if pos <= floor:
            return True
        text = self.text
        c = text[pos - 1]
        if c in " \t\r\n":
            return True
        if c in _PRIME_AFTER:
            return False  # a name goes on (no numeral ends in such a letter)
        if _ID_REST_CHAR.match(c):
            _, is_name, end = self._last_token(self._run_start(pos, floor), pos, floor)
            return not is_name and end == pos
        if name and c == "`":
            return False
        if name and c == ".":  # Lean splits dots into `..` tokens from the left, after a numeral's own
            first = pos - 1
            while first > floor and text[first - 1] == ".":
                first -= 1
            dots = pos - first - self._numeral_dot(first, floor)
            return dots % 2 == 0
        return True

    def _numeral_dot(self, dot: int, floor: int) -> bool:
        """Whether the `.` at `dot` belongs to a numeral (`2.`, `2.5`) rather than a field or a dotted name."""
        if dot <= floor or not _ID_REST_CHAR.match(self.text, dot - 1):
            return False
        _, is_name, end = self._last_token(self._run_start(dot, floor), dot, floor)
        return not is_name and end > dot

    def _run_start(self, end: int, floor: int) -> int:
        """The start of the run of name characters ending at `end`."""
        text = self.text
        if end <= floor or not _ID_REST_CHAR.match(text, end - 1):
            return end
        m = _RUN_END.search(text, max(floor, end - _WINDOW), end)
        return end if m is None else m.start()

    def _last_token(self, start: int, end: int, floor: int) -> tuple[int, bool, int]:
        """Tokenize the name characters from a token start to `end`: the last token's start, whether it is a
        name (which then runs to `end`), and its end (a numeral may run past `end`)."""
        text = self.text
        last = (start, False, start)
        i = start
        while i < end:
            if _ID_FIRST_CHAR.match(text, i):
                return i, True, end
            if text[i].isdigit():
                pattern = _NUMBER
                if i == start and start > floor and text[i - 1] == ".":  # `2.5`: a fraction; `x.1`: a field index
                    pattern = _FRACTION if self._numeral_dot(i - 1, floor) else _FIELD_INDEX
                j = pattern.match(text, i).end()  # type: ignore[union-attr]  # matches a digit
            else:  # `!`, `?`, a subscript, `''`: symbols
                j = i + 2 if text.startswith("''", i) else i + 1
            last = (i, False, j)
            i = j
        return last

    def _word_before(self, quote: int) -> tuple[str, bool]:
        """The name ending just before `quote` (blanks and comments between skipped), and whether Lean reads
        it as a keyword where it stands."""
        text = self.text
        end = quote
        k = len(self.spans)
        while True:
            floor = self.spans[k - 1].end if k else 0
            while end > floor and text[end - 1] in " \t\r\n":
                end -= 1
            if k and end == floor and self.spans[k - 1].kind is SpanKind.COMMENT:
                k -= 1
                end = self.spans[k].start
                continue
            break
        run = self._run_start(end, floor)
        if run == end:
            return "", False
        start, is_name, _ = self._last_token(run, end, floor)
        if not is_name:
            return "", False
        return text[start:end], start > run or self._token_start(start, floor, name=True)

    # -- output ------------------------------------------------------------------

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
        self.problems.append(f"line {self.text.count(chr(10), 0, offset) + 1}: {message}")

    def _ambiguous(self, offset: int, message: str) -> None:
        self.ambiguous.append((offset, message))


def _risky(literal: str) -> bool:
    """Whether reading a character literal as the tail of a symbol instead would change what follows."""
    return any(c in literal for c in '"«{}')


def _blank(segment: str, fill: str) -> str:
    """Replace every character but newlines, so line numbers survive masking."""
    if "\n" not in segment:
        return fill * len(segment)
    return "\n".join(fill * len(part) for part in segment.split("\n"))


def lex(text: str) -> Lexed:
    """Mask comments, strings and character literals of one Lean source file."""
    return _Masker(text).run()
