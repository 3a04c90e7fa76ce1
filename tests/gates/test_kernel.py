"""The kernel gate against the stand-in Lean: each cheat that fools the source text is caught by what Lean says.

The stand-in answers `#print axioms`, `#check @N` under `pp.all` and `#print D` as Lean does (information
messages printed bare, a long list of axioms wrapped), honours `#guard_msgs`, resolves names through
namespaces, `open`, instances and `macro_rules`, runs meta code's `addDecl`, and replays modules as
leanchecker does. Each test runs every gate through `kernelcheck.gate_change`: the base's fingerprints first,
then the change.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gates.base import GateInput, GateResult
from gates.build import LakeCompiler
from gates.census import census
from gates.config import BuildConfig, GatesConfig
from gates.diagnostics import CheckResult
from gates.meaning import meanings
from gates.probe import split, verdict
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
    return BuildConfig(**{"check_file": f"{run} check {{file}}", "build_all": f"{run} build",
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
        ("kernel", True)]
    assert "1 closed or locked statement(s) elaborate as at the base" in results["kernel"].detail
    assert "leanchecker replayed Book, Book.A" in results["kernel"].detail  # Book.lean imports Book.A
    assert inp.kernel_answers[0].axioms["Book.hard"] == ("propext",)
    assert inp.kernel_answers[0].rounds == 1
    assert not (project.root / ".lake" / "autoformalize").exists() or not any(
        (project.root / ".lake" / "autoformalize").iterdir())  # the probe files are gone


def test_a_sorry_that_names_a_sorried_lemma_is_top_down_work_not_a_hidden_sorry(project: Project) -> None:
    new = closing("theorem quad_pos", "  exact key n\n", "theorem key (n : ℕ) : 0 < quad n := by\n  sorry\n\n")
    results, _ = project.gates({"Book/A.lean": new}, report="RESTRUCTURING: key lemma first")
    assert results["kernel"].passed, results["kernel"].detail


def test_a_locked_statement_may_change_only_when_the_strategy_restates_it(project: Project) -> None:
    # Locked with a sorry in it: it is not closed here, and `step` changes two levels under it.
    locked = {"Book.quad_pos": meanings(census(MemTree({"Book/A.lean": A.encode()}), ["Book"]))["Book.quad_pos"][0]}
    changed = {"Book/A.lean": A.replace("n + 1", "n + 2")}
    results, _ = project.gates(changed, locked=locked)
    # The text of quad_pos names `quad`, whose text did not change, but which names `step`, whose text did.
    assert "Book.quad_pos: its statement was judged faithful to the book and is locked, and it states something " \
           "else: it uses Book.quad (through Book.step), which changed" in results["integrity"].detail
    restated, _ = project.gates(changed, locked=locked, strategy="RESTATE: Book.quad_pos — step counts by two")
    assert restated["integrity"].passed and restated["kernel"].passed, restated["kernel"].detail
    # What no text shows, Lean does: syntax an import brings changes how the locked statement elaborates.
    hidden = {"Book/Rewrite.lean": "macro_rules | `($a < $b) => `(True)\n", "Book/A.lean": "import Book.Rewrite\n" + A}
    results, _ = project.gates(hidden, GatesConfig(**KERNEL_ALONE), locked=locked)
    assert results["integrity"].passed, results["integrity"].detail
    assert "Book.quad_pos: Lean elaborates its statement differently than at the base" in results["kernel"].detail
    assert "it is locked (judged faithful to the book)" in results["kernel"].detail


def test_a_missing_verdict_fails_never_passes(project: Project) -> None:
    compiler = Silencing(project.compiler(), "'Book.hard'")
    results = gate_change(project.root, compiler, project.build, GatesConfig(), ["Book"], {"Book/A.lean": HONEST})[0]
    kernel = results[-1]
    assert kernel.name == "kernel" and not kernel.passed
    assert "Book.hard: Lean gave no verdict on its axioms" in kernel.detail


def test_a_long_list_of_axioms_wraps_and_is_still_read(project: Project) -> None:
    names = [f"Book.a_long_axiom_name_assumed_for_the_test_{i}" for i in range(4)]
    axioms = "".join(f"axiom {n.removeprefix('Book.')} : True\n\n" for n in names)
    write(project.root, {"Book/A.lean": A.replace("def step", axioms + "def step")})
    uses = " ∧ ".join(["True"] * 4)
    proof = f"  exact ⟨{', '.join(n.removeprefix('Book.') for n in names)}⟩\n"
    new = A.replace("def step", axioms + "def step").replace("end Book", f"theorem all : {uses} := by\n{proof}\n"
                                                            "end Book")
    results, inp = project.gates({"Book/A.lean": new}, GatesConfig(allowed_axioms=names))
    assert results["kernel"].passed, results["kernel"].detail
    assert inp.kernel_answers[0].axioms["Book.all"] == tuple(names)


def test_a_declaration_the_kernel_never_checked_fails_the_replay(project: Project) -> None:
    unchecked = AXIOM.replace("addDecl", "addDeclWithoutChecking").replace("axiomDecl", "thmDecl")
    results, _ = project.gates({"Book/A.lean": A.replace("end Book", unchecked + "end Book")},
                               GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed
    assert "the kernel's replay of the changed modules and their importers failed" in results["kernel"].detail
    assert "leanchecker found a problem in Book.A" in results["kernel"].detail


@pytest.mark.parametrize(("mode", "passes", "said"), [
    ("auto", True, "kernel replay skipped: the toolchain has no leanchecker"),
    ("on", False, '[gates] kernel_replay is "on" but the toolchain has no leanchecker'),
    ("off", True, "no sorryAx without a sorry"),
])
def test_without_leanchecker_the_replay_is_skipped_or_required(tmp_path: Path, mode: str, passes: bool,
                                                                said: str) -> None:
    write(tmp_path / "book", BASE)
    project = Project(tmp_path / "book", standin(replay_available=f"{sys.executable} -c 'raise SystemExit(1)'"))
    results, _ = project.gates({"Book/A.lean": HONEST}, GatesConfig(kernel_replay=mode))  # type: ignore[arg-type]
    assert results["kernel"].passed is passes and said in results["kernel"].detail, results["kernel"].detail


def test_verdicts_are_read_bare_positioned_and_wrapped() -> None:
    output = "\n".join([
        "✔ [3/4] Built Book.A",
        '"5eed:0" : String',
        "'Book.a' depends on axioms: [propext,",
        " sorryAx,",
        " Classical.choice,",
        " Quot.sound]",
        '"5eed:1" : String',
        ".lake/autoformalize/Probe1.lean:7:0: info: 'Book.«b c»' does not depend on any axioms",
        '"5eed:2" : String',
        "info: .lake/autoformalize/Probe1.lean:8:0: 'Book.d'' depends on axioms: [Book.trustMe]",
        '"5eed:3" : String',
    ])
    parts = split(output, "5eed", 3)
    assert [verdict(p.text, n) for p, n in zip(parts, ["Book.a", "Book.«b c»", "Book.d'"], strict=True)] == [
        ("propext", "sorryAx", "Classical.choice", "Quot.sound"), (), ("Book.trustMe",)]


def test_the_probe_runs_through_check_file_in_a_git_ignored_folder_and_is_removed(project: Project,
                                                                                   tmp_path: Path) -> None:
    log = tmp_path / "log"
    build = standin(check_file=f"sh -c 'cp \"$0\" {log}; {sys.executable} {STANDIN} check \"$0\"' {{file}}")
    # Unconfined: the command copies the probe out of the working copy, which the sandbox would refuse.
    result = LakeCompiler(project.root, build, sandbox(mode="none")).probe("#check \"hello\"\n")
    assert result.ok and result.output.strip() == '"hello" : String'
    assert log.read_text() == "#check \"hello\"\n"
    assert result.command.split()[-1].startswith(".lake/autoformalize/Probe")
    assert not list((project.root / ".lake" / "autoformalize").iterdir())


class Silencing:
    """The stand-in Lean, with the answers that mention `word` cut from what the probe prints."""

    def __init__(self, inner: LakeCompiler, word: str) -> None:
        self.inner, self.word = inner, word

    def check(self, path: str, module: str) -> CheckResult:
        return self.inner.check(path, module)

    def build_all(self) -> CheckResult:
        return self.inner.build_all()

    def probe(self, text: str) -> CheckResult:
        result = self.inner.probe(text)
        result.output = "\n".join(line for line in result.output.splitlines() if self.word not in line)
        return result

    def replay(self, modules: list[str]) -> CheckResult | None:
        return self.inner.replay(modules)


def test_a_copy_of_the_project_is_left_as_it_was(project: Project) -> None:
    before = {p: p.read_bytes() for p in project.root.rglob("*.lean")}
    project.gates({"Book/A.lean": HONEST, "Book/New.lean": "theorem x : True := trivial\n"})
    assert {p: p.read_bytes() for p in project.root.rglob("*.lean") if ".lake" not in p.parts} == before


def test_a_sorry_only_lean_sees_counts_until_its_declaration_changes() -> None:
    from gates import sorry
    from tests.gates.helpers import gate_input

    def sorry_gate(new_a: str) -> str:
        inp = gate_input({"Book/A.lean": A}, {"Book/A.lean": new_a})
        inp.base_census = census(inp.base, ["Book"])
        inp.base_census.hidden = {"Book/A.lean": ("Book.easy",)}  # as Lean said: `easy` relies on sorryAx
        result = sorry.check(inp)
        assert result.passed, result.detail
        return result.detail

    assert sorry_gate(HONEST).startswith("sorries+admits 5 → 4; counted as holes, Lean says they rely on sorryAx "
                                         "though their text has no sorry: Book.easy")
    assert sorry_gate(HONEST.replace("theorem easy : True := trivial", "theorem easy : True := by\n  trivial")
                      ) == "sorries+admits 5 → 3"  # `easy` was rewritten: what Lean said of it no longer holds


DEEP = closing("theorem quad_pos", "  simp [quad, step]\n").replace("n + 1", "1")  # `step` changes under `quad`


@pytest.mark.parametrize(("bound", "key"), [({"fingerprint_depth": 1}, "fingerprint_depth"),
                                            ({"fingerprint_max_defs": 1}, "fingerprint_max_defs")])
def test_a_definition_changed_beyond_the_fingerprints_bounds_is_rejected_naming_the_bound(
        project: Project, bound: dict[str, int], key: str) -> None:
    results, _ = project.gates({"Book/A.lean": DEEP}, GatesConfig(**KERNEL_ALONE, **bound))
    assert not results["kernel"].passed
    assert "Book.step" in results["kernel"].detail and f"[gates] {key}" in results["kernel"].detail, \
        results["kernel"].detail


def test_a_definition_beyond_the_bounds_whose_files_did_not_change_is_the_bases(project: Project) -> None:
    # `step` and `quad` move to a file of their own at the base; the change closes quad_pos without touching it.
    defs = "import Mathlib.Tactic\n\nnamespace Book\n\ndef step (n : ℕ) : ℕ := n + 1\n\n" \
           "def quad (n : ℕ) : ℕ := step (step n)\n\nend Book\n"
    a = A.replace("import Book.Cheat\n", "import Book.Cheat\nimport Book.Defs\n").replace(
        "def step (n : ℕ) : ℕ := n + 1\n\ndef quad (n : ℕ) : ℕ := step (step n)\n\n", "")
    write(project.root, {"Book/Defs.lean": defs, "Book/A.lean": a})
    closed = a.replace("0 < quad n := by\n  sorry", "0 < quad n := by\n  simp [quad, step]")
    results, _ = project.gates({"Book/A.lean": closed}, GatesConfig(fingerprint_depth=1))
    assert results["kernel"].passed, results["kernel"].detail
    changed, _ = project.gates({"Book/A.lean": closed, "Book/Defs.lean": defs.replace("n + 1", "1")},
                               GatesConfig(**KERNEL_ALONE, fingerprint_depth=1))
    assert not changed["kernel"].passed and "[gates] fingerprint_depth" in changed["kernel"].detail


class BaseUnanswered(Silencing):
    """The stand-in Lean, cut short on its first probe (the base's fingerprints) as a crash or timeout would."""

    def __init__(self, inner: LakeCompiler) -> None:
        super().__init__(inner, "")
        self.probes = 0

    def probe(self, text: str) -> CheckResult:
        self.probes += 1
        result = self.inner.probe(text)
        if self.probes == 1:
            result.output, result.exit_code = "error: out of memory", 137
        return result


def test_a_statement_closed_when_the_base_gave_no_fingerprints_is_rejected(project: Project) -> None:
    results = gate_change(project.root, BaseUnanswered(project.compiler()), project.build, GatesConfig(), ["Book"],
                          {"Book/A.lean": HONEST})[0]
    kernel = results[-1]
    assert kernel.name == "kernel" and not kernel.passed, kernel.detail
    assert "Book.hard: the base's statements could not be fingerprinted" in kernel.detail
    assert "make the base build and answer" in kernel.detail
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
    assert "Book.lt_fact depends on Book.choice_ok, a project axiom Lean elaborates differently than at the base" \
        in results["kernel"].detail, results["kernel"].detail
    uses = base.replace("end Book", "theorem uses : okProp := choice_ok\n\nend Book")
    kept, _ = project.gates({"Book/A.lean": uses})  # the axiom's file changed, what it states did not
    assert kept["kernel"].passed, kept["kernel"].detail


def test_an_unchecked_declaration_an_unchanged_importer_gains_is_rejected(project: Project) -> None:
    # The change redefines a command an unchanged importer runs: the declaration it adds lands in the importer.
    # Two layers see it: the probe refuses to run beside project code that could answer in Lean's place, and the
    # replay covers the importers of the changed modules (`Book` replays with `Book.A` in the honest proof above).
    write(project.root, {"Book/Trust.lean": 'elab "trust_me" : command => pure ()\n',
                         "Book/User.lean": "import Book.Trust\n\ntrust_me\n",
                         "Book.lean": "import Book.A\nimport Book.User\n"})
    unchecked = AXIOM.removeprefix("run_cmd ").replace("addDecl", "addDeclWithoutChecking").replace(
        "axiomDecl", "thmDecl")
    results, _ = project.gates({"Book/Trust.lean": 'elab "trust_me" : command => Lean.Elab.Command.liftCoreM do\n  '
                                                   + unchecked}, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed, results["kernel"].detail
    assert "Book/Trust.lean:1: elab declaring a command" in results["kernel"].detail


def test_names_lean_prints_under_the_projects_namespaces_count_whatever_the_root_folder() -> None:
    from gates.probe import Names
    text = "namespace Textbook\n\ndef step (n : ℕ) : ℕ := n + 1\n\nend Textbook\n"
    names = Names(census(MemTree({"Book/A.lean": text.encode()}), ["Book"]), ["Book"])
    # An anonymous instance and a matcher: names the source never spells, under the namespace it declares.
    assert names.printed("@Textbook.instLTNat (Textbook.step.match_1 n)") == {"Textbook.instLTNat",
                                                                              "Textbook.step.match_1"}


def test_a_private_declaration_is_asked_about_in_its_own_file(project: Project) -> None:
    # No other file can name it, so Lean is asked in a copy of its own file: a cheat is seen, a proof passes.
    write(project.root, {"Book/A.lean": A.replace("theorem hard", "private theorem hard")})
    cheat = closing("theorem hard", "  stop\n  simp\n", "#guard_msgs (drop all) in\n").replace(
        "theorem hard", "private theorem hard")
    results, _ = project.gates({"Book/A.lean": cheat}, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed, results["kernel"].detail
    assert "Book.hard has no sorry in its text, yet Lean says it depends on sorryAx" in results["kernel"].detail
    honest = HONEST.replace("theorem hard", "private theorem hard")
    results, _ = project.gates({"Book/A.lean": honest})
    assert results["kernel"].passed, results["kernel"].detail
    assert "asked in its own file (private): Book.hard" in results["kernel"].detail


def test_a_private_declaration_beside_code_run_at_build_time_is_not_asked_and_its_closing_rejected(
        project: Project) -> None:
    write(project.root, {"Book/A.lean": A.replace("theorem hard", "private theorem hard")})
    honest = HONEST.replace("theorem hard", "private theorem hard") + '\n#eval IO.println "hello"\n'
    results, _ = project.gates({"Book/A.lean": honest}, GatesConfig(**KERNEL_ALONE))
    assert not results["kernel"].passed
    assert "Lean could not be asked about this private declaration in its own file" in results["kernel"].detail
    assert "Book/A.lean:" in results["kernel"].detail and "#eval" in results["kernel"].detail


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
