"""The engine sandbox (`Sandbox.engine`): what a coding agent's own process can reach, probed by a shell run in it
as the engines' CLIs are."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gates.config import SandboxConfig
from gates.sandbox import Sandbox
from tests.conftest import write


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    write(home, {".ssh/id_ed25519": "PRIVATE KEY\n"})
    monkeypatch.setenv("HOME", str(home))
    checkout = tmp_path / "checkout"
    write(checkout, {".git/hooks/pre-commit": "#!/bin/sh\necho HOOK\n", ".prover-state/history.jsonl": "{}\n",
                     ".lake/packages/mathlib/Mathlib.lean": "-- shared\n"})
    work = tmp_path / "cache" / "worker-0"
    write(work, {"Book/A.lean": "theorem a : True := trivial\n", "lakefile.toml": 'name = "b"\n'})
    engine_home = tmp_path / "engine" / "home"
    engine_home.mkdir(parents=True)
    for path in (tmp_path, tmp_path / "cache", work, tmp_path / "engine", engine_home):
        os.chmod(path, 0o755)
    return {"home": home, "checkout": checkout, "work": work, "engine_home": engine_home}


def run(places: dict[str, Path], script: str, env: dict[str, str] | None = None) -> str:
    checkout = places["checkout"]
    sandbox = Sandbox(SandboxConfig(), hidden=(checkout, checkout / ".git"), packages=checkout / ".lake/packages")
    command, environment = sandbox.engine(["/bin/sh", "-c", script], places["work"], places["engine_home"],
                                          env or {})
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=60, check=False)
    return done.stdout + done.stderr


def test_it_writes_the_working_copy_and_its_home_and_sees_nothing_of_yours(places: dict[str, Path],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-another-key-never-seen")
    checkout, work = places["checkout"], places["work"]
    out = run(places, f"cat {places['home']}/.ssh/id_ed25519; cat {checkout}/.git/hooks/pre-commit; "
                      f"ls {checkout}/.prover-state; echo edited > {work}/Book/A.lean && echo WROTE; "
                      f"echo x > $HOME/settings.json && echo HOME-WRITABLE; env",
              {"ENGINE_KEY": "sk-engine-own-key"})

    assert "PRIVATE KEY" not in out and "HOOK" not in out and "history.jsonl" not in out
    assert "WROTE" in out and (work / "Book/A.lean").read_text() == "edited\n"
    assert "HOME-WRITABLE" in out and (places["engine_home"] / "settings.json").exists()
    assert "ENGINE_KEY=sk-engine-own-key" in out and "sk-openai-another-key-never-seen" not in out
    assert f"HOME={places['engine_home'].resolve()}" in out


def test_it_has_no_capability_and_cannot_remount_what_it_reads(places: dict[str, Path]) -> None:
    shared = (places["checkout"] / ".lake/packages").resolve()
    (places["work"] / ".lake").mkdir(exist_ok=True)
    (places["work"] / ".lake/packages").symlink_to(shared)
    out = run(places, f"grep CapEff /proc/self/status; mount -o remount,bind,rw {shared} && echo REMOUNTED; "
                      f"echo forged > {shared}/mathlib/Forged.lean && echo FORGED; "
                      "mount -o remount,bind,rw /usr && echo USR-WRITABLE; id -u")

    assert "CapEff:\t0000000000000000" in out
    assert "REMOUNTED" not in out and "FORGED" not in out and "USR-WRITABLE" not in out
    assert not (shared / "mathlib" / "Forged.lean").exists()
    assert out.strip().splitlines()[-1] != "0" or os.geteuid() != 0  # as root: not root in its namespace either
