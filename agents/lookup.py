"""Whether a declaration name exists: in the project as the branch has it, or in its dependencies' sources (Mathlib…).

Without asking Lean: the project's declarations come from a census (`gates.census`) of the tree that lands —
the base commit, with the cycle's change only when it lands — never from a Worker's working copy, where a rejected
change's declarations still stand; each dependency file is read as text, and only one that holds the name's last
component is indexed (`gates.index`), so a lookup reads Mathlib once and parses a handful of files. A name is found
when a declaration's fully qualified name is it, or ends with it after a dot (`add_comm` finds `Nat.add_comm`). The
`find_declaration` tool of the Planner, the Consultant and the Worker, and the check of the names the Consultant's
advice lists (`flag`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from agents.model import ToolSpec
from agents.tools import PACKAGES, Tool, _schema
from gates.census import Census
from gates.index import Decl, index_source
from gates.tree import NOT_SOURCES

SHOWN_CHARS = 1_500  # of a found declaration's source
NAME = re.compile(r"^[^\W\d][\w.'!?₀-₉ₐ-ₜᵢ-ᵪ]*$")
UNVERIFIED = "(unverified: no declaration of this name was found on the branch or in its dependencies)"


@dataclass
class Found:
    path: str
    decl: Decl


@dataclass
class Lookup:
    """Lookups over `project` (the census of the tree that lands) and the dependencies' sources under `packages`
    (the main checkout's `.lake/packages`, which no Worker writes)."""

    project: Census
    packages: Path
    folder: str = PACKAGES.as_posix()  # `packages` as the repository names it: where the read tools find a file
    texts: dict[str, str] = field(default_factory=dict)  # the dependencies' sources, read once: share it among
    # a cycle's lookups, as Mathlib's sources take a hundred megabytes

    def find(self, name: str) -> list[Found]:
        name = name.strip().strip("`").removeprefix("_root_.")
        if not NAME.match(name):
            return []
        last = name.rsplit(".", 1)[-1]
        out = [Found(path, d) for path, d in self.project.decls() if _named(d, name)]
        for path, text in self._dependencies().items():
            if last not in text:
                continue
            out += [Found(path, d) for d in index_source(path, text).decls if _named(d, name)]
        return out

    def tool(self) -> Tool:
        return Tool(ToolSpec("find_declaration", "Where a declaration is, and its source, by its full name or its "
                             "last parts: on the branch (this cycle's change once it lands) or in the dependencies "
                             "(Mathlib…). Look a lemma up before proving it; check every name you advise.",
                             _schema(name=("string", "e.g. `Nat.succ_le_iff` or `succ_le_iff`."))), self.describe)

    def describe(self, name: str) -> str:
        found = self.find(name)
        if not found:
            return f"no declaration named {name!r} on the branch or in its dependencies"
        out = []
        for f in found[:5]:
            src = f.decl.source
            text = src.text[f.decl.start:f.decl.end] if src is not None else ""
            shown = text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + " […]"
            out.append(f"-- {f.path}:{f.decl.line} ({f.decl.kind} {f.decl.name})\n{shown}")
        more = f"\n\n[… {len(found) - 5} more]" if len(found) > 5 else ""
        return "\n\n".join(out) + more

    def _dependencies(self) -> dict[str, str]:
        """Every Lean source of the dependencies, read once (into `texts`, which other lookups may share)."""
        if not self.texts:
            for folder, dirs, names in os.walk(self.packages):
                dirs[:] = [d for d in dirs if d not in NOT_SOURCES]
                for n in names:
                    if n.endswith(".lean"):
                        path = Path(folder) / n
                        try:  # named as a read tool takes it
                            self.texts[f"{self.folder}/{path.relative_to(self.packages).as_posix()}"] = path.read_text(
                                "utf-8", "replace")
                        except OSError:
                            continue
        return self.texts


def _named(d: Decl, name: str) -> bool:
    return d.name is not None and (d.name == name or d.name.endswith("." + name))


LEMMAS = "Lemmas"
_BULLET = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)`([^`\n]+)`")


def flag(advice: str, lookup: Lookup) -> tuple[str, list[str]]:
    """The advice with each name its `## Lemmas` section lists (a bullet's first backticked name) that is found
    nowhere marked as unverified; and those names."""
    lines = advice.split("\n")
    inside, missing = False, []
    for i, line in enumerate(lines):
        heading = re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if heading:
            inside = heading.group(2).strip().lower() == LEMMAS.lower()
            continue
        m = _BULLET.match(line) if inside else None
        if m and not lookup.find(m.group(2)):
            missing.append(m.group(2))
            lines[i] = f"{line} {UNVERIFIED}"
    return "\n".join(lines), missing
