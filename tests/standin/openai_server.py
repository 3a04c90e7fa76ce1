"""A scripted stand-in for the OpenAI Chat Completions API, for tests of the real `openai` SDK.

A real HTTP server on 127.0.0.1 (ephemeral port, background thread) answers
`POST /v1/chat/completions` from a FIFO script, in the wire format of the real
API: a JSON `chat.completion` for plain requests, and for `"stream": true` a
`text/event-stream` of `chat.completion.chunk` objects (a role chunk, the text
in pieces, each tool call opened with its id and name and its arguments sent in
pieces under the call's `index`, a chunk carrying `finish_reason`, then, when
the request asked for `stream_options.include_usage`, a usage chunk with empty
`choices`), ended by `data: [DONE]` and sent with chunked transfer encoding.
Errors use the API's body `{"error": {"message", "type", "param", "code"}}`,
and every response carries an `x-request-id` header. Less tidy servers can be
scripted too: a reply without usage (`usage_reported=False`), a stream that ends
without a finish reason (`finish_reason=None`), an error object sent inside a
200 stream (`in_stream=True`).

Before answering from the script it rejects, with the API's 400
`invalid_request_error`, requests the real API would reject for reasons a
backend controls (a `tool` message answering no tool call of the assistant
message before it, tool calls left unanswered, arguments that are not a string,
malformed tool definitions, `stream_options` without `stream`), so a test cannot
pass on a request production would refuse. Such a request does not use up a
scripted response. When the script is empty it answers 500 saying so, and
`ran_out` counts how often that happened (the `openai_server` fixture fails the
test on it).

It also answers requests sent to it as an HTTP proxy (an absolute URL as the
request target), so a client can be pointed at a named host such as
`http://api.openai.com/v1` with `HTTP_PROXY` set to `proxy_url`.

Usage:

    with OpenAIStandin() as server:
        server.enqueue_text("hello", usage={"prompt_tokens": 12, "cached_tokens": 8})
        client = openai.OpenAI(api_key="k", base_url=server.base_url)
        ...
        assert server.last_body["messages"][0]["role"] == "system"
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from tests.standin.loopback import Scripted

DEFAULT_USAGE: Mapping[str, int] = {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 0}
"""Scripted usage is flat; on the wire `cached_tokens` moves under `prompt_tokens_details`, and `total_tokens`
is added."""
PATH = "/v1/chat/completions"
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # the API's rule for function names
_ROLES = ("system", "developer", "user", "assistant", "tool")
_ids = itertools.count(1)  # process-wide, so ids never repeat across servers or builders


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it. Header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body (None when there was none or it was not JSON)

    @property
    def streamed(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    @property
    def wants_usage(self) -> bool:
        """A streamed request that asked for the final usage chunk."""
        options = self.body.get("stream_options") if isinstance(self.body, dict) else None
        return isinstance(options, dict) and options.get("include_usage") is True


@dataclass(frozen=True)
class ScriptedCall:
    """One function call of a reply. `arguments` is the raw string sent, so it may be malformed JSON."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class CompletionReply:
    """A successful answer: the assistant's text (None for JSON null), tool calls, finish reason and usage."""

    content: str | None
    tool_calls: Sequence[ScriptedCall] = ()
    finish_reason: str | None = "stop"  # None: the stream ends without saying why (no finish chunk)
    usage: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_USAGE))
    model: str | None = None  # None echoes the request's model, as the API reports the model it ran
    delay_s: float = 0.0  # wait before sending anything (a slow server; client timeouts)
    stall_s: float = 0.0  # streamed: wait after the first chunk (a mid-stream stall); plain: added to delay_s
    pace_s: float = 0.0  # streamed: wait before each chunk (a slow but live stream); plain: ignored
    usage_reported: bool = True  # False: no usage at all, as from servers that ignore `include_usage`


@dataclass(frozen=True)
class ErrorReply:
    """An error answer with the API's error body and the given extra headers."""

    status: int
    error_type: str
    message: str
    code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    in_stream: bool = False  # streamed requests: HTTP 200, a first chunk, then `data: {"error": …}`


