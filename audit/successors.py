"""The audit's successor tests: how well each proved statement is tested by the declarations that use it.

A statement is tested by its users as far as they rely on what it says: replaced by something else, a user that
relied on it no longer elaborates. For each proved theorem (`audit.overlap.targets`), its **users** are the
project's declarations whose statement or proof names it, names resolved as the cross-file reuse measure resolves
them (`audit.reuse.resolve`: the enclosing namespaces, the `open`s before it), among the declarations the user's
file can see: its own and those of the project files it imports, transitively. A short name two unrelated files
declare (each homework's `problem1`) names, in each file, that file's own declaration, never the other's.

Its **mutants** replace its statement in its file:
- the vacuity swap: the conclusion replaced by `True`, the binders kept, proved by `trivial`;
- a hypothesis dropped: the last explicit binder that reads as a proposition (its type has a relation or a logical
  connective, or its name is `h…`) and that nothing after it mentions, else the first premise of a `→` conclusion;
- the conclusion weakened: of `A ∧ B` the last conjunct dropped, `A ↔ B` made `A → B`, `a < b` made `a ≤ b`
  (`>` made `≥`, never under a negation), under the conclusion's `∀ …,`/`∃ …,` and premises; nothing when the
  conclusion is none of these, or when a top-level `↔` beside a `→` leaves the premises unclear.
Each is mechanical and keeps the statement well formed; its proof is `sorry` (only the users are checked). Each
mutant is compiled in a copy of the project, its target's file mutated, and the users' files (and only those) are
checked with the project's compiler in the sandbox: a user with an error inside its own lines kills the mutant. A
mutant whose own lines do not elaborate is `invalid` and counts for nothing.

The verdict: `tested` (every mutant compiled kills a user), `weakly tested` (some survive), `untested` (it has users,
and none breaks), `no users`; `unchecked` when none of its mutants could be compiled (a timeout, an error).

Each mutant's answer is kept under the digest of the mutated file, of every file Lean reads to check the users
(`gates.listing.closure_keys`) and of the toolchain's chain: a re-run compiles only what changed.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import structlog
from pydantic import BaseModel, ConfigDict

from audit.ask import Target
from audit.overlap import split
from audit.reuse import TOKEN, namespaces, opens_before, resolve
from gates.census import Census
from gates.diagnostics import CheckResult
from gates.imports import ImportGraph
from gates.index import Decl
from gates.lexer import ID_REST
from gates.listing import closure_keys
from gates.sandbox import link_packages
from state.atomic import read_kept, write_atomic

log = structlog.get_logger()
FORMAT = 1  # of the cached answers and of the mutants: answers of another format are asked again
NO_BOOK = "(no book)"
ITEMS_SHOWN = 200
METHOD = ("each proved theorem's users (declarations naming it, resolved in the files that see it) compiled "
          "against mutants of its statement — the conclusion replaced by True, a hypothesis dropped, the conclusion "
          "weakened — in a copy of the project; a user with an error in its own lines kills the mutant")
_RELATION = re.compile(r"[=≠<>≤≥∣∈∉⊆⊂⊇⊃∧∨¬↔→∀∃]|\b(?:True|False)\b")


class Verdict(StrEnum):
    TESTED = "tested"  # every mutant compiled breaks a user
    WEAK = "weakly tested"  # some survive
    UNTESTED = "untested"  # it has users; none breaks
    NO_USERS = "no users"
    UNCHECKED = "unchecked"  # none of its mutants could be compiled


class Kind(StrEnum):
    VACUITY = "vacuity"
    HYPOTHESIS = "hypothesis dropped"
    CONCLUSION = "conclusion weakened"


class Status(StrEnum):
    KILLED = "killed"
    SURVIVED = "survived"
    INVALID = "invalid"  # the mutant itself does not elaborate
    TIMEOUT = "timeout"
    ERROR = "error"  # Lean did not answer (it exited with no error reported)


KEPT = frozenset({Status.KILLED, Status.SURVIVED, Status.INVALID})


@dataclass(frozen=True)
class Mutant:
    kind: Kind
    change: str  # what it changes, for a reader
    text: str  # the declaration's text replacing the original's


class Outcome(BaseModel):
    """One mutant compiled against the users."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    change: str
    status: Status
    killed_by: list[str] = []  # the users with an error in their lines
    message: str = ""  # the first error of a user (killed), or of the mutant (invalid), or what went wrong
    seconds: float = 0.0
    cached: bool = False


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT
    outcome: Outcome


