"""The kernel gate in whole cycles: each cheat a Worker writes is rejected, an honest proof lands, and what
Lean listed is remembered (holes only Lean sees counted, listings kept by import closure, meanings locked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.rests import Support
from gates.census import census
from gates.meaning import meanings
from gates.tree import DirTree, MemTree
from orchestrator.commands.status import collect
from orchestrator.git import Git
from orchestrator.kernelcheck import mark
from tests.conftest import git
from tests.gates.cheats import ATTACKS, BASE, HONEST, KERNEL_ALONE, A
from tests.gates.test_kernel import CARRIER, GRADE
from tests.orchestrator.harness import Project, config_text, evaluation, make_project, strategy
from tests.standin.anthropic_server import AnthropicStandin

CONFIG = config_text(gates={"repair_rounds": 0, **KERNEL_ALONE})


@pytest.fixture
def book(tmp_path: Path, server: AnthropicStandin) -> Project:
    return make_project(tmp_path, server, files={**BASE, "autoformalize.toml": CONFIG})


def worker_writes(project: Project, files: dict[str, str | None], target: str = "Close a sorry.") -> None:
    project.agents.plan(strategy("Book/**", target=target))
    project.agents.work([("write_file", {"path": path, "content": text}) for path, text in files.items()
                         if text is not None],
                        [("finish", {"report": "## Result\nclosed it"})])
    project.agents.evaluate(evaluation(1))


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_each_cheat_is_rejected_in_a_whole_cycle(book: Project, attack: str) -> None:
    files, reason = ATTACKS[attack]
    base = book.head()
    worker_writes(book, files)

    record, _ = book.cycle()

    assert record.outcome == "rejected"
    failed = {g.name: g.detail for g in record.gates if not g.passed}
    assert list(failed) == ["kernel"], failed
    assert reason in failed["kernel"]
    assert record.progress_score <= 0
    assert book.show("HEAD", "Book/A.lean") == A and book.changed(base) == book.changed(base, "HEAD")
    assert "Book/A.lean" not in book.changed(base)


def test_an_honest_proof_lands_and_what_lean_said_is_kept_in_the_git_directory(book: Project) -> None:
    worker_writes(book, {"Book/A.lean": HONEST})

    record, cycle = book.cycle()

    assert record.outcome == "accepted", record.gates
    kernel = next(g for g in record.gates if g.name == "kernel")
    assert kernel.passed and "1 closed and 0 locked statement(s) mean what they meant at the base" in kernel.detail
    assert (record.pre_sorry_count, record.post_sorry_count) == (5, 4)  # four in A, one in the harness's B
    listings = [json.loads(f.read_text()) for f in (book.repo / ".git" / "autoformalize" / "env").glob("*.json")]
    a = [m["consts"] for m in listings if m["module"] == "Book.A"]
    assert len(a) == 2  # the base's and the change's: keyed by content and imports, both kept
    assert all("Book.quad_pos" in consts and "Book.step" in consts for consts in a)
    assert {consts["Book.hard"]["axioms"] == ["propext"] for consts in a} == {True, False}  # proved in one
    assert cycle.kernel is not None and cycle.kernel.problem is None


def test_without_leanchecker_the_gates_own_replay_refuses_a_theorem_the_kernel_never_checked(
        tmp_path: Path, server: AnthropicStandin) -> None:
    book = make_project(tmp_path, server, files={**BASE, "lean-toolchain": "leanprover/lean4:v4.24.0\n",
                                                 "autoformalize.toml": CONFIG})
    worker_writes(book, ATTACKS["a theorem the kernel never checked"][0])

    refused, _ = book.cycle()

    failed = {g.name: g.detail for g in refused.gates if not g.passed}
    assert refused.outcome == "rejected" and list(failed) == ["kernel"], failed
    assert "Lean's kernel refused a constant of the project's modules" in failed["kernel"]
    assert "'Book.lt_aux'" in failed["kernel"]
    assert book.show("HEAD", "Book/A.lean") == A

    worker_writes(book, {"Book/A.lean": HONEST})
    landed, _ = book.cycle()
    kernel = next(g for g in landed.gates if g.name == "kernel")
    assert landed.outcome == "accepted", landed.gates
    assert "Lean's kernel added again the" in kernel.detail and "(the toolchain has no leanchecker)" in kernel.detail


HIDDEN = A.replace("theorem easy : True := trivial\n", "theorem easy : True := trivial\n\n"
                                                      "theorem sneaky : 1 = 1 := by\n  stop\n  rfl\n")


def test_a_declaration_lean_says_relies_on_sorry_counts_as_a_hole_until_it_is_proved(tmp_path: Path,
                                                                                   server: AnthropicStandin) -> None:
    book = make_project(tmp_path, server, files={**BASE, "Book/A.lean": HIDDEN, "autoformalize.toml": CONFIG})
    worker_writes(book, {"Book/A.lean": HIDDEN.replace("  stop\n  rfl", "  rfl")}, target="Prove sneaky.")

    record, _ = book.cycle()

    assert record.outcome == "accepted", record.gates
    assert (record.pre_sorry_count, record.post_sorry_count) == (6, 5)  # five written sorries and `stop`
    git(book.repo, "checkout", "-q", "HEAD~1", "--", "Book/A.lean")  # the hidden sorry back, as a human may
    git(book.repo, "commit", "-qm", "back")
    status = collect(book.repo, record.finished_at or record.started_at)  # type: ignore[arg-type]
    assert status["hidden_sorries"] == [{"declaration": "Book.sneaky", "file": "Book/A.lean"}]
    assert status["total_sorries"] == 6


def test_a_locked_statement_keeps_its_fingerprint_and_a_change_two_levels_under_it_is_refused(
        book: Project) -> None:
    stated = A.replace("end Book", "/-- Theorem 1.1 The quadruple step is at least two. -/\n"
                                   "theorem quad_ge (n : ℕ) : 2 ≤ quad n := by\n  simp [quad, step]\n\nend Book")
    book.agents.plan(strategy("Book/**", target="State and prove Theorem 1.1."))
    book.agents.work([("write_file", {"path": "Book/A.lean", "content": stated})], "stated it")
    book.agents.judge(True, True, 3)
    book.agents.evaluate(evaluation(1))
    first, _ = book.cycle()
    assert first.outcome == "accepted", first.gates
    lock = json.loads(book.show("HEAD", ".prover-state/statement_lock.json"))["statements"]["Book.quad_ge"]
    assert len(lock["fingerprint"]) == 64 and lock["toolchain"]

    worker_writes(book, {"Book/A.lean": stated.replace("n + 1", "n + 2")}, target="Tidy step.")
    second, _ = book.cycle()
    assert second.outcome == "rejected"
    failed = {g.name: g.detail for g in second.gates if not g.passed}
    assert list(failed) == ["integrity"], failed  # quad_ge names `quad`, whose text did not change; `step`'s did
    assert "it uses Book.quad (through Book.step), which changed" in failed["integrity"]

    worker_writes(book, {"Book/Rewrite.lean": "macro_rules | `($a ≤ $b) => `(True)\n",
                         "Book/A.lean": "import Book.Rewrite\n" + stated}, target="Tidy the imports.")
    third, _ = book.cycle()
    assert third.outcome == "rejected"
    failed = {g.name: g.detail for g in third.gates if not g.passed}
    assert list(failed) == ["kernel"], failed  # no text shows it: the syntax an import brings
    assert "Book.quad_ge: Lean's terms for its statement" in failed["kernel"]
    assert "it is locked" in failed["kernel"]


def test_a_cycle_on_the_same_sources_asks_lean_only_about_the_change(book: Project, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Unconfined, so the stand-in can count its runs in a log outside the working copy.
    book.commit_files({"autoformalize.toml": config_text(gates={"repair_rounds": 0, **KERNEL_ALONE},
                                                         sandbox={"mode": "none", "env": ["STANDIN_LOG"]})})
    log = tmp_path / "standin.log"
    monkeypatch.setenv("STANDIN_LOG", str(log))

    def probes() -> int:
        runs = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return sum(".lake/autoformalize/Probe" in r for r in runs)

    worker_writes(book, ATTACKS["a local instance"][0])
    assert book.cycle()[0].outcome == "rejected"
    # One probe (two runs: the imports built, the program) listing every file at the census, none for the base's
    # listing (all kept by then), one for the change.
    assert probes() == 4

    worker_writes(book, {"Book/A.lean": HONEST})
    assert book.cycle()[0].outcome == "accepted"
    assert probes() == 2  # the same sources: what Lean listed of the base is remembered; only the change is asked


# -- the attacks of the environment issue, as whole cycles ---------------------------------------------------------

OTHER = ("namespace Book\n\n{define}theorem uses_c : Other.c = 5 := by\n  sorry\n\nend Book\n")
IRREDUCIBLE = "irreducible_def Other.c : ℕ := 7\n\n"
ALIAS = "def seven : ℕ := 7\n\ndef five : ℕ := 5\n\nalias Other.c := seven\n\n"
ENVIRONMENT = {
    # name: (files at the base, the Worker's change, what the kernel gate says, statements locked at the base)
    "an anonymous instance carrying a hole on a sorried theorem's line": (
        {"Book/Holds.lean": CARRIER},
        {"Book/Holds.lean": CARRIER.replace("by sorry\n", "by sorry instance : Holds (2 + 2 = 5) := ⟨by stop simp⟩\n")},
        "Book.instHoldsEqNatHAddOfNat (line 6) holds sorryAx", ()),
    "a private instance under a locked statement": (
        {"Book/Grade.lean": GRADE}, {"Book/Grade.lean": GRADE.replace("⟨fun a b => a.n < b.n⟩", "⟨fun _ _ => True⟩")},
        "Book.mono: Lean's terms for its statement", ("Book.mono",)),
    "irreducible_def outside the project's namespaces": (
        {"Book/Other.lean": OTHER.format(define=IRREDUCIBLE)},
        {"Book/Other.lean": OTHER.format(define=IRREDUCIBLE.replace("7", "5")).replace("by\n  sorry", "by\n  rfl")},
        "Book.uses_c: Lean's terms for its statement", ()),
    "alias outside the project's namespaces": (
        {"Book/Other.lean": OTHER.format(define=ALIAS)},
        {"Book/Other.lean": OTHER.format(define=ALIAS.replace(":= seven", ":= five")).replace("by\n  sorry",
                                                                                            "by\n  rfl")},
        "Book.uses_c: Lean's terms for its statement", ()),
}


def lock(files: dict[str, str], names: tuple[str, ...]) -> dict[str, str]:
    """A statement lock holding `names` as judged faithful, with the hashes of their text at the base."""
    text = meanings(census(MemTree({k: v.encode() for k, v in files.items()}), ["Book"]))
    statements = {n: {"hash": text[n][0], "entity": f"Theorem {k}", "score": 3, "cycle": 1}
                  for k, n in enumerate(names, 1)}
    return {".prover-state/statement_lock.json": json.dumps({"statements": statements})} if names else {}


@pytest.mark.parametrize("attack", list(ENVIRONMENT))
def test_each_attack_on_the_environment_is_rejected_in_a_whole_cycle(tmp_path: Path, server: AnthropicStandin,
                                                                     attack: str) -> None:
    base, change, reason, locked = ENVIRONMENT[attack]
    book = make_project(tmp_path, server, files={**BASE, **base, **lock(base, locked), "autoformalize.toml": CONFIG})
    start = book.head()
    worker_writes(book, change)

    record, _ = book.cycle()

    assert record.outcome == "rejected"
    failed = {g.name: g.detail for g in record.gates if not g.passed}
    assert list(failed) == ["kernel"], failed  # the text gates saw nothing amiss
    assert reason in failed["kernel"], failed["kernel"]
    assert not [p for p in book.changed(start) if p.endswith(".lean")]


def test_a_hole_only_lean_sees_is_counted_and_what_rests_on_it_is_not_proved(tmp_path: Path,
                                                                               server: AnthropicStandin) -> None:
    """A carrier already on the branch (a person committed it, or an older version let it land): the census, `status`
    and the audit count it, and a theorem proved through it is not proved."""
    carrier = CARRIER.replace("by sorry\n", "by sorry instance : Holds (2 + 2 = 5) := ⟨by stop simp⟩\n").replace(
        "end Book", "theorem T : 2 + 2 = 5 := instHoldsEqNatHAddOfNat.out\n\nend Book")
    book = make_project(tmp_path, server, files={**BASE, "Book/Holds.lean": carrier, "autoformalize.toml": CONFIG})
    worker_writes(book, {"Book/A.lean": HONEST})

    record, _ = book.cycle()

    assert record.outcome == "accepted", record.gates
    assert (record.pre_sorry_count, record.post_sorry_count) == (7, 6)  # M's written one, and the instance's
    status = collect(book.repo, record.finished_at or record.started_at)  # type: ignore[arg-type]
    assert {"declaration": "Book.instHoldsEqNatHAddOfNat", "file": "Book/Holds.lean"} in status["hidden_sorries"]
    config = book.config
    support = Support(mark(census(DirTree(book.repo), ["Book"]), Git(book.repo), book.repo, config.project,
                           config.gates), ["Book"])
    assert support.rests_on("Book.T") == ["Book.instHoldsEqNatHAddOfNat"]
