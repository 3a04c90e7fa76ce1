"""Context assembly with a size budget per section, so prompts do not grow with the run.

Each section is cut to its budget by a stated rule (keep the head, or keep
the tail), and every cut is named in the prompt and in `dropped`, so neither
the model nor the user is left guessing what was left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Keep(StrEnum):
    HEAD = "head"  # documents read from the top: plan.md, a task result
    TAIL = "tail"  # logs read from the end: attempts.md


@dataclass(frozen=True)
class Section:
    title: str
    text: str
    budget: int  # characters; about four per token
    keep: Keep = Keep.HEAD
    note: str = ""  # what the producer already left out (e.g. older records)


@dataclass
class Context:
    sections: list[Section]
    dropped: list[str] = field(default_factory=list)

    def render(self) -> str:
        parts = []
        self.dropped = []
        for s in self.sections:
            body = s.text.strip() or "(none)"
            if len(body) > s.budget:
                cut = len(body) - s.budget
                body = (body[:s.budget] + f"\n[… {cut:,} more characters omitted]" if s.keep is Keep.HEAD
                        else f"[… {cut:,} earlier characters omitted]\n" + body[-s.budget:])
                self.dropped.append(f"{s.title}: {cut:,} characters cut ({s.keep.value} kept)")
            if s.note:
                self.dropped.append(f"{s.title}: {s.note}")
                body = f"({s.note})\n{body}"
            parts.append(f"## {s.title}\n\n{body}")
        return "\n\n".join(parts) + "\n"


def window(items: list[str], limit: int, noun: str) -> tuple[str, str]:
    """The last `limit` items joined by lines, and a note naming how many older ones were left out."""
    shown = items[-limit:] if limit else []
    omitted = len(items) - len(shown)
    return "\n".join(shown), (f"{omitted} older {noun} not shown" if omitted else "")
