"""The Planner: context in, strategy.md with a valid Scope out."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.items import Item, has_items, parse_items
from agents.model import Message, Model, System
from agents.prompts import render
from gates.census import Census
from gates.config import GatesConfig
from gates.scope import InvalidStrategy, glob_regex, parse_scope
from state.history import Usage

MAX_TOKENS = 8192


@dataclass
class Plan:
    text: str
    scope: list[str]
    usage: Usage
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
    return Plan(text, scope, usage, items)


def plan(model: Model, *, rules: str, context: str, lean_roots: list[str], census: Census | None = None,
         gates: GatesConfig | None = None, workers: int = 1) -> Plan:
    system = System(render("planner", rules=rules, lean_roots=", ".join(lean_roots) or "the repository")
                    + (f"\n\n{render('items', workers=workers)}" if workers > 1 else ""))
    messages = [Message("user", context)]
    usage = Usage()
    for attempt in (1, 2):
        reply = model.send(system, messages, max_tokens=MAX_TOKENS)
        usage += reply.usage
        try:
            return read(reply.text.strip() + "\n", usage, lean_roots, census, gates, workers)
        except InvalidStrategy as e:
            if attempt == 2:
                raise PlanFailed(f"the Planner's strategy is invalid twice: {e}", usage) from None
            messages += [reply.as_message(),
                         Message("user", f"That strategy cannot be used: {e}. Answer again with the whole "
                                         "strategy, including a `## Scope` section of paths inside the Lean roots.")]
    raise AssertionError("unreachable")


def fix_build_strategy(failing: list[str], errors: list[str]) -> Plan:
    """The fixed strategy when the branch does not build: no Planner call."""
    listed = "\n".join(f"- {path}" for path in failing)
    shown = "\n".join(errors[:30])
    text = (f"# Strategy — fix the build\n\nThe branch does not compile. Before anything else, make it build again "
            f"without raising the sorry count or weakening any statement.\n\n## Errors\n\n```\n{shown}\n```\n\n"
            f"## Scope\n{listed}\n\n## Done when\nEvery file in the Scope passes `lean_check`.\n")
    return Plan(text, list(failing), Usage())
