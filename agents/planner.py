"""The Planner: a bounded read-only tool session; context in, strategy.md with a valid Scope out, and perhaps a
new plan.md.

The session reads the live Lean files with the read-only tools (`reader.py`) and answers with the strategy as its
last message. A `## Plan update` section of that answer, one fenced block holding the whole new plan.md, is taken
out of the strategy and written to plan.md by the orchestrator (the Worker may never write it). Its limits
(`[agents.planner]` max_turns, timeout_s, token_budget) end the session without an answer: the cycle then falls
back to the last valid Scope (`orchestrator/fallback.py`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from agents.context import escape
from agents.items import Item, has_items, parse_items
from agents.model import Model, System
from agents.prompts import render
from agents.reader import Bounds, ended
from agents.worker import WorkerSession
from gates import chosen, directives
from gates.census import Census
from gates.config import GatesConfig
from gates.scope import InvalidStrategy, glob_regex, parse_scope
from state.history import Usage

MAX_TOKENS = 8192
PLAN_UPDATE = "Plan update"
PLAN_CHARS = 12_000  # what a new plan may hold at least; a longer plan may be rewritten at its own length and more


def room(plan: str | None) -> int:
    """The characters a plan update may hold: as long as the plan it replaces, and a quarter more."""
    return max(PLAN_CHARS, len(plan or "") * 5 // 4)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass
class Plan:
    text: str
    scope: list[str]
    usage: Usage
    plan_update: str | None = None  # the whole new plan.md, when the Planner proposed one
    turns: int = 0  # model calls its session made
    items: list[Item] = field(default_factory=list)  # a round's work items, when the strategy has them


class PlanFailed(Exception):
    """The Planner's answer stayed invalid after one retry."""

    def __init__(self, reason: str, usage: Usage) -> None:
        super().__init__(reason)
        self.usage = usage


def validate(text: str, lean_roots: list[str], census: Census | None = None, gates: GatesConfig | None = None
             ) -> list[str]:
    """The Scope of `text`; raises `InvalidStrategy` when it is missing, leaves the Lean roots, or is wider than
    `[gates] max_scope_entries` entries or `max_scope_files` of the Lean files of `census` per entry."""
    scope = parse_scope(text)
    roots = [r.strip("/") for r in lean_roots]
    if roots:
        outside = [e for e in scope if not any(e == r or e == f"{r}.lean" or e.startswith(f"{r}/") for r in roots)]
        if outside:
            raise InvalidStrategy(f"scope entries outside the Lean roots ({', '.join(roots)}): {', '.join(outside)}")
    limits = gates or GatesConfig()
    if len(scope) > limits.max_scope_entries:
        raise InvalidStrategy(f"the Scope lists {len(scope)} entries; at most {limits.max_scope_entries} "
                              "([gates] max_scope_entries): keep it to the files this cycle needs")
    files = list(census.files) if census is not None else []
    for entry in scope:
        matched = len([path for path in files if glob_regex(entry).match(path)])
        if matched > limits.max_scope_files:
            raise InvalidStrategy(f"scope entry {entry} matches {matched} Lean files; at most "
                                  f"{limits.max_scope_files} ([gates] max_scope_files): name the files")
    return scope


def split_update(answer: str, limit: int = PLAN_CHARS) -> tuple[str, str | None]:
    """The strategy without its `## Plan update` section, and the plan.md text that section's fenced block holds
    (None without one). Raises `InvalidStrategy` for a second such section, one without a closed fenced block
    right under its heading, an empty plan, or one over `limit` characters. A heading inside a code block is text."""
    lines = chosen.lines(answer)  # every line separator a break, as the directives and the Scope are read
    found: list[tuple[int, int, str]] = []  # (heading line, first line after the section, plan text)
    fence = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = ""
        elif opened:
            fence = opened.group(1)
        elif (h := _HEADING.match(line)) and h.group(2).strip().lower() == PLAN_UPDATE.lower():
            found.append(_section(lines, i, len(h.group(1))))
            i = found[-1][1]
            continue
        i += 1
    if not found:
        return answer, None
    if len(found) > 1:
        raise InvalidStrategy(f"the answer has {len(found)} `## {PLAN_UPDATE}` sections; give at most one")
    start, end, text = found[0]
    if not text.strip():
        raise InvalidStrategy(f"the `## {PLAN_UPDATE}` block is empty; leave the section out to keep plan.md")
    if len(text) > limit:
        raise InvalidStrategy(f"the new plan is {len(text):,} characters; at most {limit:,}: keep plan.md "
                              "short enough to be read whole")
    strategy = "\n".join(lines[:start] + lines[end:]).strip() + "\n"
    return strategy, text.strip("\n") + "\n"


def _section(lines: list[str], at: int, level: int) -> tuple[int, int, str]:
    """The `## Plan update` section at line `at`: its fenced block's text, and the line after the section."""
    i = at + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    opened = _FENCE.match(lines[i]) if i < len(lines) else None
    if opened is None:
        raise InvalidStrategy(f"the `## {PLAN_UPDATE}` section must hold the whole new plan.md in one fenced block "
                              "(a line of ```` ``` ```` or more backticks before it and after it) right under its "
                              "heading")
    fence = opened.group(1)
    for j in range(i + 1, len(lines)):
        closing = _FENCE.match(lines[j])
        if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                and not lines[j].strip().strip(fence[0]):
            end = j + 1
            while end < len(lines) and not ((h := _HEADING.match(lines[end])) and len(h.group(1)) <= level):
                end += 1
            return at, end, "\n".join(lines[i + 1:j])
    raise InvalidStrategy(f"the fenced block of the `## {PLAN_UPDATE}` section is never closed (use a fence longer "
                          "than any inside the plan)")


