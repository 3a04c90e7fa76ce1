"""Whole cycles racing the external prover: the real aristotlelib client against the stand-in Aristotle server."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from orchestrator.commands import status
from orchestrator.cycle import Interrupted, Options, run_cycle
from orchestrator.deps import Deps, SystemClock
from orchestrator.report import site
from state.history import HistoryRecord, Outcome
from state.prover_jobs import JobStatus, ProverJob, ProverJobs, Use, read_jobs
from tests.conftest import git, write
from tests.engines import CLAUDE, CLAUDE_MODEL, need
from tests.orchestrator.harness import A, Project, config_text, evaluation, make_project, strategy, user_text
from tests.standin.anthropic_server import AnthropicStandin, RecordedRequest, Reply, text_reply
from tests.standin.aristotle_server import AristotleStandin

KEY = "arist-test-key-never-print"
PROVED = A.replace("  sorry", "  simp")
WRONG = A.replace("  sorry", "  exact absurd_marker")  # the stand-in Lean checker rejects it


@pytest.fixture
def aristotle(monkeypatch: pytest.MonkeyPatch) -> Iterator[AristotleStandin]:
    with AristotleStandin(api_key=KEY) as standin:
        monkeypatch.setenv("ARISTOTLE_API_KEY", KEY)
        yield standin


def with_prover(tmp_path: Path, server: AnthropicStandin, url: str, **sections: dict[str, object]) -> Project:
    return make_project(tmp_path, server, config=config_text(prover={"base_url": url}, **sections))


def jobs(project: Project) -> list[ProverJob]:
    return read_jobs(project.repo / ".prover-state/prover_jobs.json").jobs


def idle_cycle(project: Project, deps: Deps | None = None, *, plan: str = strategy("Book/A.lean")) -> None:
    project.agents.plan(plan)
    project.agents.work([("finish", {"report": "nothing this time"})])
    project.agents.evaluate(evaluation(0))
    run_cycle(project.repo, project.config, deps or project.deps(), Options())


class Later(SystemClock):
    def __init__(self, hours: float) -> None:
        self.shift = timedelta(hours=hours)

    def now(self) -> datetime:
        return super().now() + self.shift


def test_a_returned_proof_applied_by_the_worker_lands_and_the_job_is_used(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("submit_to_prover", {"declarations": "hard"})],
                        [("finish", {"report": "handed Book.hard to the prover"})])
    project.agents.evaluate(evaluation(0))
    first, _ = project.cycle()

    (job,) = jobs(project)
    assert (job.status, job.targets[0].declaration, job.submitted_cycle) == (JobStatus.SUBMITTED, "Book.hard", 1)
    assert first.prover_jobs == {"submitted": [job.id]}
    assert aristotle.jobs[job.id].files["Book/A.lean"] == A.encode()

    aristotle.finish(job.id, {"Book/A.lean": PROVED, "Book/B.lean": "unrelated"})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("apply_prover_result", {"declaration": "Book.hard"})],
                        [("finish", {"report": "applied the prover's proof"})])
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()

    assert record.outcome == "accepted", record.gates
    assert project.show("HEAD", "Book/A.lean") == PROVED
    (job,) = jobs(project)
    assert (job.status, job.proved, job.use, job.used_cycle) == (JobStatus.RETURNED, ["Book.hard"], Use.USED, 2)
    assert record.prover_jobs == {"used": [job.id]}
    assert project.show("HEAD", f".prover-state/prover_results/{job.id}/Book/A.lean") == PROVED
    brief = user_text(project.agents.requests["worker"][-2])
    assert f"returned job {job.id} proves Book.hard" in brief
    assert project.clean()
    prover = status.collect(project.repo, datetime.now(UTC))["prover"]
    assert prover == {"backend": "aristotle", "off": None, "jobs": 1, "by_status": {"returned": 1},
                      "by_use": {"used": 1}, "sorries_closed": 1}
    page = site.render(site.gather(project.repo, datetime.now(UTC)))
    assert f'data-job="{job.id}"' in page and "its proofs closed 1 sorry." in page


def test_a_proof_that_fails_the_build_is_rejected_and_the_job_unused(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url, gates={"repair_rounds": 0})
    idle_cycle(project, plan=strategy("Book/A.lean") + "\nPROVER: Book.hard\n")
    (job,) = jobs(project)
    aristotle.finish(job.id, {"Book/A.lean": WRONG})

    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("apply_prover_result", {"declaration": "hard"})], [("finish", {"report": "applied"})])
    project.agents.evaluate(evaluation(0))
    record, _ = project.cycle()

    assert record.outcome == "rejected"
    assert [g.name for g in record.gates if not g.passed] == ["build"]
    assert project.show("HEAD", "Book/A.lean") == A
    (job,) = jobs(project)
    assert (job.status, job.use) == (JobStatus.RETURNED, Use.UNUSED)
    assert "did not land" in job.note and record.prover_jobs == {}


def test_a_job_that_never_returns_is_cancelled_after_max_wait_hours(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url)
    idle_cycle(project, plan=strategy("Book/A.lean") + "\nPROVER: Book.hard\n")
    (job,) = jobs(project)

    idle_cycle(project)  # within the wait: polled, still running
    assert jobs(project)[0].status is JobStatus.SUBMITTED
    deps = project.deps()
    deps.clock = Later(hours=7)  # past the default max_wait_hours of 6
    idle_cycle(project, deps)

    (job,) = jobs(project)
    assert job.status is JobStatus.CANCELLED and "no result after 7.0 h" in job.note
    assert aristotle.jobs[job.id].status == "CANCELED"


def test_a_job_whose_target_the_worker_closed_is_cancelled(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url)
    idle_cycle(project, plan=strategy("Book/A.lean") + "\nPROVER: Book.hard\n")
    project.commit_files({"Book/A.lean": PROVED}, "closed by hand")

    idle_cycle(project)

    (job,) = jobs(project)
    assert job.status is JobStatus.CANCELLED and "closed before it returned" in job.note


def test_without_a_key_the_prover_is_off_and_says_so_once(
        tmp_path: Path, server: AnthropicStandin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARISTOTLE_API_KEY", raising=False)
    project = make_project(tmp_path, server)
    with capture_logs() as logs:
        deps = project.deps()
        project.agents.plan(strategy("Book/A.lean"))
        project.agents.work([("submit_to_prover", {"declarations": "Book.hard"})], [("finish", {"report": "x"})])
        project.agents.evaluate(evaluation(0))
        run_cycle(project.repo, project.config, deps, Options())
        idle_cycle(project, deps)

    assert not [e for e in logs if e["event"] == "prover.off"]  # the usual case, not logged in every cycle
    planner, worker = project.agents.requests["planner"][0], project.agents.requests["worker"][0]
    assert "External prover" not in user_text(planner) + user_text(worker)  # nothing a role could do about it
    assert "submit_to_prover" not in [t["name"] for t in worker.body["tools"]]
    refusal = user_text(project.agents.requests["worker"][1])  # a call anyway is refused, and says why
    assert "refused: the external prover is off: ARISTOTLE_API_KEY is not set" in refusal
    assert not (project.repo / ".prover-state/prover_jobs.json").exists()


def test_the_cycle_completes_when_the_prover_is_down(
        tmp_path: Path, server: AnthropicStandin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARISTOTLE_API_KEY", KEY)
    with AristotleStandin(api_key=KEY) as gone:
        url = gone.base_url
    ledger = {"jobs": [{"id": "prj-9", "prover": "aristotle", "submitted_cycle": 1,
                        "submitted_at": "2030-01-01T00:00:00+00:00",
                        "targets": [{"declaration": "Book.hard", "file": "Book/A.lean"}]}]}
    project = with_prover(tmp_path, server, url)
    project.commit_files({".prover-state/prover_jobs.json": json.dumps(ledger)}, "a job in flight")
    project.agents.plan(strategy("Book/A.lean") + "\nPROVER: Book.other\n")
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "closed by simp"})])
    project.agents.evaluate(evaluation(1))

    record, _ = project.cycle()

    assert record.outcome == "accepted"
    planner = user_text(project.agents.requests["planner"][0])
    assert "job prj-9 could not be polled" in planner
    assert "PROVER: Book.other not submitted" in user_text(project.agents.requests["worker"][0])
    assert [j.status for j in jobs(project)] == [JobStatus.SUBMITTED]
    assert project.clean()


def test_a_job_submitted_by_a_cycle_that_never_landed_is_adopted_by_the_next(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url)
    options = Options()

    def stop_then_answer(request: RecordedRequest) -> Reply:  # a stop request arrives while the Evaluator thinks
        options.stop.set()
        return text_reply(evaluation(0))

    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("submit_to_prover", {"declarations": "hard"})], [("finish", {"report": "submitted"})])
    project.agents.add("evaluator", stop_then_answer)
    with pytest.raises(Interrupted):
        run_cycle(project.repo, project.config, project.deps(), options)
    assert jobs(project) == [] and len(aristotle.jobs) == 1

    idle_cycle(project)
    (job,) = jobs(project)
    assert (job.id, job.submitted_cycle, job.status) == (next(iter(aristotle.jobs)), 1, JobStatus.SUBMITTED)
    assert [(r.cycle, r.outcome) for r in project.history()] == [(1, "interrupted"), (2, "no_change")]


def test_a_workers_report_may_hand_sorries_to_the_prover(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("finish", {"report": "Could not close it.\nPROVER: hard\nPROVER: Book.nothing\n"})])
    project.agents.evaluate(evaluation(0))
    record, _ = project.cycle()

    (job,) = jobs(project)
    assert [t.declaration for t in job.targets] == ["Book.hard"] and record.prover_jobs == {"submitted": [job.id]}
    assert aristotle.jobs[job.id].files["Book/A.lean"] == A.encode()


def test_when_the_remote_moved_the_ledger_keeps_both_loops_jobs(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    """Another loop on the same branch settled a job and ran a cycle of its own while this one ran."""
    project = with_prover(tmp_path, server, aristotle.base_url)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("submit_to_prover", {"declarations": "hard"})], [("finish", {"report": "submitted"})])
    project.agents.evaluate(evaluation(0))
    project.cycle()
    (first,) = jobs(project)
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(project.remote), str(other)], check=True)

    theirs = ProverJobs(jobs=[first.model_copy(update={"status": JobStatus.CANCELLED, "note": "theirs"}),
                              first.model_copy(update={"id": "prj-theirs", "submitted_cycle": 2})])
    project.agents.plan(strategy("Book/B.lean"))
    project.agents.work([("submit_to_prover", {"declarations": "other"})], [("finish", {"report": "submitted"})])
    project.agents.add("evaluator", pushing_then_evaluating(other, 0, {
        ".prover-state/prover_jobs.json": theirs.model_dump_json(),
        ".prover-state/history.jsonl": (other / ".prover-state/history.jsonl").read_text()
        + HistoryRecord(cycle=2, outcome=Outcome.NO_CHANGE).to_line()}))
    record, _ = project.cycle()

    ledger = {j.id: j for j in jobs(project)}
    mine = next(j for j in ledger.values() if j.targets[0].declaration == "Book.other")
    assert set(ledger) == {first.id, "prj-theirs", mine.id}
    assert ledger[first.id].status is JobStatus.CANCELLED and ledger[first.id].note == "theirs"
    assert record.cycle == 3 and mine.submitted_cycle == 3 and record.prover_jobs == {"submitted": [mine.id]}


def submitted(project: Project) -> ProverJob:
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("submit_to_prover", {"declarations": "hard"})], [("finish", {"report": "submitted"})])
    project.agents.evaluate(evaluation(0))
    project.cycle()
    (job,) = jobs(project)
    return job


def test_a_proof_copied_without_the_tool_counts_as_used(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    """A Worker may copy the returned proof from prover_results/ rather than apply it with the tool."""
    project = with_prover(tmp_path, server, aristotle.base_url)
    job = submitted(project)
    aristotle.finish(job.id, {"Book/A.lean": PROVED})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "copied the returned proof"})])
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()

    (job,) = jobs(project)
    assert record.outcome == "accepted" and (job.use, job.closed) == (Use.USED, ["Book.hard"])


def test_a_proof_of_another_statement_is_no_proof(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url)
    job = submitted(project)
    aristotle.finish(job.id, {"Book/A.lean": A.replace("n + 0 = n := by\n  sorry", "n = n := by\n  rfl")})
    idle_cycle(project)

    (job,) = jobs(project)
    assert (job.status, job.proved, job.use) == (JobStatus.RETURNED, [], Use.UNUSED)


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """A claude-code Worker: the real CLI, against the same scripted API as the other roles."""
    need("claude", CLAUDE)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    return {"worker": {"backend": "claude-code", "model": CLAUDE_MODEL}}


def tool_results(request: RecordedRequest) -> list[tuple[str, bool]]:
    """The texts and error flags of the tool results a request of the CLI's carries."""
    out = []
    for sent in request.body["messages"]:
        for block in sent["content"] if isinstance(sent["content"], list) else []:
            if block.get("type") == "tool_result":
                inner = block.get("content")
                parts = [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner or []]
                text = "".join(p.partition("<system-reminder>")[0] for p in parts).strip()  # the CLI's own notes
                out.append((text, bool(block.get("is_error"))))
    return out


