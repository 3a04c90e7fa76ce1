"""A stand-in webhook receiver: a real HTTP server on 127.0.0.1 that keeps every POST.

`status` sets what it answers (a chat service that is down answers 5xx), so a
test can check an alert that cannot be delivered is logged and never fatal.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Post:
    path: str
    content_type: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Webhook:
    def __init__(self) -> None:
        self.posts: list[Post] = []
        self.status = 204
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                hook.posts.append(Post(self.path, self.headers.get("Content-Type", ""), body))
                self.send_response(hook.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hooks/T0-secret-token"

    def texts(self) -> list[str]:
        """Each post's line, whatever the format it was sent in."""
        out = []
        for p in self.posts:
            if p.content_type.startswith("application/json"):
                body = p.json()
                out.append(body.get("text") or body.get("content") or "")
            else:
                out.append(p.body.decode())
        return out

    def __enter__(self) -> Webhook:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
