"""What a cycle aims at: the declarations holding a hole at its base that its strategy sets the Worker on.

A strategy (or a round item's section of one) names its targets in its text and bounds them by its Scope. A
declaration is aimed at when it holds a hole at the base (as Lean says where it listed the file), lies in a file
the Scope matches, and the text names it: by its full name anywhere, by a dotted tail of it (`Chapter3.rk_order`)
anywhere, or by its last component inside backticks (a bare word such as `hard` in prose names nothing). A name
only a `PROVER:` line gives is the external prover's target, not the Worker's. A strategy that names none of the
holes in its Scope aims at all of them; one whose Scope holds none aims at nothing (it states new theorems, or
mends the build). The records' `targets` come from here: they are the attempts the difficulty model is fitted on.

`uses` tells the Worker how the project uses its targets (and the statements its strategy restates): each user and
the line where it names one, so that it sees what a weaker statement would break before the successors gate does.
"""

from __future__ import annotations

import re

from audit.successors import Users
from gates import directives
from gates.census import Census
from gates.chosen import lines
from gates.lexer import ID_FIRST, ID_REST
from gates.scope import matches

_NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")
_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def aimed(strategy: str, scope: list[str], census: Census) -> list[str]:
    """The declarations holding a hole in the Scope's files that `strategy` aims at, sorted."""
    inside = {path for path in census.files if matches(path, scope)}  # each file matched once, not each hole
    holding = sorted({h.name for h in census.holed() if h.path in inside})
    if not holding:
        return []
    text = "\n".join(line for line in lines(strategy) if (d := directives.directive(line)) is None or d[0] != "PROVER")
    spans = [m.group(2).strip() for m in _CODE.finditer(text)]
    coded = {t.rstrip(".") for span in spans for t in _NAMES.findall(span)} | set(spans)
    anywhere = {t.rstrip(".") for t in _NAMES.findall(text) if "." in t.strip(".")}
    named = [n for n in holding if _named(n, coded, anywhere)]
    return named or holding


def _named(name: str, coded: set[str], anywhere: set[str]) -> bool:
    """Whether `name` is written whole, or as a dotted tail anywhere (`anywhere` holds only dotted words), or as any
    tail inside backticks."""
    parts = name.split(".")
    tails = {".".join(parts[i:]) for i in range(len(parts))}
    return bool(tails & (coded | anywhere))


def uses(census: Census, names: list[str], *, most: int = 12) -> str:
    """How the project uses `names`: each declaration whose file sees one and whose text names it (as the audit's
    successor tests find users, `audit.successors.Users`), with the line where it does; at most `most` users of
    each. The users are what a weaker statement would break: the Worker reads them before touching one."""
    where = {name: paths for name in names if (paths := census.declaring(name))}
    users = Users(census)
    out: list[str] = []
    for name in names:
        if len(where.get(name, [])) != 1:
            continue  # declared twice, or not at all: which one a user means cannot be told
        found = users.of(where[name][0], name)
        if not found:
            continue
        out.append(f"{name} ({where[name][0]}), used by {len(found)} declaration(s):")
        last = re.escape(name.rsplit(".", 1)[-1])
        token = re.compile(rf"(?<![{ID_REST}]){last}(?![{ID_REST}])")
        for path, d in found[:most]:
            text = census.files[path].text
            first = text.count("\n", 0, d.start) + 1
            lines = text[d.start:d.end].split("\n")
            at = next((i for i, line in enumerate(lines) if token.search(line)), 0)
            out.append(f"  {d.name} ({path}:{first + at}): {lines[at].strip()[:200]}")
        if len(found) > most:
            out.append(f"  … and {len(found) - most} more")
    return "\n".join(out)
