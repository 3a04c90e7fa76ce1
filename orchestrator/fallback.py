"""When the Planner fails: the cycle works on within the last valid Scope, and says why.

A Planner that cannot produce a valid strategy — because it followed an issue asking for a Scope of
`lakefile.toml`, say — would otherwise end every later cycle in `error`. Instead the cycle falls back to the
Scope of the last cycle that had a valid one, with a fixed strategy that declares nothing (no `RESTATE:`, no
`PROVER:`), and the record keeps why (`planner_failed`). Two such cycles in a row raise an alert and make the
daemon back off (`notify.planner_streak`).
"""

from __future__ import annotations

from agents.planner import Plan, validate
from gates.census import Census
from gates.config import GatesConfig
from gates.directives import one_line
from gates.scope import InvalidStrategy
from state.history import HistoryRecord, Usage

WHY_CHARS = 400


def plan(history: list[HistoryRecord], why: str, lean_roots: list[str], census: Census, gates: GatesConfig
         ) -> Plan | None:
    """The strategy on the last Scope a Planner (or a person) gave that is still valid, or None."""
    for r in reversed(history):
        if not r.scope or r.planner_failed:
            continue
        text = strategy(r.cycle, r.scope, why)
        try:
            return Plan(text, validate(text, lean_roots, census, gates), Usage())
        except InvalidStrategy:
            continue
    return None


def strategy(cycle: int, scope: list[str], why: str) -> str:
    bullets = "\n".join(f"- `{entry}`" for entry in scope)
    return (f"# Strategy — the last valid Scope\n\nThe Planner's answer could not be used this cycle:\n\n"
            f"> {one_line(why, WHY_CHARS)}\n\nSo this cycle continues on the Scope of cycle {cycle}. Read the plan's "
            "current target and the sorries in the Scope, and close the ones you can; state faithfully what the "
            "target needs. Change no existing statement.\n\n"
            f"## Scope\n{bullets}\n\n## Done when\nA sorry of the Scope is closed, or a blocker is recorded with "
            "`open_issue`.\n")
