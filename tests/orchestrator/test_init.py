"""`autoformalize init` on real repositories."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator import ignores
from orchestrator.cli import main
from orchestrator.config import Config, load_config
from state.paths import StatePaths
from tests.conftest import BASIC, git, write


def test_init_writes_config_state_rules_and_ignores(make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    repo = make_repo()
    assert main(["init", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "Lean roots: Book" in out
    config = load_config(repo)
    assert config.project.lean_roots == ["Book"]
    assert config.model_dump() == Config.model_validate({"project": {"lean_roots": ["Book"]},
                                                         "budget": {"per_day_usd": 50.0}}).model_dump()
    assert "Budget: at most $50 a day ([budget] per_day_usd)" in out
    for rel in ("plan.md", "CLAUDE.md", "AGENTS.md", ".prover-state/cycle", ".prover-state/history.jsonl",
                ".prover-state/attempts.md", ".prover-state/issues/.gitkeep", ".prover-state/task_results/.gitkeep"):
        assert (repo / rel).exists(), rel
    rules = (repo / "CLAUDE.md").read_text()
    assert "sorry-first" in rules and "maxHeartbeats" in rules and ".prover-state/issues/<slug>.md" in rules
    ignore = (repo / ".gitignore").read_text().splitlines()
    assert ".prover-state/heartbeat.json" in ignore and ".prover-state/run.lock" in ignore
    git(repo, "add", "-A")  # everything init wrote can be committed; the ignored files are not there yet
    assert "heartbeat" not in git(repo, "status", "--porcelain")


def test_init_records_the_numbered_doc_comments_it_finds_as_a_persons_pairing(
        make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    one = "namespace Book\n\n/-- Theorem 1.1 One is one. -/\ntheorem one : 1 = 1 := rfl\n\nend Book\n"
    repo = make_repo({"Book/One.lean": one})
    assert main(["init", str(repo)]) == 0
    assert "wrote    .prover-state/pairing.json" in capsys.readouterr().out
    entities = json.loads((repo / ".prover-state/pairing.json").read_text())["entities"]
    assert sorted(entities) == ["def:1.1", "thm:1.1"]  # Book/Basic.lean's Definition 1.1 too
    entry = entities["thm:1.1"]
    assert (entry["nl"], entry["by"], entry["source"]) == ("One is one.", "person", "Book/One.lean:3 at init")
    assert entry["declarations"] == {"Book.one": {"by": "person", "cycle": 0}}
    bare = make_repo({"Book/Basic.lean": BASIC.replace("/-- Definition 1.1 -/\n", "")}, name="bare")
    assert main(["init", str(bare)]) == 0 and not (bare / ".prover-state/pairing.json").exists()


def test_init_never_overwrites_and_says_what_it_kept(make_repo: Callable[..., Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({"CLAUDE.md": "# my own rules\n", "plan.md": "# my plan\n", ".gitignore": ".lake"})
    assert main(["init", str(repo)]) == 0
    out = capsys.readouterr().out
    assert (repo / "CLAUDE.md").read_text() == "# my own rules\n"
    assert (repo / "plan.md").read_text() == "# my plan\n"
    assert "kept     CLAUDE.md (exists; not overwritten)" in out
    assert (repo / ".gitignore").read_text().startswith(".lake\n# autoformalize")
    # A second run changes nothing.
    snapshot = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git/" not in str(p)}
    assert main(["init", str(repo)]) == 0
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git/" not in str(p)} == snapshot


def test_init_with_explicit_lean_roots(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"Extra/X.lean": "def x := 1\n"})
    assert main(["init", str(repo), "--lean-root", "Book", "--lean-root", "Extra"]) == 0
    assert tomllib.loads((repo / "autoformalize.toml").read_text())["project"]["lean_roots"] == ["Book", "Extra"]


def test_init_takes_the_repository_as_every_command_does(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    assert main(["init", "--repo", str(repo)]) == 0
    assert load_config(repo).project.lean_roots == ["Book"]
    assert main(["init", str(repo), "--repo", str(repo / "Book")]) == 2


def test_init_refuses_a_lean_root_that_is_not_there(make_repo: Callable[..., Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo()
    assert main(["init", str(repo), "--lean-root", "Foo"]) == 2
    assert "--lean-root: 'Foo' is not a directory of" in capsys.readouterr().err
    assert not (repo / "autoformalize.toml").exists()


def test_lean_roots_from_a_lakefile_lean(make_repo: Callable[..., Path]) -> None:
    lakefile = "import Lake\nopen Lake DSL\npackage x\n@[default_target]\nlean_lib «Book» where\n"
    repo = make_repo({"lakefile.lean": lakefile})
    (repo / "lakefile.toml").unlink()
    assert main(["init", str(repo)]) == 0
    assert load_config(repo).project.lean_roots == ["Book"]


def test_init_outside_a_git_repository_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "lakefile.toml").write_text('name = "x"\n')
    assert main(["init", str(tmp_path)]) == 2
    assert "not inside a git repository" in capsys.readouterr().err
    assert not (tmp_path / "autoformalize.toml").exists()


def test_init_without_a_lean_project_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(tmp_path, "init", "-q")
    assert main(["init", str(tmp_path)]) == 2
    assert "holds no Lean project" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [tmp_path / ".git"]


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    assert binary is not None, "actionlint is installed with the test extras"
    return subprocess.run([binary, "-no-color", str(path)], capture_output=True, text=True)


def test_init_github_writes_a_workflow_actionlint_accepts(make_repo: Callable[..., Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo()
    assert main(["init", str(repo), "--github"]) == 0
    path = repo / ".github/workflows/autoformalize.yml"
    text = path.read_text()
    done = actionlint(path)
    assert done.returncode == 0, done.stdout + done.stderr
    for needle in ('cron: "0 */3 * * *"', "workflow_dispatch:", "concurrency:", "cancel-in-progress: false",
                   "timeout-minutes: 205", "path: .lake", 'python -m pip install "autoformalize"',
                   "ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}",
                   "AUTOFORMALIZE_WEBHOOK_URL: ${{ secrets.AUTOFORMALIZE_WEBHOOK_URL }}",
                   "ARISTOTLE_API_KEY: ${{ secrets.ARISTOTLE_API_KEY }}",
                   ".git/autoformalize/blame\n", ".git/autoformalize/census\n", "autoformalize cycle"):
        assert needle in text, needle
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().out


def test_the_workflow_timeout_follows_the_config_and_its_cap(make_repo: Callable[..., Path]) -> None:
    from orchestrator.commands.init import workflow
    from orchestrator.config import Config

    short = Config.model_validate({"agents": {"worker": {"model": "m", "timeout_s": 600}}})
    assert "timeout-minutes: 95\n" in workflow(short)  # (900 + 600 + 300 + 900 + 900 + 2 × 600) s + 15 min
    long = Config.model_validate({"agents": {"worker": {"model": "m", "timeout_s": 86_400}}})
    assert "timeout-minutes: 360\n" in workflow(long)


@pytest.mark.parametrize("name", ["ci.yml", "mutation.yml", "newest.yml"])
def test_the_projects_own_workflows_pass_actionlint(name: str) -> None:
    done = actionlint(Path(__file__).parents[2] / ".github/workflows" / name)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_bad_schedule_is_caught_by_actionlint(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"autoformalize.toml": '[github]\nschedule = "every hour"\n'})
    assert main(["init", str(repo), "--github"]) == 0
    done = actionlint(repo / ".github/workflows/autoformalize.yml")
    assert done.returncode != 0 and "cron" in done.stdout


def test_the_workflow_runs_the_doctor_before_the_first_cycle_only(make_repo: Callable[..., Path],
                                                                   tmp_path: Path) -> None:
    repo = make_repo()
    assert main(["init", str(repo), "--github"]) == 0
    text = (repo / ".github/workflows/autoformalize.yml").read_text()
    step = text[text.index("- name: Doctor (before the first cycle)"):text.index("- name: Run cycles")]
    assert text.index("autoformalize doctor") < text.index("autoformalize cycle")
    script = "\n".join(line[10:] for line in step[step.index("run: |"):].splitlines()[1:] if line.strip())
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "autoformalize").write_text("#!/bin/sh\necho \"ran autoformalize $*\"\n")
    (stub / "autoformalize").chmod(0o755)
    env = {**os.environ, "PATH": f"{stub}{os.pathsep}{os.environ['PATH']}"}
    for cycle, ran in (("0\n", True), ("12\n", False)):
        (repo / ".prover-state/cycle").write_text(cycle)
        done = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True, check=True)
        assert ("ran autoformalize doctor" in done.stdout) is ran, done.stdout


OPENMATH_GITIGNORE = (Path(__file__).parents[1] / "data/openmath/openmath_gitignore").read_text()
# Its later version: strategy.md, history.jsonl, attempts.md and the Consultant's advice ignored as well.
OPENMATH_GITIGNORE_2026 = (Path(__file__).parents[1] / "data/openmath/openmath_gitignore_2026").read_text()


@pytest.mark.parametrize("ignore", [OPENMATH_GITIGNORE, OPENMATH_GITIGNORE_2026, "/.prover-state/\n*.md\n",
                                    ".prover-state/*\n!.prover-state/x\n"],
                         ids=["openmath", "openmath-2026", "the-whole-folder-and-markdown", "its-contents"])
def test_state_the_ignore_rules_swallow_is_refused_then_re_included_by_init(
        make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str], ignore: str) -> None:
    repo = make_repo({".gitignore": ignore, "plan.md": "# plan\n"})
    write(repo, {".prover-state/history.jsonl": "", ".prover-state/cycle": "0\n"})
    assert main(["status", "--repo", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "the ignore rules exclude files a cycle must commit: " in err and ".gitignore:" in err

    assert main(["init", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "included .prover-state/" in out
    assert main(["status", "--repo", str(repo), "--json"]) == 0
    capsys.readouterr()
    git(repo, "add", "-A")
    staged = git(repo, "diff", "--cached", "--name-only").split()
    for path in (".prover-state/cycle", ".prover-state/history.jsonl", ".prover-state/attempts.md", "CLAUDE.md"):
        assert path in staged, path
    write(repo, {".prover-state/issues/some-issue.md": "x\n", ".prover-state/strategy.md": "x\n",
                 ".prover-state/heartbeat.json": "{}", ".prover-state/run.lock": "", ".prover-state/.x.md.tmp": "",
                 ".prover-state/issues/.y.md.tmp": ""})
    git(repo, "add", "-A")
    staged = git(repo, "diff", "--cached", "--name-only").split()
    assert ".prover-state/issues/some-issue.md" in staged and ".prover-state/strategy.md" in staged
    assert not [p for p in staged if p.endswith((".tmp", "heartbeat.json", "run.lock"))], staged


def _job(text: str, name: str) -> str:
    """One job of a workflow: from its key to the next job's (jobs are the 2-space-indented keys under `jobs:`)."""
    jobs = text[text.index("\njobs:\n"):]
    start = jobs.index(f"\n  {name}:\n")
    end = next((i for i in range(start + 1, len(jobs)) if jobs.startswith("\n  ", i) and jobs[i + 3] != " "),
               len(jobs))
    return jobs[start:end]


