"""Parallel rounds, whole: the Planner's items worked at once in their own working copies, then the merge queue."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agents.config import BudgetConfig
from agents.ledger import Budget, BudgetExceeded, Charge, Ledger, Limit
from orchestrator import mergequeue, workcopy
from orchestrator import round as round_
from orchestrator.commands import status
from orchestrator.cyclestate import Interrupted
from orchestrator.git import Git
from orchestrator.journal import Journal
from state.heartbeat import read_heartbeat
from state.history import Usage
from tests.conftest import git, write
from tests.orchestrator.harness import A, B, Project, config_text, evaluation, strategy, user_text
from tests.standin.anthropic_server import RecordedRequest, Reply, text_reply, tool_use_reply

Steps = list[list[tuple[str, dict[str, Any]]] | str]
SPARE = A.replace("end Book", "theorem spare : True := trivial\n\nend Book")


def items(*sections: tuple[str, list[str]]) -> str:
    body = "".join(f"## Item: {name}\n\n### Target\nWork on {name}.\n\n### Scope\n"
                   + "".join(f"- {s}\n" for s in scope) + "\n### Done when\nNo sorry.\n\n"
                   for name, scope in sections)
    return f"# Strategy\n\n## Target\nTwo things at once.\n\n{body}"


class Workers:
    """Each item's Worker scripted on its own: a request goes to the item its brief names."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.scripts: dict[str, deque[Reply | Callable[[RecordedRequest], Reply]]] = {}
        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()

    def work(self, name: str, *steps: list[tuple[str, dict[str, Any]]] | str | Callable[[RecordedRequest], Reply]
             ) -> None:
        self.scripts[name] = deque(s if callable(s) else text_reply(s) if isinstance(s, str) else tool_use_reply(s)
                                   for s in steps)
        self.project.agents.add("worker", *([self._route] * len(steps)))

    def _route(self, request: RecordedRequest) -> Reply:
        brief = _first_user(request)
        with self.lock:
            name = next(n for n in self.scripts if f"## Item: {n}\n" in brief)
            self.seen[name] = self.seen.get(name, 0) + 1
            step = self.scripts[name].popleft()
        return step(request) if callable(step) else step


def _first_user(request: RecordedRequest) -> str:
    first = request.body["messages"][0]["content"]
    return first if isinstance(first, str) else "\n".join(b.get("text", "") for b in first)


def _edit(path: str, old: str, new: str) -> list[tuple[str, dict[str, Any]]]:
    return [("edit_file", {"path": path, "old_string": old, "new_string": new})]


def _finish(report: str = "## Result\ndone") -> list[tuple[str, dict[str, Any]]]:
    return [("finish", {"report": report})]


def _parallel(project: Project, workers: int = 2, files: dict[str, str] | None = None, **sections: Any) -> str:
    write(project.repo, {"autoformalize.toml": config_text(parallel={"workers": workers, "max_builds": 2},
                                                           **sections), **(files or {})})
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-q", "-m", "parallel")
    git(project.repo, "push", "-q", "origin", "main")
    return project.head()


