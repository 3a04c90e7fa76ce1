"""The goals at a line of a tactic proof, as Lean prints them, for a Worker without lean-lsp-mcp (`lean_goal`).

A copy of the file gets `trace_state` between two `trace` markers before the tactic that starts on the line and after
it (a line ending in `by` or `=>`: at the start of the block it opens). Lean logs each as a trace of its own position
and prints them as bare information messages in the order of their positions
(`Lean.Elab.Command.addTraceAsMessages`), so
the goals `trace_state` prints (`goalsToMessageData`; nothing for none) lie between a point's two markers. A point
whose markers Lean never printed was not reached: an earlier tactic failed, or the line is not in a tactic block.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from gates.diagnostics import parse_diagnostics

# A line starting with one of these continues the tactic above it (`induction … with` then `| zero => …`, `<;>`, a
# closing bracket): the point after a tactic goes below them.
CONTINUES = re.compile(r"(?:\||<;>|[)\]}⟩]|(?:with|then|else|using|at|from)\b)")
INSERTED = 3  # lines at each point: a marker, `trace_state`, a marker


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


def _code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("--", "/-"))


def points(lines: list[str], line: int) -> list[Point]:
    """Where the goals before and after the tactic on `line` are asked; a ValueError says why a line has none."""
    if not 1 <= line <= len(lines):
        raise ValueError(f"line {line} is outside the file (1–{len(lines)})")
    here = lines[line - 1]
    if not _code(here):
        raise ValueError(f"line {line} is blank or a comment: give the line of a tactic")
    opens = re.search(r"(?:(?:^|[\s(])by|=>)$", here.rstrip()) is not None
    if _indent(here) == 0 and not opens:
        raise ValueError(f"line {line} starts a command: give a line of a tactic proof, below its `by`")
    if CONTINUES.match(here.lstrip()) and not opens:
        raise ValueError(f"line {line} continues the tactic above it: give the line where that tactic starts")
    if opens:
        first = next((n for n in range(line + 1, len(lines) + 1) if _code(lines[n - 1])), None)
        if first is None or _indent(lines[first - 1]) <= _indent(here):
            raise ValueError(f"line {line} opens no block below it")
        return [Point(f"at the start of the block line {line} opens (line {first})", first,
                      _indent(lines[first - 1]))]
    indent = _indent(here)
    # Any line, a comment too (a doc comment belongs to the declaration below it), may end the tactic.
    following = [n for n in range(line + 1, len(lines) + 1) if lines[n - 1].strip()]
    end = next((n for n in following if _indent(lines[n - 1]) < indent or (
        _indent(lines[n - 1]) == indent and not CONTINUES.match(lines[n - 1].lstrip()))), len(lines) + 1)
    after = max(n for n in [line, *following] if n < end) + 1  # below the tactic's last line, above blank ones
    return [Point(f"before line {line}", line, indent), Point(f"after line {line}", after, indent)]


def marked(text: str, line: int, tag: str | None = None) -> Marked:
    """`text` with the markers and `trace_state` at the points of `line`; `tag` makes its markers its own (a fresh
    one by default, which no text of the file holds)."""
    lines = text.splitlines()
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
    """Each point's goals as Lean printed them ('' for none), or None where Lean never reached it."""
    lines = output.splitlines()
    shown: list[str | None] = []
    for k in range(len(marks.points)):
        try:
            start = lines.index(marks.begin(k))
        except ValueError:
            shown.append(None)
            continue
        body: list[str] = []
        for raw in lines[start + 1:]:
            if raw == marks.end(k) or parse_diagnostics(raw):
                break
            body.append(raw)
        shown.append("\n".join(body).strip("\n"))
    return shown
