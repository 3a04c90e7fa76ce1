"""kill -9 at the worst moments, then a clean next cycle; the CLI's exit codes; the dry run; no key leaks."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from orchestrator.cli import main
from state.errors import UsageError
from state.lock import LockStatus, inspect_lock
from tests.conftest import git
from tests.orchestrator.harness import FAKE_KEY, Project, blocking, config_text, evaluation, strategy
from tests.standin.anthropic_server import Reply

EDIT = [("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})]


def start_cycle(project: Project, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "orchestrator", "cycle", "--repo", str(project.repo)],
                            env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def wait_for(condition: threading.Event | Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition.is_set() if isinstance(condition, threading.Event) else condition.exists():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {condition}")


def script_a_good_cycle(project: Project) -> None:
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work(EDIT, [("finish", {"report": "closed Book.hard"})])
    project.agents.evaluate(evaluation(1))


def kill_in_the_worker(project: Project) -> None:
    """A cycle killed (SIGKILL) while its Worker waits on the model."""
    inside, release = threading.Event(), threading.Event()
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.add("worker", blocking(inside, release))
    child = start_cycle(project)
    wait_for(inside)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    release.set()


def test_killed_during_the_worker_then_a_clean_next_cycle(project: Project) -> None:
    base = project.head()
    kill_in_the_worker(project)
    assert project.head() == base and project.remote_head() == base
    assert inspect_lock(project.repo / ".prover-state/run.lock").status is LockStatus.STALE

    script_a_good_cycle(project)
    record, cycle = project.cycle()

    assert record.cycle == 2 and record.outcome == "accepted"
    assert [(r.cycle, r.outcome) for r in project.history()] == [(1, "interrupted"), (2, "accepted")]
    assert "interrupted" in project.history()[0].summary
    assert project.head() == cycle.commit == project.remote_head() and project.clean()


def fake_git(tmp_path: Path, pause_when: str) -> dict[str, str]:
    """A `git` that pauses (and says so in a marker file) before a matching command until the process that ran it
    is gone, and then exits without running it; any other command runs the real one. (A pause that ended in the
    real command would run it long after the test killed the cycle, in the middle of whatever came next.)"""
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout.strip()
    marker = tmp_path / "paused"
    script = tmp_path / "bin" / "git"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\ncase "$*" in\n  *"{pause_when}"*) touch {marker}\n'
                      '    while kill -0 $PPID 2>/dev/null; do sleep 0.05; done; exit 137;;\nesac\n'
                      f'exec {real} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {"GIT_PYTHON_GIT_EXECUTABLE": str(script), "PAUSE_MARKER": str(marker)}


@pytest.mark.parametrize(("moment", "landed"), [("Autoformalize-Cycle", False), ("merge --ff-only", True)],
                         ids=["while-committing", "while-moving-the-branch"])
def test_killed_while_landing_then_a_clean_next_cycle(project: Project, tmp_path: Path, moment: str,
                                                      landed: bool) -> None:
    base = project.head()
    env = fake_git(tmp_path, moment)
    script_a_good_cycle(project)
    child = start_cycle(project, env)
    wait_for(Path(env["PAUSE_MARKER"]))
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert project.head() == base  # the checkout did not move

    script_a_good_cycle(project)
    record, cycle = project.cycle()

    history = [(r.cycle, r.outcome) for r in project.history()]
    if landed:  # the commit had been pushed: the branch catches up with it and no cycle is lost;
        # the second Worker then finds nothing left to edit
        assert history == [(1, "accepted"), (2, "no_change")]
    else:
        assert history == [(1, "interrupted"), (2, "accepted")]
    assert record.cycle == 2
    assert project.head() == cycle.commit == project.remote_head() and project.clean()
    assert "simp" in project.show("HEAD", "Book/A.lean")


def interrupted_merge(project: Project, cycle_version: str, checkout: str) -> None:
    """The state a kill inside `git merge --ff-only` leaves: the journal names the cycle's commit and says it
    was merging, and `Book/A.lean` in the checkout holds `checkout`."""
    from orchestrator.journal import Entry, Journal

    base = project.head()
    work = project.repo.parent / "elsewhere"
    subprocess.run(["git", "clone", "-q", str(project.repo), str(work)], check=True)
    (work / "Book/A.lean").write_text(cycle_version)
    git(work, "commit", "-qam", "a cycle's commit that never landed")
    commit = git(work, "rev-parse", "HEAD").strip()
    git(project.repo, "fetch", "-q", str(work), "main")
    (project.repo / "Book/A.lean").write_text(checkout)
    Journal(project.repo / ".git").write(Entry(cycle=1, base=base, commit=commit, pid=1, merging=True,
                                               started_at="2026-11-21T00:00:00+00:00"))


def test_a_fast_forward_cut_short_is_rolled_back(project: Project) -> None:
    interrupted_merge(project, "-- half written\n", "-- half written\n")  # the merge had written the file
    script_a_good_cycle(project)

    project.cycle()

    assert [(r.cycle, r.outcome) for r in project.history()] == [(1, "interrupted"), (2, "accepted")]
    assert project.show("HEAD", "Book/A.lean").startswith("import Mathlib") and project.clean()


def test_the_users_own_edits_are_never_rolled_back(project: Project) -> None:
    """The user edited a file the interrupted cycle's commit touches: the edit stays, and the next cycle refuses
    to start until it is committed."""
    interrupted_merge(project, "-- the cycle's version\n", "-- my own edit\n")
    with pytest.raises(UsageError, match=r"uncommitted changes in Book/A\.lean"):
        project.cycle()
    assert (project.repo / "Book/A.lean").read_text() == "-- my own edit\n"


def test_cli_exit_codes_and_messages(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    script_a_good_cycle(project)
    assert main(["cycle", "--repo", str(project.repo)]) == 0
    assert "cycle 1: accepted, score +1, sorries 2 → 1" in capsys.readouterr().out

    project.agents.add("planner", *[_overloaded() for _ in range(10)])
    assert main(["cycle", "--repo", str(project.repo)]) == 1
    err = capsys.readouterr().err
    assert "plan:" in err and "overloaded" in err.lower()
    assert project.history()[-1].outcome == "error"

    (project.repo / "Book/B.lean").write_text("-- mine\n")
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert "uncommitted changes in Book/B.lean" in capsys.readouterr().err
    git(project.repo, "checkout", "Book/B.lean")

    holder = subprocess.Popen([sys.executable, "-c", (
        f"import sys, time; sys.path[:0] = {sys.path!r}\nfrom pathlib import Path\nfrom state.lock import RunLock\n"
        f"lock = RunLock(Path({str(project.repo / '.prover-state/run.lock')!r})); lock.acquire(); "
        "print('held', flush=True); "
        "time.sleep(30)")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert main(["cycle", "--repo", str(project.repo)]) == 3
        assert f"held by pid {holder.pid}" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()


def _overloaded() -> Reply:
    from tests.standin.anthropic_server import error_reply

    return error_reply(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})


def test_a_missing_key_is_refused_before_anything_starts(project: Project, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    err = capsys.readouterr().err
    assert ("not set: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (for the consultant, evaluator, judge, planner, "
            "worker)") in err
    assert project.server.requests == [] and not (project.repo / ".prover-state").exists()


def test_dry_run_makes_no_request_and_no_change(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(project.repo)
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    out = capsys.readouterr().out
    assert project.server.requests == []
    assert _snapshot(project.repo) == before
    for phase in ("sync:", "baseline: cycle 1; 2 sorry", "sweep: not due (every 48 hours)",
                  "harvest: the external prover is off: ARISTOTLE_API_KEY is not set",
                  "plan: claude-opus-4-6, prompt", "work:",
                  "judge: claude-sonnet-4-6 on the anthropic backend reads", "evaluate:", "escalate:", "cost: about $",
                  "land:", "a cycle would start"):
        assert phase in out, phase
    low, high = (float(x) for x in re.findall(r"\$(\d+\.\d\d) \(", out.split("cost: about ")[1])[:2])
    assert 0 < low < high  # a 10-turn Worker, then all 200 turns

    project.commit_files({"autoformalize.toml": config_text(agents={"worker": {"model": "my-local-model"}})}, "local")
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    assert "unpriced, so left out: my-local-model" in capsys.readouterr().out


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()
            and "objects" not in p.parts and p.name != "index"}


def test_the_api_key_is_in_no_file_commit_or_log(project: Project, capfd: pytest.CaptureFixture[str]) -> None:
    script_a_good_cycle(project)
    assert main(["cycle", "--repo", str(project.repo)]) == 0
    out, err = capfd.readouterr()
    assert FAKE_KEY not in out + err
    for path in project.repo.rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path
    assert FAKE_KEY not in git(project.repo, "log", "-p", "--all")
    for request in project.server.requests:  # it was sent, as a header, to the endpoint only
        assert FAKE_KEY not in str(request.body)


def test_a_missing_lake_leaves_no_interrupted_cycle_and_the_dry_run_numbers_as_the_cycle_will(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    good = (project.repo / "autoformalize.toml").read_text()
    project.commit_files({"autoformalize.toml": config_text(build={"check_file": "no-such-lake env lean {file}",
                                                                   "build_all": "no-such-lake build"})}, "no lake")
    for _ in range(2):
        assert main(["cycle", "--repo", str(project.repo)]) == 1
        assert "`no-such-lake` was not found" in capsys.readouterr().err
    assert project.server.requests == [] and project.history() == []
    project.commit_files({"autoformalize.toml": good}, "lake again")
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    out = capsys.readouterr().out
    assert "interrupted" not in out and "baseline: cycle 1;" in out

    # Two cycles killed in the Worker: both are recorded as interrupted, and the dry run counts past them.
    for _ in range(2):
        kill_in_the_worker(project)
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    out = capsys.readouterr().out
    assert "sync: cycle 1, 2 were interrupted" in out and "baseline: cycle 3;" in out
    script_a_good_cycle(project)
    project.cycle()
    assert [(r.cycle, r.outcome) for r in project.history()] == [(1, "interrupted"), (2, "interrupted"),
                                                                  (3, "accepted")]


def test_a_cycle_refuses_while_the_ignore_rules_swallow_its_record(project: Project,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    ignore = project.repo / ".gitignore"
    project.commit_files({".gitignore": ignore.read_text() + "history.jsonl\n"}, "ignore the record")
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 2
    assert "  - the ignore rules exclude files a cycle must commit" in capsys.readouterr().err
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert ".prover-state/history.jsonl (by .gitignore:" in capsys.readouterr().err
    assert project.server.requests == [] and project.history() == []


def test_a_commit_that_fails_loses_no_record(project: Project, tmp_path: Path) -> None:
    # git refuses the cycle's commit (as a full disk or a broken index would); the record it was to carry is kept
    # in the journal, and the next cycle lands it.
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout.strip()
    failing = tmp_path / "bin" / "git"
    failing.parent.mkdir()
    failing.write_text(f'#!/bin/sh\ncase "$*" in\n  *"Autoformalize-Cycle"*) echo "fatal: disk full" >&2; exit 128;;\n'
                       f'esac\nexec {real} "$@"\n')
    failing.chmod(failing.stat().st_mode | stat.S_IEXEC)
    script_a_good_cycle(project)
    child = start_cycle(project, {"GIT_PYTHON_GIT_EXECUTABLE": str(failing)})
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 1 and "disk full" in out, out

    script_a_good_cycle(project)
    project.cycle()
    first, second = project.history()
    assert (first.cycle, first.outcome, second.cycle, second.outcome) == (1, "interrupted", 2, "accepted")
    assert first.summary.startswith("interrupted (accepted, then its commit failed; its changes were discarded): ")
    assert first.progress_score == 1 and [g.name for g in first.gates][:2] == ["scope", "integrity"]
    assert first.usage["worker"].output > 0  # what the cycle spent is still counted
