"""The attempts a run's history records: every cycle is an attempt by its Worker's model on what it aimed at.

A record names the declarations the cycle aimed at (`targets`) and those its landed change closed (`closed`):
each of their union is one attempt, closed or not, by the record's Worker model. A cycle that ended in an error
or was interrupted made no attempt the gates judged, and counts as none. A declaration a declared restructuring
split (`parts`) hands its attempts to each part, at `SPLIT_WEIGHT` (a part is a piece of the problem its whole
was, and easier), parts of parts in turn. Records written before `targets` was kept (the reference script's, or
older ones of this loop's) aim at nothing known: they only count as cycles spent.

What the forecast samples from comes from here too: how often a cycle aims at open targets at all (among the
cycles whose base held a hole: one that found nothing open could aim at nothing), how many targets one aims at,
and what recent cycles cost; and, for a forecast before any attempt, the close rate: the declarations records
say they closed (the holes their sorry counts lost, for records that name none) per cycle whose base held a hole,
errors and pauses included, as the simulation counts cycles.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from state.history import HistoryRecord, Outcome

SPLIT_WEIGHT = 0.5
RECENT_COSTS = 100  # priced records the forecast samples a cycle's cost from, the latest
UNKNOWN = "unknown"  # the model of a record that names none
NO_ATTEMPT = (Outcome.ERROR, Outcome.INTERRUPTED)


@dataclass(frozen=True)
class Attempt:
    cycle: int
    model: str
    closed: bool


@dataclass
class Attempts:
    own: dict[str, list[Attempt]] = field(default_factory=dict)  # each target's attempts, in record order
    parent: dict[str, str] = field(default_factory=dict)  # a part → the declaration it was split from
    aiming: int = 0  # records aiming at some target
    kept: int = 0  # records that could say (`targets` kept, some hole open at their base)
    sizes: list[int] = field(default_factory=list)  # targets per aiming record
    costs: list[tuple[float, float]] = field(default_factory=list)  # recent priced records: (cycle, its Worker's)
    cycles: int = 0  # records in all
    last: int = 0  # the latest cycle number
    closes: int = 0  # what the records closed: declarations (a hole each), or holes where they name none
    counted: int = 0  # the records whose base held a hole (or might have: sorry counts unknown, targets kept)

    def cells(self) -> dict[str, dict[str, list[float]]]:
        """Each target's attempts and closes by model, with what each part inherits from what it was split from."""
        out: dict[str, dict[str, list[float]]] = {}
        for target, tries in self.own.items():
            by_model = out.setdefault(target, {})
            for t in tries:
                cell = by_model.setdefault(t.model, [0.0, 0.0])
                cell[0] += 1
                cell[1] += t.closed
        for part in self.parent:
            weight, seen, whole = 1.0, {part}, self.parent.get(part)
            while whole is not None and whole not in seen:  # a part of a part inherits from both
                weight *= SPLIT_WEIGHT
                seen.add(whole)
                for model, (n, k) in self._own_cells(whole).items():
                    cell = out.setdefault(part, {}).setdefault(model, [0.0, 0.0])
                    cell[0] += weight * n
                    cell[1] += weight * k
                whole = self.parent.get(whole)
        return out

    def _own_cells(self, target: str) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for t in self.own.get(target, []):
            n, k = out.get(t.model, (0, 0))
            out[t.model] = (n + 1, k + t.closed)
        return out

    def failures_since(self, target: str, cycle: int) -> int:
        """Failed attempts on `target` in cycles after `cycle`."""
        return sum(1 for t in self.own.get(target, []) if t.cycle > cycle and not t.closed)

    @property
    def models(self) -> list[str]:
        return sorted({t.model for tries in self.own.values() for t in tries})


def model_of(record: HistoryRecord) -> str:
    """The Worker's model: as the record names it, else the last the ledger saw serve the Worker."""
    if record.worker_model:
        return record.worker_model
    served = record.served_by.get("worker") or []
    return served[-1].split(":", 1)[-1] if served else UNKNOWN


def gather(records: Iterable[HistoryRecord]) -> Attempts:
    out = Attempts()
    priced: list[tuple[float, float]] = []
    for r in records:
        out.cycles += 1
        out.last = max(out.last, r.cycle)
        if r.cost_usd is not None:
            priced.append((r.cost_usd, r.costs.get("worker") or 0.0))
        for whole, parts in r.parts.items():
            for part in parts:
                if part != whole:
                    out.parent.setdefault(part, whole)
        if r.pre_sorry_count == 0 and not r.targets and not r.closed:
            continue  # nothing was open at its base to aim at: it says nothing of how often a cycle aims or closes
        if r.targets is not None or r.closed or r.pre_sorry_count is not None:
            out.counted += 1  # a cycle of the run's time, whatever it did: the simulation's cycles count the same
        if r.outcome not in NO_ATTEMPT and not r.paused:
            if r.targets is not None or r.closed:
                out.closes += len(r.closed)
            elif r.pre_sorry_count is not None and r.post_sorry_count is not None:
                out.closes += max(0, r.pre_sorry_count - r.post_sorry_count)
        if r.targets is None:
            continue
        out.kept += 1
        if r.outcome in NO_ATTEMPT or r.paused:  # a rate limit stopped it: no attempt was made
            continue
        tried = list(dict.fromkeys([*r.targets, *r.closed]))  # a close it did not aim at was attempted all the same
        if r.targets:
            out.aiming += 1
            out.sizes.append(len(r.targets))
        model, done = model_of(r), set(r.closed)
        for target in tried:
            out.own.setdefault(target, []).append(Attempt(r.cycle, model, target in done))
    out.costs = priced[-RECENT_COSTS:]
    return out
