"""Prompt templates: readable files with `$name` placeholders; an undefined one is an error."""

from __future__ import annotations

from importlib import resources
from string import Template


def render(name: str, **values: object) -> str:
    """The template `<name>.md` with every `$placeholder` filled; a missing value raises KeyError."""
    text = resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    return Template(text).substitute({k: str(v) for k, v in values.items()})
