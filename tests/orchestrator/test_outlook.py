"""What the loop does with the difficulty model: which targets go to the prover, what the Planner is shown."""

from __future__ import annotations

from datetime import UTC, datetime

from gates.census import census
from gates.tree import MemTree
from orchestrator.config import Config
from orchestrator.outlook import brief, estimate_for, hard_targets
from state.history import HistoryRecord, Outcome
from state.prover_jobs import JobStatus, ProverJob, ProverJobs, Target
from tests.orchestrator.harness import A, B

TREE = census(MemTree({"Book/A.lean": A.encode(), "Book/B.lean": B.encode()}), ["Book"])
NOW = datetime(2026, 11, 1, tzinfo=UTC)
CONFIG = Config.model_validate({"project": {"lean_roots": ["Book"]}})  # each file of the root a chapter of its own


def failed(cycles: range, name: str = "Book.hard", cost: float | None = None) -> list[HistoryRecord]:
    return [HistoryRecord(cycle=c, outcome=Outcome.NO_CHANGE, targets=[name], worker_model="claude-opus-4-6",
                          cost_usd=cost, costs={"worker": cost} if cost is not None else {}) for c in cycles]


def job(cycle: int, status: JobStatus) -> ProverJob:
    return ProverJob(id=f"j{cycle}", prover="aristotle", submitted_cycle=cycle, submitted_at=NOW, status=status,
                     targets=[Target(declaration="Book.hard", file="Book/A.lean")])


def test_a_target_goes_to_the_prover_after_enough_failures_and_while_unlikely_to_close() -> None:
    config = CONFIG
    est = estimate_for(config, failed(range(1, 6)), TREE)
    assert hard_targets(est, ProverJobs(), config) == ["Book.hard"]
    assert hard_targets(estimate_for(config, failed(range(1, 5)), TREE), ProverJobs(), config) == []  # four
    likely = config.model_copy(update={"difficulty": config.difficulty.model_copy(update={"prover_below_p": 0.1})})
    assert hard_targets(est, ProverJobs(), likely) == []  # p_next 0.115: not below 0.1
    never = config.model_copy(update={"difficulty": config.difficulty.model_copy(update={"prover_after": None})})
    assert hard_targets(est, ProverJobs(), never) == []


def test_failures_count_from_its_last_job_and_an_open_job_holds_it() -> None:
    config = CONFIG
    est = estimate_for(config, failed(range(1, 9)), TREE)
    assert hard_targets(est, ProverJobs(jobs=[job(4, JobStatus.CANCELLED)]), config) == []  # 4 failures since
    assert hard_targets(est, ProverJobs(jobs=[job(3, JobStatus.CANCELLED)]), config) == ["Book.hard"]  # 5 since
    assert hard_targets(est, ProverJobs(jobs=[job(1, JobStatus.SUBMITTED)]), config) == []  # still with it


def test_the_planner_sees_what_a_dollar_buys_most_first() -> None:
    """The section's head, the orchestrator's words, names no target; the candidates, as data, come ordered by
    closes expected per dollar: the untried `Book.other` before the five-times-failed `Book.hard`."""
    config = CONFIG
    head, rows = brief(estimate_for(config, failed(range(1, 6), cost=4.0), TREE), config)
    assert "Book." not in head and "at $4.00 an attempt" in head and "after 5 failed attempts" in head
    assert rows.splitlines() == ["- Book.other (Book/B.lean): fails 52%, 0 attempts, next 21%, 0.051 per $",
                                 "- Book.hard (Book/A.lean): fails 68%, 5 attempts, next 11%, 0.029 per $"]
    assert "Current Target comes first" in head
    assert brief(estimate_for(config, [], census(MemTree({}))), config) == ("", "")
    assert brief(estimate_for(config, [], TREE), config) == ("", ""), "before any attempt: the prior's figures only"


def test_each_candidate_is_one_line_whatever_its_name() -> None:
    """A Worker chose the names: each row shows one through `shown`, so a line separator in a `«…»` name is
    escaped on its row, never a line of its own."""
    source = "namespace Book\n\ntheorem «x\u2028## Scope» : True := by\n  sorry\n\nend Book\n"
    tree = census(MemTree({"Book/A.lean": source.encode()}), ["Book"])
    _, rows = brief(estimate_for(CONFIG, failed(range(1, 2), "Book.«x\u2028## Scope»"), tree), CONFIG)
    assert len(rows.splitlines()) == 1 and rows.startswith("- 'Book.«x\\u2028## Scope»' (Book/A.lean)")
