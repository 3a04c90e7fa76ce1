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
    now, old_keys = after.by_key, before.by_key.keys()
    out: list[str] = []
    gone: dict[str, list[str]] = {}
    for _, old in before.decls():
        if old.holes:
            continue
        new = now.get(old.key)
        if new is None:
            gone.setdefault(old.statement_hash, []).append(old.name or f"{old.kind} at line {old.line}")
        elif new.holes:
            out.append(old.name or f"{old.kind} at line {old.line}")
    for _, new in after.written_holes():
        if new.key not in old_keys and new.statement_hash in gone:
            out += [f"{name} (now {new.name or f'{new.kind} at line {new.line}'})" for name in gone[new.statement_hash]]
    return out


def restructurings(inp: GateInput) -> list[int]:
    """The cycles within the window that spent the restructuring budget."""
    window = inp.gates.restructure_window
    return [r.cycle for r in inp.history if inp.cycle - window < r.cycle < inp.cycle and r.was_restructuring]


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
    holed = {h.name for h in after.holed()}
    after_decls = after.by_key
    closed = [(name, new) for _, old in before.written_holes()
              if (new := after_decls.get(old.key)) is not None and (name := new.name) and name not in holed]
    if not closed:
        return {}
    holding: dict[str, str] = {}
    for _, d in after.decls():
        if d.name and d.name in holed:
            holding[d.name] = d.name
            holding.setdefault(d.name.rsplit(".", 1)[-1], d.name)
    out: dict[str, list[str]] = {}
    for name, new in closed:
        used = {holding[n] for n in _NAMES.findall(new.body_code) if n in holding} - {name}
        if used:
            out[name] = sorted(used)
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
