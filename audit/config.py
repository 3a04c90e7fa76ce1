"""The `[audit]` section of autoformalize.toml."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AuditConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    judge_in_loop: bool = True
    """After the gates pass, the judge reads each statement the cycle added or changed for a textbook entity;
    one judged different opens an issue, one judged faithful or stronger is locked against later change."""
    context_chars: int = Field(default=2000, ge=0)
    """The book's prose before a statement is given to the judges cut at this many characters."""
    concurrency: int = Field(default=4, ge=1)
    """Model calls the audit keeps in flight at once."""
    blueprint: str = "blueprint/src"
    """The leanblueprint sources: the book's text. The loop reads them at each cycle's base commit and no agent
    may change them."""
    mappings: list[str] = Field(default_factory=lambda: ["**/lean_status.json"])
    """Globs of mapping files (OpenMath's `lean_status.json`: book ids to statements and Lean names), with the
    `entities/<id>.json` files beside them: the book's text, read at each cycle's base commit and protected from
    every agent."""
