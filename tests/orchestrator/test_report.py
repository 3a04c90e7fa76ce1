"""`autoformalize report`: the plot helpers, the data the page shows, its escaping, and the page itself in a
real headless Chromium (Debian's, driven by the playwright package; no browser is ever downloaded)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from gates.census import census
from gates.meaning import closures
from gates.tree import DirTree
from orchestrator.cli import main
from orchestrator.report import build
from orchestrator.report.site import _Entity, coverage, plan_chapters
from orchestrator.report.svg import Axis, Chart, Series, downsample, line_chart, nice_step, scale
from state.atomic import append_line
from state.history import GateVerdict, HistoryRecord, Outcome, Usage, append_record
from state.reviews import Review, Verdict, render
from tests.conftest import BASIC, GIT_ENV, LAKEFILE, git, write

if TYPE_CHECKING:
    from playwright.sync_api import Browser

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
CYCLES = 300  # records in the synthetic history
LEGACY = 40  # the first ones, as the OpenMath reference script wrote them
STATE = "state-files"  # a configured state directory, not the default
EVIL = '<script>alert("pwned")</script> & <b>bold</b>'
SVG = "{http://www.w3.org/2000/svg}"
ROUNDS = {1: range(287, 291), 2: range(297, 301)}  # parallel rounds: their items' cycles


# ---------------------------------------------------------------- the plot helpers


def test_ticks_are_round_and_cover_the_data() -> None:
    assert nice_step(100, 6) == 20 and nice_step(7, 6) == 2 and nice_step(0.9, 6) == 0.2
    assert nice_step(0.5, 6, integer=True) == 1 and nice_step(11, 6, integer=True) == 2
    s = scale([3.0, 97.0], Axis("x"))
    assert (s.lo, s.hi, s.ticks) == (0, 100, [0, 20, 40, 60, 80, 100])
    fixed = scale([0.5, 1.5], Axis("score", lo=-2, hi=2, integer=True))
    assert (fixed.lo, fixed.hi, fixed.ticks) == (-2, 2, [-2, -1, 0, 1, 2])
    assert scale([0.1, 0.3], Axis("usd", lo=0)).ticks == [0, 0.1, 0.2, 0.3]
    one = scale([5.0], Axis("cycle", integer=True))
    assert one.lo < 5 < one.hi and 5 in one.ticks
    assert scale([], Axis("sorries", lo=0)).ticks[0] == 0  # nothing yet: still an axis
    below = scale([-3.0, 10.0], Axis("sorries", lo=0))  # data past a fixed bound widens the axis
    assert below.lo <= -3 and below.ticks[0] == below.lo


def test_downsample_keeps_the_ends_and_the_extremes() -> None:
    points = [(float(i), float(i % 50)) for i in range(10_000)]
    points[4321] = (4321.0, 999.0)  # one spike
    shown = downsample(points, 600)
    assert len(shown) <= 600 and shown[0] == points[0] and shown[-1] == points[-1]
    assert (4321.0, 999.0) in shown
    assert [x for x, _ in shown] == sorted(x for x, _ in shown)
    assert downsample(points[:10], 600) == points[:10]


def chart(points: list[tuple[float, float]], **kw: Any) -> ET.Element:
    c = Chart("c", "Sorries <now>", Axis("cycle", integer=True), Axis("sorries", lo=0),
              [Series("sorries & admits", points)], description="a <b>test</b>", **kw)
    return ET.fromstring(line_chart(c))  # well-formed XML, so every label was escaped


@pytest.mark.parametrize("n", [0, 1, 2, 300, 5_000])
def test_a_line_chart_of_0_1_and_thousands_of_points(n: int) -> None:
    root = chart([(float(i + 1), float(1000 - i % 1003)) for i in range(n)])  # below the axis' 0 from 1001 on
    assert root.get("role") == "img" and root.get("aria-labelledby") == "c-title c-desc"
    assert root.findtext(f"{SVG}title") == "Sorries <now>" and root.findtext(f"{SVG}desc") == "a <b>test</b>"
    line = root.find(f".//{SVG}polyline")
    assert line is not None
    vertices = line.get("points", "").split()
    assert len(vertices) == int(line.get("data-count", "-1")) == min(n, 600)
    assert line.get("data-total") == str(n)
    xs, ys = zip(*(map(float, v.split(",")) for v in vertices), strict=True) if vertices else ((), ())
    area = root.find(f"{SVG}rect[@class='plot-area']")
    assert area is not None
    left, top, width, height = (float(area.get(k, "nan")) for k in ("x", "y", "width", "height"))
    assert all(left <= x <= left + width for x in xs) and all(top <= y <= top + height for y in ys)  # in the plot
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert "cycle" in texts and "sorries" in texts  # axis labels
    assert ("No data yet" in texts) == (n == 0)
    assert len(root.findall(f".//{SVG}circle")) == (n if n <= 60 else 0)  # dots, with tooltips, for few points
    ticks = [t for t in texts if t.replace("k", "").replace(".", "").isdigit()]
    assert len(ticks) >= 4


# ---------------------------------------------------------------- a used repository


def run_git(repo: Path, *args: str, when: datetime | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    if when is not None:
        env |= {"GIT_AUTHOR_DATE": when.isoformat(), "GIT_COMMITTER_DATE": when.isoformat()}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def commit_at(repo: Path, when: datetime, message: str) -> None:
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", message, when=when)


PLAN = """\
# Plan

