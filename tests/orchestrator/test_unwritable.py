"""Every command reports an unwritable or missing path as `error: …`, exit 2, and leaves nothing partial. The
read-only folders are real: the command runs under bubblewrap with the repository bound read-only (EROFS)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.cli import main
from state.atomic import write_all
from tests.conftest import git

ROOT = Path(__file__).resolve().parents[2]


def read_only(*args: str, cwd: Path, frozen: Path) -> subprocess.CompletedProcess[str]:
    """`autoformalize ARGS` with `frozen` on a read-only mount (everything else as it is)."""
    command = ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind", str(frozen), str(frozen),
               "--chdir", str(cwd), sys.executable, "-m", "orchestrator", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    return errors[0]


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_init_in_a_read_only_repository(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    before = snapshot(repo)
    error = one_error(read_only("init", cwd=repo, frozen=repo))
    assert error.startswith("error: cannot write the files init adds: ") and "read-only filesystem" in error
    assert error.endswith("nothing was written")
    assert snapshot(repo) == before


def test_report_and_audit_into_read_only_folders(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo()
    assert main(["init", "--repo", str(repo)]) == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    frozen = tmp_path / "site"
    frozen.mkdir()
    error = one_error(read_only("report", "--out", str(frozen / "out"), "--repo", str(repo), cwd=repo, frozen=frozen))
    assert error.startswith(f"error: cannot write the report: {frozen} is not writable")
    error = one_error(read_only("audit", "--no-models", "--out", str(frozen), "--repo", str(repo), cwd=repo,
                                frozen=frozen))
    assert error == f"error: cannot write the audit's results: {frozen} is not writable (a read-only filesystem)"
    # The repository itself read-only: the audit's copy in the state folder cannot be written, said before any work.
    before = snapshot(repo)
    error = one_error(read_only("audit", "--no-models", "--repo", str(repo), cwd=repo, frozen=repo))
    assert "cannot write the audit's results:" in error and "read-only filesystem" in error
    assert snapshot(repo) == before and list(frozen.iterdir()) == []


def test_a_path_through_a_file_is_an_error_not_a_traceback(make_repo: Callable[..., Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo()
    (repo / "notes").write_text("a file\n")
    assert main(["report", "--out", str(repo / "notes" / "site"), "--repo", str(repo)]) == 2
    assert capsys.readouterr().err.startswith(f"error: cannot write the report: {repo / 'notes'} is not a directory")


def test_write_all_writes_every_file_or_none(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("old\n")
    (tmp_path / "blocker").write_text("a file where a folder should be\n")
    with pytest.raises(FileExistsError):  # the folder to make is a file
        write_all({tmp_path / "new" / "deep" / "a.txt": "a", tmp_path / "kept.txt": "new\n",
                   tmp_path / "blocker" / "b.txt": "b"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "kept.txt"]  # `new/deep/` removed again
    assert (tmp_path / "kept.txt").read_text() == "old\n"
