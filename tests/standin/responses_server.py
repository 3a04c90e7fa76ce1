"""A scripted stand-in for the OpenAI Responses API, for tests of the real Codex CLI.

A real HTTP server on 127.0.0.1 (ephemeral port, background thread) answers
`POST /v1/responses` from a FIFO script, as a `text/event-stream` of the
events Codex 0.171 reads (measured against the binary): `response.created`,
then for each output item `response.output_item.added`, for a message its text
as `response.output_text.delta`, and `response.output_item.done`, then
`response.completed` carrying the response's id and usage (`input_tokens`,
`input_tokens_details.cached_tokens`, `output_tokens`,
`output_tokens_details.reasoning_tokens`). Output items: an assistant
`message`, a `function_call` (Codex's shell tool `exec_command`, or an MCP tool
with its `namespace`), a `custom_tool_call` (its freeform `apply_patch`).

Errors use the API's body `{"error": {"message", "type", "param", "code"}}`
with whatever status and headers the script gives (a 429 with `retry-after`,
or the ChatGPT backend's `usage_limit_reached` with `resets_at`); a stream can
also end in `response.failed`.

Before answering from the script it rejects, with the API's 400
`invalid_request_error`, requests the real API would reject for reasons a
client controls: a `function_call_output` or `custom_tool_call_output` whose
`call_id` answers no call earlier in `input`, a call left unanswered before a
later user message, an unknown item type. Such a request does not use up a
scripted response. When the script is empty it answers 500 saying so, and
`ran_out` counts how often that happened.

Usage:

    with ResponsesStandin(api_key="k") as server:
        server.enqueue(shell("lake env lean Book/A.lean"))
        server.enqueue(message("done"))
        … codex with model_providers.x.base_url = server.base_url …
        assert server.requests[1].body["input"][-1]["type"] == "function_call_output"
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.standin.loopback import Scripted

DEFAULT_USAGE: Mapping[str, int] = {"input_tokens": 100, "cached_tokens": 40, "output_tokens": 20,
                                    "reasoning_tokens": 5}
"""Scripted usage is flat; on the wire `cached_tokens` and `reasoning_tokens` move under their `_details`."""
_ids = itertools.count(1)
_ANSWERS = {"function_call_output": "function_call", "custom_tool_call_output": "custom_tool_call"}
_ITEMS = {"message", "reasoning", "function_call", "custom_tool_call", "function_call_output",
          "custom_tool_call_output", "additional_tools", "compaction", "local_shell_call", "local_shell_call_output",
          "web_search_call", "tool_search_call", "tool_search_output"}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it. Header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def tools(self) -> list[str]:
        """The names of the tools offered (a namespace's as `namespace/name`)."""
        out: list[str] = []
        for tool in self.body.get("tools", []) if isinstance(self.body, dict) else []:
            if tool.get("type") == "namespace":
                out += [f"{tool['name']}/{t['name']}" for t in tool.get("tools", [])]
            else:
                out.append(str(tool.get("name", tool.get("type"))))
        return out

    def outputs(self) -> list[str]:
        """The tool results the request carries, in order (a result of content parts as their texts)."""
        return [_text(item.get("output", "")) for item in self.body.get("input", []) if item.get("type") in _ANSWERS]

    def text(self) -> str:
        """Every text of the request's input (developer and user messages, tool results)."""
        out = []
        for item in self.body.get("input", []):
            content = item.get("content")
            if isinstance(content, list):
                out += [str(c.get("text", "")) for c in content if isinstance(c, dict)]
            elif isinstance(content, str):
                out.append(content)
            if item.get("type") in _ANSWERS:
                out.append(_text(item.get("output", "")))
        return "\n".join(out)


def _text(output: Any) -> str:
    """A tool result's output: a string, or content parts (`input_text`, …)."""
    if isinstance(output, list):
        return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    return str(output)


@dataclass(frozen=True)
class Response:
    """A streamed answer: its output items, its usage, and how it ends."""

    items: Sequence[Mapping[str, Any]]
    usage: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_USAGE))
    delay_s: float = 0.0  # wait before sending anything
    failed: Mapping[str, Any] | None = None  # end in `response.failed` with this error instead of completing


@dataclass(frozen=True)
class ErrorReply:
    status: int
    error: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


Reply = Response | ErrorReply
Responder = Callable[[RecordedRequest], Reply]


