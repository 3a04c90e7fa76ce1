"""The dashboard's difficulty panel: difficulty by chapter, the hardest targets, the burn-down with its band."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.report import site
from state.history import HistoryRecord, Outcome, append_record
from tests.conftest import GIT_ENV, LAKEFILE, write

EVIL = "<img src=x onerror=alert(1)>"
NOW = datetime(2026, 11, 20, tzinfo=UTC)


def book(root: Path) -> Path:
    repo = root / "book"
    write(repo, {
        "lakefile.toml": LAKEFILE, "autoformalize.toml": '[project]\nlean_roots = ["Book"]\n', "plan.md": "# Plan\n",
        "Book/Ch1/A.lean": "namespace Book\n\ntheorem easy : True := by\n  sorry\n\nend Book\n",
        "Book/Ch2/B.lean": f"namespace Book\n\ntheorem «{EVIL}» : True := by\n  sorry\n\n"
                           "theorem hard : True := by\n  sorry\n\nend Book\n"})
    history = repo / ".prover-state" / "history.jsonl"
    for cycle in range(1, 7):
        append_record(history, HistoryRecord(cycle=cycle, outcome=Outcome.NO_CHANGE, targets=["Book.hard"],
                                             worker_model="claude-opus-4-6", pre_sorry_count=3, post_sorry_count=3,
                                             cost_usd=2.0, costs={"worker": 1.5}, finished_at=NOW))
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "book"], cwd=repo, check=True, env={**GIT_ENV, "PATH": "/usr/bin:/bin"})
    return repo


def test_the_panel_shows_difficulty_by_chapter_and_the_burn_down_with_its_band(tmp_path: Path) -> None:
    page = site.render(site.gather(book(tmp_path), NOW))
    panel = page[page.index('<section id="difficulty"'):]
    panel = panel[:panel.index("</section>") + len("</section>")]
    assert EVIL not in page and "&lt;img src=x onerror=alert(1)&gt;" in panel  # a Worker's name, as text
    chapters = [row.split('data-chapter="')[1].split('"')[0] for row in panel.split("<tr ")[1:]
                if 'data-chapter="' in row]
    assert chapters == ["Book/Ch2", "Book/Ch1"]  # the chapter whose target failed six times first
    assert "3 open targets; closing them all takes" in panel and "$" in panel
    svg = ET.fromstring(panel[panel.index("<svg"):panel.index("</svg>") + len("</svg>")])
    series = [g.get("data-series") for g in svg.iter() if g.get("data-series")]
    assert series == ["recorded", "forecast P90", "forecast P50", "forecast P10"]
