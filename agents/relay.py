"""A relay between a coding agent's confined process and the commands the product runs for it.

A coding agent (Claude Code, Codex CLI) runs in a sandbox of its own (`gates.sandbox.Sandbox.engine`): it reaches
its model's API and writes the working copy, but sees nothing else. The code the Worker writes must still run in
the product's sandbox for such code (no network, no credential), which cannot be started from inside the engine's
(bubblewrap cannot mount a fresh /proc nested in another bubblewrap's). So the product starts those processes itself,
outside, and the engine reaches them through a Unix socket in its own private directory:

- `mcp NAME`: a command-line MCP server (lean-lsp-mcp, say), started confined by the product; the engine's MCP
  entry for it is this file's client, which pipes the server's stdin and stdout through the socket;
- `run COMMAND`: one shell command (a claude-code Worker's allowed Bash), run confined by the product; its output
  streams back and the client exits with its status. Killing the client (the engine's own timeout or interruption)
  ends the command.

Each request carries the relay's token. This file is also the client: run by path with the engine's Python
(`python -I relay.py SOCKET TOKEN mcp NAME` or `… run COMMAND`), it imports the standard library only.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

HEADER_BYTES = 1 << 16
HEADER_S = 30.0
MAX_CONNECTIONS = 64
CHUNK = 1 << 16
_FRAME = struct.Struct("!cI")  # kind (b"o" output, b"x" exit status), payload length
EXIT_UNRESOLVED = 126  # what `sh` answers for a command it cannot run
CLIENT = Path(__file__).resolve()
"""This file, which is also the client an engine runs."""

Resolve = Callable[[dict[str, Any]], list[str]]
"""The confined command for a request (`{"kind": "mcp", "name": …}` or `{"kind": "run", "command": …}`); raises
`ValueError` with the reason to refuse it."""


class Relay:
    """The product's side: a Unix socket whose requests start confined processes (see the module docstring)."""

    def __init__(self, path: Path, token: str, resolve: Resolve, *, on_error: Callable[[str], None] = print) -> None:
        self.path = path
        self.token = token
        self.resolve = resolve
        self.on_error = on_error
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        os.chmod(path, 0o666)  # the engine may run as another user inside its sandbox
        self._server.listen(16)
        self._children: set[subprocess.Popen[bytes]] = set()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name="relay", daemon=True).start()

    def client(self, *args: str) -> list[str]:
        """The command an engine runs to reach this relay: `client("mcp", name)` or `client("run", command)`."""
        return [sys.executable, "-I", str(CLIENT), str(self.path), self.token, *args]

    def close(self) -> None:
        """Stop accepting and end every process started (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            children, connections = list(self._children), list(self._connections)
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        for child in children:
            _kill(child)
        for conn in connections:  # an idle client, too, learns at once that the relay is gone
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self.path.unlink(missing_ok=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                if len(self._connections) >= MAX_CONNECTIONS:  # more than any engine opens: refused
                    conn.close()
                    continue
                self._connections.add(conn)
            threading.Thread(target=self._guarded, args=(conn,), name="relay-conn", daemon=True).start()

    def _guarded(self, conn: socket.socket) -> None:
        try:
            self._serve(conn)
        except Exception as e:  # one connection's failure is said, never the relay's end
            self.on_error(f"relay: a connection failed: {type(e).__name__}: {e}")
        finally:
            with self._lock:
                self._connections.discard(conn)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                request, rest = self._header(conn)
            except (ValueError, UnicodeDecodeError, RecursionError, OSError) as e:
                self.on_error(f"relay: refused a connection: {type(e).__name__}: {str(e)[:200]}")
                return
            kind = request["kind"]
            try:
                argv = self.resolve(request)
                child = subprocess.Popen(argv, stdin=subprocess.PIPE if kind == "mcp" else subprocess.DEVNULL,
                                         stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE if kind == "mcp" else subprocess.STDOUT,
                                         start_new_session=True)
            except (ValueError, OSError) as e:
                self.on_error(f"relay: refused {kind} {request.get('name') or request.get('command')!r}: {e}")
                if kind == "run":
                    _frame(conn, b"o", f"refused: {e}\n".encode())
                    _frame(conn, b"x", struct.pack("!i", EXIT_UNRESOLVED))
                return
            with self._lock:
                if self._closed:
                    _kill(child)
                    return
                self._children.add(child)
            try:
                if kind == "mcp":
                    self._pipe(conn, child, rest)
                else:
                    self._run(conn, child)
            finally:
                _kill(child)
                with self._lock:
                    self._children.discard(child)

    def _header(self, conn: socket.socket) -> tuple[dict[str, Any], bytes]:
        """The request, and what the client sent after it (an MCP server's first input)."""
        conn.settimeout(HEADER_S)  # a client that says nothing is let go
        data = b""
        while b"\n" not in data:
            chunk = conn.recv(CHUNK)
            if not chunk or len(data) > HEADER_BYTES:
                raise ValueError("no request header")
            data += chunk
        line, _, rest = data.partition(b"\n")
        try:
            request = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"an unreadable request header ({e})") from None
        token = str(request.get("token", "")).encode() if isinstance(request, dict) else b""
        if not hmac.compare_digest(token, self.token.encode()):
            raise ValueError("a request without this relay's token")
        if request.get("kind") not in ("mcp", "run"):
            raise ValueError(f"unknown kind {request.get('kind')!r}")
        conn.settimeout(None)
        return request, rest

    def _pipe(self, conn: socket.socket, child: subprocess.Popen[bytes], first: bytes) -> None:
        """The MCP server's stdin and stdout through the connection, until either side ends."""
        assert child.stdin is not None and child.stdout is not None and child.stderr is not None
        stdin, stdout, stderr = child.stdin, child.stdout, child.stderr

        def upstream() -> None:
            try:
                if first:
                    stdin.write(first)
                    stdin.flush()
                while chunk := conn.recv(CHUNK):
                    stdin.write(chunk)
                    stdin.flush()
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    stdin.close()

        def errors() -> None:
            for line in stderr:
                self.on_error(f"relay: {line.decode(errors='replace').rstrip()}")

        threading.Thread(target=upstream, daemon=True).start()
        threading.Thread(target=errors, daemon=True).start()
        try:
            while chunk := os.read(stdout.fileno(), CHUNK):
                conn.sendall(chunk)
        except OSError:
            pass

    def _run(self, conn: socket.socket, child: subprocess.Popen[bytes]) -> None:
        """The command's output as frames, then its exit status; a closed connection ends it."""
        assert child.stdout is not None
        gone = threading.Event()

        def watch() -> None:  # the client was killed: end the command at once
            try:
                while conn.recv(CHUNK):
                    pass
            except OSError:
                pass
            gone.set()
            _kill(child)

        threading.Thread(target=watch, daemon=True).start()
        try:
            while chunk := os.read(child.stdout.fileno(), CHUNK):
                _frame(conn, b"o", chunk)
            status = child.wait()
            if not gone.is_set():
                _frame(conn, b"x", struct.pack("!i", status if status >= 0 else 128 - status))
        except OSError:
            pass


