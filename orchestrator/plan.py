"""The plan's targets as people write them: the `- [ ]` and `- [x]` lines of plan.md, with the headings above them.

Not targets: lines inside fenced code; the template's placeholders (`- [ ] Chapter 1: …`) until the book's own
replace them; and a legend's lines — under a heading that is a legend and nothing else ("Status Key", "Legend",
"Key to symbols"), `- [x] Formalized` explains the marks rather than naming a result. "Key Lemmas", "Public key"
and "The legend of Fermat" are headings of results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CHECKBOX = re.compile(r"^(\s*)[-*+]\s+\[([ xX])\]\s+(.*\S)\s*$")
PLACEHOLDER = re.compile(r"^(?:chapter|part|section)\s+\d+\s*:\s*…$", re.I)
LEGEND = re.compile(r"^(?:(?:status|progress|checkbox|checklist|marks?|symbols?)\s+)?(?:keys?|legends?)"
                    r"(?:\s+(?:to|of|for)\s+(?:the\s+)?(?:marks?|symbols?|status(?:es)?|checkbox(?:es)?|boxes))?\s*:?$",
                    re.I)


@dataclass(frozen=True)
class Item:
    indent: int
    done: bool
    text: str
    headings: tuple[str, ...]


def items(text: str) -> list[Item]:
    """The plan's targets, and the items that group them, in the plan's order."""
    out: list[Item] = []
    headings: list[tuple[int, str]] = []
    for line in _unfenced(text):
        if heading := HEADING.match(line):
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
        elif (box := CHECKBOX.match(line)) and not PLACEHOLDER.match(box.group(3)) \
                and not (headings and LEGEND.match(headings[-1][1].strip("*_ "))):
            indent = len(box.group(1).expandtabs(4))
            out.append(Item(indent, box.group(2) != " ", box.group(3), tuple(h for _, h in headings)))
    return out


def placeholders(text: str) -> int:
    """Targets still as the plan's template wrote them (`- [ ] Chapter 1: …`): not the book's."""
    return sum(1 for line in _unfenced(text) if (box := CHECKBOX.match(line)) and PLACEHOLDER.match(box.group(3)))


def template(text: str) -> int:
    """The template's placeholders when they are all the plan's targets (none of the book's yet), else 0: a plan
    partly filled in, or sketched by a Planner in the template's style, is a plan."""
    return 0 if items(text) else placeholders(text)


def _unfenced(text: str) -> list[str]:
    """The lines outside fenced code."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out