def _two_items(project: Project) -> Workers:
    """A round of two items with disjoint Scopes, each closing its file's sorry and scored 1."""
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), _finish())
    workers.work("other", _edit("Book/B.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))
    return workers


def _log(project: Project, base: str) -> list[str]:
    return git(project.repo, "log", "--format=%s", f"{base}..HEAD").splitlines()[::-1]


def test_two_items_with_disjoint_scopes_land_as_two_commits_and_two_records(project: Project) -> None:
    base = _parallel(project)
    workers = _two_items(project)

    record, c = project.cycle()

    assert [r.outcome for r in project.history()] == ["accepted", "accepted"]
    assert [(r.cycle, r.round, r.item) for r in project.history()] == [(1, 1, "hard"), (2, 1, "other")]
    assert [r.scope for r in project.history()] == [["Book/A.lean"], ["Book/B.lean"]]
    assert (record.item, [ic.item.name for ic in c.round if ic.item]) == ("other", ["hard", "other"])
    assert len(_log(project, base)) == 2 and project.head() == project.remote_head()
    assert "  sorry" not in project.show("HEAD", "Book/A.lean") and "  sorry" not in project.show("HEAD", "Book/B.lean")
    assert project.changed("HEAD~2", "HEAD~1") and "Book/A.lean" in project.changed("HEAD~2", "HEAD~1")
    assert "Book/B.lean" in project.changed("HEAD~1") and "Book/A.lean" not in project.changed("HEAD~1")
    second = project.history()[1]
    assert [g.name for g in second.gates][-1] == mergequeue.MERGE and second.gates[-1].passed  # re-gated on item 1
    assert (second.pre_sorry_count, second.post_sorry_count) == (1, 0)  # counted on the branch as item 1 left it
    assert workers.seen == {"hard": 2, "other": 2}
    assert set(project.history()[0].usage) == {"planner", "worker", "evaluator"}  # the round's Planner, once
    assert set(second.usage) == {"worker", "evaluator"} and second.usage["worker"].input == 20
    assert "Autoformalize-Item: other" in git(project.repo, "log", "-1", "--format=%B")
    strategy = project.show("HEAD", ".prover-state/strategy.md")
    assert "## Item: hard" in strategy and "## Item: other" in strategy  # the round's whole strategy
    assert project.clean()
    beat, _ = read_heartbeat(project.repo / ".prover-state/heartbeat.json")
    assert beat is not None and beat.items == {"hard": "landed", "other": "landed"}


def test_each_worker_reads_only_its_own_item(project: Project) -> None:
    _parallel(project)
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("hard", _finish())
    workers.work("other", _finish())
    project.agents.evaluate(evaluation(0))
    project.agents.evaluate(evaluation(0))

    project.cycle()

    briefs = [_first_user(r) for r in project.agents.requests["worker"]]
    assert all(("## Item: hard" in b) != ("## Item: other" in b) for b in briefs)
    assert all("Two things at once." in b for b in briefs)


def test_an_item_whose_scope_could_meet_an_earlier_ones_is_dropped_never_worked(project: Project) -> None:
    base = _parallel(project)
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("greedy", ["Book/*.lean"])))
    workers = Workers(project)
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))

    project.cycle()

    hard, greedy = project.history()
    assert (hard.outcome, greedy.outcome) == ("accepted", "rejected")
    assert greedy.item == "greedy" and greedy.gates[0].name == "scope" and not greedy.gates[0].passed
    assert "shares Book/A.lean with item 'hard'" in greedy.gates[0].detail
    assert workers.seen == {"hard": 2} and project.agents.calls["evaluator"] == 1
    assert len(_log(project, base)) == 2  # its own commit, holding its record alone
    assert project.changed("HEAD~1") == [".prover-state/cycle", ".prover-state/history.jsonl"]


