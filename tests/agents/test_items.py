"""A round's items: parsing `## Item:` sections, and the mechanical check that their Scopes never meet."""

from __future__ import annotations

import re
import threading
import time

import pytest

from agents import planner
from agents.items import Item, disjoint, may_meet, parse_items
from gates.diagnostics import CheckResult
from gates.scope import InvalidStrategy, glob_regex
from orchestrator.engine import Bounded, LocalEngine
from state.history import Usage

ROUND = """\
# Strategy

## Target
Two chapters at once. RESTATE: nothing shared

## Item: first
### Target
Close `Book.hard`.
RESTATE: Book.hard — the book says so
### Scope
- Book/A.lean
### Done when
No sorry.

## Item: second
### Scope
- `Book/B/*.lean`
"""


def test_each_item_reads_the_shared_part_and_its_own_section_alone() -> None:
    first, second = parse_items(ROUND)
    assert (first.name, first.scope, second.name, second.scope) == ("first", ["Book/A.lean"], "second",
                                                                    ["Book/B/*.lean"])
    assert "Two chapters at once." in first.text and "Two chapters at once." in second.text
    assert "RESTATE: Book.hard" in first.text and "RESTATE: Book.hard" not in second.text
    assert "## Item: second" not in first.text and "Book/A.lean" not in second.text


@pytest.mark.parametrize(("text", "why"), [
    (ROUND.replace("## Target\nTwo", "## Scope\n- Book/C.lean\n\n## Target\nTwo"), "before the first"),
    (ROUND.replace("## Item: second", "## Item: first"), "two items are named 'first'"),
    (ROUND.replace("### Scope\n- `Book/B/*.lean`\n", ""), "item 'second': strategy.md has no `## Scope`"),
    (ROUND.replace("## Item: second", "## Item: `x`"), "no backticks"),
    (ROUND.replace("## Item: second", "## Item: ../../x"), None),
])
def test_malformed_items_are_refused(text: str, why: str | None) -> None:
    if why is None:  # a name is data in records and commit trailers, never a path
        assert parse_items(text)[1].name == "../../x"
        return
    with pytest.raises(InvalidStrategy, match=re.escape(why)):
        parse_items(text)


def test_the_planner_may_not_give_more_items_than_workers_nor_a_scope_outside_the_roots() -> None:
    assert [i.name for i in planner.read(ROUND, Usage(), ["Book"], workers=2).items] == ["first", "second"]
    with pytest.raises(InvalidStrategy, match=r"3 items; at most 2 \(\[parallel\] workers\)"):
        planner.read(ROUND.replace("## Target", "## Item: zero\n### Scope\n- Book/Z.lean\n\n## Target", 1),
                     Usage(), ["Book"], workers=2)
    with pytest.raises(InvalidStrategy, match="item 'second': scope entries outside the Lean roots"):
        planner.read(ROUND.replace("Book/B/*.lean", "lakefile.lean"), Usage(), ["Book"], workers=2)
    one = planner.read(ROUND, Usage(), ["Book"], workers=1)  # one Worker: the first Scope, as before
    assert (one.scope, one.items) == (["Book/A.lean"], [])


def _item(name: str, *scope: str) -> Item:
    return Item(name, "", list(scope))


def test_an_item_sharing_a_file_of_the_tree_with_an_earlier_one_is_dropped() -> None:
    kept, dropped = disjoint([_item("a", "Book/A.lean"), _item("b", "Book/**/*.lean"), _item("c", "Book/C/")],
                             ["Book/A.lean", "Book/C/x.lean"])
    assert [i.name for i in kept] == ["a", "c"]
    assert dropped == {"b": "its Scope shares Book/A.lean with item 'a'"}


def test_globs_that_could_both_name_a_file_not_yet_written_meet() -> None:
    """No file of the tree matches both, yet each Worker could create Book/New1.lean: the second is dropped."""
    kept, dropped = disjoint([_item("a", "Book/New*.lean"), _item("b", "Book/*.lean")], ["Book/A.lean"])
    assert [i.name for i in kept] == ["a"] and "could match a path of item 'a'" in dropped["b"]


CASES = [  # `Book/?.lean` and `Book/ab.lean` share no path, but the patterns alone do not show it: they meet
    ("Book/A.lean", "Book/A.lean", True), ("Book/A", "Book/A/x.lean", True), ("Book/A", "Book/AB.lean", False),
    ("Book/A.lean", "Book/*.lean", True), ("Book/A.lean", "Book/Sub/*.lean", False), ("Book/A", "Book/A*/x", True),
    ("Book/*.lean", "Other/*.lean", False), ("Book/*.lean", "Book/*.md", False), ("**/A.lean", "Book/*", True),
    ("Book/X/", "Book/X/*.lean", True), ("Book/[ab].lean", "Book/a.lean", True), ("Book/?.lean", "Book/ab.lean", True),
    ("Book/A/**", "Book/B/**", False), ("Book/**/x.lean", "Book/A/**/y.lean", False),
]


@pytest.mark.parametrize(("x", "y", "meet"), CASES)
def test_may_meet(x: str, y: str, meet: bool) -> None:
    assert may_meet(x, y) is meet and may_meet(y, x) is meet


def test_may_meet_never_says_disjoint_when_a_path_matches_both() -> None:
    """Against brute force over generated paths: a pair said not to meet has no common match."""
    patterns = ["Book/A.lean", "Book/A", "Book/*.lean", "Book/*/", "Book/**", "Book/**/B.lean", "**/*.lean",
                "Book/A*", "Book/[AB].lean", "Book/?.lean", "Book/A/*.md", "Book/AB/**", "Other/", "Book/A/B.lean"]
    segments = ["A", "B", "AB", "A.lean", "B.lean", "x.md", "AB.lean"]
    paths = [f"{r}/{s}" for r in ("Book", "Other") for s in segments]
    paths += [f"{p}/{s}" for p in list(paths) for s in segments]
    paths += [f"Book/{a}/{b}/{c}" for a in ("A", "AB") for b in ("A", "B") for c in ("B.lean", "x.md")]
    for x in patterns:
        for y in patterns:
            both = [p for p in paths if glob_regex(x).match(p) and glob_regex(y).match(p)]
            if both:
                assert may_meet(x, y), (x, y, both[:3])


class Slow:
    """A compiler taking a fixed time per run, counting how many run at once."""

    def __init__(self) -> None:
        self.running = self.peak = 0
        self.lock = threading.Lock()

    def check(self, path: str, module: str) -> CheckResult:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        time.sleep(0.05)
        with self.lock:
            self.running -= 1
        return CheckResult("slow", 0, "", 0.05)

    def build_all(self) -> CheckResult:
        return self.check("", "")

    def probe(self, text: str) -> CheckResult:
        return self.check("", "")

    def read(self, text: str) -> CheckResult:
        return self.check("", "")

    def replay(self, modules: list[str]) -> CheckResult | None:
        return self.check("", "")


def test_compiles_across_workers_take_at_most_max_builds_slots() -> None:
    slow = Slow()
    slots = threading.BoundedSemaphore(2)
    engine: LocalEngine[None] = LocalEngine(6)
    tickets = [engine.submit(f"i{k}", lambda: [Bounded(slow, slots).check("A.lean", "A") for _ in range(3)] and None)
               for k in range(6)]
    for t in tickets:
        engine.collect(t)
    engine.close()
    assert slow.peak == 2 and all(engine.poll(t) for t in tickets)
