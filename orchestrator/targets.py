"""What a cycle aims at: the declarations holding a hole at its base that its strategy sets the Worker on.

A strategy (or a round item's section of one) names its targets in its text and bounds them by its Scope. A
declaration is aimed at when it holds a hole at the base (as Lean says where it listed the file), lies in a file
the Scope matches, and the text names it: by its full name anywhere, by a dotted tail of it (`Chapter3.rk_order`)
anywhere, or by its last component inside backticks (a bare word such as `hard` in prose names nothing). A name
only a `PROVER:` line gives is the external prover's target, not the Worker's. A strategy that names none of the
holes in its Scope aims at all of them; one whose Scope holds none aims at nothing (it states new theorems, or
mends the build). The records' `targets` come from here: they are the attempts the difficulty model is fitted on.
"""

from __future__ import annotations

import re

from gates import directives
from gates.census import Census
from gates.chosen import lines
from gates.lexer import ID_FIRST, ID_REST
from gates.scope import matches

_NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")
_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def aimed(strategy: str, scope: list[str], census: Census) -> list[str]:
    """The declarations holding a hole in the Scope's files that `strategy` aims at, sorted."""
    holding = sorted({h.name for h in census.holed() if matches(h.path, scope)})
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
