"""The census's per-file indexes kept between cycles, by content.

A file's index is a function of its text and of the keywords the lexer takes there (`gates.header.Keywords`, which
the file's imports decide), and of nothing else: so it is kept under the git blob id of the text, one entry per
blob, holding the file's header (which the keywords are computed from), the digest Lean's listings are keyed by,
and one index per set of keywords it was read with. A tree committed to git names every file's blob without
reading it (`git ls-tree`), so a census of a commit reads, lexes and indexes only the files whose blob has no
entry, or whose keywords have no index in it; the text of the others is read again only when a gate asks for a
declaration's statement or source (`gates.index.Origin`).

An entry is one file, `<blob>.json`, written atomically: a line with the sha256 of the rest, then the JSON. One
that cannot be read — missing, cut short, its digest or its blob not matching, another format, a malformed row —
is rebuilt from the text and written again, never trusted. Entries of blobs no longer in the tree are deleted once
there are more than twice as many entries as the tree has files. A well-formed entry is trusted as the orchestrator
wrote it: the git directory is its own, never visible to the Worker's sandbox.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import structlog

from gates.header import Header, Keywords, read_header
from gates.index import Decl, FileIndex, Hole, Marker, Origin, index_source
from state.atomic import write_atomic

log = structlog.get_logger()
FORMAT = 1  # the rows' shape; bump when FileIndex, Decl, Hole or Marker gain a field
SPARE = 4  # entries kept beyond those of the tree's files: in memory, and (beyond twice them) on disk


@runtime_checkable
class Stored(Protocol):
    """A tree whose files are git blobs: a commit."""

    def blobs(self) -> dict[str, str]:
        """Path → blob id of every file that is a blob."""
        ...

    def reader(self) -> Callable[[str], bytes]:
        """Reads a blob by its id, from any thread, long after the tree is gone."""
        ...

    def indexes(self) -> IndexCache | None: ...


def key(keywords: Keywords) -> str:
    """The keywords an index was lexed with, as an entry keys it."""
    raw = json.dumps([sorted(keywords.present), sorted(keywords.unknown), list(keywords.tokens)], ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def decode(data: bytes) -> tuple[str, str | None]:
    """A file's text as the census reads it, and the problem to note when it is not UTF-8."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        return (data.decode("utf-8", errors="replace"),
                f"not valid UTF-8 at byte {e.start}; read with replacement characters")


