"""A Lake project in a folder below the repository root (ReasBook's layout, trimmed in tests/data/reasbook): `init`
finds it, Lake runs there, every path stays relative to the repository root."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from agents.ledger import Ledger
from agents.tools import Workspace
from agents.worker import Limits
from orchestrator import ownership
from orchestrator.cli import main
from orchestrator.commands.init import workflow
from orchestrator.config import load_config
from state.errors import UsageError
from tests.conftest import git, write
from tests.orchestrator.harness import Project, config_text, evaluation, make_project, strategy, user_text
from tests.orchestrator.test_init import actionlint
from tests.standin.anthropic_server import AnthropicStandin

DATA = Path(__file__).parent.parent / "data" / "reasbook"
LAKE = Path(__file__).parent.parent / "standin" / "bin"
PART = "ReasBook/Books/ConvexAnalysis_Rockafellar_1970/Chapters/Chap01/section05_part1.lean"
LSP = Path(__file__).resolve().parent.parent / "standin" / "lean_lsp_server.py"
LSP_DATA = Path(__file__).resolve().parent.parent / "data" / "lean_lsp"
ROOTS = ["ReasBook/ReasBook", "ReasBook/Books/ConvexAnalysis_Rockafellar_1970"]


def layout() -> dict[str, str]:
    return {p.relative_to(DATA).as_posix(): p.read_text(encoding="utf-8") for p in DATA.rglob("*") if p.is_file()}


def committed(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


def test_init_finds_the_lake_project_below_the_root_and_records_it(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = committed(tmp_path, layout())
    assert main(["init", str(repo)]) == 0
    assert "Lean project in ReasBook/: lakefile.lean, toolchain leanprover/lean4:v4.30.0" in capsys.readouterr().out
    config = load_config(repo)
    assert config.project.lake_dir == "ReasBook"
    # Each library's own srcDir: `«ReasBook»` sets none, the book's is `Books`.
    assert config.project.lean_roots == ROOTS
    assert (repo / "plan.md").is_file() and (repo / ".prover-state" / "cycle").is_file()  # at the git root


def test_init_of_the_project_folder_works_from_the_git_root(tmp_path: Path) -> None:
    repo = committed(tmp_path, layout())
    assert main(["init", str(repo / "ReasBook")]) == 0
    assert (repo / "autoformalize.toml").is_file() and not (repo / "ReasBook" / "autoformalize.toml").exists()
    assert load_config(repo).project.lake_dir == "ReasBook"


def test_several_lake_projects_are_refused_naming_them_unless_one_is_chosen(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = layout()
    files |= {f"Other/{k.removeprefix('ReasBook/')}": v for k, v in files.items() if k.startswith("ReasBook/")}
    repo = committed(tmp_path, files)
    assert main(["init", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "several Lake projects: Other, ReasBook" in err and "--project Other" in err
    assert not (repo / "autoformalize.toml").exists()
    assert main(["init", str(repo), "--project", str(repo / "ReasBook")]) == 0
    assert load_config(repo).project.lake_dir == "ReasBook"


def test_a_folder_without_a_lake_project_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = committed(tmp_path, layout())
    assert main(["init", str(repo), "--project", str(repo / "ReasBook" / "Books")]) == 2
    assert "ReasBook/Books holds no Lean project" in capsys.readouterr().err


@pytest.mark.parametrize(("project", "message"), [
    ({"lake_dir": "Reasbook"}, "lake_dir: 'Reasbook' is not a directory"),
    ({"lake_dir": "ReasBook", "lean_roots": ["Elsewhere"]}, "lie outside lake_dir 'ReasBook'"),
    ({"lake_dir": "../ReasBook"}, "must be a folder inside the repository"),
])
def test_a_wrong_lake_dir_is_caught_at_load(tmp_path: Path, project: dict[str, object], message: str) -> None:
    repo = committed(tmp_path, {**layout(), "Elsewhere/X.lean": "def x := 1\n",
                                "autoformalize.toml": config_text(project=project)})
    with pytest.raises(UsageError, match=message) as caught:
        load_config(repo)
    assert caught.value.exit_code == 2


def test_the_lake_files_of_the_project_folder_are_protected(tmp_path: Path) -> None:
    repo = committed(tmp_path, {**layout(), "autoformalize.toml": config_text(
        project={"lake_dir": "ReasBook", "lean_roots": ROOTS})})
    protected = ownership.protected(load_config(repo))
    for name in ("lakefile.lean", "lakefile.toml", "lean-toolchain", "lake-manifest.json"):
        assert f"ReasBook/{name}" in protected


def test_the_workflow_fetches_and_caches_in_the_project_folder(tmp_path: Path) -> None:
    repo = committed(tmp_path, {**layout(), "autoformalize.toml": config_text(
        project={"lake_dir": "ReasBook", "lean_roots": ROOTS})})
    text = workflow(load_config(repo))
    assert "path: ReasBook/.lake\n" in text
    assert "hashFiles('ReasBook/lean-toolchain', 'ReasBook/lake-manifest.json')" in text
    assert "working-directory: ReasBook\n        run: |\n          lake exe cache get" in text
    path = tmp_path / "autoformalize.yml"
    path.write_text(text)
    done = actionlint(path)
    assert done.returncode == 0, done.stdout + done.stderr


# -- whole cycles and the doctor -------------------------------------------------------------------------------

PROVED = layout()[PART].replace("  sorry", "  omega")


@pytest.fixture
def reasbook(tmp_path: Path, server: AnthropicStandin) -> Project:
    return make_project(tmp_path, server, lean=layout(), config=config_text(
        project={"lake_dir": "ReasBook", "lean_roots": ROOTS}))


def test_a_cycle_compiles_in_the_project_folder_and_lands(reasbook: Project) -> None:
    base = reasbook.head()
    reasbook.agents.plan(strategy(PART, target="Prove `Section05.add_comm_nat`."))
    broken = PROVED.replace("omega", "exact Section05.missing")
    reasbook.agents.work([("write_file", {"path": PART, "content": broken})],
                         [("lean_check", {"path": PART})],
                         [("write_file", {"path": PART, "content": PROVED})],
                         [("lean_check", {"path": PART})],
                         [("write_file", {"path": "ReasBook/lakefile.lean", "content": "-- mine now\n"})],
                         "## Approach\nomega closes it.\n")
    reasbook.agents.evaluate(evaluation(2))
    record, _ = reasbook.cycle()
    assert record.outcome == "accepted", record
    assert reasbook.show("HEAD", PART) == PROVED and PART in reasbook.changed(base)
    asked = reasbook.agents.requests["worker"]
    # `lean_check` ran Lake in ReasBook/ (the stand-in, like Lake, refuses a folder without a lakefile), and Lean's
    # messages name the file as the repository does; the project's lakefile in that folder is protected.
    assert f"{PART}:7:8: error: unknown identifier 'Section05.missing'" in user_text(asked[2])
    assert user_text(asked[4]).endswith("ok: 0 error(s)\n")
    assert "protected" in user_text(asked[5]).rsplit("ok: 0 error(s)", 1)[-1]
    assert reasbook.show("HEAD", "ReasBook/lakefile.lean") == layout()["ReasBook/lakefile.lean"]
    assert not (reasbook.repo / ".lake").exists()  # nothing of Lake's at the git root


def test_the_same_repository_with_lake_run_at_the_root_cannot_compile(tmp_path: Path,
                                                                      server: AnthropicStandin) -> None:
    project = make_project(tmp_path, server, lean=layout(), config=config_text(project={"lean_roots": ROOTS}))
    project.agents.plan(strategy(PART))
    project.agents.work([("lean_check", {"path": PART})], "## Approach\nnothing compiles.\n")
    project.agents.evaluate(evaluation(0))
    record, _ = project.cycle()
    assert record.outcome != "accepted"
    assert "no configuration file with a supported extension" in user_text(project.agents.requests["worker"][1])


def test_the_doctor_checks_and_proves_the_gates_in_the_project_folder(
        reasbook: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", f"{LAKE}{os.pathsep}{os.environ['PATH']}")
    assert main(["doctor", "--repo", str(reasbook.repo)]) == 0
    out = capsys.readouterr().out
    # The stand-in `lake` answers with the version the lean-toolchain of the folder it runs in names.
    assert "Lean (version 4.30.0" in out and "warn  toolchain" not in out
    assert "every cheat was rejected and the honest proof accepted" in out
    assert reasbook.clean()



def test_the_lean_server_runs_in_the_project_folder_and_reads_the_workers_paths(reasbook: Project) -> None:
    server = [sys.executable, str(LSP), str(LSP_DATA)]
    reasbook.commit_files({"autoformalize.toml": config_text(
        project={"lake_dir": "ReasBook", "lean_roots": ROOTS},
        agents={"worker": {"lean_tools": "lean-lsp-mcp", "lean_lsp_command": server}})}, "lean tools")
    reasbook.agents.plan(strategy(PART))
    reasbook.agents.work([("lean_goal", {"file_path": PART, "line": 7})], "## Approach\nlooked at the goal.\n")
    reasbook.agents.evaluate(evaluation(0))
    record, _ = reasbook.cycle()
    assert record.tool_calls["lean_goal"].count == 1
    seen = user_text(reasbook.agents.requests["worker"][1])
    assert (LSP_DATA / "lean_goal.txt").read_text().strip() in seen and "not found" not in seen


def test_a_claude_code_workers_lean_server_is_pointed_at_the_project_folder(reasbook: Project) -> None:
    reasbook.commit_files({"autoformalize.toml": config_text(
        project={"lake_dir": "ReasBook", "lean_roots": ROOTS},
        agents={"worker": {"backend": "claude-code", "model": "claude-opus-4-6", "lean_tools": "lean-lsp-mcp"}})},
        "claude-code with lean tools")
    workspace = Workspace(reasbook.repo, [PART], [], ".prover-state", ROOTS, reasbook.deps().compiler(reasbook.repo))
    session = reasbook.deps().session(workspace, "rules", Limits(5, 60), Ledger(), threading.Event())
    try:
        engine = session.engine  # type: ignore[attr-defined]
        started = engine.quarters._resolve({"kind": "mcp", "name": "lean_lsp"})  # what the relay runs for it
        assert f"LEAN_PROJECT_PATH={reasbook.repo.resolve() / 'ReasBook'}" in started and "--ro-bind" in started
        assert "Commands run in `ReasBook/`" in engine.system_prompt
    finally:
        session.close()