def _frame(conn: socket.socket, kind: bytes, payload: bytes) -> None:
    conn.sendall(_FRAME.pack(kind, len(payload)) + payload)


def _kill(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            child.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=5)


# --- the client, inside the engine's sandbox ------------------------------------------------------------------------


def _connect(path: str, request: dict[str, Any]) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    conn.sendall(json.dumps(request).encode() + b"\n")
    return conn


def _client_mcp(conn: socket.socket) -> int:
    def upstream() -> None:
        try:
            while chunk := os.read(0, CHUNK):
                conn.sendall(chunk)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, daemon=True).start()
    while chunk := conn.recv(CHUNK):
        os.write(1, chunk)
    return 0


def _client_run(conn: socket.socket) -> int:
    buffer = b""
    while True:
        chunk = conn.recv(CHUNK)
        if not chunk:
            return EXIT_UNRESOLVED  # the relay went away before the command ended
        buffer += chunk
        while len(buffer) >= _FRAME.size:
            kind, size = _FRAME.unpack_from(buffer)
            if len(buffer) < _FRAME.size + size:
                break
            payload, buffer = buffer[_FRAME.size:_FRAME.size + size], buffer[_FRAME.size + size:]
            if kind == b"x":
                return int(struct.unpack("!i", payload)[0])
            os.write(1, payload)


def main(argv: list[str]) -> int:
    """`relay.py SOCKET TOKEN mcp NAME` or `relay.py SOCKET TOKEN run COMMAND`."""
    if len(argv) < 4 or argv[2] not in ("mcp", "run"):
        print("usage: relay.py SOCKET TOKEN (mcp NAME | run COMMAND)", file=sys.stderr)
        return 2
    path, token, kind, rest = argv[0], argv[1], argv[2], argv[3:]
    request = {"token": token, "kind": kind, "name" if kind == "mcp" else "command": " ".join(rest)}
    try:
        conn = _connect(path, request)
    except OSError as e:
        print(f"the relay at {path} cannot be reached: {e}", file=sys.stderr)
        return EXIT_UNRESOLVED
    with conn:
        return _client_mcp(conn) if kind == "mcp" else _client_run(conn)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
