"""The sorry, admit and axiom census of a Lean tree, per declaration."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

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


@dataclass
class Census:
    """The indexes of a tree's Lean files, and what could not be read."""

    files: dict[str, FileIndex] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # path → declarations Lean says depend on `sorryAx` though their text holds no sorry (from the kernel's
    # answers; empty without a toolchain): holes as much as a written `sorry`.
    hidden: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def total_sorries(self) -> int:
        return sum(f.sorries for f in self.files.values())

    @property
    def total_admits(self) -> int:
        return sum(f.admits for f in self.files.values())

    @property
    def holes(self) -> int:
        """Sorries plus admits, and the declarations only Lean says hold one: what the sorry gate counts."""
        return sum(len(f.holes) for f in self.files.values()) + len(self.hidden_holes())

    def hidden_holes(self) -> list[tuple[str, str]]:
        """(path, declaration) of every declaration that relies on `sorryAx` without a sorry in its text."""
        return [(path, name) for path, names in self.hidden.items() if path in self.files for name in names]

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
        out = Census(dict(self.files), list(self.problems), dict(self.hidden))
        present = set(tree.files())
        texts: dict[str, str] = {}
        old: dict[str, FileIndex] = {}
        for path in paths:
            if (before := out.files.pop(path, None)) is not None:
                old[path] = before
            if path in present and is_lean_source(path, roots) and (text := _read(out, tree, path)) is not None:
                texts[path] = text
        known = dict(out.files)
        out.files = _indexed({**texts, **{path: f.text for path, f in known.items()}}, known)
        for path in texts:
            out.problems.extend(f"{path}: {p}" for p in out.files[path].problems)
        for path in paths:  # a declaration whose text did not change still relies on sorryAx
            hidden = out.hidden.pop(path, ())
            if path in old and path in out.files and (kept := _unchanged(old[path], out.files[path], hidden)):
                out.hidden[path] = kept
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


def _unchanged(old: FileIndex, new: FileIndex, names: tuple[str, ...]) -> tuple[str, ...]:
    before = {d.name: d for d in old.decls if d.name in names}
    return tuple(d.name for d in new.decls if d.name in before and d.text_hash == before[d.name].text_hash)