def test_a_claude_code_worker_submits_and_applies_through_the_prover_tools(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin, claude: dict[str, object]) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url, agents=claude)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("mcp__prover__submit_to_prover", {"declarations": "hard"})], "handed Book.hard over")
    project.agents.evaluate(evaluation(0))
    first, _ = project.cycle()

    (job,) = jobs(project)
    assert (job.status, job.targets[0].declaration) == (JobStatus.SUBMITTED, "Book.hard")
    assert first.prover_jobs == {"submitted": [job.id]}
    assert aristotle.jobs[job.id].files["Book/A.lean"] == A.encode()
    opening, answered = project.agents.requests["worker"][:2]
    assert tool_results(answered) == [(f"submitted job {job.id}: Book.hard", False)]
    offered = {t["name"]: t.get("description", "") for t in opening.body["tools"]}
    assert {f"mcp__prover__{name}" for name in ("submit_to_prover", "prover_result", "apply_prover_result")} <= set(
        offered)
    assert "check it with `lake env lean <file>`" in offered["mcp__prover__apply_prover_result"]
    assert "mcp__prover__apply_prover_result" in " ".join(b["text"] for b in opening.body["system"])

    aristotle.finish(job.id, {"Book/A.lean": PROVED})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("mcp__prover__apply_prover_result", {"declaration": "Book.hard"})],
                        "applied the prover's proof")
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()

    assert record.outcome == "accepted", record.gates
    assert project.show("HEAD", "Book/A.lean") == PROVED
    (job,) = jobs(project)
    assert (job.status, job.use, job.used_cycle) == (JobStatus.RETURNED, Use.USED, 2)
    assert record.prover_jobs == {"used": [job.id]}
    ((text, failed),) = tool_results(project.agents.requests["worker"][-1])
    assert not failed and text.startswith(f"replaced Book.hard in Book/A.lean by the proof of job {job.id}")
    assert project.clean()