Reply = CompletionReply | ErrorReply
Responder = Callable[[RecordedRequest], Reply]


def text_reply(text: str | None, *, usage: Mapping[str, int] | None = None, finish_reason: str | None = "stop",
               model: str | None = None, delay_s: float = 0.0, stall_s: float = 0.0,
               pace_s: float = 0.0) -> CompletionReply:
    return CompletionReply(text, (), finish_reason, _usage(usage), model, delay_s, stall_s, pace_s)


def tool_call_reply(calls: Sequence[tuple[str, Mapping[str, Any] | str]], *, text: str | None = None,
                    usage: Mapping[str, int] | None = None, finish_reason: str = "tool_calls",
                    model: str | None = None, delay_s: float = 0.0, stall_s: float = 0.0,
                    pace_s: float = 0.0) -> CompletionReply:
    """A reply with optional text and one call per `(name, arguments)`, ids `call_standin…`. Arguments given as a
    mapping are JSON-encoded; a string is sent as it is (to script malformed arguments)."""
    scripted = [ScriptedCall(f"call_standin{next(_ids):06d}", name,
                             args if isinstance(args, str) else json.dumps(dict(args))) for name, args in calls]
    return CompletionReply(text, scripted, finish_reason, _usage(usage), model, delay_s, stall_s, pace_s)


def error_reply(status: int, error_type: str, message: str, *, code: str | None = None,
                headers: Mapping[str, str] | None = None, delay_s: float = 0.0,
                in_stream: bool = False) -> ErrorReply:
    return ErrorReply(status, error_type, message, code, dict(headers or {}), delay_s, in_stream)


def _usage(usage: Mapping[str, int] | None) -> dict[str, int]:
    return {**DEFAULT_USAGE, **(usage or {})}


class OpenAIStandin(Scripted[RecordedRequest, Reply]):
    """The server. Start it with `with` (or `start()` / `close()`); script it with the `enqueue*` methods."""

    name = "openai-standin"

    def __init__(self, *, api_key: str | None = None, validate: bool = True,
                 models: list[dict[str, Any]] | None = None, window: int | None = None) -> None:
        """`api_key`: when set, requests must carry it (`authorization: Bearer …`), else 401.
        `validate`: reject requests the real API would reject (see the module docstring).
        `models`: what `GET /v1/models` lists (vLLM's entries carry `max_model_len`); by default one entry per
        model OpenAI's way, without a window."""
        super().__init__()
        self.api_key = api_key
        self.validate = validate
        self.window = window  # tokens (four characters of the messages and tools each); a longer request is refused
        self.models = models if models is not None else [
            {"id": "gpt-5-mini", "object": "model", "created": 1754425777, "owned_by": "system"}]

    @property
    def base_url(self) -> str:
        """The URL the SDK takes as `base_url`: it appends `/chat/completions` to it."""
        return f"{self.root_url}/v1"

    @property
    def proxy_url(self) -> str:
        """The server as an HTTP proxy, for `HTTP_PROXY`: it serves any host's `/v1/chat/completions` itself."""
        return self.root_url

    # --- script ----------------------------------------------------------------------------------------------------

    def enqueue_text(self, text: str | None, *, usage: Mapping[str, int] | None = None,
                     finish_reason: str | None = "stop", model: str | None = None, delay_s: float = 0.0,
                     stall_s: float = 0.0, pace_s: float = 0.0) -> None:
        self.enqueue(text_reply(text, usage=usage, finish_reason=finish_reason, model=model, delay_s=delay_s,
                                stall_s=stall_s, pace_s=pace_s))

    def enqueue_tool_calls(self, calls: Sequence[tuple[str, Mapping[str, Any] | str]], *, text: str | None = None,
                           usage: Mapping[str, int] | None = None, finish_reason: str = "tool_calls",
                           model: str | None = None, delay_s: float = 0.0, stall_s: float = 0.0,
                           pace_s: float = 0.0) -> list[str]:
        """Queue a tool-call reply; returns the call ids, in order."""
        reply = tool_call_reply(calls, text=text, usage=usage, finish_reason=finish_reason, model=model,
                                delay_s=delay_s, stall_s=stall_s, pace_s=pace_s)
        self.enqueue(reply)
        return [call.id for call in reply.tool_calls]

    def enqueue_error(self, status: int, error_type: str, message: str, *, code: str | None = None,
                      headers: Mapping[str, str] | None = None, delay_s: float = 0.0,
                      in_stream: bool = False) -> None:
        """Queue an error, e.g. `(429, "requests", "Rate limit reached …", code="rate_limit_exceeded",
        headers={"retry-after": "0"})`, `(503, "server_error", "The engine is currently overloaded")`,
        `(401, "invalid_request_error", "Incorrect API key provided", code="invalid_api_key")`."""
        self.enqueue(error_reply(status, error_type, message, code=code, headers=headers, delay_s=delay_s,
                                 in_stream=in_stream))

    def _ran_out(self, request: RecordedRequest, number: int) -> Reply:
        return ErrorReply(500, "server_error", f"openai stand-in: the script ran out (request #{number} to "
                          f"{request.path} had no scripted response)", headers={"x-should-retry": "false"})


