"""What the models cost: every call is charged to a role, with the backend and model that served it.

The ledger also guards budgets: before a call, `admit` refuses it when the
spend so far plus the call's worst case would cross a limit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from state.errors import InfraError
from state.history import Usage


class BudgetExceeded(InfraError):
    """A model call was refused because it could cross a spending limit."""


@dataclass(frozen=True)
class Charge:
    role: str
    backend: str
    model: str
    usage: Usage
    cost_usd: float | None  # None when the model's price is unknown


@dataclass
class Ledger:
    """Charges of one cycle; `spent_before` is what earlier cycles spent, for the budget guard."""

    guard: Callable[[float], str | None] | None = None  # spend if admitted → why not, or None
    charges: list[Charge] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, charge: Charge) -> None:
        with self._lock:
            self.charges.append(charge)

    def admit(self, role: str, worst_case_usd: float) -> None:
        """Raise `BudgetExceeded` if spending `worst_case_usd` more could cross a limit."""
        if self.guard is None:
            return
        why = self.guard(self.spent() + worst_case_usd)
        if why is not None:
            raise BudgetExceeded(f"the {role}'s next model call could cross a budget: {why}")

    def spent(self) -> float:
        return sum(c.cost_usd or 0.0 for c in self.charges)

    def usage(self) -> dict[str, Usage]:
        out: dict[str, Usage] = {}
        for c in self.charges:
            out[c.role] = out.get(c.role, Usage()) + c.usage
        return out

    def costs(self) -> dict[str, float | None]:
        """USD per role; None for a role any of whose calls had no known price."""
        out: dict[str, float | None] = {}
        for c in self.charges:
            before = out.get(c.role, 0.0)
            out[c.role] = None if before is None or c.cost_usd is None else before + c.cost_usd
        return out

    def served_by(self) -> dict[str, list[str]]:
        """For each role, the `backend:model` pairs that did its work, in first-use order."""
        out: dict[str, list[str]] = {}
        for c in self.charges:
            name = f"{c.backend}:{c.model}"
            if name not in out.setdefault(c.role, []):
                out[c.role].append(name)
        return out
