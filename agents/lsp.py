"""Lean's language server for the Worker: lean-lsp-mcp, reached as an MCP client over stdio.

With `[agents.worker] lean_tools = "lean-lsp-mcp"` an API-backed Worker gets
the server's tools (goals, hovers, diagnostics, multi-attempt, local search)
beside its own, under the server's names, descriptions and input schemas.
The server runs `lake serve`, which elaborates code the Worker wrote, so its
command reaches this module already wrapped by `Sandbox.wrap` (its `.lake`
read-only: it lives through the gates' compiles); its environment is the
sandbox's allowlist, never a credential.

The SDK is asynchronous and the session is not: one event loop in a thread of
its own (an anyio blocking portal) holds the connection for the whole session,
so the Lean server stays warm between calls.

Every call is bounded: `timeout_s` (then the caller stops waiting, whatever
the loop does) and `output_chars`; whatever goes wrong comes back as the
tool's error, never as an exception. A server that dies (a call fails and it
no longer answers a listing of its tools) is restarted once; when it dies again, or cannot be
restarted, it is dropped and the session goes on with the builtin tools.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib.util
import json
import sys
import tempfile
import threading
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TextIO, cast

import anyio
import structlog
from anyio.from_thread import BlockingPortal, start_blocking_portal

from agents.model import ToolSpec
from state.errors import InfraError

log = structlog.get_logger()

SERVER = "lean_lsp"
"""The server's name for a claude-code session: its tools are `mcp__lean_lsp__<tool>`."""
NETWORK = frozenset({"lean_leansearch", "lean_loogle", "lean_leanfinder", "lean_hammer_premise",
                     "lean_state_search"})
"""lean-lsp-mcp's tools that call web services (the sandbox has no network): never offered by default."""
DEFAULT_TOOLS = ("lean_goal", "lean_term_goal", "lean_diagnostic_messages", "lean_hover_info", "lean_completions",
                 "lean_file_outline", "lean_declaration_file", "lean_references", "lean_local_search",
                 "lean_multi_attempt", "lean_code_actions", "lean_verify", "lean_run_code")
"""The tools offered unless configured otherwise: those that need only the project and its toolchain
(`lean_build` writes the build outputs, which the server may not)."""
ALIVE_S = 10.0
GRACE_S = 5.0  # beyond a bound, for the loop to deliver its own timeout before the caller stops waiting
STDERR_TAIL = 1500


GUIDE = (
    ({"lean_goal", "lean_term_goal"}, "ask for the goal at a line ({}) before and after a tactic rather than compiling "
     "the whole file"),
    ({"lean_multi_attempt"}, "when unsure which tactic closes a goal, try several at one position in one call ({})"),
    ({"lean_local_search", "lean_loogle", "lean_leansearch", "lean_leanfinder"},
     "search for a lemma ({}) before writing one or guessing its name"),
    ({"lean_hover_info"}, "hover a term ({}) to see its type and documentation"),
    ({"lean_diagnostic_messages"}, "read one file's errors and warnings ({}) as the language server sees them"),
)


def guide(names: Collection[str], prefix: str = "") -> str:
    """The Worker prompt's bullet on the Lean server's tools `names` (as the model calls them: `prefix` + name), or
    nothing without them."""
    if not names:
        return ""
    uses = []
    for tools, text in GUIDE:
        present = [f"`{prefix}{n}`" for n in sorted(tools & set(names))]
        if present:
            uses.append(text.format(", ".join(present)))
    how = "; ".join(uses)
    return ("- Lean's language server answers as an editor would, on the files as they are on disk: "
            + (f"{how}. " if how else "")
            + "Its tools bound their time and output; one that fails says why. Compiling the file stays the verdict "
              "the gates share: check every changed file so before finishing.\n")


def command(configured: Sequence[str]) -> list[str]:
    """The server's command: the configured one, else this Python's `lean_lsp_mcp` module, else `lean-lsp-mcp`."""
    if configured:
        return list(configured)
    if importlib.util.find_spec("lean_lsp_mcp") is not None:
        return [sys.executable, "-m", "lean_lsp_mcp"]
    return ["lean-lsp-mcp"]


