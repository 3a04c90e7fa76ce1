"""Asking `exact?` of the stand-in Lean through the real compiler and sandbox: the shapes of each toolchain, the
cache's keys and what it keeps, the time limit, the budget, a dependency that does not build."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from audit import overlap
from audit.ask import Cache, ask, keys
from audit.exact import Answer, Kind
from audit.rests import Support
from gates.build import LakeCompiler
from gates.census import Census, census
from gates.config import BuildConfig
from gates.tree import DirTree
from tests.conftest import sandbox, write

STANDIN = Path(__file__).parent.parent / "standin" / "lean_checker.py"
ROOTS = ["Book"]
A = """\
import Mathlib

namespace Book

theorem le1 (k : ℕ) : k ≤ k + 1 := by omega

theorem twice (n : ℕ) : n * 2 = n + n := by omega

end Book
"""
SLOW = """\
import Book.A

namespace Book

/-- standin: sleep 30 -/
theorem slow (n : ℕ) : n = n := rfl

end Book
"""


def compiler(repo: Path, log: Path | None = None) -> LakeCompiler:
    """The stand-in in the sandbox; logging its runs, outside it (the sandbox lets it write nothing outside)."""
    prefix = f"env STANDIN_LOG={log} " if log else ""
    return LakeCompiler(repo, BuildConfig(check_file=f"{prefix}{sys.executable} {STANDIN} check {{file}}",
                                          timeout_s=60), sandbox(mode="none") if log else sandbox())


def project(make_repo: Callable[..., Path], files: dict[str, str], toolchain: str = "v4.24.0") -> tuple[Path, Census]:
    repo = make_repo({"Book.lean": "import Book.A\n", "Book/A.lean": A, "lean-toolchain":
                      f"leanprover/lean4:{toolchain}\n", **files})
    (repo / "Book/Basic.lean").unlink()
    return repo, census(DirTree(repo), ROOTS)


def targets(found: Census) -> list[overlap.Target]:
    return overlap.targets(found, Support(found, ROOTS))


@pytest.mark.parametrize("toolchain", ["v4.22.0", "v4.24.0", "v4.26.0", "v4.28.0"])
def test_each_toolchains_shape_of_try_this_gives_the_same_answer(make_repo: Callable[..., Path],
                                                                 toolchain: str) -> None:
    repo, found = project(make_repo, {}, toolchain)
    le1 = [t for t in targets(found) if t.name == "Book.le1"]
    raw = compiler(repo).probe(le1[0].text("N0NCE"))
    shape = {"v4.22.0": "Try this: exact", "v4.24.0": "Try this:\n  exact"}.get(toolchain, "Try this:\n  [apply] exact")
    assert shape in raw.output
    got = ask(le1, compiler(repo), None, keys(le1, found, "c"), limit_s=30, workers=1)
    assert got.answers["Book.le1"] == Answer(kind=Kind.FOUND, suggestion="Nat.le_succ k",
                                             seconds=got.answers["Book.le1"].seconds)


def test_an_answer_is_kept_under_the_closure_of_its_file_and_a_change_elsewhere_keeps_it(
        make_repo: Callable[..., Path]) -> None:
    repo, found = project(make_repo, {"Book/Slow.lean": SLOW, "Book/Other.lean": "theorem other : True := trivial\n"})
    before = keys(targets(found), found, "c")
    # Another toolchain or dependencies: every answer is asked again, a file importing nothing of the project's too.
    assert before["Book.le1"] != keys(targets(found), found, "another toolchain")["Book.le1"]
    write(repo, {"Book/A.lean": A.replace("end Book", "theorem later : True := trivial\n\nend Book"),
                 "Book/Other.lean": "theorem other : 1 = 1 := rfl\n"})
    after = keys(targets(census(DirTree(repo), ROOTS)), census(DirTree(repo), ROOTS), "c")
    # What follows a theorem in its file, and a file nothing imports, leave its answer alone; a file it imports
    # does not.
    assert after["Book.le1"] == before["Book.le1"] and after["Book.twice"] == before["Book.twice"]
    assert after["Book.slow"] != before["Book.slow"]


def test_a_timeout_is_kept_for_no_longer_a_limit_and_an_error_is_never_kept(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "answers")
    cache.put("k", Answer(kind=Kind.TIMEOUT, message="killed after 5s"), 5)
    assert cache.get("k", 5) is not None and cache.get("k", 2) is not None
    assert cache.get("k", 30) is None  # it might finish within the longer limit
    cache.put("e", Answer(kind=Kind.ERROR, message="Lean did not run"), 5)
    assert cache.get("e", 5) is None and not (tmp_path / "answers" / "e.json").exists()
    (tmp_path / "answers" / "bad.json").write_text("{not json")
    assert cache.get("bad", 5) is None and not (tmp_path / "answers" / "bad.json").exists()


def test_the_time_limit_makes_a_timeout_and_a_rerun_within_it_asks_nothing(make_repo: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    repo, found = project(make_repo, {"Book/Slow.lean": SLOW})
    log = tmp_path / "logs" / "lean.log"
    log.parent.mkdir()
    slow = [t for t in targets(found) if t.name == "Book.slow"]
    cache = Cache(tmp_path / "answers")
    keyed = keys(slow, found, "c")
    got = ask(slow, compiler(repo, log), cache, keyed, limit_s=2, workers=1)
    assert got.answers["Book.slow"].kind is Kind.TIMEOUT and not got.cached
    runs = log.read_text().count("check")
    again = ask(slow, compiler(repo, log), cache, keyed, limit_s=2, workers=1)
    assert again.cached == {"Book.slow"} and log.read_text().count("check") == runs


def test_once_the_budget_is_spent_nothing_more_is_asked(make_repo: Callable[..., Path]) -> None:
    repo, found = project(make_repo, {})
    ticks = itertools.count(step=10)
    got = ask(targets(found), compiler(repo), None, keys(targets(found), found, "c"), limit_s=30, workers=1,
              budget_s=5, clock=lambda: float(next(ticks)))
    assert not got.answers and got.unasked == ["Book.le1", "Book.twice"]


def test_imports_that_do_not_build_answer_every_theorem_with_the_error_and_nothing_is_kept(
        make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo, found = project(make_repo, {"Book/A.lean": "import Book.Missing\n" + A})
    cache = Cache(tmp_path / "answers")
    got = ask(targets(found), compiler(repo), cache, keys(targets(found), found, "c"), limit_s=30, workers=2)
    assert {a.kind for a in got.answers.values()} == {Kind.ERROR}
    assert "do not build" in got.answers["Book.le1"].message and "Book.Missing" in got.answers["Book.le1"].message
    assert not list((tmp_path / "answers").glob("*.json"))
