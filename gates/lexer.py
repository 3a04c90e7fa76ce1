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
- A string is interpolated (its `{…}` holding code) only after a keyword whose syntax takes
  `interpolatedStr(term)`: `INTERPOLATING` right after the keyword, `INTERPOLATING_AFTER` after its arguments.
  Which of them are keywords depends on what the file imports (`gates/header.py`: `throwError` and `m!` only
  where `Lean` is, `s!` not under `prelude`); the lexer is told per file (`Keywords`). Any other name, even one
  ending in `!` or `?` (`hide!`, `logInfo`, `Lean.throwError`), is followed by a plain string.
- `«…»` escapes a name whose text is not lexed.
- Numerals are ASCII (`Char.isDigit`): `₁`, `²` or `٣` start none.

Where the reading depends on what the source cannot show (a string after a keyword the imports may or may not
bring, or after a name ending in `!` or `?`, which a project's own syntax may make a keyword; after `dbg_trace`,
interpolated in a term and plain in a tactic; a character literal right after a symbol that may end in `'`; a
token the project declared that holds `--`, `"`, `'`, `/-` or `«` after its first character), both readings are
computed, and where the code they leave differs the spot is recorded in `Lexed.ambiguous`. Every scan is linear in
the text: no input makes the lexer raise or loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache

from gates.header import Keywords, own_keywords, read_header

# Lean's `isLetterLike` and `isSubScriptAlnum` (src/Init/Meta.lean, later src/Init/Meta/Defs.lean), as regex
# character-class bodies. Newer releases added the Latin-1 and Latin Extended-A letters and `ⱼ`; they are read as
# newer Lean reads them: an older Lean reports an error at such a character in code (unless a token holds it, and a
# new token holding one is refused by the integrity gate), so the build refuses what the two could read differently.
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

# Keywords whose next argument is `interpolatedStr(term)` (where they are keywords: `gates/header.py`).
INTERPOLATING = frozenset({"s!", "f!", "m!", "throwError", "println!", "reportIssue!", "reportDbgIssue!",
                           "reportEMatchIssue!"})
# Keywords whose interpolated string follows arguments: `T` a term at max precedence, `I` a name, `]` itself.
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
# Commands written `#name`, tokens of every Lean 4 toolchain (`builtin_command_parser`s of
# src/Lean/Parser/Command.lean; `#guard_msgs` src/Init/Guard.lean): `#eval'"'` is the command, then a character
# literal. After another `#name`, which may or may not be a token, a literal that would change what follows is noted
# as ambiguous.
HASH_COMMANDS = ("#check_failure", "#guard_msgs", "#reduce", "#check", "#print", "#synth", "#eval", "#exit")
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
_RAW_AT = re.compile(r"r(#*)\"")
_ID_FIRST_CHAR = re.compile(f"[{ID_FIRST}]")
_ID_REST_CHAR = re.compile(f"[{ID_REST}]")
_ID_REST_RUN = re.compile(f"[{ID_REST}]*")
_NAME_PART = rf"(?:«[^»]*»|[{ID_FIRST}][{ID_REST}]*)"
_NAME = re.compile(rf"{_NAME_PART}(?:\.{_NAME_PART})*")
_GUILLEMETS = re.compile(r"«([^»]*)»")
# Lean's numerals (ASCII digits only): binary, octal, hexadecimal, decimal with `_` separators, an optional `.` and
# exponent.
_NUMBER = re.compile(r"0[bB][01_]*|0[oO][0-7_]*|0[xX][0-9a-fA-F_]*"
                     r"|[0-9][0-9_]*(?:\.(?:[0-9][0-9_]*)?)?(?:[eE][+-]?[0-9][0-9_]*)?")
