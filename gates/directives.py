"""Directive lines: `RESTATE:`, `RESTRUCTURING:`, `SPLITTING:` and `PROVER:`, read from a strategy or a report.

A directive is honoured only on a line of its own: the keyword starts the line (after at most three spaces and
an optional list bullet), outside fenced code (```` ``` ```` or `~~~`), indented code, blockquotes (`>`) and
HTML comments. So a directive quoted from someone else's text — a pasted compiler message, an issue shown in
a fence, a line in quotes or backticks — is text, never an instruction. Every line separator is a line break
(`gates.chosen.lines`: `\r`, VT, FF, FS, GS, RS, NEL, U+2028 and U+2029 as well as `\n`), as the escaping of
fenced text has it: a fence a separator closes is closed here too. `strip` removes every line that merely
looks like a directive or a heading, quoted or not, for text that must carry none (the history's fields); both
read a line through `directive`, so every line `lines` honours is one `strip` removes.
"""

from __future__ import annotations

import re

from gates.chosen import lines as split

KEYWORDS = ("RESTATE", "RESTRUCTURING", "SPLITTING", "PROVER")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_WORDS = "|".join(KEYWORDS)
# Honoured: the keyword, upper case and its colon right after, at the start of the line (after at most three
# spaces and one list marker). Looking like one: the keyword in any case, after any run of spaces, list
# markers, quote and emphasis marks. Every honoured line looks like one, so what `strip` removes is a superset
# of what `lines` honours: both read a line through `directive`.
_HONOURED = re.compile(rf"^ {{0,3}}(?:(?:[-*+]|\d{{1,3}}[.)])[ \t]+)?({_WORDS}):(.*)$")
_LOOKALIKE = re.compile(rf"^(?:[\s>*+`\"'\\|#~_-]|\d+[.)])*({_WORDS})\s*:(.*)$", re.IGNORECASE)
_HEADING = re.compile(r"^[\s>\\]*#|^\s*(?:=+|-{2,})\s*$")
_SEPARATOR = re.compile(r"^[ \t]*(?:—|–|--|-|:)[ \t]*")


def directive(line: str) -> tuple[str, str, bool] | None:
    """A line that is or looks like a directive: (its keyword, the rest of the line stripped, whether it is
    honoured where it stands, outside fences and comments); None for any other line."""
    loose = _LOOKALIKE.match(line)
    if loose is None:
        return None
    strict = _HONOURED.match(line)
    return (strict or loose).group(1).upper(), (strict or loose).group(2).strip(), strict is not None


def lines(text: str) -> list[tuple[str, str]]:
    """Every honoured directive of `text`, in order: (keyword, the rest of its line, stripped)."""
    out: list[tuple[str, str]] = []
    fence: str | None = None
    comment = False
    for raw in split(text):
        opened = _FENCE.match(raw)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not raw.strip().strip(fence[0]):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if comment:
            comment = "-->" not in raw
            continue
        if raw.lstrip().startswith("<!--"):
            comment = "-->" not in raw
            continue
        found = directive(raw)
        if found is not None and found[2]:
            out.append((found[0], found[1]))
    return out


def values(text: str, keyword: str) -> list[str]:
    """The non-empty values of the honoured `keyword:` lines of `text`."""
    return [value for key, value in lines(text) if key == keyword and value]


def first(text: str, keyword: str) -> str | None:
    """The value of the first honoured `keyword: <value>` line, if any."""
    found = values(text, keyword)
    return found[0] if found else None


def names(text: str, keyword: str) -> list[str]:
    """The declaration each honoured `keyword: <declaration> …` line names, once each, in order."""
    return list(dict.fromkeys(v.split()[0].strip("`") for v in values(text, keyword) if v.split()[0].strip("`")))


def restatements(strategy: str) -> dict[str, str]:
    """`RESTATE: <declaration> — <rationale>` lines: declaration → rationale (empty when none is given)."""
    out: dict[str, str] = {}
    for key, value in lines(strategy):
        if key != "RESTATE" or not value:
            continue
        m = re.match(r"`([^`]+)`|([^\s`—–:]+)", value)
        if m is None:
            continue
        name = (m.group(1) or m.group(2)).strip()
        out[name] = _SEPARATOR.sub("", value[m.end():], count=1).strip()
    return out


def strip(text: str) -> str:
    """`text` without the lines that are, or look like, a directive (quoted or not) or a heading."""
    return "\n".join(line for line in split(text) if directive(line) is None and not _HEADING.match(line))


def one_line(text: str, limit: int) -> str:
    """`text` as one line of at most `limit` characters, its directive and heading lines removed."""
    flat = " ".join(strip(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"