class Tested(BaseModel):
    """One theorem, its users, its mutants and its verdict."""

    model_config = ConfigDict(extra="forbid")

    declaration: str
    file: str
    line: int
    users: list[str]
    mutants: list[Outcome] = []
    verdict: Verdict
    seconds: float = 0.0


# -- users ----------------------------------------------------------------------------------------------------


class Users:
    """Who uses whom among the project's declarations, each name resolved among the declarations its file sees."""

    def __init__(self, census: Census) -> None:
        self.census = census
        self.graph = ImportGraph(census)
        self.declared = {p: [d for d in index.decls if d.name] for p, index in census.files.items()}
        self._visible: dict[str, dict[str, str]] = {}
        self._named: dict[tuple[str, str], set[tuple[str, str]]] = {}

    def visible(self, path: str) -> dict[str, str]:
        """Every declaration `path` sees, by full name, with the file declaring it: its own first, then its imports'."""
        if path not in self._visible:
            seen: dict[str, str] = {}
            for p in [path, *sorted(self.graph.imported([path]) - {path})]:
                for d in self.declared.get(p, []):
                    assert d.name is not None
                    seen.setdefault(d.name, p)
            self._visible[path] = seen
        return self._visible[path]

    def named(self, path: str, decl: Decl) -> set[tuple[str, str]]:
        """The declarations (file, name) `decl`'s statement and body name, itself left out."""
        assert decl.name is not None
        key = (path, decl.name)
        if key not in self._named:
            known = self.visible(path)
            scopes = namespaces(decl.name)
            opened = opens_before(decl, scopes)
            out: set[tuple[str, str]] = set()
            for m in TOKEN.finditer(f"{decl.statement_text}\n{decl.body_code}"):
                if m.group("dot"):
                    continue  # field notation on a local: its type is not known here
                hit = resolve(m.group("name"), scopes, opened, known)
                if hit is not None and (known[hit], hit) != key:
                    out.add((known[hit], hit))
            self._named[key] = out
        return self._named[key]

    def of(self, path: str, name: str) -> list[tuple[str, Decl]]:
        """The declarations naming `name` of `path`: in `path` itself or in a file importing it, transitively."""
        out = []
        for p in sorted(self.graph.dependents({path})):
            for d in self.declared.get(p, []):
                if (path, name) in self.named(p, d):
                    out.append((p, d))
        return out


# -- mutants ----------------------------------------------------------------------------------------------------


def mutants(decl: Decl) -> list[Mutant]:
    """The vacuity swap, and where it can be done mechanically one hypothesis dropped and the conclusion weakened."""
    assert decl.source is not None
    head = decl.source.text[decl.start:decl.header].split()
    written = head[-1] if head else (decl.name or "")
    kept = [m for m in decl.modifiers if m in ("private", "protected")]
    lead = " ".join([*kept, decl.kind, written])
    binders, colon, goal = split(decl.statement_text)
    if not colon:
        return []
    binders, goal = binders.strip(), goal.strip()
    out = [Mutant(Kind.VACUITY, f"the conclusion `{_short(goal)}` replaced by `True`",
                  f"{lead} {binders} : True := trivial".replace("  ", " "))]
    attributed = decl.source.text[decl.start:decl.header].rstrip()
    if (dropped := drop_hypothesis(binders, goal)) is not None:
        new_binders, new_goal, what = dropped
        out.append(Mutant(Kind.HYPOTHESIS, f"drops {what}", f"{attributed} {new_binders} : {new_goal} := sorry"))
    if (weaker := weaken(goal)) is not None:
        new_goal, what = weaker
        out.append(Mutant(Kind.CONCLUSION, what, f"{attributed} {binders} : {new_goal} := sorry"))
    return out


def groups(binders: str) -> list[str]:
    """The bracketed binder groups, as written, in order."""
    out, depth, start = [], 0, None
    for i, c in enumerate(binders):
        if c in "([{⦃⟨":
            if depth == 0:
                start = i
            depth += 1
        elif c in ")]}⦄⟩":
            depth -= 1
            if depth == 0 and start is not None:
                out.append(binders[start:i + 1])
                start = None
    return out


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![{ID_REST}.]){re.escape(name)}(?![{ID_REST}])", text) is not None


