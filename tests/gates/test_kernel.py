"""The kernel gate against the stand-in Lean: each cheat that fools the source text is caught by what Lean's
environment holds.

The stand-in runs the environment probe as Lean would (`tests/standin/lean_env.py`: every constant of each module
asked about, private, anonymous and generated ones included, with the terms of its own model), splits commands where
Lean does, honours `#guard_msgs`, resolves names through namespaces, `open`, instances and `macro_rules`, runs meta
code's `addDecl`, and replays modules as leanchecker does. Each test runs every gate through
`kernelcheck.gate_change`: the base's listing first, then the change.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from gates import replay
from gates.base import GateInput, GateResult
from gates.build import LakeCompiler
from gates.census import census
from gates.config import BuildConfig, GatesConfig
from gates.diagnostics import CheckResult
from gates.env import program, unaccounted
from gates.env import read as env_read
from gates.meaning import closures, meanings
from gates.tree import MemTree
from orchestrator.kernelcheck import gate_change
from tests.conftest import sandbox, write
from tests.gates.cheats import ATTACKS, AXIOM, BASE, HONEST, KERNEL_ALONE, A, closing

STANDIN = Path(__file__).parent.parent / "standin" / "lean_checker.py"


@dataclass
class Project:
    root: Path
    build: BuildConfig

    def gates(self, files: dict[str, str | None], gates: GatesConfig | None = None, **kw: object
              ) -> tuple[dict[str, GateResult], GateInput]:
        results, inp = gate_change(self.root, self.compiler(), self.build, gates or GatesConfig(), ["Book"], files,
                                   **kw)  # type: ignore[arg-type]
        return {r.name: r for r in results}, inp

    def compiler(self) -> LakeCompiler:
        return LakeCompiler(self.root, self.build, sandbox())


def standin(**kw: str) -> BuildConfig:
    run = f"{sys.executable} {STANDIN}"
    return BuildConfig(**{"check_file": f"{run} check {{file}}", "read_file": f"{run} env {{file}}",
                          "compile_file": f"{run} compile {{file}} {{olean}}",
                          "build_all": f"{run} build",
                          "replay": f"{run} replay {{modules}}", "replay_available": f"{run} has-replay", **kw})


@pytest.fixture
def project(tmp_path: Path) -> Project:
    write(tmp_path / "book", BASE)
    return Project(tmp_path / "book", standin())


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_each_cheat_is_rejected_by_the_kernel_gate_for_its_reason(project: Project, attack: str) -> None:
    files, reason = ATTACKS[attack]
    results, _ = project.gates(files, GatesConfig(**KERNEL_ALONE))
    earlier = {n: r.detail for n, r in results.items() if n != "kernel" and not r.passed}
    assert not earlier, earlier  # the source text and Lean's messages let it through …
    assert not results["kernel"].passed  # … what Lean itself says does not
    assert reason in results["kernel"].detail, results["kernel"].detail


def test_an_honest_proof_passes_every_gate(project: Project) -> None:
    results, inp = project.gates({"Book/A.lean": HONEST})
    assert [(n, r.passed) for n, r in results.items()] == [
        ("scope", True), ("integrity", True), ("secrets", True), ("sorry", True), ("size", True), ("build", True),
        ("kernel", True), ("successors", True)]
    assert "1 closed and 0 locked statement(s) mean what they meant at the base" in results["kernel"].detail
    # Book.lean imports Book.A, which imports Book.Cheat: every project module of the environment is replayed.
    assert results["kernel"].detail.endswith("; leanchecker replayed Book, Book.A, Book.Cheat")
    assert "2 Lean run(s)" in results["kernel"].detail  # the imports built, then the program: one probe
    assert inp.kernel_learned["Book/A.lean"][1].consts["Book.hard"].axioms == ("propext",)
    assert not (project.root / ".lake" / "autoformalize").exists() or not any(
        (project.root / ".lake" / "autoformalize").iterdir())  # the probe files are gone


def test_a_sorry_that_names_a_sorried_lemma_is_top_down_work_not_a_proof(project: Project) -> None:
    new = closing("theorem quad_pos", "  exact key n\n", "theorem key (n : ℕ) : 0 < quad n := by\n  sorry\n\n")
    results, _ = project.gates({"Book/A.lean": new}, report="RESTRUCTURING: key lemma first")
    assert results["kernel"].passed, results["kernel"].detail
    assert "closed by appeal to holes Lean counts, not proved: Book.quad_pos (rests on Book.key)" in \
        results["kernel"].detail


def test_a_locked_statement_may_change_only_when_the_strategy_restates_it(project: Project) -> None:
    # Locked with a sorry in it: it is not closed here, and `step` changes two levels under it.
    locked = {"Book.quad_pos": meanings(census(MemTree({"Book/A.lean": A.encode()}), ["Book"]))["Book.quad_pos"][0]}
    changed = {"Book/A.lean": A.replace("n + 1", "n + 2")}
    restated, _ = project.gates(changed, locked=locked, strategy="RESTATE: Book.quad_pos — step counts by two")
    assert restated["integrity"].passed and restated["kernel"].passed, restated["kernel"].detail
    assert "Book.quad_pos: restated as the strategy declares" in restated["kernel"].detail
    # What no text shows, Lean does: syntax an import brings changes how the locked statement elaborates.
    hidden = {"Book/Rewrite.lean": "macro_rules | `($a < $b) => `(True)\n", "Book/A.lean": "import Book.Rewrite\n" + A}
    results, _ = project.gates(hidden, GatesConfig(**KERNEL_ALONE), locked=locked)
    assert results["integrity"].passed, results["integrity"].detail
    assert "Book.quad_pos: Lean's terms for its statement" in results["kernel"].detail
    assert "it is locked (judged faithful to the book)" in results["kernel"].detail


def test_a_statement_a_person_approved_is_locked_and_one_a_person_rejected_is_not(project: Project) -> None:
    digest = closures(census(MemTree({"Book/A.lean": A.encode()}), ["Book"]))["Book.quad_pos"][0]  # as approved
    hidden = {"Book/Rewrite.lean": "macro_rules | `($a < $b) => `(True)\n", "Book/A.lean": "import Book.Rewrite\n" + A}
    approved, _ = project.gates(hidden, GatesConfig(**KERNEL_ALONE), approved={"Book.quad_pos": digest})
    assert "Book.quad_pos: Lean's terms for its statement" in approved["kernel"].detail
    assert "it is locked (approved by a person)" in approved["kernel"].detail
    rejected, _ = project.gates(hidden, GatesConfig(**KERNEL_ALONE), locked={"Book.quad_pos": digest},
                                rejected=frozenset({"Book.quad_pos"}))
    assert rejected["kernel"].passed, rejected["kernel"].detail  # the judge's lock no longer holds it


def test_a_restatement_only_lean_sees_of_a_statement_a_person_approved_needs_a_persons_approval(
        project: Project) -> None:
    # The text of `quad_pos` is untouched, so the integrity gate sees no restatement to ask a person about; Lean
    # sees its meaning changed. A `RESTATE:` line alone must not unlock what a person approved.
    digest = closures(census(MemTree({"Book/A.lean": A.encode()}), ["Book"]))["Book.quad_pos"][0]
    hidden = {"Book/Rewrite.lean": "macro_rules | `($a < $b) => `(True)\n", "Book/A.lean": "import Book.Rewrite\n" + A}
    declared = "RESTATE: Book.quad_pos — `<` reads otherwise"
    results, _ = project.gates(hidden, GatesConfig(**KERNEL_ALONE), approved={"Book.quad_pos": digest},
                               strategy=declared)
    assert results["integrity"].passed, results["integrity"].detail
    assert not results["kernel"].passed, results["kernel"].detail
    assert "a person approved this statement, so only a person may approve a change of it" in \
        results["kernel"].detail
    write(project.root, {"approved_restatements.toml":
                         f'[[restate]]\ndeclaration = "Book.quad_pos"\nfrom = "{digest}"\n'})
    allowed, _ = project.gates(hidden, GatesConfig(**KERNEL_ALONE), approved={"Book.quad_pos": digest},
                               strategy=declared)
    assert allowed["kernel"].passed, allowed["kernel"].detail
    assert "Book.quad_pos: restated as the strategy declares" in allowed["kernel"].detail


REWRITE = {"Book/Rewrite.lean": "macro_rules | `($a < $b) => `(True)\n"}  # `<` made to mean nothing


def test_a_restatement_does_not_excuse_a_statement_whose_sorry_the_change_closes(project: Project) -> None:
    # The strategy may restate `quad_pos`, but not in the change that proves it: the proof is of the new statement.
    closed = closing("theorem quad_pos", "  trivial\n")
    change = {**REWRITE, "Book/A.lean": "import Book.Rewrite\n" + closed}
    locked = {"Book.quad_pos": meanings(census(MemTree({"Book/A.lean": A.encode()}), ["Book"]))["Book.quad_pos"][0]}
    for lock in ({}, locked):
        results, _ = project.gates(change, GatesConfig(**KERNEL_ALONE), locked=lock,
                                   strategy="RESTATE: Book.quad_pos — `<` reads as the book's order")
        assert not results["kernel"].passed, results["kernel"].detail
        assert ("Book.quad_pos: Lean's terms for its statement (its type, and the project constants it reaches, "
                "private and generated ones included) differ from the base's") in results["kernel"].detail
        assert "had its sorry closed in the same change" in results["kernel"].detail


def test_closing_a_hole_only_lean_sees_is_closing(project: Project) -> None:
    # At the base `quad_pos` holds a hole no text shows (`stop`): proving it in a change that alters what it states
    # is closing a sorry and restating at once, though no written sorry went away.
    write(project.root, {"Book/A.lean": closing("theorem quad_pos", "  stop\n  simp\n")})
    change = {**REWRITE, "Book/A.lean": "import Book.Rewrite\n" + closing("theorem quad_pos", "  trivial\n")}

    results, inp = project.gates(change, GatesConfig(**KERNEL_ALONE))

    assert ("Book/A.lean", "Book.quad_pos") in inp.before.hidden_holes()
    assert [h.count for h in inp.before.holed() if h.name == "Book.quad_pos"] == [1]
    assert inp.before.holes == 4  # the three written sorries, and the one only Lean sees
    assert not results["kernel"].passed, results["kernel"].detail
    assert "Book.quad_pos: Lean's terms for its statement" in results["kernel"].detail
    assert "had its sorry closed in the same change" in results["kernel"].detail
    proved, _ = project.gates({"Book/A.lean": closing("theorem quad_pos", "  simp [quad, step]\n")})
    assert proved["kernel"].passed, proved["kernel"].detail
    assert "1 closed and 0 locked statement(s) mean what they meant at the base" in proved["kernel"].detail


def test_a_hidden_hole_of_the_base_is_excused_only_as_it_was(project: Project) -> None:
    # The base's `quad_pos` holds a hole no text shows. Left as it was, it is the base's; rewritten, it is the
    # change's own (its written count unchanged, so only Lean's terms show it).
    write(project.root, {"Book/A.lean": closing("theorem quad_pos", "  stop\n  simp\n")})
    other, _ = project.gates({"Book/A.lean": closing("theorem quad_pos", "  stop\n  simp\n").replace(
        "n + 0 = n := by\n  sorry", "n + 0 = n := by\n  simp")}, GatesConfig(**KERNEL_ALONE))
    assert other["kernel"].passed, other["kernel"].detail

    rewritten, _ = project.gates({"Book/A.lean": closing("theorem quad_pos", "  stop\n  simp [quad]\n")},
                                 GatesConfig(**KERNEL_ALONE))

    assert not rewritten["kernel"].passed
    assert "Book.quad_pos (line 17) holds sorryAx, though no sorry or admit is written" in \
        rewritten["kernel"].detail, rewritten["kernel"].detail


def test_an_anonymous_hole_of_the_base_is_excused_while_its_terms_stay(project: Project) -> None:
    # No text declares the instance: whether the change left it as it was is told by its terms.
    carrier = CARRIER.replace("by sorry\n", "by sorry instance : Holds (2 + 2 = 5) := ⟨by stop simp⟩\n")
    write(project.root, {"Book/Holds.lean": carrier})
    added = carrier.replace("end Book", "theorem t : True := trivial\n\nend Book")
    beside, _ = project.gates({"Book/Holds.lean": added}, GatesConfig(**KERNEL_ALONE))
    assert beside["kernel"].passed, beside["kernel"].detail

    other = carrier.replace("2 + 2 = 5", "2 + 2 = 6")
    changed, _ = project.gates({"Book/Holds.lean": other}, GatesConfig(**KERNEL_ALONE))

    assert not changed["kernel"].passed
    assert "Book.instHoldsEqNatHAddOfNat (line 6) holds sorryAx" in changed["kernel"].detail, changed["kernel"].detail


def test_a_locked_definition_is_held_to_its_value(project: Project) -> None:
    # A definition judged as a statement means its own body: an unrelated change passes, a new body needs a RESTATE.
    locked = {"Book.step": meanings(census(MemTree({"Book/A.lean": A.encode()}), ["Book"]))["Book.step"][0]}
    beside, _ = project.gates({"Book/A.lean": HONEST}, locked=locked)
    assert beside["kernel"].passed, beside["kernel"].detail
    assert "1 closed and 1 locked statement(s) mean what they meant at the base" in beside["kernel"].detail

    body = A.replace("n + 1", "n + 2")
    changed, _ = project.gates({"Book/A.lean": body}, GatesConfig(**KERNEL_ALONE), locked=locked,
                               strategy="RESTATE: Book.step — steps of two")
    assert changed["kernel"].passed and "Book.step: restated as the strategy declares" in changed["kernel"].detail


def test_a_listing_cut_short_fails_never_passes(project: Project) -> None:
    compiler = Silencing(project.compiler(), "\"hard\"")
    results = gate_change(project.root, compiler, project.build, GatesConfig(), ["Book"], {"Book/A.lean": HONEST})[0]
    kernel = results[-1]
    assert kernel.name == "kernel" and kernel.passed is False  # a verdict, as a cycle records it
    assert "Lean's environment could not be listed after the change" in kernel.detail
    assert "could not be read" in kernel.detail


def test_many_axioms_are_read_whole(project: Project) -> None:
    names = [f"Book.a_long_axiom_name_assumed_for_the_test_{i}" for i in range(4)]
    axioms = "".join(f"axiom {n.removeprefix('Book.')} : True\n\n" for n in names)
    write(project.root, {"Book/A.lean": A.replace("def step", axioms.rsplit("axiom", 1)[0] + "def step")})
    uses = " ∧ ".join(["True"] * 4)
    proof = f"  exact ⟨{', '.join(n.removeprefix('Book.') for n in names)}⟩\n"
    new = A.replace("def step", axioms + "def step").replace("end Book", f"theorem all : {uses} := by\n{proof}\n"
                                                            "end Book")
    results, inp = project.gates({"Book/A.lean": new}, GatesConfig(allowed_axioms=names))
    assert results["kernel"].passed, results["kernel"].detail
    assert inp.kernel_learned["Book/A.lean"][1].consts["Book.all"].axioms == tuple(sorted(names))
    refused, _ = project.gates({"Book/A.lean": new}, GatesConfig(allowed_axioms=names[:3]), every=True)
    assert f"Book.all depends on {names[3]}, not among the allowed axioms" in refused["kernel"].detail


UNCHECKED = AXIOM.replace("addDecl", "addDeclWithoutChecking").replace("axiomDecl", "thmDecl")


@pytest.mark.parametrize(("toolchain", "said"), [
    ("v4.28.0", "leanchecker found a problem in Book.A"),
    ("v4.24.0", "Lean's kernel refused a constant of the project's modules as it added them again"),
])
def test_a_declaration_the_kernel_never_checked_fails_the_replay_on_every_toolchain(project: Project, toolchain: str,
                                                                                    said: str) -> None:
    (project.root / "lean-toolchain").write_text(f"leanprover/lean4:{toolchain}\n")
    results, _ = project.gates({"Book/A.lean": A.replace("end Book", UNCHECKED + "end Book")},
                               GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed
    assert said in results["kernel"].detail and "'Book.trustMe'" in results["kernel"].detail, results["kernel"].detail
    honest, _ = project.gates({"Book/A.lean": HONEST}, GatesConfig(**KERNEL_ALONE))
    assert honest["kernel"].passed, honest["kernel"].detail


@pytest.mark.parametrize(("mode", "said"), [
    ("auto", "constants of Book, Book.A, Book.Cheat (the toolchain has no leanchecker)"),
    ("on", "constants of Book, Book.A, Book.Cheat (the toolchain has no leanchecker)"),
    ("off", "no hole a text does not show"),
])
def test_without_leanchecker_the_gates_own_program_replays(tmp_path: Path, mode: str, said: str) -> None:
    write(tmp_path / "book", {**BASE, "lean-toolchain": "leanprover/lean4:v4.24.0\n"})
    project = Project(tmp_path / "book", standin())
    results, _ = project.gates({"Book/A.lean": HONEST}, GatesConfig(kernel_replay=mode))  # type: ignore[arg-type]
    assert results["kernel"].passed and said in results["kernel"].detail, results["kernel"].detail
    assert ("Lean's kernel added again" in results["kernel"].detail) is (mode != "off")
    assert "leanchecker" not in results["kernel"].detail.replace("has no leanchecker", "")


def test_a_module_keeping_a_part_apart_is_refused_by_the_gates_replay(tmp_path: Path) -> None:
    # Lean's module system keeps a module's private part beside its `.olean`; the program reads only the `.olean`.
    write(tmp_path / "book", {**BASE, "lean-toolchain": "leanprover/lean4:v4.24.0\n",
                              ".lake/build/lib/lean/Book/Cheat.olean.private": "(its private part)"})
    results, _ = Project(tmp_path / "book", standin()).gates({"Book/A.lean": HONEST})
    assert not results["kernel"].passed
    assert "Book.Cheat: it keeps a part apart (Lean's module system)" in results["kernel"].detail


def test_a_replay_that_cannot_run_rejects_the_change(tmp_path: Path) -> None:
    write(tmp_path / "book", {**BASE, "lean-toolchain": "leanprover/lean4:v4.24.0\n"})
    # A toolchain on which the program does not elaborate: Lean reports the error, and prints nothing of ours.
    fails = (f"sh -c 'if grep -q AutoformalizeReplay \"$0\"; then echo \"$0:56:14: error: unknown constant\"; exit 1; "
             f"fi; exec {sys.executable} {STANDIN} env \"$0\"' {{file}}")
    build = standin(read_file=fails)
    # Unconfined: the sandbox shows the stand-in's interpreter to the command it runs, not to a shell's `exec`.
    results = gate_change(tmp_path / "book", LakeCompiler(tmp_path / "book", build, sandbox(mode="none")), build,
                          GatesConfig(), ["Book"], {"Book/A.lean": HONEST})[0]
    kernel = next(r for r in results if r.name == "kernel")
    assert not kernel.passed, kernel.detail
    assert "the kernel's replay could not be read (no last line after 0 line(s)" in kernel.detail
    assert "needs leanchecker, from Lean v4.28, or `[gates] kernel_replay = \"off\"`" in kernel.detail


def test_the_probe_runs_through_check_file_in_a_git_ignored_folder_and_is_removed(project: Project,
                                                                                   tmp_path: Path) -> None:
    log = tmp_path / "log"
    build = standin(check_file=f"sh -c 'cp \"$0\" {log}; {sys.executable} {STANDIN} check \"$0\"' {{file}}")
    # Unconfined: the command copies the probe out of the working copy, which the sandbox would refuse.
    result = LakeCompiler(project.root, build, sandbox(mode="none")).probe("import Book.A\n")
    assert result.ok and result.output.strip() == ""  # Lake built the import; Lean elaborated nothing else
    assert log.read_text() == "import Book.A\n"
    assert result.command.split()[-1].startswith(".lake/autoformalize/Probe")
    assert not list((project.root / ".lake" / "autoformalize").iterdir())


def test_the_program_imports_no_project_module_so_no_project_syntax_reads_it(project: Project) -> None:
    from gates.env import header, program
    text = program("ab" * 12, ["Book.A", "Book.Cheat"])
    imports = [line for line in text.splitlines() if line.startswith("import")]
    assert imports == ["import Lean"]  # the modules are loaded by `importModules`, as data
    assert '[[\\"Book\\", \\"A\\"], [\\"Book\\", \\"Cheat\\"]]' in text
    assert header(["Book.Cheat", "Book.A", "Book.A"]) == "import Book.A\nimport Book.Cheat\n"


class Silencing:
    """The stand-in Lean, with the lines that mention `word` cut from what the probe prints."""

    def __init__(self, inner: LakeCompiler, word: str) -> None:
        self.inner, self.word = inner, word

    def check(self, path: str, module: str) -> CheckResult:
        return self.inner.check(path, module)

    def build_all(self) -> CheckResult:
        return self.inner.build_all()

    def probe(self, text: str) -> CheckResult:
        return self.inner.probe(text)

    def read(self, text: str) -> CheckResult:
        result = self.inner.read(text)
        result.output = "\n".join(line for line in result.output.splitlines() if self.word not in line)
        return result

    def compile(self, text: str, timeout_s: float | None = None) -> tuple[str, CheckResult]:
        return self.inner.compile(text, timeout_s)

    def discard(self, module: str) -> None:
        self.inner.discard(module)

    def replay(self, modules: list[str]) -> CheckResult | None:
        return self.inner.replay(modules)


def test_a_copy_of_the_project_is_left_as_it_was(project: Project) -> None:
    before = {p: p.read_bytes() for p in project.root.rglob("*.lean")}
    project.gates({"Book/A.lean": HONEST, "Book/New.lean": "theorem x : True := trivial\n"})
    assert {p: p.read_bytes() for p in project.root.rglob("*.lean") if ".lake" not in p.parts} == before


def test_a_definition_changed_ten_levels_down_is_seen(project: Project) -> None:
    chain = "".join(f"def d{k} (n : ℕ) : ℕ := d{k - 1} n\n\n" for k in range(1, 10))
    base = A.replace("def step", "def d0 (n : ℕ) : ℕ := n\n\n" + chain + "def step").replace(
        "end Book", "theorem deep : d9 1 = 0 := by\n  sorry\n\nend Book")
    write(project.root, {"Book/A.lean": base})
    cheat = base.replace("def d0 (n : ℕ) : ℕ := n", "def d0 (n : ℕ) : ℕ := 0").replace(
        "d9 1 = 0 := by\n  sorry", "d9 1 = 0 := by\n  rfl")
    results, _ = project.gates({"Book/A.lean": cheat}, GatesConfig(**KERNEL_ALONE))
    assert "Book.deep: Lean's terms for its statement" in results["kernel"].detail, results["kernel"].detail


def test_a_statement_larger_than_any_printer_would_show_is_compared_whole(project: Project) -> None:
    # Lean's pretty-printer stops at `pp.maxSteps` (5,000) and prints `⋯`; the listing's digests cover every node.
    terms = " + ".join(f"{k}" for k in range(3000))
    base = A.replace("end Book", f"def big (n : ℕ) : ℕ := n + {terms}\n\ntheorem huge : big 0 = 0 := by\n  sorry\n"
                                 "\nend Book")
    write(project.root, {"Book/A.lean": base})
    cheat = base.replace(f"+ {terms}", f"+ {terms.replace(' + 2999', ' * 0')}").replace(
        "big 0 = 0 := by\n  sorry", "big 0 = 0 := by\n  simp [big]")
    results, _ = project.gates({"Book/A.lean": cheat}, GatesConfig(**KERNEL_ALONE), every=True)
    assert "Book.huge: Lean's terms for its statement" in results["kernel"].detail, results["kernel"].detail


class BaseUnanswered(Silencing):
    """The stand-in Lean, cut short on the base's probe (its first program run) as a crash or timeout would."""

    def __init__(self, inner: LakeCompiler) -> None:
        super().__init__(inner, "")
        self.reads = 0

    def read(self, text: str) -> CheckResult:
        self.reads += 1
        result = self.inner.read(text)
        if self.reads == 1:
            result.output, result.exit_code = "error: out of memory", 137
        return result


