"""The Consultant: after repeated stalls, a bounded read-only tool session that advises the next Planner.

It reads the live files as the Planner does (`reader.py`) and looks lemma names up (`find_declaration`); each name
its `## Lemmas` section lists that no lookup finds is marked unverified in the advice (`lookup.flag`). Its limits
(`[agents.consultant]` max_turns, timeout_s, token_budget) end the session without advice, which the cycle records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.lookup import Lookup, flag
from agents.model import Model, System
from agents.prompts import render
from agents.reader import Bounds, ended
from state.history import Usage

MAX_TOKENS = 8192


@dataclass
class Advice:
    text: str
    usage: Usage
    unverified: list[str] = field(default_factory=list)  # lemma names no lookup found


class NoAdvice(Exception):
    """The session ended at a limit before it answered."""

    def __init__(self, reason: str, usage: Usage) -> None:
        super().__init__(reason)
        self.usage = usage


def consult(model: Model, *, rules: str, context: str, bounds: Bounds | None = None,
            lookup: Lookup | None = None) -> Advice:
    b = bounds or Bounds()
    system = System(render("consultant", tools=b.tools_line()) + "\n\nStanding rules of this repository:\n\n" + rules)
    session = b.session(model, system, "consultant", MAX_TOKENS)
    try:
        answer = session.run(context)
    finally:
        session.close()
    why = ended("Consultant", answer.stop, answer.report, session.turns)
    if why:
        raise NoAdvice(why, session.usage)
    text, missing = flag(answer.report.strip(), lookup) if lookup else (answer.report.strip(), [])
    return Advice(text + "\n", session.usage, missing)
