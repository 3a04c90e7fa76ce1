"""The loop's judge on another model family than the Worker's when a key for one is set, so the model that wrote a
statement is not the one that judges it faithful."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.config import AgentConfig, Endpoint, judge_for
from orchestrator.config import CONFIG_FILE, Config, load_config, render_config
from tests.orchestrator.harness import Project, evaluation, strategy
from tests.orchestrator.test_faithfulness import EDIT
from tests.standin.openai_server import OpenAIStandin

OPENAI_KEY = "sk-test-judge-family-Rt7w2-never-print-me"
JUDGE = AgentConfig(model="claude-sonnet-4-6", timeout_s=300)


@pytest.mark.parametrize(("worker", "environ", "chosen"), [
    (Endpoint(model="claude-opus-4-6"), {"OPENAI_API_KEY": "k"}, ("openai", "gpt-5-mini", None)),
    (Endpoint(backend="claude-code", model="claude-opus-4-6"), {"OPENAI_API_KEY": "k"},
     ("openai", "gpt-5-mini", None)),
    (Endpoint(model="claude-opus-4-6"), {"ANTHROPIC_API_KEY": "k"}, ("anthropic", "claude-sonnet-4-6", None)),
    (Endpoint(model="claude-opus-4-6"), {"OPENAI_API_KEY": ""}, ("anthropic", "claude-sonnet-4-6", None)),
    (Endpoint(backend="openai", model="qwen", base_url="http://localhost:8000/v1"), {"ANTHROPIC_AUTH_TOKEN": "k"},
     ("anthropic", "claude-sonnet-4-6", None)),
    (Endpoint(backend="openai", model="qwen", base_url="http://localhost:8000/v1"), {"OPENAI_API_KEY": "k"},
     ("openai", "qwen", "http://localhost:8000/v1")),
])
def test_the_judge_is_of_another_family_when_its_key_is_set(worker: Endpoint, environ: dict[str, str],
                                                           chosen: tuple[str, str, str | None]) -> None:
    judge = judge_for(worker, JUDGE, environ)
    assert (judge.backend, judge.model, judge.base_url) == chosen and judge.timeout_s == 300


def write_config(root: Path, text: str) -> Path:
    (root / CONFIG_FILE).write_text(text)
    return root


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_configured_judge_follows_the_environment_unless_named(tmp_path: Path,
                                                                   clean_env: pytest.MonkeyPatch) -> None:
    root = write_config(tmp_path, "[agents.judge]\ntimeout_s = 120\n")
    unset = load_config(root).agents.judge
    assert (unset.backend, unset.model, unset.timeout_s) == ("anthropic", "claude-sonnet-4-6", 120)
    clean_env.setenv("OPENAI_API_KEY", "k")
    other = load_config(root).agents.judge
    assert (other.backend, other.model, other.timeout_s) == ("openai", "gpt-5-mini", 120)
    named = load_config(write_config(tmp_path, '[agents.judge]\nmodel = "claude-opus-4-6"\n')).agents.judge
    assert (named.backend, named.model) == ("anthropic", "claude-opus-4-6")  # named: kept whatever the keys


def test_a_new_configuration_leaves_the_judge_to_follow_the_workers_family(tmp_path: Path,
                                                                         clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_API_KEY", "k")
    (tmp_path / "Book.lean").write_text("theorem t : True := trivial\n")
    root = write_config(tmp_path, render_config(Config()))
    judge = load_config(root).agents.judge
    assert (judge.backend, judge.model, judge.timeout_s) == ("openai", "gpt-5-mini", 300)
    assert load_config(root).agents.evaluator.model == "claude-sonnet-4-6"  # the other roles as written


@pytest.fixture
def gpt(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStandin]:
    with OpenAIStandin(api_key=OPENAI_KEY) as server:
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server
        assert not server.ran_out


def add_theorem(project: Project) -> None:
    project.agents.plan(strategy("Book/B.lean", target="State Theorem 2.1."))
    project.agents.work(EDIT, "added Theorem 2.1")
    project.agents.evaluate(evaluation(1))


def test_a_cycle_with_an_openai_key_is_judged_on_openai(project: Project, gpt: OpenAIStandin) -> None:
    add_theorem(project)
    gpt.enqueue_text(json.dumps({"lean_implies_nl": True, "nl_implies_lean": True, "score": 3, "reason": "same"}))

    record, _ = project.cycle()

    assert record.outcome == "accepted"
    assert [(f.entity, f.score) for f in record.faithfulness] == [("thm:2.1", 3)]
    assert project.agents.calls["judge"] == 0 and len(gpt.requests) == 1
    assert gpt.requests[0].body["model"] == "gpt-5-mini"
    assert "judge" in record.usage


def test_a_cycle_without_another_familys_key_is_judged_on_the_workers(project: Project) -> None:
    add_theorem(project)
    project.agents.judge(True, True, 3)

    record, _ = project.cycle()

    assert [(f.entity, f.score) for f in record.faithfulness] == [("thm:2.1", 3)]
    assert project.agents.calls["judge"] == 1
