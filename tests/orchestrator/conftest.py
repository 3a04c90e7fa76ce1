"""Fixtures for whole cycles: a scripted model endpoint and a Lean project with a bare remote."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.orchestrator.harness import FAKE_KEY, Project, make_project
from tests.standin.anthropic_server import AnthropicStandin


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AnthropicStandin]:
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_", "GITHUB_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with AnthropicStandin(api_key=FAKE_KEY) as standin:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.base_url)
        yield standin


@pytest.fixture
def project(tmp_path: Path, server: AnthropicStandin) -> Project:
    return make_project(tmp_path, server)
