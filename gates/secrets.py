"""The secrets gate: no changed file may hold the value of a credential this process knows.

It names the file and the variable, never the value (`gates/credentials.py`
says which variables hold one).
"""

from __future__ import annotations

from gates.base import GateInput, GateResult
from gates.tree import ChangeKind

NAME = "secrets"
MAX_REPORTED = 10


def check(inp: GateInput) -> GateResult:
    if inp.secrets is None or not inp.secrets.values:
        return GateResult(NAME, True, "no secret is known to this process")
    problems = []
    for change in inp.changes:
        if change.kind is ChangeKind.DELETED:
            continue
        try:
            text = inp.changed.read(change.path).decode("utf-8", errors="replace")
        except OSError:
            continue  # the scope and integrity gates report what cannot be read
        names = inp.secrets.found(text)
        if names:
            problems.append(f"{change.path} contains the value of {', '.join(f'${n}' for n in names)}")
    if not problems:
        return GateResult(NAME, True, "no changed file holds a secret's value")
    shown = problems[:MAX_REPORTED] + ([f"… and {len(problems) - MAX_REPORTED} more"]
                                        if len(problems) > MAX_REPORTED else [])
    return GateResult(NAME, False, "; ".join(shown) + " (the values are not shown); a change may not carry a "
                                                      "credential: remove it")
