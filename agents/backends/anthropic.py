"""The Anthropic Messages API behind `Model`, through the official `anthropic` SDK.

Failures follow one policy. The SDK's own retries are off (`max_retries=0`);
tenacity retries what can pass (429, 408, 409, 5xx including 529 overloaded,
connection errors and timeouts), waiting as long as a `retry-after` header says
and otherwise backing off exponentially with jitter, then raises
`ModelUnavailable`. What retrying cannot fix (no key, a rejected key, a bad
request) raises `ModelRejected` at once.

Requests mark three prompt-cache breakpoints (the API allows four): the stable
system block, the last tool definition, and the last block of the last user
message, so each call of a multi-turn tool session re-reads the previous call's
prefix from the cache.

Consecutive messages of the same role are merged into one API turn (blocks in
order, except that in a user turn tool results move ahead of text, as the API
requires); a message with nothing to send (no text, calls or results, e.g. an
empty reply echoed back, or whitespace-only text) is dropped. Long outputs (`max_tokens` >=
`STREAM_FROM_MAX_TOKENS`) are streamed, as the API requires for long requests;
both paths give the same `Reply`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import anthropic
import httpx2
import structlog
from anthropic import omit
from anthropic.types import (
    AssistantMessageParam,
    MessageParam,
    TextBlock,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlock,
    ToolUseBlockParam,
    UserMessageParam,
)
from anthropic.types import Message as ApiMessage

from agents.backends.retry import Policy, Transient, plural
from agents.model import (
    ContextTooLong,
    Message,
    ModelRejected,
    ModelUnavailable,
    Reply,
    StopReason,
    System,
    ToolCall,
    ToolSpec,
)
from state.history import Usage

STREAM_FROM_MAX_TOKENS = 4096
"""From this output limit on, replies are streamed: the API refuses long non-streamed requests."""

NO_KEY = ("No Anthropic API key: set ANTHROPIC_API_KEY to a key from https://console.anthropic.com/settings/keys "
          "(or configure another credential the anthropic SDK accepts, such as ANTHROPIC_AUTH_TOKEN).")

_RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every 5xx (529 is "overloaded")
# Errors the API sends inside a stream arrive with the stream's HTTP 200; these error types are the transient ones.
_RETRYABLE_ERROR_TYPES = frozenset({"rate_limit_error", "overloaded_error", "api_error", "timeout_error"})

_STOPS = {"end_turn": StopReason.END, "stop_sequence": StopReason.END, "tool_use": StopReason.TOOL_USE,
          "max_tokens": StopReason.MAX_TOKENS}

log = structlog.get_logger()

Block = TextBlockParam | ToolResultBlockParam | ToolUseBlockParam


class AnthropicModel:
    """A Claude model. Raises `ModelRejected` at construction when no credential is configured."""

    def __init__(self, model: str, timeout_s: float, *, api_key: str | None = None, base_url: str | None = None,
                 max_attempts: int = 6, backoff_base_s: float = 1.0, backoff_max_s: float = 60.0) -> None:
        """`timeout_s` bounds each attempt: no network wait (connecting, each read) may take longer, and a
        streamed reply still arriving after it is abandoned (pings alone would keep the read timeout from firing).
        `api_key` and `base_url` default to the SDK's own reading of ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL.
        `max_attempts` counts the first try."""
        self.name = model
        self._timeout_s = timeout_s
        self._retry = Policy("anthropic", model, max_attempts, backoff_base_s, backoff_max_s)
        try:
            self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)
        except anthropic.CredentialsError as err:  # a broken profile the SDK found on disk or in the environment
            raise ModelRejected(f"The anthropic SDK could not load credentials: {err}. {NO_KEY}") from err
        if self._client.api_key is None and self._client.auth_token is None and self._client.credentials is None:
            raise ModelRejected(NO_KEY)

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        request = _Request(_system_blocks(system), _api_messages(messages), _tool_params(tools or []), max_tokens)
        started = time.monotonic()
        try:
            message, attempts = self._retry.run(lambda: self._call(request))
        except Transient as err:
            raise ModelUnavailable(self._redact(
                f"The Anthropic API did not answer for model {self.name} after {plural(err.attempts, 'attempt')}; "
                f"last error: {err.summary}. Try again later.")) from err.__cause__
        reply = _reply(message)
        self._retry.log_call(reply, attempts, request.streamed, started)
        return reply

    def _call(self, request: _Request) -> ApiMessage:
        """One attempt, its failure sorted into `Transient` (retry) or `ModelRejected` (give up)."""
        system = request.system or omit
        tools = request.tools or omit
        deadline = time.monotonic() + self._timeout_s
        try:
            if request.streamed:
                with self._client.messages.stream(model=self.name, max_tokens=request.max_tokens, system=system,
                                                  messages=request.messages, tools=tools) as stream:
                    for _event in stream:
                        if time.monotonic() > deadline:
                            raise Transient(f"the streamed reply ran past the {self._timeout_s}s timeout")
                    return stream.get_final_message()
            return self._client.messages.create(model=self.name, max_tokens=request.max_tokens, system=system,
                                                messages=request.messages, tools=tools)
        except anthropic.APIStatusError as err:
            raise self._sorted(err) from err
        except anthropic.APITimeoutError as err:
            raise Transient(f"no answer within the {self._timeout_s}s timeout") from err
        except anthropic.APIConnectionError as err:
            raise Transient(f"connection failed ({err.__cause__ or err})") from err
        except httpx2.TransportError as err:  # raised while reading a stream, which the SDK leaves unwrapped
            raise Transient(f"the stream broke off ({type(err).__name__}: {err})") from err

    def _sorted(self, err: anthropic.APIStatusError) -> Transient | ModelRejected:
        status, kind = err.status_code, err.type or "error"
        detail = self._redact(f"HTTP {status} {kind}: {err.api_message or err.message}"
                              + (f" (request-id {err.request_id})" if err.request_id else ""))
        if status in _RETRYABLE_STATUS or status >= 500 or kind in _RETRYABLE_ERROR_TYPES:
            return Transient(detail, _retry_after(err.response))
        if status in (401, 403):
            return ModelRejected(f"The Anthropic API rejected the key ({detail}). Check that ANTHROPIC_API_KEY holds "
                                 "a current key with access to model " + self.name + ".")
        if status == 400 and "prompt is too long" in (err.api_message or err.message):
            return ContextTooLong(f"The request is longer than model {self.name}'s context window ({detail}).")
        return ModelRejected(f"The Anthropic API refused the request for model {self.name} ({detail}).")

    def _redact(self, text: str) -> str:
        """`text` without any credential in it (an error body could echo one back)."""
        for secret in (self._client.api_key, self._client.auth_token):
            if secret:
                text = text.replace(secret, "[redacted]")
        return text


@dataclass(frozen=True)
class _Request:
    system: list[TextBlockParam]
    messages: list[MessageParam]
    tools: list[ToolParam]
    max_tokens: int

    @property
    def streamed(self) -> bool:
        return self.max_tokens >= STREAM_FROM_MAX_TOKENS


def _retry_after(response: httpx2.Response) -> float | None:
    """Seconds from a numeric `retry-after` header; None when absent or a date (backoff decides then)."""
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


# --- conversation -> request ---------------------------------------------------------------------------------------


def _system_blocks(system: System) -> list[TextBlockParam]:
    blocks: list[TextBlockParam] = []
    if system.stable:
        blocks.append({"type": "text", "text": system.stable, "cache_control": {"type": "ephemeral"}})
    if system.volatile:
        blocks.append({"type": "text", "text": system.volatile})
    return blocks


def _tool_params(tools: Sequence[ToolSpec]) -> list[ToolParam]:
    params: list[ToolParam] = [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                               for t in tools]
    if params:
        params[-1]["cache_control"] = {"type": "ephemeral"}
    return params


def _api_messages(messages: Sequence[Message]) -> list[MessageParam]:
    turns: list[tuple[Literal["user", "assistant"], list[Block]]] = []
    for message in messages:
        role, blocks = _turn(message)
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    params: list[MessageParam] = []
    for role, blocks in turns:
        if role == "user":
            # the API wants a user turn's tool results before anything else in it
            blocks.sort(key=lambda block: block["type"] != "tool_result")
            params.append(UserMessageParam(role="user", content=blocks))
        else:
            params.append(AssistantMessageParam(role="assistant", content=blocks))
    last_user = next((blocks for role, blocks in reversed(turns) if role == "user"), None)
    if last_user:
        last_user[-1]["cache_control"] = {"type": "ephemeral"}
    return params


def _turn(message: Message) -> tuple[Literal["user", "assistant"], list[Block]]:
    # the API refuses text blocks of nothing but whitespace
    text: list[Block] = [{"type": "text", "text": message.text}] if message.text.strip() else []
    if message.role == "user":
        if message.tool_calls:
            raise ValueError("a user message cannot carry tool calls; they belong to the assistant message before it")
        results: list[Block] = [{"type": "tool_result", "tool_use_id": r.call_id, "content": r.content,
                                 "is_error": r.is_error} for r in message.tool_results]
        return "user", results + text
    if message.role == "assistant":
        if message.tool_results:
            raise ValueError("an assistant message cannot carry tool results; they belong to the next user message")
        calls: list[Block] = [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                              for c in message.tool_calls]
        return "assistant", text + calls
    raise ValueError(f"a message's role is 'user' or 'assistant', not {message.role!r}")


# --- response -> reply ---------------------------------------------------------------------------------------------


def _reply(message: ApiMessage) -> Reply:
    # Blocks other than text and tool_use (thinking, server tools) only come when requested, which we never do.
    text = "".join(block.text for block in message.content if isinstance(block, TextBlock))
    calls = [ToolCall(block.id, block.name, dict(block.input)) for block in message.content
             if isinstance(block, ToolUseBlock)]
    usage = message.usage
    return Reply(text=text, tool_calls=calls,
                 usage=Usage(input=usage.input_tokens, output=usage.output_tokens,
                             cache_read=usage.cache_read_input_tokens or 0,
                             cache_write=usage.cache_creation_input_tokens or 0),
                 stop=_STOPS.get(message.stop_reason or "", StopReason.OTHER), model=message.model)
