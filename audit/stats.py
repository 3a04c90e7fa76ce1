"""Proof gap and repository statistics: the declaration index's numbers beside the paper's grep numbers.

The census (gates/census.py) reads code: a `sorry` in a comment, doc comment or string is not a hole, two on
one line are two, `admit` is one, and every `axiom` declaration counts however it is written. The paper
(Appendix C, D) counted with grep over fresh clones:

    grep -rn '\\bsorry\\b' <repo>/ --include="*.lean" | grep -v '^\\s*--'
    grep -rn '^axiom ' <repo>/ --include="*.lean" --exclude-dir=".lake"
    find <repo> -name "*.lean" | xargs wc -l
    grep -rE "^\\s*(noncomputable\\s+|private\\s+)*def\\s" <repo>
    grep -rE "^\\s*(theorem|lemma)\\s" <repo>

`grep_lines` replays those commands in Python as GNU grep 3.x in a UTF-8 locale does: it counts matching
*lines*; it recurses without following symlinks; `--include` and `--exclude-dir` match base names; a file
holding a NUL byte is binary and prints no lines (only "binary file matches" on stderr); a line that is not
valid UTF-8 is not printed. Two consequences are kept on purpose, because they are what the paper's numbers
mean: `grep -v '^\\s*--'` receives `path:line:text`, so its `^` anchors at the path and it never drops a
comment line (`comment_lines` says how many it was meant to drop); and the counts include `.lean` files
outside the project's Lean roots. One departure: the paper ran on fresh clones, which have no `.lake`; a built
working copy has one full of dependencies, so `.lake` is excluded from every count here by default (as the
paper's axiom command does).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from gates.census import Census
from gates.lexer import ID_REST, Span, SpanKind, lex

SORRY = re.compile(r"\bsorry\b")
AXIOM = re.compile(r"^axiom ")
DEF = re.compile(r"^\s*(noncomputable\s+|private\s+)*def\s")
THEOREM = re.compile(r"^\s*(theorem|lemma)\s")
COMMENT_LINE = re.compile(r"^\s*--")
EXCLUDE_DIRS = (".lake",)
KINDS = ("def", "theorem", "lemma", "structure", "class", "instance", "inductive", "abbrev", "axiom", "opaque",
         "example")
_SPAN_REASON = {SpanKind.COMMENT: "inside a comment", SpanKind.DOC: "inside a doc comment",
                SpanKind.MODULE_DOC: "inside a module doc comment", SpanKind.STRING: "inside a string literal",
                SpanKind.CHAR: "inside a character literal"}


@dataclass(frozen=True)
class GrepLine:
    """One line grep prints: `file:line:text`."""

    file: str
    line: int
    text: str


@dataclass
class GrepResult:
    lines: list[GrepLine] = field(default_factory=list)
    binary: list[str] = field(default_factory=list)  # files grep reports as "binary file matches" (no lines)
    files: int = 0  # `.lean` files searched


def grep_lines(root: Path, pattern: re.Pattern[str], *, include: str = "*.lean",
               exclude_dirs: Sequence[str] = EXCLUDE_DIRS) -> GrepResult:
    """The lines `grep -rn PATTERN root --include=INCLUDE --exclude-dir=…` prints (see the module docstring)."""
    out = GrepResult()
    for path, rel in _files(root, include, exclude_dirs):
        out.files += 1
        try:
            data = path.read_bytes()
        except OSError:
            continue  # grep prints an error and carries on
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if b"\0" in data:
            if any(pattern.search(raw.decode("utf-8", errors="replace")) for raw in lines):
                out.binary.append(rel)
            continue
        suppressed = False
        for number, raw in enumerate(lines, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                suppressed = suppressed or bool(pattern.search(raw.decode("utf-8", errors="replace")))
                continue
            if pattern.search(text):
                out.lines.append(GrepLine(rel, number, text))
        if suppressed:
            out.binary.append(rel)
    return out


def _files(root: Path, include: str, exclude_dirs: Sequence[str]) -> Iterable[tuple[Path, str]]:
    """Files as `grep -r` visits them: symlinks below the root skipped, excluded directory names pruned."""
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames
                             if not any(fnmatch(d, g) for g in exclude_dirs) and not (base / d).is_symlink())
        for name in sorted(filenames):
            path = base / name
            if fnmatch(name, include) and not path.is_symlink():
                yield path, path.relative_to(root).as_posix()


# -- proof gap ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """A hole or an axiom the census found."""

    file: str
    line: int
    name: str | None  # the axiom, or the declaration holding the hole
    keyword: str  # sorry, admit or axiom


@dataclass(frozen=True)
class Discrepancy:
    """A line where the census and the grep method disagree, and why."""

    file: str
    line: int
    what: str  # sorry, admit or axiom
    census: int
    grep: int
    reason: str


@dataclass
class ProofGap:
    sorries: int
    admits: int
    holes: list[Place]
    axioms: list[Place]
    grep_sorry: list[GrepLine]
    grep_axiom: list[GrepLine]
    grep_binary: list[str]
    discrepancies: list[Discrepancy]

    @property
    def grep_sorry_lines(self) -> int:
        """What the paper's sorry command prints: its line count."""
        return len(self.grep_sorry)

    @property
    def grep_axiom_lines(self) -> int:
        return len(self.grep_axiom)

    @property
    def comment_lines(self) -> int:
        """Lines of `grep_sorry` that start with `--`: what `grep -v '^\\s*--'` was meant to drop and does not."""
        return sum(1 for g in self.grep_sorry if COMMENT_LINE.match(g.text))

    def to_json(self) -> dict[str, object]:
        return {
            "census": {"sorries": self.sorries, "admits": self.admits, "axioms": len(self.axioms),
                       "holes": [asdict(p) for p in self.holes],
                       "axiom_declarations": [asdict(p) for p in self.axioms]},
            "grep": {"sorry_lines": self.grep_sorry_lines, "axiom_lines": self.grep_axiom_lines,
                     "comment_lines_not_filtered": self.comment_lines, "binary_files": self.grep_binary,
                     "sorry": [asdict(g) for g in self.grep_sorry], "axiom": [asdict(g) for g in self.grep_axiom]},
            "discrepancies": [asdict(d) for d in self.discrepancies],
        }