def message(text: str, **options: Any) -> Response:
    return Response([{"type": "message", "id": f"msg_{next(_ids):06d}", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": text, "annotations": []}]}], **options)


def call(name: str, arguments: Mapping[str, Any], *, namespace: str | None = None) -> dict[str, Any]:
    """A function call item: Codex's shell (`exec_command`, `{"cmd": …}`) or an MCP tool (`namespace` =
    `mcp__<server>`)."""
    item = {"type": "function_call", "id": f"fc_{next(_ids):06d}", "call_id": f"call_{next(_ids):06d}",
            "name": name, "arguments": json.dumps(dict(arguments)), "status": "completed"}
    return item | ({"namespace": namespace} if namespace else {})


def shell(command: str, **options: Any) -> Response:
    """One call of Codex's shell tool."""
    return Response([call("exec_command", {"cmd": command})], **options)


def patch(text: str, **options: Any) -> Response:
    """One call of Codex's freeform `apply_patch` tool with `text` (`*** Begin Patch` … `*** End Patch`)."""
    return Response([{"type": "custom_tool_call", "id": f"ctc_{next(_ids):06d}", "call_id": f"call_{next(_ids):06d}",
                      "name": "apply_patch", "input": text, "status": "completed"}], **options)


def error(status: int, kind: str, text: str, *, headers: Mapping[str, str] | None = None, **extra: Any) -> ErrorReply:
    """An error answer, e.g. `(429, "rate_limit_exceeded", "…", headers={"retry-after": "1"})`, or the ChatGPT
    backend's usage cap `(429, "usage_limit_reached", "…", resets_at=<unix time>)`."""
    body = {"message": text, "type": kind, "param": None, "code": kind, **extra}
    return ErrorReply(status, body, dict(headers or {}))


class ResponsesStandin(Scripted[RecordedRequest, Reply]):
    """The server. Start it with `with` (or `start()` / `close()`); script it with `enqueue`."""

    name = "responses-standin"

    def __init__(self, *, api_key: str | None = None, validate: bool = True) -> None:
        """`api_key`: when set, requests must carry `authorization: Bearer <key>`, else 401."""
        super().__init__()
        self.api_key = api_key
        self.validate = validate

    @property
    def base_url(self) -> str:
        """The provider's base URL, as Codex's `model_providers.<id>.base_url` takes it."""
        return f"{self.root_url}/v1"

    def _ran_out(self, request: RecordedRequest, number: int) -> Reply:
        return error(500, "server_error", f"responses stand-in: the script ran out (request #{number} had no "
                                          "scripted response)")


def request_problem(body: Any) -> str | None:
    """The API's complaint about a Responses request body, or None when it would be accepted."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str):
        return "Missing required parameter: 'model'."
    items = body.get("input")
    if not isinstance(items, list):
        return "Invalid type for 'input': expected an array."
    calls: dict[str, str] = {}
    for i, item in enumerate(items):
        kind = item.get("type", "message") if isinstance(item, dict) else None
        if kind not in _ITEMS:
            return f"Invalid value for 'input[{i}].type': {kind!r}."
        if kind in _ANSWERS.values():
            calls[str(item.get("call_id"))] = kind
        elif kind in _ANSWERS:
            if calls.pop(str(item.get("call_id")), None) != _ANSWERS[kind]:
                return f"No tool call found for {kind} with call_id {item.get('call_id')}."
        elif kind == "message" and item.get("role") == "user" and calls:
            return f"No tool output found for function call {next(iter(calls))}."
    return None


def _usage(flat: Mapping[str, int]) -> dict[str, Any]:
    usage = {**DEFAULT_USAGE, **flat}
    return {"input_tokens": usage["input_tokens"], "input_tokens_details": {"cached_tokens": usage["cached_tokens"]},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": usage["reasoning_tokens"]},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"]}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    @property
    def standin(self) -> ResponsesStandin:
        return self.server.standin  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `requests`."""

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
            self.close_connection = True

    def _answer(self, request: RecordedRequest) -> None:
        key = self.standin.api_key
        if request.path.split("?")[0] != "/v1/responses":
            self._error(error(404, "not_found", f"Unknown path {request.path}"))
        elif key is not None and self.headers.get("authorization") != f"Bearer {key}":
            self._error(error(401, "invalid_api_key", "Incorrect API key provided"))
        elif self.standin.validate and (problem := request_problem(request.body)):
            self._error(error(400, "invalid_request_error", problem))
        else:
            reply = self.standin._next(request)
            self.standin._sleep(reply.delay_s)
            if isinstance(reply, ErrorReply):
                self._error(reply)
            else:
                self._stream(reply, request)

    def _error(self, reply: ErrorReply) -> None:
        data = json.dumps({"error": dict(reply.error)}).encode()
        self.send_response(reply.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", f"req_standin{next(_ids):06d}")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Response, request: RecordedRequest) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("x-request-id", f"req_standin{next(_ids):06d}")
        self.end_headers()
        rid = f"resp_standin{next(_ids):06d}"
        model = request.body.get("model")
        self._event({"type": "response.created", "response": {"id": rid, "object": "response", "model": model,
                                                               "status": "in_progress", "output": []}})
        for i, item in enumerate(reply.items):
            message = item.get("type") == "message"
            added = {**item, "content": [], "status": "in_progress"} if message else dict(item)
            self._event({"type": "response.output_item.added", "output_index": i, "item": added})
            if message:
                text = "".join(c.get("text", "") for c in item["content"])
                self._event({"type": "response.output_text.delta", "item_id": item["id"], "output_index": i,
                             "content_index": 0, "delta": text})
            self._event({"type": "response.output_item.done", "output_index": i, "item": dict(item)})
        if reply.failed is not None:
            self._event({"type": "response.failed", "response": {"id": rid, "object": "response", "model": model,
                                                                 "status": "failed", "error": dict(reply.failed)}})
        else:
            self._event({"type": "response.completed",
                         "response": {"id": rid, "object": "response", "model": model, "status": "completed",
                                      "output": [dict(i) for i in reply.items], "usage": _usage(reply.usage)}})
        self._chunk(b"")

    def _event(self, data: Mapping[str, Any]) -> None:
        self._chunk(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


ResponsesStandin.handler = _Handler
