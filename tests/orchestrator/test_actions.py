"""A round as the jobs of the `github` engine's workflow: `round plan` in one checkout, `round work` for each item in
checkouts of their own (as a matrix job's runner has), `round land` back in the first — through the command line, with
the stand-in model and the stand-in Lean. The land job trusts nothing a work job left: every result is read as
bounded data and its patch gated again."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from orchestrator import actions, remote
from orchestrator.cli import main
from orchestrator.commands import status
from tests.conftest import git, write
from tests.orchestrator.harness import Project, config_text, evaluation, strategy
from tests.orchestrator.test_round import Workers, _edit, _finish, _log, items


def _github(project: Project, workers: int = 2) -> str:
    write(project.repo, {"autoformalize.toml": config_text(parallel={"workers": workers, "max_builds": 2,
                                                                     "engine": "github"})})
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-q", "-m", "github rounds")
    git(project.repo, "push", "-q", "origin", "main")
    return project.head()


def _script(project: Project, b_edit: tuple[str, str] = ("  sorry", "  simp")) -> None:
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), _finish())
    workers.work("other", _edit("Book/B.lean", *b_edit), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))


def _runner(project: Project, tmp_path: Path, k: int) -> Path:
    """A fresh checkout of the remote, as a matrix job's runner has it."""
    checkout = tmp_path / f"runner-{k}"
    subprocess.run(["git", "clone", "-q", str(project.remote), str(checkout)], check=True)
    return checkout


def _plan(project: Project, tmp_path: Path) -> Path:
    folder = tmp_path / "round"
    assert main(["round", "plan", "--out", str(folder), "--repo", str(project.repo)]) == 0
    return folder


def _work(project: Project, tmp_path: Path, folder: Path, k: int) -> Path:
    out = tmp_path / "results" / f"result-{k}"
    assert main(["round", "work", "--round", str(folder), "--item", str(k), "--out", str(out),
                 "--repo", str(_runner(project, tmp_path, k))]) == 0
    return out


def _land(project: Project, folder: Path, tmp_path: Path, digest: str | None = None) -> int:
    digest = digest or hashlib.sha256((folder / actions.ROUND).read_bytes()).hexdigest()
    return main(["round", "land", "--round", str(folder), "--results", str(tmp_path / "results"),
                 "--digest", digest, "--repo", str(project.repo)])


def test_a_round_planned_worked_in_other_checkouts_and_landed(project: Project, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    base = _github(project)
    _script(project)

    folder = _plan(project, tmp_path)

    assert json.loads((folder / actions.MATRIX).read_text()) == [0, 1]
    assert project.head() == base == project.remote_head() and project.clean()  # the plan job lands nothing
    assert not (project.repo / ".git/autoformalize/journal.json").exists()
    assert "round 1 (cycles 1–2)" in capsys.readouterr().out
    for k in (0, 1):
        _work(project, tmp_path, folder, k)
    assert project.head() == base  # nor do the Workers' jobs

    assert _land(project, folder, tmp_path) == 0

    history = project.history()
    assert [(r.cycle, r.round, r.item, r.outcome, r.worked_by) for r in history] == [
        (1, 1, "hard", "accepted", "github"), (2, 1, "other", "accepted", "github")]
    assert len(_log(project, base)) == 2 and project.head() == project.remote_head() and project.clean()
    assert "  sorry" not in project.show("HEAD", "Book/A.lean") and "  sorry" not in project.show("HEAD", "Book/B.lean")
    assert set(history[0].usage) == {"planner", "worker", "evaluator"}  # the plan job's Planner, charged once
    assert set(history[1].usage) == {"worker", "evaluator"} and history[1].usage["worker"].input > 0
    assert all(r.worker_stop == "finished" and r.tool_calls["edit_file"].count == 1 for r in history)
    assert "cycle 2 (round 1, item other): accepted" in capsys.readouterr().out
    assert "hard accepted (cycle 1, github)" in status.render(status.collect(project.repo, datetime.now(UTC)))


def test_an_item_whose_job_left_no_result_is_rejected_alone(project: Project, tmp_path: Path) -> None:
    _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    _work(project, tmp_path, folder, 1)  # item 0's job failed before it uploaded anything

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "accepted")
    assert hard.gates[-1].name == remote.REMOTE and "the github job of item 'hard' failed" in hard.error
    assert "no artifact result-0 reached the land job" in hard.error
    assert "  sorry" in project.show("HEAD", "Book/A.lean") and "  sorry" not in project.show("HEAD", "Book/B.lean")


def test_a_forged_patch_is_gated_again_and_rejected(project: Project, tmp_path: Path) -> None:
    """A work job's result says its gates passed, but its patch also closes the other item's sorry with an axiom:
    the land job applies it and its own gates reject it."""
    _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    out = _work(project, tmp_path, folder, 0)
    _work(project, tmp_path, folder, 1)
    checkout = _runner(project, tmp_path, 9)
    write(checkout, {"Book/A.lean": project.show("HEAD", "Book/A.lean").replace("  sorry", "  simp"),
                     "Book/Cheat.lean": "axiom cheat : False\n"})
    git(checkout, "add", "-A")
    (out / remote.PATCH).write_bytes(subprocess.run(["git", "diff", "--binary", "--cached", "HEAD"], cwd=checkout,
                                                    check=True, capture_output=True).stdout)
    assert json.loads((out / remote.RESULT).read_text())["outcome"] == "accepted"

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "accepted")
    assert any(g.name == "scope" and not g.passed for g in hard.gates)
    assert "Book/Cheat.lean" not in git(project.repo, "ls-files")


