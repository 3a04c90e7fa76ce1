"""The Evaluator: one cycle's diff, report and verdicts in; a validated score out."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from agents import briefs
from agents.answers import FormatError, parse_json
from agents.config import EvaluatorConfig
from agents.model import Message, Model, System
from agents.prices import window_of
from agents.prompts import render
from agents.window import CHARS_PER_TOKEN
from gates.directives import one_line
from state.history import Usage

MAX_TOKENS = 2048
DIFF_SHARE = 2  # the diff takes at most 1/DIFF_SHARE of the window: Lean's symbols weigh more than 4 characters a token
DIFF_FLOOR = 4_000  # characters of diff shown however small the window: below that the summary alone is shown
LIMITS = {"summary": 300, "stuck_on": 200, "strategy_recommendation": 500, "attempts_update": 300}
"""Characters each field keeps in the history and attempts.md."""


class Evaluation(BaseModel):
    progress_score: int = Field(ge=-2, le=2)
    summary: str
    stuck_on: str = ""
    strategy_recommendation: str = ""
    attempts_update: str = ""

    def bounded(self) -> Evaluation:
        """Each text field as one line of bounded length, without directive or heading lines: the Evaluator
        writes from the Worker's report, and these fields reach the next prompts through the history."""
        return self.model_copy(update={k: one_line(getattr(self, k), n) for k, n in LIMITS.items()})


@dataclass
class Verdict:
    evaluation: Evaluation
    usage: Usage
    error: str | None = None  # why the answer could not be used, when it could not


def diff_budget(config: EvaluatorConfig, caps: str) -> int:
    """`diff_chars`, lowered so the diff takes at most 1/DIFF_SHARE of the model's context window beside the rest
    of the prompt and the answer."""
    window = window_of(config.model, config.context_tokens)
    room = (window - MAX_TOKENS) * CHARS_PER_TOKEN // DIFF_SHARE - briefs.evaluator_rest() - len(prompt(caps))
    return max(DIFF_FLOOR, min(config.diff_chars, room))


def prompt(caps: str) -> str:
    """The Evaluator's rubric with the orchestrator's caps (`orchestrator.facts.caps`) stated in it."""
    return render("evaluator", caps=caps)


def evaluate(model: Model, context: str, caps: str) -> Verdict:
    system = System(prompt(caps))
    messages = [Message("user", context)]
    usage = Usage()
    error = ""
    for attempt in (1, 2):
        reply = model.send(system, messages, max_tokens=MAX_TOKENS)
        usage += reply.usage
        try:
            return Verdict(parse_json(reply.text, Evaluation).bounded(), usage)
        except FormatError as e:
            error = str(e)
            if attempt == 1:
                messages += [reply.as_message(), Message("user", f"That answer could not be read: {e}. Reply with "
                                                                 "exactly one JSON object with the five fields.")]
    fallback = Evaluation(progress_score=0, summary=f"Evaluator answer could not be parsed: {error}").bounded()
    return Verdict(fallback, usage, error)
