"""Building gate inputs from two versions of a small Lean project."""

from __future__ import annotations

from collections.abc import Iterable

from gates.base import GateInput
from gates.config import BuildConfig, GatesConfig
from gates.tree import MemTree
from state.history import HistoryRecord, Outcome


def trees(base: dict[str, str], changes: dict[str, str | None]) -> tuple[MemTree, MemTree]:
    """`changes` maps a path to its new text, or to None to delete it."""
    after = {**base, **{k: v for k, v in changes.items() if v is not None}}
    for path, text in changes.items():
        if text is None:
            after.pop(path)
    return (MemTree({k: v.encode() for k, v in base.items()}), MemTree({k: v.encode() for k, v in after.items()}))


def gate_input(base: dict[str, str], changes: dict[str, str | None], *, scope: Iterable[str] = ("Book/**",),
               report: str = "", cycle: int = 20, history: Iterable[HistoryRecord] = (),
               gates: GatesConfig | None = None, strategy: str = "",
               locked: dict[str, str] | None = None, paired: Iterable[str] = (),
               approved: dict[str, str] | None = None, rejected: Iterable[str] = ()) -> GateInput:
    before, after = trees(base, changes)
    return GateInput(base=before, changed=after, gates=gates or GatesConfig(), build=BuildConfig(),
                     lean_roots=["Book"], state_dir=".prover-state", scope=list(scope), report=report,
                     cycle=cycle, history=list(history), strategy=strategy, locked=locked or {},
                     paired=frozenset(paired), approved=approved or {}, rejected=frozenset(rejected))


def record(cycle: int, *, restructuring: str | None = None, pre: int = 3, post: int = 3) -> HistoryRecord:
    return HistoryRecord(cycle=cycle, outcome=Outcome.ACCEPTED, restructuring=restructuring,
                         pre_sorry_count=pre, post_sorry_count=post)
