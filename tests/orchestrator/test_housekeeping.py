"""Sorry ages from `git blame`, the sweep of stale issues and old prover results, and a sweep inside a cycle."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gates.census import census
from gates.tree import DirTree
from orchestrator.blame import ages, persistent
from orchestrator.cli import main
from orchestrator.config import HousekeepingConfig
from orchestrator.git import Git, GitTree
from orchestrator.housekeeping import TRAILER, due, last_sweep, mentions, sweep
from orchestrator.report import site
from state.files import open_issues
from state.history import HistoryRecord, Outcome
from state.paths import StatePaths
from state.prover_jobs import JobStatus, ProverJob, ProverJobs, Target
from tests.conftest import GIT_ENV, git, write
from tests.orchestrator.harness import A, Project, config_text, evaluation, make_project, strategy, user_text
from tests.standin.anthropic_server import AnthropicStandin, Reply, text_reply

NOW = datetime.now(UTC)
OLD = """\
namespace Book

theorem kept (n : Nat) : n = n := by
  sorry

theorem edited : True := by
  exact sorry

theorem moved : 1 = 1 := by
  refine sorry

end Book
"""


def commit_at(repo: Path, when: datetime, message: str) -> str:
    """Commit everything as of `when` (author and committer dates)."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S+0000")
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=env, check=True)
    return git(repo, "rev-parse", "HEAD").strip()


def test_blame_ages_a_line_by_its_last_change(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"Book/A.lean": OLD, "Book/B.lean": "theorem fine : True := trivial\n"})
    first = commit_at(repo, NOW - timedelta(days=30), "the first draft")
    # `moved` goes above `kept`, `edited` gets a new proof attempt: both lines are young, `kept`'s is not.
    moved = OLD.replace("theorem moved : 1 = 1 := by\n  refine sorry\n\n", "").replace(
        "theorem kept", "theorem moved : 1 = 1 := by\n  refine sorry\n\ntheorem kept").replace(
        "  exact sorry", "  exact sorry -- needs the lemma")
    write(repo, {"Book/A.lean": moved})
    second = commit_at(repo, NOW - timedelta(days=2), "reorder and retry")
    git_ = Git(repo)

    found = ages(git_, second, census(GitTree(git_, second)), NOW)

    assert [(a.declaration, a.line, a.commit, round(a.age_days)) for a in found] == [
        ("Book.kept", 7, first, 30), ("Book.moved", 4, second, 2), ("Book.edited", 10, second, 2)]
    assert found[0].summary == "the first draft" and found[0].file == "Book/A.lean"
    assert [a.declaration for a in persistent(git_, second, census(GitTree(git_, second)), NOW, 14)] == ["Book.kept"]
    # At the first commit every sorry is the draft's.
    assert {round(a.age_days) for a in ages(git_, first, census(GitTree(git_, first)), NOW)} == {30}

    # The working tree: an uncommitted sorry is new; the committed ones keep their age.
    write(repo, {"Book/B.lean": "theorem fine : True := by\n  sorry\n"})
    live = ages(git_, None, census(GitTree(git_, second)).replace(DirTree(repo), ["Book/B.lean"], []), NOW)
    fresh = next(a for a in live if a.file == "Book/B.lean")
    assert fresh.age_days < 1 and set(fresh.commit) == {"0"}
    assert len(live) == 4


