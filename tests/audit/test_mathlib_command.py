"""`autoformalize audit --mathlib` end to end, on the stand-in Lean: two theorems the library closes, one only the
project's own theorem closes, one `exact?` cannot close, one that times out; the cache, the resume after Ctrl-C,
`--sample`, the report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli import main
from tests.conftest import git, write
from tests.orchestrator.harness import config_text

BASIC = """\
import Mathlib

namespace Book

/-- Definition 1.1 A number doubled. -/
def double (n : ℕ) : ℕ := n + n

/-- Lemma 1.2 Doubling is adding a number to itself. -/
theorem double_eq (n : ℕ) : double n = n + n := rfl

/-- Theorem 1.3 A number is at most its successor. -/
theorem le_succ' (k : ℕ) : k ≤ k + 1 := by omega

theorem comm' (a b : ℕ) : a + b = b + a := by omega

theorem double_eq' (m : ℕ) : double m = m + m := by
  exact double_eq m

theorem pending (n : ℕ) : n ≤ n * n := by
  sorry

end Book
"""
SLOW = """\
import Book.Basic

namespace Book

/-- standin: sleep 30 -/
theorem slow (n : ℕ) : n = n := rfl

end Book
"""


def repo_with(make_repo: Callable[..., Path], files: dict[str, str], **audit: Any) -> Path:
    config = config_text(audit={"mathlib_timeout_s": 3, **audit}, parallel={"max_builds": 2})
    return make_repo({"Book.lean": "import Book.Basic\nimport Book.Slow\n", "Book/Basic.lean": BASIC,
                      "Book/Slow.lean": SLOW, "autoformalize.toml": config, **files})


def audit(capsys: pytest.CaptureFixture[str], repo: Path, *args: str) -> dict[str, Any]:
    assert main(["audit", "--mathlib", "--no-models", "--json", "--repo", str(repo), *args]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_the_papers_table_3_row_for_the_project_its_cache_and_its_report(
        make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    repo = repo_with(make_repo, {})
    doc = audit(capsys, repo)
    m = doc["mathlib_overlap"]
    assert {k: m[k] for k in ("proofs", "overlap", "rate", "timeouts", "own", "original", "errors", "population")} \
        == {"proofs": 5, "overlap": 2, "rate": 0.4, "timeouts": 1, "own": 1, "original": 1, "errors": 0,
            "population": 5}
    assert m["items"] == [
        {"declaration": "Book.le_succ'", "suggestion": "Nat.le_succ k", "constants": ["Nat.le_succ"],
         "file": "Book/Basic.lean", "line": 12, "valid": True},
        {"declaration": "Book.comm'", "suggestion": "Nat.add_comm a b", "constants": ["Nat.add_comm"],
         "file": "Book/Basic.lean", "line": 14, "valid": True}]
    status = {r["declaration"]: r["status"] for r in m["results"]}
    # Closed only by the project's own theorem: original. Timed out: a timeout, never original.
    assert status["Book.double_eq'"] == "own" and status["Book.slow"] == "timeout"
    assert "Book.pending" not in status and m["timed_out"] == ["Book.slow"]
    assert m["project_constants"] == "lean" and (m["asked"], m["cached"]) == (5, 0)
    rows = {r["id"]: r for r in doc["entities"]}
    assert [x["status"] for x in rows["thm:1.3"]["mathlib"]] == ["overlap"]
    assert rows["def:1.1"]["mathlib"] is None
    assert "Mathlib overlap (exact?): 2 of 5 proofs (40.0%); 1 timed out" in doc["summary"]

    # Asked again, nothing has changed: every answer is the cache's, the timeout's too (the same limit).
    assert audit(capsys, repo)["mathlib_overlap"]["asked"] == 0
    # A theorem added at the end of Basic: it is asked, and so is Slow's (its file imports Basic); the rest is not.
    write(repo, {"Book/Basic.lean": BASIC.replace("end Book", "theorem zero' (n : ℕ) : 0 ≤ n := by omega\n\nend Book")})
    again = audit(capsys, repo)["mathlib_overlap"]
    assert (again["asked"], again["cached"], again["overlap"]) == (2, 4, 3)

    assert main(["audit", "--mathlib", "--no-models", "--repo", str(repo)]) == 0
    report = capsys.readouterr().out
    assert "| this project | 6 | 50% (3) |" in report
    assert "| `Book.le_succ'` | Book/Basic.lean:12 | Nat.le_succ | `Nat.le_succ k` |" in report
    latest = json.loads((repo / ".prover-state" / "audit" / "latest.json").read_text())
    assert latest["mathlib_overlap"]["overlap"] == 3


def test_a_sample_tries_so_many_theorems_reproducibly(make_repo: Callable[..., Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    repo = repo_with(make_repo, {})
    first = audit(capsys, repo, "--sample", "2", "--seed", "3")["mathlib_overlap"]
    again = audit(capsys, repo, "--sample", "2", "--seed", "3")["mathlib_overlap"]
    assert first["proofs"] == 2 and first["population"] == 5 and first["sample"] == {"size": 2, "seed": 3}
    assert [r["declaration"] for r in first["results"]] == [r["declaration"] for r in again["results"]]
    assert again["asked"] == 0


def test_budget_without_mathlib_is_a_usage_error(make_repo: Callable[..., Path],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = repo_with(make_repo, {})
    assert main(["audit", "--no-models", "--budget-s", "5", "--repo", str(repo)]) == 2
    assert "give one of them too" in capsys.readouterr().err


def test_stopped_with_ctrl_c_the_answers_so_far_are_kept_and_the_next_run_asks_only_the_rest(
        make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    slower = SLOW.replace("sleep 30", "sleep 4").replace("import Book.Basic\n", "")
    repo = make_repo({
        "autoformalize.toml": config_text(audit={"mathlib_timeout_s": 30}, parallel={"max_builds": 1}),
        "Book.lean": "import Book.A\nimport Book.B\nimport Book.C\n", "Book/A.lean": "theorem a : 0 ≤ 1 := by omega\n",
        "Book/B.lean": slower, "Book/C.lean": "theorem c (n : ℕ) : n ≤ n := by omega\n"})
    (repo / "Book" / "Basic.lean").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "three files")
    answers = repo / ".git" / "autoformalize" / "mathlib"
    run = subprocess.Popen([sys.executable, "-m", "orchestrator", "audit", "--mathlib", "--no-models", "--json",
                            "--repo", str(repo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    deadline = time.monotonic() + 60
    while not list(answers.glob("*.json")) and time.monotonic() < deadline:  # `a` answered; `Book.slow` asked now
        time.sleep(0.05)
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert "Interrupted: 2 theorems answered, 1 not asked" in err and out == ""
    assert len(list(answers.glob("*.json"))) == 2  # the probe running when it was stopped finished, and is kept
    m = audit(capsys, repo)["mathlib_overlap"]
    assert (m["asked"], m["cached"], m["proofs"]) == (1, 2, 3)
