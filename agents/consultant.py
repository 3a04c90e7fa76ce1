"""The Consultant: after repeated stalls, advice for the next Planner."""

from __future__ import annotations

from dataclasses import dataclass

from agents.model import Message, Model, System
from agents.prompts import render
from state.history import Usage

MAX_TOKENS = 8192


@dataclass
class Advice:
    text: str
    usage: Usage


def consult(model: Model, *, rules: str, context: str) -> Advice:
    system = System(render("consultant") + "\n\nStanding rules of this repository:\n\n" + rules)
    reply = model.send(system, [Message("user", context)], max_tokens=MAX_TOKENS)
    return Advice(reply.text.strip() + "\n", reply.usage)
