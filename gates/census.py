"""The sorry, admit and axiom census of a Lean tree, per declaration."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from gates.env import Module, normal
from gates.environment import lean_names
from gates.header import Header, Keywords, keywords, read_header
from gates.index import Decl, FileIndex, index_source
from gates.indexcache import Entry, Stored, decode, indexed
from gates.tree import Tree, is_lean_source

if TYPE_CHECKING:
    from gates.imports import ImportGraph

T = TypeVar("T")


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


def _counted(module: Module, consts: list[str]) -> int:
    """The holes of a declaration owning `consts`, as Lean counts them: the distinct `sorryAx` terms of their
    values."""
    return max(1, sum(module.consts[c].holes for c in consts))


@dataclass
class Census:
    """The indexes of a tree's Lean files, what could not be read, and what Lean's environment says of them.

    Where Lean answered for a file's module at this content (`lean`), Lean decides which declarations hold a hole:
    those owning a constant whose own terms hold `sorryAx` (`gates.env.Module.holes`), the constants no text
    names included; each counts the distinct `sorryAx` terms its constants' values hold (each `sorry`, each goal
    `stop` left, each failed tactic), however many sorries its text writes. Where it did not, the text decides.
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
                   sum(h.count for h in self._holed_in(path, f)) for path, f in self.files.items())

    def holed(self) -> list[Holed]:
        """Every declaration holding a hole."""
        out: list[Holed] = []
        for path, f in self.files.items():
            out += self._holed_in(path, f)
        return out

    def _holed_in(self, path: str, f: FileIndex) -> list[Holed]:
        """The declarations of one file holding a hole, kept with its index for the listing they were read with."""
        module = self.lean.get(path)
        kept = f.memo.get("holed")
        if isinstance(kept, tuple) and kept[0] == path and kept[1] is module:
            return list(kept[2])
        out = (self._lean_holed(path, f, module) if module is not None
               else [Holed(path, d.key, d.holes, True, False) for d in f.decls if d.holes])
        f.memo["holed"] = (path, module, out)
        return list(out)

    def hidden_holes(self) -> list[tuple[str, str]]:
        """(path, declaration) of every declaration Lean says holds a hole that its text does not show."""
        return [(h.path, h.name) for h in self.holed() if not h.written]

    def holds(self, path: str, d: Decl) -> bool:
        """Whether the declaration `d` of `path` holds a hole."""
        if path not in self.lean:
            return d.holes > 0
        return any(h.name == d.key for h in self._holed_in(path, self.files[path]))

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
                out.append(Holed(path, d.name, _counted(module, holes[lean]), d.holes > 0, True))
        for owner in holes.keys() - matched:
            out.append(Holed(path, owner, _counted(module, holes[owner]), False, True))
        return out

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files.values())

    def decls(self) -> Iterator[tuple[str, Decl]]:
        """Every declaration with its path, in file order (listed once for its files: the gates walk them often)."""
        return iter(_maps(self).decls)

    @property
    def graph(self) -> ImportGraph:
        """Its import graph, made once for its files (read only)."""
        from gates.imports import ImportGraph  # it reads a census
        kept = self.__dict__.get("_graph")
        if kept is None or kept[0] is not self.files:
            kept = self.__dict__["_graph"] = (self.files, ImportGraph(self))
        return kept[1]

    def declaring(self, name: str) -> list[str]:
        """The path of each declaration named `name`, in file order (a path twice for two in one file)."""
        paths = _maps(self).declaring.get(normal(name), frozenset())
        ordered = [p for p in self.files if p in paths] if len(paths) > 1 else list(paths)
        return [p for p in ordered for _ in range(_names(self.files[p]).get(name, 0))]

    def changes(self, other: Census) -> tuple[list[str], set[str]]:
        """The paths whose index differs from `other`'s (its own in file order, then those only `other` has), and
        every declaration key they declare in either: a key none of them declares is declared by the same files,
        and so by the same declarations, in both (what the gates compare of two censuses is within these)."""
        differ = ([p for p, f in self.files.items() if other.files.get(p) is not f]
                  + [p for p in other.files if p not in self.files])
        keys = {k for p in differ for f in (self.files.get(p), other.files.get(p)) if f is not None for k in _keys(f)}
        return differ, keys

    def declared(self, path: str, key: str) -> Decl | None:
        """The last declaration keyed `key` in the file `path`, if it has one."""
        f = self.files.get(path)
        return _keys(f).get(key) if f is not None else None

    def decls_in(self, paths: Iterable[str]) -> Iterator[tuple[str, Decl]]:
        """The declarations of `paths` with their path, in file order."""
        wanted = set(paths)
        return ((p, d) for p, f in self.files.items() if p in wanted for d in f.decls)

    def written_holes(self) -> Iterator[tuple[str, Decl]]:
        """Every declaration whose text holds a sorry or admit, with its path, in file order."""
        return itertools.chain.from_iterable(_holding_rows(path, f) for path, f in self.files.items())

    @property
    def located(self) -> dict[str, tuple[str, Decl]]:
        """Each declaration key → the path and declaration of the last one so keyed, in file order (read only)."""
        return _maps(self).located

    @property
    def by_key(self) -> dict[str, Decl]:
        """Each declaration key → the last declaration so keyed, in file order (read only)."""
        return _maps(self).by_key

    @property
    def named(self) -> AbstractSet[str]:
        """The names of its named declarations (read only: a view of its maps, made with them)."""
        return _maps(self).names.keys()

    def locations(self) -> list[Location]:
        return [Location(path, h.line, h.column, h.declaration, h.keyword)
                for path, f in self.files.items() for h in f.holes]

    def axioms(self) -> list[tuple[str, Decl]]:
        return [(path, d) for path, d in self.decls() if d.kind == "axiom"]

    def replace(self, tree: Tree, paths: Iterable[str], roots: Iterable[str]) -> Census:
        """This census with `paths` re-read from `tree` (dropped where the tree lacks them). A file whose imports
        now bring other keywords is read again too: what its strings hold depends on them."""
        out = Census(dict(self.files), list(self.problems), dict(self.lean))
        out.__dict__["_donor"] = self  # its maps are this census's, but for the files re-read
        present = set(tree.files())
        texts: dict[str, str] = {}
        for path in paths:
            out.files.pop(path, None)
            if path in present and is_lean_source(path, roots) and (text := _read(out, tree, path)) is not None:
                texts[path] = text
        out.files = _indexed(_Texts(texts), dict(out.files))
        for path in texts:
            out.problems.extend(f"{path}: {p}" for p in out.files[path].problems)
        # What Lean listed for a re-read file, or one importing it, is of another content: Lean must answer again.
        for path in out.graph.dependents(set(paths)) | set(paths):
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

    @property
    def _declaring(self) -> dict[str, frozenset[str]]:
        return _maps(self).declaring

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


