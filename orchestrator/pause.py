"""Rate limits and subscription caps pause the loop; they never count as a failed or stalled cycle.

A role's model call refused by a rate limit or a usage cap (`agents.model.RateLimited`, or a coding agent's session
ended with `Stop.LIMITED`) makes its cycle record `paused_until`: the reset time the answer gave, or, when it gave
none, `[loop] pause_s` doubled for each paused cycle in a row before it (at most `MAX_PAUSE_S`). `run` sleeps until
then; `cycle` (a scheduled job, a person stepping) does nothing until then. A cycle that landed nothing because of it
is `paused` (`HistoryRecord.paused`: its outcome is that of a cycle that landed nothing, `no_change` or, when the
gates refused what the Worker did before the limit, `rejected`), and paused cycles are left out of every streak:
stalls, failures, the Consultant's escalation, the difficulty model's attempts.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from state.history import HistoryRecord

MAX_PAUSE_S = 6 * 3600.0
"""The longest pause when the limit named no reset time."""
MAX_RESET_S = 8 * 24 * 3600.0
"""The furthest reset time believed: a week's cap and a day to spare; one further is read as this."""


def until(now: datetime, records: Iterable[HistoryRecord], resets_at: datetime | None, pause_s: float) -> datetime:
    """When the loop may go on after a rate limit met at `now`: the reset time the answer gave, else `pause_s`
    doubled for each paused cycle in a row ending the history."""
    if resets_at is not None and resets_at > now:
        return min(resets_at, now + timedelta(seconds=MAX_RESET_S))
    streak = 0
    for r in reversed(list(records)):
        if not r.paused:
            break
        streak += 1
    return now + timedelta(seconds=min(MAX_PAUSE_S, pause_s * 2 ** min(streak, 20)))


def pending(records: list[HistoryRecord], now: datetime) -> datetime | None:
    """The time the last cycle (or any item of the last parallel round) paused the loop until, while it is still
    ahead."""
    if not records:
        return None
    last = records[-1]
    latest = [r for r in records if r.round is not None and r.round == last.round] if last.round is not None \
        else [last]
    ahead = [r.paused_until for r in latest if r.paused_until is not None and r.paused_until > now]
    return max(ahead, default=None)


def counted(records: Iterable[HistoryRecord]) -> list[HistoryRecord]:
    """The records a streak counts: every cycle but those a rate limit paused."""
    return [r for r in records if not r.paused]