def test_blame_keeps_one_entry_per_content_and_blames_again_one_it_cannot_read(tmp_path: Path) -> None:
    from orchestrator import blame

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"Book/A.lean": OLD, "Book/B.lean": "theorem b : True := by\n  sorry\n"})
    first = commit_at(repo, NOW - timedelta(days=30), "the first draft")
    git_ = Git(repo)
    found = ages(git_, first, census(GitTree(git_, first)), NOW)
    folder = repo / ".git" / "autoformalize" / "blame"
    entries = sorted(folder.glob("*.json"))
    assert len(entries) == 2  # one per file with holes
    entries[0].write_text('{"key": "not this one", "lines": {}}')
    entries[1].write_text("{cut short")
    blame._LIVE.clear()  # a new process
    assert ages(git_, first, census(GitTree(git_, first)), NOW) == found
    assert all(json.loads(e.read_text())["lines"] for e in entries)  # blamed again, written whole
    write(repo, {"Book/B.lean": "theorem b : True := by\n  exact sorry\n"})
    second = commit_at(repo, NOW - timedelta(days=1), "retry")
    again = ages(git_, second, census(GitTree(git_, second)), NOW)
    assert [round(a.age_days) for a in again if a.file == "Book/B.lean"] == [1]
    assert len(list(folder.glob("*.json"))) == 3  # the new content of B added, nothing rewritten