@dataclass(frozen=True)
class _Maps:
    """What a census derives from every file, made once per files dict (read only, shared between censuses)."""

    files: dict[str, FileIndex]  # the files they are of
    decls: list[tuple[str, Decl]]
    located: dict[str, tuple[str, Decl]]
    by_key: dict[str, Decl]
    holders: dict[str, frozenset[str]]  # a declaration key → the paths declaring it
    declaring: dict[str, frozenset[str]]  # a normalised name → the paths declaring it
    names: dict[str, int]  # a declaration's name → how many declarations so named


DERIVED_UP_TO = 16  # files that may differ from a census's for its maps to be derived from that census's
_recent: _Maps | None = None  # the last maps made: the next census, of the next base, differs from them in a few files


def _maps(c: Census) -> _Maps:
    """`c`'s maps: derived from those of a census few of whose files differ — the census `c` was `replace`d from, or
    the last census mapped — over the files that differ; else made afresh. Either way the same maps (the tests
    hold them equal over random sequences of edits)."""
    global _recent
    kept: _Maps | None = c.__dict__.get("_maps")
    if kept is not None and kept.files is c.files:
        return kept
    donor: Census | None = c.__dict__.pop("_donor", None)  # once mapped, a census keeps no other alive
    near = _maps(donor) if donor is not None else _recent
    made = _derive(c.files, near) if near is not None else None
    if made is None:
        made = _fresh(c.files)
    c.__dict__["_maps"] = _recent = made
    return made


def _rows(path: str, f: FileIndex) -> list[tuple[str, Decl]]:
    kept = f.memo.get("census.rows")
    if not (isinstance(kept, tuple) and kept[0] == path):
        kept = f.memo["census.rows"] = (path, [(path, d) for d in f.decls])
    return kept[1]


def _holding_rows(path: str, f: FileIndex) -> list[tuple[str, Decl]]:
    kept = f.memo.get("census.holding")
    if not (isinstance(kept, tuple) and kept[0] == path):
        kept = f.memo["census.holding"] = (path, [(path, d) for d in f.decls if d.holes])
    return kept[1]


def _keys(f: FileIndex) -> dict[str, Decl]:
    """Each key of the file's declarations → the last declaration so keyed."""
    kept = f.memo.get("census.keys")
    if not isinstance(kept, dict):
        kept = f.memo["census.keys"] = {d.key: d for d in f.decls}
    return kept