def drop_hypothesis(binders: str, goal: str) -> tuple[str, str, str] | None:
    """The binders and goal with one hypothesis dropped, and which; None when there is none to drop."""
    found = groups(binders)
    for i in range(len(found) - 1, -1, -1):
        g = found[i]
        if not g.startswith("(") or ":" not in g:
            continue
        names_part, _, type_part = g[1:-1].partition(":")
        names = names_part.split()
        if not names:
            continue
        name, type_text = names[-1], type_part.strip()
        if not (_RELATION.search(type_text) or name.startswith("h")):
            continue
        after = " ".join(found[i + 1:]) + " " + goal
        if name != "_" and _mentions(after, name):
            continue
        rest = f"({' '.join(names[:-1])} : {type_text})" if len(names) > 1 else ""
        new = binders.replace(g, rest, 1) if rest else _remove(binders, g)
        return " ".join(new.split()), goal, f"`({name} : {_short(type_text)})`"
    premises = top_level(goal, " → ")
    if len(premises) > 1 and not goal.lstrip().startswith(("∀", "∃")) and not _iff_beside_arrow(goal):
        return binders, " → ".join(premises[1:]), f"the premise `{_short(premises[0])}`"
    return None


def _remove(binders: str, group: str) -> str:
    at = binders.find(group)
    return binders[:at] + binders[at + len(group):]


def top_level(text: str, op: str) -> list[str]:
    """`text` split at each `op` outside brackets, each part stripped."""
    parts, depth, last, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "([{⦃⟨":
            depth += 1
        elif c in ")]}⦄⟩":
            depth -= 1
        elif depth == 0 and text.startswith(op, i):
            parts.append(text[last:i].strip())
            last = i + len(op)
            i = last
            continue
        i += 1
    parts.append(text[last:].strip())
    return parts


def weaken(goal: str) -> tuple[str, str] | None:
    """The goal with its conclusion weakened, and how; None when no rule applies."""
    if _iff_beside_arrow(goal):
        return None  # `A → B ↔ C` is `(A → B) ↔ C`: its premises cannot be read by splitting at `→`
    premises = top_level(goal, " → ")
    conclusion = premises[-1]
    prefix = ""
    while conclusion.startswith(("∀", "∃")):
        body = top_level(conclusion, ", ")
        if len(body) < 2:
            return None
        prefix += body[0] + ", "
        conclusion = ", ".join(body[1:])
        inner = top_level(conclusion, " → ")
        if len(inner) > 1:
            prefix += " → ".join(inner[:-1]) + " → "
            conclusion = inner[-1]
    conjuncts = top_level(conclusion, " ∧ ")
    if len(conjuncts) > 1:
        new, what = " ∧ ".join(conjuncts[:-1]), f"the conjunct `{_short(conjuncts[-1])}` dropped"
    elif len(sides := top_level(conclusion, " ↔ ")) == 2:
        new, what = f"{sides[0]} → {sides[1]}", "`↔` weakened to `→`"
    elif conclusion.startswith("¬") or len(top_level(conclusion, "¬")) > 1:
        return None  # under a negation, `≤` for `<` would be stronger
    elif len(sides := top_level(conclusion, " < ")) == 2:
        new, what = f"{sides[0]} ≤ {sides[1]}", "`<` weakened to `≤`"
    elif len(sides := top_level(conclusion, " > ")) == 2:
        new, what = f"{sides[0]} ≥ {sides[1]}", "`>` weakened to `≥`"
    else:
        return None
    if " → " in new and (prefix or len(premises) > 1):
        new = f"({new})"
    return " → ".join([*premises[:-1], prefix + new]), what


def _iff_beside_arrow(goal: str) -> bool:
    """`↔` binds looser than `→`: with both at the top level, splitting at `→` misreads the statement."""
    return len(top_level(goal, " ↔ ")) > 1 and len(top_level(goal, " → ")) > 1


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


# -- compiling a mutant against the users ---------------------------------------------------------------------


class Checker(Protocol):
    def check(self, path: str, module: str) -> CheckResult: ...


@dataclass(frozen=True)
class Region:
    name: str
    path: str
    first: int
    last: int


def _lines(text: str, start: int, end: int) -> tuple[int, int]:
    return text.count("\n", 0, start) + 1, text.count("\n", 0, end) + 1


