"""pairing.json: which declarations formalize which book entity, where no book file says — written by the loop alone.

The blueprint's `\\lean{}` tags and the mapping files pair the entities they hold (a person writes them; every
agent is kept from them). An entity known only from a numbered doc comment (`/-- Theorem 2.3 … -/`) is paired
here, once, when the pairing first lands: a person's doc comment when `init` or the loop first sees it in the
tree, a Worker's when the change that adds it lands. Its book text is the doc comment as it was then, keyed by
that entity's id for good. A later edit of the doc comment — its heading, its number, its text — changes
nothing here; no census re-keys an entry. An entry's declarations change only with a change that lands through
the restatement rule (a paired declaration removed or renamed), or when a person removes one from the tree.

Version 0 was two files: `book_text.json` (each doc-comment entity's first text, with the one declaration it was
written on) and the entities named in `statement_lock.json`. They are read once, when no `pairing.json` exists,
and the first cycle writes this file in their place (`migrate`).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from state.atomic import write_atomic
from state.errors import UsageError
from state.files import parse_model

SCHEMA_VERSION = 1
FILE = "pairing.json"
LEGACY_TEXT = "book_text.json"  # version 0: the doc comments' first texts


class Author(StrEnum):
    PERSON = "person"  # in the tree when `init` or the loop first saw it, no change of the loop's having added it
    WORKER = "worker"  # landed with a Worker's change
    MIGRATED = "migrated"  # carried over from version 0, whose files did not say who wrote it


class Member(BaseModel):
    """One declaration's pairing: who made it, and in which cycle it landed (0: when `init` ran)."""

    by: Author
    cycle: int


class Entry(BaseModel):
    """One book entity the ledger pairs: its book text as first recorded, and its declarations."""

    nl: str  # the doc comment's statement after its heading, as first recorded
    declaration: str  # the declaration whose doc comment that text was
    source: str  # where it was: "Book/B.lean:12 at 0123456789ab"
    by: Author
    cycle: int  # when the text was recorded
    chapter: str = ""
    terms: list[str] = Field(default_factory=list)  # the heading's title, when it has one
    declarations: dict[str, Member] = Field(default_factory=dict)  # full name → its pairing


class Pairing(BaseModel):
    schema_version: int = SCHEMA_VERSION
    entities: dict[str, Entry] = Field(default_factory=dict)  # entity id ("thm:2.3", "Tao/thm:1.1") → its entry

    def entity_of(self) -> dict[str, str]:
        """Declaration → the entity the ledger pairs it with."""
        return {name: key for key, entry in self.entities.items() for name in entry.declarations}


def parse_pairing(data: bytes, name: str = FILE) -> Pairing:
    """The ledger of `data`. A later version's is refused, never read as this one: its entries may mean more.
    (Version 0 had no file of its own: `migrate` reads its two. A version 2 would be migrated here, by functions
    appended in order, as `state/history.py` does.)"""
    version = parse_model(data, _Versioned, name).schema_version
    if version > SCHEMA_VERSION:
        raise UsageError(f"{name}: schema_version {version} is newer than this autoformalize understands; "
                         "upgrade autoformalize")
    return parse_model(data, Pairing, name)


class _Versioned(BaseModel):
    schema_version: int = 0


# -- version 0 -------------------------------------------------------------------------------------------


class FirstText(BaseModel):
    """A `book_text.json` entry."""

    nl: str
    declaration: str
    source: str
    cycle: int


class BookText(BaseModel):
    docstrings: dict[str, FirstText] = Field(default_factory=dict)


def migrate(book_text: bytes | None, locked: dict[str, str], name: str = LEGACY_TEXT) -> Pairing:
    """Version 1 from version 0: each doc-comment entity of `book_text.json` with the declaration its text was
    written on, and the locked declarations (`locked`: declaration → entity, from `statement_lock.json`) whose
    entity it holds. A declaration recorded under two ids (a later census re-keyed it, and the re-keyed id got a
    first text of its own) keeps the id of its earliest record; an id left with no declaration is dropped."""
    text = parse_model(book_text, BookText, name) if book_text is not None else BookText()
    entities: dict[str, Entry] = {}
    owner: dict[str, str] = {}
    for key, first in sorted(text.docstrings.items(), key=lambda item: (item[1].cycle, item[0])):
        entry = entities.setdefault(key, Entry(nl=first.nl, declaration=first.declaration, source=first.source,
                                               by=Author.MIGRATED, cycle=first.cycle))
        if first.declaration not in owner:
            owner[first.declaration] = key
            entry.declarations[first.declaration] = Member(by=Author.MIGRATED, cycle=first.cycle)
    for declaration, key in sorted(locked.items()):
        if declaration not in owner and key in entities:
            owner[declaration] = key
            entities[key].declarations[declaration] = Member(by=Author.MIGRATED, cycle=entities[key].cycle)
    return Pairing(entities={k: e for k, e in entities.items() if e.declarations})


def render(pairing: Pairing) -> str:
    """The file's text: entities and declarations in name order (a ledger compares equal in any order)."""
    data = pairing.model_dump(mode="json")
    data["entities"] = {key: {**entry, "declarations": dict(sorted(entry["declarations"].items()))}
                        for key, entry in sorted(data["entities"].items())}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_pairing(path: Path, pairing: Pairing) -> None:
    write_atomic(path, render(pairing))