def test_status_lists_persistent_sorries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"Book/A.lean": OLD})
    first = commit_at(repo, NOW - timedelta(days=30), "the first draft")
    write(repo, {"Book/A.lean": OLD.replace("  exact sorry", "  exact sorry -- soon")})  # uncommitted: new

    assert main(["status", "--json", "--repo", str(repo)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert [(a["declaration"], a["line"], a["commit"], round(a["age_days"])) for a in status["persistent_sorries"]
            ] == [("Book.kept", 4, first, 30), ("Book.moved", 10, first, 30)]
    assert main(["status", "--repo", str(repo)]) == 0
    assert ("persistent 2 unchanged for 14+ days: Book.kept (Book/A.lean:4, 30 d), Book.moved (Book/A.lean:10, 30 d)"
            in capsys.readouterr().out)


# -- the sweep --------------------------------------------------------------------------------------------------------

STATE = ".prover-state"
ISSUES = f"{STATE}/issues"


def test_the_dashboard_shows_persistent_sorries_and_files_to_split(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"Book/A.lean": OLD, "autoformalize.toml": "[gates]\nfile_warn_lines = 10\nfile_cap_lines = 11\n",
                 "Book/B.lean": "theorem fine : True := trivial\n" * 11})
    commit_at(repo, NOW - timedelta(days=30), "the first draft")

    page = site.render(site.gather(repo, NOW))

    row = re.search(r'<table id="persistent-table">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert row is not None and [re.sub(r"<[^>]+>", " ", r).split()[:3] for r in row.group(1).split("</tr>")[:-1]] == [
        ["Book.kept", "Book/A.lean:4", "30"], ["Book.edited", "Book/A.lean:7", "30"],
        ["Book.moved", "Book/A.lean:10", "30"]]
    assert "<code>Book/A.lean</code>: 12 lines, over the cap: to split" in page
    assert "<code>Book/B.lean</code>: 11 lines, over the warning" in page


def cycle_commit(repo: Path, cycle: int, when: datetime, files: dict[str, str]) -> str:
    write(repo, files)
    return commit_at(repo, when, f"autoformalize: cycle {cycle}\n\nAutoformalize-Cycle: {cycle}\n")


def swept_repo(make_repo: Callable[..., Path]) -> Path:
    """Issues of every kind (a person's rejection's among them), added at cycles 2, 3 and 45 of 50, and three
    prover jobs: two 30 days old (one of them returned proofs no Worker has tried yet) and one a day old."""
    repo = make_repo()  # Book.double (no sorry) and Book.double_pos (a sorry)
    waiting = ProverJob(id="job-waiting", prover="aristotle", submitted_cycle=2, submitted_at=NOW - timedelta(days=31),
                        targets=[Target(declaration="Book.double_pos", file="Book/Basic.lean")],
                        status=JobStatus.RETURNED, proved=["Book.double_pos"])
    cycle_commit(repo, 2, NOW - timedelta(days=30), {
        f"{ISSUES}/old-note.md": "# Slow build\nThe build takes long.\n",
        f"{ISSUES}/planned-refactor.md": "# Split the file\nIt is big.\n",
        f"{ISSUES}/unfaithful-def-1-1.md": "# `Book.double` differs from the book\n",
        f"{ISSUES}/review-def-1-1.md": "# A person rejected `Book.double`\n",  # old, its target has no sorry
        f"{STATE}/prover_results/job-old/out.json": "{}\n",
        f"{STATE}/prover_results/job-waiting/Book/Basic.lean": "-- proved\n",
        f"{STATE}/prover_jobs.json": ProverJobs(jobs=[waiting]).model_dump_json()})
    cycle_commit(repo, 3, NOW - timedelta(days=29), {
        f"{ISSUES}/consultant_advice_cycle_003.md": "Try another approach.\n",
        f"{ISSUES}/resolved.md": "# Blocked\n`double` needs a lemma about `2 * n`.\n"})
    cycle_commit(repo, 45, NOW - timedelta(days=1), {
        f"{ISSUES}/blocked-double-pos.md": "# Blocked\n`Book.double_pos` needs positivity.\n",
        f"{STATE}/prover_results/job-new/out.json": "{}\n"})
    write(repo, {f"{ISSUES}/human.md": "# A human's note\nLook at the definitions.\n",
                 f"{ISSUES}/restate.md": "# Restate `Book.double` as on p. 42\n"})
    commit_at(repo, NOW - timedelta(hours=20), "a note")  # no cycle of its own: counts as cycle 45's
    return repo


def test_a_sweep_closes_stale_and_resolved_issues_and_prunes_old_results(make_repo: Callable[..., Path]) -> None:
    repo = swept_repo(make_repo)
    before = git(repo, "rev-parse", "HEAD").strip()
    g, paths = Git(repo), StatePaths(repo, STATE)
    config = HousekeepingConfig()
    text = mentions("# Strategy\nAfter this, see planned-refactor.\n", "# Plan\n", [], config.issue_stale_cycles)
    found = census(GitTree(g, before))
    old = persistent(g, before, found, NOW, config.sorry_age_days)

    done, commit = sweep(g, paths, found, 50, NOW, text, old, config)

    closed = {Path(r.path).name: r.reason for r in done.closed}
    assert set(closed) == {"old-note.md", "consultant_advice_cycle_003.md", "resolved.md"}
    assert closed["resolved.md"] == "its targets no longer hold a sorry: Book.double"
    assert closed["old-note.md"].startswith("unchanged for 48 cycles")
    assert {i.slug for i in open_issues(paths)} == {"planned-refactor", "unfaithful-def-1-1", "review-def-1-1",
                                                    "blocked-double-pos", "human", "restate"}
    moved = (repo / ISSUES / "closed" / "resolved.md").read_text()
    assert moved.startswith("# Blocked\n`double` needs a lemma") and "Closed by the sweep before cycle 50" in moved
    assert [r.path for r in done.pruned] == [f"{STATE}/prover_results/job-old"]
    assert not (repo / STATE / "prover_results/job-old").exists() and (repo / STATE / "prover_results/job-new").is_dir()
    assert (repo / STATE / "prover_results/job-waiting").is_dir()
    # One commit of its own, on the previous head, with the trailer; nothing left uncommitted.
    assert commit == git(repo, "rev-parse", "HEAD").strip() and git(repo, "rev-parse", "HEAD^").strip() == before
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "-1", "--format=%B").strip().endswith(f"{TRAILER}: {NOW.isoformat()}")
    assert last_sweep(g, commit) == NOW
    report = (repo / STATE / "sweeps" / f"sweep_{NOW:%Y%m%d-%H%M}.md").read_text()
    assert "## Issues closed (3)" in report and "`.prover-state/issues/resolved.md`: its targets" in report
    assert "## Prover results pruned (1)" in report and "job-old`: last changed 30 days ago" in report
    assert "## Persistent sorries (0, unchanged for 14+ days)" in report  # make_repo's sorry is new
    assert git(repo, "show", "--name-status", "--format=", "HEAD").split("\n")  # the moves are in the commit
    assert f"{ISSUES}/closed/old-note.md" in git(repo, "show", "--name-only", "--format=", "HEAD")