def test_init_github_with_workers_writes_a_round_workflow_actionlint_accepts(make_repo: Callable[..., Path],
                                                                            capsys: pytest.CaptureFixture[str]
                                                                            ) -> None:
    repo = make_repo()
    assert main(["init", str(repo), "--github", "--workers", "3"]) == 0
    config = load_config(repo)
    assert (config.parallel.workers, config.parallel.engine) == (3, "github")
    path = repo / ".github/workflows/autoformalize.yml"
    done = actionlint(path)
    assert done.returncode == 0, done.stdout + done.stderr
    text = path.read_text()
    plan, work, land = _job(text, "plan"), _job(text, "work"), _job(text, "land")
    assert "autoformalize round plan --out" in plan and 'echo "items=$(cat' in plan and "name: round" in plan
    assert "contents: write" in plan and "autoformalize doctor" in plan
    # The Workers' jobs: a matrix of the plan's indices, no token that could push, no cache they could poison.
    assert "item: ${{ fromJSON(needs.plan.outputs.items) }}" in work and "max-parallel: 3" in work
    assert "contents: read" in work and "contents: write" not in work and "persist-credentials: false" in work
    assert "GITHUB_TOKEN" not in work and "ARISTOTLE_API_KEY" not in work
    assert "actions/cache/restore@v4" in work and "actions/cache@v4" not in work
    assert "ITEM: ${{ matrix.item }}" in work and '--item "$ITEM"' in work and "name: result-${{ matrix.item }}" in work
    assert "needs: [plan, work]" in land and "!cancelled()" in land and "pattern: result-*" in land
    assert "autoformalize round land --round" in land and "contents: write" in land
    # The jobs that push restore no cache by a prefix, which could match an entry a Worker's job saved.
    assert "restore-keys" not in text and "blame" not in text
    key = "key: lake-${{ runner.os }}-${{ hashFiles('lean-toolchain', 'lake-manifest.json') }}\n"
    assert key in plan and key in work and key in land
    out = capsys.readouterr().out
    assert "runs a round of up to 3 Workers" in out
    assert "note: at their limits the round's land job(s) could take 575 min" in out


