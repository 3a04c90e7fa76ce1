"""What the commands say and do about the sandbox: refusing to start without one, warning when it is off."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import structlog

from orchestrator.cli import main
from orchestrator.config import Config, render_config
from orchestrator.logs import configure as configure_logs
from orchestrator.toolchain import toolchain_dir
from orchestrator.wiring import secrets_for
from tests.orchestrator.harness import Project, config_text, evaluation, strategy


def _without_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH holding what the commands need, but no bwrap."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("git", "env", "sh", "prlimit", "setpriv", "true"):
        (tools / name).symlink_to(shutil.which(name) or name)
    monkeypatch.setenv("PATH", str(tools))


@pytest.mark.parametrize("command", [["cycle"], ["run", "--max-cycles", "1"]])
def test_cycle_and_run_refuse_to_start_without_bwrap(project: Project, tmp_path: Path, command: list[str],
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _without_bwrap(tmp_path, monkeypatch)
    head = project.head()

    assert main([*command, "--repo", str(project.repo)]) == 2

    err = capsys.readouterr().err
    assert "bwrap (bubblewrap) is not installed" in err and "sudo apt-get install bubblewrap" in err
    assert 'mode = "none"' in err
    assert project.head() == head and project.history() == [] and project.agents.calls.total() == 0


def test_the_dry_run_and_status_say_how_worker_code_runs(project: Project, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    out = capsys.readouterr().out
    assert "sandbox: bwrap: no network, no credentials" in out
    assert f"{tmp_path / 'cache' / 'autoformalize'}" in out  # where the working copy would be

    assert main(["status", "--json", "--repo", str(project.repo)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["sandbox"]["mode"] == "bwrap" and status["sandbox"]["sandboxed"] is True
    assert status["sandbox"]["problem"] is None

    _without_bwrap(tmp_path, monkeypatch)
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 2
    captured = capsys.readouterr()
    assert "a cycle would refuse to start (exit 2)" in captured.out
    assert "  - the sandbox for code the Worker writes cannot run: bwrap (bubblewrap) is not installed" in captured.err
    assert main(["status", "--json", "--repo", str(project.repo)]) == 0
    sandbox = json.loads(capsys.readouterr().out)["sandbox"]
    assert sandbox["sandboxed"] is False and sandbox["problem"] == "bwrap (bubblewrap) is not installed"


def test_unsandboxed_every_cycle_warns_and_status_says_so(project: Project, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    project.commit_files({"autoformalize.toml": config_text(sandbox={"mode": "none"})}, "no sandbox")
    for _ in range(2):
        project.agents.plan(strategy("Book/A.lean"))
        project.agents.work("nothing to do")
        project.agents.evaluate(evaluation(0))

    assert main(["run", "--max-cycles", "2", "--cooldown", "0", "--repo", str(project.repo)]) == 0

    logged = capsys.readouterr()
    assert (logged.out + logged.err).count("sandbox.off") == 2
    assert main(["status", "--repo", str(project.repo)]) == 0
    assert 'sandbox    unsandboxed ([sandbox] mode = "none")' in capsys.readouterr().out
    assert main(["status", "--json", "--repo", str(project.repo)]) == 0
    assert json.loads(capsys.readouterr().out)["sandbox"] == {
        "mode": "none", "sandboxed": False, "problem": None,
        "detail": '''unsandboxed ([sandbox] mode = "none"): code the Worker writes runs with your user's rights, '''
                  "network, files and credentials reachable"}


def test_the_rendered_configuration_documents_the_sandbox() -> None:
    text = render_config(Config())
    assert "[sandbox]\n# How code the Worker wrote is confined" in text and 'mode = "bwrap"' in text
    assert "memory_mb = 8192" in text and "cpu_s = 3600" in text


def test_the_logs_never_show_a_secret(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-0123456789-never-print-me")
    configure_logs(json_lines=True)
    structlog.get_logger().warning("tool.failed", error="curl -H 'Bearer tok-0123456789-never-print-me' failed",
                                   arguments={"header": "tok-0123456789-never-print-me"})

    line = json.loads(capsys.readouterr().err)
    assert line["error"] == "curl -H 'Bearer [redacted: SOME_SERVICE_TOKEN]' failed"
    assert "never-print-me" not in json.dumps(line)


@pytest.mark.parametrize("command", [["cycle"], ["run", "--max-cycles", "1"]])
def test_a_toolchain_or_dependencies_to_download_are_asked_for_first(
        project: Project, tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Inside the sandbox elan could not download the toolchain, nor Lake the dependencies.
    elan = tmp_path / "elan"
    (elan / "toolchains").mkdir(parents=True)
    monkeypatch.setenv("ELAN_HOME", str(elan))

    assert main([*command, "--repo", str(project.repo)]) == 2
    assert "run `elan toolchain install leanprover/lean4:v4.24.0`" in capsys.readouterr().err

    (elan / "toolchains/leanprover--lean4---v4.24.0").mkdir()
    head = project.commit_files({"lake-manifest.json": json.dumps({
        "version": "1.1.0", "packagesDir": ".lake/packages", "packages": [{"name": "mathlib", "type": "git"}]})})
    assert main([*command, "--repo", str(project.repo)]) == 2
    err = capsys.readouterr().err
    assert "the dependencies mathlib of lake-manifest.json are not in .lake/packages" in err
    assert "`lake exe cache get`" in err and "has no network" in err
    assert project.agents.calls.total() == 0 and project.history() == [] and project.head() == head


def test_toolchain_names_as_elan_reads_them(tmp_path: Path) -> None:
    named = {"leanprover/lean4:v4.24.0": "leanprover--lean4---v4.24.0", "v4.24.0": "leanprover--lean4---v4.24.0",
             "4.24.0": "leanprover--lean4---v4.24.0",
             "nightly-2025-01-01": "leanprover--lean4-nightly---nightly-2025-01-01"}

    assert {name: toolchain_dir(name, tmp_path) for name in named} == {
        name: tmp_path / "toolchains" / d for name, d in named.items()}
    assert toolchain_dir("stable", tmp_path) is None and toolchain_dir("leanprover/lean4:nightly", tmp_path) is None


def test_the_logs_redact_the_key_variables_the_configuration_names(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # `MY_LLM` looks like no credential; the configuration names it as the Worker's key.
    monkeypatch.setenv("MY_LLM", "llm-0123456789-never-print-me")
    configure_logs(json_lines=True)
    config = Config.model_validate({"agents": {"worker": {"backend": "openai", "model": "m", "api_key_env": "MY_LLM"}}})

    secrets_for(config)  # as the wiring of `cycle`, `run` and `audit` does once the configuration is read
    structlog.get_logger().warning("model.failed", error="HTTP 401 for llm-0123456789-never-print-me")

    assert json.loads(capsys.readouterr().err)["error"] == "HTTP 401 for [redacted: MY_LLM]"
