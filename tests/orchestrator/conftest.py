"""Fixtures for whole cycles (a scripted model endpoint and a Lean project with a bare remote) and for the pages
driven in a real headless Chromium (Debian's, through the playwright package; no browser is ever downloaded)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from tests.orchestrator.harness import FAKE_KEY, Project, make_project
from tests.standin.anthropic_server import AnthropicStandin

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", "--no-first-run"]


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


def unavailable(reason: str) -> NoReturn:
    """Skip on a developer's machine that cannot run the browser; on CI (`CI` set) that is a failure."""
    if os.environ.get("CI") is not None:
        pytest.fail(f"the browser test must run on CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as e:
        unavailable(f"the playwright package is not installed ({e}); pip install -e '.[test]'")
    executable = os.environ.get("AUTOFORMALIZE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(executable).is_file():
        unavailable(f"no browser at {executable}: install Debian's chromium (apt-get install -y chromium), or name "
                    "one in AUTOFORMALIZE_CHROMIUM")
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Error as e:
            unavailable(f"{executable} did not start: {e.message.splitlines()[0]}")
        yield browser
        browser.close()