def _names(f: FileIndex) -> dict[str, int]:
    kept = f.memo.get("census.names")
    if not isinstance(kept, dict):
        counts: dict[str, int] = {}
        for d in f.decls:
            if d.name:
                counts[d.name] = counts.get(d.name, 0) + 1
        kept = f.memo["census.names"] = counts
    return kept


def _normals(f: FileIndex) -> list[str]:
    kept = f.memo.get("normal")
    if not isinstance(kept, list):
        kept = f.memo["normal"] = [normal(d.name) for d in f.decls if d.name is not None]
    return kept


def _fresh(files: dict[str, FileIndex]) -> _Maps:
    located: dict[str, tuple[str, Decl]] = {}
    holders: dict[str, set[str]] = {}
    declaring: dict[str, set[str]] = {}
    names: dict[str, int] = {}
    for path, f in files.items():
        for name, n in _names(f).items():
            names[name] = names.get(name, 0) + n
        for key, d in _keys(f).items():
            located[key] = (path, d)  # the files in order: the last so keyed wins
            holders.setdefault(key, set()).add(path)
        for name in _normals(f):
            declaring.setdefault(name, set()).add(path)
    return _Maps(files, _listed(files), located, {k: d for k, (_, d) in located.items()},
                 {k: frozenset(v) for k, v in holders.items()}, {k: frozenset(v) for k, v in declaring.items()}, names)


def _listed(files: dict[str, FileIndex]) -> list[tuple[str, Decl]]:
    return list(itertools.chain.from_iterable(_rows(path, f) for path, f in files.items()))


def _derive(files: dict[str, FileIndex], near: _Maps) -> _Maps | None:
    """`files`' maps from `near`'s, through the files that differ (None when more than DERIVED_UP_TO and a quarter
    of them do, or when the files both hold are in another order: which declaration of a key comes last would
    change): only the keys and names those files declare, before or now, can map otherwise."""
    differ = [p for p in near.files.keys() | files.keys() if near.files.get(p) is not files.get(p)]
    if len(differ) > max(DERIVED_UP_TO, len(files) // 4):
        return None
    if [p for p in files if p in near.files] != [p for p in near.files if p in files]:
        return None
    position = {path: i for i, path in enumerate(files)}
    located, by_key, holders, declaring, counts = (dict(near.located), dict(near.by_key), dict(near.holders),
                                                   dict(near.declaring), dict(near.names))
    keys: set[str] = set()
    names: set[str] = set()
    for path in differ:
        for f, sign in ((near.files.get(path), -1), (files.get(path), 1)):
            if f is not None:
                keys |= _keys(f).keys()
                names.update(_normals(f))
                for name, n in _names(f).items():
                    counts[name] = counts.get(name, 0) + sign * n
                    if not counts[name]:
                        del counts[name]
    gone = set(differ)
    for key in keys:
        now = {p for p in holders.get(key, ()) if p not in gone} | {
            p for p in differ if p in files and key in _keys(files[p])}
        if now:
            last = max(now, key=position.__getitem__)
            holders[key], located[key], by_key[key] = frozenset(now), (last, _keys(files[last])[key]), _keys(
                files[last])[key]
        else:
            del holders[key], located[key], by_key[key]
    for name in names:
        now = {p for p in declaring.get(name, ()) if p not in gone} | {
            p for p in differ if p in files and name in _normals(files[p])}
        if now:
            declaring[name] = frozenset(now)
        else:
            declaring.pop(name, None)
    return _Maps(files, _listed(files), located, by_key, holders, declaring, counts)


def state(c: Census) -> tuple[object, ...]:
    """What a census's derived values depend on: its files and what Lean listed of them, held (so never mistaken for
    others that took their place); compare with `same`."""
    return (c.files, tuple(c.lean.items()))


def same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """Whether two `state`s are of the same files and listings, object for object."""
    return (a[0] is b[0] and len(a[1]) == len(b[1])  # type: ignore[arg-type]
            and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a[1], b[1], strict=True)))  # type: ignore[call-overload]


def between(before: Census, after: Census, name: str, compute: Callable[[], T]) -> T:
    """What `compute` derives from `before` and `after`, kept on `after` while neither changed."""
    now = (state(before), state(after))
    memo: dict[str, tuple[Census, tuple[tuple[object, ...], tuple[object, ...]], object]] = (
        after.__dict__.setdefault("_between", {}))
    kept = memo.get(name)
    if kept is not None and kept[0] is before and same(kept[1][0], now[0]) and same(kept[1][1], now[1]):
        return kept[2]  # type: ignore[return-value]
    found = compute()
    memo[name] = (before, now, found)
    return found


