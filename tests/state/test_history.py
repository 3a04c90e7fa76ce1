"""history.jsonl: our records, the reference script's, and damaged lines."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from state.history import (
    GateVerdict,
    HistoryRecord,
    Outcome,
    Usage,
    append_record,
    parse_record,
    read_history,
    scored,
)

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
    path.write_text('{"cycle": 1}\nnot json\n{"cycle": "x"}\n{"cycle": 2, "progress_score": 9, "schema_version": 1}\n'
                    '[1]\n{"cycle": 3}\n')
    history = read_history(path)
    assert [r.cycle for r in history.records] == [1, 3]
    assert [p.split(":")[0] for p in history.problems] == [
        "history.jsonl line 2", "history.jsonl line 3", "history.jsonl line 4", "history.jsonl line 5"]
    assert "progress_score" in history.problems[2]


def test_a_reference_record_scored_off_the_scale_is_read_whole_and_flagged(tmp_path: Path) -> None:
    """OpenMath's history at 783aeb4 holds two records its Evaluator scored 3, its best cycles ("Closed the LAST
    sorry in the project…"): read, held to the scale, the score as written kept and named, never skipped. A record
    of this loop's own, which holds it to the scale when it writes, is still refused off it."""
    path = tmp_path / "history.jsonl"
    shutil.copy(DATA / "openmath_history_scored3.jsonl", path)
    history = read_history(path)
    assert [r.progress_score for r in history.records] == [2, 2]
    assert history.records[1].summary.startswith("Closed the LAST sorry in the project")
    assert [(r.model_extra or {})["score_as_written"] for r in history.records] == [3, 3]
    assert history.problems == [f"history.jsonl line {n}: progress_score 3 is outside [-2, 2]; read as 2"
                                for n in (1, 2)]


def test_a_record_no_evaluator_scored_has_no_score_not_zero(tmp_path: Path) -> None:
    """OpenMath's records of another shape (`sorrys`, `target`, `notes`) kept no score: read as unscored, shown
    so, never as +0. This loop's own records keep theirs (0 is a score)."""
    path = tmp_path / "history.jsonl"
    shutil.copy(DATA / "openmath_history_unscored.jsonl", path)
    record = read_history(path).records[0]
    assert (record.cycle, record.progress_score, scored(record.score)) == (135, None, "unscored")
    assert not record.made_progress
    assert scored(HistoryRecord(cycle=1).score) == "+0"
    unscored = HistoryRecord(cycle=2, evaluated=False)  # an error before the Evaluator: 0 kept in range, no verdict
    assert (unscored.progress_score, unscored.score, unscored.made_progress) == (0, None, False)