# --- request checks (a subset of the real API's validation) --------------------------------------------------------


def request_problem(body: Any) -> str | None:
    """The API's complaint about a chat completions request body, or None when it would be accepted."""
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request."
    if not isinstance(body.get("model"), str):
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "Missing required parameter: 'messages'."
    if not messages:
        return "[] is too short - 'messages'"
    for i, message in enumerate(messages):
        problem = _message_problem(i, message, messages)
        if problem:
            return problem
    for i, tool in enumerate(body.get("tools") or []):
        problem = _tool_problem(i, tool)
        if problem:
            return problem
    if body.get("stream_options") is not None and body.get("stream") is not True:
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    for key in ("max_tokens", "max_completion_tokens"):
        if key in body and not (isinstance(body[key], int) and body[key] >= 1):
            return f"Invalid '{key}': integer below minimum value. Expected a value >= 1, but got {body[key]!r}."
    return None


def _message_problem(i: int, message: Any, messages: list[Any]) -> str | None:
    if not isinstance(message, dict) or message.get("role") not in _ROLES:
        return f"Invalid value for 'messages[{i}].role': expected one of {', '.join(_ROLES)}."
    role = message["role"]
    if role == "assistant":
        return _assistant_problem(i, message, messages)
    if not _is_text(message.get("content")):
        return f"Invalid type for 'messages[{i}].content': expected a string or an array of text parts."
    if role == "tool":
        owner = _calling_message(messages, i)
        if owner is None:
            return ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
                    "'tool_calls'.")
        if message.get("tool_call_id") not in _call_ids(owner):
            return (f"Invalid parameter: 'tool_call_id' of '{message.get('tool_call_id')}' not found in "
                    "'tool_calls' of previous message.")
    return None


def _assistant_problem(i: int, message: dict[str, Any], messages: list[Any]) -> str | None:
    calls = message.get("tool_calls")
    content = message.get("content")
    if content is not None and not _is_text(content):
        return f"Invalid type for 'messages[{i}].content': expected a string, an array of parts, or null."
    if not calls and content is None:
        return f"Missing required parameter: 'messages[{i}].content'."
    for j, call in enumerate(calls or []):
        where = f"messages[{i}].tool_calls[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or call.get("type") != "function" or not isinstance(call.get("id"), str):
            return f"Invalid value for '{where}': expected an object with 'id', 'type': 'function' and 'function'."
        if not isinstance(function.get("name"), str):
            return f"Missing required parameter: '{where}.function.name'."
        if not isinstance(function.get("arguments"), str):
            return (f"Invalid type for '{where}.function.arguments': expected a string, but got "
                    f"{type(function.get('arguments')).__name__} instead.")
    answered = {m.get("tool_call_id") for m in itertools.takewhile(
        lambda m: isinstance(m, dict) and m.get("role") == "tool", messages[i + 1:])}
    unanswered = [call_id for call_id in _call_ids(message) if call_id not in answered]
    if unanswered and i + 1 < len(messages):
        return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(unanswered)}")
    return None


