"""The integrity gate: no change may weaken what a proof means.

It rejects a new axiom (unless allowed), a new `admit` or `sorryAx`, a new
`native_decide`/`bv_decide`, options that skip or hide checking, `#exit`,
`@[implemented_by]`/`@[extern]` on a theorem, a macro that hides a `sorry`,
edits to protected files, and closing a sorry by deleting, renaming or
restating its declaration.
"""

from __future__ import annotations

from collections import Counter

from gates.base import GateInput, GateResult
from gates.census import Census
from gates.index import THEOREM_KINDS, Decl, FileIndex
from gates.scope import matches

NAME = "integrity"

WEAKENING_OPTIONS = frozenset({"debug.skipKernelTC", "debug.byAsSorry", "warn.sorry", "suppressSorry"})
_TRUSTING_ATTRIBUTES = ("implemented_by", "extern")


def check(inp: GateInput) -> GateResult:
    problems = _protected(inp) + _new_constructs(inp) + _vanished(inp.before, inp.after, inp)
    if problems:
        return GateResult(NAME, False, "; ".join(problems))
    return GateResult(NAME, True, "no new axiom, admit, sorryAx or checking option; no sorry closed by removal")


def _protected(inp: GateInput) -> list[str]:
    return [f"{c.path} is protected and was {c.kind}" for c in inp.changes if matches(c.path, inp.gates.protected)]


def _new_constructs(inp: GateInput) -> list[str]:
    out: list[str] = []
    base_axioms = {(d.key, d.statement_hash) for _, d in inp.before.axioms()}
    for change in inp.lean_changes():
        before = inp.before.files.get(change.path, FileIndex(change.path))
        after = inp.after.files.get(change.path)
        if after is None:
            continue
        where = change.path
        for d in after.axioms:
            if (d.key, d.statement_hash) not in base_axioms and d.name not in inp.gates.allowed_axioms:
                out.append(f"{where}:{d.line}: new axiom {d.name} (allowed: {', '.join(inp.gates.allowed_axioms)})")
        out += _rises(where, "admit", _admits(before), _admits(after))
        out += _rises(where, "sorry inside a macro/notation", _macro_holes(before), _macro_holes(after))
        out += _rises(where, "", _markers(before), _markers(after))
        base_trusting = {d.key for d in before.decls if _trusting(d)}
        out += [f"{where}:{d.line}: @[{', '.join(d.attributes)}] on {d.kind} {d.name}"
                for d in after.decls if _trusting(d) and d.key not in base_trusting]
    return out


def _vanished(before: Census, after: Census, inp: GateInput) -> list[str]:
    """Sorry-holding declarations of the base that were deleted, renamed, or restated while closed."""
    touched = {c.path for c in inp.lean_changes()}
    now: dict[str, Decl] = {d.key: d for _, d in after.decls()}
    added = [d for path, d in after.decls() if path in touched]
    out: list[str] = []
    for path, d in before.decls():
        if path not in touched or not d.holes:
            continue
        label = d.name or f"{d.kind} at {path}:{d.line}"
        successor = now.get(d.key)
        if successor is None:
            twin = next((a for a in added if a.statement_hash == d.statement_hash and a.key not in
                         {b.key for _, b in before.decls()}), None)
            verb = f"renamed to {twin.name}" if twin and twin.name else "deleted"
            out.append(f"{label} held {d.holes} sorry/admit in {path} and was {verb}; close the sorry instead")
        elif successor.statement_hash != d.statement_hash and successor.holes < d.holes:
            out.append(f"{label}: its statement changed in the same change that closed its sorry; "
                       "change a statement in one cycle and prove it in another")
    return out


def _rises(where: str, what: str, before: Counter[str], after: Counter[str]) -> list[str]:
    return [f"{where}: new {what or key}{f' in {key}' if what else ''} (+{after[key] - before[key]})"
            for key in sorted(after) if after[key] > before[key]]


def _admits(f: FileIndex) -> Counter[str]:
    return Counter(h.declaration or h.owner or "top level" for h in f.holes if h.keyword == "admit")


def _macro_holes(f: FileIndex) -> Counter[str]:
    return Counter("the file" for h in f.holes if h.in_macro)


def _markers(f: FileIndex) -> Counter[str]:
    out: Counter[str] = Counter()
    for m in f.markers:
        if m.kind == "set_option":
            if m.detail in WEAKENING_OPTIONS:
                out[f"set_option {m.detail}"] += 1
        elif m.kind == "#exit":
            out["#exit (nothing after it is checked)"] += 1
        else:
            out[m.kind] += 1
    return out


def _trusting(d: Decl) -> bool:
    return d.kind in THEOREM_KINDS and any(a.split()[0] in _TRUSTING_ATTRIBUTES
                                           for attr in d.attributes for a in attr.split(",") if a.strip())