def test_a_second_item_failing_on_what_the_first_landed_is_rejected_alone(project: Project) -> None:
    """Each passes against the round's base; after the first renames `spare`, the second's use of it no longer
    compiles: the merge queue's re-run of the gates rejects it, and the first stays landed."""
    base = _parallel(project, files={"Book/A.lean": SPARE})
    project.agents.plan(items(("rename", ["Book/A.lean"]), ("use", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("rename", _edit("Book/A.lean", "theorem spare", "theorem spare'"), _finish())
    workers.work("use", _edit("Book/B.lean", "end Book", "theorem more : True := Book.spare\n\nend Book"),
                 _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))

    project.cycle()

    first, second = project.history()
    assert first.outcome == "accepted" and second.outcome == "rejected", second.gates
    build = next(g for g in second.gates if g.name == "build")
    assert not build.passed and "unknown identifier 'Book.spare'" in build.detail
    assert second.gates[-1].name == mergequeue.MERGE and "fails the gates: build" in second.gates[-1].detail
    assert second.progress_score <= 0
    assert "theorem spare'" in project.show("HEAD", "Book/A.lean")
    assert "Book.spare" not in project.show("HEAD", "Book/B.lean")
    assert len(_log(project, base)) == 2 and project.head() == project.remote_head()


def _lean(imports: str, body: str) -> str:
    return f"import {imports}\n\nnamespace Book\n\n{body}\n\nend Book\n"


C = _lean("Mathlib.Tactic", "theorem c (n : ℕ) : n + 0 = n := by\n  sorry")
D = _lean("Mathlib.Tactic", "theorem d (n : ℕ) : 0 + n = n := by\n  sorry")
BOTH = _lean("Book.C\nimport Book.D", "theorem both : True := trivial")


def _runs(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_disjoint_items_land_without_compiling_the_second_again(project: Project, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither file imports the other: what the second item's gates compiled against the round's base is what it
    compiles on the branch after the first landed, so its build and kernel verdicts carry over."""
    base = _parallel(project, files={"Book/C.lean": C, "Book/D.lean": D},
                     sandbox={"mode": "none", "env": ["STANDIN_LOG"]})  # unconfined: the log is outside the copy
    log = tmp_path / "standin.log"
    monkeypatch.setenv("STANDIN_LOG", str(log))
    project.agents.plan(items(("c", ["Book/C.lean"]), ("d", ["Book/D.lean"])))
    workers = Workers(project)
    workers.work("c", _edit("Book/C.lean", "  sorry", "  simp"), _finish())
    workers.work("d", _edit("Book/D.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))
    landing = []
    land = mergequeue.requeue

    def counted(*args: Any) -> None:
        before = len(_runs(log))
        land(*args)
        landing.extend(_runs(log)[before:])

    monkeypatch.setattr(mergequeue, "requeue", counted)

    project.cycle()

    assert [r.outcome for r in project.history()] == ["accepted", "accepted"]
    assert sorted(r for r in _runs(log) if r.startswith("check Book/")) == ["check Book/C.lean", "check Book/D.lean"]
    assert landing == []  # re-applied, re-gated, and not one Lean run
    second = {g.name: g for g in project.history()[1].gates}
    assert second["build"].passed and "kept their verdict" in second["build"].detail
    assert second["kernel"].passed and "carry over" in second["kernel"].detail
    assert second[mergequeue.MERGE].passed
    assert "  sorry" not in project.show("HEAD", "Book/D.lean") and len(_log(project, base)) == 2


def test_while_an_item_is_gated_again_the_heartbeat_allows_for_all_those_gates(project: Project,
                                                                              monkeypatch: pytest.MonkeyPatch
                                                                              ) -> None:
    """The watchdog reads the phase's deadline: re-gating an item may run the build and the listings (twice each,
    a probe retried), the replay, the base's listing and the successors' compiles, each up to the build timeout. A
    shorter allowance gets a healthy merge killed as hung."""
    _parallel(project)
    _two_items(project)
    seen: list[tuple[str, int | None, float]] = []
    requeue = mergequeue.requeue

    def observed(*args: Any) -> None:
        beat, problem = read_heartbeat(project.repo / ".prover-state" / "heartbeat.json")
        assert beat is not None and problem is None
        assert beat.phase_deadline is not None and beat.phase_started_at is not None
        seen.append((beat.phase, beat.cycle, (beat.phase_deadline - beat.phase_started_at).total_seconds()))
        requeue(*args)

    monkeypatch.setattr(mergequeue, "requeue", observed)

    project.cycle()

    timeout = project.config.build.timeout_s
    assert seen == [("merge", 2, (2 * 2 + 3 + 2) * timeout)]  # probe RUNS = 2, successors RUNS = 2
    assert [r.outcome for r in project.history()] == ["accepted", "accepted"]


def test_items_harmless_alone_that_break_a_file_importing_both_are_rejected(project: Project) -> None:
    """Each item declares `Book.twin` in its own file, fine alone; a file importing both no longer compiles, and
    only it can tell: the queue compiles it again."""
    base = _parallel(project, files={"Book/C.lean": C, "Book/D.lean": D, "Book/Both.lean": BOTH})
    project.agents.plan(items(("c", ["Book/C.lean"]), ("d", ["Book/D.lean"])))
    workers = Workers(project)
    twin = "theorem twin : True := trivial\n\nend Book"
    workers.work("c", _edit("Book/C.lean", "end Book", twin), _finish())
    workers.work("d", _edit("Book/D.lean", "end Book", twin), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))

    project.cycle()

    first, second = project.history()
    assert first.outcome == "accepted" and second.outcome == "rejected", second.gates
    build = next(g for g in second.gates if g.name == "build")
    assert not build.passed and "Book/Both.lean" in build.detail and "already contains 'Book.twin'" in build.detail
    assert "twin" not in project.show("HEAD", "Book/D.lean") and len(_log(project, base)) == 2


def test_an_item_using_an_instance_the_first_removed_is_rejected(project: Project) -> None:
    """B imports A: the second item's new proof names an instance the first item removed."""
    with_instance = A.replace("end Book", "instance natInh : Inhabited ℕ := ⟨0⟩\n\nend Book")
    base = _parallel(project, files={"Book/A.lean": with_instance})
    project.agents.plan(items(("drop", ["Book/A.lean"]), ("use", ["Book/B.lean"])))
    workers = Workers(project)
    workers.work("drop", _edit("Book/A.lean", "instance natInh : Inhabited ℕ := ⟨0⟩\n\n", ""), _finish())
    workers.work("use", _edit("Book/B.lean", "end Book", "def some : Inhabited ℕ := Book.natInh\n\nend Book"),
                 _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))

    project.cycle()

    first, second = project.history()
    assert first.outcome == "accepted" and second.outcome == "rejected", second.gates
    build = next(g for g in second.gates if g.name == "build")
    assert not build.passed and "unknown identifier 'Book.natInh'" in build.detail
    assert "natInh" not in project.show("HEAD", "Book/B.lean") and len(_log(project, base)) == 2


def test_a_second_item_whose_change_conflicts_after_the_first_landed_is_rejected_alone(project: Project) -> None:
    """Disjoint Scopes, but both open the same issue file (any Worker may): the second no longer applies."""
    base = _parallel(project)
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    note = ".prover-state/issues/blocker.md"
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"),
                 [("write_file", {"path": note, "content": "# Blocker\nfrom hard\n"})], _finish())
    workers.work("other", _edit("Book/B.lean", "  sorry", "  simp"),
                 [("write_file", {"path": note, "content": "# Blocker\nfrom other\n"})], _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))

    project.cycle()

    first, second = project.history()
    assert first.outcome == "accepted" and second.outcome == "rejected", second.gates
    assert second.gates[-1].name == mergequeue.MERGE and not second.gates[-1].passed
    assert "does not apply after item(s) 'hard' landed" in (second.error or "")
    assert "from hard" in project.show("HEAD", note) and "  sorry" in project.show("HEAD", "Book/B.lean")
    assert len(_log(project, base)) == 2


