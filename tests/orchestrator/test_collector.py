"""The collector between cycles: what lives is frozen and walked no more, what a cycle dropped is freed, and garbage
that was frozen is freed once the frozen objects have grown by GROWTH, however many cycles run."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from orchestrator import collector


class Node:
    """Garbage only a full collection frees: it refers to itself."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_what_lives_is_frozen_and_what_a_cycle_dropped_is_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    collector.settle()
    monkeypatch.setattr(collector, "_after_full", gc.get_freeze_count())
    kept, dropped = Node(), Node()
    gone = weakref.ref(dropped)
    del dropped
    assert not collector.settle()
    assert gone() is None
    assert not any(o is kept for o in gc.get_objects())  # frozen: no collection walks it


def test_garbage_that_was_frozen_is_freed_when_the_frozen_objects_have_grown(monkeypatch: pytest.MonkeyPatch
                                                                             ) -> None:
    monkeypatch.setattr(collector, "COUNT_EVERY", 1)
    collector.settle()
    floor = gc.get_freeze_count()
    monkeypatch.setattr(collector, "_after_full", floor)
    refs: list[weakref.ref[Node]] = []
    batch = max(1, floor // 20)  # each round leaves 5% more frozen garbage
    full = 0
    for _ in range(30):
        held = [Node() for _ in range(batch)]
        refs += [weakref.ref(n) for n in held]
        collector.settle()  # frozen while held …
        del held  # … and garbage now, which only a full collection frees
        full += collector.settle()
        assert gc.get_freeze_count() <= collector.GROWTH * collector._after_full + 3 * batch
    assert full >= 3
    assert sum(r() is not None for r in refs[:batch * 20]) == 0  # the early rounds' garbage is all freed


def test_the_frozen_objects_are_counted_every_count_every_settles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting them walks them all: between counts, garbage frozen stays, however much of it."""
    monkeypatch.setattr(collector, "_after_full", 0)
    monkeypatch.setattr(collector, "_settles", 0)
    fulls = []
    for _ in range(2 * collector.COUNT_EVERY):
        held = [Node() for _ in range(1000)]
        collector.settle()
        del held
        fulls.append(collector.settle())
    counted = [i for i in range(len(fulls)) if 2 * (i + 1) % collector.COUNT_EVERY == 0]  # two settles a round
    assert fulls[counted[0]]  # the first count: nothing was counted before
    assert {i for i, full in enumerate(fulls) if full} <= set(counted)
