"""`autoformalize forecast`: each open target's difficulty, and the cycles and dollars left to close them all.

The document (`Forecast`, as `forecast --json` prints it, SPEC §8):

    {"targets": [{"declaration", "difficulty", "attempts", "p_next", …}, …],
     "remaining": {"cycles": {"p10", "p50", "p90"}, "usd": {"p10", "p50", "p90"}}, …}

`usd` holds nulls when no recorded cycle has a known cost. The simulation (`simulate`) is seeded: the same
history and tree give the same figures. It runs `[difficulty] runs` times, fewer (`affordable`) when the open
targets would take long to play out; `runs` in the document says how many. Only the targets open now are
counted: sorries the run will open later (stating new theorems sorry-first) are not foreseen.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, Field

from difficulty.config import DifficultyConfig
from difficulty.estimate import Estimate
from difficulty.simulate import Open, Spend, band, quantile, simulate
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
    cycle: int  # the last recorded cycle: the forecast counts from there
    attempts: int  # the attempts the model was fitted on
    aiming: float  # the share of recorded cycles that aimed at targets
    targets: list[TargetRow]
    remaining: Remaining
    chapters: list[ChapterRow] = Field(default_factory=list)
    band: list[BandPoint] = Field(default_factory=list)  # the burn-down's: sorries and admits left
    capped: int = 0  # simulated runs that never finished
    runs: int = 0
    warnings: list[str] = Field(default_factory=list)


def forecast(est: Estimate, settings: DifficultyConfig, spend: Spend | None, left_usd: float | None = None
             ) -> Forecast:
    """`est`'s open targets simulated to the last close; a warning when the median spend left exceeds
    `left_usd`, what the total budget has left."""
    index = {t.declaration: i for i, t in enumerate(est.targets)}
    uses = est.after()
    opened = [Open(t.declaration, t.holes, tuple(index[a] for a in uses.get(t.declaration, ()) if a in index), t.hard)
              for t in est.targets]
    a = est.attempts
    runs = affordable(est, settings.runs)
    out = simulate(opened, est.chances, aiming=a.aiming, kept=a.kept, sizes=a.sizes, spend=spend, runs=runs,
                   seed=settings.seed)
    cycles = Quantiles(**{f"p{q}": round(quantile(out.cycles, q / 100), 1) for q in (10, 50, 90)})
    usd = Quantiles(**{f"p{q}": round(quantile(out.usd, q / 100), 2) for q in (10, 50, 90)}) if out.usd else Quantiles()
    warnings = []
    if left_usd is not None and usd.p50 is not None and usd.p50 > left_usd:
        warnings.append(f"the median cost left to close every open target, ${usd.p50:,.2f}, exceeds what [budget] "
                        f"total_usd has left, ${left_usd:,.2f}")
    if out.capped:
        warnings.append(f"{out.capped} of {runs} simulated runs never closed every target (a target "
                        "nearly hopeless for the Worker's model): the figures leave them at their cap")
    return Forecast(
        method=est.method, model=est.model, hard_model=est.hard_model, cycle=a.last,
        attempts=sum(len(t) for t in a.own.values()), aiming=round((a.aiming + 1) / (a.kept + 2), 3),
        targets=[TargetRow(declaration=t.declaration, difficulty=round(t.difficulty, 4), attempts=t.attempts,
                           p_next=round(t.p_next, 4), file=t.file, chapter=t.chapter, model=t.model, holes=t.holes)
                 for t in est.targets],
        remaining=Remaining(cycles=cycles, usd=usd), chapters=chapters(est),
        band=[BandPoint(cycle=round(c, 1), p10=lo, p50=mid, p90=hi) for c, lo, mid, hi in band(out)],
        capped=out.capped, runs=runs, warnings=warnings)


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


def line(f: Forecast) -> str:
    """The forecast in one line, for `status`."""
    if not f.targets:
        return "no open target"
    c, u = f.remaining.cycles, f.remaining.usd
    money = f", ${u.p50:,.0f}–${u.p90:,.0f}" if u.p50 is not None and u.p90 is not None else ", cost unknown"
    hardest = f.targets[0]
    return (f"{len(f.targets)} open target{'s' if len(f.targets) != 1 else ''}: {c.p50:g}–{c.p90:g} cycles"
            f"{money} left (P50–P90); hardest {shown(hardest.declaration, 80)} ({hardest.difficulty:.2f}, "
            f"{hardest.attempts} attempts)")


def render(f: Forecast, rows: int = 30) -> str:
    """The forecast as `autoformalize forecast` prints it."""
    c, u = f.remaining.cycles, f.remaining.usd
    lines = [f"Difficulty ({f.method}, fitted on {f.attempts} attempts up to cycle {f.cycle}); p_next is the chance "
             f"the next attempt closes it, by {f.model}" + (f" (or {f.hard_model} where marked *)" if f.hard_model
                                                              else "") + "."]
    if not f.targets:
        lines.append("No open target: nothing holds a sorry.")
    else:
        names = [shown(t.declaration, 60) for t in f.targets[:rows]]  # a Worker chose them: one printable line each
        width = max(len("declaration"), *map(len, names))
        lines.append(f"  {'declaration':<{width}}  difficulty  attempts  p_next")
        for name, t in zip(names, f.targets, strict=False):
            mark = "*" if t.model != f.model else " "
            lines.append(f"  {name:<{width}}  {t.difficulty:10.2f}  {t.attempts:8d}  {t.p_next:6.2f}{mark}")
        if len(f.targets) > rows:
            lines.append(f"  … and {len(f.targets) - rows} more (--json lists them all)")
        lines.append(f"Left to close all {len(f.targets)}: {c.p50:g} cycles (P50), {c.p90:g} (P90)"
                     + (f"; ${u.p50:,.2f} (P50), ${u.p90:,.2f} (P90)" if u.p50 is not None and u.p90 is not None
                        else "; cost unknown (no recorded cycle has a price)")
                     + f" — from {f.runs} simulated runs, counting only the targets open now.")
    lines += [f"warning: {w}" for w in f.warnings]
    return "\n".join(lines)