class Crash(BaseException):
    """A kill: nothing after it runs."""


def test_a_crash_in_the_merge_queue_leaves_whole_items_and_the_next_cycle_records_the_rest(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _parallel(project)
    _two_items(project)
    real = mergequeue.requeue

    def killed(*args: Any) -> None:
        raise Crash()

    monkeypatch.setattr(mergequeue, "requeue", killed)  # the process dies as the second item comes up

    with pytest.raises(Crash):
        project.cycle()

    monkeypatch.setattr(mergequeue, "requeue", real)
    assert [r.item for r in project.history()] == ["hard"]  # the first item whole, the second not at all
    assert len(_log(project, base)) == 1 and "  sorry" in project.show("HEAD", "Book/B.lean")
    journal = Journal(workcopy.git_dir(Git(project.repo))).read()
    assert journal is not None and [u.cycle for u in [journal, *journal.unfinished]] == [2]
    assert journal.usage["worker"].input > 0  # what its Worker spent travels with it

    project.agents.plan(items(("hard2", ["Book/B.lean"])))
    project.agents.work(_edit("Book/B.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))
    record, _ = project.cycle()

    history = project.history()
    assert [(r.cycle, r.outcome) for r in history] == [(1, "accepted"), (2, "interrupted"), (3, "accepted")]
    assert history[1].usage["worker"].input > 0
    assert record.round is None and project.clean()
    assert Journal(workcopy.git_dir(Git(project.repo))).read() is None


def test_status_shows_the_last_rounds_items(project: Project) -> None:
    _parallel(project)
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("greedy", ["Book/**"])))
    workers = Workers(project)
    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))
    project.cycle()

    shown = json.loads(json.dumps(status.collect(project.repo, datetime.now(UTC)), default=str))
    assert shown["round"]["round"] == 1
    assert [(i["item"], i["cycle"], i["outcome"], i["engine"]) for i in shown["round"]["items"]] == [
        ("hard", 1, "accepted", "local"), ("greedy", 2, "rejected", None)]  # greedy was dropped, never worked
    assert shown["heartbeat"]["items"] == {"hard": "landed", "greedy": "rejected"}
    text = status.render(status.collect(project.repo, datetime.now(UTC)))
    assert "round      1: hard accepted (cycle 1, local), greedy rejected (cycle 2)" in text
    assert "items: hard landed, greedy rejected" in text


