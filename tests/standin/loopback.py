"""What the scripted API stand-ins share: a real HTTP server on 127.0.0.1 (an ephemeral port, a thread of its own)
answering each request from a FIFO script of replies, or of functions of the request returning one.

A stand-in subclasses `Scripted` with its request handler (`handler`, whose `server.standin` is the stand-in), the
thread's name, and the reply to a request the script has no answer for (`_ran_out`, counted in `ran_out`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Generic, Self, TypeVar

Request = TypeVar("Request")
Reply = TypeVar("Reply")


class Scripted(Generic[Request, Reply]):
    """The server. Start it with `with` (or `start()` / `close()`); script it with `enqueue`."""

    handler: ClassVar[type[BaseHTTPRequestHandler]]
    name: ClassVar[str]

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.ran_out = 0
        self._script: deque[Callable[[Request], Reply]] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------------------------------

    def start(self) -> Self:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler)
        httpd.daemon_threads = True  # a handler stalled on a delay must not hold up close()
        httpd.standin = self  # type: ignore[attr-defined]
        self._httpd = httpd
        # a short poll interval keeps close() quick: shutdown() waits for the serving loop to look up
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, name=self.name,
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # wakes handlers sleeping on a delay
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def root_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the stand-in is not started; use it as a context manager or call start()")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- script ----------------------------------------------------------------------------------------------------

    def enqueue(self, *replies: Callable[[Request], Reply] | Reply) -> None:
        """Queue replies, or functions of the request returning one."""
        with self._lock:
            self._script.extend(r if callable(r) else _constant(r) for r in replies)

    @property
    def pending(self) -> int:
        """Scripted responses not yet used."""
        with self._lock:
            return len(self._script)

    # --- inspection ------------------------------------------------------------------------------------------------

    @property
    def last(self) -> Request:
        if not self.requests:
            raise AssertionError("the stand-in has received no request")
        return self.requests[-1]

    @property
    def last_body(self) -> Any:
        return self.last.body  # type: ignore[attr-defined]

    # --- used by the handler ---------------------------------------------------------------------------------------

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _next(self, request: Request) -> Reply:
        with self._lock:
            if not self._script:
                self.ran_out += 1
                return self._ran_out(request, len(self.requests))
            responder = self._script.popleft()
        return responder(request)

    def _ran_out(self, request: Request, number: int) -> Reply:
        """The answer to request #`number`, which the script had none for."""
        raise NotImplementedError

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)


def _constant(reply: Any) -> Callable[[Any], Any]:
    return lambda _request: reply
