"""The declaration index of one Lean file, built on the masked code of `lexer`.

A single regular-expression pass over the masked code finds the words that
matter (declaration keywords, modifiers, scope commands, `sorry`, `admit`,
markers the integrity gate looks for); each declaration's header is then
scanned token by token only up to the end of its statement. Proof bodies are
never tokenised, which is what keeps the census fast.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gates.header import Header, Keywords, module_name, own_keywords, read_header
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
# Mathlib's `notation3`: syntax read for the tokens and categories it declares, outside the statement hash.
SYNTAX_ONLY = frozenset({"notation3"})
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
BUILD_TIME_CODE = frozenset({"run_cmd", "run_elab", "run_meta", "include_str", "#eval", "#guard", "initialize",
                             "builtin_initialize"})
# Commands that declare elaborator code: it runs while the file is elaborated and can add declarations and axioms.
META_COMMANDS = frozenset({"elab", "elab_rules", "macro_rules", "simproc", "dsimproc", "simproc_decl",
                           "dsimproc_decl"})
# Mathlib's commands that declare an attribute tagging lemmas for a simp set or a label: tagging with it is harmless.
REGISTERING = frozenset({"register_simp_attr", "register_label_attr"})
# Commands that change what the declarations after them mean: their text is part of those statements.
CONTEXT = frozenset({"variable", "include", "omit", "attribute", "set_option"}) | MACRO_KINDS
# Named anywhere, even qualified (`_root_.sorryAx`) or escaped (`«sorryAx»`), these skip or trust around the kernel.
SUSPECT_NAMES = frozenset({"sorryAx", "ofReduceBool", "ofReduceNat", "trustCompiler"})

_WORDS = (DECL_KINDS | MACRO_KINDS | SYNTAX_ONLY | MODIFIERS | SCOPES | COMMANDS | COLUMN0_COMMANDS | HOLES | MARKERS
          | META_COMMANDS | REGISTERING | {"run_cmd", "run_elab", "run_meta", "include_str"})
# Commands among the words that run code, and a term that reads a file.
_BUILD_COMMANDS = frozenset({"run_cmd", "run_elab", "run_meta", "#eval", "#guard", "initialize", "builtin_initialize"})


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
        f"{re.escape(head)}(?<![{_NAME_ONLY}]{re.escape(head)}){_alternation(tails)}(?![{ID_REST}.])"
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
_CATEGORY = re.compile(rf":\s*([{ID_FIRST}][{ID_REST}]*(?:\.[{ID_FIRST}][{ID_REST}]*)*)")
_PRECEDENCE = frozenset({"max", "arg", "lead", "min", "min1", "prec"})
_INTERPOLATED_STR = re.compile(rf"(?<![{ID_REST}.])interpolatedStr(?![{ID_REST}])")
_PLAIN_NAME = re.compile(rf"[{ID_FIRST}][{ID_REST}]*\Z")
_CLOSERS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄", "‹": "›"}
# In a token a project declares, after its first character, these start a comment, string, character literal or
# escaped name where the lexer stands (a `'` but the last); `isValidAtom` (src/Lean/Elab/Syntax.lean) restricts only
# the first character.
_TOKEN_HAZARDS = ("--", "/-", "-/", '"', "'", "«")
# Letters only newer Lean releases read as such (Latin-1, Latin Extended-A, `ⱼ`): in a token, an older Lean splits
# differently.
_NEWER_LETTERS = re.compile("[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017f\u2c7c]")
_LAST_WORD = re.compile(rf"[{ID_REST}]+$")
_ID_REST_CHAR = re.compile(f"[{ID_REST}]")
_PREFIXABLE = DECL_KINDS | MACRO_KINDS | SYNTAX_ONLY | MODIFIERS


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
    offset: int = 0
    args: str = ""  # an attribute command's attributes, escaped names read as Lean reads them


class Origin:
    """Where a file's text and lexed source come from: held, or (an index read from a cache) loaded and lexed again
    on first use. Lexing is a function of the text and the keywords, so the source found again is the one the index
    was built on. Shared by the file's index and its declarations, and by copies of them (it never changes)."""

    __slots__ = ("_keywords", "_load", "_lock", "_source")

    def __init__(self, source: Source | None = None, load: Callable[[], str] | None = None,
                 keywords: Keywords | None = None) -> None:
        self._source, self._load, self._keywords = source, load, keywords
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._source is not None

    def source(self) -> Source:
        source = self._source  # once: `release` may drop it meanwhile
        if source is None:
            with self._lock:
                source = self._source
                if source is None:
                    assert self._load is not None
                    source = self._source = _lexed("", self._load(), self._keywords)[1]
        return source

    def release(self) -> None:
        """Drop a source that can be loaded again (it is, when next asked for)."""
        if self._load is not None:
            self._source = None

    def __deepcopy__(self, memo: dict[int, object]) -> Origin:
        return self

    def __copy__(self) -> Origin:
        return self


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
    top: int = 0  # the line of `start`
    doc: str | None = field(default=None, repr=False)  # the doc comment at `start`, as written (`/-- … -/`)
    origin: Origin | None = field(default=None, repr=False)
    sums: tuple[str, str] | None = field(default=None, repr=False)  # the statement's and the whole's hash, kept
    _statement: Statement | None = field(default=None, repr=False)

    @property
    def source(self) -> Source | None:
        return self.origin.source() if self.origin is not None else None

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
        return self.sums[0] if self.sums is not None else self._analyse().hash

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
    def signature_end(self) -> int:
        """Offset where the signature ends: at the `:=` (or the first `|` alternative, or `where`) of its body."""
        return self._analyse().end

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
        return self.sums[1] if self.sums is not None else self._analyse().whole

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
    registered: list[str] = field(default_factory=list)  # attributes it declares (`register_simp_attr`)
    commands: list[int] = field(default_factory=list)  # where each command starts (its doc, attributes included)
    scopes: list[tuple[int, int]] = field(default_factory=list)  # (start, end) of each section or namespace closed
    origin: Origin | None = field(default=None, repr=False, compare=False)
    digest: str = ""  # sha256 of the text (hex): what Lean's listings of it are keyed by
    # What is derived from it and kept with it, as it never changes once made (`gates.census.Census`).
    memo: dict[str, object] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def source(self) -> Source | None:
        return self.origin.source() if self.origin is not None else None

    @property
    def text(self) -> str:
        return self.origin.source().text if self.origin is not None else ""

    @property
    def header(self) -> Header:
        return Header(self.prelude, tuple(self.imports), 0)

    @property
    def code_lines(self) -> int:
        """Lines holding code: not blank, not only comments, not inside a literal (what a split moves)."""
        assert self.source is not None
        return sum(1 for line in self.source.code.split("\n") if line.strip())

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
    start: int = 0