def test_one_worker_is_a_cycle_as_before(project: Project) -> None:
    """`workers = 1` (the default): a strategy with items is one Scope, its first, and the record has no round."""
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    project.agents.work(_edit("Book/A.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))

    record, c = project.cycle()

    assert record.outcome == "accepted" and record.round is None and record.item is None and c.round == []
    assert record.scope == ["Book/A.lean"]
    assert "item" not in git(project.repo, "log", "-1", "--format=%B").lower()


def test_the_planner_is_told_the_item_format_only_with_workers(project: Project) -> None:
    _parallel(project, workers=3)
    project.agents.plan(items(("hard", ["Book/A.lean"])))
    project.agents.work(_finish())
    project.agents.evaluate(evaluation(0))

    project.cycle()

    system = json.dumps(project.agents.requests["planner"][0].body["system"])
    assert "up to 3 Workers at once" in system and "## Item: <a short name>" in system
    assert project.history()[0].round is None  # one item: an ordinary cycle
    assert user_text(project.agents.requests["worker"][0])


def test_a_worker_editing_another_items_file_is_rejected_by_its_own_scope(project: Project) -> None:
    """Each Worker's gates hold it to its own item's Scope, not the round's union."""
    _parallel(project)
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    first = workcopy.location(Git(project.repo), "worker-0")

    def around_the_tools(request: RecordedRequest) -> Reply:  # as a coding-agent CLI with file access could
        (first / "Book/B.lean").write_text(B.replace("  sorry", "  simp"))
        return tool_use_reply(_finish())

    workers.work("hard", around_the_tools)
    workers.work("other", _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(0))
    write(project.repo, {"autoformalize.toml": config_text(parallel={"workers": 2}, gates={"repair_rounds": 0})})
    git(project.repo, "commit", "-qam", "no repair")
    git(project.repo, "push", "-q", "origin", "main")

    project.cycle()

    hard = project.history()[0]
    assert hard.outcome == "rejected"
    assert "changed outside the Scope: Book/B.lean" in next(g.detail for g in hard.gates if g.name == "scope")
    assert "  sorry" in project.show("HEAD", "Book/B.lean")


def test_a_stop_while_items_work_lands_none_and_the_next_cycle_records_each(project: Project) -> None:
    base = _parallel(project)
    project.agents.plan(items(("hard", ["Book/A.lean"]), ("other", ["Book/B.lean"])))
    workers = Workers(project)
    stop, started = threading.Event(), threading.Event()

    def starting(request: RecordedRequest) -> Reply:
        started.set()
        return tool_use_reply(_edit("Book/B.lean", "  sorry", "  simp"))

    def stopping(request: RecordedRequest) -> Reply:
        started.wait(30)
        stop.set()  # SIGTERM arrives while both Workers work
        return tool_use_reply(_finish())

    workers.work("hard", _edit("Book/A.lean", "  sorry", "  simp"), stopping)
    workers.work("other", starting, _finish())

    with pytest.raises(Interrupted):
        project.cycle(stop=stop)
    project.agents.scripts["worker"].clear()

    assert project.head() == base and project.history() == [] and project.clean()
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work(_edit("Book/A.lean", "  sorry", "  simp"), _finish())
    project.agents.evaluate(evaluation(1))
    write(project.repo, {"autoformalize.toml": config_text()})
    git(project.repo, "commit", "-qam", "one worker")

    project.cycle()

    history = project.history()
    assert [(r.cycle, r.outcome) for r in history] == [(1, "interrupted"), (2, "interrupted"), (3, "accepted")]
    assert "planner" in history[0].usage and "planner" not in history[1].usage  # the round's Planner, once
    assert all(r.usage["worker"].input > 0 for r in history[:2])


def test_what_one_item_spends_counts_against_the_others_daily_budget() -> None:
    config = BudgetConfig(per_day_usd=1.0)
    ledgers: list[Ledger] = []
    for _ in range(2):
        ledgers.append(Ledger(budget=round_._shared(Budget(config, today_usd=0.2), ledgers)))
    ledgers[0].add(Charge("worker", "anthropic", "m", Usage(), 0.7))
    ledgers[1].admit("worker", 0.05)
    with pytest.raises(BudgetExceeded, match=r"today's spend would reach \$1\.10"):
        ledgers[1].admit("worker", 0.2)  # alone it would have room: 0.2 + 0.2 of 1.0
    assert ledgers[1].refused is Limit.DAY


def test_items_worked_elsewhere_each_get_a_part_of_what_the_budget_has_left() -> None:
    """Jobs on other machines do not see what the others spend: four at once may together spend what is left of
    the day and the total, no more."""
    config = BudgetConfig(per_day_usd=1.0, total_usd=10.0)
    ledgers: list[Ledger] = []
    for _ in range(4):
        ledgers.append(Ledger(budget=round_._shared(Budget(config, today_usd=0.2, total_usd=9.0), ledgers)))
    ledgers[0].add(Charge("planner", "anthropic", "m", Usage(), 0.2))
    jobs = [Ledger(budget=ledger.budget.share(4)) for ledger in ledgers if ledger.budget is not None]
    for job in jobs[1:]:  # each item may spend up to (1.0 - 0.2 - 0.2) / 4 today
        job.admit("worker", 0.14)
        with pytest.raises(BudgetExceeded):
            job.admit("worker", 0.16)
    assert jobs[1].refused is Limit.DAY
    uncapped = Budget(BudgetConfig(per_cycle_usd=1.0), today_usd=3.0, total_usd=7.0).share(4)
    assert (uncapped.today_usd, uncapped.total_usd) == (3.0, 7.0)


Q = _lean("Mathlib.Tactic", "theorem qux (n : ℕ) : n * 1 = n := by\n  simp")
U = _lean("Book.Q", "theorem spare_u : True := trivial")


def test_an_item_weakening_a_statement_a_landed_item_now_uses_is_rejected(project: Project) -> None:
    """The successors of the second item's statement landed after its base: the queue compiles the file holding
    them again, against the weakened statement, and it breaks."""
    _parallel(project, files={"Book/Q.lean": Q, "Book/U.lean": U}, gates={"successors": "strict"})
    project.agents.plan(items(("u", ["Book/U.lean"]), ("q", ["Book/Q.lean"])))
    workers = Workers(project)
    workers.work("u", _edit("Book/U.lean", "end Book", "theorem three : 3 * 1 = 3 := qux 3\n\nend Book"), _finish())
    workers.work("q", _edit("Book/Q.lean", "(n : ℕ) : n * 1", "(n : ℕ) (h : 0 < n) : n * 1"), _finish())
    project.agents.evaluate(evaluation(1))
    project.agents.evaluate(evaluation(1))

    project.cycle()

    first, second = project.history()
    assert first.outcome == "accepted" and second.outcome == "rejected", second.gates
    failed = {g.name: g.detail for g in second.gates if not g.passed}
    assert "Book/U.lean" in failed.get("build", "") and "type mismatch" in failed["build"], failed
    assert "(h : 0 < n)" not in project.show("HEAD", "Book/Q.lean")
