"""The one interface every model backend implements: send a conversation, get a reply.

A conversation is provider-neutral: the system prompt (its stable part marked
for caching), messages of text, tool calls and tool results, and the tools
offered. Retries, cost and logging wrap `send` from outside.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from state.errors import InfraError
from state.history import Usage


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Message:
    """A user turn (text and/or tool results) or an assistant turn (text and/or tool calls)."""

    role: str  # "user" | "assistant"
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True)
class System:
    """The system prompt. `stable` (instructions, standing rules) is the same every call and is
    cached; `volatile` is appended after it."""

    stable: str
    volatile: str = ""


class StopReason(StrEnum):
    END = "end"  # the model finished its turn
    TOOL_USE = "tool_use"  # it wants tool results
    MAX_TOKENS = "max_tokens"  # cut off by the output limit
    OTHER = "other"


@dataclass
class Reply:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop: StopReason = StopReason.END
    model: str = ""
    cost_usd: float | None = None  # when the backend itself reports what the call cost (claude-code does)

    def as_message(self) -> Message:
        return Message("assistant", self.text, tuple(self.tool_calls))


class Model(Protocol):
    """A model behind one backend, configured with its name and limits."""

    @property
    def name(self) -> str: ...

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply: ...


class ModelUnavailable(InfraError):
    """The model could not be reached after retries (rate limits, overload, network)."""


class ModelRejected(InfraError):
    """The provider refused the request for a reason retrying cannot fix (key, quota, bad request)."""


class ContextTooLong(ModelRejected):
    """The request is longer than the model's context window: a shorter one may be accepted."""


class RateLimited(ModelUnavailable):
    """A rate limit or a subscription's usage cap refused the call: the loop pauses until `until` (when the answer
    gave a reset time), and the cycle counts as neither failed nor stalled."""

    def __init__(self, message: str, until: datetime | None = None) -> None:
        super().__init__(message)
        self.until = until
