"""The cycles and dollars left to close every open target, by simulating the rest of the run many times.

Each simulated run draws what is uncertain once — every open target's chance of closing at an attempt (from the
posterior), how often a cycle aims at open targets at all (`f`, from a Beta over the history's share of such
cycles) — and plays the loop forward:

- a cycle aims at open targets with chance `f`; else it does other work (states new theorems, mends the build)
  and costs all the same;
- an aiming cycle works a Scope, as the loop's do: the open targets of one file (that of a target drawn at random
  among those whose dependencies are closed), all of those whose dependencies are closed — what a strategy naming
  none of its Scope's holes aims at (`orchestrator.targets`). A target of no known file is worked as the
  records say: as many as a recorded aiming cycle took (drawn from them), at random among such targets. A target
  rests on the open targets its proof uses: closing it counts only once they are closed, so it waits for them;
- the targets one cycle works close together: its change lands or is rejected whole, so one draw u of the
  cycle's luck decides them all, each closing when u is under its chance — each still closes with its own
  chance, as the fit has it, but a good cycle closes every target it worked that a worse one would have, and a
  rejected one none (a file's holes stated together are mostly closed in one commit: `benchmarks/backtest.py`);
- a cycle costs what a recent recorded cycle cost (drawn from them), its Worker's part scaled by the hard
  model's price when it works a target that model serves.

A stretch where every aiming cycle works the same targets is jumped over in one step (the cycles until one of them
closes are geometric in the largest chance), so a nearly hopeless target costs no time to simulate. The answers
are the runs' quantiles: cycles smoothed over each whole cycle (a run finishing at cycle t stands for the
interval around t), so P10–P90 holds the true finish about 80% of the time, as the tests check. A run that
reaches `CAP` cycles stops there.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

CAP = 1_000_000  # cycles a simulated run may take
EXACT = 200  # cycles whose costs are drawn one by one; a longer stretch's sum is drawn from its normal limit


@dataclass(frozen=True)
class Open:
    name: str
    holes: int  # sorries and admits it holds: what closing it takes off the burn-down
    after: tuple[int, ...] = ()  # the open targets (indices) it rests on
    hard: bool = False  # worked by `[agents.worker] hard_model`
    file: str = ""  # its file, the Scope a cycle works it in; "" when not known


@dataclass(frozen=True)
class Spend:
    samples: Sequence[tuple[float, float]]  # recent cycles: (what it cost, its Worker's part)
    hard_ratio: float = 1.0  # the hard model's price beside the Worker's usual one


@dataclass
class Outlook:
    cycles: list[float] = field(default_factory=list)  # each run's cycles to the last close, smoothed
    usd: list[float] | None = None  # each run's spend until then; None when no cycle's cost is known
    paths: list[list[tuple[int, int]]] = field(default_factory=list)  # each run's (cycle, holes left) steps
    capped: int = 0  # runs that reached CAP


def quantile(values: Sequence[float], q: float) -> float:
    """The `q` quantile, linearly interpolated between order statistics."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    at = q * (len(ordered) - 1)
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def acyclic(targets: Sequence[Open]) -> list[tuple[int, ...]]:
    """Each target's dependencies with those closing a cycle among them dropped (Lean forbids such cycles, but the
    text may show one): Kahn's order, and where it sticks, the stuck target with the lowest name loses its own."""
    n = len(targets)
    after = [set(t.after) - {i} for i, t in enumerate(targets)]
    done: set[int] = set()
    while len(done) < n:
        ready = [i for i in range(n) if i not in done and after[i] <= done]
        if not ready:
            stuck = min((i for i in range(n) if i not in done), key=lambda i: targets[i].name)
            after[stuck] &= done
            continue
        done.update(ready)
    return [tuple(sorted(a)) for a in after]


def _geometric(rng: random.Random, p: float) -> int:
    """Trials until the first success, each succeeding with `p`."""
    if p >= 1.0:
        return 1
    if p <= 0.0:
        return CAP
    u = 1.0 - rng.random()  # in (0, 1]
    return min(CAP, 1 + int(math.log(u) / math.log1p(-p)))


def _idle(rng: random.Random, f: float, aiming: int) -> int:
    """Cycles doing other work before `aiming` aiming cycles: negative binomial, each cycle aiming with `f`."""
    if f >= 1.0:
        return 0
    if aiming <= EXACT:
        scale = 1.0 / math.log1p(-f)
        return sum(int(math.log(1.0 - rng.random()) * scale) for _ in range(aiming))
    mean, var = aiming * (1 - f) / f, aiming * (1 - f) / (f * f)
    return max(0, round(rng.gauss(mean, math.sqrt(var))))


def _spent(rng: random.Random, values: Sequence[float], cycles: int) -> float:
    """What `cycles` cycles cost, each like one of `values` (the sum of that many draws, or its normal limit)."""
    if cycles <= EXACT:
        return sum(rng.choices(values, k=cycles))
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return max(0.0, rng.gauss(mean * cycles, math.sqrt(var * cycles)))