## Chapter 1: Ordinary differential equations
### 1.1 Existence
- [x] thm 110A
- [x] def 110B
- [ ] thm 110C

## Chapter 2: Numerical methods & <errors>
- [ ] Runge–Kutta & <order> conditions
- [X] Euler

```
- [ ] not a target: inside a code block
```

## Chapters still to plan
- [ ] Chapter 3: Stability
  - [x] A-stability
  - [ ] B-stability
  - [ ] order stars

## Current Target
- [ ] thm 110C
"""

LONG_SLUG = "mvt-" + "-".join(["derivative"] * 14)
LONG_TITLE = "The_mean_value_theorem_needs_" + "differentiability_on_the_open_interval_" * 8

AUDIT = {
    "generated_at": "2026-05-30T10:00:00+00:00",
    "summary": "Audit of the book: <b>not bold</b>",
    "root": "/home/someone/books/numerics",
    "proof_gap": 3,
    "statistics": {"theorems": 12, "definitions": 5},
    "entities": [
        {"id": "thm:110A", "chapter": "1", "lean": ["Book.a"], "formalized": True, "proved": True,
         "faithful": "faithful"},
        {"id": "def:110B", "chapter": "1", "lean": ["Book.b"], "formalized": True, "proved": True,
         "faithful": "stronger"},
        {"id": "thm:110C", "chapter": "1", "lean": ["Book.c"], "formalized": True, "proved": False,
         "faithful": "faithful"},
        {"id": "thm:110D", "chapter": "1", "lean": [], "formalized": False, "proved": False, "faithful": None},
        {"id": "thm:201A", "chapter": "2", "formalized": True},
        {"id": "thm:201B", "chapter": "2", "lean": ["Book.d"], "formalized": True, "proved": True,
         "faithful": "different"},
        {"id": "x"},
        "not an entity",
    ],
}

MORE = """\
namespace Book

theorem two : 1 + 1 = 2 := by
  sorry

theorem three : 1 + 2 = 3 := by
  admit

/-- sorry in a comment does not count -/
theorem four : 2 + 2 = 4 := by
  sorry

