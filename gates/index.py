"""The declaration index of one Lean file, built on the masked code of `lexer`.

A single regular-expression pass over the masked code finds the words that
matter (declaration keywords, modifiers, scope commands, `sorry`, `admit`,
markers the integrity gate looks for); each declaration's header is then
scanned token by token only up to the end of its statement. Proof bodies are
never tokenised, which is what keeps the census fast.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from gates.header import Header, Keywords, own_keywords, read_header
from gates.lexer import HASH_COMMANDS, ID_FIRST, ID_REST, LETTER_LIKE, Lexed, Runs, SpanKind, lex
from gates.source import Source, Statement

DECL_KINDS = frozenset(
    {"theorem", "lemma", "def", "abbrev", "instance", "structure", "class", "inductive", "axiom", "opaque",
     "example"}
)
THEOREM_KINDS = frozenset({"theorem", "lemma"})
MACRO_KINDS = frozenset(
    {"macro", "syntax", "notation", "elab", "macro_rules", "elab_rules", "infix", "infixl", "infixr",
     "prefix", "postfix"}
)
MODIFIERS = frozenset({"private", "protected", "noncomputable", "partial", "unsafe", "nonrec", "scoped", "local"})
SCOPES = frozenset({"namespace", "section", "end", "mutual"})
# Commands that end the declaration before them. `open` and `set_option` also
# exist inside proofs (`open Classical in`), so they end one only at column 0.
COMMANDS = frozenset(
    {"import", "variable", "universe", "attribute", "export", "omit", "include", "initialize",
     "builtin_initialize", "deriving"}
)
COLUMN0_COMMANDS = frozenset({"open", "set_option"})
HOLES = frozenset({"sorry", "admit"})
# Terms that trust the compiler rather than the kernel: `native_decide` and
# `bv_decide` add axioms (`Lean.ofReduceBool`, or `…._native…` ones).
MARKERS = frozenset({"native_decide", "bv_decide"})
# Code run while the file is built: it can write files, or add axioms behind the kernel's back.
BUILD_TIME_CODE = frozenset({"run_cmd", "run_elab", "run_meta", "include_str", "#eval", "initialize",
                             "builtin_initialize"})
# Commands that change what the declarations after them mean: their text is part of those statements.
CONTEXT = frozenset({"variable", "include", "omit", "attribute", "set_option"}) | MACRO_KINDS
# Attributes that register code the elaborator runs: a command, term or tactic elaborator, a macro, a parser, an
# initializer. Such code can add declarations and axioms no source scan sees.
META_ATTRIBUTES = frozenset(
    {"command_elab", "term_elab", "tactic", "macro", "command_parser", "term_parser", "tactic_parser", "init",
     "builtin_command_elab", "builtin_term_elab", "builtin_tactic", "builtin_macro", "builtin_init",
     "builtin_command_parser", "builtin_term_parser", "builtin_tactic_parser", "builtin_doc", "env_linter"}
)
# Named anywhere, even qualified (`_root_.sorryAx`) or escaped (`«sorryAx»`), these skip or trust around the kernel.
SUSPECT_NAMES = frozenset({"sorryAx", "ofReduceBool", "ofReduceNat", "trustCompiler"})

_WORDS = (DECL_KINDS | MACRO_KINDS | MODIFIERS | SCOPES | COMMANDS | COLUMN0_COMMANDS | HOLES | MARKERS
          | {"run_cmd", "run_elab", "run_meta", "include_str"})


def _alternation(words: Iterable[str]) -> str:
    """A regex matching exactly `words`, factored by prefix so the engine backtracks little."""
    groups: dict[str, list[str]] = {}
    for w in sorted(words):
        groups.setdefault(w[:1], []).append(w[1:])
    alts = [re.escape(head) + _alternation(tails) if tails != [""] else re.escape(head)
            for head, tails in groups.items() if head]
    body = "|".join(alts)
    return f"(?:{body})?" if "" in groups else f"(?:{body})"


def _events_regex() -> re.Pattern[str]:
    # Each branch opens with a literal letter, so the engine jumps in C between
    # candidate letters; the lookbehinds just after that letter reject the
    # middle of a name (`Foo.sorry`, `is_sorry`) at the cost of one check. After a
    # character that may end another token (`2axiom`, `0xfsorry`, `h.2def`), the
    # candidate is weighed token by token (`Runs.starts`).
    groups: dict[str, list[str]] = {}
    for w in _WORDS:
        groups.setdefault(w[0], []).append(w[1:])
    branches = [
        f"{re.escape(head)}(?<![{_NAME_ONLY}]{re.escape(head)})(?<![{_NAME_ONLY}]\\.{re.escape(head)})"
        f"{_alternation(tails)}(?![{ID_REST}.])"
        for head, tails in sorted(groups.items())
    ]
    # Lean reads a `#` command wherever a token starts, glued or not (`trivial#eval`), as the longest command token
    # there (`#evalx` is `#eval` then `x`); another `#name` is a command only where it starts a line (`#s` is also
    # Mathlib's notation for a cardinality, `#[1, 2]` an array).
    hashes = "|".join(re.escape(c[1:]) for c in sorted(_HASH_EVENTS, key=len, reverse=True))
    return re.compile("|".join(branches) + rf"|@\[|#(?:{hashes}|(?<![^\n]#)[a-z_]+)")


# Characters that end nothing but a name (numerals are ASCII digits, `0x` then hexadecimal ones).
_NAME_ONLY = f"g-zG-Z_{LETTER_LIKE}"
# `#` commands that end the declaration before them wherever they stand.
_HASH_EVENTS = frozenset(HASH_COMMANDS) | {"#guard", "#exit", "#eval", "#guard_msgs"}
_EVENTS = _events_regex()
_IDENT = rf"(?:«[^»\n]*»|[{ID_FIRST}][{ID_REST}]*)"
_NAME = re.compile(rf"{_IDENT}(?:\.{_IDENT})*")
_SPACE = re.compile(r"\s*")
_SUSPECT = re.compile(
    rf"(?<![{ID_REST}.])(?:[{ID_REST}]+\.)*(?P<name>{'|'.join(sorted(SUSPECT_NAMES))})(?![{ID_REST}])"
    rf"|(?P<native>\+\s*native(?![{ID_REST}])|(?<![{ID_REST}.])native\s*:=\s*true(?![{ID_REST}]))")
_BRACKETS = re.compile(r"[\[\]]")
_OPEN = re.compile(rf"open\b.*?(?:(?<![{ID_REST}.])in(?![{ID_REST}])|$)")
_COMMAND_CATEGORY = re.compile(r":\s*command\s*(?:<=[^:]*)?$")
_INTERPOLATED_STR = re.compile(rf"(?<![{ID_REST}.])interpolatedStr(?![{ID_REST}])")
_LAST_WORD = re.compile(rf"[{ID_REST}]+$")
_ID_REST_CHAR = re.compile(f"[{ID_REST}]")
_PREFIXABLE = DECL_KINDS | MACRO_KINDS | MODIFIERS


@dataclass(frozen=True, slots=True)
class Hole:
    """One `sorry` or `admit` in code."""

    keyword: str
    line: int
    column: int
    declaration: str | None
    owner: str | None = None  # "kind@line" of the enclosing declaration, named or not
    in_macro: bool = False


@dataclass(frozen=True, slots=True)
class Marker:
    """Something the integrity gate weighs: `sorryAx`, `native_decide`, a `set_option`."""

    kind: str
    detail: str
    line: int
    declaration: str | None


@dataclass(slots=True, eq=False)
class Decl:
    kind: str
    name: str | None  # fully qualified; None for `example` and anonymous instances
    line: int  # of the keyword
    modifiers: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    holes: int = 0  # sorries and admits inside
    start: int = 0  # offset of its doc comment, attributes or modifiers
    end: int = 0  # offset after its last code
    header: int = 0  # offset where its signature begins, after the name
    shape: str = ""  # how its statement ends: `class inductive` is a class shaped like an inductive
    context: int = 0  # how many context commands (variables, notations, …) of the file precede it
    source: Source | None = field(default=None, repr=False)
    _statement: Statement | None = field(default=None, repr=False)

    @property
    def statement(self) -> tuple[int, int]:
        """First and last line of the signature."""
        return self._analyse().lines

    @property
    def body(self) -> tuple[int, int] | None:
        """First and last line of the value or proof; None for an axiom."""
        return self._analyse().body

    @property
    def statement_hash(self) -> str:
        """Hash of the signature (not the name), comments dropped and whitespace collapsed."""
        return self._analyse().hash

    @property
    def key(self) -> str:
        """Identity across versions of a file: the name, or the statement for anonymous ones."""
        return self.name if self.name is not None else f"{self.kind}:{self.statement_hash}"

    def _analyse(self) -> Statement:
        # Computed on first use: the census never needs it, the integrity gate does.
        if self._statement is None:
            assert self.source is not None
            self._statement = self.source.statement(self.shape, self.kind, self.header, self.end, self.line,
                                                    self.context)
        return self._statement

    @property
    def statement_text(self) -> str:
        """The signature, comments dropped and whitespace collapsed."""
        return self._analyse().text

    def written(self, *, body: bool = False) -> str:
        """The declaration as written, from its attributes on, comments dropped: its signature, or all of it."""
        assert self.source is not None
        return self.source.uncommented(self.start, self.end if body else self._analyse().end)

    @property
    def body_code(self) -> str:
        """The value or proof as code (comments and strings blanked)."""
        assert self.source is not None
        return self.source.code[self._analyse().body_start:self.end]

    @property
    def text_hash(self) -> str:
        """Hash of the whole declaration, signature and body, comments dropped and whitespace collapsed."""
        return self._analyse().whole

    @property
    def last_line(self) -> int:
        assert self.source is not None
        return self.source.line(max(self.end - 1, self.start))


@dataclass(slots=True)
class FileIndex:
    path: str
    decls: list[Decl] = field(default_factory=list)
    holes: list[Hole] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    macros: list[tuple[str, int]] = field(default_factory=list)  # (kind, line) of macro-like commands
    imports: list[str] = field(default_factory=list)  # module names, escapes removed: `«Book».A` is `Book.A`
    lines: int = 0
    problems: list[str] = field(default_factory=list)
    prelude: bool = False
    keywords: Keywords | None = None  # what the lexer took for keywords
    tokens: list[str] = field(default_factory=list)  # tokens its syntax declares that hold a literal start
    text: str = field(default="", repr=False)

    @property
    def header(self) -> Header:
        return Header(self.prelude, tuple(self.imports), 0)

    @property
    def sorries(self) -> int:
        return sum(1 for h in self.holes if h.keyword == "sorry")

    @property
    def admits(self) -> int:
        return sum(1 for h in self.holes if h.keyword == "admit")

    @property
    def axioms(self) -> list[Decl]:
        return [d for d in self.decls if d.kind == "axiom"]


@dataclass(slots=True)
class _Scope:
    kind: str  # namespace, section or mutual
    name: str | None


class _Indexer:
    def __init__(self, path: str, lexed: Lexed) -> None:
        self.src = Source(lexed)
        self.text = lexed.text
        self.code = lexed.code
        self.scopes: list[_Scope] = []
        self._prefix = ""  # the current namespace, dotted
        lines = lexed.text.count("\n") + (not lexed.text.endswith("\n") and bool(lexed.text))
        self.out = FileIndex(path, lines=lines, problems=list(lexed.problems))
        self.docs = [s for s in lexed.spans if s.kind is SpanKind.DOC]
        self.doc_ends = [s.end for s in self.docs]
        self.open: Decl | None = None  # the declaration whose end is not yet known
        self.context_start: int | None = None  # the context command whose end is not yet known
        self.context_kind = ""
        self.ambiguous = lexed.ambiguous

    def run(self) -> FileIndex:
        code = self.code
        skip_to = 0
        prefix: tuple[int, int] | None = None  # modifiers and attributes seen just before
        modifiers: list[str] = []
        attributes: list[str] = []
        current: Decl | None = None  # the declaration holes are attributed to
        in_macro = False
        runs: Runs | None = None
        for m in _EVENTS.finditer(code):
            token = m.group()
            start = m.start()
            if start < skip_to:
                continue
            if start and (code[start - 1] == "." or _ID_REST_CHAR.match(code, start - 1)) and token[0] != "#":
                runs = runs or Runs(code)
                if not runs.starts(start):
                    continue  # the middle of a name, a field or a numeral's tail
            word = None if token == "@[" else token
            if word is None or self._is_modifier(word, m.end()):
                end = self._close_bracket(m.end()) if word is None else m.end()
                if prefix is None or code[prefix[1]:start].strip():
                    prefix, modifiers, attributes = (start, end), [], []
                if word is None:
                    attributes.append(self.text[m.end():end - 1].strip())
                    skip_to = end
                else:
                    modifiers.append(word)
                prefix = (prefix[0], end)
                continue
            if word in HOLES:
                self._hole(word, start, current, in_macro)
                continue
            if word in MARKERS or (word in BUILD_TIME_CODE and word not in COMMANDS):
                self._marker(word, word, start, current)
                continue
            if word == "set_option":
                self._marker(word, (self._next_name(m.end()) or "").replace("«", "").replace("»", ""), start,
                             current)
            if word in COLUMN0_COMMANDS and self.src.column(start) != 0:
                continue
            if word in ("inductive", "abbrev") and self._prev_word(start) == "class":
                continue  # `class inductive` was opened at `class`
            if word == "deriving" and self._next_word(m.end()) != "instance":
                continue  # a `deriving` clause of the declaration itself
            if word == "instance" and self._prev_word(start) == "deriving":
                continue
            adjoined = prefix is not None and not code[prefix[1]:start].strip()
            boundary = self._doc_before(prefix[0] if adjoined and prefix else start)
            self._finish(boundary)
            current, in_macro = None, False
            if word in CONTEXT:
                self.context_start = prefix[0] if adjoined and prefix else start
                self.context_kind = word
            if word == "open":  # `open X in` ends at its `in`; the declaration after it follows
                opened = _OPEN.match(self.code, start, self._line_end(start))
                self._marker(word, " ".join(opened.group().split()) if opened else word, start, None)
            if word in BUILD_TIME_CODE:
                self._marker(word, word, start, None)
            if word in DECL_KINDS:
                current = self._open(word, boundary, m.end(), modifiers if adjoined else [],
                                     attributes if adjoined else [])
            elif word in MACRO_KINDS:
                in_macro = True
                self.out.macros.append((word, self.src.line(start)))
            elif word in SCOPES:
                self._scope(word, m.end())
            elif word in ("#exit", "#guard_msgs"):
                self._marker(word, word, start, None)
            elif word == "attribute" and (bracket := code.find("[", m.end(), m.end() + 80)) >= 0:
                skip_to = self._close_bracket(bracket + 1)
                inside = self.text[bracket + 1:skip_to - 1]
                written = " ".join(self.text[start:self._line_end(skip_to)].split())
                names = set(attribute_names(inside))
                if names & {"implemented_by", "extern"}:
                    self._marker("attribute", written, start, None)
                if names & META_ATTRIBUTES:
                    self._marker("meta attribute", written, start, None)
                if "instance" in names:
                    self._marker("instance attribute", written, start, None)
            prefix, modifiers, attributes = None, [], []
        self._finish(len(code))
        self._suspects()
        for offset, why in self.ambiguous:
            self._marker("ambiguous", why, offset, self._enclosing(offset))
        return self.out

    def _suspects(self) -> None:
        """Names that skip or trust around the kernel, however they are spelled."""
        code, text = self.code, self.text
        if any(n in code for n in ("sorryAx", "ofReduce", "trustCompiler", "native")):
            for m in _SUSPECT.finditer(code):
                kind = m.group("name") or "native_decide"
                self._marker(kind, " ".join(m.group().split()), m.start(), self._enclosing(m.start()))
        for a, b in self.src.escaped:  # `«sorryAx»` is masked in the code; its text is the name
            if text[a:b] in SUSPECT_NAMES:
                self._marker(text[a:b], f"«{text[a:b]}»", a, self._enclosing(a))

    def _enclosing(self, offset: int) -> Decl | None:
        for d in reversed(self.out.decls):
            if d.start <= offset <= max(d.end, d.header):
                return d
        return None

    def _line_end(self, offset: int) -> int:
        end = self.text.find("\n", offset)
        return len(self.text) if end < 0 else end

    def _is_modifier(self, word: str | None, after: int) -> bool:
        if word not in MODIFIERS:
            return False
        if word in ("scoped", "local"):  # also attribute scopes and `local notation`
            return self.code.startswith("[", after) or self._next_word(after) in _PREFIXABLE
        return True

    # -- declarations ---------------------------------------------------

    def _open(self, kind: str, start: int, after_kw: int, modifiers: list[str], attributes: list[str]) -> Decl:
        code, text = self.code, self.text
        line = self.src.line(after_kw - len(kind))
        shape = kind
        if kind == "class" and (nxt := self._next_word(after_kw)) in ("inductive", "abbrev"):
            after_kw = self._skip_space(after_kw) + len(nxt)
            shape = nxt
        pos = self._skip_space(after_kw)
        if kind == "instance" and code.startswith("(", pos):  # `(priority := n)`
            pos = self._skip_space(self._close_paren(pos + 1))
        name = None
        if kind != "example" and (m := _NAME.match(text, pos)):
            name = self._qualify(m.group())
            pos = m.end()
        decl = Decl(kind=kind, name=name, line=line, modifiers=tuple(modifiers), attributes=tuple(attributes),
                    start=start, end=pos, header=pos, shape=shape, source=self.src, context=len(self.src.contexts))
        self.open = decl
        self.out.decls.append(decl)
        return decl

    def _finish(self, limit: int) -> None:
        """The open declaration or context command, if any, ends at the last code before `limit`."""
        if self.open is not None:
            self.open.end = max(self.src.rstrip(self.open.header, limit), self.open.header)
            self.open = None
        if self.context_start is not None:
            end = self.src.rstrip(self.context_start, limit)
            self.src.contexts.append(" ".join(self.code[self.context_start:end].split()))
            if self.context_kind in MACRO_KINDS:
                self._syntax(self.context_kind, self.context_start, end)
            self.context_start = None

    def _syntax(self, kind: str, start: int, end: int) -> None:
        """A notation, syntax, macro or elaborator that declares a command or takes an interpolated string."""
        code = self.code[start:end]
        header = code.split("=>", 1)[0].rstrip()
        if kind in ("syntax", "macro", "elab") and _COMMAND_CATEGORY.search(header):
            self._marker("command syntax", kind, start, None)
        if _INTERPOLATED_STR.search(header):
            self._marker("interpolatedStr syntax", kind, start, None)

    # -- scopes -----------------------------------------------------------

    def _scope(self, word: str, after: int) -> None:
        """`namespace A.B` opens one scope per component; `end A.B` closes as many."""
        name = self._next_name(after, same_line=True)
        parts = _split(name) if name else []
        if word == "mutual" or (not parts and word == "section"):
            self.scopes.append(_Scope(word, None))
        elif word in ("namespace", "section"):
            self.scopes.extend(_Scope(word, part) for part in parts)
        elif self.scopes:  # end
            closing: list[str | None] = [*parts] or [None]
            if [s.name for s in self.scopes[-len(closing):]] != closing:
                self.out.problems.append(f"line {self.src.line(after)}: `end {name or ''}` does not match "
                                         "the innermost open scope")
            del self.scopes[-len(closing):]
        else:
            self.out.problems.append(f"line {self.src.line(after)}: `end {name or ''}` closes no open scope")
        self._prefix = ".".join(s.name for s in self.scopes if s.kind == "namespace" and s.name)

    def _qualify(self, name: str) -> str:
        if name.startswith("_root_."):
            return name[len("_root_."):]
        return f"{self._prefix}.{name}" if self._prefix else name

    # -- holes and markers -------------------------------------------------

    def _hole(self, word: str, offset: int, decl: Decl | None, in_macro: bool) -> None:
        if decl is not None:
            decl.holes += 1
        owner = f"{decl.kind}@{decl.line}" if decl else None
        self.out.holes.append(Hole(word, self.src.line(offset), self.src.column(offset),
                                   decl.name if decl else None, owner, in_macro))

    def _marker(self, kind: str, detail: str, offset: int, decl: Decl | None) -> None:
        self.out.markers.append(Marker(kind, detail, self.src.line(offset), decl.name if decl else None))

    # -- small scanners ----------------------------------------------------

    def _skip_space(self, pos: int) -> int:
        return _SPACE.match(self.code, pos).end()  # type: ignore[union-attr]  # matches empty

    def _next_word(self, pos: int) -> str | None:
        m = _NAME.match(self.code, self._skip_space(pos))
        return m.group() if m else None

    def _next_name(self, pos: int, *, same_line: bool = False) -> str | None:
        start = self._skip_space(pos)
        if same_line and "\n" in self.code[pos:start]:
            return None
        m = _NAME.match(self.text, start)
        return m.group() if m else None

    def _prev_word(self, pos: int) -> str:
        m = _LAST_WORD.search(self.code[max(0, pos - 40):pos].rstrip())
        return m.group() if m else ""

    def _doc_before(self, pos: int) -> int:
        """The start of a doc comment that precedes `pos` with only blanks between."""
        i = bisect.bisect_right(self.doc_ends, pos) - 1
        if i >= 0 and not self.code[self.doc_ends[i]:pos].strip():
            return self.docs[i].start
        return pos

    def _close_bracket(self, pos: int) -> int:
        depth = 1
        for m in _BRACKETS.finditer(self.code, pos):
            depth += 1 if m.group() == "[" else -1
            if depth == 0:
                return m.end()
        return len(self.code)

    def _close_paren(self, pos: int) -> int:
        depth = 1
        for i in range(pos, len(self.code)):
            c = self.code[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
        return len(self.code)


def attribute_names(inside: str) -> list[str]:
    """The attribute names of `@[…]` or `attribute […]` contents: `local simp, instance 100` → simp, instance."""
    out = []
    for item in inside.split(","):
        words = item.split()
        while words and words[0] in ("local", "scoped", "-"):
            words = words[1:]
        if words:
            out.append(words[0].lstrip("-"))
    return out


def _split(name: str) -> list[str]:
    return re.findall(r"«[^»]*»|[^.]+", name)


def index_source(path: str, text: str, keywords: Keywords | None = None) -> FileIndex:
    """Index one Lean file given its text. `keywords`: what Lean's token table holds there (`gates/header.py`);
    without it, what the file's own imports show."""
    header = read_header(text)
    keywords = keywords if keywords is not None else own_keywords(header)
    index = _Indexer(path, lex(text, keywords)).run()
    index.imports, index.prelude, index.keywords, index.text = list(header.imports), header.prelude, keywords, text
    return index