def test_the_single_workflow_restores_the_lean_cache_by_prefix(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    assert main(["init", str(repo), "--github"]) == 0
    text = (repo / ".github/workflows/autoformalize.yml").read_text()
    assert "-${{ github.sha }}\n          restore-keys: |\n            lake-${{ runner.os }}-" in text


def test_the_round_workflow_hands_the_matrix_on(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    """The plan step's script, run as the runner runs it: the matrix the command wrote becomes the job's output."""
    repo = make_repo()
    assert main(["init", str(repo), "--github", "--workers", "2"]) == 0
    plan = _job((repo / ".github/workflows/autoformalize.yml").read_text(), "plan")
    step = plan[plan.index("- name: Plan the round"):plan.index("- name: Keep the round")]
    script = "\n".join(line[10:] for line in step[step.index("run: |"):].splitlines()[1:] if line.strip())
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "autoformalize").write_text('#!/bin/sh\nmkdir -p "$4" && echo "[0, 1]" > "$4/matrix.json"\n'
                                        'echo "{}" > "$4/round.json"\n')
    (stub / "autoformalize").chmod(0o755)
    output = tmp_path / "output"
    env = {**os.environ, "PATH": f"{stub}{os.pathsep}{os.environ['PATH']}", "RUNNER_TEMP": str(tmp_path),
           "GITHUB_OUTPUT": str(output)}
    subprocess.run(["bash", "-c", script], cwd=repo, env=env, check=True)
    digest = hashlib.sha256(b"{}\n").hexdigest()
    assert output.read_text() == f"items=[0, 1]\nround={digest}\n"
    land = _job((repo / ".github/workflows/autoformalize.yml").read_text(), "land")
    assert "ROUND_DIGEST: ${{ needs.plan.outputs.round }}" in land and '--digest "$ROUND_DIGEST"' in land


def test_workers_without_github_set_local_rounds(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    assert main(["init", str(repo), "--workers", "4"]) == 0
    assert (load_config(repo).parallel.workers, load_config(repo).parallel.engine) == (4, "local")
    assert not (repo / ".github").exists()


def test_every_kind_of_state_file_is_committable_after_init_under_openmaths_rules(
        make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    """OpenMath's rule `.prover-state/issues/consultant_advice_cycle_*.md` catches one name of the issues folder and
    not another: each kind and name is checked on its own."""
    repo = make_repo({".gitignore": OPENMATH_GITIGNORE_2026, "plan.md": "# plan\n"})
    assert main(["init", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "included .prover-state/issues/consultant_advice_cycle_001.md (.gitignore re-includes it: " \
           ".gitignore:28: .prover-state/issues/consultant_advice_cycle_*.md excluded it" in out
    kinds = [path for path in ignores.committed(StatePaths(repo), "plan.md", "autoformalize.toml")]
    assert len(kinds) > 20
    write(repo, dict.fromkeys(kinds, "x\n"))
    git(repo, "add", "-A")
    staged = set(git(repo, "diff", "--cached", "--name-only").split())
    assert [p for p in kinds if p not in staged] == []
    # What the project keeps local stays so.
    write(repo, {".prover-state/loop.log": "x\n", ".prover-state/aristotle/job.json": "{}",
                 ".prover-state/heartbeat.json": "{}", ".prover-state/run.lock": ""})
    git(repo, "add", "-A")
    staged = set(git(repo, "diff", "--cached", "--name-only").split())
    assert not {".prover-state/loop.log", ".prover-state/aristotle/job.json", ".prover-state/heartbeat.json",
                ".prover-state/run.lock"} & staged


def test_status_names_a_state_file_kind_still_ignored(make_repo: Callable[..., Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({"plan.md": "# plan\n"})
    assert main(["init", str(repo)]) == 0
    write(repo, {".gitignore": (repo / ".gitignore").read_text() + ".prover-state/issues/closed/\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init, then a rule of the user's")
    capsys.readouterr()
    assert main(["status", "--repo", str(repo)]) == 2
    assert ".prover-state/issues/closed/some-issue.md (by .gitignore:" in capsys.readouterr().err
