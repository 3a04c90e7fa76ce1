"""`cycle --dry-run` makes every check a cycle makes before it spends, and names each refusal; the judge's backend
is one whose SDK is installed and whose key is set."""

from __future__ import annotations

import json
import sys

import pytest

from agents.config import AgentConfig, Endpoint, judge_for
from orchestrator.cli import main
from tests.orchestrator.harness import Project, config_text

MANIFEST = json.dumps({"version": "1.1.0", "packagesDir": ".lake/packages",
                       "packages": [{"type": "git", "name": "mathlib"}]})


@pytest.fixture
def no_openai_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `openai` extra not installed, as Python's import system sees it (find_spec answers None, import fails)."""
    monkeypatch.setitem(sys.modules, "openai", None)


def test_the_dry_run_names_each_refusal_the_cycle_would_make(project: Project, no_openai_sdk: None,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    project.commit_files({"lake-manifest.json": MANIFEST, "autoformalize.toml": config_text(
        budget={"per_cycle_usd": 5.0},
        agents={"worker": {"model": "claude-opus-4.6"}, "judge": {"backend": "openai", "model": "gpt-5-mini"}})})
    (project.repo / "Book" / "Scratch.lean").write_text("-- mine\n")

    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 2
    err = capsys.readouterr().err
    assert "A cycle would refuse to start (exit 2), or stop before any model is called, for 4 reason(s):" in err
    for reason in ("  - uncommitted changes in Book/Scratch.lean",
                   "  - the dependencies mathlib of lake-manifest.json are not in .lake/packages",
                   "  - the openai backend's SDK (openai) is not installed (for the judge): install it with "
                   "`pip install 'autoformalize[openai]'`",
                   "  - a [budget] is set but these models have no known price: claude-opus-4.6 (the worker)"):
        assert reason in err, reason

    # Each is a refusal of the real cycle, before any request: fixed one by one, the next one stops it.
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert "the dependencies mathlib of lake-manifest.json" in capsys.readouterr().err
    (project.repo / ".lake" / "packages" / "mathlib").mkdir(parents=True)
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    err = capsys.readouterr().err
    assert "the openai backend's SDK (openai) is not installed (for the judge)" in err
    assert "no known price: claude-opus-4.6 (the worker)" in err
    (project.repo / "autoformalize.toml").write_text(config_text(budget={"per_cycle_usd": 5.0}))
    assert main(["cycle", "--repo", str(project.repo)]) == 2
    assert "uncommitted changes in autoformalize.toml, Book/Scratch.lean" in capsys.readouterr().err
    assert project.server.requests == [] and project.history() == []

    (project.repo / "Book" / "Scratch.lean").unlink()
    project.commit_files({}, "a budget, and models with prices")
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    assert "a cycle would start" in capsys.readouterr().out


def test_the_dry_run_names_a_spent_budget_and_a_missing_build_program(project: Project,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    project.commit_files({"autoformalize.toml": config_text(build={"build_all": "no-such-lake build"})})
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 2
    assert "`no-such-lake` ([build] build_all) was not found on PATH" in capsys.readouterr().err


def test_the_judge_skips_a_family_whose_sdk_is_not_installed() -> None:
    judge = AgentConfig(model="claude-sonnet-4-6", timeout_s=300)
    worker = Endpoint(model="claude-opus-4-6")
    keys = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    assert judge_for(worker, judge, keys, lambda backend: backend != "openai").backend == "anthropic"
    assert judge_for(worker, judge, keys, lambda backend: True).backend == "openai"


def test_an_openai_key_without_its_sdk_leaves_the_judge_on_anthropic(project: Project, no_openai_sdk: None,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    assert "judge: claude-sonnet-4-6 on the anthropic backend reads" in capsys.readouterr().out
    monkeypatch.delitem(sys.modules, "openai")  # installed again
    assert main(["cycle", "--dry-run", "--repo", str(project.repo)]) == 0
    assert "judge: gpt-5-mini on the openai backend reads" in capsys.readouterr().out
