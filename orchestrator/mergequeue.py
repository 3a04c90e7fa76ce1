"""The merge queue: a round's items land one at a time, in the Planner's order, each in a commit of its own.

An item's change was gated against the round's base. Once an earlier item has landed the branch is no longer
that base, so the change is re-applied onto the branch as it is now and gated again there: the cheap gates on the
whole change, the build and kernel gates on what the combination with the landed items can change
(`gates.regate`, which says why the other verdicts carry over). A change that no longer
applies, or no longer passes, is rejected alone, with the reason; the other items land. Every item, landed or
not, commits its own record. The run lock is held throughout, and the round's journal holds every item not yet
landed, so a crash leaves only whole items on the branch and the next cycle records the rest as interrupted.
"""

from __future__ import annotations

import structlog

from gates import successors
from gates.base import GateResult
from gates.probe import RUNS
from orchestrator import cycle
from orchestrator.cyclestate import Cycle
from orchestrator.liveness import Beat
from state.history import Outcome

log = structlog.get_logger()
MERGE = "merge"


def land(items: list[Cycle], beat: Beat) -> None:
    """Land `items` in order: each re-applied onto the branch once an earlier one moved it, then committed."""
    start = items[0].git.head()
    landed: list[str] = []
    for c in items:
        assert c.item is not None
        head = c.git.head()
        if head != start:  # the gates once more, with the base's listing (build, listings, replay)
            beat.phase("merge", (2 * RUNS + 3 + successors.RUNS) * c.config.build.timeout_s, cycle=c.number)
            requeue(c, head, landed)
        beat.item(c.item.name, "landing")
        cycle.conclude(c, beat)
        passed = c.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE) and c.worker_commit is not None
        beat.item(c.item.name, "landed" if passed else str(c.outcome))
        if passed:
            landed.append(c.item.name)


def requeue(c: Cycle, head: str, landed: list[str]) -> None:
    """Make the branch's `head` the item's base: its change re-applied and re-gated there, its record's counts
    taken from there."""
    assert c.entry is not None
    passed = c.outcome in (Outcome.ACCEPTED, Outcome.NO_CHANGE) and c.worker_commit is not None
    after = f"item(s) {', '.join(repr(n) for n in landed)} landed" if landed else "the round's earlier records landed"
    applied = cycle.reapply(c, head, f"the change does not apply after {after}: it conflicts with what they changed",
                            incremental=True)
    c.entry = c.entry.model_copy(update={"base": head})
    c.journal.write(c.entry)
    if not passed:
        return
    if applied:
        detail = f"re-applied onto {head[:12]} after {after}; its gates passed again"
    elif c.error:
        detail = c.error
    else:
        failed = ", ".join(g.name for g in c.gates if not g.passed)
        detail = f"re-applied onto {head[:12]} after {after}, the change fails the gates: {failed}"
        c.error = detail
    c.gates.append(GateResult(MERGE, applied, detail))
    log.info("mergequeue.requeued", item=c.item.name if c.item else None, onto=head[:12], passed=applied)
