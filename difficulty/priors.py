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
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from gates.census import Census
from gates.index import Decl, FileIndex
from gates.lexer import ID_FIRST, ID_REST
from orchestrator.facts import Names, tails, uses

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
    """What the tree says of each of `names` it holds."""
    roots = list(roots)
    holding: dict[str, tuple[str, int]] = {h.name: (h.path, h.count) for h in census.holed()}
    decls: dict[str, tuple[str, Decl, Words]] = {}
    for path, index in census.files.items():
        for each, said in zip(index.decls, words(index), strict=True):
            if each.name is not None:
                decls.setdefault(each.name, (path, each, said))
    wanted = [n for n in names if n in decls or n in holding]
    named = _successors(census, set(wanted))
    defining = tails({n for n, (_, each, _) in decls.items() if each.kind in DEFINING})
    out: dict[str, Known] = {}
    for name in wanted:
        d: Decl | None = decls[name][1] if name in decls else None
        path = decls[name][0] if name in decls else holding[name][0]
        where = chapter(path, roots)
        groups = [(f"chapter {where}", 1.0)]
        if d is not None:
            said = decls[name][2]
            reached = {full for t in said.statement for full in defining.get(_last(t), ()) if _is(full, t)} - {name}
            groups += [(f"statement {_bin(said.size, SIZES)} characters", FEATURE_WEIGHT),
                       (f"{_bin(len(reached), COUNTS)} definitions named", FEATURE_WEIGHT),
                       (f"{_bin(named.get(name, 0), COUNTS)} successors", FEATURE_WEIGHT)]
        out[name] = Known(path, where, tuple(groups), holding.get(name, (path, 0))[1])
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


def _successors(census: Census, names: set[str]) -> dict[str, int]:
    """How many declarations of the tree name each of `names` in their text (statement or proof), itself aside: the
    files' tallies summed, each written name resolved once; a declaration writing two names that stand for the same
    one of `names` counts once."""
    by_tail = tails(names)
    meant: dict[str, tuple[str, ...]] = {}  # a written name → those of `names` it may stand for

    def means(token: str) -> tuple[str, ...]:
        found = meant.get(token)
        if found is None:
            found = meant[token] = tuple(f for f in by_tail.get(_last(token), ()) if _is(f, token))
        return found

    tallies = [tally(index) for index in census.files.values()]
    total: dict[str, int] = {}
    for t in tallies:
        for token, n in t.counts.items():
            total[token] = total.get(token, 0) + n
    out: dict[str, int] = {}
    for token, n in total.items():
        for full in means(token):
            out[full] = out.get(full, 0) + n
    for t in tallies:
        for alike in t.twins:
            hits: dict[str, int] = {}
            for token in alike:
                for full in means(token):
                    hits[full] = hits.get(full, 0) + 1
            for full, k in hits.items():
                out[full] -= k - 1
        for name, own in t.selfs:
            if name in names and any(_is(name, token) for token in own):
                out[name] -= 1
    return out
