"""The difficulty model: the chance that an attempt by model m closes target i is σ(a_i·(θ_m − b_i)).

One ability θ_m per model, one difficulty b_i per target, fitted together by maximum a posteriori:

    θ_m ~ N(0, SIGMA_THETA²)                     the models' abilities, centred on 0
    γ_g ~ N(0, TAU²)                             each group's typical difficulty (a chapter, a statement size, …)
    b_i ~ Π_{g ∈ G(i)} N(γ_g, W_i·SIGMA_B²/w_g)   the target beside its groups, each of weight w_g (W_i their sum):
                                                 together one N(Σ w_g·γ_g / W_i, SIGMA_B²)
    a_i = 1, or log a_i ~ N(0, LOG_A_SD²) once MIN_MODELS models have attempted it (its discrimination)

Each group is an anchor of its own (a product of Gaussians, not a sum of effects), so the posterior's precision
matrix links only a target to the models that attempted it and to its groups, every link with a negative sign,
and no row holds more than its diagonal: a diagonally dominant Stieltjes matrix, whose inverse is non-negative with
each column's largest entry on the diagonal. So one more failed attempt on a target never lowers its b (for fixed
discriminations), and never raises its chance of closing by the model that failed (for any concave objective: the
added term only decreases in θ_m − b_i). A target's difficulty is therefore read from the fit at equal
discriminations (`rasch`, every a_i = 1, the fit before the discriminations are freed): freeing one, when a third
model attempts the target, moves b either way. Its chances of closing, and the forecast's draws, use the
discriminations. The tests check both on generated histories.

Newton's method solves it exactly: the targets' block of the Hessian is diagonal, so each step eliminates it and
solves the small block of abilities and group means (`_schur`, then `factor`, which skips the zeros between groups
no target shares). The same factorization gives the Laplace approximation of the posterior, from which `draw`
samples abilities and difficulties jointly for the forecast. Pure Python: a 10,000-cycle history in 400 files fits
in about a second (benchmarks/forecast.py).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

SIGMA_THETA = 1.5
TAU = 1.0
SIGMA_B = 1.0
LOG_A_SD = 0.5
MIN_MODELS = 3  # models that attempted a target before its discrimination is fitted
TOLERANCE = 1e-10  # the largest step at which Newton's method has converged
MAX_STEPS = 100
ROUNDS = 4  # fits alternating with the discriminations' update, at most
GRID = 161  # points the density of a difficulty's conditional is summed on
SPAN = 6.0  # prior deviations on each side of the mode that grid covers
QUANTILES = 512


@dataclass(frozen=True)
class Cell:
    """What one model did on one target: attempts and closes (a part's inherited ones weighted below 1)."""

    target: int
    model: int
    n: float
    k: float


@dataclass
class Problem:
    targets: list[str]
    models: list[str]
    groups: list[str]
    cells: list[Cell]
    member: list[list[tuple[int, float]]]  # each target's groups, with their weights (targets alike may share a row)


@dataclass
class Fit:
    problem: Problem
    theta: list[float]
    gamma: list[float]
    b: list[float]
    a: list[float]
    rasch: list[float] = field(default_factory=list)  # each b with every discrimination 1: what `difficulty` reads
    d: list[float] = field(default_factory=list)  # each b's precision given the small block (Hessian diagonal)
    links: list[list[tuple[int, float]]] = field(default_factory=list)  # each b's Hessian entries with the small block
    chol: Factor | None = None  # Cholesky factor of the small block's marginal precision
    anchors: list[list[tuple[int, float]]] = field(default_factory=list)  # each b's groups: (small index, precision)
    cells: list[list[Cell]] = field(default_factory=list)  # each target's cells
    _tables: dict[int, list[float]] = field(default_factory=dict)  # `quantiles`, as computed
    steps: int = 0

    def p(self, target: int, model: int) -> float:
        """The chance that an attempt by `model` closes `target`."""
        return sigmoid(self.a[target] * (self.theta[model] - self.b[target]))

    def difficulty(self, target: int) -> float:
        """σ(b) at equal discriminations: the chance that an attempt by a model of ability 0 (the centre of the
        models' prior) fails, were every target to discriminate alike; one more failure never lowers it."""
        return sigmoid(self.rasch[target])

    def draw(self, rng: random.Random, targets: list[int]) -> tuple[list[float], dict[int, float]]:
        """Abilities and the difficulties of `targets`, drawn together from the posterior's Laplace approximation for
        the small block (many targets determine it), each difficulty then from its conditional: its exact shape at
        the mode of the small block (`quantiles`: a Gaussian there would cut the long tail of a target that has
        only failed, which is where a run's finish lies), moved as the Laplace approximation moves its centre."""
        m = len(self.theta)
        assert self.chol is not None, "draw needs a fitted small block"
        y = self.chol.back([rng.gauss(0.0, 1.0) for _ in self.chol.order])  # covariance S^-1
        out: dict[int, float] = {}
        for i in targets:
            table = self.quantiles(i)
            at = min(max(rng.random() * len(table) - 0.5, 0.0), len(table) - 1.0)
            low = int(at)
            value = table[low] + (table[min(low + 1, len(table) - 1)] - table[low]) * (at - low)
            out[i] = value - sum(h * y[u] for u, h in self.links[i]) / self.d[i]
        return [self.theta[u] + y[u] for u in range(m)], out

    def quantiles(self, i: int) -> list[float]:
        """b_i's conditional at the mode of the small block, as its quantiles at the middles of QUANTILES equal
        slices (the density summed on a grid of GRID points over ±SPAN prior deviations around the mode); a draw
        interpolates between them, so only the outermost half slice on each side is cut."""
        if i in self._tables:
            return self._tables[i]
        density = self._density(i, self.theta + self.gamma)
        low, high = self.b[i] - SPAN * SIGMA_B, self.b[i] + SPAN * SIGMA_B
        grid = [low + (high - low) * k / (GRID - 1) for k in range(GRID)]
        logs = [density(v)[0] for v in grid]
        top = max(logs)
        mass = [math.exp(v - top) for v in logs]
        cumulative = [0.0]
        for k in range(1, GRID):
            cumulative.append(cumulative[-1] + (mass[k - 1] + mass[k]) / 2)
        total = cumulative[-1]
        table, k = [], 0
        for q in range(QUANTILES):
            want = total * (q + 0.5) / QUANTILES
            while k < GRID - 2 and cumulative[k + 1] < want:
                k += 1
            step = cumulative[k + 1] - cumulative[k]
            share = (want - cumulative[k]) / step if step > 0 else 0.0
            table.append(grid[k] + (grid[k + 1] - grid[k]) * min(1.0, max(0.0, share)))
        self._tables[i] = table
        return table

    def chain(self, rng: random.Random) -> Iterator[tuple[list[float], list[float]]]:
        """Draws of (abilities, difficulties) from the exact posterior, by Gibbs sampling from the mode: each
        ability given the difficulties (one variable, log-concave), each group mean given them (Gaussian), each
        difficulty given those (`_density`), then every ability, group mean and difficulty shifted together by a
        draw given the rest (only the Gaussian priors see that shift: the likelihood depends on θ − b alone, so
        without it the chain would crawl along that ridge). Discriminations stay as fitted."""
        m, g, n = len(self.theta), len(self.gamma), len(self.b)
        x, b, a = self.theta + self.gamma, list(self.b), self.a
        by_model: list[list[Cell]] = [[] for _ in range(m)]
        members: list[list[tuple[int, float]]] = [[] for _ in range(g)]
        for i in range(n):
            for c in self.cells[i]:
                by_model[c.model].append(c)
            for u, c_ in self.anchors[i]:
                members[u - m].append((i, c_))
        free = [i for i in range(n) if not self.anchors[i]]
        scale = [1 / math.sqrt(v) for v in self.d]
        while True:
            for mi in range(m):
                x[mi] = _conditional(rng, _ability([(b[c.target], c.n, c.k, a[c.target]) for c in by_model[mi]]),
                                     x[mi], SIGMA_THETA / 4)
            for gi, people in enumerate(members):
                precision = 1 / TAU ** 2 + sum(c for _, c in people)
                x[m + gi] = rng.gauss(sum(c * b[i] for i, c in people) / precision, 1 / math.sqrt(precision))
            for i in range(n):
                b[i] = _conditional(rng, self._density(i, x), b[i], scale[i])
            precision = m / SIGMA_THETA ** 2 + g / TAU ** 2 + len(free) / SIGMA_B ** 2
            mean = -(sum(x[:m]) / SIGMA_THETA ** 2 + sum(x[m:]) / TAU ** 2 + sum(b[i] for i in free) / SIGMA_B ** 2)
            shift = rng.gauss(mean / precision, 1 / math.sqrt(precision))
            x = [v + shift for v in x]
            b = [v + shift for v in b]
            yield x[:m], b

    def _density(self, i: int, x: list[float]) -> Callable[[float], tuple[float, float]]:
        """The log density of b_i given abilities and group means `x` (up to a constant), with its slope."""
        a = self.a[i]
        anchors = [(x[u], c) for u, c in self.anchors[i]] or [(0.0, 1 / SIGMA_B ** 2)]
        cells = [(x[c.model], c.n, c.k) for c in self.cells[i]]

        def density(b: float) -> tuple[float, float]:
            value = -sum(c * (b - mean) ** 2 for mean, c in anchors) / 2
            slope = -sum(c * (b - mean) for mean, c in anchors)
            for theta, n, k in cells:
                u = a * (theta - b)
                value += k * _log_sigmoid(u) + (n - k) * _log_sigmoid(-u)
                slope += a * (n * sigmoid(u) - k)
            return value, slope

        return density


def sigmoid(u: float) -> float:
    if u >= 0:
        return 1.0 / (1.0 + math.exp(-u))
    e = math.exp(u)
    return e / (1.0 + e)


def _log_sigmoid(u: float) -> float:
    return -math.log1p(math.exp(-u)) if u >= 0 else u - math.log1p(math.exp(u))


def fit(problem: Problem) -> Fit:
    """The posterior mode; discriminations fitted, alternately, for the targets MIN_MODELS models attempted."""
    n, m, g = len(problem.targets), len(problem.models), len(problem.groups)
    f = Fit(problem, [0.0] * m, [0.0] * g, [0.0] * n, [1.0] * n)
    models: dict[int, set[int]] = {}
    for c in problem.cells:
        if c.n > 0:
            models.setdefault(c.target, set()).add(c.model)
    free = [i for i, seen in models.items() if len(seen) >= MIN_MODELS]
    made: dict[int, list[tuple[int, float]]] = {}  # a row of `member` → its anchors, shared as the row is
    f.anchors = [made.get(id(groups)) or made.setdefault(id(groups), [(m + g_, c) for g_, c in _anchors(groups)])
                 for groups in problem.member]
    f.cells = [[] for _ in range(n)]
    for c in problem.cells:
        f.cells[c.target].append(c)
    _newton(f)
    f.rasch = list(f.b)
    for _ in range(ROUNDS if free else 0):  # the mode for the discriminations as they end: Newton's comes last
        moved = _discriminations(f, free)
        _newton(f)
        if moved < 1e-9:
            break
    return f


def _objective(m: int, a: list[float], x: list[float], b: list[float], anchors: list[list[tuple[int, float]]],
               cells: list[tuple[int, int, float, float]]) -> float:
    """Minus the log posterior (up to a constant) at abilities and group means `x` and difficulties `b` (of
    discriminations `a`; the first `m` of `x` abilities); `cells` as (target, model, attempts, closes)."""
    out = sum(t * t for t in x[:m]) / (2 * SIGMA_THETA ** 2) + sum(v * v for v in x[m:]) / (2 * TAU ** 2)
    for i, groups in enumerate(anchors):
        bi = b[i]
        if groups:
            out += sum(c * (bi - x[u]) ** 2 for u, c in groups) / 2
        else:
            out += bi * bi / (2 * SIGMA_B ** 2)
    log1p, exp = math.log1p, math.exp
    for i, mi, n, k in cells:
        u = a[i] * (x[mi] - b[i])
        # k·log σ(u) + (n − k)·log σ(−u) = k·u − n·log(1 + e^u), computed without overflow
        out -= k * u - n * (u + log1p(exp(-u)) if u > 0 else log1p(exp(u)))
    return out


def _newton(f: Fit) -> None:
    """Newton's method to the mode for the current discriminations (`_mode`), on the targets some model attempted
    and one stand-in for each kind of the others (`_kinds`); the others then read off the stand-ins."""
    m, n = len(f.theta), len(f.b)
    tried = [i for i in range(n) if f.cells[i]]
    idle = _kinds(f.anchors, f.cells)
    row = {i: r for r, i in enumerate(tried)}
    anchors = [f.anchors[i] for i in tried] + [[(u, c * len(alike)) for u, c in kind] for kind, alike in idle]
    b = [f.b[i] for i in tried] + [f.b[alike[0]] for _, alike in idle]
    a = [f.a[i] for i in tried] + [1.0] * len(idle)
    cells = [(row[c.target], c.model, c.n, c.k) for i in tried for c in f.cells[i]]
    x, b, d, links, f.chol, f.steps = _mode(m, f.theta + f.gamma, b, a, anchors, cells)
    f.theta, f.gamma = x[:m], x[m:]
    f.b = [0.0] * n
    shared: dict[int, tuple[float, list[tuple[int, float]]]] = {}  # an anchors row → its precision and links
    for groups in f.anchors:
        if id(groups) not in shared:
            shared[id(groups)] = (sum(c for _, c in groups) if groups else 1 / SIGMA_B ** 2,
                                  [(u, -c) for u, c in groups])
    f.d = [shared[id(groups)][0] for groups in f.anchors]
    f.links = [shared[id(groups)][1] for groups in f.anchors]
    for r, i in enumerate(tried):
        f.b[i], f.d[i], f.links[i] = b[r], d[r], links[r]
    for r, (_, alike) in enumerate(idle, start=len(tried)):
        for i in alike:
            f.b[i] = b[r]


def _kinds(anchors: list[list[tuple[int, float]]], cells: list[list[Cell]]
           ) -> list[tuple[tuple[tuple[int, float], ...], list[int]]]:
    """The targets no model attempted, by their anchors (a target without groups aside: its mode is 0, and it moves
    nothing else). Exactly: the N targets of a kind have one mode, the weighted mean of their groups' (the terms of b
    are their anchors' alone), so one stand-in whose anchors are N times as precise has the same objective along it,
    the same mode, and takes the same share off the small block when eliminated (N·(C − ccᵀ/Σc) either way) — the
    fit's cost follows the attempts and the groups, not the book's size."""
    kinds: dict[tuple[tuple[int, float], ...], list[int]] = {}
    seen: dict[int, tuple[tuple[int, float], ...]] = {}  # a shared row, hashed once
    for i, groups in enumerate(anchors):
        if groups and not cells[i]:
            kind = seen.get(id(groups)) or seen.setdefault(id(groups), tuple(groups))
            kinds.setdefault(kind, []).append(i)
    return list(kinds.items())


def _mode(m: int, x: list[float], b: list[float], a: list[float], anchors: list[list[tuple[int, float]]],
          cells: list[tuple[int, int, float, float]]
          ) -> tuple[list[float], list[float], list[float], list[list[tuple[int, float]]], Factor, int]:
    """Newton's method from abilities and group means `x` (the first `m` abilities) and difficulties `b`, each step
    through the Schur complement of the targets' diagonal block; backtracking keeps every step a descent. The mode,
    with each b's Hessian diagonal and its links to the small block there, the small block's Cholesky factor, and
    the steps taken."""
    small, n = len(x), len(b)
    # The anchors' part of the Hessian does not move: each target's precision from its groups, and its links to them.
    base_d = [sum(c for _, c in groups) if groups else 1 / SIGMA_B ** 2 for groups in anchors]
    base_links = [[(u, -c) for u, c in groups] for groups in anchors]
    base_hx = [1.0 / SIGMA_THETA ** 2] * m + [1.0 / TAU ** 2] * (small - m)
    for groups in anchors:
        for u, c in groups:
            base_hx[u] += c
    # Targets anchored alike (the same groups, weights and all) share their part of the Schur complement.
    kinds: dict[tuple[tuple[int, float], ...], int] = {}
    kind_of = [kinds.setdefault(tuple(row), len(kinds)) for row in base_links]
    shared = list(kinds)
    value = _objective(m, a, x, b, anchors, cells)
    exp = math.exp
    worked: list[list[tuple[int, float]]] = []
    for step in range(MAX_STEPS + 1):
        gx = [x[u] / SIGMA_THETA ** 2 for u in range(m)] + [x[u] / TAU ** 2 for u in range(m, small)]
        hx = list(base_hx)
        gb = [0.0] * n
        d = list(base_d)
        worked = [[] for _ in range(n)]  # each target's links to the models it was tried by
        for i, groups in enumerate(anchors):
            bi = b[i]
            if not groups:
                gb[i] = bi / SIGMA_B ** 2
            for u, c in groups:
                diff = c * (bi - x[u])
                gb[i] += diff
                gx[u] -= diff
        for i, mi, cn, ck in cells:
            ai = a[i]
            z = ai * (x[mi] - b[i])
            if z >= 0:  # σ(z), inline: called for every cell at every step
                pr = 1.0 / (1.0 + exp(-z))
            else:
                e = exp(z)
                pr = e / (1.0 + e)
            r = ai * (ck - cn * pr)
            w = ai * ai * cn * pr * (1.0 - pr)
            gx[mi] -= r
            gb[i] += r
            hx[mi] += w
            d[i] += w
            worked[i].append((mi, -w))
        s, rhs = _schur(hx, gx, gb, d, shared, kind_of, worked)
        chol = factor(s)
        if step == MAX_STEPS:
            break
        dx = chol.solve(rhs)
        pulled = [sum(h * dx[u] for u, h in row) for row in shared]  # each kind's links to its groups, moved
        db = [(-gb[i] - pulled[kind_of[i]] - sum(h * dx[u] for u, h in worked[i]) if worked[i] else
               -gb[i] - pulled[kind_of[i]]) / d[i] for i in range(n)]
        largest = max((abs(v) for v in (*dx, *db)), default=0.0)
        if largest < TOLERANCE:
            break
        slope = sum(gx[u] * dx[u] for u in range(small)) + sum(gb[i] * db[i] for i in range(n))
        t = 1.0
        while True:
            nx = [x[u] + t * dx[u] for u in range(small)]
            nb = [b[i] + t * db[i] for i in range(n)]
            trial = _objective(m, a, nx, nb, anchors, cells)
            if trial <= value + 1e-4 * t * slope or t < 1e-8:
                break
            t /= 2
        x, b, value = nx, nb, trial
        if largest * t < TOLERANCE:
            break
    return x, b, d, [base_links[i] + worked[i] for i in range(n)], chol, step




def _anchors(groups: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Each group of a target with its anchor's precision: the weights' shares of 1/SIGMA_B²."""
    total = sum(w for _, w in groups)
    return [(g, w / (total * SIGMA_B ** 2)) for g, w in groups]


def _ability(cells: list[tuple[float, float, float, float]]) -> Callable[[float], tuple[float, float]]:
    """The log density of one model's ability given the difficulties of what it attempted, with its slope:
    `cells` holds (difficulty, attempts, closes, discrimination)."""
    def density(theta: float) -> tuple[float, float]:
        value, slope = -theta * theta / (2 * SIGMA_THETA ** 2), -theta / SIGMA_THETA ** 2
        for b, n, k, a in cells:
            u = a * (theta - b)
            value += k * _log_sigmoid(u) + (n - k) * _log_sigmoid(-u)
            slope += a * (k - n * sigmoid(u))
        return value, slope

    return density


def _conditional(rng: random.Random, density: Callable[[float], tuple[float, float]], near: float, scale: float
                 ) -> float:
    """One draw from a log-concave density of one variable, by rejection under the hull of three tangents: at
    `near` (about its mode) and on each side of it, moved out until the density rises to the left one and falls
    to the right one. A tangent lies above a concave log density everywhere, so the hull envelopes it."""
    points = [near - 2 * scale, near, near + 2 * scale]
    values = [density(t) for t in points]
    for side, sign in ((0, 1.0), (2, -1.0)):
        step = 2 * scale
        while values[side][1] * sign <= 0 and step < 1e6:
            step *= 2
            points[side] = near - step if side == 0 else near + step
            values[side] = density(points[side])
    (l1, g1), (l2, g2), (l3, g3) = values
    t1, t2, t3 = points
    if g1 <= 0 or g3 >= 0:  # a density without tails we can bound: as near as it gets
        return near
    z12 = _meet(t1, l1, g1, t2, l2, g2)
    z23 = _meet(t2, l2, g2, t3, l3, g3)
    top = max(l1 + g1 * (z12 - t1), l2 + g2 * (z12 - t2), l2 + g2 * (z23 - t2), l3 + g3 * (z23 - t3))
    width = z23 - z12
    masses = [math.exp(l1 + g1 * (z12 - t1) - top) / g1,
              math.exp(l2 + g2 * (z12 - t2) - top) * (width if abs(g2 * width) < 1e-9
                                                        else math.expm1(g2 * width) / g2),
              math.exp(l3 + g3 * (z23 - t3) - top) / -g3]
    total = sum(masses)
    for _ in range(100):
        pick = rng.random() * total
        if pick < masses[0]:
            b, t, lt, g = z12 - rng.expovariate(1.0) / g1, t1, l1, g1
        elif pick < masses[0] + masses[1]:
            u = rng.random()
            b = z12 + (u * width if abs(g2 * width) < 1e-9 else math.log1p(u * math.expm1(g2 * width)) / g2)
            t, lt, g = t2, l2, g2
        else:
            b, t, lt, g = z23 + rng.expovariate(1.0) / -g3, t3, l3, g3
        if math.log(1.0 - rng.random()) <= density(b)[0] - (lt + g * (b - t)):
            return b
    return near


def _meet(t1: float, l1: float, g1: float, t2: float, l2: float, g2: float) -> float:
    """Where the tangents at t1 and t2 cross (between them, for a concave function)."""
    if abs(g1 - g2) < 1e-12:
        return (t1 + t2) / 2
    z = (l2 - l1 - t2 * g2 + t1 * g1) / (g1 - g2)
    return min(max(z, t1), t2)


def _schur(hx: list[float], gx: list[float], gb: list[float], d: list[float],
           kinds: list[tuple[tuple[int, float], ...]], kind_of: list[int], worked: list[list[tuple[int, float]]]
           ) -> tuple[list[list[float]], list[float]]:
    """The small block's Hessian with the targets eliminated, and the right-hand side of its Newton system.

    Eliminating target i takes h_u·h_v/d_i off entry (u, v) for every pair of its links. Its links to its groups
    are those of its kind (`kinds[kind_of[i]]`, fixed), so their share is summed by kind — Σ 1/d_i, Σ g_i/d_i and,
    per model, Σ h_im/d_i — and spread once per kind; only the links to the models it was tried by (`worked`)
    are taken one target at a time."""
    size = len(hx)
    s = [[0.0] * size for _ in range(size)]
    for u in range(size):
        s[u][u] = hx[u]
    rhs = [-v for v in gx]
    inverse = [0.0] * len(kinds)
    pull = [0.0] * len(kinds)
    cross: list[dict[int, float]] = [{} for _ in kinds]
    for i, row in enumerate(worked):
        di = d[i]
        t = gb[i] / di
        k = kind_of[i]
        inverse[k] += 1.0 / di
        pull[k] += t
        if not row:
            continue
        mine = cross[k]
        for u, hu in row:
            rhs[u] += hu * t
            su = s[u]
            q = hu / di
            for v, hv in row:
                su[v] -= q * hv
            mine[u] = mine.get(u, 0.0) + q
    for k, shared in enumerate(kinds):
        for u, hu in shared:
            rhs[u] += hu * pull[k]
            su = s[u]
            for v, hv in shared:
                su[v] -= hu * hv * inverse[k]
            for v, q in cross[k].items():
                su[v] -= hu * q
                s[v][u] -= hu * q
    return s, rhs


@dataclass(frozen=True)
class Factor:
    """The Cholesky factor L·Lᵀ of a symmetric positive definite matrix whose rows are taken sparsest first.

    The small block is mostly group means, each linked to the models and to a few other groups only, and a few dense
    rows (the models, the statement sizes). Taken sparsest first, each row of the factor starts at its first nonzero
    and fills nothing to its left (an envelope), so a book of 400 chapter files costs a few dense rows, not 400³."""

    order: list[int]  # the factor's row i is the matrix's row order[i]
    first: list[int]  # the first column of each factor row that can be nonzero
    low: list[list[float]]  # row i: its columns first[i] … i

    def solve(self, rhs: list[float]) -> list[float]:
        """x with L·Lᵀ x = rhs, in the matrix's order."""
        n, order, first, low = len(self.order), self.order, self.first, self.low
        y = [rhs[u] for u in order]
        for i in range(n):
            fi, row = first[i], low[i]
            y[i] = (y[i] - sum(row[k - fi] * y[k] for k in range(fi, i))) / row[i - fi]
        return self._put(self._back(y))

    def back(self, z: list[float]) -> list[float]:
        """L⁻ᵀ z, in the matrix's order: for standard normal z, a draw with the matrix's inverse as covariance."""
        return self._put(self._back(list(z)))

    def _back(self, y: list[float]) -> list[float]:
        for i in range(len(y) - 1, -1, -1):  # by columns of Lᵀ: row i of L reaches back to first[i] only
            fi, row = self.first[i], self.low[i]
            y[i] /= row[i - fi]
            xi = y[i]
            for k in range(fi, i):
                y[k] -= row[k - fi] * xi
        return y

    def _put(self, y: list[float]) -> list[float]:
        x = [0.0] * len(y)
        for i, u in enumerate(self.order):
            x[u] = y[i]
        return x


def factor(s: list[list[float]]) -> Factor:
    """`s`'s Cholesky factor, its rows sparsest first."""
    n = len(s)
    order = sorted(range(n), key=lambda u: sum(1 for v in s[u] if v != 0.0))
    first: list[int] = []
    low: list[list[float]] = []
    for i, u in enumerate(order):
        su = s[u]
        fi = next((j for j in range(i) if su[order[j]] != 0.0), i)
        row = [0.0] * (i - fi + 1)
        for j in range(fi, i):
            fj, other = first[j], low[j]
            start = max(fi, fj)
            total = su[order[j]] - sum(row[k - fi] * other[k - fj] for k in range(start, j))
            row[j - fi] = total / other[j - fj]
        total = su[u] - sum(v * v for v in row[:i - fi])
        row[i - fi] = math.sqrt(max(total, 1e-300))
        first.append(fi)
        low.append(row)
    return Factor(order, first, low)


def _discriminations(f: Fit, free: list[int]) -> float:
    """Each of `free`'s log-discrimination to its mode given the abilities and difficulties; the largest change."""
    by_target: dict[int, list[Cell]] = {}
    for c in f.problem.cells:
        by_target.setdefault(c.target, []).append(c)
    moved = 0.0
    for i in free:
        alpha = math.log(f.a[i])
        for _ in range(30):
            a = math.exp(alpha)
            grad, curv = -alpha / LOG_A_SD ** 2, -1.0 / LOG_A_SD ** 2
            for c in by_target[i]:
                u = a * (f.theta[c.model] - f.b[i])
                pr = sigmoid(u)
                grad += (c.k - c.n * pr) * u
                curv += (c.k - c.n * pr) * u - c.n * pr * (1 - pr) * u * u
            step = -grad / curv if curv < 0 else grad * LOG_A_SD ** 2
            step = max(-1.0, min(1.0, step))
            alpha += step
            if abs(step) < 1e-9:
                break
        moved = max(moved, abs(math.exp(alpha) - f.a[i]))
        f.a[i] = math.exp(alpha)
    return moved