class _Indexer:
    def __init__(self, path: str, lexed: Lexed) -> None:
        self.src = Source(lexed)
        self.origin = Origin(self.src)
        self.text = lexed.text
        self.code = lexed.code
        self.scopes: list[_Scope] = []
        self._prefix = ""  # the current namespace, dotted
        lines = lexed.text.count("\n") + (not lexed.text.endswith("\n") and bool(lexed.text))
        self.out = FileIndex(path, lines=lines, problems=list(lexed.problems))
        self.docs = [s for s in lexed.spans if s.kind is SpanKind.DOC]
        self.doc_ends = [s.end for s in self.docs]
        self.doc_at = {s.start: s for s in self.docs}
        self.open: Decl | None = None  # the declaration whose end is not yet known
        self.context_start: int | None = None  # the context command whose end is not yet known
        self.context_kind = ""
        self.context_scope = ""  # `local` or `scoped`, written before it
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
                    attributes.append(" ".join(self._named(m.end(), end - 1).split()))
                    skip_to = end
                else:
                    modifiers.append(word)
                prefix = (prefix[0], end)
                continue
            if word in HOLES:
                self._hole(word, start, current, in_macro)
                continue
            if word in MARKERS or (word in BUILD_TIME_CODE and word not in _BUILD_COMMANDS):
                self._marker(word, word, start, current)
                continue
            if word == "set_option":
                self._marker(word, module_name(self._next_name(m.end()) or ""), start, current)
            if word in COLUMN0_COMMANDS and self.src.column(start) != 0:
                if word == "open":  # in a proof (`by open Nat in simp`), or a command all the same
                    self._marker(word, self._opened(start), start, current)
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
            self.out.commands.append(boundary)
            current, in_macro = None, False
            if word in CONTEXT or word in SYNTAX_ONLY:
                self.context_start = prefix[0] if adjoined and prefix else start
                self.context_kind = word
                self.context_scope = next((w for w in ("local", "scoped") if adjoined and w in modifiers), "")
            if word == "open":  # `open X in` ends at its `in`; the declaration after it follows
                self._marker(word, self._opened(start), start, None)
            if word in BUILD_TIME_CODE:
                self._marker(word, word, start, None)
            if word in META_COMMANDS:
                self._marker("meta command", word, start, None)
            if word in ("export", "deriving"):
                self._marker(word, " ".join(self.text[start:self._line_end(start)].split()), start, None)
            if word in REGISTERING and (name := self._next_name(m.end())):
                self.out.registered.append(module_name(name))
            if word in DECL_KINDS:
                current = self._open(word, boundary, m.end(), modifiers if adjoined else [],
                                     attributes if adjoined else [])
            elif word in MACRO_KINDS or word in SYNTAX_ONLY:
                in_macro = True
                self.out.macros.append((word, self.src.line(start)))
            elif word in SCOPES:
                self._scope(word, m.end())
            elif word in ("#exit", "#guard_msgs"):
                self._marker(word, word, start, None)
            elif word == "attribute" and code.startswith("[", bracket := self._skip_space(m.end())):
                skip_to = self._close_bracket(bracket + 1)  # `attribute /- … -/ [instance] x`: blanks and comments
                written = " ".join(self.text[start:self._line_end(skip_to)].split())
                self._marker("attribute", written, start, None, args=self._named(bracket + 1, skip_to - 1).strip())
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
        doc = self.doc_at.get(start)
        decl = Decl(kind=kind, name=name, line=line, modifiers=tuple(modifiers), attributes=tuple(attributes),
                    start=start, end=pos, header=pos, shape=shape, origin=self.origin, context=len(self.src.contexts),
                    top=self.src.line(start), doc=text[doc.start:doc.end] if doc is not None else None)
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
            if self.context_kind in CONTEXT:
                self.src.contexts.append(" ".join(self.code[self.context_start:end].split()))
            if self.context_kind in MACRO_KINDS or self.context_kind in SYNTAX_ONLY:
                self._syntax(self.context_kind, self.context_start, end)
                self._marker("syntax", " ".join(self.code[self.context_start:end].split()), self.context_start,
                             None, args=self.context_scope)
            self.context_start = None

    def _syntax(self, kind: str, start: int, end: int) -> None:
        """A notation, syntax, macro or elaborator: the category it extends (a command could redefine `#print
        axioms`), whether it takes an interpolated string, and the tokens it declares. Read on its own text up to
        its right-hand side, escaped names read as Lean reads them (`«command»` is `command`)."""
        arrow = _depth0(self.code, start, end).find("=>")
        header = end if arrow < 0 or kind == "syntax" else start + arrow
        named = self._named(start, header)
        flat = _depth0(named, 0, len(named))
        category = None
        if kind == "syntax":  # the first `: cat` that is no precedence (`term:max`) ends the command
            category = next((m.group(1) for m in _CATEGORY.finditer(flat)
                             if m.group(1) not in _PRECEDENCE), None)
        elif kind in ("macro", "elab", "elab_rules"):  # the last `: cat` before `<=` (an expected type) and `=>`
            cut = flat.find("<=")
            found = list(_CATEGORY.finditer(flat, 0, cut if cut >= 0 else len(flat)))
            category = found[-1].group(1) if found else None
        if category == "command":
            self._marker("command syntax", kind, start, None)
        if _INTERPOLATED_STR.search(named):
            self._marker("interpolatedStr syntax", kind, start, None)
        if kind not in ("macro_rules", "elab_rules"):
            for atom in self._atoms(start, header):
                self.out.tokens.append(atom)
                self._marker("token", f"{kind} declares `{atom}`", start, None)

    def _named(self, start: int, end: int) -> str:
        """The code between offsets with each escaped plain name restored (`«command»` as ` command `)."""
        out, pos = [], start
        escaped = self.src.escaped
        for a, b in escaped[bisect.bisect_left(escaped, (start, start)):]:
            if b > end:
                break
            if not _PLAIN_NAME.match(self.text, a, b):
                continue
            out += [self.code[pos:a - 1], " ", self.text[a:b], " "]
            pos = b + 1
        out.append(self.code[pos:end])
        return "".join(out)

    def _atoms(self, start: int, end: int) -> list[str]:
        """The tokens declared by the string literals between offsets that hold a comment, string, character
        literal or escape start after their first character, or a letter only newer Lean reads as one."""
        out = []
        first = bisect.bisect_left(self.src.span_starts, start)
        for span in self.src.spans[first:]:
            if span.start >= end:
                break
            if span.kind is not SpanKind.STRING or not self.text.startswith('"', span.start):
                continue
            atom = _unescape(self.text[span.start + 1:span.end - 1]).strip()
            if not atom or any(c.isspace() for c in atom):
                continue  # not a token: Lean refuses an atom holding whitespace
            tail = atom[1:]  # a final `'` the lexer reads as a prime, or weighs as a literal after a symbol
            if (any(h in tail for h in _TOKEN_HAZARDS if h != "'") or "'" in tail[:-1]
                    or _NEWER_LETTERS.search(atom)):
                out.append(atom)
        return out

    # -- scopes -----------------------------------------------------------

    def _scope(self, word: str, after: int) -> None:
        """`namespace A.B` opens one scope per component; `end A.B` closes as many."""
        name = self._next_name(after, same_line=True)
        parts = _split(name) if name else []
        if word == "mutual" or (not parts and word == "section"):
            self.scopes.append(_Scope(word, None, after))
        elif word in ("namespace", "section"):
            self.scopes.extend(_Scope(word, part, after) for part in parts)
        elif self.scopes:  # end
            closing: list[str | None] = [*parts] or [None]
            if [s.name for s in self.scopes[-len(closing):]] != closing:
                self.out.problems.append(f"line {self.src.line(after)}: `end {name or ''}` does not match "
                                         "the innermost open scope")
            self.out.scopes += [(s.start, after) for s in self.scopes[-len(closing):] if s.kind != "mutual"]
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

    def _marker(self, kind: str, detail: str, offset: int, decl: Decl | None, *, args: str = "") -> None:
        self.out.markers.append(Marker(kind, detail, self.src.line(offset), decl.name if decl else None, offset, args))

    def _opened(self, start: int) -> str:
        """`open X in` or `open X`, as written on its line."""
        opened = _OPEN.match(self.code, start, self._line_end(start))
        return " ".join(self.text[start:opened.end()].split()) if opened else "open"

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


