"""Keeping a Worker session inside its model's context window, in the order that keeps prompt caching best.

1. Each tool result is cut as it arrives (`trim`), saying how to read the rest.
2. Near the window, old tool results are replaced by a one-line stub naming the call (`clear`); the latest are
   kept whole. Everything before the first cleared result stays as it was, so its cached prefix still serves.
3. Failing that, the session so far is summarized by one model call from a bounded transcript (`transcript`),
   and the session goes on from its opening message, that summary and its last turn. The transcript carries no
   fence's nonce (`context.unfenced`): the summary, written from files and results a Worker may have written,
   could otherwise close a fence; and the summary comes back fenced as data under a nonce of its own
   (`summarized`), so nothing it repeats passes for the orchestrator's words.
"""

from __future__ import annotations

import json

from agents.context import NONCE, Quote, fence, new_nonce, preamble, unfenced
from agents.model import Message, ToolCall, ToolResult

CHARS_PER_TOKEN = 4  # for estimates between the counts the API returns
CLEAR_AT = 0.6  # share of the window at which old tool results are cleared
COMPACT_AT = 0.8  # share of the window that, still reached after clearing, calls for a summary
STUB = "[cleared to keep the session inside the context window: the result of {call}; call it again if needed]"
SUMMARY_RESULT_CHARS = 1_500  # of each tool result, in the transcript a summary is written from
SUMMARIZER = "a summarizer, from this session's transcript (the files and results it read included)"


def tokens(messages: list[Message]) -> int:
    """An estimate of what `messages` weigh, in tokens."""
    return sum(len(m.text) + sum(len(r.content) for r in m.tool_results)
               + sum(len(json.dumps(c.arguments)) for c in m.tool_calls) for m in messages) // CHARS_PER_TOKEN


def trim(result: ToolResult, limit: int) -> tuple[ToolResult, bool]:
    """`result` cut at `limit` characters, with how to read the rest; and whether it was cut."""
    if len(result.content) <= limit:
        return result, False
    rest = len(result.content) - limit
    note = (f"\n… [cut here: {rest:,} more characters. Read a file in parts with read_file's start_line and "
            "end_line, or find what you need with search or read_declaration.]")
    return ToolResult(result.call_id, result.content[:limit] + note, result.is_error), True


def clear(messages: list[Message], keep: int) -> tuple[list[Message], int]:
    """`messages` with every tool result but the last `keep` replaced by a stub; and how many were replaced."""
    calls = {c.id: c for m in messages for c in m.tool_calls}
    positions = [(i, j) for i, m in enumerate(messages) for j, _ in enumerate(m.tool_results)]
    old = {p for p in positions[:max(0, len(positions) - keep)]
           if not messages[p[0]].tool_results[p[1]].content.startswith(STUB[:20])}
    if not old:
        return messages, 0
    out = []
    for i, m in enumerate(messages):
        if any((i, j) in old for j in range(len(m.tool_results))):
            results = tuple(ToolResult(r.call_id, STUB.format(call=_named(calls.get(r.call_id))), r.is_error)
                            if (i, j) in old else r for j, r in enumerate(m.tool_results))
            m = Message(m.role, m.text, m.tool_calls, results)
        out.append(m)
    return out, len(old)


def _named(call: ToolCall | None) -> str:
    if call is None:
        return "a tool call"
    args = ", ".join(f"{k}={json.dumps(v)[:80]}" for k, v in call.arguments.items())
    return f"{call.name}({args})"


def transcript(messages: list[Message], limit: int) -> str:
    """The session as text for its summary: each tool result shortened, the oldest part dropped past `limit`
    characters (the opening message, which the session keeps anyway, first of all), no nonce of any fence in the
    session left in it."""
    calls = {c.id: c for m in messages for c in m.tool_calls}
    parts = []
    for m in messages[1:]:
        if m.role == "assistant":
            said = m.text.strip()
            parts.append("WORKER: " + " ".join([said, *(f"→ {_named(c)}" for c in m.tool_calls)]).strip())
        else:
            for r in m.tool_results:
                text = r.content if len(r.content) <= SUMMARY_RESULT_CHARS else \
                    r.content[:SUMMARY_RESULT_CHARS] + " … [shortened]"
                parts.append(f"RESULT of {_named(calls.get(r.call_id))}{' (error)' if r.is_error else ''}:\n{text}")
            if m.text.strip():
                parts.append(f"ORCHESTRATOR: {m.text.strip()}")
    every = [m.text for m in messages] + [r.content for m in messages for r in m.tool_results]
    text = unfenced("\n\n".join(parts), (n.group(2) for t in every for n in NONCE.finditer(t)))
    return text if len(text) <= limit else "… [the oldest part left out]\n\n" + text[-limit:]


def summarized(summary: str) -> str:
    """The summary as the session's next message shows it: data, fenced under a nonce drawn after it was written."""
    nonce = new_nonce()
    return f"{preamble(nonce)}\n\n{fence(Quote(SUMMARIZER, summary, 'a summary of your session so far'), nonce)}"
