"""`autoformalize forecast`: each open target's difficulty, and the cycles and dollars left to close them all.

The document (`Forecast`, as `forecast --json` prints it, SPEC §8):

    {"targets": [{"declaration", "difficulty", "attempts", "p_next", …}, …],
     "remaining": {"cycles": {"p10", "p50", "p90"}, "usd": {"p10", "p50", "p90"}}, …}

The simulation (`simulate`) is seeded: the same history and tree give the same figures. It runs
`[difficulty] runs` times, fewer (`affordable`) when the open targets would take long to play out; `runs` in the
document says how many. Only the targets open now are counted: sorries the run will open later (stating new
theorems sorry-first) are not foreseen.

Before any attempt — no record names what its cycle aimed at — there is nothing to fit a target's difficulty on,
and the forecast is the naive one (`basis = "naive"`): the open holes at the close rate the records show, P50
exactly n·N/k; its band and burn-down are those of n closes at a rate known only as k closes in N cycles
(`naive`), so no wider than those k closes allow (their median is not n·N/k: the P50 shown is the naive figure).
Without a close (or with nothing open) there is no figure at all (`basis = "none"`): nulls, no band.

`usd` comes from what recorded cycles cost (`cost = "history"`); where none is known, `priced` fills it from an
estimate of one cycle's cost from the prices (`cost = "prices"`, `per_cycle` its low and high): P10 at the low,
P90 at the high, P50 at their middle. Else it holds nulls.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from typing import Literal

from pydantic import BaseModel, Field

from difficulty.config import DifficultyConfig
from difficulty.estimate import Estimate
from difficulty.simulate import Open, Outlook, Spend, band, quantile, simulate
from gates.chosen import shown

MIN_RUNS = 200
WORK = 200_000  # simulated cycles and targets a forecast affords, about a second of work


class Quantiles(BaseModel):
    p10: float | None = None
    p50: float | None = None
    p90: float | None = None


class Remaining(BaseModel):
    cycles: Quantiles
    usd: Quantiles


class TargetRow(BaseModel):
    declaration: str
    difficulty: float
    attempts: int
    p_next: float
    file: str
    chapter: str
    model: str  # the model `p_next` is for
    holes: int


class ChapterRow(BaseModel):
    chapter: str
    targets: int
    mean: float  # the mean difficulty of its open targets
    hardest: float


class BandPoint(BaseModel):
    cycle: float  # cycles from now
    p10: float
    p50: float
    p90: float


class Forecast(BaseModel):
    """What `forecast --json` prints."""

    method: str
    model: str
    hard_model: str | None = None
    cycle: int  # the current cycle: the forecast counts from there
    basis: Literal["simulation", "naive", "none"] = "simulation"
    attempts: int  # the attempts the model was fitted on
    closes: int = 0  # the closes the records show, and the cycles they were counted over: the naive rate
    counted: int = 0
    aiming: float  # the share of recorded cycles that aimed at targets
    targets: list[TargetRow]
    remaining: Remaining
    chapters: list[ChapterRow] = Field(default_factory=list)
    band: list[BandPoint] = Field(default_factory=list)  # the burn-down's: sorries and admits left
    capped: int = 0  # simulated runs that never finished
    runs: int = 0
    cost: Literal["history", "prices"] | None = None  # where `remaining.usd` comes from
    per_cycle: tuple[float, float] | None = None  # a cycle's cost estimated from the prices: (low, high)
    warnings: list[str] = Field(default_factory=list)


def forecast(est: Estimate, settings: DifficultyConfig, spend: Spend | None, left_usd: float | None = None,
             cycle: int = 0) -> Forecast:
    """`est`'s open targets simulated to the last close (the naive forecast before any attempt), counted from
    `cycle` (the current one; the last recorded one when later); a warning when the median spend left exceeds
    `left_usd`, what the total budget has left."""
    a = est.attempts
    attempts = sum(len(t) for t in a.own.values())
    doc = Forecast(method=est.method, model=est.model, hard_model=est.hard_model, cycle=max(cycle, a.last),
                   attempts=attempts, closes=a.closes, counted=a.counted,
                   aiming=round((a.aiming + 1) / (a.kept + 2), 3),
                   targets=[TargetRow(declaration=t.declaration, difficulty=round(t.difficulty, 4),
                                      attempts=t.attempts, p_next=round(t.p_next, 4), file=t.file,
                                      chapter=t.chapter, model=t.model, holes=t.holes) for t in est.targets],
                   remaining=Remaining(cycles=Quantiles(), usd=Quantiles()), chapters=chapters(est))
    if not est.open or (not attempts and not a.closes):
        doc.basis = "none"
        return doc
    if not attempts:
        doc.basis = "naive"
        runs = max(settings.runs, 1)
        holes = sum(t.holes for t in est.targets)  # the rate's unit: a sorry count's hole, a declaration's one
        _simulated(doc, naive(holes, a.closes, a.counted, runs, settings.seed), runs)
        c = doc.remaining.cycles
        assert c.p10 is not None and c.p90 is not None
        point = round(holes * a.counted / a.closes, 1)
        doc.remaining.cycles = Quantiles(p10=min(c.p10, point), p50=point, p90=max(c.p90, point))
        if spend is not None:
            mean = sum(cost for cost, _ in spend.samples) / len(spend.samples)
            doc.remaining.usd = scaled(doc.remaining.cycles, mean, mean)
            doc.cost = "history"
    else:
        runs = affordable(est, settings.runs)
        out = simulate(_opened(est), est.chances, aiming=a.aiming, kept=a.kept, sizes=a.sizes, spend=spend,
                       runs=runs, seed=settings.seed)
        _simulated(doc, out, runs)
    return _over(doc, left_usd)


def _over(doc: Forecast, left_usd: float | None) -> Forecast:
    """`doc`, warning when its median cost left exceeds `left_usd`."""
    usd = doc.remaining.usd
    if left_usd is not None and usd.p50 is not None and usd.p50 > left_usd:
        doc.warnings.append(f"the median cost left to close every open target, ${usd.p50:,.2f}, exceeds what "
                            f"[budget] total_usd has left, ${left_usd:,.2f}")
    return doc


def _opened(est: Estimate) -> list[Open]:
    index = {t.declaration: i for i, t in enumerate(est.targets)}
    uses = est.after()
    return [Open(t.declaration, t.holes, tuple(index[a] for a in uses.get(t.declaration, ()) if a in index), t.hard,
                 t.file) for t in est.targets]


def _simulated(doc: Forecast, out: Outlook, runs: int) -> None:
    doc.remaining.cycles = Quantiles(**{f"p{q}": round(quantile(out.cycles, q / 100), 1) for q in (10, 50, 90)})
    if out.usd:
        doc.remaining.usd = Quantiles(**{f"p{q}": round(quantile(out.usd, q / 100), 2) for q in (10, 50, 90)})
        doc.cost = "history"
    doc.band = [BandPoint(cycle=round(c, 1), p10=lo, p50=mid, p90=hi) for c, lo, mid, hi in band(out)]
    doc.capped, doc.runs = out.capped, runs
    if out.capped:
        doc.warnings.append(f"{out.capped} of {runs} simulated runs never closed every target (a target "
                            "nearly hopeless for the Worker's model): the figures leave them at their cap")


def naive(holes: int, closes: int, cycles: int, runs: int, seed: int) -> Outlook:
    """`runs` finishes of `holes` open holes closed one at a time by a Poisson process whose rate is known only as
    `closes` in `cycles`: each run draws the rate from its Gamma posterior, then the waits between closes. The time
    to n closes is then n/k·N·F(2n, 2k) in law: a band as wide as k closes allow."""
    rng = random.Random(seed)
    out = Outlook()
    for _ in range(runs):
        rate = rng.gammavariate(closes, 1.0) / cycles
        at, path = 0.0, [(0, holes)]
        for left in range(holes - 1, -1, -1):
            at += rng.expovariate(rate)
            path.append((math.ceil(at), left))  # a close lands in a whole cycle
        out.cycles.append(at)
        out.paths.append(path)
    return out


def scaled(cycles: Quantiles, low: float, high: float) -> Quantiles:
    """Dollars for `cycles` at `low` a cycle (P10), `high` (P90) and their middle (P50)."""
    if cycles.p10 is None or cycles.p50 is None or cycles.p90 is None:
        return Quantiles()
    return Quantiles(p10=round(cycles.p10 * low, 2), p50=round(cycles.p50 * (low + high) / 2, 2),
                     p90=round(cycles.p90 * high, 2))


def priced(doc: Forecast, per_cycle: tuple[float, float] | None, left_usd: float | None = None) -> Forecast:
    """`doc` with its dollars estimated from a cycle's cost at the prices, (low, high), where no recorded cycle's
    cost is known (a warning when their median exceeds `left_usd`)."""
    if doc.cost is not None or per_cycle is None or doc.remaining.cycles.p50 is None:
        return doc
    low, high = per_cycle
    return _over(doc.model_copy(update={"cost": "prices", "per_cycle": (round(low, 2), round(high, 2)),
                                        "remaining": Remaining(cycles=doc.remaining.cycles,
                                                               usd=scaled(doc.remaining.cycles, low, high)),
                                        "warnings": list(doc.warnings)}), left_usd)


def affordable(est: Estimate, runs: int) -> int:
    """The runs to simulate: `runs`, fewer (never under MIN_RUNS) when a run would take long — many open targets,
    or hard ones — so that all of them together simulate about WORK cycles and targets."""
    a = est.attempts
    sizes = a.sizes or [1]
    aim = (a.aiming + 1) / (a.kept + 2)
    cycles = sum(1 / max(t.p_next, 1e-3) for t in est.targets) / (sum(sizes) / len(sizes)) / aim
    return max(min(runs, MIN_RUNS), min(runs, int(WORK / (1 + cycles + len(est.targets)))))


def chapters(est: Estimate) -> list[ChapterRow]:
    """The open targets' difficulty by chapter, hardest chapter first."""
    by: dict[str, list[float]] = defaultdict(list)
    for t in est.targets:
        by[t.chapter or "(unknown)"].append(t.difficulty)
    rows = [ChapterRow(chapter=c, targets=len(v), mean=round(sum(v) / len(v), 4), hardest=round(max(v), 4))
            for c, v in by.items()]
    return sorted(rows, key=lambda r: (-r.mean, r.chapter))


