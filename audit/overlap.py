"""The audit's Mathlib-usage dimension (the paper's §3.2.2 and Table 3): which proved theorems `exact?` closes with
the library alone.

Each proved theorem (a theorem or lemma, nothing sorried and no project axiom in what it uses: `audit.rests`) is
asked `exact?` (`audit.exact`, `audit.ask`). Its suggestion's names are sorted three ways:

- the project's constants: a constant is the project's when the module declaring it is one of the project's files
  (Lean's listing of them, `gates.listing`; where Lean could not list them, the declarations the census reads, and
  names under one of them, such as `Foo.ext`). Of those, theorems and axioms are results the project proved or
  assumed; its definitions, constructors and projections are the vocabulary the statement is written in;
- the theorem's own locals and vocabulary: its binder names (and those of the `variable`s before it), and the
  names its statement writes (a suggestion prints `Real.sqrt` where the statement, under `open Real`, wrote
  `sqrt`);
- everything else: constants from outside the project — Mathlib, Batteries, core.

A suggestion using a result of the project is original, as the paper counts it ("even if it is provable using
exact in conjunction with a theorem proved by the project itself"); one using none, and at least one constant from
outside the project, overlaps; one using neither (`exact h`, a hypothesis) is closed by its own hypotheses. A
theorem `exact?` cannot close is original; a timeout is a timeout; an error is neither. The rate is the overlaps
over the proofs tried, timeouts and errors included (so a rate with timeouts is a lower bound).

Only Lean's listing says what a constant of the library is, and it lists the project's modules alone: a library
definition applied to a hypothesis (`exact h (Nat.succ n)`) counts as outside the project like a library theorem.
Every item lists its constants, so a reader can tell.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from audit.ask import Asked, Target
from audit.exact import Answer, Kind, binder_names, bound, names
from audit.rests import Support
from gates.census import Census
from gates.chosen import shown
from gates.env import Module, normal
from gates.environment import lean_names
from gates.index import THEOREM_KINDS, Decl
from gates.probe import IDENT, canonical
from state.history import HistoryRecord, LibraryProof

RESULTS = frozenset({"thm", "axiom", "?"})  # `?`: a project name the census does not declare (`Foo.ext`)
ITEMS_SHOWN = 500
NO_BOOK = "(no book)"
METHOD = ("`exact?` on each proved theorem (its file up to it, its proof replaced), under pp.fullNames; overlap: the "
          "suggestion uses no theorem or axiom of the project and at least one constant from outside it (a constant "
          "is the project's when a module of the project declares it)")


class Status(StrEnum):
    OVERLAP = "overlap"  # the library closes it: no result of the project in the suggestion
    OWN = "own"  # closed with a result of the project: original, as the paper counts it
    LOCAL = "local"  # closed by its own hypotheses, no constant from outside the project
    ORIGINAL = "original"  # `exact?` could not close it
    TIMEOUT = "timeout"
    ERROR = "error"


class Tried(BaseModel):
    """One theorem asked, and what its answer means."""

    model_config = ConfigDict(extra="forbid")

    declaration: str
    file: str
    line: int
    status: Status
    suggestion: str | None = None
    constants: list[str] = []  # the suggestion's constants from outside the project
    project: list[str] = []  # the results of the project it uses
    valid: bool = True  # False: Lean found the proof, but the tactic it printed did not elaborate again
    message: str = ""
    seconds: float = 0.0
    cached: bool = False


# -- what is tried ------------------------------------------------------------------------------------------------


def targets(census: Census, support: Support, only: set[str] | None = None) -> list[Target]:
    """Every proved theorem and lemma (of `only`, when given), named once in the tree (a name two files declare
    cannot be told apart)."""
    seen: dict[str, list[tuple[str, Decl]]] = {}
    for path, d in census.decls():
        if d.name:
            seen.setdefault(d.name, []).append((path, d))
    out = []
    for name, found in seen.items():
        if len(found) != 1 or (only is not None and name not in only):
            continue
        path, d = found[0]
        if d.kind in THEOREM_KINDS and not support.rests_on(name):  # nothing sorried, itself included
            out.append(Target(name, path, d))
    return sorted(out, key=lambda t: (t.path, t.line))


def sample(found: Sequence[Target], size: int | None, seed: int) -> list[Target]:
    """`size` of them drawn with `random.Random(seed)` from the list sorted by name (all, when `size` is None or at
    least their number), in file order: the same tree, size and seed give the same sample on any machine."""
    if size is None or size >= len(found):
        return list(found)
    drawn = random.Random(seed).sample(sorted(found, key=lambda t: t.name), size)
    return sorted(drawn, key=lambda t: (t.path, t.line))


# -- whose constants ----------------------------------------------------------------------------------------------


class Constants:
    """The project's constants a file can see, by name as Lean prints it, with their kinds (`thm`, `def`, …)."""

    def __init__(self, kinds: Mapping[str, str], declared: Iterable[str] = ()) -> None:
        self.kinds = dict(kinds)
        self.declared = set(declared)  # with the census as the source: names under these are the project's too

    @classmethod
    def listed(cls, modules: Iterable[Module]) -> Constants:
        kinds: dict[str, str] = {}
        for m in modules:
            for written, lean in lean_names(m).items():
                kinds[normal(written)] = m.consts[lean].kind
        return cls(kinds)

    @classmethod
    def read(cls, census: Census, paths: Iterable[str]) -> Constants:
        """From the declarations the census reads in `paths` (where Lean listed none of them)."""
        kinds = {normal(d.name): "thm" if d.kind in THEOREM_KINDS else "axiom" if d.kind == "axiom" else "def"
                 for p in paths if p in census.files for d in census.files[p].decls if d.name}
        return cls(kinds, kinds)

    def kind(self, name: str) -> str | None:
        """The kind of the project's constant `name`; None for a name outside the project."""
        key = normal(name)
        if key in self.kinds:
            return self.kinds[key]
        parts = key.split(".")
        if any(".".join(parts[:k]) in self.declared for k in range(len(parts) - 1, 0, -1)):
            return "?"  # made for a declaration of the project (an `@[ext]` lemma, a `to_additive` twin …)
        return None


