"""Textbook entities of a Lean project, found three ways, each paired with the Lean declarations that formalize it.

1. A leanblueprint (`blueprint/src`). The files are read in document order from `content.tex` (else
   `web.tex`, else `print.tex`) following `\\input`/`\\include`; without any of those, every `*.tex` under
   `src` in name order. An entity is a theorem-like environment (definition, theorem, lemma, proposition,
   corollary, conjecture, claim, axiom, their usual abbreviations, and any other environment carrying
   `\\lean{}` or `\\leanok` of its own). Its id is its `\\label`, its Lean names the comma-separated
   `\\lean{}` list, `leanok` its `\\leanok` (or `\\mathlibok`), its terms the optional `[title]` and the
   `\\emph{}` phrases. `uses` joins `\\uses{}` of the statement and of its proof with the labels `\\ref`,
   `\\cref`, `\\eqref`, … name in either (a label inside an entity, such as an equation's, stands for the
   entity; references to sections or to labels defined elsewhere are dropped). A proof belongs to the label
   its `\\proves{}` names, else to the statement just before it. The NL is the body with the blueprint
   macros and comments removed; the context is the prose between the previous statement or proof and this
   one (its last `CONTEXT_CHARS`). The chapter is the last `\\chapter{}` title, or the last `\\section{}`
   title when the blueprint has no chapters, or the file's name.
2. The mapping files `[audit] mappings` names, by default every `lean_status.json` (OpenMath's shape: an object
   from ids to rows; a list of rows with an `id`, or `{"entities": [...]}`, also work). Fields read from a row,
   first present wins: Lean names `lean_symbol` | `lean_symbols` | `lean` | `lean_names` | `lean_name` (a list,
   or a string of comma-separated names); `lean_file` (only to resolve a short name); status `status` |
   `formalization_status` (`formalized`, `done`, `proved`, `complete` mean formalized); statement
   `statement_latex` (outer environment stripped) | `statement` | `nl` | `statement_text`; proof
   `proof_latex` | `proof` | `proof_text`; context `context_latex` | `context` (the default rubric falls back
   on `preamble`); `kind`; `number`; title `title` | `name`; `chapter`; terms `introduces` | `terms`;
   `preamble`; `variables`; citations `uses` (ids) |
   `dependencies` (ids, or objects with `id` and `edge_type`: only explicit references count, not
   OpenMath's `uses_concept` keyword matches nor `llm_dependency` guesses). A row without a statement is
   completed from `entities/<id with ':' as '_'>.json` beside the mapping file, as OpenMath keeps them.
3. Doc comments `/-- Theorem 2.3 … -/` (Definition, Lemma, Proposition, Corollary; `**bold**` allowed;
   an optional `(Title)` after the number) directly before a declaration: the id is `thm:2.3`
   (`def:`, `lem:`, `prop:`, `cor:`), the NL the doc text after the heading, the Lean name the declaration's.
   Declarations sharing a number (a statement split in cases) join one entity.

Lean names from the blueprint and the mapping are checked against the project's declaration index: a name exactly one
declaration could mean — the declaration of that full name, or one whose full name it ends (`cInverseLog_neg`
for `OpenMath.….cInverseLog_neg`) — is replaced by that full name, preferring the row's `lean_file` among
several; `_root_.name` means the full name only. A name two declarations could mean, or whose declaration two
files repeat, is ambiguous: reported and dropped (it pairs with none of them), never resolved to the first one
found. Any other is kept as written and reported (it may live in Mathlib).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audit.entities import Entity
from gates.census import Census
from gates.index import Decl, FileIndex
from gates.scope import matches
from gates.tree import DirTree

CONTEXT_CHARS = 8000  # generous: the judges cut it to [audit] context_chars
BLUEPRINT = "blueprint/src"
MAPPINGS = ("**/lean_status.json",)
ENV_KINDS = {"definition": "definition", "defn": "definition", "dfn": "definition", "theorem": "theorem",
             "thm": "theorem", "lemma": "lemma", "lem": "lemma", "proposition": "proposition",
             "prop": "proposition", "corollary": "corollary", "cor": "corollary", "conjecture": "conjecture",
             "claim": "claim", "axiom": "axiom"}
ID_PREFIX = {"theorem": "thm", "definition": "def", "lemma": "lem", "proposition": "prop", "corollary": "cor"}
PREFIX_KIND = {"thm": "theorem", "def": "definition", "defn": "definition", "lem": "lemma", "prop": "proposition",
               "cor": "corollary", "conj": "conjecture"}
FORMALIZED = frozenset({"formalized", "done", "proved", "proven", "complete", "completed"})
EXPLICIT_EDGES = frozenset({"uses_theorem", "uses_definition", "uses_lemma", "uses_corollary", "uses_equation_from",
                            "uses", "cites", "citation"})
BLUEPRINT_MACROS = ("label", "lean", "uses", "proves", "discussion", "leanok", "mathlibok", "notready")
_NO_ARG = frozenset({"leanok", "mathlibok", "notready"})

_ENV = re.compile(r"\\(begin|end)\s*\{([^{}]*)\}")
_HEADING = re.compile(r"\\(chapter|section)\*?\s*(?:\[[^\]]*\]\s*)?(?=\{)")
_INPUT = re.compile(r"\\(?:input|include)\s*\{([^{}]*)\}")
_MACRO = re.compile(r"\\(" + "|".join(BLUEPRINT_MACROS) + r"|emph|ref|cref|Cref|eqref|autoref|labelcref)(?![A-Za-z])")
_REFS = frozenset({"ref", "cref", "Cref", "eqref", "autoref", "labelcref"})
_DOC_START = re.compile(r"/--\s*(?:\*\*|__|\*|_)?\s*(?:Theorem|Definition|Lemma|Proposition|Corollary)\s", re.I)
_DOC_HEAD = re.compile(
    r"\A\s*(?:\*\*|__|\*|_)?\s*(?P<kind>Theorem|Definition|Lemma|Proposition|Corollary)\s+"
    r"(?P<num>\d+(?:\.\d+)*[A-Za-z]?)(?!\w)(?!\.\d)\s*(?:\*\*|__|\*|_)?\s*(?:\((?P<title>[^()\n]*)\))?\s*(?:\*\*|__)?"
    r"\s*[:.\u2014\u2013-]?\s*", re.IGNORECASE)


# -- the project's declarations ----------------------------------------------------------------------------


@dataclass
class Declarations:
    """Every named declaration of a census by full name, for resolving the names a blueprint or mapping gives."""

    by_name: dict[str, list[str]] = field(default_factory=dict)  # full name → the files declaring it
    by_last: dict[str, list[str]] = field(default_factory=dict)  # last component → full names
    base: Declarations | None = None  # the base's: it decides every name it knows (see `resolve`)

    @classmethod
    def of(cls, census: Census, base: Census | None = None) -> Declarations:
        out = cls(base=cls.of(base) if base is not None else None)
        for path, d in census.decls():
            if d.name is not None:
                out.by_name.setdefault(d.name, []).append(path)
        for name in out.by_name:
            out.by_last.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        return out

    def resolve(self, name: str, *, file: str | None = None) -> tuple[str | None, list[str]]:
        """The full name `name` stands for, or None with the candidates when it is missing or ambiguous. Every
        declaration the name could mean is a candidate — the one of that exact full name and those it ends —
        so a later declaration cannot take the name over; `_root_.` asks for the exact one only. With a `base`, a
        name the base knows means what it meant there, whatever a change declared since (a decoy ending the same
        name cannot make it ambiguous and so unpair it); only a name the base did not know is looked up here."""
        if self.base is not None:
            full, candidates = self.base.resolve(name, file=file)
            if full is not None or candidates:
                return full, candidates
        exact = name.startswith("_root_.")
        name = name.removeprefix("_root_.")
        found = [name] if name in self.by_name else []
        if not exact:
            found += [n for n in self.by_last.get(name.rsplit(".", 1)[-1], []) if n.endswith("." + name)]
        if file is not None and len(found) > 1:
            found = [n for n in found if file in self.by_name[n]] or found
        if len(found) == 1 and len(self.by_name[found[0]]) == 1:
            return found[0], found
        return None, sorted(f"{n} ({', '.join(self.by_name[n])})" if len(self.by_name[n]) > 1 else n for n in found)


def resolve_names(entity: Entity, names: Declarations, problems: list[str], *, file: str | None = None) -> None:
    """Replace the entity's Lean names by full names where the index pins them down; report the rest. An
    ambiguous name is dropped: kept as written, it could be the full name of one of the declarations it could
    mean."""
    out: list[str] = []
    for raw in entity.lean:
        full, candidates = names.resolve(raw, file=file)
        if full is None and candidates:
            problems.append(f"{entity.source}: {entity.id}: Lean name `{raw}` is ambiguous: {', '.join(candidates)}; "
                            "it pairs with none of them")
            continue
        if full is None:
            problems.append(f"{entity.source}: {entity.id}: Lean name `{raw}` names no declaration of the project "
                            "(a dependency's name, a typo, or not written yet)")
        out.append(full or raw)
    entity.lean = _unique(out)


# -- blueprint ------------------------------------------------------------------------------------------------


@dataclass
class _Env:
    name: str
    begin: int  # offset of `\begin`
    body: int  # offset after `\begin{name}`
    end: int  # offset of `\end`, or where an unclosed environment is taken to stop
    after: int  # offset after `\end{name}`
    depth: int


@dataclass
class _Tex:
    """One blueprint file: its text, the same with comments blanked, and line arithmetic."""

    rel: str
    text: str
    clean: str = ""
    newlines: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.clean = _strip_comments(self.text)
        self.newlines = [m.start() for m in re.finditer("\n", self.text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset) + 1

    def where(self, offset: int) -> str:
        return f"{self.rel}:{self.line(offset)}"


@dataclass
class _Statement:
    entity: Entity
    tex: _Tex
    env: _Env
    labels: list[str]  # every label inside, its own first
    uses: list[str]  # labels from \uses
    refs: list[str]  # labels from \ref and friends
    headings: tuple[str, str] = ("", "")  # the chapter and the section it is in
    has_proof: bool = False


class _Blueprint:
    def __init__(self, root: Path, src: Path) -> None:
        self.root, self.src = root, src
        self.problems: list[str] = []
        self.statements: list[_Statement] = []
        self.by_label: dict[str, _Statement] = {}
        self.headings: dict[str, str] = {"chapter": "", "section": ""}
        self.chapters_seen = False
        self.seen: set[Path] = set()

    def run(self) -> tuple[list[Entity], list[str]]:
        entry = next((self.src / n for n in ("content.tex", "web.tex", "print.tex") if (self.src / n).is_file()), None)
        if entry is not None:
            self._file(entry)
        else:
            for path in sorted(self.src.rglob("*.tex")):
                self._file(path)
        self._link()
        for s in self.statements:  # chapters when the blueprint has any, else sections; else the file's name
            chapter, section = s.headings
            s.entity.chapter = (chapter if self.chapters_seen else section) or Path(s.tex.rel).stem
        return [s.entity for s in self.statements], self.problems

    def _file(self, path: Path) -> None:
        path = path.resolve()
        if path in self.seen:
            return
        self.seen.add(path)
        rel = _relative(path, self.root)
        try:
            tex = _Tex(rel, path.read_text(encoding="utf-8", errors="replace"))
        except OSError as e:
            self.problems.append(f"{rel}: cannot be read ({e.strerror or e})")
            return
        envs = self._environments(tex)
        events: list[tuple[int, str, Any]] = [(e.begin, "env", e) for e in envs]
        events += [(m.start(), "heading", m) for m in _HEADING.finditer(tex.clean)]
        events += [(m.start(), "input", m) for m in _INPUT.finditer(tex.clean)]
        last: _Statement | None = None  # the statement a following proof belongs to
        prose = 0  # where the prose before the next statement starts
        for _, what, item in sorted(events, key=lambda e: e[0]):
            if what == "heading":
                arg = _brace_arg(tex.clean, item.end())
                self.headings[item.group(1)] = _plain(arg[0]) if arg else ""
                if item.group(1) == "chapter":
                    self.chapters_seen, self.headings["section"] = True, ""
            elif what == "input":
                target = (self.src / item.group(1).strip())
                target = target if target.suffix == ".tex" else target.with_name(target.name + ".tex")
                if not target.resolve().is_relative_to(self.root.resolve()):
                    self.problems.append(f"{tex.where(item.start())}: \\input{{{item.group(1)}}}: outside the "
                                         "project; not read")
                elif target.is_file():
                    self._file(target)
                else:
                    self.problems.append(f"{tex.where(item.start())}: \\input{{{item.group(1)}}}: no such file")
            elif item.name == "proof":
                self._proof(tex, item, envs, last)
                last, prose = None, max(prose, item.after)
            elif (statement := self._statement(tex, item, envs, prose)) is not None:
                last, prose = statement, max(prose, item.after)

    def _environments(self, tex: _Tex) -> list[_Env]:
        """Every environment, paired by a stack; unclosed and unmatched ones are reported."""
        out: list[_Env] = []
        stack: list[_Env] = []
        for m in _ENV.finditer(tex.clean):
            name = m.group(2).strip()
            if m.group(1) == "begin":
                env = _Env(name, m.start(), m.end(), len(tex.clean), len(tex.clean), len(stack))
                stack.append(env)
                out.append(env)
            elif not any(e.name == name for e in stack):
                self.problems.append(f"{tex.where(m.start())}: \\end{{{name}}} closes no \\begin{{{name}}}")
            else:
                while stack[-1].name != name:
                    self._unclosed(tex, stack.pop(), m.start(), out)
                env = stack.pop()
                env.end, env.after = m.start(), m.end()
        while stack:
            self._unclosed(tex, stack.pop(), len(tex.clean), out)
        return out

    def _unclosed(self, tex: _Tex, env: _Env, limit: int, envs: list[_Env]) -> None:
        """An environment never closed stops where the next sibling statement or proof begins."""
        nxt = [e.begin for e in envs if e.begin > env.begin and e.depth <= env.depth + 1 and _entity_env(e.name)]
        env.end = env.after = min([limit, *nxt])
        self.problems.append(f"{tex.where(env.begin)}: \\begin{{{env.name}}} is never closed; "
                             f"read up to line {tex.line(env.end)}")

    def _statement(self, tex: _Tex, env: _Env, envs: list[_Env], prose: int) -> _Statement | None:
        if env.name.rstrip("*").lower() not in ENV_KINDS and "\\lean" not in tex.clean[env.body:env.end]:
            return None  # itemize, equation, …: no statement unless it carries \lean or \leanok itself
        own = _own_text(tex.clean, env, envs)
        macros = list(self._macros(tex, own, env.body, env.end))
        kind = ENV_KINDS.get(env.name.rstrip("*").lower())
        if kind is None and not any(name in ("lean", "leanok") for name, *_ in macros):
            return None
        title, body = _bracket_arg(tex.clean, env.body)
        all_macros = list(self._macros(tex, tex.clean, body, env.end, report=False))
        labels = [arg for name, arg, _ in macros if name == "label" and arg]
        labels += [arg for name, arg, _ in all_macros if name == "label" and arg and arg not in labels]
        lean = [n.strip() for name, arg, _ in macros if name == "lean" and arg for n in arg.split(",")]
        own_label = next((arg for name, arg, _ in macros if name == "label" and arg), None)
        entity = Entity(
            id=own_label or f"{Path(tex.rel).stem}:{tex.line(env.begin)}",
            kind=kind or env.name.rstrip("*"),
            name=_plain(title) if title else (own_label or f"{env.name} at {tex.where(env.begin)}"),
            nl=_nl(tex.clean[body:env.end]),
            lean=_unique(n for n in lean if n),
            context=_context(tex.clean[prose:env.begin]),
            terms=_unique([*([_plain(title)] if title and re.search(r"[A-Za-z]{3}", title) else []),
                           *(_plain(arg) for name, arg, _ in all_macros if name == "emph" and arg)]),
            source=tex.where(env.begin),
            leanok=any(name in ("leanok", "mathlibok") for name, *_ in macros),
        )
        statement = _Statement(entity, tex, env, labels,
                               uses=[a for n, arg, _ in macros if n == "uses" and arg for a in _split(arg)],
                               refs=[a for n, arg, _ in all_macros if n in _REFS and arg for a in _split(arg)],
                               headings=(self.headings["chapter"], self.headings["section"]))
        for label in labels:
            if label in self.by_label and label == own_label:
                self.problems.append(f"{entity.source}: label `{label}` already used at "
                                     f"{self.by_label[label].entity.source}; this statement is skipped")
                return None
            self.by_label.setdefault(label, statement)
        self.statements.append(statement)
        return statement

    def _proof(self, tex: _Tex, env: _Env, envs: list[_Env], last: _Statement | None) -> None:
        own = _own_text(tex.clean, env, envs)
        macros = list(self._macros(tex, own, env.body, env.end))
        proves = next((arg for name, arg, _ in macros if name == "proves" and arg), None)
        target = self.by_label.get(proves.strip()) if proves else last
        if proves and target is None:
            self.problems.append(f"{tex.where(env.begin)}: \\proves{{{proves}}} names no statement before it")
            return
        if target is None:
            self.problems.append(f"{tex.where(env.begin)}: a proof that follows no statement; ignored")
            return
        if target.has_proof:
            self.problems.append(f"{tex.where(env.begin)}: a second proof of {target.entity.id}; ignored")
            return
        all_macros = list(self._macros(tex, tex.clean, env.body, env.end, report=False))
        target.has_proof = True
        target.entity.proof = _nl(tex.clean[env.body:env.end])
        target.uses += [a for n, arg, _ in macros if n == "uses" and arg for a in _split(arg)]
        target.refs += [a for n, arg, _ in all_macros if n in _REFS and arg for a in _split(arg)]
        target.labels += [arg for n, arg, _ in all_macros if n == "label" and arg]
        for label in target.labels:
            self.by_label.setdefault(label, target)

    def _macros(self, tex: _Tex, text: str, start: int, end: int, *,
                report: bool = True) -> Iterator[tuple[str, str | None, int]]:
        """The blueprint macros, `\\emph` and the reference macros between two offsets, with their argument."""
        for m in _MACRO.finditer(text, start, end):
            name = m.group(1)
            if name in _NO_ARG:
                yield name, None, m.start()
                continue
            arg = _brace_arg(text, m.end(), end)
            if arg is None:
                if report:
                    self.problems.append(f"{tex.where(m.start())}: \\{name} without a closed {{…}} argument")
                continue
            yield name, arg[0].strip(), m.start()

    def _link(self) -> None:
        """Turn the labels each statement uses or refers to into entity ids."""
        for s in self.statements:
            ids: list[str] = []
            for label in s.uses:
                target = self.by_label.get(label)
                if target is None:
                    self.problems.append(f"{s.entity.source}: {s.entity.id}: \\uses{{{label}}} names no "
                                         "label of the blueprint")
                else:
                    ids.append(target.entity.id)
            ids += [t.entity.id for label in s.refs if (t := self.by_label.get(label)) is not None]
            s.entity.uses = _unique(i for i in ids if i != s.entity.id)


def from_blueprint(root: Path, census: Census | None = None, *, src_dir: str = BLUEPRINT, base: Census | None = None
                   ) -> tuple[list[Entity], list[str]]:
    """The entities of `root/blueprint/src` (none when it has no blueprint), and what could not be read; Lean
    names resolved against `census` (and first `base`, when given: `Declarations.resolve`)."""
    src = root / src_dir
    if not src.is_dir():
        return [], []
    entities, problems = _Blueprint(root, src).run()
    if census is not None:
        names = Declarations.of(census, base)
        for e in entities:
            resolve_names(e, names, problems)
    return entities, problems


def _strip_comments(text: str) -> str:
    """Blank every `%` comment (not `\\%`), keeping offsets and newlines."""
    out = []
    for line in text.split("\n"):
        m = re.search(r"(?<!\\)(?:\\\\)*%", line)
        out.append(line if m is None else line[:m.end() - 1] + " " * (len(line) - m.end() + 1))
    return "\n".join(out)


def _brace_arg(text: str, pos: int, limit: int | None = None) -> tuple[str, int] | None:
    """The `{…}` argument starting at `pos` (after blanks), braces nested, and the offset after it."""
    limit = len(text) if limit is None else limit
    while pos < limit and text[pos] in " \t\n":
        pos += 1
    if pos >= limit or text[pos] != "{":
        return None
    depth, i = 0, pos
    while i < limit:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return text[pos + 1:i], i + 1
        i += 1
    return None


def _bracket_arg(text: str, pos: int) -> tuple[str | None, int]:
    """An optional `[title]` on the line of `\\begin{…}`, and where the body starts."""
    m = re.compile(r"[ \t]*\[").match(text, pos)
    if m is None:
        return None, pos
    depth = 0
    for i in range(m.end(), len(text)):
        c = text[i]
        if text.startswith("\n\n", i):
            break
        depth += (c == "{") - (c == "}")
        if c == "]" and depth == 0:
            return text[m.end():i], i + 1
    return None, pos


def _own_text(clean: str, env: _Env, envs: list[_Env]) -> str:
    """The text with the environments nested in `env` blanked: its own macros are those left."""
    pieces, pos = [clean[:env.body]], env.body
    for e in envs:
        if env.body <= e.begin < env.end and e.depth == env.depth + 1 and e.begin >= pos:
            stop = min(e.after, env.end)
            pieces += [clean[pos:e.begin], re.sub(r"[^\n]", " ", clean[e.begin:stop])]
            pos = stop
    pieces.append(clean[pos:])
    return "".join(pieces)


def _entity_env(name: str) -> bool:
    return name == "proof" or name.rstrip("*").lower() in ENV_KINDS


def _split(arg: str) -> list[str]:
    return [a.strip() for a in arg.split(",") if a.strip()]


def _strip_blueprint_macros(text: str) -> str:
    out, pos = [], 0
    for m in re.finditer(r"\\(" + "|".join(BLUEPRINT_MACROS) + r")(?![A-Za-z])", text):
        if m.start() < pos:
            continue
        if m.group(1) in _NO_ARG:
            out.append(text[pos:m.start()])
            pos = m.end()
        elif (arg := _brace_arg(text, m.end())) is not None:  # one without a closed argument stays as written
            out.append(text[pos:m.start()])
            pos = arg[1]
    out.append(text[pos:])
    return "".join(out)


def _nl(body: str) -> str:
    """A body as NL: blueprint macros dropped, lines stripped, runs of blank lines collapsed."""
    lines = [line.strip() for line in _strip_blueprint_macros(body).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _context(prose: str) -> str:
    """The prose before a statement, its last `CONTEXT_CHARS` from a paragraph or sentence start."""
    text = _nl(prose)
    if len(text) <= CONTEXT_CHARS:
        return text
    tail = text[-CONTEXT_CHARS:]
    cut = tail.find("\n\n")
    if cut < 0 or cut > CONTEXT_CHARS // 2:
        m = re.search(r"[.!?]\s+", tail)
        cut = m.end() if m and m.end() < CONTEXT_CHARS // 2 else 0
    return "… " + tail[cut:].strip()


def _plain(latex: str) -> str:
    """Light de-LaTeX for titles and terms: labels and font commands dropped, braces and spaces collapsed."""
    text = re.sub(r"\\label\s*\{[^{}]*\}", "", latex)
    text = re.sub(r"\\(?:it|bf|em|rm|sf|tt|textit|textbf|emph|mathrm)(?![A-Za-z])\s*", "", text)
    return " ".join(text.replace("{", "").replace("}", "").replace("~", " ").split())


# -- mapping file ---------------------------------------------------------------------------------------------


def mapping_files(root: Path, globs: Sequence[str] = MAPPINGS) -> list[Path]:
    """The mapping files of the project that `globs` name (build and dependency folders skipped)."""
    return [root / p for p in DirTree(root).files() if matches(p, list(globs))]


def side_files(mapping_globs: Sequence[str]) -> list[str]:
    """Globs of the `entities/<id>.json` files read beside the mapping files `mapping_globs` name."""
    return [f"{g.rpartition('/')[0] + '/' if '/' in g else ''}entities/*.json" for g in mapping_globs]


def from_mapping(path: Path, root: Path, census: Census | None = None, base: Census | None = None
                 ) -> tuple[list[Entity], list[str]]:
    """The entities of one mapping file (see the module docstring for the fields read); Lean names resolved as
    `from_blueprint` resolves them."""
    rel = _relative(path, root)
    problems: list[str] = []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return [], [f"{rel}: cannot be read as JSON ({e})"]
    names = Declarations.of(census, base) if census is not None else None
    entities: list[Entity] = []
    for key, row in _rows(data, rel, problems):
        side = path.parent / "entities" / f"{key.replace(':', '_')}.json"
        if not _first(row, "statement_latex", "statement", "nl", "statement_text") and side.is_file():
            try:
                extra = json.loads(side.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                problems.append(f"{_relative(side, root)}: cannot be read as JSON ({e})")
            else:
                row = {**extra, **{k: v for k, v in row.items() if v is not None}} if isinstance(extra, dict) else row
        entity = _mapping_entity(key, row, f"{rel} [{key}]", problems)
        if names is not None:
            file = row.get("lean_file")
            resolve_names(entity, names, problems, file=file if isinstance(file, str) else None)
        entities.append(entity)
    return entities, problems


def _rows(data: object, rel: str, problems: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(data, dict) and isinstance(data.get("entities"), list):
        data = data["entities"]
    if isinstance(data, dict):
        items: list[tuple[object, object]] = list(data.items())
    elif isinstance(data, list):
        items = [(row.get("id") if isinstance(row, dict) else None, row) for row in data]
    else:
        problems.append(f"{rel}: neither an object of rows nor a list of rows; skipped")
        return
    for i, (key, row) in enumerate(items):
        if not isinstance(row, dict) or not isinstance(key, str) or not key:
            problems.append(f"{rel}: row {key if isinstance(key, str) else i} is not an object with an id; skipped")
            continue
        yield key, row


def _mapping_entity(key: str, row: Mapping[str, Any], source: str, problems: list[str]) -> Entity:
    prefix, _, tail = key.partition(":")
    kind = _text(row.get("kind")) or PREFIX_KIND.get(prefix.lower(), "")
    number = _text(row.get("number")) or (tail if re.fullmatch(r"\d+(?:\.\d+)*[A-Za-z]?", tail) else "")
    title = _text(_first(row, "title", "name"))
    lean = _first(row, "lean_symbol", "lean_symbols", "lean", "lean_names", "lean_name")
    if isinstance(lean, str):
        lean_names = _split(lean)
    elif isinstance(lean, list):
        lean_names = [n.strip() for n in lean if isinstance(n, str) and n.strip()]
    else:
        lean_names = []
        if lean is not None:
            problems.append(f"{source}: Lean names are neither a string nor a list; ignored")
    terms = _first(row, "introduces", "terms")
    lean_file = _text(row.get("lean_file"))
    return Entity(
        id=key, kind=kind, name=f"{kind.capitalize()} {number}" if number and kind else (title or key),
        nl=_strip_env(_text(_first(row, "statement_latex", "statement", "nl", "statement_text"))),
        lean=_unique(lean_names),
        context=re.sub(r"\A\\paragraph\{Context\}\s*", "", _text(_first(row, "context_latex", "context"))),
        proof=_strip_env(_text(_first(row, "proof_latex", "proof", "proof_text"))),
        uses=_unique(i for i in _mapping_uses(row) if i != key),
        terms=_unique([*([title] if title and number else []),
                       *(t for t in (terms if isinstance(terms, list) else []) if isinstance(t, str))]),
        chapter=_text(row.get("chapter")) or (lean_file.rsplit("/", 1)[0] if "/" in lean_file else ""),
        source=source,
        leanok=_text(_first(row, "status", "formalization_status")).lower() in FORMALIZED,
        preamble=_text(row.get("preamble")), variables=row.get("variables") or None,
    )


def _mapping_uses(row: Mapping[str, Any]) -> Iterator[str]:
    items = _first(row, "uses", "dependencies")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            yield item
        elif (isinstance(item, dict) and isinstance(item.get("id"), str)
              and item.get("edge_type") in (None, *EXPLICIT_EDGES)):
            yield item["id"]


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    return next((row[k] for k in keys if row.get(k) not in (None, "", [])), None)


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def _strip_env(latex: str) -> str:
    """`\\begin{theorem}[110C] … \\end{theorem}` → its body."""
    m = re.fullmatch(r"\s*\\begin\{([^{}]*)\}(?:\[[^\]\n]*\])?(.*)\\end\{\1\}\s*", latex, re.DOTALL)
    return m.group(2).strip() if m else latex.strip()


# -- docstrings -----------------------------------------------------------------------------------------------


def from_docstrings(census: Census) -> tuple[list[Entity], list[str]]:
    """An entity per numbered doc comment (`/-- Theorem 2.3 … -/`) directly before a declaration. In a project
    holding several books (folders whose doc comments number alike, as `Books/Rockafellar/…` and `Books/Tao/…`, at
    any depth), each entity is keyed by its book's folder: `Tao/thm:1.1`."""
    found: dict[str, Entity] = {}
    problems: list[str] = []
    numbered = [(path, decl, doc, m) for path, f in census.files.items() for decl, doc, m in _numbered(f)]
    book = _books([(path, f"{ID_PREFIX[m.group('kind').lower()]}:{m.group('num')}") for path, _, _, m in numbered])
    for path, decl, doc, m in numbered:
        assert decl.name is not None
        kind = m.group("kind").lower()
        number = m.group("num")
        source = f"{path}:{decl.top}"
        nl = doc[m.end():].strip()
        if not nl:
            problems.append(f"{source}: the doc comment of `{decl.name}` has a heading but no statement")
        key = f"{book[path]}/{ID_PREFIX[kind]}:{number}" if book[path] else f"{ID_PREFIX[kind]}:{number}"
        if key in found:
            found[key].lean = _unique([*found[key].lean, decl.name])
            found[key].leanok = found[key].leanok and decl.holes == 0
            continue
        title = (m.group("title") or "").strip()
        found[key] = Entity(id=key, kind=kind, name=f"{kind.capitalize()} {number}", nl=nl, lean=[decl.name],
                            terms=[title] if title else [], source=source, leanok=decl.holes == 0, book=book[path],
                            chapter=number.split(".")[0] if "." in number else path.rpartition("/")[0])
    return list(found.values()), problems


