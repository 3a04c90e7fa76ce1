"""The successors gate in whole cycles: a statement weakened and its users patched to fit is refused when the
statement is locked, lands with the broken user named when it is not, and a change that keeps every meaning
compiles nothing extra."""

from __future__ import annotations

import json

import pytest

from tests.gates.cheats import BASE, KERNEL_ALONE
from tests.orchestrator.harness import Project, config_text, evaluation, make_project, strategy
from tests.standin.anthropic_server import AnthropicStandin

USES = """\
import Mathlib.Tactic

namespace Book

/-- Theorem 2.1 Multiplying by one changes nothing. -/
theorem qux (n : ℕ) : n * 1 = n := by
  simp

theorem three_mul_one : 3 * 1 = 3 := qux 3

end Book
"""
WEAKENED = USES.replace("(n : ℕ) : n * 1", "(n : ℕ) (h : 0 < n) : n * 1").replace(
    ":= qux 3", ":= qux 3 (by decide)")
UNUSED_CHANGE = USES.replace("theorem three_mul_one", "theorem four_mul_one : 4 * 1 = 4 := qux 4\n\n"
                                                      "theorem three_mul_one")
UNLOCKED = {**BASE, "Book/Uses.lean": USES, "Book.lean": "import Book.A\nimport Book.Uses\n"}


def project(tmp_path, server: AnthropicStandin, mode: str = "locked", files: dict[str, str] = UNLOCKED
            ) -> Project:  # type: ignore[no-untyped-def]
    config = config_text(gates={"repair_rounds": 0, "successors": mode, **KERNEL_ALONE})
    return make_project(tmp_path, server, files={**files, "autoformalize.toml": config})


def lock(book: Project) -> None:
    """A cycle that states and proves `qux`, judged faithful, which locks it."""
    book.agents.plan(strategy("Book/**", target="State and prove Theorem 2.1."))
    book.agents.work([("write_file", {"path": "Book/Uses.lean", "content": USES}),
                      ("write_file", {"path": "Book.lean", "content": "import Book.A\nimport Book.Uses\n"})],
                     "stated it")
    book.agents.judge(True, True, 3)
    book.agents.evaluate(evaluation(1))
    record, _ = book.cycle()
    assert record.outcome == "accepted", record.gates


def weaken(book: Project, text: str = WEAKENED, reason: str = "fooled: the hypothesis looks harmless") -> None:
    """A cycle's agents restating `qux` as `text` under a declared `RESTATE:`, judged faithful by a fooled judge."""
    plan = strategy("Book/**", target="Restate Theorem 2.1.") + "\nRESTATE: Book.qux — the book assumes n positive\n"
    book.agents.plan(plan)
    book.agents.work([("write_file", {"path": "Book/Uses.lean", "content": text})], "restated it")
    book.agents.judge(True, True, 3, reason=reason)
    book.agents.evaluate(evaluation(1))


@pytest.fixture
def server_project(tmp_path, server: AnthropicStandin) -> Project:  # type: ignore[no-untyped-def]
    return project(tmp_path, server, files=BASE)


def test_a_locked_statement_weakened_with_its_users_patched_is_refused(server_project: Project) -> None:
    book = server_project
    lock(book)
    weaken(book)

    record, _ = book.cycle()

    assert record.outcome == "rejected", record.gates
    failed = {g.name: g.detail for g in record.gates if not g.passed}
    assert list(failed) == ["successors"], failed
    assert "Book.three_mul_one (Book/Uses.lean), as it was at the base, no longer elaborates against the changed " \
           "Book.qux: type mismatch" in failed["successors"]
    assert book.show("HEAD", "Book/Uses.lean") == USES


def test_the_same_change_to_an_unlocked_statement_lands_and_names_the_broken_user(tmp_path,  # type: ignore[no-untyped-def]
                                                                                 server: AnthropicStandin) -> None:
    book = project(tmp_path, server)
    weaken(book)

    record, _ = book.cycle()

    assert record.outcome == "accepted", record.gates
    verdict = next(g for g in record.gates if g.name == "successors")
    assert verdict.passed and "broken successors (evidence, not locked)" in verdict.detail
    assert "Book.three_mul_one (Book/Uses.lean)" in verdict.detail
    worker = json.dumps(next(r.body for r in server.requests if "## strategy.md" in json.dumps(r.body)),
                        ensure_ascii=False)
    assert "How the project uses these statements" in worker
    assert "Book.qux (Book/Uses.lean), used by 1 declaration(s):\\n  Book.three_mul_one (Book/Uses.lean:9): theorem " \
           "three_mul_one : 3 * 1 = 3 := qux 3" in worker
    judged = [t for r in server.requests if "LEAN 4 STATEMENT" in (t := json.dumps(r.body, ensure_ascii=False))]
    assert len(judged) == 1 and "-- Book.qux was used by Book.three_mul_one: type mismatch" in judged[0]


def test_strict_refuses_any_broken_user(tmp_path, server: AnthropicStandin) -> None:  # type: ignore[no-untyped-def]
    book = project(tmp_path, server, mode="strict")
    weaken(book)

    record, _ = book.cycle()

    assert record.outcome == "rejected"
    failed = {g.name: g.detail for g in record.gates if not g.passed}
    assert list(failed) == ["successors"] and '"strict"' in failed["successors"]


def test_a_change_that_keeps_every_meaning_compiles_nothing_extra(server_project: Project) -> None:
    book = server_project
    lock(book)
    book.agents.plan(strategy("Book/**", target="Use Theorem 2.1 again."))
    book.agents.work([("write_file", {"path": "Book/Uses.lean", "content": UNUSED_CHANGE})], "used it")
    book.agents.evaluate(evaluation(1))

    record, _ = book.cycle()

    assert record.outcome == "accepted", record.gates
    verdict = next(g for g in record.gates if g.name == "successors")
    assert verdict.detail == "no declaration the project uses means something else"


def test_a_user_deleted_with_the_weakening_is_compiled_where_it_was(server_project: Project) -> None:
    book = server_project
    lock(book)
    weaken(book, WEAKENED.replace("theorem three_mul_one : 3 * 1 = 3 := qux 3 (by decide)\n\n", ""))

    record, _ = book.cycle()

    assert record.outcome == "rejected", record.gates
    failed = {g.name: g.detail for g in record.gates if not g.passed}
    assert "successors" in failed, failed
    assert "Book.three_mul_one (Book/Uses.lean), as it was at the base, no longer elaborates" in failed["successors"]


def test_a_hypothesis_lean_fills_in_is_told_to_the_judge(server_project: Project, server: AnthropicStandin) -> None:
    # `(h : 0 < n := by decide)`: every user elaborates as it was and holds no hole; `n = 0` is dropped all the same.
    book = server_project
    lock(book)
    weaken(book, USES.replace("(n : ℕ) : n * 1", "(n : ℕ) (h : 0 < n := by decide) : n * 1"),
           reason="fooled: nothing changed for the users")

    record, _ = book.cycle()

    verdict = next(g for g in record.gates if g.name == "successors")
    assert verdict.passed and "none broke" in verdict.detail, verdict.detail
    assert "Book.qux gained a hypothesis with a default (autoParam) that Lean fills in at every use" in verdict.detail
    judged = [t for r in server.requests if "LEAN 4 STATEMENT" in (t := json.dumps(r.body, ensure_ascii=False))]
    assert "-- Book.qux gained a hypothesis with a default (autoParam) that Lean fills in at every use" in judged[-1]
