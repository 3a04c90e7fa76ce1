"""`autoformalize sorries` and `status` on fresh, used and reference-script repositories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.cli import main
from state.history import HistoryRecord, Outcome, append_record
from state.lock import RunLock

DATA = Path(__file__).parent.parent / "data"


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_sorries_json_on_any_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(DATA / "lean", tmp_path / "src")
    out = run_json(["sorries", str(tmp_path / "src"), "--json"], capsys)
    assert set(out) == {"total_sorries", "total_admits", "axioms", "locations"}
    assert out["total_sorries"] == 5 and out["total_admits"] == 0 and out["axioms"] == []
    assert set(out["locations"][0]) == {"file", "line", "column", "declaration", "keyword"}
    assert out["locations"][0] == {"file": "BNStability.lean", "line": 52, "column": 2,
                                   "declaration": "ButcherTableau.rk_stage_difference_eq", "keyword": "sorry"}


def test_sorries_table_groups_by_file_and_declaration(make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    two = "theorem t : True := by\n  sorry\n  sorry\ninstance : Inhabited Nat := ⟨sorry⟩\n"
    repo = make_repo({"Book/Two.lean": two})
    monkeypatch.chdir(repo / "Book")  # from anywhere inside the repository
    assert main(["sorries"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Book/Basic.lean"
    assert out[1].split() == ["Book.double_pos", "1", "sorry", "line", "9"]
    assert out[2] == "Book/Two.lean"
    assert out[3].split() == ["t", "2", "sorry", "lines", "2,", "3"]
    assert out[4].split() == ["(instance", "at", "line", "4)", "1", "sorry", "line", "4"]
    assert out[-1].startswith("4 sorries, 0 admits in 2 of 3 Lean files")


def test_sorries_of_a_single_file_and_of_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(["sorries", str(DATA / "lean" / "BNStability.lean"), "--json"], capsys)["total_sorries"] == 5
    assert main(["sorries", str(tmp_path / "missing")]) == 2
    assert "neither a file nor a directory" in capsys.readouterr().err


def test_sorries_outside_a_repository_needs_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["sorries"]) == 2
    assert "not inside a git repository" in capsys.readouterr().err


def test_status_of_a_fresh_repository(make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo()
    assert main(["init", str(repo)]) == 0
    capsys.readouterr()
    status = run_json(["status", "--json", "--repo", str(repo)], capsys)
    assert {"cycle", "total_sorries", "last_records", "open_issues", "lock", "heartbeat"} <= set(status)
    assert (status["cycle"], status["total_sorries"], status["last_records"], status["open_issues"], status["lock"],
            status["heartbeat"]) == (0, 1, [], [], "free", None)
    assert main(["status", "--repo", str(repo)]) == 0
    human = capsys.readouterr().out
    assert "cycle      0" in human and "lock       free" in human and "heartbeat  none" in human


def test_status_with_history_issues_and_a_held_lock(make_repo: Callable[..., Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo()
    main(["init", str(repo)])
    state = repo / ".prover-state"
    for cycle, score in ((1, 1), (2, -1), (3, 2)):
        append_record(state / "history.jsonl", HistoryRecord(cycle=cycle, outcome=Outcome.ACCEPTED,
                                                             progress_score=score, summary=f"cycle {cycle}",
                                                             cost_usd=0.5))
    (state / "cycle").write_text("3\n")
    (state / "issues" / "missing-lemma.md").write_text("# why\n")
    (state / "history.jsonl").open("a").write('{"cycle": 4, "trunc')
    capsys.readouterr()
    with RunLock(state / "run.lock"):
        status = run_json(["status", "--json", "--repo", str(repo)], capsys)
    assert status["cycle"] == 3
    assert [r["progress_score"] for r in status["last_records"]] == [1, -1, 2]
    assert status["open_issues"] == ["missing-lemma"]
    assert status["lock"] == "held" and status["lock_holder"]["pid"] == os.getpid()
    assert status["spend_usd"]["total"] == 1.5
    assert any("line 4: cut short" in p for p in status["problems"])


def test_status_of_a_reference_script_state_directory(make_repo: Callable[..., Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo()
    state = repo / ".prover-state"
    shutil.copytree(DATA / "openmath" / "issues", state / "issues")
    shutil.copy(DATA / "openmath" / "openmath_history_run2.jsonl", state / "history.jsonl")
    shutil.copy(DATA / "openmath" / "openmath_heartbeat.json", state / "heartbeat.json")
    (state / "cycle").write_text("268")  # the reference script writes no newline
    (state / "run.lock").write_text("")
    status = run_json(["status", "--json", "--repo", str(repo)], capsys)
    assert status["cycle"] == 268
    assert [r["cycle"] for r in status["last_records"]] == [1, 5, 10, 263, 268]
    assert status["open_issues"] == ["bdf4_lyapunov_gap"]
    assert status["heartbeat"]["pid"] == 62251 and status["heartbeat"]["phase"] == "worker"
    assert status["lock"] == "stale"
    assert any("plan.md is missing" in p for p in status["problems"])
    assert main(["status", "--repo", str(repo)]) == 0
    assert "cycle      268" in capsys.readouterr().out


def test_a_bad_config_exits_2_and_names_the_key(make_repo: Callable[..., Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({"autoformalize.toml": "[gates]\nrestructure_budgett = 3\n[agents.worker]\nmodle = 'x'\n"})
    assert main(["status", "--repo", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "gates.restructure_budgett: unknown key (did you mean `restructure_budget`?)" in err
    assert "agents.worker.modle: unknown key (did you mean `model`?)" in err


@pytest.mark.parametrize(("roots", "files", "said"), [
    (["Bok"], {}, "'Bok' is not a directory of"),
    (["Book", "Empty"], {"Empty/notes.md": "x\n"}, "'Empty' holds no Lean file"),
])
def test_a_lean_root_that_is_not_there_exits_2_naming_it(make_repo: Callable[..., Path],
                                                         capsys: pytest.CaptureFixture[str], roots: list[str],
                                                         files: dict[str, str], said: str) -> None:
    # A misspelled root would otherwise read as a finished book: 0 sorries in 0 Lean files, exit 0.
    repo = make_repo({**files, "autoformalize.toml": f"[project]\nlean_roots = {json.dumps(roots)}\n"})
    for command in (["status", "--repo", str(repo)], ["sorries", "--repo", str(repo)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "[project] lean_roots" in err and said in err


@pytest.mark.parametrize("launcher", [["-m", "orchestrator"], None])
def test_entry_points(launcher: list[str] | None, tmp_path: Path) -> None:
    (tmp_path / "A.lean").write_text("theorem a : True := sorry\n")
    if launcher is None:
        script = shutil.which("autoformalize", path=str(Path(sys.executable).parent))
        assert script is not None, "the console script is installed beside the interpreter"
        cmd = [script]
    else:
        cmd = [sys.executable, *launcher]
    done = subprocess.run([*cmd, "sorries", str(tmp_path), "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total_sorries"] == 1


def test_status_lists_files_over_the_warning_and_the_cap(make_repo: Callable[..., Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    line = "theorem t : True := trivial\n"
    repo = make_repo({"autoformalize.toml": "[gates]\nfile_warn_lines = 11\nfile_cap_lines = 14\n",  # Basic: 11
                      "Book/Long.lean": line * 12, "Book/Huge.lean": line * 15, "Book/Short.lean": line * 4})
    status = run_json(["status", "--json", "--repo", str(repo)], capsys)
    assert status["large_files"] == [{"file": "Book/Huge.lean", "lines": 15, "over": "cap"},
                                     {"file": "Book/Long.lean", "lines": 12, "over": "warn"}]
    assert main(["status", "--repo", str(repo)]) == 0
    human = capsys.readouterr().out
    assert "large      Book/Huge.lean: 15 lines, over the cap: it must be split" in human
    assert "large      Book/Long.lean: 12 lines, over the warning" in human and "Short" not in human


def test_a_warning_above_the_cap_exits_2(make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({"autoformalize.toml": "[gates]\nfile_warn_lines = 7000\n"})
    assert main(["status", "--repo", str(repo)]) == 2
    assert "file_warn_lines (7000) is above file_cap_lines (6000)" in capsys.readouterr().err
