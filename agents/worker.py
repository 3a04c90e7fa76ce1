"""The Worker: a tool-using session in the working copy, resumable for repair rounds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

import structlog

from agents import lsp, window
from agents.ledger import BudgetExceeded
from agents.model import ContextTooLong, Message, Model, ModelRejected, Reply, System, ToolCall, ToolResult, ToolSpec
from agents.prompts import render
from agents.tools import PROVER_TOOLS, Tally
from state.history import Usage

log = structlog.get_logger()
MAX_TOKENS = 16384
SUMMARY_TOKENS = 4096
WRAP_UP_AT = 0.8  # of the turns or the time: the session is told to wrap up once
WRAP_UP = ("(The orchestrator: you have used {used} of your {what}. Wrap up now: `lean_check` the files you "
           "changed, then call `finish` with your report. Work not finished by the limit is gated as it stands.)")


class Stop(StrEnum):
    FINISHED = "finished"  # called `finish`
    ENDED = "ended"  # ended its turn without calling `finish`
    TURNS = "turns"  # hit max_turns
    TIME = "time"  # hit timeout_s
    TOKENS = "tokens"  # hit the token budget
    STOPPED = "stopped"  # the process was asked to stop
    BUDGET = "budget"  # the next model call could cross a spending limit
    CONTEXT = "context"  # the session outgrew the model's context window, summarized or not
    REFUSED = "refused"  # the model refused a request mid-session (its work so far is still gated)
    LIMITED = "limited"  # a rate limit or usage cap stopped it (its work so far is still gated; the loop pauses)


@dataclass(frozen=True)
class Limits:
    max_turns: int
    timeout_s: float
    token_budget: int | None = None  # uncached input + output + cache writes
    window: int = 200_000  # the model's context window, in tokens
    result_chars: int = 20_000  # a tool result longer than this is cut as it arrives
    keep_results: int = 8  # tool results kept whole when older ones are cleared


@dataclass
class Context:
    """How the session stayed inside its window: the record's `worker_context`."""

    peak_input: int = 0  # the longest request, in input tokens (cached or not)
    trims: int = 0  # tool results cut as they came
    clears: int = 0  # old tool results replaced by a stub
    compactions: int = 0  # summaries the session continued from


@dataclass
class Round:
    stop: Stop
    report: str


class Session(Protocol):
    """A Worker session: an API tool loop (`WorkerSession`) or a coding agent (`agents.coding.CodingSession`)."""

    turns: int
    rounds: list[Round]
    context: Context
    tools: Tally  # its tool calls by name, as far as it can see them
    limited_until: datetime | None  # after `Stop.LIMITED`: when the limit lifts, when it said

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


class Toolbox(Protocol):
    """What a tool session calls: the Worker's `Workspace`, or a read-only `Reader` for the Planner and the
    Consultant."""

    report: str | None  # set when a tool ends the session (the Worker's `finish`)
    lsp: lsp.LeanServer | None  # Lean's language server, whose tools the Worker's prompt names

    def call(self, call: ToolCall) -> ToolResult: ...

    def specs(self) -> list[ToolSpec]:
        """The tools offered now."""
        ...

    def known(self, name: str) -> bool:
        """Whether `name` is a tool offered at some point (a call to another is tallied as unknown)."""
        ...


