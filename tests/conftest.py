"""Shared fixtures: real temporary git repositories holding small Lean projects."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from gates.config import SandboxConfig
from gates.sandbox import Sandbox, probe

STANDIN_DIR = Path(__file__).parent / "standin"
# The tests on a real Lean (WebAssembly, minutes a run) are collected only where one is installed: `.ci/run` installs
# it and runs them on their own.
collect_ignore = [] if os.environ.get("AUTOFORMALIZE_WASM_LEAN") else ["real"]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
                          check=True)
    return done.stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


LAKEFILE = """\
name = "book"
defaultTargets = ["Book"]

[[lean_lib]]
name = "Book"
"""

BASIC = """\
import Mathlib.Tactic

namespace Book

/-- Definition 1.1 -/
def double (n : ℕ) : ℕ := 2 * n

theorem double_pos (n : ℕ) (h : 0 < n) : 0 < double n := by
  sorry

end Book
"""


def pytest_configure(config: pytest.Config) -> None:
    """The tests run the real sandbox: without it, stop before collecting with one message (exit 4), rather than
    fail every sandboxed test one by one."""
    problem = probe(SandboxConfig())
    if problem is not None:
        raise pytest.UsageError(f"the tests need the sandbox, which cannot run here: {problem}; run "
                                "`bash scripts/bubblewrap.sh` to install bubblewrap or learn how")


def sandbox(**config: object) -> Sandbox:
    """The real sandbox (bubblewrap), showing the stand-ins read-only: the stand-in Lean imports its IO module from
    its own directory."""
    read_only = [str(STANDIN_DIR), *config.pop("read_only", [])]  # type: ignore[misc]
    return Sandbox(SandboxConfig(read_only=read_only, **config))  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Worker's working copies go to the user's cache directory: each test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """A git repository with a Lean project (`Book/`), committed; extra files on request."""

    def make(files: dict[str, str] | None = None, *, name: str = "repo") -> Path:
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        write(repo, {"lakefile.toml": LAKEFILE, "lean-toolchain": "leanprover/lean4:v4.24.0\n",
                     "Book.lean": "import Book.Basic\n", "Book/Basic.lean": BASIC, **(files or {})})
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "initial")
        return repo

    return make
