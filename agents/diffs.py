"""A cycle's diff within a budget: whole when it fits; else every file summarized, and the first files' diffs."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEAD = re.compile(r"^diff --git ", re.MULTILINE)


@dataclass(frozen=True)
class FileDiff:
    path: str
    added: int
    removed: int
    text: str  # this file's part of the diff, its header included


def split(diff: str) -> list[FileDiff]:
    """The diff's parts, one per file, in order (text before the first file header, if any, is its own part)."""
    starts = [m.start() for m in _HEAD.finditer(diff)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    parts = [diff[a:b] for a, b in zip(starts, [*starts[1:], len(diff)], strict=True)]
    return [_file(p) for p in parts if p.strip()]


def _file(text: str) -> FileDiff:
    lines = text.split("\n")
    added = removed = 0
    body = False
    for line in lines:
        if line.startswith("@@"):
            body = True  # before the first hunk, `---`/`+++` are the header's paths, not lines removed or added
        elif body and line.startswith("+"):
            added += 1
        elif body and line.startswith("-"):
            removed += 1
    return FileDiff(_path(lines), added, removed, text)


def _path(lines: list[str]) -> str:
    """The file's path from its header (never from its hunks, which the Worker wrote): the new side's, the old
    one's when it was deleted, else the header line's."""
    header = lines[:next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines))]
    for prefix in ("+++ b/", "--- a/", "rename to ", "copy to "):
        found = next((line[len(prefix):] for line in header if line.startswith(prefix)), None)
        if found:
            return found
    head = lines[0]
    return head[len("diff --git "):] if head.startswith("diff --git ") else "(text before the first file)"


def view(diff: str, budget: int) -> str:
    """`diff` whole when it fits `budget` characters; else a summary of every file (path, lines added and removed),
    then the first files' diffs, whole, while they fit (the first that does not is cut at what is left)."""
    if len(diff) <= budget:
        return diff
    files = split(diff)
    rows = [f"{f.path}: +{f.added} -{f.removed}" for f in files]
    head = (f"The diff is {len(diff):,} characters, over its budget of {budget:,}: every changed file is listed "
            f"({len(files)}: path, lines added and removed), then the first files' diffs.")
    summary, listed = _fitting([head, *rows], budget // 2)  # the rest of the budget is for the diffs themselves
    if listed < len(rows):
        summary += f"\n… and {len(rows) - listed} more files, not listed"
    room = budget - len(summary)
    shown: list[str] = []
    for f in files:
        if len(f.text) <= room:
            shown.append(f.text)
            room -= len(f.text)
            continue
        if room > 200:
            shown.append(f.text[:room] + f"\n[… {f.path} cut here: {len(f.text) - room:,} more characters]")
        break
    rest = len(files) - len(shown)
    tail = f"\n[the diffs of {rest} more files not shown]" if rest else ""
    return f"{summary}\n\n{''.join(shown).rstrip()}{tail}\n"


def _fitting(lines: list[str], limit: int) -> tuple[str, int]:
    """The first lines that fit `limit` characters joined, and how many of `lines[1:]` are among them."""
    out: list[str] = []
    size = 0
    for line in lines:
        if out and size + len(line) + 1 > limit:
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out), len(out) - 1
