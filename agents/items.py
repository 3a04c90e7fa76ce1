"""A round's work items: `## Item: <name>` sections of a strategy, each with its own `### Scope`.

The text before the first item is shared; each item's Worker reads it with its own section alone, so a
Scope, a `RESTATE:` or a `PROVER:` line in another item's section is never its. Items must not be able to
change the same file: `disjoint` drops, with the reason, every item whose Scope could match a path an
earlier item's could — a path of the tree both match, or one the two patterns could both match; where the
patterns alone cannot show they never meet, they are taken to meet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product

from gates.scope import InvalidStrategy, glob_regex, matches, parse_scope

_ITEM = re.compile(r"^##\s+Item:\s*(.*?)\s*#*\s*$")
_HEADING = re.compile(r"^(#{1,6})\s")
_SCOPE = re.compile(r"^#{1,6}\s+Scope\s*#*\s*$", re.IGNORECASE)
_GLOB = re.compile(r"[*?\[]")
MAX_NAME = 60


@dataclass(frozen=True)
class Item:
    name: str
    text: str  # the strategy as this item's Worker reads it: the shared part, then its own section
    scope: list[str]


def has_items(strategy: str) -> bool:
    return any(_ITEM.match(line) for line in strategy.splitlines())


def parse_items(strategy: str) -> list[Item]:
    """The items of `strategy`, in order; raises `InvalidStrategy` when one has no Scope, two share a name, or a
    Scope stands outside every item (it would be no item's, or every one's)."""
    lines = strategy.splitlines()
    starts = [i for i, line in enumerate(lines) if _ITEM.match(line)]
    if not starts:
        raise InvalidStrategy("the strategy has no `## Item: <name>` section")
    shared = lines[:starts[0]]
    if any(_SCOPE.match(line) for line in shared):
        raise InvalidStrategy("a Scope section stands before the first `## Item:`; each item has its own "
                              "`### Scope` inside its section")
    out: list[Item] = []
    for n, start in enumerate(starts):
        end = next((i for i in range(start + 1, len(lines))
                    if (h := _HEADING.match(lines[i])) and len(h.group(1)) <= 2), len(lines))
        if n + 1 < len(starts):
            end = min(end, starts[n + 1])
        name = _name(_ITEM.match(lines[start]).group(1))  # type: ignore[union-attr]
        if any(i.name == name for i in out):
            raise InvalidStrategy(f"two items are named {name!r}; give each its own name")
        section = lines[start:end]
        try:
            scope = parse_scope("\n".join(section[1:]))
        except InvalidStrategy as e:
            raise InvalidStrategy(f"item {name!r}: {e}") from None
        text = "\n".join([*shared, *section]).strip() + "\n"
        out.append(Item(name, text, scope))
    return out


def _name(raw: str) -> str:
    name = " ".join(raw.split())
    if not name or len(name) > MAX_NAME or not name.isprintable() or "`" in name:
        raise InvalidStrategy(f"item name {raw[:80]!r} must be 1 to {MAX_NAME} printable characters, no backticks")
    return name


def disjoint(items: list[Item], files: list[str]) -> tuple[list[Item], dict[str, str]]:
    """The items kept, in order, and why each other one was dropped: an item is kept when no path of `files`
    and no path its patterns could match is matched by an item kept before it."""
    kept: list[Item] = []
    dropped: dict[str, str] = {}
    for item in items:
        reason = next((why for other in kept if (why := _overlap(other, item, files))), None)
        if reason is None:
            kept.append(item)
        else:
            dropped[item.name] = reason
    return kept, dropped


def _overlap(a: Item, b: Item, files: list[str]) -> str | None:
    shared = [p for p in files if matches(p, a.scope) and matches(p, b.scope)]
    if shared:
        return f"its Scope shares {', '.join(shared[:5])} with item {a.name!r}"
    for x, y in product(a.scope, b.scope):
        if may_meet(x, y):
            return f"its Scope entry {y} could match a path of item {a.name!r}'s entry {x}"
    return None


def may_meet(x: str, y: str) -> bool:
    """Whether some path could be matched by both patterns (`gates.scope.glob_regex`); True unless the patterns'
    fixed beginnings or ends show they never meet."""
    x, y = x.removeprefix("./"), y.removeprefix("./")
    lx, ly = not _GLOB.search(x), not _GLOB.search(y)
    if lx and ly:  # each matches itself and what lies below it
        a, b = x.rstrip("/"), y.rstrip("/")
        return a == b or a.startswith(b + "/") or b.startswith(a + "/")
    if lx or ly:
        path, glob = (x, y) if lx else (y, x)
        path = path.rstrip("/")
        head = _GLOB.split(glob, 1)[0]
        # what the glob matches starts with `head`; what the path matches is the path or below it
        return bool(glob_regex(glob).match(path)) or head.startswith(path + "/") or path.startswith(head)
    hx, hy = _GLOB.split(x, 1)[0], _GLOB.split(y, 1)[0]
    if not (hx.startswith(hy) or hy.startswith(hx)):
        return False
    tx, ty = _tail(x), _tail(y)
    return tx.endswith(ty) or ty.endswith(tx)


def _tail(glob: str) -> str:
    """What every path the glob matches ends with ("" when it also matches what lies below)."""
    if glob.endswith("/"):
        return ""
    return re.split(r"[*?\]]", glob)[-1]
