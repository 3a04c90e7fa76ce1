"""Textbook entities paired with their Lean declarations: what the faithfulness judges and the reuse test read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Entity:
    """One textbook block (definition, theorem, lemma, …) and the Lean declarations that formalize it."""

    id: str  # stable: the blueprint label, the mapping's key, or the docstring's number ("thm:142C", "2.3")
    kind: str  # definition, theorem, lemma, proposition, corollary, …
    name: str  # the block's title or number as the book gives it ("Theorem 142C"), or the id
    nl: str  # the natural-language statement (LaTeX allowed), outer environment stripped
    lean: list[str] = field(default_factory=list)  # fully qualified Lean names; empty when not formalized
    context: str = ""  # prose just before the statement in the book (may carry implicit hypotheses)
    proof: str = ""  # the book's proof, when known (the reuse filter reads it)
    uses: list[str] = field(default_factory=list)  # ids this entity cites explicitly (\uses, \ref, "Theorem 1.2")
    terms: list[str] = field(default_factory=list)  # terms it introduces (\emph{…}, its title's name)
    chapter: str = ""  # for coverage by chapter and stratified sampling
    book: str = ""  # in a project holding several books, the one it belongs to (its folder); else empty
    source: str = ""  # where it was found: "blueprint/src/ch1.tex:42", "lean_status.json", "Book/A.lean:10"
    leanok: bool = False  # the blueprint marks it formalized
    preamble: str = ""  # a short summary of the statement the book's mapping may hold (the paper's rubric sends it)
    variables: Any = None  # the mapping's variables (JSON: names and their definitions), for the paper's rubric

    @property
    def prose(self) -> str:
        """The context the default rubric gives: the book's prose, else the mapping's preamble."""
        return self.context.strip() or self.preamble.strip()
    fresh: bool = False  # its book text is a doc comment the change being judged first wrote: not the book's