def _tool_problem(i: int, tool: Any) -> str | None:
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(function, dict) or tool.get("type") != "function":
        return f"Invalid value for 'tools[{i}]': expected an object with 'type': 'function' and 'function'."
    if not isinstance(function.get("name"), str) or not _TOOL_NAME.match(function["name"]):
        return f"Invalid 'tools[{i}].function.name': string does not match pattern '^[a-zA-Z0-9_-]{{1,64}}$'."
    if "parameters" in function and not isinstance(function["parameters"], dict):
        return f"Invalid type for 'tools[{i}].function.parameters': expected an object."
    return None


def _is_text(content: Any) -> bool:
    return isinstance(content, str) or (isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        for part in content))


def _calling_message(messages: list[Any], i: int) -> dict[str, Any] | None:
    """The assistant message whose tool calls the run of tool messages holding messages[i] answers."""
    j = i - 1
    while j >= 0 and isinstance(messages[j], dict) and messages[j].get("role") == "tool":
        j -= 1
    previous = messages[j] if j >= 0 else None
    if isinstance(previous, dict) and previous.get("role") == "assistant" and previous.get("tool_calls"):
        return previous
    return None


def _call_ids(message: Mapping[str, Any]) -> list[str]:
    return [call["id"] for call in message.get("tool_calls") or []
            if isinstance(call, dict) and isinstance(call.get("id"), str)]


# --- wire format ---------------------------------------------------------------------------------------------------


def _model(reply: CompletionReply, request: RecordedRequest) -> str:
    return reply.model or (request.body.get("model") if isinstance(request.body, dict) else None) or "gpt-standin"


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """The stand-in's token count of a request: four characters of its messages and tools a token."""
    return len(json.dumps([body.get("messages"), body.get("tools")])) // 4


def _usage_json(usage: Mapping[str, int]) -> dict[str, Any]:
    prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": usage["cached_tokens"], "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


def _completion_json(reply: CompletionReply, request: RecordedRequest) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None, "annotations": []}
    if reply.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name,
                                                                              "arguments": c.arguments}}
                                 for c in reply.tool_calls]
    return {"id": f"chatcmpl-standin{next(_ids):06d}", "object": "chat.completion", "created": int(time.time()),
            "model": _model(reply, request), "system_fingerprint": "fp_standin",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}],
            "usage": _usage_json(reply.usage) if reply.usage_reported else None}


def _halves(text: str) -> list[str]:
    """`text` in two pieces (one when too short), so clients must join deltas."""
    cut = len(text) // 2
    return [text[:cut], text[cut:]] if cut else [text]


def _chunks(reply: CompletionReply, request: RecordedRequest) -> Iterator[dict[str, Any]]:
    """The stream's chunk objects, in order; the `[DONE]` line is not one of them."""
    header = {"id": f"chatcmpl-standin{next(_ids):06d}", "object": "chat.completion.chunk",
              "created": int(time.time()), "model": _model(reply, request), "system_fingerprint": "fp_standin"}
    # with include_usage the API sends `"usage": null` on every chunk but the last
    extra: dict[str, Any] = {"usage": None} if request.wants_usage else {}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**header, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                       "finish_reason": finish_reason}], **extra}

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in _halves(reply.content or ""):
        if piece:
            yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        yield chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                     "function": {"name": call.name, "arguments": ""}}]})
        for piece in _halves(call.arguments):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    if reply.finish_reason is not None:
        yield chunk({}, reply.finish_reason)
    if request.wants_usage and reply.usage_reported:
        yield {**header, "choices": [], "usage": _usage_json(reply.usage)}


def _error_json(reply: ErrorReply) -> dict[str, Any]:
    return {"error": {"message": reply.message, "type": reply.error_type, "param": None, "code": reply.code}}