def doc_heading(key: str) -> tuple[str, str, str]:
    """What the id `from_docstrings` gives says: the kind, the name as the book gives it, and the book
    (`Tao/thm:1.1` → theorem, Theorem 1.1, Tao)."""
    book, _, own = key.rpartition("/")
    prefix, _, number = own.partition(":")
    kind = PREFIX_KIND.get(prefix, prefix)
    return kind, f"{kind.capitalize()} {number}", book


def _books(keyed: list[tuple[str, str]]) -> dict[str, str]:
    """Each path's book: the folder, below a folder holding several, whose entities number like another's
    (`Books/Tao/Chapters/…` and `Books/Rockafellar/…` → `Tao`, `Rockafellar`), found at any depth, so several books
    under one Lean root (ReasBook's `Books/<Book>`) are told apart and an audit of `Books/` alone keys them as one of
    the whole repository does. The outermost such folders are the books: inside one, folders whose entities number
    alike only now and then are not books of their own. Where no number repeats across sibling folders (one book in
    chapter folders) there is no book to tell apart: ""."""
    return _books_below([(p.split("/")[:-1], p, key) for p, key in keyed], 0)


def _books_below(entries: list[tuple[list[str], str, str]], depth: int) -> dict[str, str]:
    """`_books` below the folder `depth` deep (entries: the path's folders, the path, its key)."""
    groups: dict[str | None, list[tuple[list[str], str, str]]] = {}
    for entry in entries:
        groups.setdefault(entry[0][depth] if len(entry[0]) > depth else None, []).append(entry)
    if len(groups) == 1 and None not in groups:  # one folder holds them all: look inside it
        return _books_below(entries, depth + 1)
    inner = {g: _books_below(members, depth + 1) if g is not None else {p: "" for _, p, _ in members}
             for g, members in groups.items()}
    owner: dict[str, str | None] = {}
    repeated = False
    for g, members in groups.items():
        for _, path, key in members:
            own = f"{inner[g][path]}/{key}" if inner[g][path] else key
            repeated = repeated or owner.setdefault(own, g) != g
    # A folder whose own folders looked like books, but which numbers like its siblings at least as often as they
    # number like each other, is one book (a helper's doc comment citing an earlier chapter's "Corollary 4.7.2"
    # makes no chapter a book); a shelf of books (ReasBook's `Books/` beside `Papers/`) stays one.
    keys: dict[str | None, set[str]] = {g: {key for _, _, key in members} for g, members in groups.items()}
    for g, members in groups.items():
        split: dict[str, set[str]] = {}
        for _, path, key in members:
            split.setdefault(inner[g][path], set()).add(key)
        if len(split) < 2 or "" in split:
            continue
        within = len({k for book, ks in split.items() for k in ks
                      if any(k in other for b, other in split.items() if b != book)})
        across = len({k for k in keys[g] if any(k in ks for h, ks in keys.items() if h != g)})
        repeated = repeated or across >= within
    # Where books number alike here, each is the folder here, whatever its own folders seemed to be.
    return {path: (g or "") if repeated else inner[g][path] for g, members in groups.items() for _, path, _ in members}