def money(f: Forecast) -> str:
    u = f.remaining.usd
    if u.p50 is None or u.p90 is None:
        return "cost unknown (no recorded cycle has a cost and the prices name no Worker model)"
    if f.cost == "prices" and f.per_cycle is not None:
        low, high = f.per_cycle
        return (f"${u.p50:,.2f} (P50), ${u.p90:,.2f} (P90) at ${low:,.2f}–${high:,.2f} a cycle, estimated from the "
                "prices (no recorded cycle has a cost yet)")
    return f"${u.p50:,.2f} (P50), ${u.p90:,.2f} (P90)"


def basis(f: Forecast) -> str:
    if f.basis == "naive":
        holes = sum(t.holes for t in f.targets)
        return (f"the naive forecast: {holes} hole{'s' if holes != 1 else ''} open at the {f.closes} closes of "
                f"{f.counted} cycles recorded, as no record names what its cycle aimed at yet")
    return f"from {f.runs} simulated runs"


def line(f: Forecast) -> str:
    """The forecast in one line, for `status`."""
    if not f.targets:
        return "no open target"
    c = f.remaining.cycles
    count = f"{len(f.targets)} open target{'s' if len(f.targets) != 1 else ''}"
    if c.p50 is None or c.p90 is None:
        return f"{count}; no forecast until a cycle closes one (no close recorded)"
    hardest = f.targets[0]
    return (f"{count}: {c.p50:g}–{c.p90:g} cycles left (P50–P90, {'naive' if f.basis == 'naive' else 'simulated'})"
            f"; {money(f)}; hardest {shown(hardest.declaration, LONG)} in {shown(hardest.file, LONG)} "
            f"({hardest.difficulty:.2f}, {hardest.attempts} attempts)")