def census(tree: Tree, roots: Iterable[str] = ()) -> Census:
    """Index every Lean file of `tree` under `roots` (all of them when `roots` is empty); a commit's files through
    the repository's index cache (`gates.indexcache`), which gives what indexing them would."""
    roots = list(roots)
    out = Census()
    cache = tree.indexes() if isinstance(tree, Stored) else None
    blobs = tree.blobs() if cache is not None and isinstance(tree, Stored) else {}
    texts: dict[str, str] = {}
    kept: dict[str, Entry] = {}
    for path in tree.files():
        if not is_lean_source(path, roots):
            continue
        blob = blobs.get(path)
        if blob is None or cache is None:
            if (text := _read(out, tree, path)) is not None:
                texts[path] = text
            continue
        entry = cache.get(blob)
        if entry is None:  # a content not seen before, or an entry that could not be read
            texts[path], problem = decode(tree.read(path))
            entry = Entry.of(blob, texts[path], problem)
            cache.remember(entry)
        kept[path] = entry
        if entry.problem is not None:
            out.problems.append(f"{path}: {entry.problem}")
    out.files = _indexed(_Kept(tree, kept, texts) if isinstance(tree, Stored) and cache is not None
                         else _Texts(texts), {})
    for path, index in out.files.items():
        out.problems.extend(f"{path}: {p}" for p in index.problems)
    out.problems.extend(getattr(tree, "skipped", []))
    if cache is not None:
        written = [entry for entry in kept.values() if entry.dirty]
        for entry in written:
            cache.put(entry)
        if written:
            cache.trim(set(blobs.values()))
        cache.settle(len(kept))
    return out


class _Sources(Protocol):
    """The files a census indexes afresh: their headers, texts and indexes."""

    def paths(self) -> Iterable[str]: ...

    def header(self, path: str) -> Header: ...

    def holds(self, path: str, token: str) -> bool: ...

    def index(self, path: str, keywords: Keywords) -> FileIndex: ...


@dataclass
class _Texts:
    """Files given by their text."""

    texts: dict[str, str]

    def paths(self) -> Iterable[str]:
        return self.texts

    def header(self, path: str) -> Header:
        return read_header(self.texts[path])

    def holds(self, path: str, token: str) -> bool:
        return token in self.texts[path]

    def index(self, path: str, keywords: Keywords) -> FileIndex:
        return index_source(path, self.texts[path], keywords)


@dataclass
class _Kept:
    """A commit's files through their cache entries; a text read from git only where an entry lacks what is asked
    (`texts` holds those already read)."""

    tree: Stored
    entries: dict[str, Entry]
    texts: dict[str, str]

    def paths(self) -> Iterable[str]:
        return self.entries

    def header(self, path: str) -> Header:
        return self.entries[path].header

    def holds(self, path: str, token: str) -> bool:
        entry = self.entries[path]
        if token not in entry.holds:
            entry.holds[token] = token in self._text(path)
            entry.dirty = True
        return entry.holds[token]

    def index(self, path: str, keywords: Keywords) -> FileIndex:
        blob, read = self.entries[path].blob, self.tree.reader()
        return indexed(self.entries[path], path, keywords, lambda: self._text(path), lambda: decode(read(blob))[0])

    def _text(self, path: str) -> str:
        if path not in self.texts:
            self.texts[path] = decode(self.tree.reader()(self.entries[path].blob))[0]
        return self.texts[path]


def _indexed(new: _Sources, known: dict[str, FileIndex]) -> dict[str, FileIndex]:
    """Every file indexed with the keywords its imports bring (`gates/header.py`) and the tokens the project's
    syntax declares: `new`'s files, and `known` ones (lexed with the same keywords, kept as they are; else lexed
    again)."""
    headers = {**{path: f.header for path, f in known.items()}, **{path: new.header(path) for path in new.paths()}}
    tokens = {t for f in known.values() for t in f.tokens}
    first = keywords(headers, tokens)
    out: dict[str, FileIndex] = {}
    for path in sorted(headers):
        old = known.get(path)
        if old is None:
            out[path] = new.index(path, first[path])
        else:
            out[path] = old if old.keywords == first[path] else index_source(path, old.text, first[path])
    declared = {t for f in out.values() for t in f.tokens}
    if declared != tokens:  # the project's tokens changed: each file holding one reads them as ambiguous
        final = keywords(headers, declared)
        for path, index in out.items():
            old = known.get(path)
            if not any(t in old.text if old is not None else new.holds(path, t) for t in declared ^ tokens):
                # the lexer drops the tokens a text does not hold: the reading is the same
                out[path] = dataclasses.replace(index, keywords=final[path])
            elif old is None:
                out[path] = new.index(path, final[path])
            else:
                out[path] = index_source(path, old.text, final[path])
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
