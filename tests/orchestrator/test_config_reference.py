"""The manual's configuration reference comes from the configuration models, as the rendered autoformalize.toml
does: every section and key, with its default and its docstring."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pydantic import BaseModel

from orchestrator.config import Config, reference

ROOT = Path(__file__).resolve().parents[2]


def keys(model: BaseModel, name: str) -> list[tuple[str, str, str]]:
    """(table, key, docstring) of every leaf key of `model`."""
    out = []
    for key, value in model:
        if isinstance(value, BaseModel):
            out += keys(value, f"{name}.{key}")
        else:
            out.append((name, key, " ".join((type(model).model_fields[key].description or "").split())))
    return out


def test_every_key_of_every_section_is_in_the_reference() -> None:
    config = Config()
    text = reference(config)
    leaves = [leaf for section, model in config if isinstance(model, BaseModel) for leaf in keys(model, section)]
    assert len(leaves) > 150
    for table, key, doc in leaves:
        section = text[text.index(f"### `[{table}]`"):]
        row = next(line for line in section.splitlines() if line.startswith(f"| `{key}` |"))
        assert doc.replace("|", "\\|") in row, (table, key)
    assert "| `max_turns` | `200` |" in text[text.index("### `[agents.worker]`"):]


def test_the_manual_page_takes_the_generated_reference() -> None:
    spec = importlib.util.spec_from_file_location("hook", ROOT / "docs" / "hooks" / "configuration.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = (ROOT / "docs" / "configuration.md").read_text()

    class File:
        src_uri = "configuration.md"

    class Page:
        file = File()

    built = hook.on_page_markdown(page, page=Page())
    assert hook.MARKER not in built and reference(Config()) in built
    assert len((ROOT / "README.md").read_text().splitlines()) <= 400