def constants(census: Census, files: Iterable[str], listed: Mapping[str, Module] | None
              ) -> tuple[dict[str, Constants], str]:
    """Per file, the project's constants it can see (its own and its imports'), and where they were read from."""
    graph = census.graph
    out: dict[str, Constants] = {}
    for path in set(files):
        seen = graph.imported([path])
        if listed is not None and all(p in listed for p in seen):
            out[path] = Constants.listed(listed[p] for p in seen)
        else:
            out[path] = Constants.read(census, seen)
    lean = listed is not None and all(p in listed for f in set(files) for p in graph.imported([f]))
    return out, "lean" if lean else "census"


# -- what an answer means -----------------------------------------------------------------------------------------


def vocabulary(t: Target) -> tuple[set[str], set[str]]:
    """The theorem's locals (its binder names and those of the `variable`s before it) and the other names its
    statement writes."""
    assert t.decl.source is not None
    setting = [c.removeprefix("variable") for c in t.decl.source.contexts[:t.decl.context] if c.startswith("variable")]
    statement = t.decl.statement_text
    binders, _, _ = split(statement)
    locals_ = binder_names(" ".join([*setting, binders])) | bound(statement)
    written = {canonical(m.group()) for text in (*setting, statement) for m in IDENT.finditer(text)}
    return locals_, written - locals_


def classify(t: Target, answer: Answer, seen: Constants, *, cached: bool = False) -> Tried:
    base = Tried(declaration=t.name, file=t.path, line=t.line, status=Status.ERROR, message=answer.message,
                 seconds=answer.seconds, cached=cached)
    if answer.kind is Kind.TIMEOUT:
        return base.model_copy(update={"status": Status.TIMEOUT})
    if answer.kind is Kind.NONE:
        return base.model_copy(update={"status": Status.ORIGINAL})
    if answer.kind is Kind.ERROR or answer.suggestion is None:
        return base
    locals_, written = vocabulary(t)
    used = names(answer.suggestion)
    project = [n for n in used if seen.kind(n) in RESULTS]
    outside = [n for n in used if seen.kind(n) is None and n not in locals_
               and not any(n == w or n.endswith("." + w) for w in written)]
    status = Status.OWN if project else Status.OVERLAP if outside else Status.LOCAL
    return base.model_copy(update={"status": status, "suggestion": answer.suggestion, "constants": outside,
                                   "project": project, "valid": answer.valid})


def tried(found: Sequence[Target], asked: Asked, seen: Mapping[str, Constants]) -> list[Tried]:
    return [classify(t, asked.answers[t.name], seen[t.path], cached=t.name in asked.cached)
            for t in found if t.name in asked.answers]


