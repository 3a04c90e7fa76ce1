"""The `[audit]` section of autoformalize.toml."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class AuditConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    judge_in_loop: bool = True
    """After the gates pass, the judge reads each statement the cycle added or changed for a textbook entity;
    one judged different opens an issue, one judged faithful or stronger is locked against later change."""
    context_chars: int = Field(default=2000, ge=0)
    """The book's prose before a statement is given to the judges cut at this many characters: its last ones
    (the prose nearest the statement) with the default rubric, its first ones with the paper's."""
    rubric: Literal["default", "paper"] = "default"
    """How `autoformalize audit` asks its judges. `paper`: exactly as the paper's Appendix A (its prompts, the
    book named by `book_name`, PREAMBLE and VARIABLES, definitions' headers only, the context's first
    characters, the Lean unfenced), so the figures compare with its tables; the model's own score is kept
    beside the truth table's. `default`: the same protocol asked as the manual's "The two rubrics" (docs/audit.md)
    says. The in-loop judge, a gate reading a Worker's Lean, always uses `default`."""
    book_name: str = ""
    """The book as the paper's direct rubric names it, author and title (`J. C. Butcher's "Numerical Methods for
    Ordinary Differential Equations"`); required by `rubric = "paper"`."""
    concurrency: int = Field(default=4, ge=1)
    """Model calls the audit keeps in flight at once."""
    mathlib_check: Literal["off", "on"] = "off"
    """After the gates pass, each theorem the cycle closed (a sorry it removed) is tried with `exact?`, as
    `autoformalize audit --mathlib` tries every proved theorem: one closed by a single library theorem is told to the
    next Planner and Worker, and recorded in the cycle's record. Costs a Lean run per closed theorem."""
    mathlib_timeout_s: int = Field(default=120, gt=0)
    """Seconds one `exact?` probe may run (the theorem's file up to it, elaborated again); one that runs out is
    recorded as a timeout, never as original."""
    blueprint: str = "blueprint/src"
    """The leanblueprint sources: the book's text. The loop reads them at each cycle's base commit and no agent
    may change them."""
    mappings: list[str] = Field(default_factory=lambda: ["**/lean_status.json"])
    """Globs of mapping files (OpenMath's `lean_status.json`: book ids to statements and Lean names), with the
    `entities/<id>.json` files beside them: the book's text, read at each cycle's base commit and protected from
    every agent."""

    @model_validator(mode="after")
    def _paper_names_the_book(self) -> Self:
        if self.rubric == "paper" and not self.book_name.strip():
            raise ValueError('rubric = "paper" names the book in the direct judge\'s prompt: set [audit] book_name '
                             '(author and title, e.g. J. C. Butcher\'s "Numerical Methods for Ordinary Differential '
                             'Equations")')
        return self
