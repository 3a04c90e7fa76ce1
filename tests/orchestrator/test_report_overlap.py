"""The dashboard shows the latest audit's Mathlib overlap and successor verdicts per book and chapter."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.report.site import build
from tests.conftest import write
from tests.orchestrator.test_report import Parsed

OVERLAP = {"proofs": 7, "overlap": 2, "rate": 0.2857, "timeouts": 1, "items": [], "books": [
    {"book": "Butcher", "chapter": "1", "by": "entity", "proofs": 4, "overlap": 1, "rate": 0.25},
    {"book": None, "chapter": "Book/Ch2", "by": "file", "proofs": 3, "overlap": 1, "rate": 0.3333},
    {"book": "Butcher", "chapter": "2", "by": "entity", "proofs": "many"}]}


def test_the_overlap_rate_per_book_and_chapter(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"autoformalize.toml": '[project]\nlean_roots = ["Book"]\n'})
    audit = {"generated_at": "2026-05-30T10:00:00+00:00", "summary": "", "entities": [], "mathlib_overlap": OVERLAP}
    write(repo, {".prover-state/audit/latest.json": json.dumps(audit)})
    page = build(repo, tmp_path / "site", datetime(2026, 6, 1, tzinfo=UTC)).read_text(encoding="utf-8")
    rows = Parsed(page).rows("mathlib-overlap")
    assert rows[1:] == [["Butcher · 1", "4", "1 (25%)"], ["Book/Ch2 (folder)", "3", "1 (33%)"], ["All", "7", "2 (29%)"]]
    assert "a row of `mathlib_overlap.books` could not be read" in page  # the row of "many" proofs
    write(repo, {".prover-state/audit/latest.json": json.dumps({**audit, "mathlib_overlap": None})})
    assert "mathlib-overlap" not in build(repo, tmp_path / "again", datetime(2026, 6, 1, tzinfo=UTC)).read_text()


SUCCESSORS = {"tried": 9, "books": [
    {"book": "Butcher", "chapter": "1", "by": "entity", "tried": 5, "tested": 2, "weakly tested": 1, "untested": 1,
     "no users": 1, "unchecked": 0},
    {"book": None, "chapter": "Book/Ch2", "by": "file", "tried": 4, "tested": 0, "weakly tested": 0, "untested": 3,
     "no users": 1, "unchecked": 0},
    {"book": "Butcher", "chapter": "2", "by": "entity", "tried": "some"}]}


def test_the_successor_verdicts_per_book_and_chapter(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"autoformalize.toml": '[project]\nlean_roots = ["Book"]\n'})
    audit = {"generated_at": "2026-05-30T10:00:00+00:00", "summary": "", "entities": [], "successors": SUCCESSORS}
    write(repo, {".prover-state/audit/latest.json": json.dumps(audit)})
    page = build(repo, tmp_path / "site", datetime(2026, 6, 1, tzinfo=UTC)).read_text(encoding="utf-8")
    rows = Parsed(page).rows("successors")
    assert rows[1:] == [["Butcher · 1", "5", "2", "1", "1", "1"], ["Book/Ch2 (folder)", "4", "0", "0", "3", "1"],
                        ["All", "9", "2", "1", "4", "2"]]
    assert "a row of `successors.books` could not be read" in page
    write(repo, {".prover-state/audit/latest.json": json.dumps({**audit, "successors": None})})
    assert 'id="successors"' not in build(repo, tmp_path / "again", datetime(2026, 6, 1, tzinfo=UTC)).read_text()
