"""The successors gate against the stand-in Lean (which checks an application of a theorem against its explicit
binders, as Lean's elaborator does against the expected type): the users of an altered declaration, compiled as
they were at the base, break when it gained a hypothesis, in whatever file they live."""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.config import GatesConfig
from gates.diagnostics import CheckResult
from gates.index import index_source
from gates.successors import User, splice
from tests.conftest import write
from tests.gates.cheats import BASE, KERNEL_ALONE
from tests.gates.test_kernel import Project, standin

QUX = """\
import Mathlib.Tactic

namespace Book

theorem qux (n : ℕ) : n * 1 = n := by
  simp

theorem three_mul_one : 3 * 1 = 3 := qux 3

theorem two_mul_one : 2 * 1 = 2 := by
  exact qux 2

end Book
"""
USER = """\
import Book.Qux

open Book

theorem five_mul_one : 5 * 1 = 5 := qux 5
"""
WEAK = QUX.replace("(n : ℕ) : n * 1", "(n : ℕ) (h : 0 < n) : n * 1")
PATCHED = WEAK.replace(":= qux 3", ":= qux 3 (by decide)").replace("exact qux 2", "exact qux 2 (by decide)")
USER_PATCHED = USER.replace("qux 5", "qux 5 (by decide)")
CHANGE = {"Book/Qux.lean": PATCHED, "Book/User.lean": USER_PATCHED}
FILES = {**BASE, "Book/Qux.lean": QUX, "Book/User.lean": USER,
         "Book.lean": "import Book.A\nimport Book.Qux\nimport Book.User\n"}


def gates(mode: str = "locked") -> GatesConfig:
    return GatesConfig(successors=mode, **KERNEL_ALONE)  # type: ignore[arg-type]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    write(tmp_path / "book", FILES)
    return Project(tmp_path / "book", standin())


def test_users_in_the_same_file_and_in_an_importer_break_when_a_locked_statement_gains_a_hypothesis(
        project: Project) -> None:
    results, inp = project.gates(CHANGE, gates(), locked={"Book.qux": "x"},
                                 strategy="RESTATE: Book.qux — positive n\n")

    assert results["kernel"].passed, results["kernel"].detail
    verdict = results["successors"]
    assert not verdict.passed
    for user, path in [("Book.three_mul_one", "Book/Qux.lean"), ("Book.two_mul_one", "Book/Qux.lean"),
                       ("five_mul_one", "Book/User.lean")]:
        assert f"{user} ({path}), as it was at the base, no longer elaborates against the changed Book.qux: " \
               "type mismatch" in verdict.detail
    assert sorted(inp.broken_successors) == ["Book.qux"] and len(inp.broken_successors["Book.qux"]) == 3


def test_unlocked_the_broken_users_are_evidence_and_strict_refuses_them(project: Project) -> None:
    results, _ = project.gates(CHANGE, gates())
    assert results["successors"].passed and "broken successors (evidence, not locked)" in results["successors"].detail

    results, _ = project.gates(CHANGE, gates("strict"))
    assert not results["successors"].passed and '"strict"' in results["successors"].detail

    results, _ = project.gates(CHANGE, gates("off"), locked={"Book.qux": "x"},
                               strategy="RESTATE: Book.qux — positive n\n")
    assert results["successors"].passed and results["successors"].detail == "off ([gates] successors)"


def test_a_change_beside_a_statement_leaves_its_meaning_and_compiles_nothing(project: Project) -> None:
    beside = QUX.replace("theorem qux (n : ℕ) : n * 1 = n := by\n  simp",
                           "theorem qux (n : ℕ) : n * 1 = n := by\n  simp\n\ntheorem extra : 1 = 1 := rfl")
    results, _ = project.gates({"Book/Qux.lean": beside}, gates("strict"))
    assert results["successors"].passed
    assert results["successors"].detail == "no declaration the project uses means something else"