def proof_gap(root: Path, census: Census, *, exclude_dirs: Sequence[str] = EXCLUDE_DIRS) -> ProofGap:
    """Sorries, admits and axioms from the census of `root`, the paper's grep counts beside, and every
    line where the two disagree with the reason."""
    holes = [Place(path, h.line, h.declaration, h.keyword) for path, f in census.files.items() for h in f.holes]
    axioms = [Place(path, d.line, d.name, "axiom") for path, d in census.axioms()]
    sorry = grep_lines(root, SORRY, exclude_dirs=exclude_dirs)
    axiom = grep_lines(root, AXIOM, exclude_dirs=exclude_dirs)
    explain = _Explainer(root, census, exclude_dirs)
    discrepancies = explain.sorries(holes, sorry) + explain.axioms(axioms, axiom)
    return ProofGap(census.total_sorries, census.total_admits, holes, axioms, sorry.lines, axiom.lines,
                    sorted(set(sorry.binary) | set(axiom.binary)), discrepancies)


class _Explainer:
    def __init__(self, root: Path, census: Census, exclude_dirs: Sequence[str]) -> None:
        self.root, self.census, self.exclude_dirs = root, census, exclude_dirs
        self._texts: dict[str, str] = {}
        self._spans: dict[str, list[Span]] = {}

    def sorries(self, holes: list[Place], grep: GrepResult) -> list[Discrepancy]:
        counted = Counter((h.file, h.line) for h in holes if h.keyword == "sorry")
        printed = {(g.file, g.line): g for g in grep.lines}
        out: list[Discrepancy] = []
        for key, g in printed.items():
            if counted[key] == 0:
                out.append(Discrepancy(g.file, g.line, "sorry", 0, 1, self._why(g, SORRY)))
        for (path, line), n in sorted(counted.items()):
            if (path, line) not in printed:
                out.append(Discrepancy(path, line, "sorry", n, 0, self._unprinted(path, grep)))
            elif n > 1:
                out.append(Discrepancy(path, line, "sorry", n, 1,
                                       f"{n} `sorry` on one line: grep counts lines, the census counts terms"))
        out += [Discrepancy(h.file, h.line, "admit", 1, 0, "`admit` is a hole that `\\bsorry\\b` does not match")
                for h in holes if h.keyword == "admit"]
        return sorted(out, key=lambda d: (d.file, d.line, d.what))

    def axioms(self, axioms: list[Place], grep: GrepResult) -> list[Discrepancy]:
        declared = {(a.file, a.line) for a in axioms}
        printed = {(g.file, g.line) for g in grep.lines}
        out = [Discrepancy(g.file, g.line, "axiom", 0, 1, self._why(g, AXIOM)) for g in grep.lines
               if (g.file, g.line) not in declared]
        for a in axioms:
            if (a.file, a.line) not in printed:
                text = self._line(a.file, a.line)
                why = ("indented: grep's `^axiom ` wants column 0" if text[:1].isspace() else
                       "`axiom` not followed by a space" if text.startswith("axiom") else
                       "modifiers or attributes before `axiom` on its line (`private axiom`, `@[…] axiom`)")
                out.append(Discrepancy(a.file, a.line, "axiom", 1, 0, why))
        return sorted(out, key=lambda d: (d.file, d.line))

    def _unprinted(self, path: str, grep: GrepResult) -> str:
        """Why grep prints no line where the census counts a hole."""
        if path in grep.binary:
            return "grep prints no line here: binary file (NUL byte) or a line that is not valid UTF-8"
        parts = path.split("/")
        if any((self.root / "/".join(parts[:i])).is_symlink() for i in range(1, len(parts) + 1)):
            return "a symlink, which `grep -r` does not follow"
        if any(fnmatch(d, g) for d in parts[:-1] for g in self.exclude_dirs):
            return "under a directory the grep excludes"
        return "grep prints no line here"

    def _why(self, g: GrepLine, pattern: re.Pattern[str]) -> str:
        """Why the census does not count a line grep prints."""
        if g.file not in self.census.files:
            return "in a `.lean` file the census does not read (outside the project's Lean roots)"
        text = self._text(g.file)
        start = sum(len(line) + 1 for line in text.split("\n")[:g.line - 1])
        reasons = []
        for m in pattern.finditer(g.text):
            offset = start + m.start()
            span = next((s for s in self._lexed(g.file) if s.start <= offset < s.end), None)
            if span is not None:
                reasons.append(_SPAN_REASON[span.kind])
            elif re.match(rf"[{ID_REST}.]", g.text[m.start() - 1:m.start()] or " ") or \
                    re.match(rf"[{ID_REST}]", g.text[m.end():m.end() + 1] or " "):
                reasons.append(f"part of the name `{_word(g.text, m.start(), m.end())}`, not the term")
            else:
                reasons.append("not a declaration or hole the census sees")
        return "; ".join(dict.fromkeys(reasons))

    def _text(self, path: str) -> str:
        if path not in self._texts:
            self._texts[path] = (self.root / path).read_bytes().decode("utf-8", errors="replace")
        return self._texts[path]

    def _lexed(self, path: str) -> list[Span]:
        if path not in self._spans:
            self._spans[path] = lex(self._text(path)).spans
        return self._spans[path]

    def _line(self, path: str, line: int) -> str:
        lines = self._text(path).split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""


