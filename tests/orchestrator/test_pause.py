"""When a rate limit pauses the loop, and which records a streak counts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from orchestrator import pause
from orchestrator.notify import planner_streak, stalled
from state.history import HistoryRecord, Outcome

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def record(cycle: int, outcome: Outcome, **fields: object) -> HistoryRecord:
    return HistoryRecord(cycle=cycle, outcome=outcome, finished_at=NOW, **fields)  # type: ignore[arg-type]


def paused(cycle: int, until: datetime = NOW + timedelta(hours=1), **fields: object) -> HistoryRecord:
    """A cycle a rate limit stopped before anything landed."""
    return record(cycle, Outcome.NO_CHANGE, paused_until=until, **fields)


def test_a_record_is_paused_when_a_limit_stopped_it_and_nothing_landed() -> None:
    assert paused(1).paused and record(2, Outcome.REJECTED, paused_until=NOW).paused
    assert not record(3, Outcome.ACCEPTED, paused_until=NOW).paused  # what landed counts as it always does
    assert not record(4, Outcome.NO_CHANGE).paused


def test_a_reset_time_given_is_the_pause_up_to_a_week_and_a_day() -> None:
    resets = NOW + timedelta(hours=3, minutes=7)
    assert pause.until(NOW, [], resets, 900) == resets
    assert pause.until(NOW, [], NOW + timedelta(days=365), 900) == NOW + timedelta(days=8)  # not believed


def test_without_a_reset_time_the_pause_doubles_for_each_paused_cycle_in_a_row() -> None:
    history = [record(1, Outcome.ACCEPTED)]
    assert pause.until(NOW, history, None, 900) == NOW + timedelta(seconds=900)
    history += [paused(2), paused(3)]
    assert pause.until(NOW, history, None, 900) == NOW + timedelta(seconds=3600)
    history += [paused(4)] * 30
    assert pause.until(NOW, history, None, 900) == NOW + timedelta(seconds=pause.MAX_PAUSE_S)
    # A reset time already past says nothing: the backoff decides.
    assert pause.until(NOW, [], NOW - timedelta(minutes=1), 60) == NOW + timedelta(seconds=60)


def test_pending_is_the_last_pause_still_ahead_of_any_item_of_the_last_round() -> None:
    later = NOW + timedelta(hours=1)
    assert pause.pending([], NOW) is None
    assert pause.pending([paused(1, later)], NOW) == later
    assert pause.pending([paused(1, later)], later) is None
    assert pause.pending([paused(1, later), record(2, Outcome.NO_CHANGE)], NOW) is None
    round_ = [paused(3, later, round=2, item="a"),
              record(4, Outcome.ACCEPTED, round=2, item="b")]
    assert pause.pending([record(1, Outcome.ACCEPTED, round=1, item="a"), *round_],
                         NOW) == later


def test_a_paused_cycle_neither_stalls_nor_breaks_a_stall() -> None:
    idle = [record(i, Outcome.NO_CHANGE, progress=False) for i in (1, 2, 3)]
    limited = paused(4, progress=False)
    fourth = record(5, Outcome.NO_CHANGE, progress=False)
    assert stalled(idle, limited, 4) == 0  # the pause is not the fourth stalled cycle
    assert stalled([*idle, limited], fourth, 4) == 4  # the next idle cycle is, and the pause did not reset the run
    assert stalled([*idle[:1], limited], record(6, Outcome.NO_CHANGE, progress=False), 2) == 2


def test_a_paused_cycle_does_not_break_a_planner_failure_streak() -> None:
    failed = [record(1, Outcome.ERROR, planner_failed="no Scope"), paused(2)]
    assert planner_streak(failed, record(3, Outcome.ERROR, planner_failed="no Scope")) == 2
