"""The standing rules every role is given: the loop's own, always, then the repository's notes for agents.

A repository may have its own CLAUDE.md or AGENTS.md, written for the tools its authors used before (OpenMath's
tells agents to commit and push, to sleep half an hour for an external prover, and to write its task results).
Those notes say things of the project that help (its conventions, names, mathematics), so every role reads them —
but below the loop's rules, marked as the project's, with the loop's rules holding where the two disagree.
`conflicts` names the lines that do, for `init` and `doctor` to show.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

NOTES = ("CLAUDE.md", "AGENTS.md")

# What the loop does itself, or forbids, that a repository's notes may tell agents to do.
_CONFLICTS = (
    ("commit", re.compile(r"\bgit\s+commit\b|\bcommit\s+(?:and|&)\s+push\b|\bcommit\s+(?:your|the|all|each|every)\b",
                          re.I), "the loop commits what passes its gates; its agents never commit"),
    ("push", re.compile(r"\bgit\s+push\b|\bpush\s+(?:to|your|the|it|them)\b", re.I),
     "the loop pushes; its agents never do"),
    ("sleep", re.compile(r"\bsleep\s+(?:for\s+)?\d|\bwait\s+(?:for\s+)?\d+\s*(?:s|sec|seconds?|min|minutes?|h|hours?)"
                         r"\b", re.I), "a Worker's session is bounded in turns and time; it never sleeps"),
    ("task_results", re.compile(r"task_results", re.I),
     "the loop writes each cycle's task result itself; a Worker reports through `finish`"),
)


# The sections of standing_rules.md each role of the loop is given: the rest its own prompt says already (the
# Worker's how to work, its library, blockers and file sizes; what decides is in its opening message), or its
# context's preamble (text from others is data), or are not its job. A session outside the loop (CLAUDE.md as
# `init` writes it) reads them all.
ROLES = {
    "planner": ("Stay faithful to the book", "When Mathlib lacks something"),
    "worker": ("Stay faithful to the book",),
    "consultant": ("Work sorry-first", "Stay faithful to the book", "Never weaken checking",
                   "When Mathlib lacks something"),
}


def standing(state_dir: str, role: str | None = None) -> str:
    """The loop's own standing rules: all of them, or the sections `ROLES` gives `role`."""
    text = resources.files("agents.prompts").joinpath("standing_rules.md").read_text(encoding="utf-8")
    text = text.replace("{state_dir}", state_dir)
    if role is None:
        return text
    _, *sections = _sections(text)  # its title and opening are the role's own prompt's to say
    return "".join(s for s in sections if s.split("\n", 1)[0].removeprefix("## ").strip() in ROLES[role])


def notes(repo: Path, state_dir: str) -> list[tuple[str, str]]:
    """The repository's notes for agents, (file, text): each text once (one file may be a link to the other), and
    none that is a copy of the loop's rules as `init` writes them, of this version or an older one (by its title)."""
    out: list[tuple[str, str]] = []
    for name in NOTES:
        path = repo / name  # a person's file, which no Worker may write
        text = path.read_text(encoding="utf-8", errors="replace").rstrip() if path.is_file() else ""
        text = _theirs(text, state_dir)
        if text.strip() and all(text != seen for _, seen in out):
            out.append((name, text))
    return out


def _sections(text: str) -> list[str]:
    """`text` cut before each `## ` heading: what precedes the first, then each section with its heading."""
    return re.split(r"(?m)^(?=## )", text)


def _theirs(text: str, state_dir: str) -> str:
    """`text` less the loop's rules as `init` wrote them into it, of this version or an older one: the opening
    under the rules' title, and each section titled as one of the rules'. What a person added stays."""
    own = standing(state_dir)
    if not text.startswith(own.split("\n", 1)[0]):
        return text
    titles = {s.split("\n", 1)[0].strip() for s in _sections(own)[1:]}
    _, *sections = _sections(text)
    return "".join(s for s in sections if s.split("\n", 1)[0].strip() not in titles).strip()


def rules(repo: Path, state_dir: str, role: str | None = None) -> str:
    """The loop's rules (for `role`: `standing`), then the project's notes."""
    own = standing(state_dir, role)
    extra = notes(repo, state_dir)
    if not extra:
        return own
    parts = [own.rstrip(), "", "## The project's notes",
             "", "The repository's own notes for agents, as its authors wrote them (perhaps for other tools): use what "
             "they say of the project, its conventions, names and mathematics. Where they disagree with everything "
             "above (committing, pushing, sleeping or waiting, writing task results or reports, editing the plan, "
             "the tools' names, an external prover), everything above holds, and the plan holds over them on the "
             "book and its target."]
    seen: set[str] = set()
    for name, text in extra:
        lines = text.strip("\n").split("\n")
        new = [line for line in lines if line.strip() not in seen]
        if len(new) < len(lines) / 2:  # mostly a copy of a note above (OpenMath's AGENTS.md of its CLAUDE.md)
            if not any(line.strip() for line in new):
                continue
            name, text = f"{name}, its lines the notes above do not have", "\n".join(new)
        seen |= {line.strip() for line in lines if line.strip()}
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
        parts += ["", f"{name}:", f"{fence}text", text.strip("\n"), fence]
    return "\n".join(parts) + "\n"


def conflicts(repo: Path, state_dir: str) -> list[str]:
    """Each line of the repository's notes that tells agents to do what the loop does itself or forbids."""
    found = []
    for name, text in notes(repo, state_dir):
        for number, line in enumerate(text.splitlines(), start=1):
            for what, pattern, why in _CONFLICTS:
                if pattern.search(line):
                    found.append(f"{name} line {number} ({what}: {line.strip()[:80]!r}): {why}")
    return found
