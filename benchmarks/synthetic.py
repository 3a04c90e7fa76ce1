"""Synthetic runs with known difficulties, for the difficulty model's tests and benchmark.

A `Book` is a Lean tree of theorems `Book.tN` in chapter folders, some proofs using earlier ones (`have := tJ`),
each holding a `sorry` while open and `trivial` once closed: its census is what the model reads. `Truth` holds
what the model estimates — each target's difficulty, each model's ability, how often a cycle aims at targets
— and `Run.step` runs the loop as the model assumes it runs: a cycle aims with chance `aim`, at a Scope (the
file of an open target drawn at random among those whose dependencies are closed), takes all its open targets
whose dependencies are closed, and closes each with chance σ(θ_m − b_i), all on one draw of the cycle's luck (its
change lands or not whole: each closes when the draw is under its chance), writing the records a real cycle
writes (`targets`, `closed`, the Worker's model, a cost).
`prior_truth` draws a truth from the model's own prior (simulation-based calibration: averaged over such
worlds, a calibrated forecast's P10–P90 band holds the true finish 80% of the time).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from difficulty.irt import SIGMA_B, SIGMA_THETA, TAU, sigmoid
from difficulty.priors import describe
from gates.census import Census, census
from gates.tree import MemTree
from state.history import HistoryRecord, Outcome

ROOT = "Book"


@dataclass(frozen=True)
class Book:
    chapter: list[int]  # each target's chapter
    deps: list[list[int]]  # the earlier targets each one's proof uses
    chapters: int

    @property
    def size(self) -> int:
        return len(self.chapter)

    def name(self, i: int) -> str:
        return f"{ROOT}.t{i}"

    def tree(self, open_: set[int]) -> Census:
        """The census of the book with `open_` holding a sorry and the rest proved."""
        files: dict[str, list[str]] = {}
        for i, c in enumerate(self.chapter):
            uses = "".join(f"  have := t{j}\n" for j in self.deps[i])
            # Statements of a few lengths, so the size groups are more than one.
            statement = "True" if i % 3 else "∀ n : Nat, n + 0 = n ∧ True"
            proof = "sorry" if i in open_ else ("trivial" if i % 3 else "fun n => ⟨rfl, trivial⟩")
            files.setdefault(f"{ROOT}/C{c}/A.lean", []).append(f"theorem t{i} : {statement} := by\n{uses}  "
                                                                 f"{'exact ' if proof != 'sorry' else ''}{proof}\n")
        return census(MemTree({path: ("namespace Book\n\n" + "\n".join(body) + "\nend Book\n").encode()
                               for path, body in files.items()}), [ROOT])


def book(rng: random.Random, size: int, chapters: int, linked: float = 0.15) -> Book:
    return Book([rng.randrange(chapters) for _ in range(size)],
                [[j for j in range(i) if rng.random() < linked] for i in range(size)], chapters)


@dataclass
class Truth:
    difficulty: list[float]
    ability: dict[str, float]
    aim: float  # the chance a cycle aims at targets
    cost: tuple[float, float] = (5.0, 15.0)  # a cycle's cost, uniform between these


def prior_truth(rng: random.Random, b: Book, models: Sequence[str] = ("m",)) -> Truth:
    """A truth drawn from the model's own prior: group means, then each target beside its groups' weighted mean,
    each model's ability, and the share of aiming cycles (uniform)."""
    known = describe(b.tree(set(range(b.size))), [ROOT], [b.name(i) for i in range(b.size)])
    means: dict[str, float] = {}
    difficulty = []
    for i in range(b.size):
        groups = known[b.name(i)].groups
        for g, _ in groups:
            means.setdefault(g, rng.gauss(0.0, TAU))
        weight = sum(w for _, w in groups)
        difficulty.append(sum(w * means[g] for g, w in groups) / weight + rng.gauss(0.0, SIGMA_B))
    return Truth(difficulty, {m: rng.gauss(0.0, SIGMA_THETA) for m in models}, rng.betavariate(1, 1))


@dataclass
class Run:
    book: Book
    truth: Truth
    rng: random.Random
    open: set[int] = field(default_factory=set)
    cycle: int = 0
    records: list[HistoryRecord] = field(default_factory=list)
    attempts: int = 0

    def __post_init__(self) -> None:
        self.open = set(range(self.book.size))

    def step(self, model: str = "m", record: bool = True) -> None:
        """One cycle of the loop."""
        self.cycle += 1
        rng, t = self.rng, self.truth
        cost = rng.uniform(*t.cost)
        picked: list[int] = []
        closed: list[int] = []
        if rng.random() < t.aim and self.open:
            ready = [i for i in sorted(self.open) if not any(j in self.open for j in self.book.deps[i])]
            scope = self.book.chapter[rng.choice(ready)]  # a chapter is one file
            picked = [i for i in ready if self.book.chapter[i] == scope]
            luck = rng.random()
            closed = [i for i in picked if luck < sigmoid(t.ability[model] - t.difficulty[i])]
            self.open -= set(closed)
            self.attempts += len(picked)
        if record:
            self.records.append(HistoryRecord(
                cycle=self.cycle, outcome=Outcome.ACCEPTED if closed else Outcome.REJECTED,
                targets=[self.book.name(i) for i in picked], closed=[self.book.name(i) for i in closed],
                worker_model=model, cost_usd=cost, costs={"worker": round(0.8 * cost, 6)}))

    def finish(self, limit: int = 1_000_000) -> int:
        """Cycles until every target is closed (unrecorded): the true finish."""
        start = self.cycle
        while self.open and self.cycle - start < limit:
            self.step(record=False)
        return self.cycle - start