@dataclass
class WorkerSession:
    """The tool loop: the Worker's session, and with another prompt and toolbox the Planner's and the
    Consultant's read-only ones."""

    model: Model
    workspace: Toolbox
    rules: str
    limits: Limits
    clock: Callable[[], float] = time.monotonic
    stop: threading.Event = field(default_factory=threading.Event)
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    rounds: list[Round] = field(default_factory=list)
    context: Context = field(default_factory=Context)
    tools: Tally = field(default_factory=Tally)  # the calls made, by tool name
    limited_until: datetime | None = None  # an API session ends on a rate limit only as an error, after retries
    prompt: System | None = None  # the system prompt; the Worker's when None
    role: str = "worker"  # in the log's events
    max_tokens: int = MAX_TOKENS  # of each reply
    wrap_up: str = WRAP_UP  # said once at `WRAP_UP_AT` of the turns or the time ({used}, {what})

    def __post_init__(self) -> None:
        server = self.workspace.lsp
        prover = any(s.name in PROVER_TOOLS for s in self.workspace.specs())
        self.system = self.prompt or System(prompt(self.rules, server.names if server is not None else (),
                                                   prover=prover))
        self.deadline = self.clock() + self.limits.timeout_s
        self.opening = ""
        self.wrapped = False

    def run(self, prompt: str) -> Round:
        """The first round: the strategy and context as the opening message."""
        self.opening = prompt
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
                reply = self._send()
            except BudgetExceeded as e:  # what it has done so far is still gated and can land
                return self._end(Stop.BUDGET, f"(The session stopped: {e}. {self.turns} model calls were made.)")
            except ContextTooLong as e:
                return self._end(Stop.CONTEXT, f"(The session stopped: it outgrew the model's context window even "
                                               f"summarized ({e}). {self.turns} model calls were made.)")
            except ModelRejected as e:
                if self.turns == 0:  # nothing done yet: the cycle's error says why
                    raise
                return self._end(Stop.REFUSED, f"(The session stopped: {e} {self.turns} model calls were made.)")
            self.turns += 1
            self.usage += reply.usage
            sent = reply.usage.input + reply.usage.cache_read + reply.usage.cache_write
            self.context.peak_input = max(self.context.peak_input, sent)
            self.messages.append(reply.as_message())
            log.info(f"{self.role}.turn", turn=self.turns, tools=[c.name for c in reply.tool_calls], input_tokens=sent)
            if not reply.tool_calls:
                return self._end(Stop.ENDED, reply.text.strip() or "(The Worker ended without a report.)")
            results = tuple(self._trimmed(self._call(c)) for c in reply.tool_calls)
            self.messages.append(Message("user", tool_results=results))
            self._nudge()
            if self.workspace.report is not None:
                return self._end(Stop.FINISHED, self.workspace.report)
            self._fit(sent + window.tokens(self.messages[-2:]))

    def _call(self, call: ToolCall) -> ToolResult:
        started = time.monotonic()
        result = self.workspace.call(call)
        self.tools.add(call.name if self.workspace.known(call.name) else "(unknown)", time.monotonic() - started)
        return result

    def _send(self) -> Reply:
        """The next call; refused for its length, once more after a summary of the session."""
        try:
            return self.model.send(self.system, self.messages, self.workspace.specs() or None,
                                   max_tokens=self.max_tokens)
        except ContextTooLong:
            if not self._compact():
                raise
            return self.model.send(self.system, self.messages, self.workspace.specs() or None,
                                   max_tokens=self.max_tokens)

    def _trimmed(self, result: ToolResult) -> ToolResult:
        result, cut = window.trim(result, self.limits.result_chars)
        self.context.trims += cut
        return result

    def _fit(self, size: int) -> None:
        """Before the next call, whose request weighs about `size` tokens: clear, then summarize, as needed."""
        if size < window.CLEAR_AT * self.limits.window:
            return
        before = window.tokens(self.messages)
        self.messages, cleared = window.clear(self.messages, self.limits.keep_results)
        self.context.clears += cleared
        size -= before - window.tokens(self.messages)
        if size >= window.COMPACT_AT * self.limits.window:
            self._compact()

    def _compact(self) -> bool:
        """The session continued from its opening, a summary of it and its last turn; False when it cannot be
        shortened so."""
        tail = self.messages[-2:] if len(self.messages) >= 3 and self.messages[-2].role == "assistant" else []
        if len(self.messages) - len(tail) < 2:
            return False
        text = window.transcript(self.messages[:len(self.messages) - len(tail)],
                                 self.limits.window * window.CHARS_PER_TOKEN // 2)  # no fence's nonce in it
        try:
            reply = self.model.send(System(render("compact")), [Message("user", text)], max_tokens=SUMMARY_TOKENS)
        except (ModelRejected, BudgetExceeded) as e:  # the session goes on as it is, or ends at its limit
            log.warning(f"{self.role}.compaction_failed", error=str(e)[:300])
            return False
        self.usage += reply.usage
        summary = reply.text.strip() or "(no summary was written)"
        self.messages = [Message("user", f"{self.opening}\n\n## Your session so far, summarized\n\n"
                                         f"{window.summarized(summary)}"), *tail]
        self.context.compactions += 1
        log.info(f"{self.role}.compacted", turn=self.turns, compactions=self.context.compactions)
        return True

    def _say(self, text: str) -> None:
        # Tool results and new text share one user turn: turns must alternate.
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "user":
            self.messages[-1] = Message("user", (last.text + "\n\n" + text).strip(), tool_results=last.tool_results)
        else:
            self.messages.append(Message("user", text))

    def _nudge(self) -> None:
        """Once, at `WRAP_UP_AT` of the turns or the time: tell the session to wrap up before its limit ends it."""
        if self.wrapped:
            return
        spent_s = self.clock() - (self.deadline - self.limits.timeout_s)
        if self.turns >= WRAP_UP_AT * self.limits.max_turns:
            used, what = f"{self.turns}", f"{self.limits.max_turns} model calls"
        elif spent_s >= WRAP_UP_AT * self.limits.timeout_s:
            used, what = f"{spent_s / 60:.0f} minutes", f"{self.limits.timeout_s / 60:.0f} minutes"
        else:
            return
        self.wrapped = True
        self._say(self.wrap_up.format(used=used, what=what))

    def _limit(self) -> Stop | None:
        return reached(self.limits, self.stop, self.turns, self.clock() >= self.deadline, self.usage)

    def _end(self, stop: Stop, report: str) -> Round:
        done = Round(stop, report)
        self.rounds.append(done)
        return done

    def close(self) -> None:
        """End the Lean server, when there is one; the API holds nothing between calls."""
        if self.workspace.lsp is not None:
            self.workspace.lsp.close()

    def report(self) -> str:
        return joined(self.rounds)


def joined(rounds: list[Round]) -> str:
    """Every round's report, in order (headed by its number when there are several); the last round's is what the
    gates read."""
    if len(rounds) <= 1:
        return rounds[0].report if rounds else ""
    return "\n\n".join(f"## Round {i}\n\n{r.report}" for i, r in enumerate(rounds, start=1))


def reached(limits: Limits, stop: threading.Event, turns: int, late: bool, usage: Usage) -> Stop | None:
    """The limit a session that made `turns` model calls and used `usage` has reached (`late`: its deadline has
    passed), or None: a stop request first, then the turns, the time, the tokens."""
    if stop.is_set():
        return Stop.STOPPED
    if turns >= limits.max_turns:
        return Stop.TURNS
    if late:
        return Stop.TIME
    budget = limits.token_budget
    if budget is not None and usage.input + usage.output + usage.cache_write >= budget:
        return Stop.TOKENS
    return None


PROVER = """- An external prover may be working on some sorries (see "External prover"
  below). `submit_to_prover` hands it a hard sorry for a later cycle;
  `prover_result` shows a proof it returned and `apply_prover_result` puts
  that proof in place; check it like any edit of yours.
"""


def prompt(rules: str, lean_tools: Collection[str] = (), prefix: str = "", prover: bool = False) -> str:
    """The Worker's system prompt; `lean_tools`: the Lean server's tools it has (as the model calls them: `prefix` +
    name); `prover`: the external prover is on."""
    return render("worker", rules=rules, lean_tools=lsp.guide(lean_tools, prefix), prover=PROVER if prover else "")
