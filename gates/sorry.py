"""The sorry gate: sorries plus admits may not rise, except by a declared, rate-limited restructuring.

The count is of `sorry` and `admit` in code, as SPEC §5 defines it; where Lean's environment was listed for a
file (`Census.lean`), Lean decides which declarations hold a hole. This gate runs before anything is compiled, so
it counts the files the change can alter by their text alone, on both sides (a fast pre-check); the kernel gate
applies the same rule (`judge`) to the count Lean gives once the change builds. A change
that raises the count, or trades a finished proof for a sorry whatever the net
count and whatever the name (a proved declaration removed while a new one with
its statement holds a sorry is the same trade; the integrity gate refuses it
undeclared), spends the restructuring budget:
`restructure_budget` such changes within `restructure_window` cycles. A sorry
closed by appeal to a declaration that still holds one (a sorried helper
lemma) is legitimate top-down work, but not a proof: the verdict names every
such declaration, so the Evaluator and the record see it.
"""

from __future__ import annotations

import re

from gates import directives
from gates.base import GateInput, GateResult
from gates.census import Census, between
from gates.lexer import ID_FIRST, ID_REST
from state.history import spent

NAME = "sorry"

_NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")


def restructuring(report: str) -> str | None:
    """The rationale of a `RESTRUCTURING: <rationale>` line of the Worker's report, if one is honoured."""
    return directives.first(report, "RESTRUCTURING")


def traded(before: Census, after: Census) -> list[str]:
    """Declarations that were proved and now hold a sorry or admit: under their name, or under a new one (a new
    declaration holding one whose statement is that of a proved declaration the change removed)."""
    return list(between(before, after, "traded", lambda: _traded(before, after)))


def _traded(before: Census, after: Census) -> list[str]:
    # Each declaration of the base is followed to its key's declaration in its own file after the change, else
    # (moved, or its file gone) to the change's declaration of that key: a name declared in two files (private
    # ones may be) is followed twin by twin. A file that does not differ holds the same declarations after, each
    # its own follower (`Census.changes`).
    differ, _ = before.changes(after)
    then, now = before.by_key, after.by_key
    out: list[str] = []
    gone: dict[str, list[str]] = {}
    for path, old in before.decls_in(differ):
        if old.holes:
            continue
        new = after.declared(path, old.key) or now.get(old.key)
        if new is None:
            gone.setdefault(old.statement_hash, []).append(old.name or f"{old.kind} at line {old.line}")
        elif new.holes:
            out.append(old.name or f"{old.kind} at line {old.line}")
    if gone:  # a key the base lacks is declared only in files that differ
        for _, new in after.decls_in(differ):
            if new.holes and new.key not in then and new.statement_hash in gone:
                out += [f"{name} (now {new.name or f'{new.kind} at line {new.line}'})"
                        for name in gone[new.statement_hash]]
    return out


def restructurings(inp: GateInput) -> list[int]:
    """The cycles within the window that spent the restructuring budget."""
    return spent(inp.history, inp.cycle, inp.gates.restructure_window, lambda r: r.was_restructuring)


def over_budget(inp: GateInput) -> str | None:
    """Why one more restructuring may not land, or None when the budget has room."""
    used, budget, window = restructurings(inp), inp.gates.restructure_budget, inp.gates.restructure_window
    if len(used) < budget:
        return None
    return (f"the restructuring budget is spent ({len(used)} of {budget} in the last {window} cycles"
            + (f": {', '.join(map(str, used))})" if used else ")"))


def leaners(before: Census, after: Census) -> dict[str, list[str]]:
    """Declarations whose sorries this change closed by naming a declaration that still holds one: name → the
    names it leans on."""
    return dict(between(before, after, "leaners", lambda: _leaners(before, after)))


def _leaners(before: Census, after: Census) -> dict[str, list[str]]:
    # Closed as the facts count a close (`orchestrator.facts.closed`): held a hole at the base, as Lean says where it
    # listed the file, and holds none now.
    holed = {h.name for h in after.holed()}
    present = after.by_key
    closed = [(name, new) for h in before.holed()
              if h.name not in holed and (new := present.get(h.name)) is not None and (name := new.name)]
    if not closed:
        return {}
    written = {name: set(_NAMES.findall(new.body_code)) for name, new in closed}
    holding = _holding(after, holed, set().union(*written.values()))
    out: dict[str, list[str]] = {}
    for name, used in written.items():
        if found := {holding[n] for n in used if n in holding} - {name}:
            out[name] = sorted(found)
    return out


def _holding(census: Census, holed: set[str], written: set[str]) -> dict[str, str]:
    """Each of the `written` names that stands for a declaration holding a hole → that declaration's name: the name
    itself, else the first declaration in file order whose last component it is."""
    declared = {n for n in written & holed if census.declaring(n)}
    out = {n: n for n in declared}
    tails = written - declared
    alike: dict[str, list[str]] = {}
    for n in holed:
        if (tail := n.rpartition(".")[2]) in tails and n != tail:
            alike.setdefault(tail, []).append(n)
    rank = {p: i for i, p in enumerate(census.files)} if alike else {}

    def place(name: str) -> tuple[int, int]:
        path = census.declaring(name)[0]
        return rank[path], next(i for i, d in enumerate(census.files[path].decls) if d.name == name)

    for tail, names in alike.items():
        if names := [n for n in names if census.declaring(n)]:
            out[tail] = min(names, key=place)
    return out


def leaning(before: Census, after: Census) -> list[str]:
    """Declarations whose sorries this change closed by naming a declaration that still holds one, each with
    what it uses."""
    return [f"{name} (uses {', '.join(used)})" for name, used in leaners(before, after).items()]


def check(inp: GateInput) -> GateResult:
    changed = {c.path for c in inp.lean_changes()}
    text = inp.before.graph.dependents(changed) | inp.after.graph.dependents(changed) | changed
    leaned = leaning(inp.before, inp.after)
    note = f"; closed only by appeal to a sorried declaration: {', '.join(leaned)}" if leaned else ""
    if hidden := inp.after.hidden_holes():
        more = f" and {len(hidden) - 10} more" if len(hidden) > 10 else ""
        names = ", ".join(name for _, name in hidden[:10]) + more
        note += f"; counted as holes, Lean says they hold sorryAx though their text has no sorry: {names}"
    return judge(inp.before.count(text), inp.after.count(text), inp, note)


def judge(before: int, after: int, inp: GateInput, note: str = "") -> GateResult:
    """The rule on a count of holes before and after the change."""
    if after <= before:
        return GateResult(NAME, True, f"sorries+admits {before} → {after}{note}")
    rise = after - before
    rationale = restructuring(inp.report)
    if rationale is None:
        return GateResult(NAME, False, f"sorries+admits rose {before} → {after} (+{rise}) and the report declares "
                          f"no `RESTRUCTURING: <rationale>`; close sorries, or declare why the split is needed{note}")
    limit = inp.gates.max_sorry_increase
    if rise > limit:
        return GateResult(NAME, False, f"sorries+admits rose {before} → {after} (+{rise}), more than the "
                          f"{limit} one restructuring may add{note}")
    spent = over_budget(inp)
    if spent:
        return GateResult(NAME, False, f"sorries+admits rose {before} → {after}: {spent}{note}")
    used, budget, window = restructurings(inp), inp.gates.restructure_budget, inp.gates.restructure_window
    return GateResult(NAME, True, f"sorries+admits {before} → {after}: restructuring {len(used) + 1} of {budget} "
                      f"in {window} cycles allowed ({rationale}){note}")
