"""`autoformalize doctor`: the setup checks and the canaries, on the stand-in Lean (and a stand-in `lake` for the
versions); the same suite runs on real Lean in the CI job `doctor` and on the user's machine."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from gates.base import GateResult
from gates.build import LakeCompiler
from orchestrator.canaries import CANARIES
from orchestrator.cli import main
from orchestrator.doctor import Status, Verdicts, run_canaries
from tests.conftest import git, sandbox
from tests.orchestrator.harness import Project, config_text

LAKE = Path(__file__).parent.parent / "standin" / "bin"


@pytest.fixture
def lake_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{LAKE}{os.pathsep}{os.environ['PATH']}")


def verdicts(project: Project) -> dict[str, tuple[Status, str, list[str]]]:
    config = project.config
    found = run_canaries(project.repo, config, lambda root: LakeCompiler(root, config.build, sandbox()))
    return {v.canary.name: (v.finding().status, v.finding().detail, v.rejected_by) for v in found}


def with_dependencies(project: Project, *names: str) -> None:
    """The project depends on `names`, fetched (the stand-in Lean reads their modules as outside the project)."""
    packages = [{"name": n, "type": "git", "url": f"https://example.invalid/{n}", "rev": "0" * 40} for n in names]
    project.commit_files({"lake-manifest.json": json.dumps({"version": "1.1.0", "packages": packages})})
    for n in names:
        (project.repo / ".lake" / "packages" / n).mkdir(parents=True, exist_ok=True)


def test_every_cheat_is_rejected_and_the_honest_proof_accepted(project: Project) -> None:
    with_dependencies(project, "mathlib", "batteries")
    found = verdicts(project)
    assert set(found) == {c.name for c in CANARIES}
    assert all(status is Status.OK for status, _, _ in found.values()), found
    assert found["honest"][2] == []
    # Only Lean's environment tells: the text shows no change to what the statement means, or no hole.
    for name in ("shadowing", "deep_definition", "beyond_depth", "changed_axiom", "carrier", "private_instance",
                 "macro_definition", "irreducible_def", "alias"):
        assert found[name][2] == ["kernel"], found[name]
    # Restated as the strategy declares, it means something else by leave: only its user, as it was, tells.
    assert found["weakened_with_users"][2] == ["successors"], found["weakened_with_users"]
    assert "successors" in found["macro_over_user"][2], found["macro_over_user"]
    for name in ("guard_msgs", "meta_axiom", "unchecked", "native_decide", "hidden_axiom", "local_instance",
                 "print_axioms"):
        assert "integrity" in found[name][2] and "kernel" in found[name][2], found[name]
    # The throwaway copy is gone, and the user's checkout never saw a canary.
    assert not list(project.repo.rglob("AutoformalizeCanary"))
    assert project.clean()


def test_a_canary_needing_a_dependency_the_project_lacks_is_skipped_not_failed(project: Project) -> None:
    found = verdicts(project)
    for name in ("irreducible_def", "alias"):
        status, detail, rejected = found[name]
        assert status is Status.WARN and detail.startswith("skipped: it needs") and rejected == [], found[name]
    assert found["carrier"][0] is Status.OK


def test_gaps_counted_as_the_text_shows_them_or_refused_fail() -> None:
    gaps = next(c for c in CANARIES if c.name == "gaps")
    accepted = [GateResult(n, True, "") for n in ("sorry", "kernel")]
    assert Verdicts(gaps, accepted, 3).finding().status is Status.OK
    as_text = Verdicts(gaps, accepted, 1).finding()
    assert as_text.status is Status.FAIL and "the count gives 1 hole(s), not the 3" in as_text.detail
    refused = Verdicts(gaps, [GateResult("sorry", True, ""), GateResult("kernel", False, "no")], 3).finding()
    assert refused.status is Status.FAIL and "rejected, though every gate must accept it: kernel: no" in refused.detail


def test_a_check_file_that_checks_nothing_fails_the_honest_proof(project: Project) -> None:
    project.commit_files({"autoformalize.toml": config_text(build={"check_file": "true {file}"})})
    found = verdicts(project)
    status, detail, rejected = found["honest"]
    assert status is Status.FAIL and "the honest proof was rejected" in detail and rejected == ["kernel"]


def test_a_layer_that_lets_a_cheat_through_is_named_even_when_another_catches_it(project: Project) -> None:
    trust = "Book.AutoformalizeCanary.Hidden.trustMe"  # a project that allows the canary's axiom
    project.commit_files({"autoformalize.toml": config_text(gates={"allowed_axioms": [
        "propext", "Classical.choice", "Quot.sound", trust]})})
    status, detail, rejected = verdicts(project)["hidden_axiom"]
    assert status is Status.FAIL and rejected == ["integrity"]  # the string the lexer refuses to guess
    assert detail.startswith("rejected by integrity only: the kernel gate let it through")


def test_a_weakened_statement_with_the_successors_gate_off_is_named(project: Project) -> None:
    project.commit_files({"autoformalize.toml": config_text(gates={"successors": "off"})})
    status, detail, rejected = verdicts(project)["weakened_with_users"]
    assert status is Status.FAIL and rejected == []
    assert detail.startswith("GOT THROUGH: a locked statement gains a hypothesis")


def test_a_cheat_no_gate_rejects_got_through(project: Project) -> None:
    trust = "Book.AutoformalizeCanary.Meta.trustMe"  # meta code allowed, and its axiom too: nothing stops it
    project.commit_files({"autoformalize.toml": config_text(gates={
        "allow_meta_code": True, "allow_build_time_code": True, "allow_context_with_proof": True,
        "allowed_axioms": ["propext", "Classical.choice", "Quot.sound", trust]})})
    status, detail, rejected = verdicts(project)["meta_axiom"]
    assert status is Status.FAIL and rejected == [] and detail.startswith("GOT THROUGH: `run_cmd` adds an axiom")


def test_the_command_checks_the_setup_then_proves_the_gates(project: Project, lake_on_path: None,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--repo", str(project.repo)]) == 0
    out = capsys.readouterr().out
    for line in ("toolchain", "Lean (version 4.24.0", "sandbox", "bubblewrap works", "keys", "remote",
                 "origin accepts a push to main", "mathlib", "not a dependency", "build", "passed",
                 "canary honest", "accepted, as it must be", "canary shadowing", "rejected by kernel",
                 "every cheat was rejected and the honest proof accepted"):
        assert line in out, (line, out)
    # What the probe cost on this Lean: the doctor job's log keeps it per toolchain.
    assert re.search(r"environment probe +Lean listed \d+ constants of \d+ module\(s\) \(\d+ loaded\) in [\d.]+s "
                     r"\(2 Lean run\(s\)\)", out), out
    assert project.clean()


def test_what_is_missing_is_named_and_nothing_is_compiled_without_a_toolchain(
        project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no lake
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["doctor", "--repo", str(project.repo)]) == 1
    captured = capsys.readouterr()
    assert "FAIL  toolchain" in captured.out and "`lake` was not found" in captured.out
    assert "FAIL  keys" in captured.out and "ANTHROPIC_API_KEY" in captured.out
    assert "canary " not in captured.out and "passed" not in captured.out  # nothing compiled…
    for check in ("build", "canaries"):  # …and each check not made is named, with why
        assert f"skip  {check:<22} skipped: the toolchain check failed, so nothing can be compiled" in captured.out
    assert "failed: toolchain, keys" in captured.err


def test_without_canaries_only_the_setup_and_the_build_are_checked(project: Project, lake_on_path: None,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 0
    out = capsys.readouterr().out
    assert "build" in out and "canary " not in out
    assert "skip  canaries               skipped (--no-canaries)" in out
    assert "Everything checked is in place; not checked: canaries (see above)." in out


def test_a_toolchain_other_than_lean_toolchain_is_a_warning(project: Project, lake_on_path: None,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("STANDIN_LEAN_VERSION", "4.19.0")
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 0
    assert "warn  toolchain" in capsys.readouterr().out


def test_a_missing_mathlib_cache_fails_with_what_to_run(project: Project, lake_on_path: None,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (project.repo / ".lake" / "packages" / "mathlib").mkdir(parents=True)
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 1
    assert "run `lake exe cache get`" in capsys.readouterr().out



def test_what_an_offline_compile_would_have_to_download_fails(project: Project, lake_on_path: None,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    project.commit_files({"lake-manifest.json": '{"version": "1.1.0", "packagesDir": ".lake/packages", '
                                                '"packages": [{"type": "git", "name": "mathlib"}]}'})
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  downloads" in out and "run `lake exe cache get`" in out


def test_a_remote_with_the_branch_checked_out_refuses_the_push_and_doctor_says_so(
        project: Project, lake_on_path: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `git push --dry-run` does not see this refusal: the receiving side decides it once the objects are sent.
    other = tmp_path / "checked-out"
    git(tmp_path, "clone", "-q", str(project.repo), str(other))
    git(project.repo, "remote", "set-url", "origin", str(other))
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  remote" in out and "refuses a push to main (receive.denyCurrentBranch = refuse)" in out
    git(project.repo, "commit", "-q", "--allow-empty", "-m", "a cycle's commit")
    with pytest.raises(subprocess.CalledProcessError):  # as git itself says when the cycle pushes it
        git(project.repo, "push", "-q", "origin", "HEAD:main")
    git(other, "config", "receive.denyCurrentBranch", "updateInstead")
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 0
    assert "origin accepts a push to main" in capsys.readouterr().out


def test_without_elan_the_toolchain_on_disk_is_not_called_checked(project: Project, lake_on_path: None,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 0
    out = capsys.readouterr().out
    assert "warn  downloads" in out and "elan is not installed" in out and "was not checked" in out
    assert "toolchain and the dependencies are on disk" not in out


def test_doctor_names_the_judge_and_a_state_file_still_ignored(project: Project, lake_on_path: None,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 0
    out = capsys.readouterr().out
    assert "ok    judge                  claude-sonnet-4-6 on the anthropic backend" in out
    assert "ok    ignore rules" in out
    project.commit_files({".gitignore": (project.repo / ".gitignore").read_text() + "strategy.md\n"})
    assert main(["doctor", "--no-canaries", "--repo", str(project.repo)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  ignore rules" in out and ".prover-state/strategy.md (by .gitignore:" in out


@pytest.mark.parametrize(("toolchain", "said"), [("v4.24.0", "Lean's kernel refused a constant"),
                                                 ("v4.28.0", "leanchecker found a problem")])
def test_a_theorem_stored_without_the_kernels_check_is_refused_by_the_replay(project: Project, toolchain: str,
                                                                             said: str) -> None:
    pinned = f"leanprover/lean4:{toolchain}\n"
    if (project.repo / "lean-toolchain").read_text() != pinned:  # the harness pins v4.24.0
        project.commit_files({"lean-toolchain": pinned})
    config = project.config
    found = run_canaries(project.repo, config, lambda root: LakeCompiler(root, config.build, sandbox()))
    unchecked = next(v for v in found if v.canary.name == "unchecked")
    kernel = next(r for r in unchecked.results if r.name == "kernel")
    assert unchecked.finding().status is Status.OK and not kernel.passed
    assert said in kernel.detail and "Unchecked.aux'" in kernel.detail, kernel.detail
    project.commit_files({"autoformalize.toml": config_text(gates={"kernel_replay": "off"})})
    status, detail, rejected = verdicts(project)["unchecked"]
    assert status is Status.FAIL and "kernel" not in rejected
    assert detail.startswith("rejected by integrity only: the kernel gate let it through"), detail
