"""The README's two set-up commands on a fresh clone of this repository, on a machine without bubblewrap."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = {"bwrap", "apt-get", "sudo"}


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """The files a clone would hold, as the work tree has them (uncommitted edits and new files included)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout
    dest = tmp_path / "clone"
    for rel in filter(None, listed.decode().split("\0")):
        source = ROOT / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    return dest


@pytest.fixture
def no_bwrap(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH holds every program of this one but bubblewrap and the means to install it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not Path(folder).is_dir():
            continue
        for program in Path(folder).iterdir():
            if program.name not in HIDDEN and not (bin_dir / program.name).exists():
                (bin_dir / program.name).symlink_to(program)
    assert shutil.which("bwrap", path=str(bin_dir)) is None
    return {**os.environ, "PATH": str(bin_dir)}


def test_quick_start_stops_at_once_without_bubblewrap(clone: Path, no_bwrap: dict[str, str]) -> None:
    started = time.monotonic()
    done = subprocess.run(["bash", "quickstart.sh"], cwd=clone, env=no_bwrap, capture_output=True, text=True,
                          timeout=120)
    took = time.monotonic() - started
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: bwrap (bubblewrap) is not installed")
    assert "apt-get install bubblewrap" in lines[0]
    assert not (clone / ".venv").exists() and not (clone / "demo").exists(), "nothing installed before the check"
    assert took < 30, took


def test_test_command_stops_at_once_without_bubblewrap(clone: Path, no_bwrap: dict[str, str]) -> None:
    # The README's `.venv/bin/python -m pytest -q`, with this environment's Python (a fresh .venv holds the same).
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=clone, env=no_bwrap,
                          capture_output=True, text=True, timeout=300)
    took = time.monotonic() - started
    out = done.stdout + done.stderr
    assert done.returncode == 4, out
    assert out.count("bwrap (bubblewrap) is not installed") == 1, out
    assert "bash scripts/bubblewrap.sh" in out
    assert " passed" not in out and " failed" not in out, "no test ran"
    assert took < 60, took
