"""A model of Lean 4's tokenizer for the tests, written character by character and sharing no code with
`gates.lexer`: its masking of comments, strings and character literals is the reference the lexer is checked
against on generated text.

It follows `src/Lean/Parser/Basic.lean` (`whitespace`, `tokenFnAux`, `identFnAux`, `numberFnAux`,
`quotedCharCoreFn`, `rawStrLitFnAux`) and `src/Lean/Parser/StrInterpolation.lean`, with a token table of the
symbols and keywords that change how text is read. A token starts after whitespace and comments; the token
table decides between a keyword and a name by length, as `identFnAux` does. The parser is modelled only where it
picks the lexing: which keyword's argument is an interpolated string, and that a name right after a `.` token is
read raw (a field or `.name`), without keywords. Which interpolating keywords the token table holds, and the tokens a
project's own syntax adds, are parameters: they depend on the file's imports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The keyword table, and each keyword's arguments before its interpolated string:
# T a term at max precedence, I a name, ] the closing bracket.
STRING_ARGS = {
    "s!": "", "f!": "", "m!": "", "throwError": "", "println!": "", "reportIssue!": "", "reportDbgIssue!": "",
    "reportEMatchIssue!": "", "dbg_trace": "",
    "throwErrorAt": "T", "throwNamedError": "I", "throwNamedErrorAt": "TI", "logNamedError": "I",
    "logNamedErrorAt": "TI", "logNamedWarning": "I", "logNamedWarningAt": "TI",
    "trace[": "I]", "trace_goal[": "I]", "Macro.trace[": "I]", "aesop_trace[": "I]",
}
KEYWORDS = frozenset(STRING_ARGS) - {"dbg_trace"}  # the ones a file's imports decide; `dbg_trace` is builtin
# Commands written with `#`: a symbol token, read wherever a token starts (`trivial#eval`).
COMMANDS = ["#eval", "#exit", "#guard_msgs", "#check", "#print"]
OTHER_TOKENS = ["panic!", "assert!", "''", "⁻¹'", "⁻¹", "Σ'", "×'", "∑'", "∏'", "..", ":=", "←", "=>", *COMMANDS]
CLOSERS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "‹": "›", "⦃": "⦄"}


def letter_like(c: str) -> bool:
    o = ord(c)
    return ((0x3B1 <= o <= 0x3C9 and o != 0x3BB) or (0x391 <= o <= 0x3A9 and o not in (0x3A0, 0x3A3))
            or 0x3CA <= o <= 0x3FB or 0x1F00 <= o <= 0x1FFE or 0x2100 <= o <= 0x214F or 0x1D49C <= o <= 0x1D59F
            or (0xC0 <= o <= 0x17F and o not in (0xD7, 0xF7)))


def id_first(c: str) -> bool:
    if c == "":
        return False
    return (c.isascii() and (c.isalpha() or c == "_")) or letter_like(c)


def id_rest(c: str) -> bool:
    if c == "":
        return False
    o = ord(c)
    return (id_first(c) or (c.isascii() and c.isdigit()) or c in "'!?" or 0x2080 <= o <= 0x2089
            or 0x2090 <= o <= 0x209C or 0x1D62 <= o <= 0x1D6A or o == 0x2C7C)


def is_digit(c: str) -> bool:
    return "0" <= c <= "9"


class LexError(Exception):
    pass


@dataclass
class Token:
    kind: str  # name, keyword, symbol, number, string, char
    text: str
    start: int
    end: int
    space_after: bool = False


@dataclass
class Reference:
    text: str
    keywords: frozenset[str] = KEYWORDS  # the interpolating keywords in the token table
    extra: tuple[str, ...] = ()  # tokens the project declared
    out: list[str] = field(default_factory=list)
    commands: set[tuple[int, str]] = field(default_factory=set)  # (offset, `#command`) read as tokens

    def __post_init__(self) -> None:
        self.out = list(self.text)
        self.string_args = {k: v for k, v in STRING_ARGS.items() if k in self.keywords or k == "dbg_trace"}
        self.tokens = sorted({*self.string_args, *OTHER_TOKENS, *self.extra}, key=len, reverse=True)

    # -- masking ------------------------------------------------------------

    def blank(self, start: int, end: int, fill: str = " ") -> None:
        for i in range(start, min(end, len(self.text))):
            if self.text[i] != "\n":
                self.out[i] = fill

    def at(self, i: int) -> str:
        return self.text[i] if i < len(self.text) else ""

    # -- whitespace and comments ----------------------------------------------

    def whitespace(self, i: int) -> int:
        while i < len(self.text):
            c = self.text[i]
            if c in " \n":
                i += 1
            elif c in "\t\r":
                raise LexError("tab or carriage return")
            elif c == "-" and self.at(i + 1) == "-":
                j = i
                while j < len(self.text) and self.text[j] != "\n":
                    j += 1
                self.blank(i, j)
                i = j
            elif c == "/" and self.at(i + 1) == "-" and self.at(i + 2) not in ("-", "!"):
                j = self.comment_body(i + 3)
                self.blank(i, j)
                i = j
            else:
                return i
        return i

    def comment_body(self, i: int) -> int:
        """From inside a comment at nesting 1, the index after the closing `-/`."""
        depth = 1
        while i < len(self.text):
            if self.text[i] == "-" and self.at(i + 1) == "/":
                depth -= 1
                i += 2
                if depth == 0:
                    return i
            elif self.text[i] == "/" and self.at(i + 1) == "-":
                depth += 1
                i += 2
            else:
                i += 1
        raise LexError("unterminated comment")

    # -- tokens -----------------------------------------------------------------

    def token(self, i: int, raw_name: bool) -> Token:
        t = self.text
        c = t[i]
        if c == '"':
            return Token("string", "", i, self.string(i, interpolated=False))
        if c == "'" and self.at(i + 1) != "'":
            return Token("char", "", i, self.char(i))
        if is_digit(c):
            return Token("number", "", i, self.number(i))
        if c == "`" and (id_first(self.at(i + 1)) or self.at(i + 1) == "«"):
            return Token("name", "", i, self.name(i + 1))
        if c == "r" and not raw_name:
            j = i + 1
            while self.at(j) == "#":
                j += 1
            if self.at(j) == '"':
                return Token("string", "", i, self.raw(i, j - i - 1))
        if id_first(c) or c == "«":
            end = self.name(i)
            if not raw_name:
                for tk in self.tokens:
                    if t.startswith(tk, i) and len(tk) >= end - i:
                        return Token("keyword", tk, i, i + len(tk))
            return Token("name", t[i:end], i, end)
        for tk in self.tokens:
            if t.startswith(tk, i):
                if tk in COMMANDS:
                    self.commands.add((i, tk))
                return Token("symbol", tk, i, i + len(tk))
        return Token("symbol", c, i, i + 1)

    def name(self, i: int) -> int:
        t = self.text
        while True:
            if self.at(i) == "«":
                j = t.find("»", i + 1)
                if j < 0:
                    raise LexError("unterminated escape")
                self.blank(i + 1, j, "_")
                i = j + 1
            elif id_first(self.at(i)):
                i += 1
                while i < len(t) and id_rest(t[i]):
                    i += 1
            else:
                raise LexError("not a name")
            if self.at(i) == "." and (id_first(self.at(i + 1)) or self.at(i + 1) == "«"):
                i += 1
                continue
            return i

    def digits(self, i: int, ok: str, need: bool) -> int:
        while i < len(self.text) and (self.text[i] in ok or self.text[i] == "_"):
            need = self.text[i] == "_"
            i += 1
        if need:
            raise LexError("digit expected")
        return i

    def number(self, i: int) -> int:
        dec = "0123456789"
        if self.text[i] == "0" and self.at(i + 1) in ("b", "B", "o", "O", "x", "X"):
            ok = {"b": "01", "o": "01234567", "x": "0123456789abcdefABCDEF"}[self.at(i + 1).lower()]
            return self.digits(i + 2, ok, True)
        i = self.digits(i + 1, dec, False)
        if self.at(i) not in (".", "e", "E"):
            return i
        if self.at(i) == ".":
            i += 1
            if is_digit(self.at(i)):
                i = self.digits(i, dec, False)
        if self.at(i) in ("e", "E"):
            i += 1
            if self.at(i) in ("+", "-"):
                i += 1
            if not is_digit(self.at(i)):
                raise LexError("exponent")
            i = self.digits(i, dec, False)
        return i

    def escape(self, i: int, *, interpolated: bool = False) -> int:
        """After a backslash at i-1: the index after the escape (string gaps are left out of the model)."""
        c = self.at(i)
        hexdigits = "0123456789abcdefABCDEF"
        if c and (c in "\\\"'rnt" or (interpolated and c == "{")):
            return i + 1
        if c in ("x", "u"):
            n = 2 if c == "x" else 4
            if all(self.at(i + 1 + k) and self.at(i + 1 + k) in hexdigits for k in range(n)):
                return i + 1 + n
        raise LexError("bad escape")

    def char(self, i: int) -> int:
        j = i + 1
        if self.at(j) == "":
            raise LexError("eof in char")
        j = self.escape(j + 1) if self.at(j) == "\\" else j + 1
        if self.at(j) != "'":
            raise LexError("unterminated char")
        self.blank(i, j + 1)
        return j + 1

    def string(self, i: int, *, interpolated: bool) -> int:
        j = i + 1
        piece = i
        while True:
            c = self.at(j)
            if c == "":
                raise LexError("unterminated string")
            if c == "\\":
                j = self.escape(j + 1, interpolated=interpolated)
            elif c == '"':
                self.blank(piece, j + 1)
                return j + 1
            elif c == "{" and interpolated:
                self.blank(piece, j + 1)
                j = self.code(j + 1, "}")
                piece = j - 1
            else:
                j += 1

    def raw(self, i: int, hashes: int) -> int:
        close = '"' + "#" * hashes
        j = self.text.find(close, i + 2 + hashes)
        if j < 0:
            raise LexError("unterminated raw string")
        self.blank(i, j + len(close))
        return j + len(close)

    # -- the parser, where it decides the lexing ------------------------------------

    def code(self, i: int, closer: str | None) -> int:
        """Tokens from i; in a group, the index after its closer."""
        depth = 0
        opener = next((o for o, c in CLOSERS.items() if c == closer), None)
        prev: Token | None = None
        while True:
            j = self.whitespace(i)
            if prev is not None:
                prev.space_after = j > i
            i = j
            if i >= len(self.text):
                if closer is not None:
                    raise LexError("unclosed group")
                return i
            c = self.text[i]
            if c == "/" and self.at(i + 1) == "-" and self.at(i + 2) in ("-", "!"):
                j = self.whitespace(i + 3)
                end = self.comment_body(j)
                self.blank(i, end)
                i, prev = end, None
                continue
            if closer is not None and c == opener:
                depth += 1
            elif closer is not None and c == closer:
                if depth == 0:
                    return i + 1
                depth -= 1
            raw_name = prev is not None and prev.text == "." and not prev.space_after
            tok = self.token(i, raw_name)
            i = tok.end
            if tok.kind == "keyword" and tok.text in self.string_args:
                i = self.arguments(i, self.string_args[tok.text])
                prev = None
                continue
            if raw_name and tok.kind == "number":  # a field index: digits only
                i = tok.start
                while is_digit(self.at(i)):
                    i += 1
                tok.end = i
            prev = tok

    def arguments(self, i: int, spec: str) -> int:
        for arg in spec:
            i = self.whitespace(i)
            if i >= len(self.text):
                return i
            if arg == "T":
                end = self.term_max(i)
            elif arg == "I":
                end = self.name(i) if id_first(self.text[i]) or self.text[i] == "«" else None
            else:
                end = i + 1 if self.text[i] == arg else None
            if end is None:
                return i
            i = end
        i = self.whitespace(i)
        if self.at(i) == '"':
            return self.string(i, interpolated=True)
        return i

    def term_max(self, i: int) -> int | None:
        c = self.text[i]
        if c == "@":
            return self.term_max(i + 1) if i + 1 < len(self.text) else None
        if c in CLOSERS:
            end = self.code(i + 1, CLOSERS[c])
        elif c in "\"'`" or is_digit(c) or id_first(c) or c == "«":
            if c == "`" and self.at(i + 1) == "`":
                end = self.name(i + 2)
            else:
                tok = self.token(i, raw_name=False)
                if tok.kind in ("symbol", "keyword"):
                    return None
                end = tok.end
        else:
            return None
        while True:
            if self.at(end) == "." and is_digit(self.at(end + 1)):
                end = self.number(end + 1)
            elif self.at(end) == "." and (id_first(self.at(end + 1)) or self.at(end + 1) == "«"):
                end = self.name(end + 1)
            elif self.at(end) == "[":
                end = self.code(end + 1, "]")
            else:
                return end


def reference_mask(text: str, keywords: frozenset[str] = KEYWORDS, extra: tuple[str, ...] = ()) -> str | None:
    """The masked code of `text` where `keywords` are Lean's and the project declared the `extra` tokens, or None
    where Lean reports a lexical error."""
    ref = Reference(text, keywords, extra)
    try:
        ref.code(0, None)
    except LexError:
        return None
    return "".join(ref.out)


def reference_commands(text: str) -> list[tuple[int, str]] | None:
    """The `#` commands read as tokens, with their 1-based line, or None where Lean reports a lexical error."""
    ref = Reference(text)
    try:
        ref.code(0, None)
    except LexError:
        return None
    return [(text.count("\n", 0, at) + 1, command) for at, command in sorted(ref.commands)]
