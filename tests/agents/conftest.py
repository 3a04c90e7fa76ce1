"""Fixtures for the model backends: the scripted Anthropic API, and no real credentials anywhere."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.standin.anthropic_server import AnthropicStandin

FAKE_KEY = "sk-ant-test-Zq9XwV7kP3-never-print-me"
"""The key the stand-in expects: distinctive, so a leak into a message or log is easy to spot."""


@pytest.fixture(autouse=True)
def no_real_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The developer's key, base URL or SDK profile must not reach a test, or a test's output."""
    for name in list(os.environ):
        if name.startswith("ANTHROPIC_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the SDK looks for profiles under ~/.config/anthropic


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicStandin]:
    """A started stand-in that requires `FAKE_KEY`; the test fails if it asked for more than was scripted."""
    with AnthropicStandin(api_key=FAKE_KEY) as server:
        yield server
        assert not server.ran_out, f"the stand-in's script ran out {server.ran_out} time(s); enqueue more replies"