_FIELD_INDEX = re.compile(r"[0-9]+")
_FRACTION = re.compile(r"[0-9][0-9_]*(?:[eE][+-]?[0-9][0-9_]*)?")
_GROUPS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "‹": "›", "⦃": "⦄"}
_PRIME_AFTER = frozenset("ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ_")
_QUOTE_TOKEN_ENDS = frozenset(t[-2] for t in QUOTE_TOKENS)
# After these, a character literal cannot be the tail of a longer symbol token.
_BEFORE_CHAR = frozenset(" \t\r\n([{⟨,;:=|$@")

_MAX_DEPTH = 100  # nesting beyond this is refused rather than followed (Python's own stack is finite)
Token = tuple[int, bool, int]  # start, whether it is a name (which runs to the end asked for), end


def is_digit(c: str) -> bool:
    """Lean's `Char.isDigit`: ASCII only (`str.isdigit` also takes `₁`, `²`, `٣`)."""
    return "0" <= c <= "9"


@cache
def _starts(closer: str | None, keywords: tuple[str, ...]) -> re.Pattern[str]:
    """Where a literal, a comment or (inside a group) a bracket may begin; and the keywords taking arguments."""
    alternatives = [r"--", r"/-", '"', "'", "«"]
    if closer is not None:
        opener = next(o for o, c in _GROUPS.items() if c == closer)
        alternatives += [re.escape(opener), re.escape(closer)]
    alternatives += [re.escape(k) for k in sorted(keywords, key=len, reverse=True)]
    return re.compile("|".join(alternatives))