end Book
"""


@dataclass
class Expected:
    outcomes: Counter[str] = field(default_factory=Counter)
    spend: float = 0.0
    unpriced: int = 0
    last_sorries: int = 0
    sorries: dict[int, tuple[int, int]] = field(default_factory=dict)  # cycle → (pre, post)


def outcome_of(cycle: int) -> Outcome:
    for every, outcome in ((29, Outcome.INTERRUPTED), (13, Outcome.ERROR), (7, Outcome.REJECTED),
                           (11, Outcome.NO_CHANGE)):
        if cycle % every == 0:
            return outcome
    return Outcome.ACCEPTED


def write_history(path: Path) -> Expected:
    expected = Expected()
    sorries = 400
    for cycle in range(1, LEGACY + 1):
        reverted = cycle % 9 == 0
        after = sorries + 2 if reverted else sorries - 1
        legacy = {"progress_score": -2 if reverted else 1, "cycle": cycle, "pre_sorry_count": sorries,
                  "post_sorry_count": after, "timestamp": (NOW - timedelta(days=90 - cycle)).isoformat(),
                  "summary": f"REVERTED: sorry count increased {sorries}→{after}" if reverted else f"legacy {cycle}",
                  "stuck_on": "", "strategy_recommendation": "go on", "attempts_update": "", "engine": "claude",
                  "faithfulness_flags": []}
        append_line(path, json.dumps(legacy))
        sorries = sorries if reverted else after
        expected.outcomes["legacy"] += 1
        expected.unpriced += 1
        if cycle == 20:
            append_line(path, '{"cycle": 20.5, "progress_score": "a lot"')  # a damaged line, skipped
    for cycle in range(LEGACY + 1, CYCLES + 1):
        outcome = outcome_of(cycle)
        accepted = outcome is Outcome.ACCEPTED
        gates = [GateVerdict(name=g, passed=True, detail="ok") for g in ("scope", "integrity", "sorry", "build")]
        if outcome is Outcome.REJECTED:
            gates[1] = GateVerdict(name="integrity", passed=False, detail="new axiom `cheat` <img src=x onerror=1>")
            gates = gates[:3]
        elif outcome in (Outcome.ERROR, Outcome.INTERRUPTED):
            gates = []
        cost = None if cycle % 17 == 0 else round(0.5 + (cycle % 5) * 0.1, 2)
        costs: dict[str, float | None] = {"planner": 0.25, "worker": None} if cost is None else {"worker": cost}
        finished = NOW - timedelta(days=50) + timedelta(hours=4 * (cycle - LEGACY))
        number = next((n for n, items in ROUNDS.items() if cycle in items), None)
        name = EVIL if cycle == 299 else f"item-{cycle}"
        item = {"round": number, "item": name, "worked_by": "local"} if number else {}
        record = HistoryRecord(
            cycle=cycle, started_at=finished - timedelta(hours=1), finished_at=finished, outcome=outcome,
            gates=gates, pre_sorry_count=sorries, post_sorry_count=sorries - 1 if accepted else sorries,
            progress_score=1 if accepted else -1, summary=EVIL if cycle == 123 else f"cycle {cycle} did things",
            stuck_on="lemma foo" if not accepted else "", error="the Planner gave no Scope twice"
            if outcome is Outcome.ERROR else None, usage={"worker": Usage(input=1000, output=100)}, cost_usd=cost,
            costs=costs, commit=f"{cycle:04d}abcdef0123456789" if accepted else None, **item)
        append_record(path, record)
        expected.sorries[cycle] = (sorries, record.post_sorry_count or 0)
        sorries = record.post_sorry_count or 0
        expected.outcomes[outcome.value] += 1
        expected.spend += 0.25 if cost is None else cost  # the roles whose price is known
        expected.unpriced += cost is None
    expected.last_sorries = sorries
    return expected


@dataclass
class Site:
    repo: Path
    index: Path
    html: str
    expected: Expected


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    repo = tmp_path_factory.mktemp("used") / "book"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    state = repo / STATE
    write(repo, {"lakefile.toml": LAKEFILE, "lean-toolchain": "leanprover/lean4:v4.24.0\n",
                 "Book.lean": "import Book.Basic\n", "Book/Basic.lean": BASIC, "Book/More.lean": MORE,
                 "Other/Outside.lean": "theorem t : True := sorry\n",  # outside the Lean roots
                 "autoformalize.toml": f'[project]\nlean_roots = ["Book"]\nstate_dir = "{STATE}"\n'
                                       'plan = "docs/plan.md"\n',
                 "docs/plan.md": PLAN, f"{STATE}/cycle": f"{CYCLES}\n",
                 f"{STATE}/audit/latest.json": json.dumps(AUDIT)})
    expected = write_history(state / "history.jsonl")
    digest = {name: ds[0] for name, ds in closures(census(DirTree(repo), ["Book"])).items()}
    verdicts = [Review(declaration="Book.two", verdict=Verdict.APPROVE, digest=digest["Book.two"]),
                Review(declaration="Book.double_pos", verdict=Verdict.COMMENT, digest=digest["Book.double_pos"],
                       note=EVIL),
                Review(declaration="Book.a", entity="thm:110A", verdict=Verdict.REJECT, digest="0123456789abcdef")]
    write(repo, {"reviews.toml": "".join(render(r) for r in verdicts)})
    commit_at(repo, NOW - timedelta(days=60), "the book")
    write(repo, {f"{STATE}/issues/stale-lemma.md": "# Stuck on `foo`\n\nNo idea how to prove it.\n",
                 f"{STATE}/issues/gone.md": "# Closed by deleting it\n"})
    commit_at(repo, NOW - timedelta(days=40), "issues")
    write(repo, {f"{STATE}/issues/stale-lemma.md": "# Stuck on `foo`\n\nStill stuck.\n"})
    (state / "issues" / "gone.md").unlink()
    commit_at(repo, NOW - timedelta(days=1), "edit an issue, close another")
    advice = f"# Advice {EVIL}\n\n<img src=x onerror=alert(1)>\n"
    write(repo, {f"{STATE}/issues/consultant_advice_cycle_280.md": advice})
    commit_at(repo, NOW - timedelta(days=3, hours=2), "advice")
    write(repo, {f"{STATE}/issues/fresh.md": "just written, not committed\n",
                 f"{STATE}/issues/{LONG_SLUG}.md": f"# {LONG_TITLE}\n\n{LONG_TITLE}\n"})
    five_hours_ago = (NOW - timedelta(hours=5)).timestamp()
    os.utime(state / "issues" / "fresh.md", (five_hours_ago, five_hours_ago))
    os.utime(state / "issues" / f"{LONG_SLUG}.md", (five_hours_ago, five_hours_ago))
    out = tmp_path_factory.mktemp("site") / "public"
    index = build(repo, out, NOW)
    return Site(repo, index, index.read_text(encoding="utf-8"), expected)


@dataclass
class Row:
    attrs: dict[str, str | None]
    cells: list[str]


class Parsed(HTMLParser):
    """The page's tables (by id: rows of cell texts), its tags and its text, as a browser would read them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.tables: dict[str, list[Row]] = {}
        self.text: list[str] = []
        self._rows: list[Row] | None = None
        self._cell: list[str] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        if tag == "table":
            self._rows = self.tables.setdefault(dict(attrs).get("id") or "", [])
        elif tag == "tr" and self._rows is not None:
            self._rows.append(Row(dict(attrs), []))
        elif tag in ("td", "th") and self._rows:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._rows:
            self._rows[-1].cells.append(" ".join(" ".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._rows = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def rows(self, table: str) -> list[list[str]]:
        return [r.cells for r in self.tables[table]]


def test_the_cycles_their_outcomes_and_the_overview(site: Site) -> None:
    page = Parsed(site.html)
    e = site.expected
    cycles = [r for r in page.tables["cycle-table"] if "data-cycle" in r.attrs]
    assert len(cycles) == CYCLES  # the damaged line is skipped, every record shown
    assert [int(r.attrs["data-cycle"] or 0) for r in cycles] == list(range(CYCLES, 0, -1))  # newest first
    assert Counter(r.attrs["data-outcome"] for r in cycles) == e.outcomes
    head, counts = page.rows("outcome-counts")
    shown = dict(zip(head, counts, strict=True))
    assert shown == {("legacy (no outcome)" if o == "legacy" else o.replace("_", " ")): str(n)
                     for o, n in e.outcomes.items()}
    by_cycle = {int(r.attrs["data-cycle"] or 0): r.cells for r in cycles}
    number, when, outcome, gates, score, sorries, cost, summary = by_cycle[42]
    pre, post = e.sorries[42]
    assert (number, when, outcome, score, sorries) == ("42", "2026-04-12 20:00", "rejected", "-1", f"{pre} → {post}")
    assert pre == post
    assert gates.startswith("2 of 3 passed; failed: integrity") and "new axiom `cheat`" in gates
    assert cost == "$0.70" and summary.startswith("cycle 42 did things") and "Stuck on lemma foo" in summary
    assert by_cycle[43][2:7] == ["accepted", "4 of 4 passed scope: passed ok integrity: passed ok sorry: passed ok "
                                 "build: passed ok", "+1", f"{post} → {post - 1}", "$0.80"]
    assert by_cycle[65][3] == "not run" and "the Planner gave no Scope twice" in by_cycle[65][7]  # an error
    assert by_cycle[51][6] == "≥ $0.25"  # the worker's price is unknown; the planner's is counted
    legacy = by_cycle[9]
    assert legacy[2] == "legacy" and legacy[3] == "—" and legacy[6] == "—" and legacy[7].startswith("REVERTED")
    cards = site.html
    assert f'data-card="Cycle">{CYCLES} <small>{CYCLES} recorded</small>' in cards
    assert 'data-card="Sorries now">3 <small>1 admit</small>' in cards  # the census, inside the Lean roots only
    assert 'data-card="Lean files">3<' in cards
    assert f'data-card="Accepted cycles">{e.outcomes["accepted"]} <small>of {CYCLES}</small>' in cards
    assert f'data-card="Spend">${e.spend:,.2f} <small>{e.unpriced} cycles with an unknown price</small>' in cards
    assert 'data-card="Open issues">4<' in cards
    text = " ".join(page.text)  # the damaged history line and the unreadable entity are named, not hidden
    assert "history.jsonl line 21: not valid JSON" in text
    assert "1 of 8 entities could not be read" in text


def test_each_rounds_items_and_cost(site: Site) -> None:
    page = Parsed(site.html)
    rows = page.tables["round-table"]
    heads = [r.cells for r in rows if r.attrs.get("class") == "round-head"]
    assert heads == [["Round 2: 4 item(s), 2 accepted", "$2.90"],  # newest first: 0.7 + 0.8 + 0.9 + 0.5
                     ["Round 1: 4 item(s), 2 accepted", "≥ $2.25"]]  # cycle 289's Worker has no known price
    items = [r for r in rows if "data-item" in r.attrs]
    assert [r.cells[1] for r in items] == ["297", "298", "299", "300", "287", "288", "289", "290"]
    by_cycle = {int(r.cells[1]): r.cells for r in items}
    assert by_cycle[297] == ["item-297", "297", "no change", "local", "—", "$0.70"]
    assert by_cycle[298] == ["item-298", "298", "accepted", "local", "0298abcdef01", "$0.80"]
    assert by_cycle[287][2] == "rejected" and by_cycle[289][5] == "≥ $0.25" and by_cycle[290][2] == "interrupted"
    assert by_cycle[299][0] == EVIL and by_cycle[299][2] == "error"  # the Planner's item name, shown as text
    assert Counter(r.attrs["data-outcome"] for r in items) == {"accepted": 4, "no_change": 1, "rejected": 1,
                                                               "error": 1, "interrupted": 1}


def test_the_charts_hold_every_cycle(site: Site) -> None:
    svgs = [ET.fromstring(part[:part.index("</svg>") + 6]) for part in ("<svg" + s for s in
                                                                         site.html.split("<svg")[1:])]
    assert [s.get("id") for s in svgs] == ["chart-sorries", "chart-score", "chart-spend", "chart-burndown"]
    lines = {s.get("id"): [(p.get("data-count"), p.get("points", "").count(",")) for p in s.iter(f"{SVG}polyline")]
             for s in svgs[:3]}  # the difficulty panel's burn-down: tests/orchestrator/test_report_difficulty.py
    # Past 200 cycles each score is noise: only their moving mean is drawn.
    assert lines == {"chart-sorries": [(str(CYCLES), CYCLES)], "chart-score": [(str(CYCLES), CYCLES)],
                     "chart-spend": [(str(CYCLES), CYCLES)]}
    legend = [t.text for t in svgs[1].iter(f"{SVG}text") if t.text and t.text.startswith("mean")]
    assert legend == [f"mean of last {CYCLES // 30}"]
    sorries = next(s for s in svgs if s.get("id") == "chart-sorries")
    desc = sorries.findtext(f"{SVG}desc") or ""
    assert desc.startswith(f"Sorry count over {CYCLES} cycles: 399 at cycle 1, {site.expected.last_sorries} at cycle "
                           f"{CYCLES}")
    spend = next(s for s in svgs if s.get("id") == "chart-spend").findtext(f"{SVG}desc") or ""
    assert f"${site.expected.spend:,.0f} at cycle {CYCLES}" in spend


def test_coverage_by_chapter_from_the_plan_and_the_audit(site: Site) -> None:
    page = Parsed(site.html)
    assert page.rows("plan-coverage")[1:] == [
        ["Chapter 1: Ordinary differential equations", "3", "2 (67%)"],
        ["Chapter 2: Numerical methods & <errors>", "2", "1 (50%)"],
        ["Chapter 3: Stability", "3", "1 (33%)"],
        ["Current Target", "1", "0 (0%)"],
        ["All chapters", "9", "4 (44%)"],
    ]
    assert page.rows("entity-coverage")[1:] == [
        ["1", "4", "3 (75%)", "2 (50%)", "2 (50%)", "1", "0", "1"],
        ["2", "2", "2 (100%)", "1 (50%)", "0 (0%)", "0", "1", "1"],
        ["(no chapter)", "1", "0 (0%)", "0 (0%)", "0 (0%)", "0", "0", "1"],
        ["All chapters", "7", "5 (71%)", "3 (43%)", "2 (29%)", "1", "1", "3"],
    ]
    text = " ".join(page.text)
    assert "7 entities: 5 formalized, 3 proved; 4 judged — 2 faithful, 1 stronger, 1 different." in text
    assert "Audit of the book: <b>not bold</b>" in text and "2026-05-30T10:00:00+00:00" in text
    # The audit's own summary, and where the rest is; no raw keys, no path of the machine it ran on.
    assert "statistics.theorems" not in text and "proof_gap" not in text and "/home/someone" not in site.html
    assert f"<code>{STATE}/audit/latest.md</code> beside it" in site.html


def test_plan_chapters_without_headings_or_with_nesting() -> None:
    assert plan_chapters("") == []
    flat = plan_chapters("- [x] a\n- [ ] b\n")[0]
    assert (flat.chapter, flat.targets, flat.done) == ("Plan", 2, 1)
    nested = plan_chapters("## Goals\n- [ ] Part II Analysis\n  - [x] one\n    - [x] deeper\n  - [ ] two\n")
    assert [(c.chapter, c.targets, c.done) for c in nested] == [("Part II Analysis", 2, 1)]
    named = plan_chapters("## Goals\n- [ ] Chapter contents reviewed\n- [x] Ch. 4 done\n- [ ] § 2.3\n")
    assert [(c.chapter, c.targets) for c in named] == [("Goals", 1), ("Ch. 4 done", 1), ("§ 2.3", 1)]


def test_open_issues_with_their_age_from_git(site: Site) -> None:
    rows = Parsed(site.html).rows("issue-table")[1:]
    assert [r[:3] for r in rows] == [
        ["stale-lemma", "40 days", "2026-04-22 added in git"],  # added then, edited since
        ["consultant_advice_cycle_280", "3 days", "2026-05-29 added in git"],
        ["fresh", "5 h", "2026-06-01 file time (not committed)"],
        [LONG_SLUG, "5 h", "2026-06-01 file time (not committed)"],
    ]
    assert rows[0][3].startswith("Stuck on `foo` # Stuck on `foo` Still stuck.")
    assert 'data-issue="gone"' not in site.html  # deleted: closed
    assert 'data-age-days="40"' in site.html


def test_text_from_the_repository_is_shown_as_text(site: Site) -> None:
    page = Parsed(site.html)
    assert page.tags["script"] == 0 and page.tags["img"] == 0 and page.tags["b"] == 0
    text = "".join(page.text)
    assert EVIL in text  # the summary of cycle 123, and the issue's title
    assert f"Advice {EVIL}" in text and "<img src=x onerror=alert(1)>" in text
    assert "new axiom `cheat` <img src=x onerror=1>" in text
    assert site.html.count("&lt;script&gt;") >= 2


def test_a_freshly_initialised_repository(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo()
    assert main(["init", str(repo)]) == 0
    index = build(repo, tmp_path / "out", NOW)
    assert index == tmp_path / "out" / "index.html" and (tmp_path / "out" / "style.css").is_file()
    html = index.read_text(encoding="utf-8")
    page = Parsed(html)
    # The first screen says what to do next, in order, and draws no empty plot.
    steps = html[html.index('<div id="next"'):html.index("</ol>")]
    assert steps.index("plan.md") < steps.index("autoformalize doctor") < steps.index("cycle --dry-run") \
        < steps.index("autoformalize audit")
    assert "2 target(s) are still the template's" in steps and ".prover-state/audit/" in steps
    assert page.tags["svg"] == 0 and "No cycle yet: the plots of the sorries" in html
    assert "No cycle has been recorded yet." in html and "No open issue." in html and "No audit yet" in html
    assert 'data-card="Sorries now">1 <small>0 admits</small>' in html
    # The template's placeholder chapters are not the book's: left out, with a note saying so.
    assert 'id="plan-coverage"' not in html and "Nothing to measure yet" in html
    assert "plan.md: 2 target(s) are still the template" in html
    assert page.rows("open-table")[1:] == [["Book.double_pos", "Book/Basic.lean:8", "1"]]
    # A second build over the first replaces it.
    assert build(repo, tmp_path / "out", NOW + timedelta(days=1)) == index
    assert "2026-06-02 12:00 UTC" in index.read_text(encoding="utf-8")


def test_the_command_writes_the_site_and_warns_about_an_output_inside_the_repository(
        make_repo: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo()
    assert main(["init", str(repo)]) == 0
    capsys.readouterr()
    assert main(["report", "--repo", str(repo), "--out", str(tmp_path / "site")]) == 0
    out = capsys.readouterr()
    assert f"wrote {tmp_path / 'site' / 'index.html'}" in out.out and out.err == ""
    monkeypatch.chdir(repo)
    assert main(["report", "--out", "site"]) == 0
    assert "site is inside the repository; add it to .gitignore" in capsys.readouterr().err
    assert (repo / "site" / "index.html").is_file()


def test_outside_git_issue_ages_come_from_file_times(tmp_path: Path) -> None:
    issue = tmp_path / ".prover-state" / "issues" / "x.md"
    write(tmp_path, {".prover-state/issues/x.md": "# X\n"})
    two_days_ago = (NOW - timedelta(days=2, hours=1)).timestamp()
    os.utime(issue, (two_days_ago, two_days_ago))
    html = build(tmp_path, tmp_path / "site", NOW).read_text(encoding="utf-8")
    assert Parsed(html).rows("issue-table")[1][:3] == ["x", "2 days", "2026-05-30 file time (not committed)"]
    assert "issue ages are file times, not commit dates" in html


# ---------------------------------------------------------------- in a real browser

VIEWPORT = {"width": 1280, "height": 900}
SERIES_RGB = (0x00, 0x72, 0xB2)  # svg.PALETTE[0], the sorry line


def screenshot_dir(tmp_path: Path) -> Path:
    """Where the screenshots go: $REPORT_SCREENSHOT_DIR (to keep them, e.g. as CI artifacts), else tmp_path."""
    chosen = os.environ.get("REPORT_SCREENSHOT_DIR")
    out = Path(chosen) if chosen else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_the_page_in_headless_chromium(site: Site, chromium: Browser, tmp_path: Path) -> None:
    page = chromium.new_page(viewport=VIEWPORT, device_scale_factor=1)
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(site.index.as_uri(), wait_until="load")
    assert problems == []  # no console error: the style sheet loads, the SVG markup parses
    assert all(url.startswith(("file:", "data:")) for url in requests), requests  # nothing from the network
    assert site.index.with_name("style.css").as_uri() in requests

    charts = page.evaluate("""() => [...document.querySelectorAll('svg.chart')].map(svg => {
        const box = svg.getBoundingClientRect();
        return {id: svg.id, width: box.width, height: box.height, label: svg.getAttribute('aria-labelledby'),
                points: [...svg.querySelectorAll('polyline')].map(p => p.points.numberOfItems)};
    })""")
    assert [c["id"] for c in charts] == ["chart-sorries", "chart-score", "chart-spend", "chart-burndown"]
    for c in charts:
        assert c["width"] > 300 and c["height"] > 100, c
    assert [c["points"] for c in charts] == [[CYCLES], [CYCLES], [CYCLES], [CYCLES, 41, 41, 41]]  # and the band
    assert page.evaluate("document.scripts.length") == 0
    assert EVIL in page.inner_text("#cycles")  # shown as text, not run
    rounds = page.evaluate("""() => [...document.querySelectorAll('#round-table tbody')].map(b => ({
        round: b.dataset.round, items: [...b.querySelectorAll('tr[data-item]')].map(r => r.dataset.item),
        height: b.getBoundingClientRect().height}))""")
    assert [r["round"] for r in rounds] == ["2", "1"] and rounds[1]["items"] == [f"item-{c}" for c in ROUNDS[1]]
    assert all(r["height"] > 0 for r in rounds)
    assert EVIL in page.inner_text("#round-table")
    # People's reviews: a person's note shown as text; each reviewed declaration a link to its card.
    assert EVIL in page.inner_text("#people-reviews")
    card = page.locator("#people-reviews a", has_text="Book.two")
    assert card.get_attribute("href") == "http://127.0.0.1:8765/card/Book.two"
    assert page.inner_text("#people-line").startswith("2 declarations reviewed")
    styled = page.evaluate("getComputedStyle(document.querySelector('section')).borderTopStyle")
    assert styled == "solid"  # style.css applied

    # Every table fits the page's width: a long issue name or title wraps rather than running off the side.
    wide = page.evaluate("""() => [...document.querySelectorAll('.scroll')].filter(d => d.scrollWidth > d.clientWidth)
        .map(d => d.firstElementChild.id)""")
    assert wide == [], wide

    # Details on demand: a rejected cycle's failing gate opens on a click.
    detail = page.locator('tr[data-cycle="42"] details.gates pre', has_text="new axiom").first
    assert not detail.is_visible()
    page.locator('tr[data-cycle="42"] details.gates summary').click()
    assert detail.is_visible()

    page.evaluate("window.scrollTo(0, 0)")
    page.locator("#chart-sorries").scroll_into_view_if_needed()
    area = page.evaluate("""() => {
        const r = document.querySelector('#chart-sorries .plot-area').getBoundingClientRect();
        return {x: r.x, y: r.y, width: r.width, height: r.height};
    }""")
    shots = screenshot_dir(tmp_path)
    shot = shots / "report.png"
    page.screenshot(path=str(shot))
    page.screenshot(path=str(shots / "report-full.png"), full_page=True)  # for a person to look at
    page.close()

    width, height, pixels = read_png(shot.read_bytes())
    assert (width, height) == (VIEWPORT["width"], VIEWPORT["height"])
    assert shot.stat().st_size > 20_000
    left, top = int(area["x"]), int(area["y"])
    right, bottom = int(area["x"] + area["width"]), int(area["y"] + area["height"])
    assert 0 <= left < right <= width and 0 <= top < bottom <= height, area
    inside = [pixels(x, y) for y in range(top + 2, bottom - 2) for x in range(left + 2, right - 2)]
    line = sum(1 for p in inside if sum((a - b) ** 2 for a, b in zip(p, SERIES_RGB, strict=True)) < 40 ** 2)
    assert line > area["width"], f"the sorry line covers only {line} pixels of the plot area"
    assert len(Counter(inside)) > 3  # not a blank rectangle: background, grid, line, anti-aliasing


def read_png(data: bytes) -> tuple[int, int, Callable[[int, int], tuple[int, int, int]]]:
    """Width, height and a pixel reader of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + size]
        pos += 12 + size
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks)), width * bpp
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride) if kind else ():
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line

    def pixel(x: int, y: int) -> tuple[int, int, int]:
        row = rows[y]
        return row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]

    return width, height, pixel


def test_coverage_rows_of_several_books_are_per_book() -> None:
    rows = coverage([_Entity(id="Tao/thm:1.1", book="Tao", chapter="1", formalized=True),
                     _Entity(id="Rudin/thm:1.1", book="Rudin", chapter="1"),
                     _Entity(id="Tao/thm:1.2", book="Tao", chapter="1", formalized=True, proved=True)])
    assert [(c.chapter, c.entities, c.formalized, c.proved) for c in rows] == [("Tao · 1", 2, 2, 1),
                                                                               ("Rudin · 1", 1, 0, 0)]


def test_a_long_list_of_open_issues_is_folded(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo()
    assert main(["init", str(repo)]) == 0
    write(repo, {f".prover-state/issues/issue-{n:02d}.md": f"# Issue {n}\n" for n in range(90)})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "90 issues, as OpenMath has")
    html = build(repo, tmp_path / "out", NOW).read_text(encoding="utf-8")
    folded = html[html.index('<details class="long"><summary>90 open issues, oldest first: show them</summary>'):]
    assert len(Parsed(folded).rows("issue-table")) == 91  # all there, folded under one line
    assert '<div id="next"' not in build_after_a_cycle(repo, tmp_path)


def build_after_a_cycle(repo: Path, tmp_path: Path) -> str:
    """The page once a cycle is recorded: no more first steps."""
    append_record(repo / ".prover-state" / "history.jsonl", HistoryRecord(
        cycle=1, started_at=NOW - timedelta(hours=1), finished_at=NOW, outcome=Outcome.NO_CHANGE, gates=[],
        pre_sorry_count=1, post_sorry_count=1, progress_score=0, summary="nothing"))
    return build(repo, tmp_path / "after", NOW).read_text(encoding="utf-8")
