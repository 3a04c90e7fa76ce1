"""What the tree says of each target before any attempt: its chapter and the shape of its statement.

A target's prior difficulty is anchored to the groups it belongs to (`irt`): its chapter, and, together weighing
as much as the chapter, a bin of each of three simple features — the statement's length, how many of the
project's definitions it names, and how many of the project's declarations name it (its successors: a lemma much
used is often a small one). These are read from the text (a view, like every prior: what Lean says decides
holes, never difficulty), and kept coarse: bins doubling in width, so a group gathers enough targets to say
something. A target the tree no longer holds (closed and then renamed or removed) has no group but its own prior.

The open targets' dependencies come from here too (`after`): the open targets each one's proof uses
(`orchestrator.facts.uses`: Lean's listing where it listed the file, else the text), so the forecast closes a
target only after what it rests on.
"""

from __future__ import annotations

import posixpath
import re
import sys
import threading
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from gates.census import Census
from gates.index import Decl, FileIndex
from gates.lexer import ID_FIRST, ID_REST
from orchestrator.facts import Names, uses

_NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")
DEFINING = frozenset({"def", "abbrev", "structure", "class", "inductive", "instance", "opaque"})
SIZES = (100, 200, 400, 800)  # characters of the statement: bins below each bound, and one above the last
COUNTS = (1, 2, 4)  # definitions named or successors: 0, 1, 2–3, 4 and more
FEATURE_WEIGHT = 1 / 3  # each feature's group beside the chapter's: together they weigh as much as it does


@dataclass(frozen=True)
class Known:
    """A target as the tree holds it."""

    file: str
    chapter: str
    groups: tuple[tuple[str, float], ...]  # each group, with its weight in the prior
    holes: int  # sorries and admits it holds (0: closed)


def chapter(path: str, roots: Iterable[str]) -> str:
    """The folder holding the file; a file directly in a Lean root (or at the top) is a chapter of its own."""
    folder = posixpath.dirname(path)
    tops = {r.strip("/") for r in roots}
    return path.removesuffix(".lean") if not folder or folder in tops else folder


def _bin(value: int, bounds: tuple[int, ...]) -> str:
    for low, high in zip((0, *bounds), bounds, strict=False):
        if value < high:
            return f"{low}–{high - 1}" if high - 1 > low else str(low)
    return f"{bounds[-1]}+"


@dataclass(frozen=True)
class Words:
    """The names one declaration writes, each once: what the priors read of its text."""

    size: int  # characters of its statement (`Decl.statement_text`)
    statement: tuple[str, ...]  # the names its statement writes
    written: tuple[str, ...]  # the names it writes anywhere (statement and proof)
    proof: tuple[str, ...]  # the names its value or proof writes (`Decl.body_code`)


@dataclass(frozen=True)
class Tally:
    """One file's declarations by the names they write, which `_successors` sums over the tree."""

    counts: dict[str, int]  # a written name → the declarations writing it
    twins: tuple[tuple[str, ...], ...]  # of a declaration writing names alike at the end (`foo`, `A.foo`): those
    selfs: tuple[tuple[str, tuple[str, ...]], ...]  # a declaration, with the names it writes ending as its own


_NONE = Words(0, (), (), ())


def words(index: FileIndex) -> list[Words]:
    """Each declaration's `Words`, in the file's order: read from its text once, then kept with the file's index,
    which a process keeps while the file is unchanged (so a cycle reads only the files its base changed)."""
    kept = index.memo.get("priors.words")
    if kept is None:
        kept = index.memo["priors.words"] = [_words(d) for d in index.decls]
    assert isinstance(kept, list)
    return kept


def tally(index: FileIndex) -> Tally:
    """The file's `Tally`, kept with its index as `words` is."""
    kept = index.memo.get("priors.tally")
    if kept is None:
        counts: dict[str, int] = {}
        twins: list[tuple[str, ...]] = []
        selfs: list[tuple[str, tuple[str, ...]]] = []
        for d, said in zip(index.decls, words(index), strict=True):
            by_last: dict[str, list[str]] = {}
            for token in said.written:
                counts[token] = counts.get(token, 0) + 1
                by_last.setdefault(_last(token), []).append(token)
            twins += [tuple(alike) for alike in by_last.values() if len(alike) > 1]
            if d.name and (own := by_last.get(d.name.rsplit(".", 1)[-1])):
                selfs.append((d.name, tuple(own)))
        kept = index.memo["priors.tally"] = Tally(counts, tuple(twins), tuple(selfs))
    assert isinstance(kept, Tally)
    return kept


