"""A scripted stand-in for the Anthropic Messages API, for tests of the real SDK.

A real HTTP server on 127.0.0.1 (ephemeral port, background thread) answers
`POST /v1/messages` from a FIFO script, in the wire format of the real API:
a JSON `message` for plain requests, and for `"stream": true` the SSE sequence
message_start, content_block_start, ping, content_block_delta (text_delta /
input_json_delta in several chunks), content_block_stop, message_delta,
message_stop, sent with chunked transfer encoding. Errors use the API's error
body `{"type": "error", "error": {...}}`, and every response carries a
`request-id` header.

Before answering from the script it rejects, with the API's 400
`invalid_request_error`, requests the real API would reject for reasons a
backend controls (unpaired tool_use / tool_result, text after tool results,
empty text blocks, more than four cache breakpoints), so a test cannot pass on a
request production would refuse. Such a request does not use up a scripted
response. When the script is empty it answers 500 saying so, and `ran_out`
counts how often that happened (the `anthropic_server` fixture fails the test on
it).

Usage:

    with AnthropicStandin() as server:
        server.enqueue_text("hello", usage={"input_tokens": 12})
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url)
        ...
        assert server.last_body["messages"][0]["role"] == "user"
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.standin.loopback import Scripted

DEFAULT_USAGE: Mapping[str, int] = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                                    "cache_read_input_tokens": 0}
MAX_CACHE_BREAKPOINTS = 4  # the API's limit on blocks carrying cache_control
_ids = itertools.count(1)  # process-wide, so ids never repeat across servers or builders


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it. Header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body (None when there was none or it was not JSON)
    cache: dict[str, int] | None = None  # window mode: the input side of its usage, as the prompt cache counts it

    @property
    def streamed(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True


@dataclass(frozen=True)
class MessageReply:
    """A successful answer: the message's content blocks, stop reason and usage."""

    content: Sequence[Mapping[str, Any]]
    stop_reason: str = "end_turn"
    usage: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_USAGE))
    model: str | None = None  # None echoes the request's model, as the API reports the model it ran
    delay_s: float = 0.0  # wait before sending anything (a slow server; client timeouts)
    stall_s: float = 0.0  # streamed: wait after message_start (a mid-stream stall); plain: added to delay_s
    pace_s: float = 0.0  # streamed: wait before each event (a slow but live stream); plain: ignored


@dataclass(frozen=True)
class ErrorReply:
    """An error answer with the API's error body and the given extra headers."""

    status: int
    error_type: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    in_stream: bool = False  # streamed requests: HTTP 200, message_start, then an `error` event (mid-stream overload)


Reply = MessageReply | ErrorReply
Responder = Callable[[RecordedRequest], Reply]


def text_reply(text: str, *, usage: Mapping[str, int] | None = None, stop_reason: str = "end_turn",
               model: str | None = None, delay_s: float = 0.0, stall_s: float = 0.0,
               pace_s: float = 0.0) -> MessageReply:
    """A reply holding one text block (none when `text` is empty)."""
    content = [{"type": "text", "text": text}] if text else []
    return MessageReply(content, stop_reason, _usage(usage), model, delay_s, stall_s, pace_s)


