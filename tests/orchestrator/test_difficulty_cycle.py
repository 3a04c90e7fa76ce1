"""Whole cycles with scripted Workers: the records say what each cycle aimed at and did, and the loop uses the
difficulty it learns from them."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.config import load_config
from orchestrator.outlook import KEPT, ahead, tree_of
from orchestrator.report.site import build
from state.history import read_history
from state.prover_jobs import ProverJob, read_jobs
from tests.conftest import git, write
from tests.orchestrator.harness import (
    A,
    Project,
    config_text,
    configure,
    evaluation,
    make_project,
    strategy,
    user_text,
)
from tests.standin.anthropic_server import AnthropicStandin
from tests.standin.aristotle_server import AristotleStandin

PROVED = A.replace("  sorry", "  simp")
KEY = "arist-test-key-never-print"
CLOSE = [("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})]


def jobs(project: Project) -> list[ProverJob]:
    return read_jobs(project.repo / ".prover-state/prover_jobs.json").jobs


def fail(project: Project, plan: str) -> None:
    """A cycle whose Worker gives up."""
    project.agents.plan(plan)
    project.agents.work([("finish", {"report": "no luck"})])
    project.agents.evaluate(evaluation(0, "nothing closed", stuck_on="Book.hard"))


def test_the_records_name_what_each_cycle_aimed_at_and_closed(project: Project) -> None:
    fail(project, strategy("Book/A.lean", "Book/B.lean", target="Close `Book.hard`."))
    first, _ = project.cycle()
    project.agents.plan(strategy("Book/A.lean", target="Close `hard`."))
    project.agents.work(CLOSE, [("finish", {"report": "closed it"})])
    project.agents.evaluate(evaluation(1))
    second, _ = project.cycle()

    assert (first.targets, first.closed, first.opened) == (["Book.hard"], [], [])
    assert (second.outcome, second.targets, second.closed) == ("accepted", ["Book.hard"], ["Book.hard"])
    assert first.worker_model == second.worker_model == "claude-opus-4-6"
    assert [(r.targets, r.closed) for r in project.history()] == [(["Book.hard"], []), (["Book.hard"], ["Book.hard"])]


@pytest.fixture
def aristotle(monkeypatch: pytest.MonkeyPatch) -> Iterator[AristotleStandin]:
    with AristotleStandin(api_key=KEY) as standin:
        monkeypatch.setenv("ARISTOTLE_API_KEY", KEY)
        yield standin


def test_a_target_failed_five_times_goes_to_the_prover(tmp_path: Path, server: AnthropicStandin,
                                                       aristotle: AristotleStandin) -> None:
    """`[difficulty] prover_after = 5` (the default): four failed attempts on `Book.hard` send nothing; after the
    fifth, the next cycle submits it to the stand-in Aristotle before its Planner runs, and the Planner sees the
    job and the target's difficulty."""
    project = make_project(tmp_path, server, config=config_text(prover={"base_url": aristotle.base_url}))
    aim = strategy("Book/A.lean", target="Close `Book.hard`.")
    for _ in range(5):
        fail(project, aim)
        record, _ = project.cycle()
        assert record.targets == ["Book.hard"] and not record.prover_jobs
    assert not aristotle.jobs
    fail(project, aim)
    record, _ = project.cycle()

    (job,) = aristotle.jobs.values()
    assert record.prover_jobs == {"submitted": [job.id]}
    assert [(t.declaration, t.file) for t in jobs(project)[0].targets] == [("Book.hard", "Book/A.lean")]
    planner = user_text(project.agents.requests["planner"][-1])
    assert f"job {job.id}, submitted in cycle 6" in planner
    assert "## Difficulty" in planner and "- Book.hard (Book/A.lean): fails 68%, 5 attempts" in planner
    fail(project, aim)  # an open job holds it: not sent again
    assert project.cycle()[0].prover_jobs == {}


def test_a_hard_target_is_worked_by_the_hard_model(project: Project) -> None:
    """`[agents.worker] hard_model` serves the cycles aiming at a target whose difficulty passed `hard_above`: two
    failed attempts by the Worker's model lift `Book.hard` over 0.6, and the third cycle's Worker asks for the hard
    model, its record saying so; a cycle aiming at `Book.other` keeps the Worker's model."""
    configure(project, agents={"worker": {"model": "claude-sonnet-4-6", "hard_model": "claude-opus-4-6"}},
              difficulty={"hard_above": 0.6, "prover_after": 99})
    aim = strategy("Book/A.lean", target="Close `Book.hard`.")
    for _ in range(2):
        fail(project, aim)
        assert project.cycle()[0].worker_model == "claude-sonnet-4-6"
    fail(project, aim)
    record, _ = project.cycle()
    assert record.worker_model == "claude-opus-4-6"
    assert project.agents.requests["worker"][-1].body["model"] == "claude-opus-4-6"
    fail(project, strategy("Book/B.lean", target="Close `Book.other`."))
    record, _ = project.cycle()
    assert record.worker_model == "claude-sonnet-4-6"
    assert project.agents.requests["worker"][-1].body["model"] == "claude-sonnet-4-6"


