"""history.jsonl: our records, the reference script's, and damaged lines."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from state.history import GateVerdict, HistoryRecord, Outcome, Usage, append_record, parse_record, read_history

DATA = Path(__file__).parent.parent / "data" / "openmath"


def test_round_trip_of_a_full_record(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    record = HistoryRecord(
        cycle=7, started_at=datetime(2026, 11, 1, 10, tzinfo=UTC), finished_at=datetime(2026, 11, 1, 11, tzinfo=UTC),
        outcome=Outcome.ACCEPTED, gates=[GateVerdict(name="scope", passed=True, detail="ok")], pre_sorry_count=5,
        post_sorry_count=4, progress_score=1, summary="closed `foo` — with ∑", scope=["Book/A.lean"],
        changed_files=["Book/A.lean"], commit="abc123", usage={"worker": Usage(input=10, output=5, cache_read=100)},
        cost_usd=0.25)
    append_record(path, record)
    append_record(path, record.model_copy(update={"cycle": 8}))
    history = read_history(path)
    assert history.problems == []
    assert history.records == [record, record.model_copy(update={"cycle": 8})]
    assert "∑" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["openmath_history.jsonl", "openmath_history_run2.jsonl"])
def test_reference_script_records_load(name: str) -> None:
    history = read_history(DATA / name)
    assert history.problems == []
    first = history.records[0]
    assert first.cycle == 1 and first.outcome is None and first.schema_version == 1
    assert first.finished_at is not None and first.finished_at.tzinfo is not None
    assert all(r.summary for r in history.records)


def test_reference_extra_keys_are_kept() -> None:
    record = read_history(DATA / "openmath_history_run2.jsonl").records[-1]
    extra = record.model_extra or {}
    assert "faithfulness_flags" in extra and extra.get("engine") == "claude"  # the reference's Worker backend
    assert '"faithfulness_flags"' in record.to_line() and '"engine":"claude"' in record.to_line()
    assert record.worked_by is None  # not a round's item: the reference's key is not ours


def test_non_utc_offsets_are_normalised() -> None:
    record = parse_record({"cycle": 3, "timestamp": "2026-04-18T10:21:08-07:00", "progress_score": 0})
    assert record.finished_at == datetime(2026, 4, 18, 17, 21, 8, tzinfo=UTC)


def test_a_truncated_last_line_is_reported_skipped_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    shutil.copy(DATA / "openmath_history.jsonl", path)
    with path.open("a") as f:
        f.write('{"cycle": 120, "progress_score": 1, "summ')
    before = path.read_bytes()
    history = read_history(path)
    assert len(history.records) == 8
    assert history.problems == ["history.jsonl line 9: cut short (the writer probably crashed); skipped"]
    assert path.read_bytes() == before


def test_bad_lines_in_the_middle_are_named(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('{"cycle": 1}\nnot json\n{"cycle": "x"}\n{"cycle": 2, "progress_score": 9}\n[1]\n{"cycle": 3}\n')
    history = read_history(path)
    assert [r.cycle for r in history.records] == [1, 3]
    assert [p.split(":")[0] for p in history.problems] == [
        "history.jsonl line 2", "history.jsonl line 3", "history.jsonl line 4", "history.jsonl line 5"]
    assert "progress_score" in history.problems[2]


def test_a_record_from_a_newer_version_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('{"cycle": 1, "schema_version": 99}\n')
    assert "newer than this autoformalize understands" in read_history(path).problems[0]


def test_missing_history_is_empty(tmp_path: Path) -> None:
    history = read_history(tmp_path / "nope.jsonl")
    assert history.records == [] and history.problems == []


def test_records_written_before_the_facts_count_progress_by_their_score() -> None:
    old = parse_record({"schema_version": 1, "cycle": 4, "outcome": "accepted", "progress_score": 1,
                        "faithfulness": [{"entity": "thm:1", "declarations": ["A.b"], "score": 3}]})
    assert old.progress is None and old.made_progress and old.issues_opened == [] and old.planner_failed is None
    assert old.faithfulness[0].book == ""
    assert not parse_record({"cycle": 5, "progress_score": 0}).made_progress
    assert not old.model_copy(update={"progress": False}).made_progress  # the facts outrank the score
