"""What the models cost: every call is charged to a role, with the backend and model that served it.

The ledger also guards budgets: before a call, `admit` refuses it when the
spend so far plus the call's worst case would cross a limit, and remembers
which limit refused it (a per-cycle limit ends the cycle; a daily one, the
day; the total, the run).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from agents.config import BudgetConfig
from state.errors import InfraError
from state.history import Usage


class Limit(StrEnum):
    CYCLE = "per_cycle_usd"
    DAY = "per_day_usd"
    TOTAL = "total_usd"


class BudgetExceeded(InfraError):
    """A model call was refused because it could cross a spending limit."""

    def __init__(self, message: str, limit: Limit) -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True)
class Budget:
    """The limits, and what earlier cycles already spent against them (unknown prices count as 0)."""

    config: BudgetConfig
    today_usd: float = 0.0  # spent by earlier cycles of this UTC day
    total_usd: float = 0.0  # spent by every earlier cycle

    def now(self) -> Budget:
        """The limits with what is spent against them as of now (a round's other items go on spending)."""
        return self

    def share(self, n: int) -> Budget:
        """This budget for one of `n` items worked at once where none sees what the others spend (jobs on other
        machines): each may spend a 1/n part of the room the day and the total have left."""
        now = self.now()
        c = now.config

        def spent(cap: float | None, before: float) -> float:
            return before if cap is None else cap - max(0.0, cap - before) / n

        return Budget(c, spent(c.per_day_usd, now.today_usd), spent(c.total_usd, now.total_usd))

    def tightest(self, spend: float) -> tuple[Limit, float] | None:
        """The limit that leaves least room once this cycle has spent `spend`, and that room (negative: crossed)."""
        c = self.config
        rooms = [(limit, cap - before - spend) for limit, cap, before in (
            (Limit.CYCLE, c.per_cycle_usd, 0.0), (Limit.DAY, c.per_day_usd, self.today_usd),
            (Limit.TOTAL, c.total_usd, self.total_usd)) if cap is not None]
        return min(rooms, key=lambda r: r[1]) if rooms else None

    def why(self, limit: Limit, spend: float) -> str:
        c = self.config
        if limit is Limit.CYCLE:
            return f"this cycle would spend ${spend:.2f}, over [budget] per_cycle_usd ${c.per_cycle_usd:.2f}"
        if limit is Limit.DAY:
            return (f"today's spend would reach ${self.today_usd + spend:.2f}, over [budget] per_day_usd "
                    f"${c.per_day_usd:.2f}")
        return f"the total would reach ${self.total_usd + spend:.2f}, over [budget] total_usd ${c.total_usd:.2f}"


@dataclass(frozen=True)
class Charge:
    role: str
    backend: str
    model: str
    usage: Usage
    cost_usd: float | None  # None when the model's price is unknown


@dataclass
class Ledger:
    """Charges of one cycle, guarded by the budget; `on_charge` sees the ledger after each charge (the cycle
    journals its spend there, so a cycle that never lands still counts what it spent)."""

    budget: Budget | None = None
    on_charge: Callable[[Ledger], None] | None = None
    charges: list[Charge] = field(default_factory=list)
    refused: Limit | None = None  # the limit that refused a call, once one has
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def add(self, charge: Charge) -> None:
        with self._lock:
            self.charges.append(charge)
            if self.on_charge is not None:
                self.on_charge(self)

    def admit(self, role: str, worst_case_usd: float) -> None:
        """Raise `BudgetExceeded` if spending `worst_case_usd` more could cross a limit."""
        if self.budget is None:
            return
        spend = self.spent() + worst_case_usd
        tight = self.budget.tightest(spend)
        if tight is not None and tight[1] < 0:
            self.refused = tight[0]
            raise BudgetExceeded(f"the {role}'s next model call could cross a budget: "
                                 f"{self.budget.why(tight[0], spend)}", tight[0])

    def headroom(self) -> float | None:
        """What may still be spent before a limit is crossed; None without limits."""
        tight = self.budget.tightest(self.spent()) if self.budget else None
        return None if tight is None else max(0.0, tight[1])

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