def trial(root: Path, checker: Checker, module_of: Callable[[str], str], target: Target,
          users: Sequence[tuple[str, Decl]], mutant: Mutant) -> Outcome:
    """`mutant` written over `target` in the copy of the project at `root`, its file and its users' files checked;
    the file is put back after."""
    d = target.decl
    assert d.source is not None
    original = d.source.text
    text = original[:d.start] + mutant.text + original[d.end:]
    shift = mutant.text.count("\n") - original.count("\n", d.start, d.end)
    mine = Region(target.name, target.path, *_lines(text, d.start, d.start + len(mutant.text)))
    regions = []
    for path, u in users:
        assert u.name is not None
        first, last = _lines(original if path == target.path else u.source.text if u.source else "", u.start, u.end)
        if path == target.path and u.start >= d.end:
            first, last = first + shift, last + shift
        regions.append(Region(u.name, path, first, last))
    file = root / target.path
    started = time.monotonic()
    base = Outcome(kind=mutant.kind, change=mutant.change, status=Status.SURVIVED)
    try:
        file.write_text(text, encoding="utf-8")
        killed: dict[str, str] = {}
        unanswered = ""
        for path in [target.path, *sorted({p for p, _ in users} - {target.path})]:
            result = checker.check(path, module_of(path))
            errors = [e for e in result.errors if _same(e.file, path)]
            if path == target.path:
                own = [e for e in errors if mine.first <= e.line <= mine.last]
                if own:
                    return base.model_copy(update={"status": Status.INVALID, "message": _first(own[0].message),
                                                   "seconds": round(time.monotonic() - started, 3)})
            if result.exit_code is None:
                unanswered = unanswered or f"`{result.command}` timed out"
                continue
            if result.exit_code != 0 and not result.errors:
                unanswered = unanswered or f"`{result.command}` exited with {result.exit_code} and reported no error"
                continue
            for r in regions:
                hit = [e for e in errors if r.path == path and r.first <= e.line <= r.last]
                if hit and r.name not in killed:
                    killed[r.name] = _first(hit[0].message)
    finally:
        file.write_text(original, encoding="utf-8")
    seconds = round(time.monotonic() - started, 3)
    if killed:
        who, why = next(iter(killed.items()))
        return base.model_copy(update={"status": Status.KILLED, "killed_by": sorted(killed),
                                       "message": f"{who}: {why}", "seconds": seconds})
    if unanswered:
        status = Status.TIMEOUT if "timed out" in unanswered else Status.ERROR
        return base.model_copy(update={"status": status, "message": unanswered, "seconds": seconds})
    return base.model_copy(update={"seconds": seconds})


def _same(reported: str, path: str) -> bool:
    norm = posixpath.normpath(reported)
    return norm == path or norm.endswith("/" + path)


def _first(message: str) -> str:
    return message.splitlines()[0][:300] if message else ""


def verdict(users: Sequence[str], outcomes: Sequence[Outcome]) -> Verdict:
    if not users:
        return Verdict.NO_USERS
    decided = [o for o in outcomes if o.status in (Status.KILLED, Status.SURVIVED)]
    if not decided:
        return Verdict.UNCHECKED
    killed = sum(o.status is Status.KILLED for o in decided)
    return Verdict.TESTED if killed == len(decided) else Verdict.WEAK if killed else Verdict.UNTESTED


@contextmanager
def copy_of(root: Path, lake_dir: str, state_dir: str) -> Iterator[Path]:
    """The project's files as they are on disk (its build outputs too, so they stay warm) in a temporary directory,
    sharing the Lake project's `.lake/packages`; removed after. Mutants are written there, never in the project."""
    parent = Path(tempfile.mkdtemp(prefix="autoformalize-successors-"))
    copy = parent / root.name
    packages = (root / lake_dir / ".lake" / "packages").resolve()

    def ignored(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).resolve()
        skip = {".git"} if here == root.resolve() else set()
        skip |= {state_dir} if here == root.resolve() else set()
        skip |= {"packages"} if here == packages.parent else set()
        return skip & set(names)

    try:
        shutil.copytree(root, copy, symlinks=True, ignore=ignored)
        link_packages(copy / lake_dir, packages)
        yield copy
    finally:
        shutil.rmtree(parent, ignore_errors=True)


# -- the answers kept ---------------------------------------------------------------------------------------------


@dataclass
class Cache:
    """Outcomes by key, one JSON file each; a timeout or an error is never kept (it is asked again)."""

    folder: Path

    def get(self, key: str) -> Outcome | None:
        entry = read_kept(self.folder / f"{key}.json", Entry)
        return entry.outcome if entry is not None and entry.format == FORMAT else None

    def put(self, key: str, outcome: Outcome) -> None:
        if outcome.status in KEPT:
            write_atomic(self.folder / f"{key}.json", Entry(outcome=outcome).model_dump_json())