def tool_use_reply(calls: Sequence[tuple[str, Mapping[str, Any]]], *, text: str = "",
                   usage: Mapping[str, int] | None = None, stop_reason: str = "tool_use", model: str | None = None,
                   delay_s: float = 0.0, stall_s: float = 0.0, pace_s: float = 0.0) -> MessageReply:
    """A reply with optional leading text and one tool_use block per `(name, input)`, ids `toolu_standin…`."""
    content: list[Mapping[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_standin{next(_ids):06d}", "name": name, "input": dict(args)}
                for name, args in calls]
    return MessageReply(content, stop_reason, _usage(usage), model, delay_s, stall_s, pace_s)


def error_reply(status: int, error_type: str, message: str, *, headers: Mapping[str, str] | None = None,
                delay_s: float = 0.0, in_stream: bool = False) -> ErrorReply:
    return ErrorReply(status, error_type, message, dict(headers or {}), delay_s, in_stream)


def _usage(usage: Mapping[str, int] | None) -> dict[str, int]:
    return {**DEFAULT_USAGE, **(usage or {})}


class AnthropicStandin(Scripted[RecordedRequest, Reply]):
    """The server. Start it with `with` (or `start()` / `close()`); script it with the `enqueue*` methods."""

    name = "anthropic-standin"

    def __init__(self, *, api_key: str | None = None, validate: bool = True, window: int | None = None) -> None:
        """`api_key`: when set, requests must carry it (`x-api-key` or `authorization: Bearer`), else 401.
        `validate`: reject requests the real API would reject (see the module docstring).
        `window`: the model's context window in tokens (the stand-in counts four characters of the request's
        system, tools and messages as a token): a longer request is refused as the API refuses it, and a reply's
        usage counts the request as the API's prompt cache would: the blocks up to the last cache breakpoint that
        repeat the previous request's are read from the cache, the rest up to that breakpoint written to it, and
        what follows it is plain input."""
        super().__init__()
        self.api_key = api_key
        self.validate = validate
        self.window = window
        self.cached: list[str] = []  # the blocks, up to its last breakpoint, of the last request (window mode)

    @property
    def base_url(self) -> str:
        return self.root_url

    def enqueue_text(self, text: str, *, usage: Mapping[str, int] | None = None, stop_reason: str = "end_turn",
                     model: str | None = None, delay_s: float = 0.0, stall_s: float = 0.0,
                     pace_s: float = 0.0) -> None:
        self.enqueue(text_reply(text, usage=usage, stop_reason=stop_reason, model=model, delay_s=delay_s,
                                stall_s=stall_s, pace_s=pace_s))

    def enqueue_tool_use(self, calls: Sequence[tuple[str, Mapping[str, Any]]], *, text: str = "",
                         usage: Mapping[str, int] | None = None, model: str | None = None, delay_s: float = 0.0,
                         stall_s: float = 0.0, pace_s: float = 0.0) -> list[str]:
        """Queue a tool_use reply; returns the tool_use ids, in order."""
        reply = tool_use_reply(calls, text=text, usage=usage, model=model, delay_s=delay_s, stall_s=stall_s,
                               pace_s=pace_s)
        self.enqueue(reply)
        return [str(block["id"]) for block in reply.content if block["type"] == "tool_use"]

    def enqueue_error(self, status: int, error_type: str, message: str, *, headers: Mapping[str, str] | None = None,
                      delay_s: float = 0.0, in_stream: bool = False) -> None:
        """Queue an error, e.g. `(429, "rate_limit_error", "…", headers={"retry-after": "0"})`, `(529,
        "overloaded_error", "Overloaded")`, `(401, "authentication_error", "invalid x-api-key")`."""
        self.enqueue(error_reply(status, error_type, message, headers=headers, delay_s=delay_s, in_stream=in_stream))

    def _ran_out(self, request: RecordedRequest, number: int) -> Reply:
        return ErrorReply(500, "api_error", f"anthropic stand-in: the script ran out (request #{number} to "
                          f"{request.path} had no scripted response)", {"x-should-retry": "false"})


# --- request checks (a subset of the real API's validation) --------------------------------------------------------


def request_problem(body: Any) -> str | None:
    """The API's complaint about a Messages request body, or None when it would be accepted."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    for key, kind in (("model", str), ("max_tokens", int), ("messages", list)):
        if not isinstance(body.get(key), kind):
            return f"{key}: Field required" if key not in body else f"{key}: Input should be a valid {kind.__name__}"
    messages: list[Any] = body["messages"]
    for i, message in enumerate(messages):
        problem = _message_problem(i, message, messages)
        if problem:
            return problem
    breakpoints = sum(_has_cache_control(block) for block in _all_blocks(body))
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        return f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}."
    return None


def _message_problem(i: int, message: Any, messages: list[Any]) -> str | None:
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    blocks = _blocks(message)
    if not blocks:
        return f"messages.{i}: all messages must have non-empty content"
    for j, block in enumerate(blocks):
        if block.get("type") == "text" and not str(block.get("text") or "").strip():
            return f"messages.{i}.content.{j}: text content blocks must contain non-whitespace text"
    if message["role"] == "user":
        kinds = [block.get("type") for block in blocks]
        if "tool_result" in kinds and "text" in kinds[:max(j for j, k in enumerate(kinds) if k == "tool_result")]:
            return f"messages.{i}: tool_result blocks must come before any other content in a user message"
        previous = messages[i - 1] if i > 0 else None
        offered = _ids_of(previous, "tool_use", "id") if isinstance(previous, dict) else set()
        stray = sorted(_ids_of(message, "tool_result", "tool_use_id") - offered)
        if stray:
            return (f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {', '.join(stray)}. Each "
                    "`tool_result` block must have a corresponding `tool_use` block in the previous message.")
    else:
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        answered = _ids_of(nxt, "tool_result", "tool_use_id") if isinstance(nxt, dict) else set()
        unanswered = sorted(_ids_of(message, "tool_use", "id") - answered)
        if unanswered and nxt is not None:
            return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(unanswered)}. Each `tool_use` block must have a corresponding `tool_result` block "
                    "in the next message.")
    return None


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _ids_of(message: Mapping[str, Any], block_type: str, key: str) -> set[str]:
    return {str(block.get(key)) for block in _blocks(message) if block.get("type") == block_type}


def _all_blocks(body: Mapping[str, Any]) -> Iterator[Any]:
    system = body.get("system")
    if isinstance(system, list):
        yield from system
    yield from body.get("tools") or []
    for message in body["messages"]:
        if isinstance(message, dict):
            yield from _blocks(message)


def _has_cache_control(block: Any) -> bool:
    return isinstance(block, dict) and block.get("cache_control") is not None


# --- wire format ---------------------------------------------------------------------------------------------------


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """The stand-in's token count of a request: what it holds besides the output limit, four characters a token."""
    return len(json.dumps([body.get("system"), body.get("tools"), body.get("messages")])) // 4


def cache_usage(body: Mapping[str, Any], cached: list[str]) -> tuple[dict[str, int], list[str]]:
    """The input side of a request's usage as the prompt cache would count it against the blocks `cached`, and
    the blocks it leaves cached."""
    blocks = list(_all_blocks(body))
    last = max((i for i, b in enumerate(blocks) if _has_cache_control(b)), default=-1)
    keys = [json.dumps({k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b)
            for b in blocks]
    prefix = keys[:last + 1]
    same = next((i for i, (a, b) in enumerate(zip(prefix, cached, strict=False)) if a != b), min(len(prefix),
                                                                                                 len(cached)))
    return ({"cache_read_input_tokens": _weigh(prefix[:same]), "cache_creation_input_tokens": _weigh(prefix[same:]),
             "input_tokens": _weigh(keys[last + 1:])}, prefix)


def _weigh(blocks: Sequence[str]) -> int:
    return sum(len(b) for b in blocks) // 4


def _message_json(reply: MessageReply, request: RecordedRequest, content: list[Any], *,
                  streaming: bool) -> dict[str, Any]:
    usage = dict(reply.usage)
    if request.cache is not None:
        usage.update(request.cache)
    if streaming:  # message_start reports the input side; output_tokens arrives in message_delta
        usage["output_tokens"] = 1
    model = reply.model or (request.body.get("model") if isinstance(request.body, dict) else None) or "claude-standin"
    return {"id": f"msg_standin{next(_ids):06d}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": None if streaming else reply.stop_reason, "stop_sequence": None,
            "usage": usage}


def _halves(text: str) -> list[str]:
    """`text` in two pieces (one when too short), so clients must join deltas."""
    cut = len(text) // 2
    return [text[:cut], text[cut:]] if cut else [text]


def _sse_events(reply: MessageReply, request: RecordedRequest) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "message_start", {"type": "message_start", "message": _message_json(reply, request, [], streaming=True)}
    for index, block in enumerate(reply.content):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            deltas = [{"type": "text_delta", "text": piece} for piece in _halves(block["text"])]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            # the API opens tool input with an empty partial_json, then sends the JSON text in pieces
            deltas = [{"type": "input_json_delta", "partial_json": piece}
                      for piece in ["", *_halves(json.dumps(block["input"]))]]
        if index == 0:
            yield "ping", {"type": "ping"}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": reply.usage["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def _error_json(error_type: str, message: str, request_id: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}, "request_id": request_id}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and chunked encoding for streams, like the real API
    disable_nagle_algorithm = True  # headers and body go out in separate writes; Nagle would add ~40 ms to each

    @property
    def standin(self) -> AnthropicStandin:
        return self.server.standin  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `requests`, not stderr."""

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
        if request.path.split("?")[0] != "/v1/messages":
            self._error(ErrorReply(404, "not_found_error", f"Not found: {request.path}"))
        elif self.standin.api_key is not None and not self._authorised():
            self._error(ErrorReply(401, "authentication_error", "invalid x-api-key"))
        elif problem:
            self._error(ErrorReply(400, "invalid_request_error", problem))
        elif self.standin.window is not None and (tokens := prompt_tokens(request.body)) > self.standin.window:
            self._error(ErrorReply(400, "invalid_request_error",
                                   f"prompt is too long: {tokens} tokens > {self.standin.window} maximum"))
        else:
            if self.standin.window is not None:
                usage, self.standin.cached = cache_usage(request.body, self.standin.cached)
                request = dataclasses.replace(request, cache=usage)
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
            self._json(200, _message_json(reply, request, [dict(block) for block in reply.content], streaming=False))

    def _authorised(self) -> bool:
        key = self.standin.api_key
        return self.headers.get("x-api-key") == key or self.headers.get("authorization") == f"Bearer {key}"

    def _request_id(self) -> str:
        return f"req_standin{next(_ids):06d}"

    def _json(self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None,
              request_id: str = "") -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", request_id or self._request_id())
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, reply: ErrorReply) -> None:
        request_id = self._request_id()
        self._json(reply.status, _error_json(reply.error_type, reply.message, request_id), reply.headers, request_id)

    def _open_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", self._request_id())
        self.end_headers()

    def _event(self, name: str, data: Mapping[str, Any]) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))  # a zero-length chunk ends the body
        self.wfile.flush()

    def _stream(self, reply: MessageReply, request: RecordedRequest) -> None:
        self._open_stream()
        for name, data in _sse_events(reply, request):
            self.standin._sleep(reply.pace_s)
            self._event(name, data)
            if name == "message_start":
                self.standin._sleep(reply.stall_s)
        self._chunk(b"")

    def _stream_error(self, reply: ErrorReply, request: RecordedRequest) -> None:
        self._open_stream()
        start = _message_json(text_reply(""), request, [], streaming=True)
        self._event("message_start", {"type": "message_start", "message": start})
        self._event("error", {"type": "error", "error": {"type": reply.error_type, "message": reply.message}})
        self._chunk(b"")


AnthropicStandin.handler = _Handler
