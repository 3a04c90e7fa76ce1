"""The build gate, driving a stand-in checker that prints Lean's diagnostics."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from gates import build
from gates.base import GateInput
from gates.build import LakeCompiler
from gates.census import census
from gates.config import BuildConfig, GatesConfig
from gates.environment import Baseline
from gates.listing import gather, toolchain
from gates.registry import run_gates
from gates.tree import DirTree
from state.errors import InfraError
from tests.conftest import LAKEFILE, sandbox, write

STANDIN = Path(__file__).parent.parent / "standin" / "lean_checker.py"
A = "namespace Book\n\ntheorem easy : True := trivial\n\ntheorem hard : True := by\n  sorry\n\nend Book\n"
B = "import Book.A\n\nnamespace Book\n\ntheorem uses : True := Book.easy\n\nend Book\n"
C = "import Book.B\n\nnamespace Book\n\ntheorem top : True := Book.uses\n\nend Book\n"
D = "namespace Book\n\ntheorem alone : True := trivial\n\nend Book\n"
PROJECT = {"Book/A.lean": A, "Book/B.lean": B, "Book/C.lean": C, "Book/D.lean": D, "Book.lean": "import Book.C\n",
           "lakefile.toml": LAKEFILE}


# The stand-in logs its calls into the build outputs, the one place the sandbox lets it write.
SANDBOX = sandbox(env=["STANDIN_LOG"])


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.base = tmp_path / "base"
        self.work = tmp_path / "work"
        self.log = self.work / ".lake" / "standin.log"
        write(self.base, PROJECT)
        shutil.copytree(self.base, self.work)

    def config(self, **kw: object) -> BuildConfig:
        return BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}",
                           read_file=f"{sys.executable} {STANDIN} env {{file}}",
                           build_all=f"{sys.executable} {STANDIN} build", **kw)  # type: ignore[arg-type]

    def input(self, changes: dict[str, str | None], **kw: object) -> GateInput:
        for rel, text in changes.items():
            if text is None:
                (self.work / rel).unlink()
            else:
                write(self.work, {rel: text})
        config = self.config(**kw)
        return GateInput(base=DirTree(self.base), changed=DirTree(self.work), gates=GatesConfig(), build=config,
                         lean_roots=["Book"], state_dir=".prover-state", scope=["Book/**"], report="", cycle=1,
                         compiler=LakeCompiler(self.work, config, SANDBOX))

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    made = Setup(tmp_path)
    monkeypatch.setenv("STANDIN_LOG", str(made.log))
    return made


def test_changed_file_and_its_importers_are_checked_in_import_order(setup: Setup) -> None:
    result = build.check(setup.input({"Book/A.lean": A.replace("  sorry", "  trivial")}))
    assert result.passed, result.detail
    assert setup.calls() == ["check Book/A.lean", "check Book/B.lean", "check Book/C.lean", "check Book.lean"]


def test_an_importer_broken_by_a_rename_fails_the_gate(setup: Setup) -> None:
    result = build.check(setup.input({"Book/A.lean": A.replace("theorem easy", "theorem easy'")}))
    assert not result.passed
    assert "Book/B.lean:5:23: error: unknown identifier 'Book.easy'" in result.detail
    assert setup.calls() == ["check Book/A.lean", "check Book/B.lean"]  # stops at the first failing file


def test_a_compile_error_in_the_changed_file_is_reported_with_its_message(setup: Setup) -> None:
    result = build.check(setup.input({"Book/D.lean": D.replace("trivial", "absurd_marker")}))
    assert not result.passed
    assert "Book/D.lean:3:24: error: type mismatch\n  absurd_marker\nhas type" in result.detail


def test_deleting_an_imported_file_fails_at_its_importer(setup: Setup) -> None:
    result = build.check(setup.input({"Book/A.lean": None}))
    assert not result.passed and "Book/B.lean:1:0: error: unknown module prefix 'Book.A'" in result.detail


def test_many_affected_files_build_the_whole_project(setup: Setup) -> None:
    result = build.check(setup.input({"Book/A.lean": A.replace("theorem easy", "theorem easy'")}, max_check_files=2))
    assert not result.passed
    assert setup.calls() == ["build"]
    assert "whole project was built" in result.detail
    assert "Book/B.lean:5:23: error: unknown identifier 'Book.easy'" in result.detail


def test_no_lean_change_runs_no_compiler(setup: Setup) -> None:
    result = build.check(setup.input({"notes.md": "x\n"}))
    assert result.passed and setup.calls() == []


def test_a_hung_check_is_killed_with_its_process_group(setup: Setup) -> None:
    start = time.monotonic()
    result = build.check(setup.input({"Book/D.lean": D + "-- standin: sleep 30\n"}, timeout_s=1))
    assert time.monotonic() - start < 15
    assert not result.passed and "timed out after" in result.detail
    # The stand-in started a grandchild sleeping 120 s in the same group: it must be gone too.
    time.sleep(0.2)
    survivors = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _is_sleeper(p)]
    assert survivors == []


def _is_sleeper(proc: Path) -> bool:
    try:
        return b"time.sleep(120)" in (proc / "cmdline").read_bytes()
    except OSError:
        return False


def test_a_missing_compiler_is_an_infrastructure_error(setup: Setup) -> None:
    inp = setup.input({"Book/D.lean": D + "\n"})
    inp.compiler = LakeCompiler(setup.work, BuildConfig(check_file="no-such-lake lean {file}"), SANDBOX)
    with pytest.raises(InfraError, match="`no-such-lake` was not found"):
        build.check(inp)


def test_a_failure_without_diagnostics_shows_the_output(setup: Setup) -> None:
    inp = setup.input({"Book/D.lean": D + "\n"})
    inp.compiler = LakeCompiler(setup.work, BuildConfig(check_file=f"{sys.executable} -c \"print('lake crashed');"
                                                                   " raise SystemExit(3)\" {file}"), SANDBOX)
    result = build.check(inp)
    assert not result.passed and "exited with 3 without a parseable error" in result.detail
    assert "lake crashed" in result.detail


def test_the_build_gate_waits_for_the_cheap_gates(setup: Setup) -> None:
    inp = setup.input({"Book/D.lean": D + "axiom bad : False\n"})
    results = run_gates(inp)
    assert [r.name for r in results] == ["scope", "integrity", "secrets", "sorry", "size"]
    assert not results[1].passed and setup.calls() == []


def test_all_gates_pass_on_an_honest_change(setup: Setup) -> None:
    before = census(DirTree(setup.base), ["Book"])  # the kernel gate compares closed statements with the base's
    chain = toolchain(setup.work)
    got = gather(LakeCompiler(setup.work, setup.config(), SANDBOX), before, ["Book"], set(before.files), chain, None)
    baseline = Baseline(got.modules, {}, got.problem, chain)
    inp = setup.input({"Book/A.lean": A.replace("  sorry", "  trivial")})
    inp.kernel_base = baseline
    results = run_gates(inp)
    assert [(r.name, r.passed) for r in results] == [("scope", True), ("integrity", True), ("secrets", True),
                                                     ("sorry", True), ("size", True), ("build", True),
                                                     ("kernel", True), ("successors", True)]
