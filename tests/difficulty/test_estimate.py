"""An estimate makes each open target's `Target` when asked: the targets no attempt reached share all but their
name, file and holes within their kind, so the Planner's candidates ranked from the first names of each kind are
those ranked from every target, on random trees and histories, by either method."""

from __future__ import annotations

import heapq
import random

import pytest

from difficulty.config import DifficultyConfig
from difficulty.estimate import Estimate, Target, estimate
from gates.census import Census, census
from gates.tree import MemTree
from state.history import HistoryRecord, Outcome

MODEL, HARD = "claude-sonnet-4-5", "claude-opus-4-6"


def book(rng: random.Random) -> Census:
    files = {}
    for c in range(rng.randint(1, 4)):
        decls = []
        for i in range(rng.randint(1, 25)):
            statement = " ∧ ".join(["True"] * rng.choice([1, 2, 30]))  # statements of several sizes: several kinds
            decls.append(f"theorem t{c}_{i} : {statement} := by\n  {rng.choice(['sorry', 'trivial'])}\n")
        files[f"Book/C{c}.lean"] = ("namespace Book\n\n" + "\n".join(decls) + "\nend Book\n").encode()
    return census(MemTree(files), ["Book"])


def history(rng: random.Random, tree: Census) -> list[HistoryRecord]:
    names = sorted(h.name for h in tree.holed())
    out = []
    for cycle in range(1, rng.randint(1, 12)):
        aimed = rng.sample(names, min(len(names), rng.randint(1, 2))) if names else []
        closed = aimed[:1] if rng.random() < 0.2 else []
        out.append(HistoryRecord(cycle=cycle, outcome=Outcome.ACCEPTED if closed else Outcome.NO_CHANGE,
                                 targets=aimed, closed=closed, worker_model=rng.choice([MODEL, HARD])))
    return out


def brief_key(t: Target) -> tuple[float, str]:
    return -t.p_next / (3.0 if t.hard else 1.0), t.declaration


def hardest(t: Target) -> tuple[float, str]:
    return -t.difficulty, t.declaration


@pytest.mark.parametrize("method", ["irt", "paper"])
@pytest.mark.parametrize("seed", range(12))
def test_targets_made_when_asked_answer_as_every_target_does(method: str, seed: int) -> None:
    rng = random.Random(seed)
    tree = book(rng)
    est: Estimate = estimate(history(rng, tree), tree, ["Book"], DifficultyConfig(method=method, hard_above=0.5),
                             MODEL, HARD if seed % 2 else None)
    every = est.targets
    assert sorted(t.declaration for t in every) == sorted(h.name for h in tree.holed())
    for names in est.alike.values():
        shared = {(t.difficulty, t.p_next, t.model, t.hard, t.attempts) for t in map(est.make, names)}
        assert len(shared) == 1, shared
    for n in (1, 2, 5, 15):
        for key in (brief_key, hardest):
            assert est.ranked(n, key) == heapq.nsmallest(n, every, key=key)
    assert est.tried() == [t for t in every if t.declaration in est.attempts.own]
    for t in every[:3]:
        assert est.target(t.declaration) == t
    assert est.target("Book.nothing") is None