def simulate(targets: Sequence[Open], chances: Callable[[random.Random], Sequence[float]], *, aiming: int,
             kept: int, sizes: Sequence[int], spend: Spend | None, runs: int, seed: int) -> Outlook:
    """`runs` simulated finishes. `chances` draws each target's chance of closing at an attempt for one run;
    `aiming` of `kept` recorded cycles aimed at targets; `sizes`: how many targets each such cycle took (what a
    cycle takes of the targets of no known file)."""
    rng = random.Random(seed)
    deps = acyclic(targets)
    users: list[list[int]] = [[] for _ in targets]
    for i, after in enumerate(deps):
        for j in after:
            users[j].append(i)
    counted = Counter(sizes or [1])
    kinds = sorted(counted)
    fewest = kinds[0]
    files = {t.file for t in targets if t.file}
    scope = [t.file or None for t in targets]  # None: no known file, worked as the records' sizes say
    hardness = [int(t.hard) for t in targets]
    weight = [t.holes for t in targets]
    plain = [c for c, _ in spend.samples] if spend is not None else []
    hard = [c + w * (spend.hard_ratio - 1) for c, w in spend.samples] if spend is not None else []
    out = Outlook(usd=[] if plain else None)
    uniform, log = rng.random, math.log
    for _ in range(runs):
        p = chances(rng)
        f = rng.betavariate(aiming + 1, kept - aiming + 1)
        idle = 1.0 / math.log1p(-f) if f < 1.0 else 0.0  # a geometric draw of idle cycles is log(u) times this
        # How many targets a cycle takes, as the recorded ones did: their shares drawn too (a Bayesian
        # bootstrap), a few dozen records saying them only roughly.
        shares = [rng.gammavariate(counted[k], 1.0) for k in kinds]
        bounds = list(itertools.accumulate(shares))
        whole = bounds[-1]
        blocked = [len(a) for a in deps]
        ready = [i for i, b in enumerate(blocked) if b == 0]
        by_file: dict[str | None, list[int]] = {s: [] for s in (*files, None)}  # the ready targets, by Scope
        for i in ready:
            by_file[scope[i]].append(i)
        left, holes, cycle = len(targets), sum(weight), 0
        by_hard = [0, 0]  # aiming cycles the usual model worked, and the hard one
        path = [(0, holes)]
        while left and cycle < CAP:
            count = len(ready)
            loose = by_file[None]
            one = scope[ready[0]]
            if len(by_file[one]) == count and (one is not None or count <= fewest):
                # every aiming cycle works them all: jump to the first whose luck closes one
                worked = list(ready)
                best = max(p[i] for i in worked)
                span = _geometric(rng, best)
                luck = uniform() * best  # the closing cycle's luck: under the best chance
                cycle += _idle(rng, f, span) + span
                by_hard[max(hardness[i] for i in worked)] += span
            else:
                first = ready[int(uniform() * count)]
                if scope[first] is not None:
                    worked = list(by_file[scope[first]])
                else:
                    take = kinds[bisect.bisect_left(bounds, uniform() * whole)] if len(kinds) > 1 else fewest
                    worked = [first] if take == 1 else [first, *rng.sample([i for i in loose if i != first],
                                                                           min(take, len(loose)) - 1)]
                luck = uniform()
                cycle += 1 + (int(log(1.0 - uniform()) * idle) if idle else 0)
                by_hard[max(hardness[i] for i in worked)] += 1
            closed = False
            for i in worked:
                if luck >= p[i]:
                    continue
                closed = True
                ready.remove(i)
                by_file[scope[i]].remove(i)
                left -= 1
                holes -= weight[i]
                for user in users[i]:
                    blocked[user] -= 1
                    if blocked[user] == 0:
                        ready.append(user)
                        by_file[scope[user]].append(user)
            if closed:
                path.append((cycle, holes))
        if left:
            out.capped += 1
        out.cycles.append(max(0.0, cycle + uniform() - 0.5) if targets else 0.0)
        if out.usd is not None:
            usual = cycle - by_hard[1]  # the idle cycles too: the hard model works only what it aims at
            out.usd.append(_spent(rng, plain, usual) + (_spent(rng, hard, by_hard[1]) if by_hard[1] else 0.0))
        out.paths.append(path)
    return out


def band(outlook: Outlook, points: int = 40) -> list[tuple[float, float, float, float]]:
    """The burn-down's forecast: at `points` cycles from now to the runs' P90 finish, the P10, P50 and P90 of the
    holes left — (cycles from now, P10, P50, P90)."""
    if not outlook.paths:
        return []
    end = max(1.0, quantile(outlook.cycles, 0.9))
    at = [end * step / points for step in range(points + 1)]
    left: list[list[float]] = [[] for _ in at]
    for path in outlook.paths:  # each path's steps walked once, beside the points
        k, holes = 0, path[0][1]
        for j, x in enumerate(at):
            while k < len(path) and path[k][0] <= x:
                holes = path[k][1]
                k += 1
            left[j].append(float(holes))
    return [(x, quantile(v, 0.1), quantile(v, 0.5), quantile(v, 0.9)) for x, v in zip(at, left, strict=True)]