def _masked(key: str) -> str:
    """A key as the API quotes it back in a 401: all but its ends starred out."""
    return key[:3] + "*" * max(0, len(key) - 7) + key[-4:] if len(key) > 7 else "*" * len(key)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and chunked encoding for streams, like the real API
    disable_nagle_algorithm = True  # headers and body go out in separate writes; Nagle would add ~40 ms to each

    @property
    def standin(self) -> OpenAIStandin:
        return self.server.standin  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `requests`, not stderr."""

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionResetError:
            # The sync SDK closes a stream's connection at `[DONE]` without reading the body's final chunk; the
            # unread bytes turn that close into a reset, which arrives here while waiting for a next request.
            self.close_connection = True

    def do_GET(self) -> None:
        request = RecordedRequest("GET", self.path, {k.lower(): v for k, v in self.headers.items()}, None)
        self.standin._record(request)
        if urlsplit(request.path).path != "/v1/models":
            self._error(ErrorReply(404, "invalid_request_error", f"Invalid URL (GET {request.path})"))
        elif self.standin.api_key is not None and not self._authorised():
            self._error(ErrorReply(401, "invalid_request_error", "Incorrect API key provided.", "invalid_api_key"))
        else:
            self._json(200, {"object": "list", "data": self.standin.models})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        request = RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.standin._record(request)
        try:
            self._answer(request)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout); nothing left to tell it

    def _answer(self, request: RecordedRequest) -> None:
        problem = request_problem(request.body) if self.standin.validate else None
        if urlsplit(request.path).path != PATH:
            self._error(ErrorReply(404, "invalid_request_error", f"Invalid URL (POST {request.path})"))
        elif self.standin.api_key is not None and not self._authorised():
            sent = (self.headers.get("authorization") or "").removeprefix("Bearer ")
            self._error(ErrorReply(401, "invalid_request_error", f"Incorrect API key provided: {_masked(sent)}. You "
                                   "can find your API key at https://platform.openai.com/account/api-keys.",
                                   "invalid_api_key"))
        elif problem:
            self._error(ErrorReply(400, "invalid_request_error", problem))
        elif self.standin.window is not None and (tokens := prompt_tokens(request.body)) > self.standin.window:
            self._error(ErrorReply(400, "invalid_request_error", f"This model's maximum context length is "
                                   f"{self.standin.window} tokens. However, your messages resulted in {tokens} tokens. "
                                   "Please reduce the length of the messages.", "context_length_exceeded"))
        else:
            self._scripted(request)

    def _scripted(self, request: RecordedRequest) -> None:
        reply = self.standin._next(request)
        self.standin._sleep(reply.delay_s)
        if isinstance(reply, ErrorReply):
            if reply.in_stream and request.streamed:
                self._stream_error(reply, request)
            else:
                self._error(reply)
        elif request.streamed:
            self._stream(reply, request)
        else:
            self.standin._sleep(reply.stall_s)
            self._json(200, _completion_json(reply, request))

    def _authorised(self) -> bool:
        return self.headers.get("authorization") == f"Bearer {self.standin.api_key}"

    def _json(self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", f"req_standin{next(_ids):06d}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, reply: ErrorReply) -> None:
        self._json(reply.status, _error_json(reply), reply.headers)

    def _open_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("x-request-id", f"req_standin{next(_ids):06d}")
        self.end_headers()

    def _data(self, payload: Mapping[str, Any] | str) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        self._chunk(f"data: {text}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))  # a zero-length chunk ends the body
        self.wfile.flush()

    def _stream(self, reply: CompletionReply, request: RecordedRequest) -> None:
        self._open_stream()
        for n, chunk in enumerate(_chunks(reply, request)):
            self.standin._sleep(reply.pace_s)
            self._data(chunk)
            if n == 0:
                self.standin._sleep(reply.stall_s)
        self._data("[DONE]")
        self._chunk(b"")

    def _stream_error(self, reply: ErrorReply, request: RecordedRequest) -> None:
        self._open_stream()
        self._data(next(_chunks(text_reply(""), request)))
        self._data(_error_json(reply))
        self._chunk(b"")


OpenAIStandin.handler = _Handler