def test_a_refused_prover_tool_reaches_a_claude_code_worker_as_an_error(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin, claude: dict[str, object]) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url, agents=claude)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("mcp__prover__submit_to_prover", {"declarations": "easy"})],
                        [("mcp__prover__prover_result", {"declaration": "hard"})], "nothing to submit")
    project.agents.evaluate(evaluation(0))
    record, _ = project.cycle()

    assert record.outcome == "no_change" and jobs(project) == [] and aristotle.jobs == {}
    assert tool_results(project.agents.requests["worker"][-1]) == [
        ("refused: 'easy' names no declaration with a sorry", True), ("refused: no returned proof of 'hard'", True)]


def pushing_then_evaluating(other: Path, score: int, files: dict[str, str]) -> Callable[[RecordedRequest], Reply]:
    """The Evaluator's reply, given after another loop pushed `files` from its clone `other`."""
    def reply(request: RecordedRequest) -> Reply:
        write(other, files)
        git(other, "commit", "-qam", "another loop's commit")
        git(other, "push", "-q", "origin", "main")
        return text_reply(evaluation(score))

    return reply


def proved_and_cloned(tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin
                      ) -> tuple[Project, Path]:
    """A project whose job for Book.hard returned a proof, and a clone of its remote to push from."""
    project = with_prover(tmp_path, server, aristotle.base_url)
    job = submitted(project)
    aristotle.finish(job.id, {"Book/A.lean": PROVED})
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(project.remote), str(other)], check=True)
    return project, other


