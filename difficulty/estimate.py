"""How hard each open target is: the difficulty model fitted on the run's history and the tree as it is.

`estimate` gathers the attempts (`attempts`), places every target the history or the tree names in its groups
(`priors`), and fits the configured method (`irt`, or the paper's formulas, `paper`). What it returns answers,
for each open target (a declaration holding a hole now): its difficulty in [0, 1], its attempts so far, which
model would work it next (the Worker's, or `[agents.worker] hard_model` above `[difficulty] hard_above`) and that
model's chance of closing it at the next attempt; and it draws those chances for the forecast's simulated runs.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from difficulty import paper, priors
from difficulty.attempts import Attempts, gather
from difficulty.config import DifficultyConfig
from difficulty.irt import Cell, Fit, Problem, fit, sigmoid
from difficulty.priors import Known, describe
from gates.census import Census
from state.history import HistoryRecord

EXACT_UP_TO = 150  # cells and targets up to which the forecast samples the exact posterior (Gibbs)
BURN_IN = 20  # sweeps the chain makes from the mode before its first draw


class Target(NamedTuple):  # a tuple: made for every open target each cycle
    declaration: str
    file: str
    chapter: str
    difficulty: float
    attempts: int  # its own, inherited ones aside
    p_next: float  # the chance that the next attempt, by `model`, closes it
    model: str
    holes: int
    hard: bool = False  # `model` is the hard model


@dataclass
class Estimate:
    """The fit, with each open target's `Target` made when asked: a cycle asks for a few (the Planner's candidates,
    the targets that keep failing, those aimed at), of tens of thousands in a large book."""

    method: str
    model: str  # the Worker's model
    hard_model: str | None
    make: Callable[[str], Target]  # an open target's `Target`
    open: frozenset[str]  # the open targets, by name
    attempts: Attempts
    alike: dict[Hashable, list[str]] = field(default_factory=dict)
    """The open targets no attempt reached, by what their `Target`s share (all but the name, the file and the
    holes: the fit gives them one difficulty); the others each have their own."""
    known: dict[str, Known] = field(default_factory=dict)
    tree: Census | None = None  # the tree it was fitted on
    _fit: Fit | None = None
    _index: dict[str, int] = field(default_factory=dict)  # target → its index in the fit
    _models: dict[str, int] = field(default_factory=dict)
    _chain: Iterator[tuple[list[float], list[float]]] | None = None
    _after: dict[str, tuple[str, ...]] | None = None
    _targets: list[Target] | None = None

    @property
    def targets(self) -> list[Target]:
        """Every open target, hardest first (made once, when first asked)."""
        if self._targets is None:
            self._targets = sorted(map(self.make, self.open), key=_hardest)
        return self._targets

    def tried(self) -> list[Target]:
        """The open targets with attempts of their own, hardest first."""
        return sorted((self.make(n) for n in self.open if n in self.attempts.own), key=_hardest)

    def ranked(self, n: int, key: Callable[[Target], Any]) -> list[Target]:
        """The first `n` open targets by `key`, which must order targets sharing all but their name by the name (as
        `(…, t.declaration)` does): of the targets no attempt reached, only the first `n` names of each kind can
        be among them."""
        alike = {name for names in self.alike.values() for name in names} if self.alike else set()
        own = [self.make(name) for name in self.open if name not in alike]
        first = [self.make(name) for names in self.alike.values() for name in heapq.nsmallest(n, names)]
        return heapq.nsmallest(n, own + first, key=key)

    def after(self) -> dict[str, tuple[str, ...]]:
        """The open targets each open target's proof uses (`priors.after`), read once when first asked."""
        if self._after is None:
            self._after = priors.after(self.tree) if self.tree is not None else {}
        return self._after

    def target(self, name: str) -> Target | None:
        return self.make(name) if name in self.open else None

    def chances(self, rng: random.Random) -> list[float]:
        """Each open target's chance of closing at an attempt (in `targets` order), for one simulated run: drawn from
        the posterior (irt) — by Gibbs sampling while the history is small enough (`EXACT_UP_TO`), where the
        posterior is least Gaussian, else from its Laplace approximation —, or as estimated (paper, which has
        none)."""
        if self._fit is None:
            return [t.p_next for t in self.targets]
        index = [self._index[t.declaration] for t in self.targets]
        if len(self._fit.problem.cells) + len(self._fit.b) <= EXACT_UP_TO:
            if self._chain is None:
                self._chain = self._fit.chain(rng)
                for _ in range(BURN_IN):
                    next(self._chain)
            theta, b = next(self._chain)
        else:
            theta, drawn = self._fit.draw(rng, index)
            b = [drawn.get(i, 0.0) for i in range(len(self._fit.b))]
        return [sigmoid(self._fit.a[i] * (theta[self._models[t.model]] - b[i]))
                for t, i in zip(self.targets, index, strict=True)]

    def difficulty(self, name: str) -> float | None:
        """The difficulty of any target the model knows, open or not."""
        if self._fit is not None and name in self._index:
            return self._fit.difficulty(self._index[name])
        found = self.target(name)
        return found.difficulty if found is not None else None

    def worker_model(self, aimed: Iterable[str]) -> str:
        """The model a cycle aiming at `aimed` is worked by: the hard model when one of them is hard."""
        return next((t.model for name in aimed if (t := self.target(name)) is not None and t.hard), self.model)