LONG = 1000  # a name shown whole, unless longer than any real one


def render(f: Forecast, rows: int = 30) -> str:
    """The forecast as `autoformalize forecast` prints it."""
    c = f.remaining.cycles
    lines = [f"Difficulty ({f.method}, fitted on {f.attempts} attempts, at cycle {f.cycle}); p_next is the chance "
             f"the next attempt closes it, by {f.model}" + (f" (or {f.hard_model} where marked *)" if f.hard_model
                                                              else "") + "."]
    if not f.targets:
        lines.append("No open target: nothing holds a sorry.")
    else:
        lines.append("  difficulty  attempts  p_next   declaration (file)")
        for t in f.targets[:rows]:  # a Worker chose the names: each shown whole, on one printable line
            mark = "*" if t.model != f.model else " "
            lines.append(f"  {t.difficulty:10.2f}  {t.attempts:8d}  {t.p_next:6.2f}{mark}  "
                         f"{shown(t.declaration, LONG)} ({shown(t.file, LONG)})")
        if len(f.targets) > rows:
            lines.append(f"  … and {len(f.targets) - rows} more (--json lists them all)")
        if c.p10 is None or c.p50 is None or c.p90 is None:
            lines.append(f"Left to close all {len(f.targets)}: no forecast yet — no recorded cycle closed a target, "
                         "so there is no rate to go by.")
        else:
            lines.append(f"Left to close all {len(f.targets)}: {c.p50:g} cycles (P50), {c.p10:g}–{c.p90:g} "
                         f"(P10–P90); {money(f)} — {basis(f)}, counting only the targets open now.")
    lines += [f"warning: {w}" for w in f.warnings]
    return "\n".join(lines)