def apply_while_the_remote_moves(project: Project, other: Path, files: dict[str, str]) -> HistoryRecord:
    """A cycle applying the returned proof of Book.hard while `files` are pushed from the clone `other`."""
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("apply_prover_result", {"declaration": "Book.hard"})], [("finish", {"report": "applied"})])
    project.agents.add("evaluator", pushing_then_evaluating(other, 1, files))
    record, _ = project.cycle()
    return record


def test_a_proof_whose_change_the_moved_remote_rejects_is_not_used(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project, other = proved_and_cloned(tmp_path, server, aristotle)

    record = apply_while_the_remote_moves(project, other, {"Book/A.lean": A.replace("  sorry", "  omega")})

    (job,) = jobs(project)
    assert record.outcome == "rejected" and (job.use, job.closed) == (Use.UNUSED, [])


def test_a_proof_landed_in_a_renumbered_cycle_is_used_by_that_cycle(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project, other = proved_and_cloned(tmp_path, server, aristotle)
    history = (other / ".prover-state/history.jsonl").read_text()

    record = apply_while_the_remote_moves(project, other, {
        ".prover-state/history.jsonl": history + HistoryRecord(cycle=2, outcome=Outcome.NO_CHANGE).to_line()})

    (job,) = jobs(project)
    assert record.outcome == "accepted" and record.cycle == 3
    assert (job.use, job.used_cycle) == (Use.USED, 3) and record.prover_jobs == {"used": [job.id]}


def test_a_target_the_worker_closed_first_is_never_credited_to_the_prover(
        tmp_path: Path, server: AnthropicStandin, aristotle: AristotleStandin) -> None:
    project = with_prover(tmp_path, server, aristotle.base_url)
    job = submitted(project)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work([("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "closed it myself"})])
    project.agents.evaluate(evaluation(1))
    project.cycle()
    aristotle.finish(job.id, {"Book/A.lean": PROVED})  # the same text, too late

    idle_cycle(project)  # harvests it: the target is closed already
    project.agents.plan(strategy("Book/B.lean"))
    project.agents.work([("edit_file", {"path": "Book/B.lean", "old_string": "  sorry", "new_string": "  simp"})],
                        [("finish", {"report": "closed another"})])
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()

    (job,) = jobs(project)
    assert record.outcome == "accepted" and (job.use, job.closed) == (Use.UNUSED, [])
