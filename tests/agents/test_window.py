"""A Worker session kept inside its context window: the parts of `agents/window.py` a summary is written from."""

from __future__ import annotations

from agents.model import Message, ToolCall, ToolResult
from agents.window import CHARS_PER_TOKEN, STUB, clear, tokens, transcript, trim


def _session(turns: int) -> list[Message]:
    out = [Message("user", "OPENING brief")]
    for k in range(turns):
        call = ToolCall(f"c{k}", "read_file", {"path": f"Book/F{k}.lean"})
        out += [Message("assistant", f"step {k}", (call,)),
                Message("user", tool_results=(ToolResult(call.id, f"R{k}"),))]
    return out


def test_a_cut_transcript_keeps_its_newest_part() -> None:
    # What the Worker did last is what the summary must carry on from; the opening message is kept anyway.
    messages = _session(60)
    whole = transcript(messages, 10**6)

    cut = transcript(messages, 600)

    assert cut.startswith("… [the oldest part left out]\n\n") and cut.endswith(whole[-600:])
    assert "RESULT of read_file(path=\"Book/F59.lean\"):\nR59" in cut and "step 59" in cut
    assert "step 0 " not in cut and "OPENING" not in whole
    assert len(cut) == 600 + len("… [the oldest part left out]\n\n")
    assert transcript(messages[:3], 600) == whole[:whole.index("\n\nWORKER: step 1")]  # short: whole


def test_old_results_are_cleared_and_the_newest_kept_whole() -> None:
    messages = _session(5)

    out, cleared = clear(messages, keep=2)

    results = [r.content for m in out for r in m.tool_results]
    assert cleared == 3 and results[3:] == ["R3", "R4"]
    assert results[0] == STUB.format(call='read_file(path="Book/F0.lean")')
    assert clear(out, keep=2) == (out, 0)  # stubs are not cleared again


def test_a_result_is_cut_at_its_limit_saying_how_to_read_the_rest() -> None:
    result = ToolResult("c", "x" * 50, is_error=True)

    cut, was = trim(result, 20)

    assert was and cut == ToolResult("c", "x" * 20 + "\n… [cut here: 30 more characters. Read a file in parts with "
                                     "read_file's start_line and end_line, or find what you need with search or "
                                     "read_declaration.]", True)
    assert trim(result, 50) == (result, False)


def test_a_session_weighs_its_texts_results_and_arguments() -> None:
    call = ToolCall("c", "read_file", {"path": "Book/A.lean"})  # arguments as JSON: 23 characters
    messages = [Message("assistant", "a" * 10, (call,)), Message("user", "", (), (ToolResult("c", "b" * 16),))]
    assert tokens(messages) == (10 + 23 + 16) // CHARS_PER_TOKEN == 12  # whole tokens
    assert tokens(messages[:1]) == 8