class Keys:
    """A mutant's key: the digest of the mutated file, of the closure of every file Lean checks for it, and of
    the chain the project's files are keyed under."""

    def __init__(self, census: Census, chain: str) -> None:
        self.closures = closure_keys(census, chain)
        self.chain = chain

    def of(self, target: Target, users: Sequence[tuple[str, Decl]], mutant: Mutant) -> str:
        files = sorted({target.path, *(p for p, _ in users)})
        parts = [f"successors format {FORMAT}", self.chain, target.path, target.decl.start, mutant.text,
                 *(self.closures.get(p, p) for p in files)]
        return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:32]


# -- the run ------------------------------------------------------------------------------------------------------


Found = Sequence[tuple[str, Decl]]  # a theorem's users: each one's file and declaration
Trial = Callable[[Target, Found, Mutant], Outcome]


@dataclass
class Measured:
    """What `audit --successors` measured, before the entities it belongs to are known."""

    results: list[Tested]
    population: int
    sampled: bool
    seed: int
    unasked: list[str] = field(default_factory=list)
    budget_s: float | None = None
    asked: int = 0  # mutants compiled in this run
    cached: int = 0  # mutants whose outcome the cache held
    interrupted: bool = False

    def document(self, entities: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return document(self, entities)


def measure(targets: Sequence[Target], users: Users, run: Trial, cache: Cache | None, keys: Keys | None, *,
            population: int, sampled: bool, seed: int, budget_s: float | None = None,
            progress: Callable[[int], None] | None = None, clock: Callable[[], float] = time.monotonic) -> Measured:
    """Each target's users and its mutants' outcomes (the cache's, else compiled, one at a time); no target started
    once `budget_s` has passed (those left are `unasked`). Ctrl-C stops the run between mutants: the compile
    running finishes and is kept, as is every outcome before it; the target it belonged to and those after are
    `unasked`."""
    start = clock()
    out = Measured([], population, sampled, seed, budget_s=budget_s)
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set()) \
        if threading.current_thread() is threading.main_thread() else None
    try:
        for k, t in enumerate(targets):
            found = users.of(t.path, t.name)
            names = sorted({d.name for _, d in found if d.name})
            todo = mutants(t.decl) if found else []
            keyed = [(m, keys.of(t, found, m) if keys is not None else None) for m in todo]
            fresh = [m for m, key in keyed if key is None or cache is None or cache.get(key) is None]
            if fresh and budget_s is not None and clock() - start > budget_s:
                out.unasked += [x.name for x in targets[k:]]
                break
            outcomes: list[Outcome] = []
            for m, key in keyed:
                held = cache.get(key) if cache is not None and key is not None else None
                if held is not None:
                    outcomes.append(held.model_copy(update={"cached": True}))
                    out.cached += 1
                    continue
                if stop.is_set():
                    break
                got = run(t, found, m)
                out.asked += 1
                if cache is not None and key is not None:
                    cache.put(key, got)
                log.info("successors.mutant", declaration=t.name, kind=str(m.kind), status=str(got.status))
                outcomes.append(got)
            if stop.is_set() and len(outcomes) < len(keyed):
                out.interrupted = True
                out.unasked += [x.name for x in targets[k:]]
                break
            out.results.append(Tested(declaration=t.name, file=t.path, line=t.line, users=names, mutants=outcomes,
                                      verdict=verdict(names, outcomes),
                                      seconds=round(sum(o.seconds for o in outcomes), 3)))
            if progress is not None:
                progress(1)
            if stop.is_set():
                out.interrupted = True
                out.unasked += [x.name for x in targets[k + 1:]]
                break
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return out


# -- the audit's document -----------------------------------------------------------------------------------------


def counts(results: Iterable[Tested]) -> dict[str, int]:
    listed = list(results)
    return {str(v): sum(r.verdict is v for r in listed) for v in Verdict}