def test_a_sweep_is_due_once_per_interval(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    g = Git(repo)
    config = HousekeepingConfig(sweep_interval_hours=48)
    first = [HistoryRecord(cycle=1, started_at=NOW - timedelta(hours=50), outcome=Outcome.ACCEPTED)]
    head = g.head()
    assert not due(g, head, [], NOW, config)  # a new project: nothing to sweep yet
    assert not due(g, head, [first[0].model_copy(update={"started_at": NOW - timedelta(hours=47)})], NOW, config)
    assert due(g, head, first, NOW, config)
    assert not due(g, head, first, NOW, HousekeepingConfig(sweep_interval_hours=0))  # 0: off

    _, commit = sweep(g, StatePaths(repo, STATE), census(GitTree(g, head)), 2, NOW - timedelta(hours=47), "", [],
                      config)
    assert not due(g, commit, first, NOW, config)  # the last sweep counts, not the first cycle
    assert due(g, commit, first, NOW + timedelta(hours=1), config)
    assert not due(g, head, [], NOW + timedelta(hours=1), config)  # a branch without the sweep: as before


# -- a whole cycle ----------------------------------------------------------------------------------------------------

def test_a_cycle_lands_its_sweep_first_and_shows_the_planner_old_sorries(tmp_path: Path,
                                                                        server: AnthropicStandin) -> None:
    earlier = HistoryRecord(cycle=1, started_at=NOW - timedelta(days=3), finished_at=NOW - timedelta(days=3),
                            outcome=Outcome.NO_CHANGE)
    project: Project = make_project(tmp_path, server, config=config_text(
        housekeeping={"issue_stale_cycles": 1, "sorry_age_days": 0, "prune_after_days": 0}), files={
        f"{STATE}/history.jsonl": earlier.model_dump_json() + "\n", f"{STATE}/cycle": "1\n",
        f"{ISSUES}/easy-is-slow.md": "`Book.easy` takes long to check.\n",
        f"{ISSUES}/hard-needs-a-lemma.md": "`Book.hard` needs a lemma.\n",
        f"{STATE}/prover_results/job-1/out.json": "{}\n"})
    git(project.repo, "push", "-q", "origin", "main")
    base = project.head()
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "closed by simp"})])
    project.agents.evaluate(evaluation(1))

    record, cycle = project.cycle()

    assert record.outcome == "accepted" and project.head() == cycle.commit == project.remote_head()
    pushed = git(project.remote, "log", "--format=%s", f"{base}..main").splitlines()
    assert [s.split(":")[1].strip() for s in pushed] == ["cycle 2 accepted", "sweep before cycle 2"]
    assert record.base == git(project.repo, "rev-parse", "HEAD^").strip() != base
    assert git(project.repo, "log", "-1", "--format=%B", "HEAD^").strip().startswith(
        "autoformalize: sweep before cycle 2: 1 issues closed, 1 prover results pruned")
    assert project.changed(base, "HEAD^") == [f"{ISSUES}/closed/easy-is-slow.md", f"{ISSUES}/easy-is-slow.md",
                                              f"{STATE}/prover_results/job-1/out.json",
                                              f"{STATE}/sweeps/sweep_{cycle.started_at:%Y%m%d-%H%M}.md"]
    assert project.show("HEAD", "Book/A.lean") == A.replace("  sorry", "  simp") and project.clean()
    planner = user_text(project.agents.requests["planner"][0])
    persistent = planner.split("## Persistent sorries")[1].split("\n## ")[0]
    assert "Book.hard (Book/A.lean:8): unchanged for 0 days" in persistent
    assert "Book.other (Book/B.lean:8)" in persistent
    assert "hard-needs-a-lemma" in planner and "easy-is-slow" not in planner  # the closed issue is gone already

    project.agents.plan(strategy("Book/B.lean"))
    project.agents.work([("finish", {"report": "nothing"})])
    project.agents.evaluate(evaluation(0))
    project.cycle()
    assert git(project.remote, "log", "-1", "--format=%s", "main^").startswith("autoformalize: cycle 2")  # not due