def test_a_user_that_cannot_be_checked_fails_closed_for_a_locked_statement(project: Project,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from gates.build import LakeCompiler

    real = LakeCompiler.compile

    def timing_out(self: LakeCompiler, text: str, timeout_s: float | None = None) -> tuple[str, CheckResult]:
        module, result = real(self, text, timeout_s)
        if "three_mul_one" in text:
            return module, CheckResult("lake env lean probe", None, "", 1.0)  # what `_run` returns on a timeout
        return module, result

    monkeypatch.setattr(LakeCompiler, "compile", timing_out)
    results, _ = project.gates(CHANGE, gates(), locked={"Book.qux": "x"},
                               strategy="RESTATE: Book.qux — positive n\n")
    assert not results["successors"].passed
    assert "users of a locked statement in Book/Qux.lean could not be checked: `lake env lean probe` timed " \
           "out" in results["successors"].detail


# After the weakened statement, a term macro takes the token `qux`: each user's base text `qux 3` now parses as the
# macro, whose `stop` is only a warning; the patched users name `Book.qux` in full, which the token does not match.
MACRO = 'macro "qux" : term => `(fun n => (by stop rfl : n * 1 = n))\n\n'
MASKED = {"Book/Qux.lean": WEAK.replace("theorem three_mul_one", MACRO + "theorem three_mul_one")
          .replace(":= qux 3", ":= Book.qux 3 (by decide)").replace("exact qux 2", "exact Book.qux 2 (by decide)"),
          "Book/User.lean": USER.replace("qux 5", "Book.qux 5 (by decide)")}


def test_users_whose_base_text_a_new_macro_takes_over_are_broken_by_what_lean_lists(project: Project) -> None:
    results, _ = project.gates(MASKED, gates(), locked={"Book.qux": "x"},
                                 strategy="RESTATE: Book.qux — positive n\n")

    assert results["kernel"].passed, results["kernel"].detail  # the change's own users are proved
    verdict = results["successors"]
    assert not verdict.passed, verdict.detail
    for user, path in [("Book.three_mul_one", "Book/Qux.lean"), ("Book.two_mul_one", "Book/Qux.lean"),
                       ("five_mul_one", "Book/User.lean")]:
        assert f"{user} ({path}), as it was at the base, no longer elaborates against the changed Book.qux: it no " \
               "longer uses Book.qux: its text now means something else" in verdict.detail, verdict.detail
    honest = {**MASKED, "Book/Qux.lean": MASKED["Book/Qux.lean"].replace(MACRO, "")}
    kept, _ = project.gates(honest, gates(), locked={"Book.qux": "x"}, strategy="RESTATE: Book.qux — positive n\n")
    assert not kept["successors"].passed and "type mismatch" in kept["successors"].detail  # as before: errors


@pytest.mark.parametrize("expansion", ["(by stop rfl : qux = qux) ▸ qux _", "gap ▸ qux _"])
def test_a_user_resting_on_a_hole_it_did_not_hold_is_broken(project: Project, expansion: str) -> None:
    # The statement changes (it reaches a definition changed under it), and a macro the user's base text runs
    # through now closes it with `stop`: it still uses the statement, and elaborates, with only a warning. The
    # change's own copy of the user no longer goes through the macro, so no hole is left for the kernel gate. The
    # hole may be in the user's own terms (`stop`) or in a lemma the expansion names (the base's sorried `gap`).
    base = QUX.replace("theorem qux (n : ℕ) : n * 1 = n := by\n  simp",
                       "def one : ℕ := 1\n\nsyntax \"by_one\" : term\n\nmacro_rules | `(by_one) => `(qux _)\n\n"
                       "theorem qux (n : ℕ) : n * one = n := by\n  simp [one]\n\n"
                       "theorem gap : qux = qux := by\n  sorry").replace(
        "theorem three_mul_one : 3 * 1 = 3 := qux 3", "theorem three_mul_one : 3 * one = 3 := by_one")
    write(project.root, {"Book/Qux.lean": base})
    stopped = base.replace("macro_rules | `(by_one) => `(qux _)",
                           f"macro_rules | `(by_one) => `({expansion})").replace(
        "def one : ℕ := 1", "def one : ℕ := 1 * 1").replace("3 * one = 3 := by_one", "3 * one = 3 := qux 3")
    results, _ = project.gates({"Book/Qux.lean": stopped}, gates("strict"))  # its own user, patched, is proved
    assert "Book.three_mul_one (Book/Qux.lean), as it was at the base, no longer elaborates against the changed " \
           in results["successors"].detail, results["successors"].detail
    assert "it now rests on sorryAx" in results["successors"].detail


def test_a_hypothesis_with_a_default_breaks_no_user_and_is_named(project: Project) -> None:
    silent = {"Book/Qux.lean": QUX.replace("(n : ℕ) : n * 1", "(n : ℕ) (h : 0 < n := by decide) : n * 1")}
    results, inp = project.gates(silent, gates(), locked={"Book.qux": "x"},
                                 strategy="RESTATE: Book.qux — positive n\n")
    assert results["successors"].passed, results["successors"].detail  # Lean fills `h` in at each user
    assert inp.defaults == {"Book.qux": ["autoParam"]} and inp.broken_successors == {}
    assert "Book.qux gained a hypothesis with a default (autoParam)" in results["successors"].detail
    valued = {"Book/Qux.lean": QUX.replace("(n : ℕ) : n * 1", "(n : ℕ) (k : ℕ := 1) : n * k")}
    _, inp = project.gates(valued, gates(), locked={"Book.qux": "x"}, strategy="RESTATE: Book.qux — k\n")
    assert inp.defaults == {"Book.qux": ["optParam"]}


def test_splice_puts_each_user_back_where_it_was_and_a_deleted_one_in_its_namespace() -> None:
    base = index_source("Book/Qux.lean", QUX)
    users = []
    for d in base.decls:
        if d.name in ("Book.three_mul_one", "Book.two_mul_one"):
            users.append(User(d.name, "Book/Qux.lean", QUX[d.start:d.end], "Book", ("Book.qux",)))
    now_text = PATCHED.replace("theorem two_mul_one : 2 * 1 = 2 := by\n  exact qux 2 (by decide)\n\n", "")
    now = index_source("Book/Qux.lean", now_text)

    text, regions = splice(now_text, now.decls, users)

    lines = text.split("\n")
    assert "(h : 0 < n)" in text and "qux 3 (by decide)" not in text
    by_user = {r.user.name: lines[r.first - 1:r.last] for r in regions}
    assert by_user["Book.three_mul_one"] == ["theorem three_mul_one : 3 * 1 = 3 := qux 3"]
    assert by_user["Book.two_mul_one"] == ["theorem two_mul_one : 2 * 1 = 2 := by", "  exact qux 2"]
    assert text.endswith("namespace Book\ntheorem two_mul_one : 2 * 1 = 2 := by\n  exact qux 2\nend Book\n")


def test_files_left_when_the_gates_time_is_spent_are_not_checked_and_fail_closed_when_locked(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gates.successors.RUNS", 0)  # no time at all: nothing may be compiled
    results, _ = project.gates(CHANGE, gates(), locked={"Book.qux": "x"},
                               strategy="RESTATE: Book.qux — positive n\n")
    assert not results["successors"].passed
    assert "users of a locked statement in Book/Qux.lean could not be checked: the gate's time (0 × [build] " \
           "timeout_s) was spent on other files" in results["successors"].detail


RESTATE = "RESTATE: Book.qux — positive n\n"


@pytest.mark.parametrize("how", ["renamed", "moved"])
def test_a_locked_statement_renamed_or_moved_and_weakened_still_has_its_users_compiled(project: Project,
                                                                                       how: str) -> None:
    if how == "renamed":
        change = {"Book/Qux.lean": PATCHED.replace("qux", "qux'"),
                  "Book/User.lean": USER_PATCHED.replace("qux", "qux'")}
    else:  # to a new file the old one imports
        moved = ("import Mathlib.Tactic\n\nnamespace Book\n\ntheorem qux (n : ℕ) (h : 0 < n) : n * 1 = n := by\n"
                 "  simp\n\nend Book\n")
        rest = PATCHED.replace("theorem qux (n : ℕ) (h : 0 < n) : n * 1 = n := by\n  simp\n\n", "")
        change = {"Book/Moved.lean": moved, "Book/Qux.lean": rest.replace("import Mathlib.Tactic", "import Book.Moved"),
                  "Book/User.lean": USER_PATCHED}
    results, _ = project.gates(change, gates(), locked={"Book.qux": "x"}, strategy=RESTATE)
    assert results["kernel"].passed, results["kernel"].detail
    verdict = results["successors"]
    assert not verdict.passed, verdict.detail
    assert "five_mul_one (Book/User.lean), as it was at the base, no longer elaborates" in verdict.detail


def test_a_definition_changed_under_a_statement_has_the_statements_users_compiled(tmp_path: Path) -> None:
    defs = "namespace Book\n\ndef bound (n : ℕ) : ℕ := n\n\nend Book\n"
    qux = ("import Book.Defs\n\nnamespace Book\n\ntheorem qux (n : ℕ) : bound n * 1 = bound n := by\n  simp\n\n"
           "theorem three_mul_one : bound 3 * 1 = bound 3 := qux 3\n\nend Book\n")
    write(tmp_path / "book", {**BASE, "Book/Defs.lean": defs, "Book/Qux.lean": qux,
                              "Book.lean": "import Book.A\nimport Book.Qux\n"})
    project = Project(tmp_path / "book", standin())
    # Only `bound` is written anew; `qux`, whose statement reaches it, means something else, so its user is compiled.
    results, _ = project.gates({"Book/Defs.lean": defs.replace(":= n\n", ":= n + 0\n")}, gates("strict"))
    assert results["successors"].passed
    assert results["successors"].detail == ("2 user(s) of 3 altered constant(s) compiled as at the base: none "
                                             "broke")


def test_a_guard_or_a_variable_the_change_writes_into_a_users_file_is_not_compiled_with_it(project: Project) -> None:
    guarded = USER_PATCHED.replace("theorem five_mul_one", "#guard_msgs (drop error) in\ntheorem five_mul_one")
    results, _ = project.gates({"Book/Qux.lean": PATCHED, "Book/User.lean": guarded},
                               GatesConfig(successors="locked", allow_guard_msgs=True, **{
                                   k: v for k, v in KERNEL_ALONE.items() if k != "allow_guard_msgs"}),
                               locked={"Book.qux": "x"}, strategy=RESTATE)
    verdict = results["successors"]
    assert not verdict.passed
    assert "five_mul_one (Book/User.lean), as it was at the base, no longer elaborates" in verdict.detail


def test_a_deleted_user_is_put_back_before_an_exit() -> None:
    users = [User("Book.gone", "Book/Q.lean", "theorem gone : True := qux 1", "Book", ("Book.qux",))]
    text, regions = splice("theorem qux : True := trivial\n\n#exit\n\ntheorem late : True := trivial\n", [], users)
    assert text.index("theorem gone") < text.index("#exit")
    lines = text.split("\n")
    assert lines[regions[0].first - 1] == "theorem gone : True := qux 1"


def test_a_guard_written_before_a_user_in_the_statements_own_file_is_left_out(project: Project) -> None:
    guarded = PATCHED.replace("theorem three_mul_one", "#guard_msgs (drop error) in\nset_option maxHeartbeats 400 in\n"
                                                       "theorem three_mul_one")
    results, _ = project.gates({"Book/Qux.lean": guarded, "Book/User.lean": USER_PATCHED},
                               GatesConfig(successors="locked", **KERNEL_ALONE), locked={"Book.qux": "x"},
                               strategy=RESTATE)
    verdict = results["successors"]
    assert not verdict.passed
    assert "Book.three_mul_one (Book/Qux.lean), as it was at the base, no longer elaborates" in verdict.detail