def environment(root: Path, allow: Collection[str], output_chars: int) -> dict[str, str]:
    """The server's own variables: the project, quiet logs, its per-field output bound, and the tools that would
    reach the network or write build outputs switched off in the server itself unless allowed."""
    off = sorted((NETWORK | {"lean_build"}) - set(allow))
    return {"LEAN_PROJECT_PATH": str(root.resolve()), "LEAN_LOG_LEVEL": "WARNING",
            "LEAN_MCP_MAX_OUTPUT_CHARS": str(output_chars), "LEAN_MCP_DISABLED_TOOLS": ",".join(off)}


class Unavailable(InfraError):
    """The server could not be started or listed no tools."""


class LeanServer:
    """One lean-lsp-mcp process for a Worker session; see the module docstring."""

    def __init__(self, argv: Sequence[str], cwd: Path, *, allow: Collection[str] = DEFAULT_TOOLS,
                 timeout_s: float = 300.0, output_chars: int = 20_000, start_s: float = 60.0,
                 reserved: Collection[str] = ()) -> None:
        """`argv`: the server's command, sandboxed; `allow`: the tool names it may offer; `reserved`: names the
        builtin tools hold (a server tool of the same name is not offered)."""
        self.argv = list(argv)
        self.cwd = cwd
        self.allow = frozenset(allow)
        self.reserved = frozenset(reserved)
        self.timeout_s = timeout_s
        self.output_chars = output_chars
        self.start_s = start_s
        self.specs: list[ToolSpec] = []  # what the model is offered; empty once the server is dropped
        self.offered: set[str] = set()  # every name it was ever offered: a call to one after a drop says why
        self.deaths = 0
        self.dropped: str | None = None  # why the server is gone for good
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._task: concurrent.futures.Future[None] | None = None
        self._client: Any = None
        self._closing: anyio.Event | None = None
        self._stderr: TextIO | None = None
        self._lock = threading.Lock()  # one call at a time: a restart must not race another call

    @property
    def names(self) -> set[str]:
        return {s.name for s in self.specs}

    # -- lifetime --------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the server, shake hands and list its tools; `Unavailable` says why not."""
        # The server's stderr, for the tail a failure shows; it lives as long as the server (closed in `_stop`).
        self._stderr = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # noqa: SIM115
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._task = self._portal.start_task_soon(self._hold, ready)
        try:
            listing = ready.result(timeout=self.start_s)
        except concurrent.futures.TimeoutError:
            self._stop()
            raise Unavailable(f"lean-lsp-mcp did not answer within {self.start_s:.0f}s of starting{self._tail()}"
                              ) from None
        except Exception as e:
            tail = self._tail()
            self._stop()
            raise Unavailable(f"lean-lsp-mcp could not be started ({_describe(e)}){tail}") from e
        self.specs = self._offered(listing.tools)
        self.offered |= self.names
        if not self.specs:
            self._stop()
            raise Unavailable(f"lean-lsp-mcp offers none of the allowed tools ({', '.join(sorted(self.allow))}); "
                              f"it lists {', '.join(t.name for t in listing.tools) or 'none'}")
        log.info("lsp.started", tools=sorted(self.names))

    async def _hold(self, ready: concurrent.futures.Future[Any]) -> None:
        """The connection's one task: open, list, wait for `close`, close (the SDK ends the process)."""
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], cwd=str(self.cwd))
        try:
            assert self._stderr is not None
            transport = _stdio(params, self._stderr)
            async with Client(transport) as client:
                listing = await client.list_tools()
                self._client, self._closing = client, anyio.Event()
                ready.set_result(listing)
                await self._closing.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else InfraError(type(e).__name__))
            if not isinstance(e, Exception):
                raise
            log.info("lsp.connection_ended", error=_describe(e))

    def close(self) -> None:
        """End the server (idempotent)."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        portal, closing = self._portal, self._closing
        if portal is not None:
            try:
                if closing is not None:
                    portal.call(closing.set)
                if self._task is not None:
                    try:  # the SDK's shutdown is bounded (stdin closed, then the process tree killed)
                        self._task.result(timeout=15)
                    except Exception:
                        self._task.cancel()
            except Exception as e:  # closing must not fail
                log.warning("lsp.close_failed", error=_describe(e))
            finally:
                with contextlib.suppress(Exception):  # no task of a call left behind may keep the loop alive
                    portal.call(portal.stop, True)
                assert self._portal_cm is not None
                self._portal_cm.__exit__(None, None, None)
        if self._stderr is not None:
            self._stderr.close()
        self._portal = self._portal_cm = self._task = self._client = self._closing = self._stderr = None

    # -- calls -----------------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The tool's result as text and whether it is an error; never raises."""
        with self._lock:
            if self.dropped is not None:
                return f"{name} is gone: {self.dropped}; use lean_check and the other builtin tools", True
            if name not in self.names:
                return f"{name} is not one of the Lean server's tools here", True
            try:
                result = self._run(self._client.call_tool(name, arguments), self.timeout_s)
            except TimeoutError:
                if self._alive():
                    return (f"{name} did not answer within {self.timeout_s:.0f}s; try a smaller question, or "
                            "lean_check"), True
                return self._died(name, "it stopped answering")
            except Exception as e:
                if self._alive():
                    return f"{name} failed: {_describe(e)}", True
                return self._died(name, _describe(e))
            return self._text(result), bool(result.is_error)

    def _run(self, coroutine: Any, bound: float) -> Any:
        """Await `coroutine` on the loop, within `bound` seconds (a wedged loop too)."""
        if self._portal is None or self._client is None:
            coroutine.close()
            raise InfraError("the connection is closed")

        async def bounded() -> Any:
            with anyio.fail_after(bound):
                return await coroutine

        future = self._portal.start_task_soon(bounded)
        try:
            return future.result(timeout=bound + GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    def _alive(self) -> bool:
        if self._task is None or self._task.done():
            return False
        try:
            # Listing the tools, not a ping: the 2026 protocol removed ping, and a listing is as cheap.
            self._run(self._client.list_tools(cache_mode="bypass"), ALIVE_S)
        except Exception:
            return False
        return True

    def _died(self, name: str, why: str) -> tuple[str, bool]:
        self.deaths += 1
        tail = self._tail()
        log.warning("lsp.died", tool=name, deaths=self.deaths, error=why[:300], stderr=tail[-500:])
        self._stop()
        if self.deaths == 1:
            try:
                self.start()
            except Unavailable as e:
                return self._drop(f"the Lean server died during {name} and could not be restarted: {e}")
            return (f"the Lean server died during {name} ({why}); it was restarted: call again, differently if "
                    "this call is what killed it"), True
        return self._drop(f"the Lean server died twice, last during {name} ({why})")

    def _drop(self, why: str) -> tuple[str, bool]:
        self.dropped, self.specs = why, []
        log.warning("lsp.dropped", reason=why[:500])
        return f"{why}; its tools are gone for this session: use lean_check and the other builtin tools", True

    # -- shapes ----------------------------------------------------------------------------------

    def _offered(self, tools: list[Any]) -> list[ToolSpec]:
        out = []
        for tool in tools:
            if tool.name in self.reserved:
                log.warning("lsp.tool_shadowed", tool=tool.name)
            elif tool.name in self.allow:
                out.append(ToolSpec(tool.name, tool.description or tool.title or tool.name, dict(tool.input_schema)))
        missing = self.allow - {t.name for t in tools}
        if missing:
            log.info("lsp.tools_not_listed", tools=sorted(missing))
        return out

    def _text(self, result: Any) -> str:
        parts = []
        for block in result.content:
            text = getattr(block, "text", None)
            parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')} omitted]")
        if not any(parts) and result.structured_content is not None:
            parts = [json.dumps(result.structured_content, ensure_ascii=False)]
        text = "\n".join(parts) or "(no output)"
        if len(text) > self.output_chars:
            return f"{text[:self.output_chars]}\n[… cut at {self.output_chars} of {len(text)} characters]"
        return text

    def _tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, 2)
            self._stderr.seek(max(0, size - 4 * STDERR_TAIL))
            text = self._stderr.read()[-STDERR_TAIL:].strip()
        except (OSError, ValueError):
            return ""
        return f"; its stderr ends: {text}" if text else ""


def _stdio(params: Any, errlog: TextIO) -> Any:
    """The SDK's stdio transport, the server's stderr to `errlog` (a file: the SDK hands it to the process)."""
    from mcp.client.stdio import stdio_client

    return stdio_client(params, errlog=errlog)


def _describe(e: BaseException) -> str:
    """An exception in one line, an exception group by its first leaf."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return f"{type(e).__name__}: {e}"[:500]