def _numbered(f: FileIndex) -> list[tuple[Decl, str, re.Match[str]]]:
    """The named declarations of one file with a numbered doc comment, kept with its index."""
    kept = f.memo.get("numbered")
    if not isinstance(kept, list):
        kept = f.memo["numbered"] = [(decl, doc, m) for decl in f.decls
                                     if (doc := _doc_comment(decl)) is not None and decl.name is not None
                                     and (m := _DOC_HEAD.match(doc)) is not None]
    return kept


def _doc_comment(decl: Decl) -> str | None:
    """The text of the numbered doc comment (`/-- Theorem …`) a declaration starts with, if any. (A match of
    `_DOC_START` ends at a blank after a word, so it lies inside the comment when it starts one.)"""
    raw = decl.doc
    if raw is None or not _DOC_START.match(raw):
        return None
    inner = raw[3:len(raw) - 2 if raw.endswith("-/") else len(raw)]
    return "\n".join(line.strip() for line in inner.strip().split("\n"))


# -- all together -----------------------------------------------------------------------------------------


def find_entities(root: Path, census: Census, *, blueprint: str = BLUEPRINT, mappings: Sequence[str] = MAPPINGS,
                  docstrings: tuple[list[Entity], list[str]] | None = None, base: Census | None = None
                  ) -> tuple[list[Entity], list[str]]:
    """The entities of a project from every source it has: blueprint, then mapping files, then docstrings
    (`docstrings` when given, else those of `census`), merged by id (an earlier source wins; a later one fills
    what it left empty). A docstring entity whose declaration an earlier source already pairs is the same entity
    twice and is dropped. `base`: the census whose reading of the book's Lean names stands (`Declarations`)."""
    problems: list[str] = []
    out: dict[str, Entity] = {}
    found, found_problems = from_blueprint(root, census, src_dir=blueprint, base=base)
    problems += found_problems
    _merge(out, found, problems)
    mapped = {_relative(path, root): from_mapping(path, root, census, base) for path in mapping_files(root, mappings)}
    book = _books([(rel, e.id) for rel, (found, _) in mapped.items() for e in found])
    for rel, (found, found_problems) in mapped.items():
        problems += found_problems
        if book.get(rel):  # several books' mapping files number alike: each entity keyed by its book
            for e in found:
                e.book, e.id, e.uses = book[rel], f"{book[rel]}/{e.id}", [f"{book[rel]}/{u}" for u in e.uses]
        _merge(out, found, problems)
    claimed = {n for e in out.values() for n in e.lean}
    found, found_problems = docstrings if docstrings is not None else from_docstrings(census)
    problems += found_problems
    _merge(out, [e for e in found if e.id in out or not claimed.intersection(e.lean)], problems)
    return list(out.values()), problems


def _merge(out: dict[str, Entity], found: list[Entity], problems: list[str]) -> None:
    for e in found:
        kept = out.setdefault(e.id, e)
        if kept is e:
            continue
        if kept.lean and e.lean and set(kept.lean) != set(e.lean):
            problems.append(f"{e.source}: {e.id} pairs with {', '.join(e.lean)} but {kept.source} with "
                            f"{', '.join(kept.lean)}; both kept")
        kept.lean = _unique([*kept.lean, *e.lean])
        for name in ("kind", "name", "nl", "context", "proof", "chapter", "preamble", "variables"):
            if not getattr(kept, name):
                setattr(kept, name, getattr(e, name))
        kept.uses = _unique([*kept.uses, *e.uses])
        kept.terms = _unique([*kept.terms, *e.terms])
        kept.leanok = kept.leanok or e.leanok


def _unique(items: Any) -> list[str]:
    return list(dict.fromkeys(items))


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
