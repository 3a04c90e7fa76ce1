"""Round items worked elsewhere: each Worker a submitit job (its local executor: a subprocess of its own, with the
stand-in model reached through the environment and the stand-in Lean), its change returned as a patch that the
coordinator applies, gates and lands through the merge queue."""

from __future__ import annotations

import dataclasses
import functools
import pickle
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from orchestrator import remote, workcopy
from orchestrator.commands import status
from orchestrator.cycle import Options
from orchestrator.engine import SubmititEngine
from orchestrator.git import Git
from orchestrator.round import run as run_round
from tests.conftest import git, write
from tests.orchestrator.harness import Project, config_text, evaluation
from tests.orchestrator.test_round import Workers, _edit, _finish, _log, items

PATCH = (b"diff --git a/Book/A.lean b/Book/A.lean\n--- a/Book/A.lean\n+++ b/Book/A.lean\n"
         b"@@ -1,3 +1,3 @@\n-import Nothing.Here\n+import Mathlib.Tactic\n \n namespace Nowhere\n")


def _submitit(project: Project, tmp_path: Path) -> str:
    engine = {"engine": "submitit", "submitit": {"cluster": "local", "folder": str(tmp_path / "jobs")}}
    write(project.repo, {"autoformalize.toml": config_text(parallel={"workers": 2, "max_builds": 2, **engine})})
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-q", "-m", "submitit")
    git(project.repo, "push", "-q", "origin", "main")
    return project.head()


def _script(project: Project) -> None:
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), _finish())
    workers.work("other", _edit("Book/B.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))


def test_two_items_worked_as_submitit_jobs_land_as_two_commits_with_their_engine(project: Project,
                                                                                 tmp_path: Path) -> None:
    base = _submitit(project, tmp_path)
    _script(project)
    project.agents.evaluate(evaluation(1))

    project.cycle()

    history = project.history()
    assert [(r.item, r.outcome, r.worked_by) for r in history] == [("hard", "accepted", "submitit"),
                                                                ("other", "accepted", "submitit")]
    assert len(_log(project, base)) == 2 and project.head() == project.remote_head() and project.clean()
    assert "  sorry" not in project.show("HEAD", "Book/A.lean") and "  sorry" not in project.show("HEAD", "Book/B.lean")
    assert all(r.worker_stop == "finished" and r.tool_calls["edit_file"].count == 1 for r in history)
    assert all(r.usage["worker"].input > 0 for r in history)  # the jobs' model calls, charged here
    assert len(list((tmp_path / "jobs").glob("*/*_result.pkl"))) == 2  # two jobs, not threads of this process
    assert len(list((tmp_path / "jobs/results").glob("*/change.patch"))) == 2  # each left its result as files
    assert "hard accepted (cycle 1, submitit)" in status.render(status.collect(project.repo, datetime.now(UTC)))


class Tampered(SubmititEngine):
    """An engine whose job for one item is replaced: a node that fails, or sends back a patch of another tree."""

    def __init__(self, project: Project, item: str, job: Callable[[remote.Job, Path], object]) -> None:
        super().__init__(project.config.parallel.submitit)
        self.item, self.job = item, job

    def submit(self, item: str, job: Callable[[Path], object]) -> str:
        if item == self.item:
            assert isinstance(job, functools.partial)
            job = functools.partial(self.job, *job.args)
        return super().submit(item, job)


def _crash(j: remote.Job, out: Path) -> None:
    raise RuntimeError("the node was lost")


def _foreign(j: remote.Job, out: Path) -> None:
    remote.save_result(out, dataclasses.replace(remote.run(j), patch=PATCH))


def _round(project: Project, engine: SubmititEngine) -> None:
    from orchestrator import cycle
    from orchestrator.liveness import Beat

    config = project.config
    with Beat(config.state(project.repo).heartbeat, 1, project.deps().clock) as beat:
        c = cycle.Cycle(project.repo, config, project.deps(), Options(), cycle.Git(project.repo),
                        config.state(project.repo), cycle.Journal(cycle.workcopy.git_dir(cycle.Git(project.repo))),
                        project.deps().clock.now())
        cycle.sync(c)
        cycle.baseline(c)
        cycle.sweep(c)
        cycle.open_desk(c)
        run_round(c, beat, engine)


def test_a_failed_job_rejects_its_item_alone(project: Project, tmp_path: Path) -> None:
    _submitit(project, tmp_path)
    _script(project)

    _round(project, Tampered(project, "hard", _crash))

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "accepted")
    assert hard.gates[-1].name == remote.REMOTE and not hard.gates[-1].passed
    assert "the submitit job of item 'hard' failed" in hard.gates[-1].detail and "node was lost" in hard.error
    assert "  sorry" in project.show("HEAD", "Book/A.lean") and "  sorry" not in project.show("HEAD", "Book/B.lean")


def test_a_patch_that_does_not_apply_rejects_its_item_alone(project: Project, tmp_path: Path) -> None:
    _submitit(project, tmp_path)
    _script(project)
    project.agents.evaluate(evaluation(0))

    _round(project, Tampered(project, "hard", _foreign))

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "accepted")
    assert hard.gates[-1].name == remote.REMOTE
    assert "the Worker's patch from the job does not apply at the round's base" in hard.error
    assert project.show("HEAD", "Book/A.lean").startswith("import Mathlib.Tactic")
    assert "  sorry" in project.show("HEAD", "Book/A.lean") and "  sorry" not in project.show("HEAD", "Book/B.lean")


