"""The sorry, admit and axiom census of a Lean tree, per declaration."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from gates.env import Module, normal
from gates.environment import lean_names
from gates.header import keywords, read_header
from gates.index import Decl, FileIndex, index_source
from gates.tree import Tree, is_lean_source


@dataclass(frozen=True, slots=True)
class Location:
    file: str
    line: int
    column: int
    declaration: str | None
    keyword: str


@dataclass(frozen=True, slots=True)
class Holed:
    """A declaration holding a hole: where, how many the sorry count gives it, and who says so."""

    path: str
    name: str  # as its text writes it; for a constant only Lean knows (an anonymous instance), Lean's name
    count: int
    written: bool  # its text holds a `sorry` or `admit`
    lean: bool  # Lean's environment answered for its file


@dataclass
class Census:
    """The indexes of a tree's Lean files, what could not be read, and what Lean's environment says of them.

    Where Lean answered for a file's module at this content (`lean`), Lean decides which declarations hold a hole:
    those owning a constant whose own terms hold `sorryAx` (`gates.env.Module.holes`), the constants no text
    names included; each counts its written sorries and admits, at least one. Where it did not, the text decides.
    """

    files: dict[str, FileIndex] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    lean: dict[str, Module] = field(default_factory=dict)  # path → its module's constants, as Lean listed them

    @property
    def total_sorries(self) -> int:
        return sum(f.sorries for f in self.files.values())

    @property
    def total_admits(self) -> int:
        return sum(f.admits for f in self.files.values())

    @property
    def holes(self) -> int:
        """What the sorry gate counts: sorries plus admits, as Lean decides where it answered."""
        return self.count()

    def count(self, text: Iterable[str] = ()) -> int:
        """The sorry count, the files `text` counted by their text alone."""
        text = set(text)
        return sum(len(f.holes) if path in text or path not in self.lean else
                   sum(h.count for h in self._lean_holed(path, f, self.lean[path]))
                   for path, f in self.files.items())

    def holed(self) -> list[Holed]:
        """Every declaration holding a hole."""
        out: list[Holed] = []
        for path, f in self.files.items():
            if path in self.lean:
                out += self._lean_holed(path, f, self.lean[path])
            else:
                out += [Holed(path, d.key, d.holes, True, False) for d in f.decls if d.holes]
        return out

    def hidden_holes(self) -> list[tuple[str, str]]:
        """(path, declaration) of every declaration Lean says holds a hole that its text does not show."""
        return [(h.path, h.name) for h in self.holed() if not h.written]

    def holds(self, path: str, d: Decl) -> bool:
        """Whether the declaration `d` of `path` holds a hole."""
        module = self.lean.get(path)
        if module is None:
            return d.holes > 0
        return any(h.name == d.key for h in self._lean_holed(path, self.files[path], module))

    @staticmethod
    def _lean_holed(path: str, f: FileIndex, module: Module) -> list[Holed]:
        holes = module.holes()
        by_text = lean_names(module)
        out: list[Holed] = []
        matched: set[str] = set()
        for d in f.decls:
            if d.name is None:
                continue
            lean = by_text.get(normal(d.name))
            if lean is None:
                continue
            matched.add(lean)
            if lean in holes:
                out.append(Holed(path, d.name, max(1, d.holes), d.holes > 0, True))
        for owner in holes.keys() - matched:
            out.append(Holed(path, owner, 1, False, True))
        return out

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files.values())

    def decls(self) -> Iterator[tuple[str, Decl]]:
        for path, f in self.files.items():
            for d in f.decls:
                yield path, d

    def locations(self) -> list[Location]:
        return [Location(path, h.line, h.column, h.declaration, h.keyword)
                for path, f in self.files.items() for h in f.holes]

    def axioms(self) -> list[tuple[str, Decl]]:
        return [(path, d) for path, d in self.decls() if d.kind == "axiom"]

    def replace(self, tree: Tree, paths: Iterable[str], roots: Iterable[str]) -> Census:
        """This census with `paths` re-read from `tree` (dropped where the tree lacks them). A file whose imports
        now bring other keywords is read again too: what its strings hold depends on them."""
        out = Census(dict(self.files), list(self.problems), dict(self.lean))
        present = set(tree.files())
        texts: dict[str, str] = {}
        for path in paths:
            out.files.pop(path, None)
            if path in present and is_lean_source(path, roots) and (text := _read(out, tree, path)) is not None:
                texts[path] = text
        known = dict(out.files)
        out.files = _indexed({**texts, **{path: f.text for path, f in known.items()}}, known)
        for path in texts:
            out.problems.extend(f"{path}: {p}" for p in out.files[path].problems)
        # What Lean listed for a re-read file, or one importing it, is of another content: Lean must answer again.
        from gates.imports import ImportGraph  # it reads a census
        for path in ImportGraph(out).dependents(set(paths)) | set(paths):
            out.lean.pop(path, None)
        return out

    def lean_name(self, name: str) -> str | None:
        """Lean's name for the one declaration this tree's text writes as `name`, resolved in the listing of the
        file declaring it (or, where no text declares it, the one constant a listing holds under that name); None
        when there is none, or more than one, or its file was not listed."""
        key = normal(name)
        paths = self._declaring.get(key) or {p for p, m in self.lean.items() if p in self.files
                                             and key in lean_names(m)}
        if len(paths) != 1:
            return None
        module = self.lean.get(next(iter(paths)))
        return None if module is None else lean_names(module).get(key)

    @cached_property
    def _declaring(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for path, d in self.decls():
            if d.name is not None:
                out.setdefault(normal(d.name), set()).add(path)
        return out

    def to_json(self) -> dict[str, object]:
        """The shape `sorries --json` prints (SPEC §4)."""
        return {
            "total_sorries": self.total_sorries,
            "total_admits": self.total_admits,
            "axioms": [{"name": d.name, "file": path, "line": d.line} for path, d in self.axioms()],
            "locations": [
                {"file": loc.file, "line": loc.line, "column": loc.column, "declaration": loc.declaration,
                 "keyword": loc.keyword}
                for loc in self.locations()
            ],
        }


def census(tree: Tree, roots: Iterable[str] = ()) -> Census:
    """Index every Lean file of `tree` under `roots` (all of them when `roots` is empty)."""
    roots = list(roots)
    out = Census()
    texts = {path: text for path in tree.files()
             if is_lean_source(path, roots) and (text := _read(out, tree, path)) is not None}
    out.files = _indexed(texts, {})
    for path, index in out.files.items():
        out.problems.extend(f"{path}: {p}" for p in index.problems)
    out.problems.extend(getattr(tree, "skipped", []))
    return out


def _indexed(texts: dict[str, str], known: dict[str, FileIndex]) -> dict[str, FileIndex]:
    """Every file indexed with the keywords its imports bring (`gates/header.py`) and the tokens the project's
    syntax declares; a `known` index lexed with the same ones is kept as it is."""
    headers = {path: known[path].header if path in known else read_header(text) for path, text in texts.items()}
    tokens = {t for f in known.values() for t in f.tokens}
    first = keywords(headers, tokens)
    out: dict[str, FileIndex] = {}
    for path in sorted(texts):
        old = known.get(path)
        out[path] = old if old is not None and old.keywords == first[path] else index_source(path, texts[path],
                                                                                             first[path])
    declared = {t for f in out.values() for t in f.tokens}
    if declared != tokens:  # the project's tokens changed: each file holding one reads them as ambiguous
        final = keywords(headers, declared)
        for path, index in out.items():
            if any(t in texts[path] for t in declared ^ tokens):
                out[path] = index_source(path, texts[path], final[path])
            else:  # the lexer drops the tokens a text does not hold: the reading is the same
                out[path] = dataclasses.replace(index, keywords=final[path])
    return out


def _read(out: Census, tree: Tree, path: str) -> str | None:
    try:
        data = tree.read(path)
    except OSError as e:
        out.problems.append(f"{path}: cannot be read ({e.strerror or e}); skipped")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        out.problems.append(f"{path}: not valid UTF-8 at byte {e.start}; read with replacement characters")
        return data.decode("utf-8", errors="replace")