def test_a_statement_closed_when_the_base_gave_no_listing_is_rejected(project: Project) -> None:
    results = gate_change(project.root, BaseUnanswered(project.compiler()), project.build, GatesConfig(), ["Book"],
                          {"Book/A.lean": HONEST})[0]
    kernel = results[-1]
    assert kernel.name == "kernel" and not kernel.passed, kernel.detail
    assert "Book.hard: its meaning at the base is unknown" in kernel.detail
    assert "make the base build and answer Lean" in kernel.detail
    untouched = gate_change(project.root, BaseUnanswered(project.compiler()), project.build, GatesConfig(), ["Book"],
                            {"Book/A.lean": A.replace("end Book", "theorem extra : True := trivial\n\nend Book")})[0]
    assert untouched[-1].passed, untouched[-1].detail  # nothing closed or locked: nothing to compare


def test_a_project_axiom_whose_statement_changes_meaning_is_no_longer_allowed(project: Project) -> None:
    axiom = "def okProp : Prop := True\n\naxiom choice_ok : okProp\n\n"
    base = A.replace("def step", axiom + "def step")
    write(project.root, {"Book/A.lean": base})
    cheat = base.replace("def okProp : Prop := True", "def okProp : Prop := 5 < 3").replace(
        "theorem lt_fact : 5 < 3 := by\n  sorry", "theorem lt_fact : 5 < 3 := by\n  exact choice_ok")
    results, _ = project.gates({"Book/A.lean": cheat}, GatesConfig(**KERNEL_ALONE))
    earlier = {n: r.detail for n, r in results.items() if n != "kernel" and not r.passed}
    assert not earlier, earlier  # the axiom's text is the base's, so it is not new to the source rules
    assert not results["kernel"].passed
    assert "Book.lt_fact depends on Book.choice_ok, a project axiom the change altered" in results["kernel"].detail, \
        results["kernel"].detail
    uses = base.replace("end Book", "theorem uses : okProp := choice_ok\n\nend Book")
    kept, _ = project.gates({"Book/A.lean": uses})  # the axiom's file changed, what it states did not
    assert kept["kernel"].passed, kept["kernel"].detail