def read(text: str, usage: Usage, lean_roots: list[str], census: Census | None = None,
         gates: GatesConfig | None = None, workers: int = 1) -> Plan:
    """`text` as a plan: one Scope, or with `workers` above 1 and `## Item:` sections, up to that many items, each
    Scope validated as one; raises `InvalidStrategy`."""
    if workers <= 1 or not has_items(text):
        return Plan(text, validate(text, lean_roots, census, gates), usage)
    items = parse_items(text)
    if len(items) > workers:
        raise InvalidStrategy(f"the strategy has {len(items)} items; at most {workers} ([parallel] workers)")
    for item in items:
        try:
            validate(item.text, lean_roots, census, gates)
        except InvalidStrategy as e:
            raise InvalidStrategy(f"item {item.name!r}: {e}") from None
    scope = list(dict.fromkeys(e for item in items for e in item.scope))
    return Plan(text, scope, usage, items=items)


def prompt(rules: str, lean_roots: list[str], plan_name: str = "plan.md", tools: str = "", workers: int = 1,
           plan_chars: int = PLAN_CHARS) -> str:
    """The Planner's system prompt; with more than one Worker, the format of a round's items too."""
    text = render("planner", rules=rules, lean_roots=", ".join(lean_roots) or "the repository", plan=plan_name,
                  tools=tools or Bounds().tools_line(), plan_chars=f"{plan_chars:,}")
    return text + (f"\n\n{render('items', workers=workers)}" if workers > 1 else "")


def plan(model: Model, *, rules: str, context: str, lean_roots: list[str], census: Census | None = None,
         gates: GatesConfig | None = None, bounds: Bounds | None = None, plan_name: str = "plan.md",
         workers: int = 1, plan_chars: int = PLAN_CHARS) -> Plan:
    """`plan_chars`: what a plan update may hold (`room`)."""
    b = bounds or Bounds()
    system = System(prompt(rules, lean_roots, plan_name, b.tools_line(), workers, plan_chars))
    session = b.session(model, system, "planner", MAX_TOKENS)
    try:
        return _answer(session, context, lean_roots, census, gates, workers, plan_chars)
    finally:
        session.close()


def _answer(session: WorkerSession, context: str, lean_roots: list[str], census: Census | None,
            gates: GatesConfig | None, workers: int, plan_chars: int) -> Plan:
    """The strategy the session answers with, sent back once when invalid."""
    answer = session.run(context)
    for attempt in (1, 2):
        why = ended("Planner", answer.stop, answer.report, session.turns)
        if why:
            raise PlanFailed(why, session.usage)
        try:
            text, update = split_update(answer.report, plan_chars)
            read_plan = read(text.strip() + "\n", session.usage, lean_roots, census, gates, workers)
            return dataclasses.replace(read_plan, plan_update=update, turns=session.turns)
        except InvalidStrategy as e:
            if attempt == 2:
                raise PlanFailed(f"the Planner's strategy is invalid twice: {e}", session.usage) from None
            answer = session.resume(f"That strategy cannot be used: {e}. Answer again with the whole strategy, "
                                    "including a `## Scope` section of paths inside the Lean roots.")
    raise AssertionError("unreachable")


def fix_build_strategy(failing: list[str], errors: list[str]) -> Plan:
    """The fixed strategy when the branch does not build: no Planner call. Lean's messages quote the project's
    code, so they sit in a fence no line of theirs can close (`gates.chosen.ticks`, every line separator a line
    break), where no directive counts, each line that could pass for a heading or a directive escaped (a reader
    of the Scope that does not know fences takes no `## Scope` from them); a failing file whose name could not
    stand as a Scope bullet of its own (a line separator, an unprintable character, or a directive's look) is
    named in the errors only."""
    shown = escape("\n".join(errors[:30]))
    fence = chosen.ticks(shown)
    listable = [p for p in failing if p.isprintable() and directives.directive(f"- {p}") is None]
    unlisted = len(failing) - len(listable)
    if not listable:
        raise InvalidStrategy(f"the branch does not build, and none of its {unlisted} failing files can be named in a "
                              "Scope (a line separator, an unprintable character or a directive in the name): a "
                              "person must rename or fix them")
    listed = "\n".join(f"- {path}" for path in listable)
    note = (f"\n\n{unlisted} failing file{'s' if unlisted > 1 else ''} cannot be listed in the Scope by name: "
            f"a person must rename or fix {'them' if unlisted > 1 else 'it'}." if unlisted else "")
    text = (f"# Strategy — fix the build\n\nThe branch does not compile. Before anything else, make it build again "
            f"without raising the sorry count or weakening any statement.\n\n## Errors\n\n{fence}\n{shown}\n"
            f"{fence}{note}\n\n## Scope\n{listed}\n\n## Done when\nEvery file in the Scope passes `lean_check`.\n")
    return Plan(text, listable, Usage())
