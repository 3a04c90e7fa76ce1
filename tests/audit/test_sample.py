"""The stratified sample: proportional by (chapter, kind), exact in size, the same for the same seed."""

from __future__ import annotations

import pytest

from audit.entities import Entity
from audit.sample import allocate, stratified_sample, stratum

SIZES = {("1", "theorem"): 20, ("1", "definition"): 7, ("2", "theorem"): 11, ("2", "lemma"): 3, ("3", "corollary"): 1,
         ("", "theorem"): 2}


def population() -> list[Entity]:
    out = []
    for (chapter, kind), n in SIZES.items():
        out += [Entity(id=f"{kind[:3]}:{chapter or 'x'}.{i}", kind=kind, name="", nl="", chapter=chapter)
                for i in range(n)]
    return out


def test_same_seed_same_sample_whatever_the_input_order() -> None:
    entities = population()
    first = stratified_sample(entities, 12, seed=7)
    again = stratified_sample(list(reversed(entities)), 12, seed=7)
    assert [e.id for e in first.entities] == [e.id for e in again.entities]
    assert first.to_json() == again.to_json()
    others = {tuple(e.id for e in stratified_sample(entities, 12, seed=s).entities) for s in range(8)}
    assert len(others) > 1  # the seed matters


def test_strata_get_their_proportional_share() -> None:
    entities = population()
    total = len(entities)
    for size in range(0, total + 1):
        sample = stratified_sample(entities, size, seed=3)
        assert sample.size == len(sample.entities) == size
        assert len({e.id for e in sample.entities}) == size
        counts: dict[tuple[str, str], int] = {}
        for e in sample.entities:
            counts[stratum(e)] = counts.get(stratum(e), 0) + 1
        for key, n in sample.population.items():
            share = size * n / total
            assert int(share) <= counts.get(key, 0) <= int(share) + 1, (size, key)
            assert counts.get(key, 0) == sample.allocation[key]
    assert stratified_sample(entities, total + 5, seed=1).size == total


def test_allocation_is_largest_remainders() -> None:
    # Shares of 12 out of 44: 5.45, 1.91, 3.0, 0.82, 0.27, 0.55; the floors give 9. The three seats left go to the
    # largest remainders: .91 (definitions), .82 (lemmas), then a tie at .55 between chapter 1's theorems and the
    # chapter-less ones, broken by sorted key ("(no chapter)" sorts first).
    population = {("1", "definition"): 7, ("1", "theorem"): 20, ("2", "lemma"): 3, ("2", "theorem"): 11,
                  ("3", "corollary"): 1, ("(no chapter)", "theorem"): 2}
    assert allocate(population, 12) == {("1", "definition"): 2, ("1", "theorem"): 5, ("2", "lemma"): 1,
                                        ("2", "theorem"): 3, ("3", "corollary"): 0, ("(no chapter)", "theorem"): 1}


def test_json_lists_every_stratum_and_what_was_drawn() -> None:
    sample = stratified_sample(population(), 6, seed=11)
    data = sample.to_json()
    assert data["seed"] == 11 and data["size"] == 6
    strata = data["strata"]
    assert isinstance(strata, list) and len(strata) == len(SIZES)
    assert sum(len(s["ids"]) for s in strata) == 6
    assert {s["chapter"] for s in strata} == {"1", "2", "3", "(no chapter)"}


def test_bad_sizes() -> None:
    assert stratified_sample([], 5, seed=0).entities == []
    assert stratified_sample(population(), 0, seed=0).entities == []
    with pytest.raises(ValueError, match="negative"):
        stratified_sample(population(), -1, seed=0)
