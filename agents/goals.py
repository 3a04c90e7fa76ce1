"""The goals at a line of a tactic proof, as Lean prints them, for a Worker without lean-lsp-mcp (`lean_goal`).

A copy of the file gets `trace_state` between two `trace` markers before the tactic that starts on the line and after
it (a line ending in `by` or `=>`: at the start of the block it opens). Lean logs each as a trace of its own position
and prints them as bare information messages in the order of their positions (`addTraceAsMessages` in
`Lean.Elab.Command`), so the goals `trace_state` prints (`goalsToMessageData`; nothing for none) lie between a
point's two markers. A point whose markers Lean never printed was not reached: an earlier tactic failed, or the line
is not in a tactic block.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

# A line starting with one of these continues the tactic above it (`induction … with` then `| zero => …`, `<;>`, a
# closing bracket): the point after a tactic goes below them.
CONTINUES = re.compile(r"(?:\||<;>|[)\]}⟩]|_\s|(?:with|then|else|using|at|from|by)\b)")
INSERTED = 3  # lines at each point: a marker, `trace_state`, a marker
CONV = re.compile(r"(?:^|[\s(·;])conv\b.*=>$")  # a line opening a `conv` block


@dataclass(frozen=True)
class Point:
    """What the goals at a point are (`label`), and where its lines go: before line `at` (1-based; one past the last
    for the file's end), at `indent`."""

    label: str
    at: int
    indent: int


@dataclass(frozen=True)
class Marked:
    """The copy to check, what each point shows, and how to read the copy's line numbers as the file's."""

    text: str
    points: list[Point]
    tag: str

    def begin(self, k: int) -> str:
        return f"autoformalize goals {self.tag} {k}"

    def end(self, k: int) -> str:
        return f"autoformalize goals {self.tag} {k} end"

    def original(self, line: int) -> tuple[int, bool]:
        """A line of the copy as the file's line, and whether it is one of the inserted ones (then the line its
        point stands before)."""
        offset = 0
        for p in sorted(self.points, key=lambda p: p.at):
            start = p.at + offset
            if line < start:
                break
            if line < start + INSERTED:
                return p.at, True
            offset += INSERTED
        return line - offset, False


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def lean_lines(text: str) -> list[str]:
    """`text`'s lines as Lean numbers them: split at `\n` only (a `\r` before it is kept and harmless)."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def code_of(lines: list[str]) -> list[str]:
    """Each line with its comments blanked (`--` to the line's end, `/- … -/` nested and across lines)."""
    out, depth = [], 0
    for line in lines:
        chars, i = list(line), 0
        while i < len(line):
            if depth:
                if line.startswith("/-", i):
                    depth, chars[i:i + 2], i = depth + 1, "  ", i + 2
                elif line.startswith("-/", i):
                    depth, chars[i:i + 2], i = depth - 1, "  ", i + 2
                else:
                    chars[i], i = " ", i + 1
            elif line.startswith("/-", i):
                depth, chars[i:i + 2], i = 1, "  ", i + 2
            elif line.startswith("--", i):
                chars[i:] = " " * (len(line) - i)
                break
            elif line[i] == '"':  # a string: its `--` is no comment
                j = i + 1
                while j < len(line) and line[j] != '"':
                    j += 2 if line[j] == "\\" else 1
                i = j + 1
            else:
                i += 1
        out.append("".join(chars).rstrip())
    return out


def _in_conv(code: list[str], line: int) -> bool:
    """Whether `line` lies in a `conv` block (conv mode has `trace_state` but no `trace`), or opens one."""
    indent, n = _indent(code[line - 1]), line
    if CONV.search(code[line - 1]):
        return True
    while n > 1 and indent > 0:
        n -= 1
        if code[n - 1].strip() and _indent(code[n - 1]) < indent:
            if CONV.search(code[n - 1]):
                return True
            indent = _indent(code[n - 1])
    return False


def points(lines: list[str], line: int) -> list[Point]:
    """Where the goals before and after the tactic on `line` are asked; a ValueError says why a line has none."""
    if not 1 <= line <= len(lines):
        raise ValueError(f"line {line} is outside the file (1–{len(lines)})")
    code = code_of(lines)
    here = code[line - 1]
    if not here.strip():
        raise ValueError(f"line {line} is blank or a comment: give the line of a tactic")
    opens = re.search(r"(?:(?:^|[\s(])by|=>)$", here) is not None
    if _indent(here) == 0 and not opens:
        raise ValueError(f"line {line} starts a command: give a line of a tactic proof, below its `by`")
    above = next((code[n - 1] for n in range(line - 1, 0, -1) if code[n - 1].strip()), "")
    if (CONTINUES.match(here.lstrip()) and not opens) or above.endswith(":="):
        raise ValueError(f"line {line} continues the tactic or term above it: give the line where that tactic "
                         "starts")
    if _in_conv(code, line):
        raise ValueError(f"line {line} is in a `conv` block, where this tool cannot mark a place: give a line of "
                         "the tactic block around it")
    if opens:
        first = next((n for n in range(line + 1, len(lines) + 1) if code[n - 1].strip()), None)
        if first is None or _indent(code[first - 1]) <= _indent(here):
            raise ValueError(f"line {line} opens no block below it")
        return [Point(f"at the start of the block line {line} opens (line {first})", first,
                      _indent(code[first - 1]))]
    indent = _indent(here)
    # Any line, a comment too (a doc comment belongs to the declaration below it), may end the tactic.
    following = [n for n in range(line + 1, len(lines) + 1) if lines[n - 1].strip()]
    end = next((n for n in following if _indent(lines[n - 1]) < indent or (
        _indent(lines[n - 1]) == indent and not CONTINUES.match(code[n - 1].lstrip()))), len(lines) + 1)
    after = max(n for n in [line, *following] if n < end) + 1  # below the tactic's last line, above blank ones
    return [Point(f"before line {line}", line, indent), Point(f"after line {line}", after, indent)]


def marked(text: str, line: int, tag: str | None = None) -> Marked:
    """`text` with the markers and `trace_state` at the points of `line`; `tag` makes its markers its own (a fresh
    one by default, which no text of the file holds)."""
    lines = lean_lines(text)
    found = points(lines, line)
    tag = tag or secrets.token_hex(4)
    out = Marked("", found, tag)
    inserted = {p.at: k for k, p in enumerate(found)}
    copy: list[str] = []
    for n in range(1, len(lines) + 2):
        if (k := inserted.get(n)) is not None:
            pad = " " * found[k].indent
            copy += [f'{pad}trace "{out.begin(k)}"', f"{pad}trace_state", f'{pad}trace "{out.end(k)}"']
        if n <= len(lines):
            copy.append(lines[n - 1])
    return Marked("\n".join(copy) + "\n", found, tag)


def read(output: str, marks: Marked) -> list[str | None]:
    """Each point's goals as Lean printed them ('' for none), or None where Lean never reached it. A place run more
    than once (under `all_goals`, `<;>`, `iterate`) prints its marker once a run, in one message, and the goals of
    every run one after another. A marker printed apart from those runs was printed by the file's own code: a
    ValueError says so rather than show goals that may be its."""
    lines = output.split("\n")
    shown: list[str | None] = []
    for k in range(len(marks.points)):
        begins = [i for i, raw in enumerate(lines) if raw == marks.begin(k)]
        if not begins:
            shown.append(None)
            continue
        runs = len(begins)
        ends = [i for i, raw in enumerate(lines) if raw == marks.end(k)]
        if begins[-1] - begins[0] != runs - 1 or len(ends) != runs or (ends and ends[-1] - ends[0] != runs - 1):
            raise ValueError("the file's own code printed this tool's markers: its goals are not shown")
        body = "\n".join(lines[begins[-1] + 1:ends[0]]).strip("\n")
        shown.append(f"(this place ran {runs} times: the goals of each run follow one another)\n{body}"
                     if runs > 1 else body)
    return shown
