"""book_text.json: the book's text of statements known only from their own doc comments, as it first landed.

Where no blueprint or mapping file gives a statement, its numbered doc comment
(`/-- Theorem 2.3 … -/`) is the book's text. The first version the loop saw is
kept here, and the judge reads that one: a later edit of the doc comment (by a
Worker that also changed the statement, say) is not the book's.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from state.files import read_model, write_model


class FirstText(BaseModel):
    nl: str  # the doc comment's statement, after its heading
    declaration: str  # the declaration it was written on
    source: str  # where it was: "Book/B.lean:12", with the commit when it was already in the tree
    cycle: int  # the cycle that recorded it


class BookText(BaseModel):
    docstrings: dict[str, FirstText] = Field(default_factory=dict)  # entity id ("thm:2.3") → its first text


def read_book_text(path: Path) -> BookText:
    return read_model(path, BookText)


def write_book_text(path: Path, text: BookText) -> None:
    write_model(path, text)