def document(m: Measured, entities: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`successors` of `audit --json`: the verdicts over the theorems tried, per book and chapter, and each."""
    return {
        "tried": len(m.results), "verdicts": counts(m.results), "population": m.population,
        "sample": {"size": len(m.results) + len(m.unasked), "seed": m.seed} if m.sampled else None,
        "unasked": len(m.unasked), "not_asked": list(m.unasked), "interrupted": m.interrupted,
        "budget_s": m.budget_s, "asked": m.asked, "cached": m.cached,
        "books": chapters(m.results, entities), "method": METHOD,
        "results": [r.model_dump(mode="json") for r in m.results],
    }


def chapters(results: Sequence[Tested], entities: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Verdicts per book and chapter: a theorem's is the one of the entity its name formalizes, else its file's
    folder (`by` says which)."""
    place: dict[str, tuple[str | None, str, str]] = {}
    for e in entities:
        for name in e.get("lean") or []:
            place.setdefault(name, (e.get("book") or None, e.get("chapter") or "(no chapter)", "entity"))
    grouped: dict[tuple[str | None, str, str], list[Tested]] = {}
    for r in results:
        where = place.get(r.declaration) or (None, r.file.rsplit("/", 1)[0] if "/" in r.file else ".", "file")
        grouped.setdefault(where, []).append(r)
    out = [{"book": book, "chapter": chapter, "by": by, "tried": len(rs), **counts(rs)}
           for (book, chapter, by), rs in grouped.items()]
    return sorted(out, key=lambda g: (g["by"] != "entity", g["book"] or "", g["chapter"]))


def attach(rows: Sequence[dict[str, Any]], results: Sequence[Tested]) -> None:
    """Each entity's `successors`: its declarations' users, mutants, the killed ones and one verdict (None: none of
    its declarations was tried)."""
    by_name = {r.declaration: r for r in results}
    for row in rows:
        mine = [by_name[n] for n in row.get("lean") or [] if n in by_name]
        if not mine:
            row["successors"] = None
            continue
        outcomes = [o for r in mine for o in r.mutants]
        users = sorted({u for r in mine for u in r.users})
        row["successors"] = {
            "users": users,
            "mutants": [{"declaration": r.declaration, "kind": str(o.kind), "change": o.change, "status": str(o.status),
                         "killed_by": o.killed_by} for r in mine for o in r.mutants],
            "killed": [f"{r.declaration}: {o.kind}" for r in mine for o in r.mutants if o.status is Status.KILLED],
            "verdict": str(verdict(users, outcomes)),
            "declarations": {r.declaration: str(r.verdict) for r in mine},
        }


def summary_line(section: dict[str, Any]) -> str:
    v = section["verdicts"]
    extra = [f"{section['unasked']} not tried"] if section["unasked"] else []
    extra += [f"{v['unchecked']} unchecked"] if v.get("unchecked") else []
    return (f"Successor tests: {section['tried']} theorems — {v['tested']} tested, {v['weakly tested']} weakly "
            f"tested, {v['untested']} untested, {v['no users']} with no users" + (f"; {', '.join(extra)}" if extra
                                                                                else ""))


def markdown(section: dict[str, Any]) -> list[str]:
    """The report's section: the verdicts per book and chapter, then the theorems whose users do not test them."""
    out = ["## Successor tests", "", f"Method: {section['method']}.", "", summary_line(section) + ".", ""]
    if section["sample"]:
        out += [f"A random sample of {section['sample']['size']} of the {section['population']} proved theorems "
                f"(seed {section['sample']['seed']}).", ""]
    if section["books"]:
        out += ["| book | chapter | tried | tested | weakly tested | untested | no users |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        out += [f"| {_cell(g['book'] or NO_BOOK)} | {_cell(g['chapter'])}{' (folder)' if g['by'] == 'file' else ''} "
                f"| {g['tried']} | {g['tested']} | {g['weakly tested']} | {g['untested']} | {g['no users']} |"
                for g in section["books"]]
    weak = [r for r in section["results"] if r["verdict"] in (Verdict.UNTESTED, Verdict.WEAK)]
    if weak:
        out += ["", "Statements whose users do not test them (a mutant that breaks no user):", "",
                "| declaration | where | verdict | users | surviving mutants |", "| --- | --- | --- | --- | --- |"]
        for r in weak[:ITEMS_SHOWN]:
            alive = "; ".join(m["change"] for m in r["mutants"] if m["status"] == Status.SURVIVED)
            out.append(f"| `{_cell(r['declaration'])}` | {_cell(r['file'])}:{r['line']} | {r['verdict']} | "
                       f"{_cell(', '.join(r['users'][:6]))} | {_cell(alive)} |")
        if len(weak) > ITEMS_SHOWN:
            out.append(f"\n… and {len(weak) - ITEMS_SHOWN} more (see the JSON)")
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
