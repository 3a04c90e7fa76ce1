"""Both model endpoints scripted for an audit run: each answers by the request, as many times as the run asks."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.standin import anthropic_server as claude_wire
from tests.standin import openai_server as openai_wire
from tests.standin.anthropic_server import AnthropicStandin
from tests.standin.openai_server import OpenAIStandin


@contextlib.contextmanager
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, key: str,
             claude: Callable[[Any], claude_wire.Reply], gpt: Callable[[Any], openai_wire.Reply], *, replies: int = 40
             ) -> Iterator[tuple[AnthropicStandin, OpenAIStandin]]:
    """Both stand-ins serving `replies` answers each, found by the SDKs through the environment (and nothing else
    there: no key of the machine, a home of the test's own)."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with AnthropicStandin(api_key=key) as anthropic, OpenAIStandin(api_key=key) as openai:
        for _ in range(replies):
            anthropic.enqueue(claude)
            openai.enqueue(gpt)
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv("OPENAI_BASE_URL", openai.base_url)
        yield anthropic, openai
