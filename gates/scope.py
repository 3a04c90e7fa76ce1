"""The scope gate: every changed path lies inside the Scope the Planner declared.

strategy.md declares it in a `## Scope` section of bullets, each a path or
glob relative to the repository root: `*` stays within a directory, `**`
crosses them, a trailing `/` means everything below. No changed path may hold a
newline or another unprintable character, in the Scope or not: a path is shown
wherever its file is named, and such a one would pass for several lines. No
symlink in the tree may lead outside it, changed or not: the other gates cannot
read through one, yet `git add -A` commits it and every checkout follows it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gates import issues
from gates.base import GateInput, GateResult
from gates.tree import leaving

NAME = "scope"

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_TICKED = re.compile(r"`([^`]+)`")


class InvalidStrategy(ValueError):
    """strategy.md has no usable Scope; the message says why."""


def parse_scope(strategy: str) -> list[str]:
    """The entries of the `## Scope` section; raises `InvalidStrategy` when there are none or one is unsafe."""
    entries: list[str] = []
    level: int | None = None
    for line in strategy.splitlines():
        heading = _HEADING.match(line)
        if heading:
            if level is not None and len(heading.group(1)) <= level:
                break
            if level is None and heading.group(2).strip().lower() == "scope":
                level = len(heading.group(1))
            continue
        if level is None:
            continue
        bullet = _BULLET.match(line)
        if bullet:
            text = bullet.group(1).strip()
            ticked = _TICKED.search(text)
            entry = ticked.group(1).strip() if ticked else text.split()[0]
            entries.append(_check_entry(entry))
    if level is None:
        raise InvalidStrategy("strategy.md has no `## Scope` section")
    if not entries:
        raise InvalidStrategy("the `## Scope` section of strategy.md lists no paths")
    return entries


def _check_entry(entry: str) -> str:
    entry = entry.removeprefix("./")
    if entry.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", entry):
        raise InvalidStrategy(f"scope entry {entry!r} is absolute; give paths relative to the repository root")
    if ".." in entry.split("/"):
        raise InvalidStrategy(f"scope entry {entry!r} leaves the repository")
    try:
        glob_regex(entry)
    except re.error as e:
        raise InvalidStrategy(f"scope entry {entry!r} is not a valid glob ({e})") from None
    return entry


_GLOB_CHARS = re.compile(r"[*?\[]")


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """`*` within a path segment, `**` across segments, `?`, `[...]`; a plain path (no glob characters)
    matches itself and everything below it, as does anything ending in `/`."""
    below = pattern.endswith("/") or not _GLOB_CHARS.search(pattern)
    pattern = pattern.rstrip("/")
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := pattern.find("]", i + 1)) > i:
            body = pattern[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + (r"(?:/.*)?\Z" if below else r"\Z"))


def matches(path: str, patterns: list[str]) -> bool:
    """Whether `path` is one of `patterns`, or lies below one of them."""
    return any(glob_regex(p).match(path) for p in patterns)


def in_scope(path: str, scope: list[str]) -> bool:
    """Whether the Scope lets a change touch `path`: a Lean file an entry matches, or a file an entry names."""
    return any(glob_regex(p).match(path) and (path.endswith(".lean") or path == p.removeprefix("./"))
               for p in scope)


def check(inp: GateInput) -> GateResult:
    if not inp.scope:
        return GateResult(NAME, False, "the strategy declares no Scope, so no change may land")
    # A path is shown wherever a file is named (sorry tables, file sizes, verdicts): one with a newline would
    # pass for lines of the orchestrator's own.
    unprintable = [c for c in inp.changes if not c.path.isprintable()]
    notes = [c for c in inp.changes if issues.slug_of(c.path, inp.state_dir) is not None]  # the Worker's own
    outside = [c for c in inp.changes if c not in notes and c not in unprintable and not in_scope(c.path, inp.scope)]
    owned = issues.problems(notes, inp.changed, inp.state_dir, inp.gates)
    links = leaving(inp.changed)
    if unprintable or outside or owned or links:
        listed = ", ".join(f"{issues.shown(c.path)} ({c.kind})" for c in outside[:20])
        more = f" and {len(outside) - 20} more" if len(outside) > 20 else ""
        out = [f"changed outside the Scope: {listed}{more}; the Scope is {', '.join(inp.scope)} (Lean files, and "
               "other files only where an entry names them)"] if outside else []
        bad = [f"{', '.join(f'{issues.shown(c.path)} ({c.kind})' for c in unprintable[:20])}: a path with a newline "
               "or another unprintable character may not change"] if unprintable else []
        rest = f" and {len(links) - 20} more" if len(links) > 20 else ""
        left = [f"{', '.join(issues.shown(p) for p in links[:20])}{rest}: symlink(s) leading outside the tree, "
                "which no gate reads through and every checkout would follow; remove them (a link may point only "
                "inside the repository)"] if links else []
        return GateResult(NAME, False, "; ".join(left + bad + out + owned))
    return GateResult(NAME, True, f"{len(inp.changes)} changed path(s), all within the Scope")
