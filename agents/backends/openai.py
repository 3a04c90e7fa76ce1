"""The OpenAI Chat Completions API behind `Model`, through the official `openai` SDK.

Any server speaking that API works: OpenAI itself, vLLM, llama.cpp's server,
DeepSeek, OpenRouter. Local servers often take any key, but the SDK insists on
one, so OPENAI_API_KEY must then hold some value all the same.

Failures follow one policy, the Anthropic backend's. The SDK's own retries are
off (`max_retries=0`); tenacity retries what can pass (429 other than an
exhausted quota, 408, 409, 5xx, errors sent inside a stream, connection errors
and timeouts), waiting as long as a `retry-after-ms` or `retry-after` header
says and otherwise backing off exponentially with jitter, then raises
`ModelUnavailable`. What retrying cannot fix (no key, a rejected key, an unknown
model, a bad request, no quota left) raises `ModelRejected` at once.

The format has no cache marks: OpenAI caches long prompt prefixes by itself, so
the system prompt is one message with its stable part first, and the cached
share of the prompt comes back as `cached_tokens`. Nor does it flag a tool
result as an error, so such results start with `ERROR_PREFIX`. Consecutive
messages of the same role are merged, as strict chat templates on local servers
want roles to alternate; a message with nothing to send is dropped.

Long outputs (`max_tokens` >= `STREAM_FROM_MAX_TOKENS`) are streamed, with the
usage chunk requested; both paths give the same `Reply`. Tool-call arguments
that are not a JSON object become `{"_unparsed": raw}`, which the Worker's tool
layer reports back to the model as bad arguments.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import openai
import structlog
from openai import omit
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionChunk,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionToolMessageParam,
)

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
    ToolResult,
    ToolSpec,
)
from state.history import Usage

STREAM_FROM_MAX_TOKENS = 4096
"""From this output limit on, replies are streamed, so a long generation is not one silent wait."""

ERROR_PREFIX = "ERROR: "
"""Starts the content of a tool result that reports a failure (the format has no error flag)."""

NO_KEY = ("No OpenAI API key: set OPENAI_API_KEY to a key from https://platform.openai.com/api-keys, or the key of "
          "your OpenAI-compatible provider; for a local server that checks no key (vLLM, llama.cpp), set it to any "
          "value, such as 'local'.")

_RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every 5xx
_NO_QUOTA = "insufficient_quota"  # a 429 code that waiting does not cure
_TOO_LONG = "context_length_exceeded"  # OpenAI's code for a request longer than the window

_STOPS = {"stop": StopReason.END, "tool_calls": StopReason.TOOL_USE, "length": StopReason.MAX_TOKENS}

# OpenAI's newer models refuse `max_tokens` for `max_completion_tokens`, which many compatible servers (Ollama, LM
# Studio, older llama.cpp) silently ignore, leaving the output unbounded; so the new name goes to OpenAI only.
_OPENAI_HOSTS = ("api.openai.com",)
_OPENAI_HOST_SUFFIXES = (".openai.azure.com",)

log = structlog.get_logger()


class OpenAIModel:
    """A model behind an OpenAI-compatible server. Raises `ModelRejected` at construction when no key is set."""

    def __init__(self, model: str, timeout_s: float, *, api_key: str | None = None, base_url: str | None = None,
                 max_attempts: int = 6, backoff_base_s: float = 1.0, backoff_max_s: float = 60.0) -> None:
        """`timeout_s` bounds each attempt: no network wait (connecting, each read) may take longer, and a
        streamed reply still arriving after it is abandoned. `api_key` and `base_url` default to the SDK's own
        reading of OPENAI_API_KEY and OPENAI_BASE_URL (the base URL ends in `/v1` for most servers).
        `max_attempts` counts the first try."""
        self.name = model
        self._timeout_s = timeout_s
        self._retry = Policy("openai", model, max_attempts, backoff_base_s, backoff_max_s)
        try:
            self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)
        except openai.OpenAIError as err:  # with the arguments given here, only its "Missing credentials"
            raise ModelRejected(NO_KEY) from err
        if not self._client.api_key:  # an OPENAI_ADMIN_KEY alone satisfies the SDK, but not chat completions
            raise ModelRejected(NO_KEY)
        url = self._client.base_url
        self._server = str(url.copy_with(userinfo=b""))  # for messages: a URL may carry a password
        host = url.host
        self._limit_key: Literal["max_tokens", "max_completion_tokens"] = (
            "max_completion_tokens" if host in _OPENAI_HOSTS or host.endswith(_OPENAI_HOST_SUFFIXES)
            else "max_tokens")

    def window(self) -> int | None:
        """The context window the server reports for this model (vLLM's `max_model_len` in `/v1/models`); None
        when it reports none or cannot be asked."""
        try:
            listed = self._client.models.list()
        except openai.OpenAIError as err:
            log.info("openai.window_unknown", model=self.name, error=self._redact(str(err))[:200])
            return None
        for entry in listed.data:
            if entry.id == self.name:
                value = (entry.model_extra or {}).get("max_model_len")
                return value if isinstance(value, int) and value > 0 else None
        return None

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        request = _Request(_api_messages(system, messages), _tool_params(tools or []), max_tokens)
        started = time.monotonic()
        try:
            completion, attempts = self._retry.run(lambda: self._call(request))
        except Transient as err:
            raise ModelUnavailable(self._redact(
                f"The OpenAI-compatible API at {self._server} did not answer for model {self.name} after "
                f"{plural(err.attempts, 'attempt')}; last error: {err.summary}. Try again later.")
            ) from err.__cause__
        if completion.usage is None:
            log.warning("model.no_usage", backend="openai", model=self.name,
                        hint="the server reported no token usage, so this call is recorded as 0 tokens")
        reply = _reply(completion)
        self._retry.log_call(reply, attempts, request.streamed, started)
        return reply

    def _call(self, request: _Request) -> _Completion:
        """One attempt, its failure sorted into `Transient` (retry) or `ModelRejected` (give up)."""
        tools = request.tools or omit
        max_tokens = request.max_tokens if self._limit_key == "max_tokens" else omit
        max_completion_tokens = request.max_tokens if self._limit_key == "max_completion_tokens" else omit
        try:
            if request.streamed:
                deadline = time.monotonic() + self._timeout_s
                collected = _Completion(model=self.name)
                with self._client.chat.completions.create(
                        model=self.name, messages=request.messages, tools=tools, max_tokens=max_tokens,
                        max_completion_tokens=max_completion_tokens, stream=True,
                        stream_options={"include_usage": True}) as stream:
                    for chunk in stream:
                        if time.monotonic() > deadline:
                            raise Transient(f"the streamed reply ran past the {self._timeout_s}s timeout")
                        collected.add(chunk)
                if collected.finish is None:  # a stream that closed cleanly but early: the reply may be partial
                    raise Transient("the stream ended before the reply said it was finished")
                return collected
            return _completion(self._client.chat.completions.create(
                model=self.name, messages=request.messages, tools=tools, max_tokens=max_tokens,
                max_completion_tokens=max_completion_tokens))
        except openai.APIStatusError as err:
            raise self._sorted(err) from err
        except openai.APITimeoutError as err:  # the SDK wraps a stream's read errors in these two as well
            raise Transient(f"no answer within the {self._timeout_s}s timeout") from err
        except openai.APIConnectionError as err:
            raise Transient(f"connection failed ({err.__cause__ or err})") from err
        except openai.APIError as err:  # an error object sent inside a stream, after its HTTP 200
            raise self._sorted_in_stream(err) from err

    def _sorted(self, err: openai.APIStatusError) -> Transient | ModelRejected:
        status, kind = err.status_code, err.code or err.type or "error"
        detail = self._redact(f"HTTP {status} {kind}: {_api_message(err)}"
                              + (f" (request-id {err.request_id})" if err.request_id else ""))
        if err.code == _NO_QUOTA:
            return ModelRejected(f"The OpenAI-compatible API has no quota left for model {self.name} ({detail}). "
                                 "Check the account's plan and billing.")
        if status in _RETRYABLE_STATUS or status >= 500:
            return Transient(detail, _retry_after(err))
        if status in (401, 403):
            return ModelRejected(f"The OpenAI-compatible API rejected the key ({detail}). Check that OPENAI_API_KEY "
                                 f"holds a current key with access to model {self.name}.")
        if err.code == _TOO_LONG or "maximum context length" in _api_message(err):  # vLLM says only the latter
            return ContextTooLong(f"The request is longer than model {self.name}'s context window ({detail}).")
        return ModelRejected(f"The OpenAI-compatible API refused the request for model {self.name} ({detail}).")

    def _sorted_in_stream(self, err: openai.APIError) -> Transient | ModelRejected:
        detail = self._redact(f"error inside the stream, {err.code or err.type or 'error'}: {err.message}")
        if err.type == "invalid_request_error":
            return ModelRejected(f"The OpenAI-compatible API refused the request for model {self.name} ({detail}).")
        return Transient(detail)

    def _redact(self, text: str) -> str:
        """`text` without the key in it (an error body could echo it back)."""
        key = self._client.api_key
        return text.replace(key, "[redacted]") if key else text


@dataclass(frozen=True)
class _Request:
    messages: list[ChatCompletionMessageParam]
    tools: list[ChatCompletionFunctionToolParam]
    max_tokens: int

    @property
    def streamed(self) -> bool:
        return self.max_tokens >= STREAM_FROM_MAX_TOKENS


def _api_message(err: openai.APIStatusError) -> str:
    """The server's own message: the SDK's `message` prefixes it with "Error code: N - "."""
    body = err.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    if isinstance(body, str) and body.strip():  # not JSON, e.g. a proxy's error page
        return body.strip()[:300]
    return err.message


def _retry_after(err: openai.APIStatusError) -> float | None:
    """Seconds from a numeric `retry-after-ms` or `retry-after` header; None when absent or a date."""
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = err.response.headers.get(header)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            continue
    return None


# --- conversation -> request ---------------------------------------------------------------------------------------


@dataclass
class _Turn:
    role: Literal["user", "assistant"]
    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


def _api_messages(system: System, messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    params: list[ChatCompletionMessageParam] = []
    prompt = "\n\n".join(part for part in (system.stable, system.volatile) if part)
    if prompt:
        params.append({"role": "system", "content": prompt})
    for turn in _turns(messages):
        if turn.role == "assistant":
            calls: list[ChatCompletionMessageFunctionToolCallParam] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in turn.calls]
            assistant: ChatCompletionAssistantMessageParam = {"role": "assistant",
                                                              "content": "\n\n".join(turn.texts) or None}
            if calls:
                assistant["tool_calls"] = calls
            params.append(assistant)
            continue
        # tool messages must directly follow the assistant message that made the calls, so they go first
        params.extend(_tool_message(result) for result in turn.results)
        if turn.texts:
            params.append({"role": "user", "content": "\n\n".join(turn.texts)})
    return params


def _turns(messages: Sequence[Message]) -> list[_Turn]:
    turns: list[_Turn] = []
    for message in messages:
        if message.role == "user" and message.tool_calls:
            raise ValueError("a user message cannot carry tool calls; they belong to the assistant message before it")
        if message.role == "assistant" and message.tool_results:
            raise ValueError("an assistant message cannot carry tool results; they belong to the next user message")
        if message.role not in ("user", "assistant"):
            raise ValueError(f"a message's role is 'user' or 'assistant', not {message.role!r}")
        text = [message.text] if message.text.strip() else []
        if not (text or message.tool_calls or message.tool_results):
            continue
        if not turns or turns[-1].role != message.role:
            turns.append(_Turn("user" if message.role == "user" else "assistant"))
        turns[-1].texts.extend(text)
        turns[-1].calls.extend(message.tool_calls)
        turns[-1].results.extend(message.tool_results)
    return turns


def _tool_message(result: ToolResult) -> ChatCompletionToolMessageParam:
    content = ERROR_PREFIX + result.content if result.is_error else result.content
    return {"role": "tool", "tool_call_id": result.call_id, "content": content}


def _tool_params(tools: Sequence[ToolSpec]) -> list[ChatCompletionFunctionToolParam]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}} for t in tools]


# --- response -> reply ---------------------------------------------------------------------------------------------


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class _Completion:
    """What both paths collect: the first choice's text and calls, its finish reason, the usage and model."""

    model: str
    text: str = ""
    calls: dict[int, _PartialCall] = field(default_factory=dict)  # by the call's index in the message
    finish: str | None = None
    usage: CompletionUsage | None = None

    def add(self, chunk: ChatCompletionChunk) -> None:
        """Fold in one streamed chunk: text and argument pieces are appended; ids and names come whole."""
        self.model = chunk.model or self.model
        self.usage = chunk.usage or self.usage
        for choice in chunk.choices:
            if choice.index != 0:  # only one choice is ever requested
                continue
            self.text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                call = self.calls.setdefault(delta.index, _PartialCall())
                call.id = call.id or delta.id or ""
                if delta.function is not None:
                    call.name = call.name or delta.function.name or ""
                    call.arguments += delta.function.arguments or ""
            self.finish = choice.finish_reason or self.finish


def _completion(response: ChatCompletion) -> _Completion:
    if not response.choices:
        raise Transient("the reply held no choices")
    choice = response.choices[0]
    # custom (free-text) tool calls only come for custom tools, which are never offered
    calls = [c for c in choice.message.tool_calls or [] if isinstance(c, ChatCompletionMessageFunctionToolCall)]
    return _Completion(model=response.model, text=choice.message.content or "", finish=choice.finish_reason,
                       usage=response.usage, calls={i: _PartialCall(c.id, c.function.name, c.function.arguments)
                                                    for i, c in enumerate(calls)})


def _reply(completion: _Completion) -> Reply:
    calls = [ToolCall(c.id, c.name, _arguments(c.arguments)) for _, c in sorted(completion.calls.items())]
    stop = _STOPS.get(completion.finish or "", StopReason.OTHER)
    if calls and stop is StopReason.END:  # some compatible servers finish a turn that calls tools with "stop"
        stop = StopReason.TOOL_USE
    return Reply(text=completion.text, tool_calls=calls, usage=_usage(completion.usage), stop=stop,
                 model=completion.model)


def _arguments(raw: str) -> dict[str, Any]:
    """A call's arguments, or `{"_unparsed": raw}` when they are not a JSON object (a model's slip, or cut off)."""
    if not raw.strip():  # some servers send "" for a call without arguments
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"_unparsed": raw}
    return value if isinstance(value, dict) else {"_unparsed": raw}


def _usage(usage: CompletionUsage | None) -> Usage:
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    # prompt_tokens includes the cached ones, which are billed at the cache-read price instead
    return Usage(input=max(0, usage.prompt_tokens - cached), output=usage.completion_tokens, cache_read=cached,
                 cache_write=0)