def test_an_unchecked_declaration_an_unchanged_importer_gains_is_rejected(project: Project) -> None:
    # The change redefines a command an unchanged importer runs: the declaration it adds lands in the importer, which
    # the listing and the replay cover with the changed modules.
    write(project.root, {"Book/Trust.lean": 'elab "trust_me" : command => pure ()\n',
                         "Book/User.lean": "import Book.Trust\n\ntrust_me\n",
                         "Book.lean": "import Book.A\nimport Book.User\n"})
    unchecked = AXIOM.removeprefix("run_cmd ").replace("addDecl", "addDeclWithoutChecking").replace(
        "axiomDecl", "thmDecl")
    results, _ = project.gates({"Book/Trust.lean": 'elab "trust_me" : command => Lean.Elab.Command.liftCoreM do\n  '
                                                   + unchecked}, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed, results["kernel"].detail
    assert "leanchecker found a problem in Book.User" in results["kernel"].detail


def test_project_code_run_as_a_module_loads_keeps_lean_from_being_asked(project: Project) -> None:
    results, _ = project.gates({"Book/Init.lean": "initialize pure ()\n",
                                "Book/A.lean": "import Book.Init\n" + HONEST}, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed
    assert "Book/Init.lean:1: initialize (run as the module is imported)" in results["kernel"].detail


def test_a_private_declaration_is_listed_like_any_other(project: Project) -> None:
    write(project.root, {"Book/A.lean": A.replace("theorem hard", "private theorem hard")})
    cheat = closing("theorem hard", "  stop\n  simp\n", "#guard_msgs (drop all) in\n").replace(
        "theorem hard", "private theorem hard")
    results, _ = project.gates({"Book/A.lean": cheat}, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed, results["kernel"].detail
    assert "_private.Book.A.0.Book.hard (line 15) holds sorryAx" in results["kernel"].detail
    honest = HONEST.replace("theorem hard", "private theorem hard") + '\n#eval IO.println "hello"\n'
    results, _ = project.gates({"Book/A.lean": honest}, GatesConfig(**KERNEL_ALONE))
    assert results["kernel"].passed, results["kernel"].detail  # code run at build time: listed all the same
    assert "1 closed and 0 locked statement(s)" in results["kernel"].detail


# -- the attacks of the environment issue --------------------------------------------------------------------------

CARRIER = """\
namespace Book

class Holds (p : Prop) : Prop where
  out : p

theorem M (n : ℕ) : 0 + n = n := by sorry

end Book
"""


def test_an_anonymous_instance_on_the_line_of_a_sorried_theorem_is_a_hole(project: Project) -> None:
    # Two commands to Lean (a keyword mid-line starts one); one declaration with a written sorry to the text.
    write(project.root, {"Book/Holds.lean": CARRIER})
    carrier = CARRIER.replace("by sorry\n", "by sorry instance : Holds (2 + 2 = 5) := ⟨by stop simp⟩\n")
    results, _ = project.gates({"Book/Holds.lean": carrier}, GatesConfig(**KERNEL_ALONE))
    assert results["sorry"].passed, results["sorry"].detail  # the text shows the same one sorry …
    assert not results["kernel"].passed  # … Lean lists a second constant holding sorryAx
    assert "Book.instHoldsEqNatHAddOfNat (line 6) holds sorryAx" in results["kernel"].detail, results["kernel"].detail
    assert "as Lean counts them: sorries+admits rose" in results["kernel"].detail


GRADE = """\
namespace Book

structure Grade where
  n : ℕ

private instance gradeLT : LT Grade := ⟨fun a b => a.n < b.n⟩

theorem mono (a b : Grade) : a < b := by
  sorry

end Book
"""


def test_a_private_instance_under_a_locked_statement_is_part_of_what_it_means(project: Project) -> None:
    write(project.root, {"Book/Grade.lean": GRADE})
    locked = {"Book.mono": meanings(census(MemTree({"Book/Grade.lean": GRADE.encode()}), ["Book"]))["Book.mono"][0]}
    weak = GRADE.replace("⟨fun a b => a.n < b.n⟩", "⟨fun _ _ => True⟩")
    results, _ = project.gates({"Book/Grade.lean": weak}, GatesConfig(**KERNEL_ALONE), locked=locked)
    assert results["integrity"].passed, results["integrity"].detail  # the text of what it states is the same …
    assert not results["kernel"].passed  # … the private instance it elaborates through is not
    assert "Book.mono: Lean's terms for its statement" in results["kernel"].detail, results["kernel"].detail
    unrelated = GRADE.replace("end Book", "private def other : ℕ := 3\n\nend Book")
    results, _ = project.gates({"Book/Grade.lean": unrelated}, GatesConfig(**KERNEL_ALONE), locked=locked)
    assert results["kernel"].passed, results["kernel"].detail


@pytest.mark.parametrize("command", ["irreducible_def", "alias"])
def test_a_constant_the_source_index_does_not_know_is_compared_whatever_its_namespace(project: Project,
                                                                                      command: str) -> None:
    # `Other` is no namespace of the project's: only the module declaring a constant makes it the project's.
    if command == "irreducible_def":
        define = "irreducible_def Other.c : ℕ := 7\n\n"
        cheat = define.replace(":= 7", ":= 5")
    else:
        define = "def seven : ℕ := 7\n\ndef five : ℕ := 5\n\nalias Other.c := seven\n\n"
        cheat = define.replace("alias Other.c := seven", "alias Other.c := five")
    base = f"namespace Book\n\n{define}theorem uses : Other.c = 5 := by\n  sorry\n\nend Book\n"
    write(project.root, {"Book/Other.lean": base})
    proved = base.replace(define, cheat).replace("Other.c = 5 := by\n  sorry", "Other.c = 5 := by\n  rfl")
    results, _ = project.gates({"Book/Other.lean": proved}, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed
    assert "Book.uses: Lean's terms for its statement" in results["kernel"].detail, results["kernel"].detail


def test_a_decoy_named_like_a_locked_statement_does_not_stand_in_for_it(project: Project) -> None:
    # `«Book.mono»` is one component, `Book.mono` two: Lean keeps both, and so must every lookup of the lock's name.
    decoy = "import Book.Grade\n\ntheorem «Book.mono» : True := trivial\n"
    write(project.root, {"Book/Grade.lean": GRADE, "Book/Z.lean": decoy})
    locked = {"Book.mono": meanings(census(MemTree({"Book/Grade.lean": GRADE.encode()}), ["Book"]))["Book.mono"][0]}
    weak = GRADE.replace("⟨fun a b => a.n < b.n⟩", "⟨fun _ _ => True⟩")
    results, _ = project.gates({"Book/Grade.lean": weak}, GatesConfig(**KERNEL_ALONE), locked=locked)
    assert not results["kernel"].passed
    assert "Book.mono: Lean's terms for its statement" in results["kernel"].detail, results["kernel"].detail


def test_a_theorem_named_like_an_auxiliary_is_a_hole_of_its_own(project: Project) -> None:
    # `quad_pos.proof_7` is no proof Lean made for `quad_pos` (which does not use it): its hole counts apart, and what
    # is proved through it rests on it.
    aux = A.replace("theorem lt_fact : 5 < 3 := by\n  sorry", "theorem quad_pos.proof_7 : 5 < 3 := by\n  sorry\n\n"
                    "theorem lt_fact : 5 < 3 := by\n  exact quad_pos.proof_7")
    results, inp = project.gates({"Book/A.lean": aux})
    assert results["kernel"].passed, results["kernel"].detail  # a sorry moved into a lemma: top-down work …
    assert "Book.lt_fact (rests on Book.quad_pos.proof_7)" in results["kernel"].detail
    assert {h.name for h in inp.after.holed()} >= {"Book.quad_pos", "Book.quad_pos.proof_7"}
    assert inp.after.holes == inp.before.holes  # … counted as it is: one sorry moved, none closed


def test_a_file_included_by_build_time_code_is_part_of_what_a_statement_means(project: Project) -> None:
    base = A.replace("end Book", 'def s : String := include_str "data.txt"\n\ntheorem three : s.length = 3 := by\n'
                                 "  sorry\n\nend Book")
    write(project.root, {"Book/A.lean": base, "Book/data.txt": "abc"})
    locked = {"Book.three": meanings(census(MemTree({"Book/A.lean": base.encode()}), ["Book"]))["Book.three"][0]}
    results, _ = project.gates({"Book/data.txt": "abcd"}, GatesConfig(**KERNEL_ALONE), locked=locked,
                               scope=["Book/**", "Book/data.txt"])
    assert not results["kernel"].passed, results["kernel"].detail
    assert "Book.three: Lean's terms for its statement" in results["kernel"].detail


def test_a_hidden_hole_is_not_excused_by_a_hole_of_that_name_elsewhere(project: Project) -> None:
    write(project.root, {"Book/Other.lean": "namespace Book\n\nprivate theorem X : True := by\n  stop\n  trivial\n\n"
                                            "end Book\n"})
    cheat = A.replace("end Book", "theorem X : 1 = 2 := by\n  stop\n  rfl\n\nend Book")
    results, _ = project.gates({"Book/A.lean": cheat}, GatesConfig(**KERNEL_ALONE))
    assert "Book.A: Book.X (line" in results["kernel"].detail and "holds sorryAx" in results["kernel"].detail, \
        results["kernel"].detail


def test_a_cached_listing_is_keyed_by_the_whole_import_closure() -> None:
    from gates.listing import closure_keys
    files = {"Book/A.lean": "def a : Nat := 1\n", "Book/B.lean": "import Book.A\n\ntheorem b : True := trivial\n",
             "Book/C.lean": "theorem c : True := trivial\n"}
    keys = closure_keys(census(MemTree({k: v.encode() for k, v in files.items()}), ["Book"]), "chain")
    files["Book/A.lean"] = "def a : Nat := 2\n"
    moved = closure_keys(census(MemTree({k: v.encode() for k, v in files.items()}), ["Book"]), "chain")
    assert moved["Book/A.lean"] != keys["Book/A.lean"] and moved["Book/B.lean"] != keys["Book/B.lean"]
    assert moved["Book/C.lean"] == keys["Book/C.lean"]
    other = closure_keys(census(MemTree({k: v.encode() for k, v in files.items()}), ["Book"]), "another toolchain")
    assert other["Book/C.lean"] != moved["Book/C.lean"]


def _asking(tmp_path: Path, answer: int) -> tuple[BuildConfig, Path]:
    """A `replay_available` that notes each time it is asked."""
    asked = tmp_path / "asked"
    return standin(replay_available=f"sh -c 'echo asked >> {asked}; exit {answer}'"), asked


def _copies(tmp_path: Path, toolchains: list[str]) -> list[Path]:
    roots = []
    for k, toolchain in enumerate(toolchains):
        write(tmp_path / f"copy{k}", {**BASE, "lean-toolchain": toolchain})
        roots.append(tmp_path / f"copy{k}")
    return roots


def test_a_toolchain_with_leanchecker_is_asked_once_and_every_change_is_replayed(tmp_path: Path) -> None:
    build, asked = _asking(tmp_path, 0)
    copies = _copies(tmp_path, ["leanprover/lean4:v4.28.0\n"] * 2 + ["leanprover/lean4:v4.29.0\n"])
    # Unconfined: the command notes outside the copy, which the sandbox would refuse.
    replays = [LakeCompiler(root, build, sandbox(mode="none")).replay(["Book.A"]) for root in [*copies, copies[0]]]

    assert all(r is not None and r.command.endswith("replay Book.A") for r in replays)
    assert asked.read_text().split() == ["asked", "asked"]  # once per toolchain


def test_a_toolchain_without_it_is_asked_every_time(tmp_path: Path) -> None:
    build, asked = _asking(tmp_path, 1)
    root = _copies(tmp_path, ["leanprover/lean4:v4.27.0\n"])[0]
    replays = [LakeCompiler(root, build, sandbox(mode="none")).replay(["Book.A"]) for _ in range(3)]

    assert replays == [None, None, None] and asked.read_text().split() == ["asked"] * 3


def test_a_refused_axiom_is_told_what_the_project_allows(project: Project) -> None:
    files, _ = ATTACKS["an axiom added by meta code"]
    listed, _ = project.gates(files, GatesConfig(**KERNEL_ALONE))
    assert ("Book.hard depends on Book.trustMe, not among the allowed axioms (Classical.choice, Quot.sound, propext)"
            in listed["kernel"].detail), listed["kernel"].detail
    nothing, _ = project.gates(files, GatesConfig(**KERNEL_ALONE, allowed_axioms=[]))
    assert ("Book.hard depends on Book.trustMe, not among the allowed axioms (none); add it to [gates] allowed_axioms"
            in nothing["kernel"].detail), nothing["kernel"].detail


def test_each_time_lean_is_asked_the_log_says_for_how_much(project: Project) -> None:
    with capture_logs() as logs:
        project.gates({"Book/A.lean": HONEST})
    asked = [e for e in logs if e["event"] == "listing.asked"]
    assert [(e["modules"], e["runs"], e["problem"]) for e in asked] == [(3, 2, ""), (2, 2, "")], asked
    assert all(e["lines"] > 0 and e["seconds"] >= 0 for e in asked)


DEFS = st.lists(st.lists(st.integers(0, 5), max_size=2), min_size=2, max_size=6)  # def k uses defs j < k


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(DEFS, st.integers(0, 5), st.integers(0, 5))
def test_an_edit_under_a_locked_statement_is_seen_exactly_when_the_statement_reaches_it(
        project: Project, uses: list[list[int]], named: int, edited: int) -> None:
    """Definitions `c0 … cn`, each using some before it; a locked theorem about one of them; one definition's value
    changed. Lean's listing sees the change exactly when the theorem reaches the edited definition."""
    named, edited = named % len(uses), edited % len(uses)

    def text(edit: bool) -> str:
        lines = ["namespace Book", ""]
        for k, used in enumerate(uses):
            parts = [f"c{j % k}" for j in used if k]
            body = " + ".join([*parts, "2" if edit and k == edited else "1"])
            lines += [f"def c{k} (n : ℕ) : ℕ := n + {body}", ""]
        lines += [f"theorem locked (n : ℕ) : 0 < c{named} n := by", "  sorry", "", "end Book", ""]
        return "\n".join(lines)

    reach, todo = set(), [named]
    while todo:
        k = todo.pop()
        if k not in reach:
            reach.add(k)
            todo += [j % k for j in uses[k] if k]
    write(project.root, {"Book/Defs.lean": text(False)})
    locked = {"Book.locked": meanings(census(MemTree({"Book/Defs.lean": text(False).encode()}),
                                             ["Book"]))["Book.locked"][0]}
    results, _ = project.gates({"Book/Defs.lean": text(True)}, GatesConfig(**KERNEL_ALONE), locked=locked,
                               every=True)
    seen = "Book.locked: Lean's terms for its statement" in results["kernel"].detail
    assert seen == (edited in reach), (uses, named, edited, results["kernel"].detail)


GAPS = A.replace("theorem hard (n : ℕ) : n + 0 = n := by\n  sorry\n\n"
                 "theorem quad_pos (n : ℕ) : 0 < quad n := by\n  sorry\n\n"
                 "theorem lt_fact : 5 < 3 := by\n  sorry\n\ntheorem prime_two : Nat.Prime 2 := by\n  sorry\n",
                 "theorem gaps : (∀ n : ℕ, n + 0 = n) ∧ (∀ n : ℕ, 0 < quad n) ∧ 5 < 3 ∧ Nat.Prime 2 :=\n"
                 "  ⟨by stop simp, by stop simp, by stop decide, sorry⟩\n\n"
                 "theorem hard (n : ℕ) : n + 0 = n := gaps.1 n\n\n"
                 "theorem quad_pos (n : ℕ) : 0 < quad n := gaps.2.1 n\n\n"
                 "theorem lt_fact : 5 < 3 := gaps.2.2.1\n\n"
                 "theorem prime_two : Nat.Prime 2 := gaps.2.2.2\n")


def test_holes_gathered_in_one_declaration_count_as_lean_counts_them(project: Project) -> None:
    """Four sorried theorems closed by the parts of one conjunction holding three `stop`s and a `sorry`: the text
    shows one sorry where there were four; Lean's terms hold four `sorryAx`, so the count stays, and the verdict names
    the holes the four rest on."""
    assert GAPS != A
    results, inp = project.gates({"Book/A.lean": GAPS}, GatesConfig(**KERNEL_ALONE))
    assert results["kernel"].passed, results["kernel"].detail
    assert "closed by appeal to holes Lean counts" in results["kernel"].detail
    assert (inp.before.holes, inp.after.holes) == (4, 4)
    assert (inp.before.count(inp.before.files), inp.after.count(inp.after.files)) == (4, 1)  # the text's view


def test_a_module_is_trusted_only_where_lake_builds_it_or_the_dependencies_or_the_toolchain_keep_it() -> None:
    ours = {"Book.A", "Book.B"}
    fine = {"Book.A": "/w/.lake/build/lib/lean/Book/A.olean", "Book.B": "/w/./.lake/build/lib/lean/Book/B.olean",
            "Mathlib.Order": "/w/.lake/packages/mathlib/.lake/build/lib/lean/Mathlib/Order.olean",
            "Init.Prelude": "/elan/toolchains/v4.28.0/lib/lean/Init/Prelude.olean",
            "Local.Lib": "/w-local/.lake/build/lib/lean/Local/Lib.olean"}  # a `path` dependency, outside the project
    assert unaccounted(fine, "/w", ours) == []
    planted = {"Evil": "/w/.lake/build/lib/lean/Evil.olean",  # no project file is `Evil`
               "Mathlib.Fake": "/w/.lake/build/lib/lean/Mathlib/Fake.olean",  # a dependency's name, the project's place
               "Init.Core": "/w/.lake/../.lake/build/lib/lean/Init/Core.olean",  # the toolchain's name, likewise
               "Book.A": "/w/.lake/packages/mathlib/.lake/build/lib/lean/Book/A.olean",  # ours, from a dependency's
               "Book.B": "/tmp/Book/B.olean"}  # ours, from outside the project
    got = unaccounted(planted, "/w", ours)
    assert [line.split(":")[0] for line in got] == ["Book.A", "Book.B", "Evil", "Init.Core", "Mathlib.Fake"], got
    assert all("code run while the change was built wrote it" in line for line in got[2:])


def test_the_stand_in_answers_only_the_program_its_answers_were_written_against(project: Project) -> None:
    """A change to `gates/env_probe.lean` fails here until the stand-in is taught what the new program prints."""
    lean = project.compiler()
    assert lean.probe("import Book.A\n").ok  # Lake builds it; the program reads what was built
    answered = lean.read(program("ab12", ["Book.A"]))
    assert answered.ok, answered.output
    assert "Book.hard" in env_read(answered.output, "ab12").modules["Book.A"].consts
    other = lean.read(program("ab12", ["Book.A"]).replace("def main", "-- another program\ndef main"))
    assert not other.ok and "written against another program" in other.output and "lean_env.PROGRAM" in other.output
    checked = lean.read(replay.program("cd34", ["Book.A", "Book.Cheat"]))
    assert checked.ok and replay.read(checked.output, "cd34").checked, checked.output
    changed = lean.read(replay.program("cd34", ["Book.A"]).replace("def main", "-- another program\ndef main"))
    assert not changed.ok and "lean_env.REPLAY" in changed.output


def test_what_lean_listed_of_a_refused_change_is_not_kept(project: Project) -> None:
    """A refused change's code may have written what Lean read; a listing kept is never asked of Lean again."""
    files, _ = ATTACKS["a module planted by build-time code"]
    _, refused = project.gates(files, GatesConfig(**KERNEL_ALONE))
    assert refused.kernel_learned == {}
    results, landed = project.gates({"Book/A.lean": HONEST})
    assert results["kernel"].passed and "Book/A.lean" in landed.kernel_learned


def test_a_module_found_through_a_relative_search_path_is_placed_in_the_project() -> None:
    # Lake before its absolute search paths put `./.lake/build/lib/lean` on LEAN_PATH.
    assert unaccounted({"Book.A": "./.lake/build/lib/lean/Book/A.olean"}, "/w", {"Book.A"}) == []
    planted = unaccounted({"Evil": "./.lake/build/lib/lean/Evil.olean"}, "/w", {"Book.A"})
    assert planted and planted[0].startswith("Evil: Lean loaded it from /w/.lake/build/lib/lean/Evil.olean")