def split(signature: str) -> tuple[str, str, str]:
    """The binders before the statement's top-level `:`, the `:`, and the type."""
    depth = 0
    for i, c in enumerate(signature):
        if c in "([{⦃⟨":
            depth += 1
        elif c in ")]}⦄⟩":
            depth -= 1
        elif c == ":" and not depth and not signature.startswith(":=", i):
            return signature[:i], ":", signature[i + 1:]
    return "", "", signature


# -- the audit's document -----------------------------------------------------------------------------------------


def document(results: Sequence[Tried], *, population: int, sampled: bool, seed: int, unasked: Sequence[str],
             limit_s: float, source: str, entities: Sequence[dict[str, Any]], asked: int, cached: int,
             interrupted: bool = False) -> dict[str, Any]:
    """`mathlib_overlap` of `audit --json`: the paper's Table 3 row for the project (SPEC §8), and what stands
    behind it."""
    counts = {s: sum(r.status is s for r in results) for s in Status}
    proofs = len(results)
    overlapping = [r for r in results if r.status is Status.OVERLAP]
    return {
        "proofs": proofs, "overlap": counts[Status.OVERLAP],
        "rate": round(counts[Status.OVERLAP] / proofs, 4) if proofs else None,
        "timeouts": counts[Status.TIMEOUT],
        "items": [{"declaration": r.declaration, "suggestion": r.suggestion, "constants": r.constants,
                   "file": r.file, "line": r.line, "valid": r.valid} for r in overlapping],
        "original": counts[Status.ORIGINAL], "own": counts[Status.OWN], "local": counts[Status.LOCAL],
        "errors": counts[Status.ERROR], "unasked": len(unasked), "population": population,
        "sample": {"size": proofs + len(unasked), "seed": seed} if sampled else None,
        "timed_out": [r.declaration for r in results if r.status is Status.TIMEOUT],
        "failed": [{"declaration": r.declaration, "message": r.message} for r in results if r.status is Status.ERROR],
        "not_asked": list(unasked), "interrupted": interrupted,
        "books": chapters(results, entities), "limit_s": limit_s, "project_constants": source,
        "asked": asked, "cached": cached, "method": METHOD,
        "results": [r.model_dump(mode="json") for r in results],
    }


