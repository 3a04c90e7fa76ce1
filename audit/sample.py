"""A stratified random sample of entities for a human to re-grade, reproducible from its seed.

Strata are (chapter, kind) pairs. The size is shared out in proportion to each stratum's population by
largest remainders (Hamilton's method; ties go to the stratum first in sorted order), so every stratum gets
the floor or the ceiling of its exact share and the total is exactly the size asked (everything when the size
is at least the population). Within a stratum, entities are ordered by id and drawn with one
`random.Random(seed)` walked over the strata in sorted order: the same entities, seed and size give the same
sample on any machine.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from audit.entities import Entity

NO_CHAPTER = "(no chapter)"
NO_KIND = "(no kind)"


@dataclass
class Sample:
    seed: int
    size: int
    population: dict[tuple[str, str], int]  # stratum → entities in it
    allocation: dict[tuple[str, str], int]  # stratum → entities drawn
    entities: list[Entity]  # by stratum, then id

    def to_json(self) -> dict[str, object]:
        """What a human needs to re-draw and re-grade: the seed, the strata and the ids drawn from each."""
        drawn: dict[tuple[str, str], list[str]] = {}
        for e in self.entities:
            drawn.setdefault(stratum(e), []).append(e.id)
        return {"seed": self.seed, "size": self.size,
                "strata": [{"chapter": c, "kind": k, "population": n, "drawn": self.allocation[(c, k)],
                            "ids": drawn.get((c, k), [])} for (c, k), n in self.population.items()]}


def stratum(entity: Entity) -> tuple[str, str]:
    chapter = entity.chapter or NO_CHAPTER
    return f"{entity.book}/{chapter}" if entity.book else chapter, entity.kind or NO_KIND


def stratified_sample(entities: Sequence[Entity], size: int, seed: int) -> Sample:
    """`size` entities drawn at random, in proportion, from every (chapter, kind) stratum."""
    if size < 0:
        raise ValueError(f"a sample size cannot be negative (got {size})")
    strata: dict[tuple[str, str], list[Entity]] = {}
    for e in sorted(entities, key=lambda e: e.id):
        strata.setdefault(stratum(e), []).append(e)
    strata = dict(sorted(strata.items()))
    allocation = allocate({k: len(v) for k, v in strata.items()}, size)
    rng = random.Random(seed)
    drawn = [e for key, members in strata.items() for e in sorted(rng.sample(members, allocation[key]),
                                                                      key=lambda e: e.id)]
    return Sample(seed, len(drawn), {k: len(v) for k, v in strata.items()}, allocation, drawn)


def allocate(population: dict[tuple[str, str], int], size: int) -> dict[tuple[str, str], int]:
    """Share `size` among strata in proportion to their populations (largest remainders)."""
    total = sum(population.values())
    if size >= total:
        return dict(population)
    out = {k: size * n // total for k, n in population.items()}  # integers: no rounding to argue about
    by_remainder = sorted(population, key=lambda k: (-(size * population[k] % total), k))
    for k in by_remainder[:size - sum(out.values())]:
        out[k] += 1
    return out