def _planting(patch: bytes, j: remote.Job, out: Path) -> None:
    """A node that sends back the item's honest result with `patch` in place of its change."""
    remote.save_result(out, dataclasses.replace(remote.run(j), patch=patch))


def _forged_patch(project: Project, tmp_path: Path, files: dict[str, str]) -> bytes:
    checkout = tmp_path / "forger"
    subprocess.run(["git", "clone", "-q", str(project.remote), str(checkout)], check=True)
    write(checkout, {"Book/A.lean": project.show("HEAD", "Book/A.lean").replace("  sorry", "  simp"), **files})
    git(checkout, "add", "-A", "--force")
    return subprocess.run(["git", "diff", "--binary", "--cached", "HEAD"], cwd=checkout, check=True,
                          capture_output=True).stdout


def test_a_submitit_result_planting_build_outputs_is_refused_and_leaves_nothing(project: Project,
                                                                                tmp_path: Path) -> None:
    _submitit(project, tmp_path)
    _script(project)
    project.agents.evaluate(evaluation(0))
    planted = ".lake/build/lib/lean/Book/B.olean"
    patch = _forged_patch(project, tmp_path, {planted: "forged", ".lake/build/lib/lean/Book/B.trace": "{}"})

    _round(project, Tampered(project, "hard", functools.partial(_planting, patch)))

    hard, other = project.history()
    assert (hard.outcome, other.outcome) == ("rejected", "accepted")
    assert hard.gates[-1].name == remote.REMOTE and f"{planted} (under .lake" in hard.error, hard.error
    work = workcopy.location(Git(project.repo), "worker-0")
    assert not (project.repo / planted).exists()
    assert not (work / planted).exists() or (work / planted).read_text() != "forged"  # Lake's own, built since
    assert "  sorry" in project.show("HEAD", "Book/A.lean") and "  sorry" not in project.show("HEAD", "Book/B.lean")


class Payload:
    """What loading a pickle of it does: touch `marker`. Any pickle can carry such a call."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Callable[..., object], tuple[Path]]:
        return Path.touch, (self.marker,)


class Pickling(SubmititEngine):
    """A node that also leaves a pickle where submitit keeps what each job returned, for whoever loads it."""

    def __init__(self, project: Project, marker: Path) -> None:
        super().__init__(project.config.parallel.submitit)
        self.marker = marker
        self.folder = Path(project.config.parallel.submitit.folder)  # each job's files in a folder named by its id

    def collect(self, ticket: str) -> Path:
        while not self.poll(ticket):
            time.sleep(0.1)
        job_id = ticket.split(":")[0]
        for found in (self.folder / job_id).glob("*_result.pkl"):
            found.write_bytes(pickle.dumps(("success", Payload(self.marker))))
        return super().collect(ticket)


def test_what_a_submitit_job_returns_is_never_unpickled_here(project: Project, tmp_path: Path) -> None:
    """The coordinator reads each job's result as files it validates; a pickle there, whatever it holds, is never
    loaded (loading one runs whatever its writer chose)."""
    _submitit(project, tmp_path)
    _script(project)
    project.agents.evaluate(evaluation(1))
    marker = tmp_path / "the-pickle-ran"

    _round(project, Pickling(project, marker))

    assert len(list((tmp_path / "jobs").glob("*/*_result.pkl"))) == 2  # submitit's, as forged
    assert not marker.exists()
    assert [(r.outcome, r.error) for r in project.history()] == [("accepted", None), ("accepted", None)]