def chapters(results: Sequence[Tried], entities: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Proofs and overlaps per book and chapter: a theorem's is the one of the entity its name formalizes, else its
    file's folder (`by` says which)."""
    place: dict[str, tuple[str | None, str, str]] = {}
    for e in entities:
        for name in e.get("lean") or []:
            place.setdefault(name, (e.get("book") or None, e.get("chapter") or "(no chapter)", "entity"))
    groups: dict[tuple[str | None, str, str], list[Tried]] = {}
    for r in results:
        where = place.get(r.declaration) or (None, r.file.rsplit("/", 1)[0] if "/" in r.file else ".", "file")
        groups.setdefault(where, []).append(r)
    out = []
    for (book, chapter, by), rs in groups.items():
        n, k = len(rs), sum(r.status is Status.OVERLAP for r in rs)
        out.append({"book": book, "chapter": chapter, "by": by, "proofs": n, "overlap": k,
                    "rate": round(k / n, 4) if n else None})
    return sorted(out, key=lambda g: (g["by"] != "entity", g["book"] or "", g["chapter"]))


def attach(rows: Sequence[dict[str, Any]], results: Sequence[Tried]) -> None:
    """Each entity's own result: the answer for each of its declarations tried (None: none was)."""
    by_name = {r.declaration: r for r in results}
    for row in rows:
        mine = [by_name[n] for n in row.get("lean") or [] if n in by_name]
        row["mathlib"] = [{"declaration": r.declaration, "status": str(r.status), "suggestion": r.suggestion,
                           "constants": r.constants} for r in mine] or None


def summary_line(section: dict[str, Any]) -> str:
    rate = f" ({section['rate']:.1%})" if section["rate"] is not None else ""
    extra = [f"{section['timeouts']} timed out"] if section["timeouts"] else []
    extra += [f"{section['errors']} not answered"] if section["errors"] else []
    extra += [f"{section['unasked']} not asked"] if section["unasked"] else []
    return (f"Mathlib overlap (exact?): {section['overlap']} of {section['proofs']} proofs{rate}"
            + (f"; {', '.join(extra)}" if extra else ""))


def markdown(section: dict[str, Any]) -> list[str]:
    """The report's section: the paper's Table 3 row for the project, per book and chapter, and each overlapping
    declaration with the library theorem that closes it."""
    rate = f"{section['rate']:.0%}" if section["rate"] is not None else "—"
    out = ["## Mathlib overlap (exact?)", "", f"Method: {section['method']}.", "",
           "| system | proofs | overlap |", "| --- | ---: | ---: |",
           f"| this project | {section['proofs']:,} | {rate} ({section['overlap']:,}) |", "",
           f"Of the proofs tried: {section['overlap']} overlap, {section['own']} closed with the project's own "
           f"theorems, {section['local']} by their own hypotheses, {section['original']} not closed by `exact?`, "
           f"{section['timeouts']} timed out (limit {section['limit_s']:g}s), {section['errors']} not answered."
           + (f" {section['unasked']} not asked (budget or stop): run it again to ask them." if section["unasked"]
              else "")
           + (f" A sample of {section['sample']['size']} of {section['population']} proved theorems (seed "
              f"{section['sample']['seed']})." if section.get("sample") else "")
           + f" The project's constants were read from {section['project_constants']}."]
    if section["books"]:
        out += ["", "| book | chapter | proofs | overlap | rate |", "| --- | --- | ---: | ---: | ---: |"]
        out += [f"| {_cell(g['book'] or NO_BOOK)} | {_cell(g['chapter'])}{' (folder)' if g['by'] == 'file' else ''} "
                f"| {g['proofs']} | {g['overlap']} | {g['rate']:.0%} |" for g in section["books"]]
    items = section["items"]
    if items:
        out += ["", "Overlapping proofs, with what closes them:", "", "| declaration | where | library | suggestion |",
                "| --- | --- | --- | --- |"]
        out += [f"| `{_cell(i['declaration'])}` | {_cell(i['file'])}:{i['line']} | "
                f"{_cell(', '.join(i['constants'][:6]))} | `{_cell(i['suggestion'] or '')}` |"
                for i in items[:ITEMS_SHOWN]]
        if len(items) > ITEMS_SHOWN:
            out.append(f"\n… and {len(items) - ITEMS_SHOWN} more (see the JSON)")
    if section["timed_out"]:
        out += ["", "Timed out: " + ", ".join(f"`{n}`" for n in section["timed_out"][:50])
                + (" …" if len(section["timed_out"]) > 50 else "")]
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# -- in the loop --------------------------------------------------------------------------------------------------


def closed(before: Census, after: Census) -> list[str]:
    """Theorems the change closed: holding a hole at the base, whole now."""
    holed = {h.name for h in before.holed()}
    out = []
    for path, d in after.decls():
        if d.name and d.name in holed and d.kind in THEOREM_KINDS and not after.holds(path, d):
            out.append(d.name)
    return sorted(set(out))


def notes(results: Sequence[Tried]) -> list[LibraryProof]:
    return [LibraryProof(declaration=r.declaration, suggestion=r.suggestion or "", constants=r.constants)
            for r in results if r.status is Status.OVERLAP]


def told(history: Sequence[HistoryRecord], census: Census, limit: int = 20) -> str:
    """The overlaps recorded in recent cycles whose theorem is still in the tree, newest first, one a line, every
    name rendered by `shown` (a Worker chose them): what the next Planner and Worker are told, as data."""
    present = census.named
    seen: dict[str, str] = {}
    for r in reversed(history):
        for note in r.mathlib_overlap:
            if note.declaration in present and note.declaration not in seen:
                library = ", ".join(shown(c, 120) for c in note.constants[:4])
                seen[note.declaration] = (f"- {shown(note.declaration)} (cycle {r.cycle}) is {library}: "
                                          f"exact {shown(note.suggestion, 300)}")
    return "\n".join(list(seen.values())[:limit])


@dataclass
class Measured:
    """What `audit --mathlib` measured, before the entities it belongs to are known."""

    results: list[Tried]
    population: int  # proved theorems in the tree
    sampled: bool
    seed: int
    unasked: list[str]
    limit_s: float
    source: str  # where the project's constants were read from
    asked: int  # answers asked of Lean in this run
    cached: int  # answers the cache held
    interrupted: bool = False

    def document(self, entities: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return document(self.results, population=self.population, sampled=self.sampled, seed=self.seed,
                        unasked=self.unasked, limit_s=self.limit_s, source=self.source, entities=entities,
                        asked=self.asked, cached=self.cached, interrupted=self.interrupted)
