"""The size gate: a Lean file over the cap may not grow, except by a declared, rate-limited split.

Long files slow every build and every agent that reads them, and they only
ever grow unless something pushes back. Lines are the census's (`FileIndex.lines`:
newlines, plus an unterminated last line), so the gate, the Planner's table and
`status` agree. Only growth is refused: a change that leaves an over-cap file as
long or shorter passes, so a split can proceed step by step.
"""

from __future__ import annotations

from dataclasses import dataclass

from gates import directives
from gates.base import GateInput, GateResult
from gates.census import Census
from state.history import spent

NAME = "size"

HOW = ("split it: move declarations to a new file in the Scope and import it from where they are used; "
       "if this change is one step of a split in progress, declare it with a line `SPLITTING: <rationale>` in "
       "the report")


@dataclass(frozen=True)
class Growth:
    path: str
    old: int  # 0 for a new file
    new: int

    def __str__(self) -> str:
        return f"{self.path} {self.old:,} → {self.new:,} lines"


def splitting(report: str) -> str | None:
    """The rationale of a `SPLITTING: <rationale>` line of the Worker's report, if one is honoured."""
    return directives.first(report, "SPLITTING")


def grown(before: Census, after: Census, cap: int) -> list[Growth]:
    """Lean files over `cap` lines after the change that it made longer (a new file grows from 0)."""
    out = []
    for path, index in after.files.items():
        old = before.files[path].lines if path in before.files else 0
        if index.lines > cap and index.lines > old:
            out.append(Growth(path, old, index.lines))
    return out


def large(census: Census, warn: int) -> list[tuple[str, int]]:
    """Lean files over `warn` lines, longest first."""
    return sorted(((p, f.lines) for p, f in census.files.items() if f.lines > warn), key=lambda pl: (-pl[1], pl[0]))


def check(inp: GateInput) -> GateResult:
    warn, cap = inp.gates.file_warn_lines, inp.gates.file_cap_lines
    growth = grown(inp.before, inp.after, cap)
    changed = {c.path for c in inp.lean_changes()}
    notes = [f"{p} has {n:,} lines, over the {'cap' if n > cap else 'warning'} of {cap if n > cap else warn:,}"
             for p, n in large(inp.after, warn) if p in changed and p not in {g.path for g in growth}]
    note = f"; {'; '.join(notes)}" if notes else ""
    if not growth:
        return GateResult(NAME, True, f"no Lean file over the cap of {cap:,} lines grew{note}")
    grew = ", ".join(map(str, growth))
    rationale = splitting(inp.report)
    if rationale is None:
        return GateResult(NAME, False, f"{grew}: over the cap of {cap:,} lines and longer than before; {HOW}{note}")
    window = inp.gates.restructure_window
    used = spent(inp.history, inp.cycle, window, lambda r: bool(r.splitting))
    budget = inp.gates.split_budget
    if len(used) >= budget:
        cycles = ", ".join(str(c) for c in used) or "none allowed"
        return GateResult(NAME, False, f"{grew}: over the cap of {cap:,} lines, and the split budget is spent "
                          f"({len(used)} of {budget} in the last {window} cycles: {cycles}); split it now: move "
                          f"declarations to a new file in the Scope and import it, so the file gets shorter{note}")
    return GateResult(NAME, True, f"{grew}, over the cap of {cap:,} lines: split {len(used) + 1} of {budget} in "
                      f"{window} cycles allowed ({rationale}){note}")