def _word(text: str, start: int, end: int) -> str:
    while start > 0 and re.match(rf"[{ID_REST}.]", text[start - 1]):
        start -= 1
    while end < len(text) and re.match(rf"[{ID_REST}]", text[end]):
        end += 1
    return text[start:end]


# -- statistics ---------------------------------------------------------------------------------------------


@dataclass
class Statistics:
    """Lean files, lines and declarations by kind from the declaration index, the paper's counts beside."""

    files: int
    lines: int  # the census' count: newlines, plus a last line without one
    declarations: dict[str, int]  # by keyword, in KINDS order; `def` includes noncomputable and private ones
    noncomputable_defs: int
    private_defs: int
    named: int  # declarations with a name (every kind but `example` and anonymous instances)
    grep: dict[str, int]  # the paper's method over the directory: files, wc_lines, def_lines, theorem_lemma_lines

    @property
    def theorems_and_lemmas(self) -> int:
        return self.declarations.get("theorem", 0) + self.declarations.get("lemma", 0)

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "theorem+lemma": self.theorems_and_lemmas}


def statistics(root: Path, census: Census, *, exclude_dirs: Sequence[str] = EXCLUDE_DIRS) -> Statistics:
    """Counts from the census of `root`; the grep method's numbers over `root` beside them."""
    kinds = Counter(d.kind for _, d in census.decls())
    defs = [d for _, d in census.decls() if d.kind == "def"]
    wc_lines = 0
    files = list(_files(root, "*.lean", exclude_dirs))
    for path, _ in files:
        try:
            wc_lines += path.read_bytes().count(b"\n")
        except OSError:
            continue
    grep = {"files": len(files), "wc_lines": wc_lines,
            "def_lines": len(grep_lines(root, DEF, exclude_dirs=exclude_dirs).lines),
            "theorem_lemma_lines": len(grep_lines(root, THEOREM, exclude_dirs=exclude_dirs).lines)}
    return Statistics(
        files=len(census.files), lines=census.lines,
        declarations={k: kinds.get(k, 0) for k in (*KINDS, *sorted(set(kinds) - set(KINDS)))},
        noncomputable_defs=sum(1 for d in defs if "noncomputable" in d.modifiers),
        private_defs=sum(1 for d in defs if "private" in d.modifiers),
        named=sum(1 for _, d in census.decls() if d.name is not None), grep=grep)
