"""The sorry gate: sorries plus admits may not rise, except by a declared, rate-limited restructuring."""

from __future__ import annotations

import re

from gates.base import GateInput, GateResult

NAME = "sorry"

_DECLARATION = re.compile(r"^\s*RESTRUCTURING:[ \t]*(\S.*)$", re.MULTILINE)


def restructuring(report: str) -> str | None:
    """The rationale of a `RESTRUCTURING: <rationale>` line in the Worker's report, if any."""
    m = _DECLARATION.search(report)
    return m.group(1).strip() if m else None


def check(inp: GateInput) -> GateResult:
    before, after = inp.before.holes, inp.after.holes
    if after <= before:
        return GateResult(NAME, True, f"sorries+admits {before} → {after}")
    rise = after - before
    rationale = restructuring(inp.report)
    if rationale is None:
        return GateResult(NAME, False, f"sorries+admits rose {before} → {after} (+{rise}) and the report declares "
                          "no `RESTRUCTURING: <rationale>`; close sorries, or declare why the split is needed")
    limit = inp.gates.max_sorry_increase
    if rise > limit:
        return GateResult(NAME, False, f"sorries+admits rose {before} → {after} (+{rise}), more than the "
                          f"{limit} one restructuring may add")
    window = inp.gates.restructure_window
    used = [r.cycle for r in inp.history if r.cycle > inp.cycle - window and r.cycle < inp.cycle
            and r.was_restructuring]
    budget = inp.gates.restructure_budget
    if len(used) >= budget:
        cycles = ", ".join(str(c) for c in used)
        return GateResult(NAME, False, f"sorries+admits rose {before} → {after}: the restructuring budget is spent "
                          f"({len(used)} of {budget} in the last {window} cycles: {cycles})")
    return GateResult(NAME, True, f"sorries+admits {before} → {after}: restructuring {len(used) + 1} of {budget} "
                      f"in {window} cycles allowed ({rationale})")
