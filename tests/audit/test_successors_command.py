"""`autoformalize audit --successors` end to end, on the stand-in Lean (which checks an application of a theorem
against its explicit binders and its conclusion's head, as Lean's elaborator does against the expected type): a
well-used statement is tested, a vacuous one whose user survives the swap is untested, one nobody uses has no users;
the cache, `--sample`, `--budget-s`, Ctrl-C, the JSON and the report."""

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
from tests.conftest import write
from tests.orchestrator.harness import config_text

BASIC = """\
import Mathlib

namespace Book

/-- Lemma 1.1 Multiplying a positive number by one leaves it, and it is at most itself. -/
theorem qux (n : ℕ) (h : 0 < n) : n * 1 = n ∧ n ≤ n := by
  omega

/-- Lemma 1.2 No natural number is negative, so this says nothing. -/
theorem vac (n : ℕ) (h : n < 0) : n = 7 := by
  omega

/-- Lemma 1.3 Zero is at most any number. -/
theorem lonely (n : ℕ) : 0 ≤ n := by
  omega

theorem three_mul_one : 3 * 1 = 3 ∧ 3 ≤ 3 := qux 3 (by decide)

end Book
"""
USER = """\
import Book.Basic

open Book

theorem two_mul_one : 2 * 1 = 2 ∧ 2 ≤ 2 := by
  exact qux 2 (by decide)

theorem uses_vac : 1 = 1 := by
  have _h := vac 0
  rfl
"""
HOMEWORK = """\
import Mathlib

theorem qux (n : ℕ) : n = n := rfl

theorem calls_its_own : 4 = 4 := qux 4
"""


def repo_with(make_repo: Callable[..., Path], **files: str) -> Path:
    config = config_text(parallel={"max_builds": 1})
    modules = ["Book/Basic.lean", "Book/User.lean", *files]
    imports = "".join(f"import {p.removesuffix('.lean').replace('/', '.')}\n" for p in modules)
    return make_repo({"Book.lean": imports, "Book/Basic.lean": BASIC,
                      "Book/User.lean": USER, "autoformalize.toml": config, **files})


