"""The Worker: a tool-using session in the working copy, resumable for repair rounds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

import structlog

from agents.ledger import BudgetExceeded
from agents.model import Message, Model, System
from agents.prompts import render
from agents.tools import SPECS, Workspace
from state.history import Usage

log = structlog.get_logger()
MAX_TOKENS = 16384


class Stop(StrEnum):
    FINISHED = "finished"  # called `finish`
    ENDED = "ended"  # ended its turn without calling `finish`
    TURNS = "turns"  # hit max_turns
    TIME = "time"  # hit timeout_s
    TOKENS = "tokens"  # hit the token budget
    STOPPED = "stopped"  # the process was asked to stop
    BUDGET = "budget"  # the next model call could cross a spending limit


@dataclass(frozen=True)
class Limits:
    max_turns: int
    timeout_s: float
    token_budget: int | None = None  # uncached input + output + cache writes


@dataclass
class Round:
    stop: Stop
    report: str


class Session(Protocol):
    """A Worker session: an API tool loop (`WorkerSession`) or a coding-agent CLI (claude-code)."""

    turns: int
    rounds: list[Round]

    def run(self, prompt: str) -> Round:
        """The first round, from the strategy and context."""
        ...

    def resume(self, feedback: str) -> Round:
        """A repair round: the gates' report as the next turn of the same session."""
        ...

    def report(self) -> str:
        """Every round's report, in order."""
        ...

    def close(self) -> None:
        """Release what the session holds (a CLI process, its MCP servers); nothing for an API session."""
        ...


@dataclass
class WorkerSession:
    model: Model
    workspace: Workspace
    rules: str
    limits: Limits
    clock: Callable[[], float] = time.monotonic
    stop: threading.Event = field(default_factory=threading.Event)
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    rounds: list[Round] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.system = System(render("worker", rules=self.rules))
        self.deadline = self.clock() + self.limits.timeout_s

    def run(self, prompt: str) -> Round:
        """The first round: the strategy and context as the opening message."""
        return self._round(prompt)

    def resume(self, feedback: str) -> Round:
        """A repair round: the gates' report as the next turn of the same session."""
        self.workspace.report = None
        return self._round(feedback)

    def _round(self, text: str) -> Round:
        self._say(text)
        while True:
            stop = self._limit()
            if stop is not None:
                return self._end(stop, f"(The session stopped at its {stop.value} limit without a report; "
                                       f"{self.turns} model calls were made.)")
            try:
                reply = self.model.send(self.system, self.messages, SPECS, max_tokens=MAX_TOKENS)
            except BudgetExceeded as e:  # what it has done so far is still gated and can land
                return self._end(Stop.BUDGET, f"(The session stopped: {e}. {self.turns} model calls were made.)")
            self.turns += 1
            self.usage += reply.usage
            self.messages.append(reply.as_message())
            log.info("worker.turn", turn=self.turns, tools=[c.name for c in reply.tool_calls])
            if not reply.tool_calls:
                return self._end(Stop.ENDED, reply.text.strip() or "(The Worker ended without a report.)")
            results = tuple(self.workspace.call(c) for c in reply.tool_calls)
            self.messages.append(Message("user", tool_results=results))
            if self.workspace.report is not None:
                return self._end(Stop.FINISHED, self.workspace.report)

    def _say(self, text: str) -> None:
        # Tool results and new text share one user turn: turns must alternate.
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "user":
            self.messages[-1] = Message("user", (last.text + "\n\n" + text).strip(), tool_results=last.tool_results)
        else:
            self.messages.append(Message("user", text))

    def _limit(self) -> Stop | None:
        if self.stop.is_set():
            return Stop.STOPPED
        if self.turns >= self.limits.max_turns:
            return Stop.TURNS
        if self.clock() >= self.deadline:
            return Stop.TIME
        budget = self.limits.token_budget
        if budget is not None and self.usage.input + self.usage.output + self.usage.cache_write >= budget:
            return Stop.TOKENS
        return None

    def _end(self, stop: Stop, report: str) -> Round:
        done = Round(stop, report)
        self.rounds.append(done)
        return done

    def close(self) -> None:
        pass  # an API session holds nothing between calls

    def report(self) -> str:
        """Every round's report, in order; the last round's is what the gates read."""
        if len(self.rounds) <= 1:
            return self.rounds[0].report if self.rounds else ""
        return "\n\n".join(f"## Round {i}\n\n{r.report}" for i, r in enumerate(self.rounds, start=1))
