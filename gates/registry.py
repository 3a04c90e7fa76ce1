"""The mechanical gates, in the order they run.

Each gate is a function `check(GateInput) -> GateResult`, registered here in
the order they run. The build gate runs only when the cheap gates pass: no
compiler time is spent on a change that cannot land anyway; the kernel gate
only when the change builds (Lean can say nothing of what does not); the successors gate
only when the kernel gate passed (it compares the meanings the kernel gate's listings give).
"""

from __future__ import annotations

from collections.abc import Callable

from gates import build, integrity, kernel, scope, secrets, size, sorry, successors
from gates.base import GateInput, GateResult

GATES: dict[str, Callable[[GateInput], GateResult]] = {
    scope.NAME: scope.check,
    integrity.NAME: integrity.check,
    secrets.NAME: secrets.check,
    sorry.NAME: sorry.check,
    size.NAME: size.check,
    build.NAME: build.check,
    kernel.NAME: kernel.check,
    successors.NAME: successors.check,
}
CHEAP = (scope.NAME, integrity.NAME, secrets.NAME, sorry.NAME, size.NAME)


def run_gates(inp: GateInput) -> list[GateResult]:
    """Every cheap gate, then the build if they all passed, then the kernel if it built, then the successors on
    the kernel's listings."""
    results = [GATES[name](inp) for name in CHEAP]
    for name in (build.NAME, kernel.NAME, successors.NAME):
        if not all(r.passed for r in results):
            break
        results.append(GATES[name](inp))
    return results