def _depth0(code: str, start: int, end: int) -> str:
    """`code[start:end]` with what bracket groups enclose blanked, so only its top level is read."""
    out, stack = list(code[start:end]), []
    for i, c in enumerate(out):
        if c in _CLOSERS:
            stack.append(_CLOSERS[c])
        elif stack and c == stack[-1]:
            stack.pop()
            continue
        if stack and c not in _CLOSERS:
            out[i] = " "
    return "".join(out)


def _unescape(body: str) -> str:
    """The value of a string literal's body (`\\"` is `"`)."""
    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", lambda m: _ESCAPES.get(m.group(1)) or (
        chr(int(m.group(1)[1:], 16)) if len(m.group(1)) > 1 else m.group(1)), body, flags=re.DOTALL)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\n": ""}


def attribute_names(inside: str) -> list[str]:
    """The attribute names of `@[…]` or `attribute […]` contents: `local simp, instance 100` → simp, instance;
    `-instance` (erased) → instance. A comma inside brackets or parentheses separates nothing."""
    return [name for name, _ in attribute_items(inside)]


def attribute_items(inside: str) -> list[tuple[str, str]]:
    """Each attribute of `@[…]` or `attribute […]` contents: its name and its whole text."""
    out, pos = [], 0
    flat = _depth0(inside, 0, len(inside))
    for piece in flat.split(","):
        item, pos = inside[pos:pos + len(piece)], pos + len(piece) + 1
        words = piece.split()
        while words and words[0] in ("local", "scoped", "-"):
            words = words[1:]
        if words:
            out.append((words[0].lstrip("-"), item))
    return out


def _split(name: str) -> list[str]:
    return re.findall(r"«[^»]*»|[^.]+", name)


def index_source(path: str, text: str, keywords: Keywords | None = None) -> FileIndex:
    """Index one Lean file given its text. `keywords`: what Lean's token table holds there (`gates/header.py`);
    without it, what the file's own imports show."""
    return _lexed(path, text, keywords)[0]


def _lexed(path: str, text: str, keywords: Keywords | None) -> tuple[FileIndex, Source]:
    header = read_header(text)
    keywords = keywords if keywords is not None else own_keywords(header)
    indexer = _Indexer(path, lex(text, keywords))
    index = indexer.run()
    index.origin = indexer.origin
    index.imports, index.prelude, index.keywords = list(header.imports), header.prelude, keywords
    index.digest = hashlib.sha256(text.encode()).hexdigest()
    return index, indexer.src
