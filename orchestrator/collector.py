"""Python's garbage collector over a loop that runs for weeks with millions of objects alive.

The kept file indexes and Lean's listings live from cycle to cycle: at a million lines they are millions of
objects, and each full collection walks every object it tracks, a second or so each time. So what lives through a
cycle's start is frozen (`gc.freeze`) and stays frozen: a collection walks only what was made since. A frozen
object freed by its count of references is freed as ever; one that becomes garbage in a cycle of references is
not, until the next full collection — which `settle` makes when the frozen objects have grown by `GROWTH` since
the last (counted every `COUNT_EVERY` cycles: counting them walks them all), so memory stays within that share of
what lives, and what `COUNT_EVERY` cycles drop, however many cycles run.
"""

from __future__ import annotations

import gc
import threading

GROWTH = 1.25  # the frozen objects' growth since the last full collection that brings the next one
COUNT_EVERY = 8  # settles between two counts of the frozen objects

_lock = threading.Lock()
_after_full = 0  # objects frozen right after the last full collection
_settles = 0


def settle() -> bool:
    """Before a cycle: free what the cycles before dropped — all of it, frozen or not, when the frozen objects have
    grown by GROWTH since the last full collection; else what was made since the last freeze — and freeze what
    lives. Whether it was a full collection."""
    global _after_full, _settles
    with _lock:
        _settles += 1
        full = _settles % COUNT_EVERY == 0 and gc.get_freeze_count() > GROWTH * _after_full
        if full:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
        if full:
            _after_full = gc.get_freeze_count()
        return full
