"""MkDocs hook: the configuration page's reference, generated at build time from the configuration models (the
same models and docstrings `autoformalize init` renders autoformalize.toml from), so it cannot drift."""

from __future__ import annotations

from typing import Any

from orchestrator.config import Config, reference

MARKER = "<!-- configuration reference -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "configuration.md":
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"configuration.md lost its marker {MARKER!r}: the reference has nowhere to go")
    return markdown.replace(MARKER, reference(Config()))
