"""A stand-in for lean-lsp-mcp over stdio, built with the `mcp` SDK, for the calls that need a real Lean.

It lists the tools real lean-lsp-mcp 0.32.0 lists (`tests/data/lean_lsp/tools.json`: names, descriptions, input
schemas; the data directory is its argument, for the sandbox shows only the paths a command names), minus those
`LEAN_MCP_DISABLED_TOOLS` names, as the real server does. It answers:

- a tool with a `file_path` naming no file of the project `LEAN_PROJECT_PATH`: the real server's error;
- `lean_local_search`: the project's declarations whose name holds the query, in the real result's shape (the real
  server greps the sources with ripgrep the same way);
- `lean_goal`, `lean_diagnostic_messages`, `lean_multi_attempt`, `lean_hover_info`, `lean_loogle`, `lean_run_code`:
  the real outputs recorded in `tests/data/lean_lsp/` (sources in `tests/data/SOURCES.md`);
- anything else: an error saying it has no recorded answer.

For the client's failure paths: `STANDIN_LSP_DIE=<tool>` makes a call of that tool end the process, and
`STANDIN_LSP_HANG=<tool>` makes it never answer; `STANDIN_LSP_HUGE=<n>` makes `lean_run_code` answer n characters,
and `lean_run_code` of `#print_env` answers the server's environment (what `IO.getEnv` in Worker code could read).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

DATA = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "data" / "lean_lsp")
RECORDED = ("lean_goal", "lean_diagnostic_messages", "lean_multi_attempt", "lean_hover_info", "lean_loogle",
            "lean_run_code")
DECLARATION = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*"
                         r"(theorem|lemma|def|abbrev|structure|class|instance|inductive)\s+([^\s(:{\[]+)", re.M)

project = Path(os.environ.get("LEAN_PROJECT_PATH", "")).resolve()
if not os.environ.get("LEAN_PROJECT_PATH") or not (project / "lean-toolchain").is_file():
    print(f"LEAN_PROJECT_PATH is not a Lean project: {project}", file=sys.stderr)
    sys.exit(2)
disabled = {n.strip() for n in os.environ.get("LEAN_MCP_DISABLED_TOOLS", "").split(",") if n.strip()}
catalog = [t for t in json.loads((DATA / "tools.json").read_text(encoding="utf-8")) if t["name"] not in disabled]


def text(body: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=body)], is_error=error)


def local_search(query: str, limit: int = 10) -> str:
    items = []
    for path in sorted(project.rglob("*.lean")):
        if ".lake" in path.parts:
            continue
        for kind, name in DECLARATION.findall(path.read_text(encoding="utf-8", errors="replace")):
            if query.lower() in name.lower():
                items.append({"name": name, "kind": kind, "file": path.relative_to(project).as_posix()})
    return json.dumps({"items": items[:limit], "index": "unavailable"}, ensure_ascii=False)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name=t["name"], description=t["description"],
                                                   input_schema=t["inputSchema"]) for t in catalog])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, arguments = params.name, params.arguments or {}
    if name not in {t["name"] for t in catalog}:
        return text(f"Unknown tool: {name}", True)
    if os.environ.get("STANDIN_LSP_DIE") == name:
        os._exit(1)
    if os.environ.get("STANDIN_LSP_HANG") == name:  # busy, as Lean elaborating a long file: the rest still answers
        await anyio.sleep_forever()
    file_path = arguments.get("file_path")
    if file_path is not None and not (project / str(file_path)).is_file():
        return text(f"Error executing tool {name}: Invalid Lean file path: {file_path!r} not found in any Lean "
                    "project (no lean-toolchain ancestor or file does not exist)", True)
    if name == "lean_local_search":
        return text(local_search(str(arguments.get("query", "")), int(arguments.get("limit", 10))))
    if name == "lean_run_code" and arguments.get("code") == "#print_env":  # what Lean code could read: IO.getEnv
        return text(json.dumps(dict(os.environ)))
    if name == "lean_run_code" and os.environ.get("STANDIN_LSP_HUGE"):
        return text("x" * int(os.environ["STANDIN_LSP_HUGE"]))
    if name in RECORDED:
        return text((DATA / f"{name}.txt").read_text(encoding="utf-8"))
    return text(f"Error executing tool {name}: the stand-in has no recorded answer", True)


async def main() -> None:
    server: Server[Any] = Server("Lean LSP", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