def _words(d: Decl) -> Words:
    source = d.source
    if source is None:
        return _NONE
    statement = d.statement_text
    return Words(len(statement), _distinct(_NAMES.findall(statement)),
                 _distinct(_NAMES.findall(source.code, d.start, d.end)), _distinct(_NAMES.findall(d.body_code)))


def _distinct(tokens: list[str]) -> tuple[str, ...]:
    return tuple(sys.intern(t) for t in dict.fromkeys(tokens))  # interned: the same name is held once


def describe(census: Census, roots: Iterable[str], names: Collection[str]) -> dict[str, Known]:
    """What the tree says of each of `names` it holds. The reading is kept between calls (`Reading`), and a call
    reads again only what the files changed since the last one can have changed."""
    roots = tuple(roots)
    with _LOCK:
        global _LAST
        if _LAST is None or _LAST.roots != roots:
            _LAST = Reading(roots)
        try:
            _LAST.update(census)
            return _LAST.answer(names)
        except BaseException:
            _LAST = None  # half brought up to date: the next call reads afresh
            raise


_LOCK = threading.Lock()
_LAST: Reading | None = None


class Reading:
    """The priors' reading of the last tree, brought up to date file by file.

    What a target's `Known` reads beyond its own declaration is summed over the files: the declarations writing each
    name, grouped by the name's last component (`counts`, and the `twins` and `selfs` corrections of `Tally`), and
    the definitions by their last component (`defining`). A file that changed takes its old share off these and
    adds its new one; a target is read again only when its own file changed, when its hole count changed, or when
    what it reads changed: the sums under its own last component (its successors) or under the last component of
    a name its statement writes (the definitions it names). So a cycle reads the targets its change can move, and
    the answer is the one a first reading of the same tree gives (the tests hold the two equal over random edits).
    """

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self.files: dict[str, FileIndex] = {}
        self.owners: dict[str, dict[str, tuple[Decl, Words]]] = {}  # a name → each file declaring it → the first
        self.counts: dict[str, dict[str, int]] = {}  # last component → written name → declarations writing it
        self.twins: dict[str, dict[tuple[str, ...], int]] = {}  # last component → `Tally.twins` entry → how many
        self.selfs: dict[str, dict[tuple[str, ...], int]] = {}  # a declaration's name → its `Tally.selfs` entries
        self.defining: dict[str, dict[str, int]] = {}  # last component → definitions' names → how many
        self.holding: dict[str, tuple[str, int]] = {}
        self.known: dict[str, Known] = {}
        self.reads: dict[str, tuple[str, ...]] = {}  # a read name → the last components its `Known` depends on
        self.readers: dict[str, set[str]] = {}  # a last component → the read names depending on it

    def update(self, census: Census) -> None:
        moved: dict[tuple[str, str, object], int] = {}  # (sum, key, entry) → its net change
        dirty: set[str] = set()
        for path in self.files.keys() | census.files.keys():
            old, new = self.files.get(path), census.files.get(path)
            if old is new:
                continue
            for index, sign in ((old, -1), (new, 1)):
                if index is not None:
                    dirty |= self._share(path, index, sign, moved)
        self.files = dict(census.files)
        sums: dict[str, dict[str, dict[Any, int]]] = {
            "counts": self.counts, "twins": self.twins, "selfs": self.selfs, "defining": self.defining}
        touched: set[str] = set()
        for (kind, key, entry), change in moved.items():
            if change:
                if kind != "selfs":  # a name's own entries change with its own file, which made it dirty
                    touched.add(key)
                table = sums[kind].setdefault(key, {})
                table[entry] = table.get(entry, 0) + change
                if not table[entry]:
                    del table[entry]
                    if not table:
                        del sums[kind][key]
        holding = {h.name: (h.path, h.count) for h in census.holed()}
        dirty |= {n for n in holding.keys() | self.holding.keys() if holding.get(n) != self.holding.get(n)}
        self.holding = holding
        for tail in touched:
            dirty |= self.readers.get(tail, set())
        for name in dirty:
            self._forget(name)

    def _share(self, path: str, index: FileIndex, sign: int, moved: dict[tuple[str, str, object], int]) -> set[str]:
        """Add (`sign` 1) or take off (-1) one file's share of the sums; the names it declares."""
        def move(kind: str, key: str, entry: object, n: int = 1) -> None:
            moved[kind, key, entry] = moved.get((kind, key, entry), 0) + sign * n

        t = tally(index)
        for token, n in t.counts.items():
            move("counts", _last(token), token, n)
        for alike in t.twins:
            move("twins", _last(alike[0]), alike)
        for name, own in t.selfs:
            move("selfs", name, own)
        declared: set[str] = set()
        for d, said in zip(index.decls, words(index), strict=True):
            if d.name is None:
                continue
            if d.kind in DEFINING:
                move("defining", d.name.rsplit(".", 1)[-1], d.name)
            if d.name not in declared:
                declared.add(d.name)
                where = self.owners.setdefault(d.name, {})
                if sign > 0:
                    where[path] = (d, said)
                else:
                    where.pop(path, None)
                    if not where:
                        del self.owners[d.name]
        return declared

    def _forget(self, name: str) -> None:
        self.known.pop(name, None)
        for tail in self.reads.pop(name, ()):
            readers = self.readers.get(tail)
            if readers is not None:
                readers.discard(name)
                if not readers:
                    del self.readers[tail]

    def answer(self, names: Collection[str]) -> dict[str, Known]:
        out: dict[str, Known] = {}
        for name in names:
            found = self.known.get(name)
            if found is None and (name in self.owners or name in self.holding):
                found = self.known[name] = self._read(name)
            if found is not None:
                out[name] = found
        return out

    def _read(self, name: str) -> Known:
        where = self.owners.get(name)
        first = min(where) if where else None  # a census lists its files in path order: the first declares it
        path = first if first is not None else self.holding[name][0]
        place = chapter(path, self.roots)
        groups = [(f"chapter {place}", 1.0)]
        reads = {name.rsplit(".", 1)[-1]}
        if where is not None and first is not None:
            said = where[first][1]
            reads |= {_last(t) for t in said.statement}
            reached = {full for t in said.statement for full in self.defining.get(_last(t), ()) if _is(full, t)}
            reached.discard(name)
            groups += [(f"statement {_bin(said.size, SIZES)} characters", FEATURE_WEIGHT),
                       (f"{_bin(len(reached), COUNTS)} definitions named", FEATURE_WEIGHT),
                       (f"{_bin(self._successors(name), COUNTS)} successors", FEATURE_WEIGHT)]
        self.reads[name] = tuple(reads)
        for tail in reads:
            self.readers.setdefault(tail, set()).add(name)
        return Known(path, place, tuple(groups), self.holding.get(name, (path, 0))[1])

    def _successors(self, name: str) -> int:
        """How many declarations of the tree name `name` in their text (statement or proof), itself aside; a
        declaration writing two names that stand for it counts once."""
        tail = name.rsplit(".", 1)[-1]
        out = sum(n for token, n in self.counts.get(tail, {}).items() if _is(name, token))
        for alike, n in self.twins.get(tail, {}).items():
            hits = sum(1 for token in alike if _is(name, token))
            out -= n * max(0, hits - 1)
        out -= sum(n for own, n in self.selfs.get(name, {}).items() if any(_is(name, token) for token in own))
        return out


def after(census: Census) -> dict[str, tuple[str, ...]]:
    """The open targets (declarations holding a hole) each open target's proof uses, itself aside
    (`orchestrator.facts.uses`: Lean's listing where it listed the file, else the text): what the forecast closes
    before it. Asked only by the forecast, not by a cycle."""
    open_ = {h.name for h in census.holed()}
    short = Names.of(open_)
    out: dict[str, tuple[str, ...]] = {}
    for path, index in census.files.items():
        for d, said in zip(index.decls, words(index), strict=True):
            if d.name in open_ and d.name not in out:
                out[d.name] = tuple(sorted(uses(d, short, census.lean.get(path), said.proof) - {d.name}))
    return out


def _last(token: str) -> str:
    return token.rstrip(".").removeprefix("_root_.").rsplit(".", 1)[-1]


def _is(full: str, token: str) -> bool:
    token = token.rstrip(".").removeprefix("_root_.")
    return full == token or full.endswith("." + token)