def test_forecast_status_and_the_dry_run_speak_of_what_is_left(project: Project,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """After two cycles: `forecast --json` holds every open target and the cycles and dollars left; `status` says
    it in a line; with a total budget nearly spent, `forecast` and `cycle --dry-run` warn that the median cost
    left exceeds what the budget has left."""
    for _ in range(2):
        fail(project, strategy("Book/A.lean", target="Close `Book.hard`."))
        project.cycle()
    capsys.readouterr()
    assert main(["forecast", "--json", "--repo", str(project.repo)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(t["declaration"], t["attempts"]) for t in doc["targets"]] == [("Book.hard", 2), ("Book.other", 0)]
    assert all(0 < t["difficulty"] < 1 and 0 < t["p_next"] < 1 for t in doc["targets"])
    cycles, usd = doc["remaining"]["cycles"], doc["remaining"]["usd"]
    assert 0 < cycles["p50"] <= cycles["p90"] and 0 < usd["p50"] <= usd["p90"] and doc["warnings"] == []
    assert main(["status", "--repo", str(project.repo)]) == 0
    assert f"  forecast   2 open targets: {cycles['p50']:g}–{cycles['p90']:g} cycles" in capsys.readouterr().out

    spent = sum(r.spent_usd for r in project.history())
    budget = {"budget": {"total_usd": round(spent + 0.01, 4)}}
    write(project.repo, {"autoformalize.toml": config_text(gates={"repair_rounds": 0}, **budget)})
    git(project.repo, "commit", "-qam", "budget")
    assert main(["forecast", "--repo", str(project.repo)]) == 0
    warning = "exceeds what [budget] total_usd has left, $0.01"
    assert warning in capsys.readouterr().out
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    shown = capsys.readouterr().out
    assert "forecast: 2 open targets" in shown and "forecast: warning: the median cost left" in shown
    assert warning in shown


def forecast_line(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.lstrip().startswith("forecast"))


def test_the_forecast_is_kept_and_status_and_the_dry_run_only_read_it(project: Project,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """`status` and the dry run show the forecast kept for the history and tree they see and never make one: before
    any is made they say how to make it. `forecast` makes and keeps it, and so does each cycle as it ends; a tree
    that changed (a file written, uncommitted) has none until one is made for it."""
    repo = str(project.repo)
    kept = project.repo / ".git" / "autoformalize" / "forecast"
    assert main(["status", "--repo", repo]) == 0
    assert "forecast   not made yet for this history and tree: `autoformalize forecast` makes it" in \
        forecast_line(capsys)
    assert main(["forecast", "--repo", repo]) == 0
    assert "no forecast yet — no recorded cycle closed a target" in capsys.readouterr().out
    assert main(["status", "--repo", repo]) == 0
    assert forecast_line(capsys).endswith("forecast   2 open targets; no forecast until a cycle closes one (no close "
                                          "recorded)")

    fail(project, strategy("Book/A.lean", target="Close `Book.hard`."))
    project.cycle()
    assert len(list(kept.iterdir())) == 2  # the cycle's, for the history it wrote
    assert main(["status", "--repo", repo]) == 0
    made = forecast_line(capsys)
    assert made.startswith("  forecast   2 open targets: ") and "cycles left (P50–P90, simulated)" in made
    assert main(["cycle", "--dry-run", "--repo", repo]) == 0
    assert f"forecast: {made.removeprefix('  forecast   ')}" in capsys.readouterr().out

    write(project.repo, {"Book/C.lean": "theorem more : True := by\n  sorry\n"})  # the checkout, not the commit
    assert main(["status", "--repo", repo]) == 0
    assert "not made yet for this history and tree" in forecast_line(capsys)
    assert main(["forecast", "--json", "--repo", repo]) == 0
    assert len(json.loads(capsys.readouterr().out)["targets"]) == 3
    assert main(["status", "--repo", repo]) == 0
    assert forecast_line(capsys).startswith("  forecast   3 open targets: ")


def test_a_kept_forecast_is_the_one_made_from_the_records_shown(project: Project,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A forecast is kept under the records it was made from, not the history file read again: one made from an
    older read (a cycle landed while the tree was being read) is never shown for the history that file now holds.
    Read again, a kept forecast stays among the latest; and a history reached through a link is a problem the
    dashboard names, not a crash."""
    repo = project.repo
    fail(project, strategy("Book/A.lean", target="Close `Book.hard`."))
    project.cycle()
    config = load_config(repo)
    records = read_history(config.state(repo).history).records
    tree = tree_of(repo, config)
    kept = repo / ".git" / "autoformalize" / "forecast"
    for old in kept.iterdir():
        old.unlink()
    stale = ahead(config, repo, records[:-1], tree)  # made from the history as it stood before the last record
    assert stale is not None and ahead(config, repo, records[:-1], tree, make=False) == stale
    assert ahead(config, repo, records, tree, make=False) is None
    assert main(["status", "--repo", str(repo)]) == 0
    assert "not made yet for this history and tree" in forecast_line(capsys)

    first = next(kept.iterdir())
    os.utime(first, (1, 1))  # the oldest on disk, until it is read
    for n in range(KEPT - 1):
        ahead(config, repo, [*records, records[-1].model_copy(update={"cycle": 100 + n})], tree)
    assert ahead(config, repo, records[:-1], tree, make=False) == stale  # read: now among the latest
    ahead(config, repo, [*records, records[-1].model_copy(update={"cycle": 200})], tree)
    assert len(list(kept.iterdir())) == KEPT and first.exists()

    history = config.state(repo).history
    moved = repo / "elsewhere.jsonl"
    history.rename(moved)
    history.symlink_to(moved)
    page = build(repo, repo / "_site", datetime.now(UTC)).read_text(encoding="utf-8")
    assert "history.jsonl" in page and "symbolic link" in page


def test_a_budget_with_an_unpriced_hard_model_is_refused_before_anything_runs(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """The hard model spends the Worker's budget: its price must be known as the Worker's is."""
    configure(project, agents={"worker": {"hard_model": "local-big"}}, budget={"total_usd": 10.0})
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert "no known price: local-big (the worker's hard_model)" in capsys.readouterr().err
    assert project.server.requests == []