def test_a_result_for_another_item_or_of_another_shape_is_refused(project: Project, tmp_path: Path) -> None:
    _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    out = _work(project, tmp_path, folder, 0)
    shutil.copytree(out, tmp_path / "results" / "result-1")  # item 0's honest change, offered as item 1's
    (out / remote.RESULT).write_text(json.dumps({"session": None, "charges": "all of them"}))

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "rejected")
    assert "its result cannot be read" in hard.error
    assert "its result is for item 'hard'" in other.error and "not for 'other'" in other.error
    assert "  sorry" in project.show("HEAD", "Book/A.lean") and "  sorry" in project.show("HEAD", "Book/B.lean")


def test_a_plan_of_one_item_runs_as_a_cycle_in_the_plan_job(project: Project, tmp_path: Path) -> None:
    base = _github(project)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work(_edit("Book/A.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))

    folder = _plan(project, tmp_path)

    assert json.loads((folder / actions.MATRIX).read_text()) == []
    assert [(r.outcome, r.item) for r in project.history()] == [("accepted", None)]
    assert len(_log(project, base)) == 1 and project.head() == project.remote_head()


def test_cycle_and_run_refuse_the_github_engine_before_any_call(project: Project,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _github(project)

    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert main(["run", "--max-cycles", "1", "--repo", str(project.repo)]) == 2

    assert "`autoformalize round plan`" in capsys.readouterr().err
    assert project.server.requests == [] and project.history() == []


def test_round_commands_say_what_is_wrong_with_their_arguments(project: Project, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    assert main(["round", "plan", "--out", str(folder), "--repo", str(project.repo)]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert main(["round", "work", "--round", str(folder), "--item", "5", "--out", str(tmp_path / "x"),
                 "--repo", str(project.repo)]) == 2
    assert "item 5 of the round" in capsys.readouterr().err
    assert main(["round", "land", "--round", str(tmp_path), "--results", str(tmp_path),
                 "--repo", str(project.repo)]) == 2
    assert "holds no planned round" in capsys.readouterr().err


def test_a_job_that_fails_says_why_in_its_items_record(project: Project, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    bundle = (folder / actions.BUNDLE).read_bytes()
    (folder / actions.BUNDLE).write_bytes(b"# v2 git bundle\nnot one\n")
    out = tmp_path / "results" / "result-0"
    assert main(["round", "work", "--round", str(folder), "--item", "0", "--out", str(out),
                 "--repo", str(_runner(project, tmp_path, 0))]) == 1
    assert "error: the item's job failed" in capsys.readouterr().err
    (folder / actions.BUNDLE).write_bytes(bundle)
    _work(project, tmp_path, folder, 1)

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("error", "accepted")
    assert hard.error is not None and hard.error.startswith("the item's job failed") and "bundle" in hard.error
    assert "  sorry" in project.show("HEAD", "Book/A.lean") and "  sorry" not in project.show("HEAD", "Book/B.lean")


def test_a_round_file_changed_after_the_plan_job_is_refused(project: Project, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A round file rewritten between the jobs (to let an item restate a statement the Planner never let it) is
    not the one whose digest the plan job handed on: nothing lands, nothing is recorded."""
    base = _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    digest = hashlib.sha256((folder / actions.ROUND).read_bytes()).hexdigest()
    for k in (0, 1):
        _work(project, tmp_path, folder, k)
    planned = actions.read(folder)
    forged = planned.model_copy(update={"strategy": planned.strategy.replace(
        "### Target\nWork on hard.", "### Target\nWork on hard.\nRESTATE: Book.hard")})
    (folder / actions.ROUND).write_text(forged.model_dump_json())

    assert _land(project, folder, tmp_path, digest) == 2

    assert "is not the round the plan job wrote" in capsys.readouterr().err
    assert project.history() == [] and project.head() == base


def test_a_round_lands_once(project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Jobs re-run (GitHub's "Re-run all jobs") would land the round's results again: refused, nothing spent."""
    _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    for k in (0, 1):
        _work(project, tmp_path, folder, k)
    assert _land(project, folder, tmp_path) == 0
    head, requests = project.head(), len(project.server.requests)

    assert _land(project, folder, tmp_path) == 2

    assert "round 1 has landed already (cycles 1, 2)" in capsys.readouterr().err
    assert len(project.history()) == 2 and project.head() == head and len(project.server.requests) == requests
    assert not (project.repo / ".git/autoformalize/journal.json").exists()


def test_results_of_unbounded_spend_or_through_links_are_refused(project: Project, tmp_path: Path) -> None:
    _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    nan, linked = _work(project, tmp_path, folder, 0), _work(project, tmp_path, folder, 1)
    data = json.loads((nan / remote.RESULT).read_text())
    data["charges"][0]["cost_usd"] = float("nan")
    (nan / remote.RESULT).write_text(json.dumps(data))
    (tmp_path / "elsewhere.patch").write_bytes((linked / remote.PATCH).read_bytes())
    (linked / remote.PATCH).unlink()
    (linked / remote.PATCH).symlink_to(tmp_path / "elsewhere.patch")

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "rejected")
    assert "charges a negative or unbounded spend" in hard.error
    assert "no change.patch as a regular file" in other.error


def test_an_item_the_plan_job_dropped_is_not_taken_from_a_result(project: Project, tmp_path: Path) -> None:
    _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    for k in (0, 1):
        _work(project, tmp_path, folder, k)
    planned = actions.read(folder)
    (folder / actions.ROUND).write_text(planned.model_copy(update={"worked": [0]}).model_dump_json())

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("accepted", "rejected")
    assert "item 'other' was dropped when the round was planned" in other.error
    assert "  sorry" in project.show("HEAD", "Book/B.lean")