def estimate(records: Sequence[HistoryRecord], census: Census, roots: Iterable[str], settings: DifficultyConfig,
             model: str, hard_model: str | None = None) -> Estimate:
    """The configured method fitted on `records` and the tree `census` holds; `model` is the Worker's."""
    attempts = gather(records)
    cells = attempts.cells()
    holding = {h.name: h.count for h in census.holed()}
    names = sorted(set(cells) | set(holding))
    known = describe(census, roots, names)
    if settings.method == "paper":
        return _paper(attempts, cells, holding, known, census, settings, model, hard_model)
    models = sorted({*attempts.models, model, *([hard_model] if hard_model else [])})
    kinds = {k.groups for k in known.values()}
    groups = sorted({g for kind in kinds for g, _ in kind})
    m_index, g_index = {m: i for i, m in enumerate(models)}, {g: i for i, g in enumerate(groups)}
    t_index = {n: i for i, n in enumerate(names)}
    rows = {kind: [(g_index[g], w) for g, w in kind] for kind in kinds}  # one row per kind, shared by its targets
    none: list[tuple[int, float]] = []
    problem = Problem(names, models, groups,
                      [Cell(t_index[t], m_index[m], n, k) for t, by in cells.items() for m, (n, k) in by.items()],
                      [rows[k.groups] if (k := known.get(n)) is not None else none for n in names])
    result = fit(problem)
    alike: dict[Hashable, list[str]] = {}
    for name in holding:
        if name not in cells:  # no attempt reached it: the fit gives all of its kind one difficulty
            alike.setdefault(k.groups if (k := known.get(name)) is not None else None, []).append(name)

    def make(name: str) -> Target:
        i = t_index[name]
        difficulty = result.difficulty(i)
        hard = hard_model is not None and difficulty > settings.hard_above
        serving = hard_model if hard and hard_model else model
        return _target(name, known, holding, attempts, difficulty, result.p(i, m_index[serving]), serving, hard)

    return Estimate("irt", model, hard_model, make, frozenset(holding), attempts, alike, known, census, result, t_index,
                    m_index)


def _hardest(t: Target) -> tuple[float, str]:
    return -t.difficulty, t.declaration


def _target(name: str, known: dict[str, Known], holding: dict[str, int], attempts: Attempts, difficulty: float,
            p: float, model: str, hard: bool) -> Target:
    k = known.get(name)
    return Target(name, k.file if k else "", k.chapter if k else "", difficulty, len(attempts.own.get(name, ())), p,
                  model, holding[name], hard)


def _paper(attempts: Attempts, cells: dict[str, dict[str, list[float]]], holding: dict[str, int],
           known: dict[str, Known], census: Census, settings: DifficultyConfig, model: str, hard_model: str | None
           ) -> Estimate:
    bank, _ = paper.items(cells)
    theta: dict[str, float] = {}
    ordered = sorted((t.cycle, target, t.model, t.closed) for target, tries in attempts.own.items() for t in tries)
    for _, target, m, closed in ordered:  # each model's ability, its attempts replayed in record order
        theta[m] = paper.bounded(paper.update(theta.get(m, paper.THETA_0), bank[target], closed))
    unknown = paper.Item(0.5, 1.0)  # a target nobody attempted: the middle of the scale

    def make(name: str) -> Target:
        item = bank.get(name, unknown)
        hard = hard_model is not None and item.difficulty > settings.hard_above
        serving = hard_model if hard and hard_model else model
        p = sigmoid(item.discrimination * (theta.get(serving, paper.THETA_0) - item.difficulty))
        return _target(name, known, holding, attempts, item.difficulty, p, serving, hard)

    untried = [name for name in holding if name not in bank]
    return Estimate("paper", model, hard_model, make, frozenset(holding), attempts, {None: untried} if untried else {},
                    known, census)


def open_names(census: Census) -> Collection[str]:
    return {h.name for h in census.holed()}