class Runs:
    """Where Lean's tokens start inside runs of name characters (`x₁'`, `2'a'`, `0x1Fsorry`, `#eval'"'`), read in
    time linear in the text: a run is walked back over once, and its tokens are read once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._run: tuple[int, int, int] | None = None  # (floor, start, end up to which the run is known to go)
        self._token_cache: dict[tuple[int, int], tuple[int, Token]] = {}  # (run start, floor) → (next, last token)

    def starts(self, pos: int) -> bool:
        """Whether a keyword may start at `pos` of masked code (comments and literals blanked)."""
        return self._token_start(pos, 0, name=True)

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
        if _ID_REST_CHAR.match(c):
            run = self._token_run(pos, floor)
            if run == pos:
                return True  # `#eval'a'`: the command token, then a token starts
            if c in _PRIME_AFTER:
                return False  # a name goes on (no numeral ends in such a letter)
            _, is_name, end = self._last_token(run, pos, floor)
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

    def _token_run(self, end: int, floor: int) -> int:
        """Where the tokens of the name characters ending at `end` start: the run's start, or after the `#`
        command that begins it (`#evalx` is `#eval` then `x`)."""
        run = self._run_start(end, floor)
        if run > floor and self.text[run - 1] == "#" and (command := _hash_command(self.text, run - 1, end)):
            return run - 1 + len(command)
        return run

    def _lone_dot(self, dot: int, floor: int) -> bool:
        """Whether the `.` at `dot` is a token of its own: Lean splits a run of dots into `..` tokens from the left
        (after a numeral's own), so an odd run ends in one."""
        first = dot
        while first > floor and self.text[first - 1] == ".":
            first -= 1
        return (dot + 1 - first - self._numeral_dot(first, floor)) % 2 == 1

    def _numeral_dot(self, dot: int, floor: int) -> bool:
        """Whether the `.` at `dot` belongs to a numeral (`2.`, `2.5`) rather than a field or a dotted name."""
        if dot <= floor or not _ID_REST_CHAR.match(self.text, dot - 1):
            return False
        _, is_name, end = self._last_token(self._run_start(dot, floor), dot, floor)
        return not is_name and end > dot

    def _run_start(self, end: int, floor: int) -> int:
        """The start of the run of name characters ending at `end`, not before `floor`. The run found last is
        kept, so the `'`s of one long run are not each walked back over it."""
        text = self.text
        if end <= floor or not _ID_REST_CHAR.match(text, end - 1):
            return end
        run = self._run  # (floor, start, end up to which the run is known to go)
        if run is not None and run[0] == floor and run[1] < end:
            if end <= run[2]:
                return run[1]
            if _ID_REST_RUN.match(text, run[2], end).end() == end:  # type: ignore[union-attr]  # matches empty
                self._run = (floor, run[1], end)
                return run[1]
        start = end - 1
        while start > floor and _ID_REST_CHAR.match(text, start - 1):
            start -= 1
        self._run = (floor, start, end)
        return start

    def _last_token(self, start: int, end: int, floor: int) -> Token:
        """Tokenize the name characters from a token start to `end`: the last token's start, whether it is a
        name (which then runs to `end`), and its end (a numeral may run past `end`). The tokens of a run are read
        once: a later call for the same run goes on from where the last stopped."""
        text = self.text
        i, last = self._token_cache.get((start, floor), (start, (start, False, start)))
        if last[0] >= end and i > start:  # asked about an earlier point than read: read again
            i, last = start, (start, False, start)
        while i < end and not last[1]:
            if _ID_FIRST_CHAR.match(text, i):
                last = (i, True, i)
                break
            if is_digit(text[i]):
                pattern = _NUMBER
                if i == start and start > floor and text[i - 1] == ".":  # `2.5`: a fraction; `x.1`: a field index
                    pattern = _FRACTION if self._numeral_dot(i - 1, floor) else (
                        _FIELD_INDEX if self._lone_dot(i - 1, floor) else _NUMBER)  # `..1_0`: a `..` token first
                j = pattern.match(text, i).end()  # type: ignore[union-attr]  # each matches an ASCII digit
            else:  # `!`, `?`, a subscript, `''`: symbols
                j = i + 2 if text.startswith("''", i) else i + 1
            last = (i, False, j)
            i = j
        self._token_cache[(start, floor)] = (i, last)
        return (last[0], True, end) if last[1] else last



class _Masker(Runs):
    def __init__(self, text: str, keywords: Keywords, *, probe: bool = False) -> None:
        super().__init__(text)
        self.probe = probe  # reading one string both ways: nested strings are not compared again
        self.keywords = keywords
        self.present = keywords.present
        self.unknown = keywords.unknown - keywords.present
        active = self.present | self.unknown
        hinted = any(h in text for h in ("trace", "ErrorAt", "Named"))  # one of these is in each such keyword
        self.after = tuple(sorted(k for k in INTERPOLATING_AFTER if hinted and k in active and k in text))
        self.tokens = tuple(t for t in keywords.tokens if t in text)
        self.spans: list[Span] = []
        self.problems: list[str] = []
        self.guillemets: list[tuple[int, int]] = []
        self.ambiguous: list[tuple[int, str]] = []
        self.floor = 0  # everything before it is lexed, and a token starts there
        self.depth = 0  # interpolated strings and argument groups open around the position

    def run(self) -> Lexed:
        self._code(0, None)
        return Lexed(self.text, self._mask(0, len(self.text)), self.spans, self.problems, self.guillemets,
                     self.ambiguous)

    def _code(self, pos: int, closer: str | None) -> int:
        """Lex code from `pos`; inside a bracket group, stop after the `closer` that ends it."""
        text = self.text
        if closer is not None and self.depth >= _MAX_DEPTH:
            self._ambiguous(pos, f"interpolated strings or keyword arguments nested more than {_MAX_DEPTH} deep; "
                                 "the rest of the file is read as code")
            self.floor = len(text)
            return len(text)
        self.depth += closer is not None
        try:
            return self._code_in(pos, closer)
        finally:
            self.depth -= closer is not None

    def _code_in(self, pos: int, closer: str | None) -> int:
        text = self.text
        starts = _starts(closer, self.after)
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
        self._project_tokens(start)
        end = self.text.find("\n", start)
        end = len(self.text) if end < 0 else end
        self.spans.append(Span(start, end, SpanKind.COMMENT))
        self.floor = end
        return end

    def _block(self, start: int) -> int:
        self._project_tokens(start)
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
        self._project_tokens(start)
        text = self.text
        hashes = start
        while hashes > self.floor and text[hashes - 1] == "#":
            hashes -= 1
        if hashes > self.floor and text[hashes - 1] == "r" and self._token_start(hashes - 1, self.floor, name=True):
            return self._raw(hashes - 1, start - hashes)
        word, keyword = self._word_before(start)
        if not keyword:
            return self._string(start)
        if word in INTERPOLATING and word in self.present:
            return self._interpolated_string(start)
        interpolated = word in EITHER or (word in INTERPOLATING and word in self.unknown)  # the likelier reading
        if word in EITHER:
            how = "interpolated in a term, plain in a tactic"
        elif interpolated:
            how = f"interpolated only where `{word}` is a keyword, which the file's imports do not show"
        elif word[-1:] in ("!", "?") and word not in PLAIN:
            how = f"plain, unless `{word}` is syntax taking `interpolatedStr`"
        else:
            return self._string(start)
        if not self.probe and self._differs(start):
            self._ambiguous(start, f"the string after `{word}` reads differently as plain and as interpolated text "
                                   f"(Lean reads it {how}); write it so both readings agree")
        return self._interpolated_string(start) if interpolated else self._string(start)

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

    def _differs(self, start: int) -> bool:
        """Whether the string at `start` leaves different code read plain and read interpolated."""
        plain = self._plain_end(start)
        if plain is not None and "{" not in self.text[start:plain]:
            return False  # no braces: the same literal either way
        probe = _Masker(self.text, self.keywords, probe=True)
        probe.floor, probe.depth = start, self.depth
        end = probe._interpolated_string(start)
        return end != plain or probe._mask(start, end) != _blank(self.text[start:end], " ")

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
        m = _CHAR.match(text, start)
        if not self._token_start(start, self.floor, name=False):
            if m is not None and _risky(m.group()) and (word := self._hash_word(start)):
                self._ambiguous(start, f"a character literal right after `{word}`, a command token only where a "
                                       "command of that name exists; put a space before it")
            return start + 1
        before = text[start - 1] if start > self.floor else " "
        if before in _QUOTE_TOKEN_ENDS and any(text.startswith(t, start + 1 - len(t)) for t in QUOTE_TOKENS):
            if m is not None and _risky(m.group()):
                self._ambiguous(start, "a character literal right after a symbol ending in `'`; put a space "
                                       "before it")
            self.floor = start + 1
            return start + 1
        if text.startswith("'", start + 1):
            self._project_tokens(start)
            self.floor = start + 2
            return start + 2
        if m is None:
            return start + 1  # no literal: Lean reports an error here
        self._project_tokens(start)
        if before not in _BEFORE_CHAR and not _ID_REST_CHAR.match(before) and _risky(m.group()):
            self._ambiguous(start, f"a character literal right after `{before}`, which may be the end of a "
                                   "symbol ending in `'`; put a space before it")
        self.spans.append(Span(start, m.end(), SpanKind.CHAR))
        self.floor = m.end()
        return m.end()

    def _escaped(self, start: int) -> int:
        self._project_tokens(start)
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

    def _project_tokens(self, pos: int) -> None:
        """A token the project declared may be read across `pos`, where a comment or literal starts otherwise."""
        if not self.tokens:
            return
        text = self.text
        for token in self.tokens:
            for k in range(1, len(token)):
                if k <= pos and text.startswith(token, pos - k):
                    self._ambiguous(pos, f"the project's token `{token}` may be read here as one token, where a "
                                         "comment, string, character literal or escaped name starts otherwise; put "
                                         "spaces around it or rename the token")
                    return

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
        if not text.startswith('"', pos):
            return pos
        self._project_tokens(pos)
        if word not in self.present and not self.probe and self._differs(pos):
            self._ambiguous(pos, f"the string after `{word}` reads differently as plain and as interpolated text "
                                 f"(Lean reads it interpolated only where `{word}` is a keyword, which the file's "
                                 "imports do not show); write it so both readings agree")
        return self._interpolated_string(pos)

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
        while text.startswith("@", pos):
            pos += 1
        if pos >= len(text):
            return None
        ch = text[pos]
        end: int | None
        if ch in _GROUPS:
            end = self._code(pos + 1, _GROUPS[ch])
        elif ch == '"':
            end = self._quote(pos)
        elif ch == "'":
            end = self._apostrophe(pos)
        elif (raw := _RAW_AT.match(text, pos)) is not None:
            end = self._raw(pos, len(raw.group(1)))
        elif is_digit(ch):
            end = _NUMBER.match(text, pos).end()  # type: ignore[union-attr]  # an ASCII digit starts a numeral
        elif ch == "`":
            end = self._name(pos + (2 if text.startswith("``", pos) else 1))
        else:
            end = self._name(pos)
        while end is not None and end < len(text):
            if text[end] == "." and end + 1 < len(text) and is_digit(text[end + 1]):
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

    def _hash_word(self, pos: int) -> str | None:
        """`#word` when the name characters before `pos` follow a `#` and no known command begins them."""
        run = self._run_start(pos, self.floor)
        if run == pos or run <= self.floor or self.text[run - 1] != "#" or self._token_run(pos, self.floor) != run:
            return None
        return self.text[run - 1:pos]

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
        run = self._token_run(end, floor)
        if run == end:
            return "", False
        start, is_name, _ = self._last_token(run, end, floor)
        if not is_name:
            return "", False
        return text[start:end], start > run or self._token_start(start, floor, name=True)

    # -- output ------------------------------------------------------------------

    def _mask(self, start: int, end: int) -> str:
        """The text from `start` to `end` with what this masker read as comments, strings and characters blanked
        and escaped names filled with `_`."""
        text = self.text
        if start == 0 and end == len(text):
            edits = [(s.start, s.end, " ") for s in self.spans] + [(a, b, "_") for a, b in self.guillemets]
        else:
            edits = [(s.start, s.end, " ") for s in self.spans if s.end > start and s.start < end]
            edits += [(a, b, "_") for a, b in self.guillemets if b > start and a < end]
        if not edits:
            return text[start:end]
        edits.sort()
        out: list[str] = []
        pos = start
        for a, b, fill in edits:
            a, b = max(a, pos), min(b, end)  # a piece of an interpolated string may be masked already
            if b <= a:
                continue
            out.append(text[pos:a])
            out.append(_blank(text[a:b], fill))
            pos = b
        out.append(text[pos:end])
        return "".join(out)

    def _problem(self, offset: int, message: str) -> None:
        self.problems.append(f"line {self.text.count(chr(10), 0, offset) + 1}: {message}")

    def _ambiguous(self, offset: int, message: str) -> None:
        self.ambiguous.append((offset, message))


def _hash_command(text: str, at: int, end: int) -> str | None:
    """The longest command of `HASH_COMMANDS` written at `at` and ending by `end`: Lean's longest token there."""
    return next((c for c in HASH_COMMANDS if text.startswith(c, at) and at + len(c) <= end), None)


def _risky(literal: str) -> bool:
    """Whether reading a character literal as the tail of a symbol instead would change what follows."""
    return any(c in literal for c in '"«{}')


def _blank(segment: str, fill: str) -> str:
    """Replace every character but newlines, so line numbers survive masking."""
    if "\n" not in segment:
        return fill * len(segment)
    return "\n".join(fill * len(part) for part in segment.split("\n"))


def lex(text: str, keywords: Keywords | None = None) -> Lexed:
    """Mask comments, strings and character literals of one Lean source file. `keywords`: what Lean's token
    table holds there (`gates/header.py`); without it, what the file's own imports show."""
    return _Masker(text, keywords if keywords is not None else own_keywords(read_header(text))).run()