def audit(capsys: pytest.CaptureFixture[str], repo: Path, *args: str) -> dict[str, Any]:
    assert main(["audit", "--successors", "--no-models", "--json", "--repo", str(repo), *args]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_verdicts_users_mutants_cache_and_report(make_repo: Callable[..., Path],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = repo_with(make_repo, **{"Book/Hw.lean": HOMEWORK})
    doc = audit(capsys, repo)
    s = doc["successors"]
    by_name = {r["declaration"]: r for r in s["results"]}

    qux = by_name["Book.qux"]
    # Users in its own file and in a file importing it; `Book/Hw.lean`'s caller of its own `qux` is not.
    assert qux["users"] == ["Book.three_mul_one", "two_mul_one"]
    assert [(m["kind"], m["status"]) for m in qux["mutants"]] == [
        ("vacuity", "killed"), ("hypothesis dropped", "killed"), ("conclusion weakened", "killed")]
    assert qux["mutants"][1]["change"] == "drops `(h : 0 < n)`"
    assert qux["mutants"][2]["change"] == "the conjunct `n ≤ n` dropped"
    assert qux["mutants"][0]["killed_by"] == ["Book.three_mul_one", "two_mul_one"]
    assert "type mismatch" in qux["mutants"][0]["message"]
    assert "function expected" in qux["mutants"][1]["message"]
    assert qux["verdict"] == "tested"

    vac = by_name["Book.vac"]  # its only user never looks at what it says: nothing breaks it
    assert vac["users"] == ["uses_vac"] and vac["verdict"] == "untested"
    assert [(m["kind"], m["status"]) for m in vac["mutants"]] == [("vacuity", "survived"),
                                                                   ("hypothesis dropped", "survived")]
    assert by_name["Book.lonely"]["users"] == [] and by_name["Book.lonely"]["verdict"] == "no users"
    assert by_name["Book.lonely"]["mutants"] == []

    assert by_name["qux"]["users"] == ["calls_its_own"] and by_name["qux"]["verdict"] == "tested"
    assert [m["kind"] for m in by_name["qux"]["mutants"]] == ["vacuity"]  # no hypothesis, nothing to weaken

    assert s["verdicts"] == {"tested": 2, "weakly tested": 0, "untested": 1, "no users": 5, "unchecked": 0}
    assert (s["asked"], s["cached"], s["unasked"], s["population"]) == (6, 0, 0, 8)
    rows = {r["id"]: r for r in doc["entities"]}
    assert rows["lem:1.1"]["successors"]["verdict"] == "tested"
    assert rows["lem:1.1"]["successors"]["users"] == ["Book.three_mul_one", "two_mul_one"]
    assert rows["lem:1.1"]["successors"]["killed"] == ["Book.qux: vacuity", "Book.qux: hypothesis dropped",
                                                       "Book.qux: conclusion weakened"]
    assert rows["lem:1.2"]["successors"]["verdict"] == "untested"
    assert rows["lem:1.3"]["successors"]["verdict"] == "no users"
    chapter = next(g for g in s["books"] if g["by"] == "entity")
    assert (chapter["tried"], chapter["tested"], chapter["untested"], chapter["no users"]) == (3, 1, 1, 1)
    assert "Successor tests: 8 theorems — 2 tested, 0 weakly tested, 1 untested, 5 with no users" in doc["summary"]
    assert (repo / "Book" / "Basic.lean").read_text() == BASIC  # mutants are written in a copy, never here

    # Run again, nothing changed: every outcome is the cache's.
    again = audit(capsys, repo)["successors"]
    assert (again["asked"], again["cached"]) == (0, 6)
    assert again["results"] == [{**r, "mutants": [{**m, "cached": True} for m in r["mutants"]]}
                                for r in s["results"]]
    # The user's file changes: only the mutants it is checked for are compiled again.
    write(repo, {"Book/User.lean": USER + "\ntheorem five_mul_one : 5 * 1 = 5 ∧ 5 ≤ 5 := qux 5 (by decide)\n"})
    third = audit(capsys, repo)["successors"]
    assert (third["asked"], third["cached"]) == (5, 1)  # both Book's targets have users there; Hw's has none

    assert main(["audit", "--successors", "--no-models", "--repo", str(repo)]) == 0
    report = capsys.readouterr().out
    assert "## Successor tests" in report
    assert "| `Book.vac` | Book/Basic.lean:10 | untested | uses_vac | the conclusion `n = 7` replaced by `True`; " \
           "drops `(h : n < 0)` |" in report


def test_sample_and_budget_bound_the_run(make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    repo = repo_with(make_repo)
    first = audit(capsys, repo, "--sample", "2", "--seed", "1")["successors"]
    assert first["tried"] == 2 and first["population"] == 6 and first["sample"] == {"size": 2, "seed": 1}
    again = audit(capsys, repo, "--sample", "2", "--seed", "1")["successors"]
    assert [r["declaration"] for r in again["results"]] == [r["declaration"] for r in first["results"]]

    # A spent budget starts no theorem with mutants to compile: the first such is not tried, nor any after it.
    spent = audit(capsys, repo, "--budget-s", "0")["successors"]
    assert spent["asked"] == 0 and spent["unasked"] >= 1
    assert all(r["verdict"] == "no users" or all(m["cached"] for m in r["mutants"]) for r in spent["results"])
    assert len(spent["results"]) + spent["unasked"] == 6


def test_budget_alone_is_a_usage_error(make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    repo = repo_with(make_repo)
    assert main(["audit", "--no-models", "--budget-s", "5", "--repo", str(repo)]) == 2
    assert "give one of them too" in capsys.readouterr().err


def test_stopped_with_ctrl_c_the_outcomes_so_far_are_kept_and_the_next_run_compiles_only_the_rest(
        make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    slow = USER.replace("open Book\n", "open Book\n\n-- standin: sleep 2\n")
    repo = repo_with(make_repo, **{"Book/User.lean": slow})
    outcomes = repo / ".git" / "autoformalize" / "successors"
    run = subprocess.Popen([sys.executable, "-m", "orchestrator", "audit", "--successors", "--no-models", "--json",
                            "--repo", str(repo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    deadline = time.monotonic() + 60
    while not list(outcomes.glob("*.json")) and time.monotonic() < deadline:  # the first mutant answered
        time.sleep(0.05)
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert "Interrupted:" in err and "not tried" in err and out == ""
    kept = len(list(outcomes.glob("*.json")))
    assert 1 <= kept < 5  # the compile running when it was stopped finished and is kept; nothing after it ran
    s = audit(capsys, repo)["successors"]
    assert (s["cached"], s["asked"]) == (kept, 5 - kept)
    assert s["verdicts"]["tested"] == 1 and s["verdicts"]["untested"] == 1
