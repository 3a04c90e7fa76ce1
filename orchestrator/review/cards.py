"""The review queue's cards: one per statement paired with the book, and one per definition such a statement
reaches; what a person needs to decide on it, and its place in the queue."""

from __future__ import annotations

from enum import IntEnum

from pydantic import BaseModel, Field

from state.reviews import Review


class Risk(IntEnum):
    """A card's place in the queue: the lower, the sooner a person should look."""

    DIFFERENT = 0  # a judge found it different from the book
    STRONGER = 1  # a judge found it stronger than the book
    UNTESTED = 2  # judged, but no successor test used it
    UNJUDGED = 3  # never judged
    JUDGED = 4  # judged faithful and tested


class Judgement(BaseModel):
    """One judge's verdict on the statement."""

    by: str  # "the loop's judge, cycle 12", "the audit's direct judge", "the audit's round-trip judge"
    verdict: str  # faithful | stronger | different | not judged
    reason: str = ""
    cycle: int | None = None
    rubric: str = ""  # the audit's rubric, where the audit judged it
    current: bool = True  # it judged the statement as it is now, so the card's risk counts it (the loop's latest
    #                       judgement; the audit's unless a later cycle judged or restated the statement)


class Card(BaseModel):
    declaration: str  # full Lean name; the card's key
    kind: str  # "statement" (paired with the book) or "definition" (reached by one)
    entity: str = ""  # the book entity it formalizes ("" for a definition no entity names)
    entity_name: str = ""  # as the book names it ("Theorem 1.2")
    book: str = ""  # the book's folder, in a project holding several
    chapter: str = ""
    book_text: str = ""  # the book's trusted text of the entity
    book_source: str = ""  # where that text comes from ("blueprint/src/ch1.tex:42")
    lean: str = ""  # the declaration's source (a theorem's statement; a definition whole)
    path: str = ""
    line: int = 0
    digest: str = ""  # its meaning digest now: what a verdict on it records
    reaches: list[str] = Field(default_factory=list)  # the project's definitions its statement reaches
    judgements: list[Judgement] = Field(default_factory=list)
    successors: str | None = None  # the successor test's result, where one ran
    proved: bool = False
    rests_on: list[str] = Field(default_factory=list)  # the holes (and axioms beyond the standard ones) it rests on
    cycles: list[int] = Field(default_factory=list)  # the cycles whose changes touched it
    decision: Review | None = None  # a person's approve or reject that holds
    comments: list[Review] = Field(default_factory=list)  # people's comments that hold
    stale: list[Review] = Field(default_factory=list)  # verdicts on a meaning it no longer has: shown, not applied
    risk: Risk = Risk.UNJUDGED
    why: str = ""  # the risk, as a person reads it
    newest: int = 0  # the latest cycle that touched it: newer first among equal risks
    standing: str = "unreviewed"  # the person's state: approved | rejected | commented | stale | unreviewed
    judged: str = "unjudged"  # the judges' worst current verdict: different | stronger | faithful | unjudged
