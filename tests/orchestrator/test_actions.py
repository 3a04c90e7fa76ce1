"""A round as the jobs of the `github` engine's workflow: `round plan` in one checkout, `round work` for each item in
checkouts of their own (as a matrix job's runner has), `round land` back in the first — through the command line, with
the stand-in model and the stand-in Lean. The land job trusts nothing a work job left: every result is read as
bounded data and its patch gated again."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from orchestrator import actions, remote, workcopy
from orchestrator.cli import main
from orchestrator.commands import status
from orchestrator.git import Git
from tests.conftest import git, write
from tests.orchestrator.harness import IGNORED, A, Project, config_text, evaluation, strategy
from tests.orchestrator.test_round import Workers, _edit, _finish, _log, items


def _github(project: Project, workers: int = 2, **sections: dict[str, Any]) -> str:
    write(project.repo, {"autoformalize.toml": config_text(parallel={"workers": workers, "max_builds": 2,
                                                                     "engine": "github"}, **sections)})
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


def _forge(project: Project, tmp_path: Path, out: Path, files: dict[str, str], links: dict[str, Path] | None = None
           ) -> None:
    """Item 0's result given the patch a forging node would send: the item's honest change, and besides it `files`
    and `links`, added past the ignore rules."""
    checkout = _runner(project, tmp_path, 9)
    write(checkout, {"Book/A.lean": project.show("HEAD", "Book/A.lean").replace("  sorry", "  simp"), **files})
    for name, target in (links or {}).items():
        (checkout / name).symlink_to(target)
    git(checkout, "add", "-A", "--force")
    (out / remote.PATCH).write_bytes(subprocess.run(["git", "diff", "--binary", "--cached", "HEAD"], cwd=checkout,
                                                    check=True, capture_output=True).stdout)


ATTACKS = {  # what the patch writes besides the honest change; what the refusal names
    "build outputs": ({".lake/build/lib/lean/Book/B.olean": "forged", ".lake/build/lib/lean/Book/B.trace": "{}"},
                      {}, [".lake/build/lib/lean/Book/B.olean (under .lake",
                           ".lake/build/lib/lean/Book/B.trace (under .lake"]),
    "lakefile.olean": ({"lakefile.olean": "a configuration Lake reads in place of the lakefile"}, {},
                       ["lakefile.olean (a Lean build output)"]),
    "ignored path": ({"build/ir/Book/A.c": "planted"}, {},
                     [f"build/ir/Book/A.c (ignored by git: .gitignore:{len(IGNORED.splitlines()) + 1}: /build/)"]),
    "symlink": ({}, {"lakefile.lean": Path(".ssh/id_rsa")}, ["lakefile.lean (a symlink)"]),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_forged_result_writing_what_no_gate_reads_is_refused_and_leaves_nothing(project: Project, tmp_path: Path,
                                                                                  attack: str) -> None:
    """A work job's patch that also writes git-ignored build outputs, Lake's configuration output, an ignored path or
    a link to the user's key: the gates would read none of it (only what `git add -A` commits), yet it would stay in
    the working copy for every Lean run, or be committed. Refused before it is applied, naming each path."""
    files, links, named = ATTACKS[attack]
    home = Path(os.environ["HOME"])
    write(home, {".ssh/id_rsa": "PRIVATE KEY\n"})
    project.commit_files({".gitignore": (project.repo / ".gitignore").read_text() + "/build/\n"}, "ignore /build/")
    base = _github(project)
    _script(project)
    folder = _plan(project, tmp_path)
    out = _work(project, tmp_path, folder, 0)
    _work(project, tmp_path, folder, 1)
    _forge(project, tmp_path, out, files, {name: home / target for name, target in links.items()})

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "accepted")
    assert hard.gates[-1].name == remote.REMOTE and not hard.gates[-1].passed
    assert "the Worker's patch from the job writes what no gate may let land" in hard.error
    assert all(n in hard.error for n in named), hard.error
    assert "Book/A.lean" not in hard.error and "PRIVATE" not in hard.error
    work = workcopy.location(Git(project.repo), "worker-0")  # item 0's working copy, where it was gated
    for path in [*files, *links]:  # where Lake builds again since, it wrote its own
        assert not os.path.lexists(project.repo / path)
        assert not os.path.lexists(work / path) or (path in files and (work / path).read_text() != files[path])
        assert path not in git(project.repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert "  sorry" in project.show("HEAD", "Book/A.lean")  # none of its change landed
    assert "  sorry" not in project.show("HEAD", "Book/B.lean") and len(_log(project, base)) == 2
    assert project.clean() and project.head() == project.remote_head()


def test_a_forged_result_hiding_a_file_by_its_own_ignore_rules_is_refused(project: Project, tmp_path: Path) -> None:
    """The patch writes an ignore file and a file it ignores: by the base's rules nothing is ignored, by its own the
    file is never committed, so never gated, yet stays. The Scope names that ignore file: the gates would pass it."""
    _github(project)
    project.agents.plan(items(("hard", ["Book/A.lean", "Book/.gitignore"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), _finish())
    workers.work("other", _edit("Book/B.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))
    folder = _plan(project, tmp_path)
    out = _work(project, tmp_path, folder, 0)
    _work(project, tmp_path, folder, 1)
    _forge(project, tmp_path, out, {"Book/.gitignore": "/Hidden/\n",
                                    "Book/Hidden/Planted.lean": "theorem planted : True := trivial\n"})

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "accepted")
    assert "Book/Hidden/Planted.lean (ignored by git: Book/.gitignore:1: /Hidden/)" in hard.error, hard.error
    work = workcopy.location(Git(project.repo), "worker-0")
    assert not (work / "Book/Hidden").exists() and not (work / "Book/.gitignore").exists()
    assert "Book/.gitignore" not in git(project.repo, "ls-files")


def test_build_outputs_present_before_a_remote_item_are_restored_after(project: Project, tmp_path: Path) -> None:
    """The outputs a remote item's working copy held stay; what the gates' compile of its (rejected) change wrote
    there goes, as after a local session's: the coordinator records them before it applies the patch."""
    _github(project, gates={"allow_build_time_code": True, "allow_meta_code": True, "repair_rounds": 0})
    _script(project)
    folder = _plan(project, tmp_path)
    work = workcopy.location(Git(project.repo), "worker-0")
    genuine = {".lake/build/lib/lean/Book/A.olean": "genuine A", ".lake/build/lib/lean/Book/B.olean": "genuine B"}
    write(work, genuine)
    owner = (work / ".lake").stat()  # as earlier builds in the sandbox left them: its user's (as root, nobody's)
    for path in [work / ".lake/build", *(work / ".lake/build").rglob("*")]:
        os.chown(path, owner.st_uid, owner.st_gid)
    out = _work(project, tmp_path, folder, 0)
    _work(project, tmp_path, folder, 1)
    writes = ('\n#eval IO.FS.writeFile ".lake/build/lib/lean/Book/B.olean" "forged"\n'
              '#eval IO.FS.writeFile ".lake/planted.olean" "x"\n')
    _forge(project, tmp_path, out, {"Book/A.lean": A.replace("  sorry", "  exact absurd_marker") + writes})

    assert _land(project, folder, tmp_path) == 0

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "accepted")
    assert [g.name for g in hard.gates if not g.passed] == ["build"]  # the build ran, and its compile wrote
    assert (work / ".lake/build/lib/lean/Book/A.olean").read_text() == "genuine A"  # untouched: kept
    assert not (work / ".lake/build/lib/lean/Book/B.olean").exists()  # rewritten: gone, for Lake to build again
    assert not (work / ".lake/planted.olean").exists()
