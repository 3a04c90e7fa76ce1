"""Strings another party chose, as the orchestrator's own text shows them.

A Worker chooses declaration names (a `«…»` name may hold any text but `»`), file names, issue names and the
words of its report, from which other text is derived (the Evaluator's summary, a commit's subject). Shown
verbatim in a prompt, any of them could pass for the orchestrator's words. So:

- `shown` is the one renderer of such a string: one line, no fence marker, at most a bounded length; a string it
  had to clip or alter carries a short digest of the original, so two such names stay distinct. Where the
  string is data it also goes inside a fence (`agents.context.Quote`); a heading, a fence's marker line or any
  other line of the orchestrator's own never holds one.
- `lines` splits text at every character a reader may take for a line break: `\\n`, `\\r`, VT, FF, FS, GS, RS,
  NEL (U+0085), U+2028 and U+2029 — the escaping of fenced text and the reading of directives both use it, so
  nothing can hide a line from the one and show it to the other.
- `ticks` is a code fence longer than every backtick run of the text it fences, which therefore cannot close it.
"""

from __future__ import annotations

import hashlib
import re

NAME_CHARS = 160  # a declaration or file name longer than this is clipped (a Lean name rarely passes 100)
DIGEST_CHARS = 8
BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""Every line separator: those `str.splitlines` splits at, which a model or a Markdown reader may honour."""
_MARKERS = re.compile(r"<{3,}|>{3,}")  # what a fence of data opens and closes with (`agents.context.fence`)
_TICKS = re.compile(r"`+")


def lines(text: str) -> list[str]:
    """`text` split at every line separator (`BREAKS`; `\\r\\n` is one break), none dropped at the end: the
    lines joined by `\\n` are `text` with each separator made a newline."""
    return re.split(r"\r\n|[" + BREAKS + "]", text)


def normalized(text: str) -> str:
    """`text` with every line separator a plain newline."""
    return "\n".join(lines(text))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def shown(text: str, limit: int = NAME_CHARS) -> str:
    """`text`, chosen by someone else, as one of our lines may show it: unchanged when it is printable, short and
    free of fence markers; else on one line — holding a line separator or any other unprintable character, as a
    Python literal (quoted, each such character escaped: `'x\\n## Scope'`), nothing lost — with every fence
    marker (`<<<`, `>>>`) made harmless, and at most `limit` characters. Clipped, or a marker changed, it ends
    with `#` and a digest of the original (after `…` when clipped), so two such strings stay distinct."""
    out = text if text.isprintable() else repr(text)
    safe = _MARKERS.sub(lambda m: ("‹" if m.group()[0] == "<" else "›") * len(m.group()), out)
    if safe == out and len(out) <= limit:
        return out
    mark = f"#{digest(text)}"
    if len(safe) + 1 + len(mark) <= limit:
        return f"{safe} {mark}"
    return safe[:max(0, limit - len(mark) - 1)] + "…" + mark


def ticks(text: str) -> str:
    """A backtick fence for `text`: at least three, and longer than the longest run of backticks inside it."""
    return "`" * max(3, 1 + max((len(run) for run in _TICKS.findall(text)), default=0))