@dataclass
class Entry:
    """What is kept of one blob."""

    blob: str
    digest: str  # sha256 of the text as read (hex)
    header: Header
    problem: str | None  # how reading it went wrong, noted with its path
    # keywords' key → the index's row; None once made into an index (`live`), from which it is written again: a
    # process holds the index, not both (fewer objects for the garbage collector to walk)
    indexes: dict[str, list[Any] | None] = field(default_factory=dict)
    holds: dict[str, bool] = field(default_factory=dict)  # project token → whether the text holds it
    dirty: bool = False
    live: dict[tuple[str, str], FileIndex] = field(default_factory=dict)  # (path, keywords' key) → index made

    @classmethod
    def of(cls, blob: str, text: str, problem: str | None) -> Entry:
        return cls(blob, hashlib.sha256(text.encode()).hexdigest(), read_header(text), problem, dirty=True)

    def index(self, path: str, keywords: Keywords, load: Callable[[], str]) -> FileIndex | None:
        """The index kept for `keywords`, its text loaded by `load` when first asked for; None when there is none, or
        its row is malformed (then dropped)."""
        k = key(keywords)
        if (made := self.live.get((path, k))) is not None:
            return made
        row = self.indexes.get(k)
        if row is None:  # none kept, or made into an index for another path (a copy of the file)
            other = next((f for (_, kk), f in self.live.items() if kk == k), None)
            row = _row(other) if other is not None else None
        if row is None:
            return None
        try:
            made = self.live[(path, k)] = _index(path, row, keywords, self, Origin(load=load, keywords=keywords))
        except (ValueError, TypeError, KeyError, IndexError) as e:
            log.warning("indexcache.malformed", blob=self.blob, error=str(e)[:200])
            del self.indexes[k]
            return None
        self.indexes[k] = None
        return made

    def add(self, path: str, keywords: Keywords, index: FileIndex) -> None:
        for d in index.decls:  # while its source is at hand: a kept index holds its hashes
            d.sums = (d.statement_hash, d.text_hash)
        self.indexes[key(keywords)] = None
        self.live[(path, key(keywords))] = index
        self.dirty = True

    def dump(self) -> str:
        body = json.dumps({"format": FORMAT, "blob": self.blob, "digest": self.digest,
                           "header": [self.header.prelude, list(self.header.imports), self.header.end],
                           "problem": self.problem, "indexes": self._rows(), "holds": self.holds},
                          ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(body.encode()).hexdigest() + "\n" + body

    def _rows(self) -> dict[str, list[Any]]:
        made = {k: f for (_, k), f in self.live.items()}
        return {k: row if row is not None else _row(made[k]) for k, row in self.indexes.items()}

    @classmethod
    def load(cls, blob: str, raw: str) -> Entry:
        """The entry `raw` holds; ValueError when it is not one, intact, of `blob` and of this format."""
        digest, _, body = raw.partition("\n")
        if hashlib.sha256(body.encode()).hexdigest() != digest:
            raise ValueError("its digest does not match")
        data = json.loads(body)
        if data.get("format") != FORMAT or data.get("blob") != blob:
            raise ValueError("another format or blob")
        prelude, imports, end = data["header"]
        return cls(blob, _str(data["digest"]), Header(_bool(prelude), tuple(_strs(imports)), _int(end)),
                   _opt(data["problem"]), dict(data["indexes"]), {_str(k): _bool(v) for k, v in data["holds"].items()})


# Entries read or made lately, by folder and blob, with the indexes made from them: a process running cycle after
# cycle (the daemon) reads an unchanged file's entry once. Indexes are shared, never changed, by every census
# holding them. The last census's files are kept, and `SPARE` entries more, the latest used.
_LIVE: OrderedDict[tuple[Path, str], Entry] = OrderedDict()
_LOCK = threading.Lock()


@dataclass
class IndexCache:
    """Entries by blob id, one file each; `writes` false: read only (a dry run changes nothing)."""

    folder: Path
    writes: bool = True

    def get(self, blob: str) -> Entry | None:
        with _LOCK:
            if (entry := _LIVE.get((self.folder, blob))) is not None:
                _LIVE.move_to_end((self.folder, blob))
                return entry
        entry = self._read(blob)
        if entry is not None:
            self.remember(entry)
        return entry

    def remember(self, entry: Entry) -> None:
        with _LOCK:
            _LIVE[(self.folder, entry.blob)] = entry
            _LIVE.move_to_end((self.folder, entry.blob))

    @staticmethod
    def settle(files: int) -> None:
        """Keep in memory the entries of the latest `files` blobs used, and `SPARE` more, their indexes' texts
        dropped (read again when next asked for): what a process holds does not grow with the cycles it runs."""
        with _LOCK:
            while len(_LIVE) > files + SPARE:
                _LIVE.popitem(last=False)
            for entry in _LIVE.values():
                for index in entry.live.values():
                    if index.origin is not None:
                        index.origin.release()

    def _read(self, blob: str) -> Entry | None:
        file = self.folder / f"{blob}.json"
        try:
            raw = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            log.warning("indexcache.unreadable", blob=blob, error=str(e)[:200])
            return None
        try:
            return Entry.load(blob, raw)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
            log.warning("indexcache.unreadable", blob=blob, error=str(e)[:200])
            return None

    def put(self, entry: Entry) -> None:
        if not self.writes:
            return
        try:
            write_atomic(self.folder / f"{entry.blob}.json", entry.dump())
        except OSError as e:  # the next census indexes it again
            log.warning("indexcache.unwritable", blob=entry.blob, error=str(e)[:200])
            return
        entry.dirty = False

    def trim(self, used: set[str]) -> None:
        """Drop the entries of blobs not in `used` once there are more than twice as many entries as `used`."""
        if not self.writes:
            return
        try:
            names = [e.name for e in os.scandir(self.folder) if e.name.endswith(".json")]
        except OSError:
            return
        if len(names) <= 2 * len(used) + SPARE:
            return
        for name in names:
            if name.removesuffix(".json") not in used:
                (self.folder / name).unlink(missing_ok=True)


def indexed(entry: Entry, path: str, keywords: Keywords, text: Callable[[], str], load: Callable[[], str]
            ) -> FileIndex:
    """`path`'s index for `keywords`: the entry's, else made from `text` and added to it."""
    found = entry.index(path, keywords, load)
    if found is not None:
        return found
    index = index_source(path, text(), keywords)
    entry.add(path, keywords, index)
    # Its text is read again when asked for, as a kept one's is: what a census keeps in memory is the same for all.
    index.origin = Origin(load=load, keywords=keywords)
    for d in index.decls:
        d.origin = index.origin
    return index


# -- rows ------------------------------------------------------------------------------------------------------


def _row(f: FileIndex) -> list[Any]:
    return [[[d.kind, d.name, d.line, list(d.modifiers), list(d.attributes), d.holes, d.start, d.end, d.header,
              d.shape, d.context, d.top, d.doc, d.statement_hash, d.text_hash] for d in f.decls],
            [[h.keyword, h.line, h.column, h.declaration, h.owner, h.in_macro] for h in f.holes],
            [[m.kind, m.detail, m.line, m.declaration, m.offset, m.args] for m in f.markers],
            [list(m) for m in f.macros], f.lines, f.problems, f.tokens, f.registered, f.commands,
            [list(s) for s in f.scopes]]


def _index(path: str, row: list[Any], keywords: Keywords, entry: Entry, origin: Origin | None) -> FileIndex:
    decls, holes, markers, macros, lines, problems, tokens, registered, commands, scopes = row
    out = FileIndex(path, lines=_int(lines), problems=_strs(problems), prelude=entry.header.prelude,
                    imports=list(entry.header.imports), keywords=keywords, tokens=_strs(tokens),
                    registered=_strs(registered), commands=[_int(c) for c in commands],
                    scopes=[(_int(a), _int(b)) for a, b in scopes], origin=origin, digest=entry.digest)
    out.decls = [Decl(kind=_str(k), name=_opt(n), line=_int(ln), modifiers=tuple(_strs(mo)),
                      attributes=tuple(_strs(at)), holes=_int(ho), start=_int(st), end=_int(en), header=_int(he),
                      shape=_str(sh), context=_int(co), top=_int(to), doc=_opt(do), origin=origin,
                      sums=(_str(sa), _str(sb)))
                 for k, n, ln, mo, at, ho, st, en, he, sh, co, to, do, sa, sb in decls]
    out.holes = [Hole(_str(k), _int(ln), _int(co), _opt(d), _opt(o), _bool(m)) for k, ln, co, d, o, m in holes]
    out.markers = [Marker(_str(k), _str(de), _int(ln), _opt(d), _int(o), _str(a)) for k, de, ln, d, o, a in markers]
    out.macros = [(_str(k), _int(ln)) for k, ln in macros]
    return out


def _str(v: object) -> str:
    if not isinstance(v, str):
        raise TypeError("a string expected")
    return v


def _opt(v: object) -> str | None:
    return None if v is None else _str(v)


def _int(v: object) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError("an integer expected")
    return v


def _bool(v: object) -> bool:
    if not isinstance(v, bool):
        raise TypeError("a boolean expected")
    return v


def _strs(v: object) -> list[str]:
    if not isinstance(v, list):
        raise TypeError("a list expected")
    return [_str(x) for x in v]
