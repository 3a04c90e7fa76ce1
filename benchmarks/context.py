"""A long Worker session against a model with a context window: what each turn sends, and how much of it the
prompt cache serves.

    python benchmarks/context.py                  # 300 turns through a 200,000-token window
    python benchmarks/context.py --turns 100

The session reads a 50,000-character file every turn. It runs against the scripted Anthropic endpoint of the
tests, which refuses a request longer than the window as the API does and counts each request's usage as the
prompt cache would (the blocks up to the last cache breakpoint that repeat the previous request's are read
from the cache). "Before" keeps every tool result whole and never clears or summarizes, as the Worker did
before its context was managed: it is refused once it outgrows the window. "After" is the default: results
cut at 20,000 characters, old ones cleared past 60% of the window, the session summarized past 80%.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import structlog

from agents.backends.anthropic import AnthropicModel
from agents.model import ContextTooLong, Message, Model, ModelRejected, Reply, System, ToolSpec
from agents.tools import Workspace
from agents.worker import Limits, WorkerSession
from gates.build import LakeCompiler
from gates.config import BuildConfig, SandboxConfig
from gates.sandbox import Sandbox
from tests.standin.anthropic_server import AnthropicStandin, RecordedRequest, text_reply, tool_use_reply
from tests.standin.anthropic_server import Reply as Answer

KEY = "sk-ant-benchmark"
WINDOW = 200_000
LINE = "-- " + "x" * 96 + "\n"


@dataclass
class Unmanaged:
    """A model whose refusal for length reads as any refusal: the session cannot summarize its way out."""

    model: AnthropicModel

    @property
    def name(self) -> str:
        return self.model.name

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        try:
            return self.model.send(system, messages, tools, max_tokens=max_tokens)
        except ContextTooLong as e:
            raise ModelRejected(str(e)) from e


def session(turns: int, limits: Limits, managed: bool) -> tuple[WorkerSession, str]:
    root = Path(tempfile.mkdtemp())
    (root / "Book").mkdir()
    (root / "Book" / "Big.lean").write_text(LINE * 500)
    compiler = LakeCompiler(root, BuildConfig(check_file="true {file}"), Sandbox(SandboxConfig(mode="none")))
    workspace = Workspace(root, ["Book/*.lean"], [], ".prover-state", ["Book"], compiler)
    done = [0]

    def answer(request: RecordedRequest) -> Answer:
        if request.body["system"][0]["text"].startswith("You summarize"):
            return text_reply("Goal: read Book/Big.lean. Done: read it. Open: read it again. " * 20)
        done[0] += 1
        return tool_use_reply([("read_file", {"path": "Book/Big.lean"})] if done[0] <= turns
                              else [("finish", {"report": "done"})])

    with AnthropicStandin(api_key=KEY, window=WINDOW) as server:
        for _ in range(2 * turns + 10):
            server.enqueue(answer)
        model = AnthropicModel("claude-opus-4-6", 60, api_key=KEY, base_url=server.base_url)
        chosen: Model = model if managed else Unmanaged(model)
        s = WorkerSession(chosen, workspace, "rules", limits)
        stop = s.run("Read Book/Big.lean again and again.").stop.value
    return s, stop


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    print(f"{args.turns} turns, each reading 50,000 characters, through a {WINDOW:,}-token window")
    print(f"{'':16} {'stop':>9} {'turns':>6} {'sent/turn':>10} {'peak':>9} {'cached':>7} {'clears':>7} "
          f"{'summaries':>9}")
    whole = Limits(2 * args.turns, 1e9, window=10**9, result_chars=10**9)
    for name, limits, managed in (("nothing managed", whole, False), ("summaries only", whole, True),
                                  ("managed", Limits(2 * args.turns, 1e9, window=WINDOW), True)):
        s, stop = session(args.turns, limits, managed)
        u = s.usage
        sent = u.input + u.cache_read + u.cache_write
        print(f"{name:16} {stop:>9} {s.turns:>6} {sent // max(s.turns, 1):>10,} {s.context.peak_input:>9,} "
              f"{u.cache_read / sent:>7.0%} {s.context.clears:>7} {s.context.compactions:>9}")


if __name__ == "__main__":
    main()
