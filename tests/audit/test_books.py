"""Several books under one Lean root (ReasBook's `Books/<Book>` and `Papers/<Paper>`, trimmed in
tests/data/reasbook_books): each book keyed by its own folder, in the audit and on the dashboard, whichever folder
the audit is pointed at."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from orchestrator.cli import main
from tests.conftest import git

DATA = Path(__file__).parent.parent / "data" / "reasbook_books"
TAO, ROCKAFELLAR = "Analysis2_Tao_2022", "ConvexAnalysis_Rockafellar_1970"


@pytest.fixture
def reasbook(tmp_path: Path) -> Path:
    repo = tmp_path / "ReasBook-repo"
    shutil.copytree(DATA, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ReasBook, trimmed")
    return repo


def entities(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, tuple[str, int]]:
    assert main(["audit", "--no-models", "--json", *args]) == 0
    doc = json.loads(capsys.readouterr().out)
    return {e["id"]: (e["book"], len(e["lean"])) for e in doc["entities"]}


def test_each_book_is_keyed_by_its_folder_wherever_the_audit_looks(reasbook: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(reasbook)]) == 0
    assert "Lean roots: ReasBook/ReasBook, ReasBook/Books, ReasBook/Papers" in capsys.readouterr().out
    whole = entities(capsys, "--repo", str(reasbook))
    # Both books have a Theorem 1.1: Tao's Cauchy–Schwarz (six declarations), Rockafellar's affine sets (one).
    assert whole[f"{TAO}/thm:1.1"] == (TAO, 6)
    assert whole[f"{ROCKAFELLAR}/thm:1.1"] == (ROCKAFELLAR, 1)
    assert "thm:1.1" not in whole and "Books/thm:1.1" not in whole
    # Rockafellar's chapter folders number alike once (a helper's doc comment in Chap02 cites "Corollary 4.7.2" of
    # Chap01): they are not books; the book is, and the corollary one entity of two declarations.
    assert whole[f"{ROCKAFELLAR}/cor:4.7.2"] == (ROCKAFELLAR, 2)
    assert not any(k.startswith(("Chap01/", "Chap02/")) for k in whole)
    papers = {k: v for k, v in whole.items() if k.startswith("def:1.1.")}
    assert len(papers) == 5 and len(whole) == 8
    books = entities(capsys, str(reasbook / "ReasBook" / "Books"))
    assert books == {k: v for k, v in whole.items() if v[0]}
    assert entities(capsys, str(reasbook / "ReasBook" / "Papers")) == papers


def test_the_dashboard_shows_each_book_apart(reasbook: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(reasbook)]) == 0
    assert main(["audit", "--no-models", "--repo", str(reasbook)]) == 0
    git(reasbook, "add", "-A")
    git(reasbook, "commit", "-qm", "init and the audit")
    assert main(["report", "--out", str(tmp_path / "site"), "--repo", str(reasbook)]) == 0
    page = (tmp_path / "site" / "index.html").read_text()
    assert f"{TAO} · 1" in page and f"{ROCKAFELLAR} · 1" in page and f"{ROCKAFELLAR} · 4" in page
    assert "Books · 1" not in page and "Chap01 · " not in page and "Chap02 · " not in page