def swept_project(tmp_path: Path, server: AnthropicStandin) -> Project:
    """A project whose next cycle sweeps: its first cycle, three days ago, opened an issue now resolved."""
    earlier = HistoryRecord(cycle=1, started_at=NOW - timedelta(days=3), outcome=Outcome.NO_CHANGE)
    project = make_project(tmp_path, server)
    cycle_commit(project.repo, 1, NOW - timedelta(days=3), {
        f"{STATE}/history.jsonl": earlier.model_dump_json() + "\n", f"{STATE}/cycle": "1\n",
        f"{ISSUES}/easy-is-slow.md": "`Book.easy` takes long to check.\n"})
    git(project.repo, "push", "-q", "origin", "main")
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "closed by simp"})])
    return project


def sweeps(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%h", f"--grep=^{TRAILER}: ").split()


def test_a_remote_that_moved_drops_the_sweep_and_the_next_cycle_sweeps_again(tmp_path: Path,
                                                                             server: AnthropicStandin) -> None:
    project = swept_project(tmp_path, server)
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(project.remote), str(other)], check=True)

    def evaluate_while_someone_pushes(request: object) -> Reply:
        write(other, {"notes.md": "A human note.\n"})
        git(other, "add", "-A")
        git(other, "commit", "-qm", "human adds notes")
        git(other, "push", "-q", "origin", "main")
        return text_reply(evaluation(1))

    project.agents.add("evaluator", evaluate_while_someone_pushes)
    record, cycle = project.cycle()

    assert record.outcome == "accepted" and project.head() == cycle.commit == project.remote_head()
    assert git(project.repo, "log", "-1", "--format=%s", "HEAD^").strip() == "human adds notes"
    assert sweeps(project.repo) == [] and (project.repo / ISSUES / "easy-is-slow.md").is_file()

    project.agents.plan(strategy("Book/B.lean"))
    project.agents.work([("finish", {"report": "nothing"})])
    project.agents.evaluate(evaluation(0))
    project.cycle()
    assert len(sweeps(project.repo)) == 1 and not (project.repo / ISSUES / "easy-is-slow.md").exists()


def test_killed_while_moving_the_branch_after_a_sweep_then_a_clean_next_cycle(tmp_path: Path,
                                                                             server: AnthropicStandin) -> None:
    from orchestrator.journal import Journal
    from tests.orchestrator.test_crash import fake_git, start_cycle, wait_for

    project = swept_project(tmp_path, server)
    project.agents.evaluate(evaluation(1))
    base = project.head()
    env = fake_git(tmp_path, "merge --ff-only")
    child = start_cycle(project, env)
    wait_for(Path(env["PAUSE_MARKER"]))
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    entry = Journal(project.repo / ".git").read()
    assert entry is not None and entry.merging and entry.base == base  # the branch's commit, not the sweep's
    assert project.head() == base and project.clean()

    project.agents.plan(strategy("Book/B.lean"))
    project.agents.work([("finish", {"report": "nothing"})])
    project.agents.evaluate(evaluation(0))
    _, cycle = project.cycle()

    assert [(r.cycle, r.outcome) for r in project.history()] == [(1, "no_change"), (2, "accepted"),
                                                                  (3, "no_change")]
    assert project.head() == cycle.commit == project.remote_head() and project.clean()
    assert len(sweeps(project.repo)) == 1 and not (project.repo / ISSUES / "easy-is-slow.md").exists()
