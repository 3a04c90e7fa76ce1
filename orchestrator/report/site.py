"""`autoformalize report`: a static HTML dashboard made from the repository's files alone.

`gather` reads the state files, the plan, the latest audit and the Lean census into a `Report`; `render`
turns it into one page (the template `templates/index.html`, plots as inline SVG, no script); `build`
writes the page and its style sheet. Every text taken from the repository (summaries and issues are
model output) is escaped before it reaches the page.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html import escape
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from audit import people
from difficulty.forecast import Forecast
from gates.census import Census, census
from gates.meaning import closures
from gates.size import large
from gates.tree import DirTree
from orchestrator import plan
from orchestrator.blame import SorryAge, persistent
from orchestrator.config import Config, load_config
from orchestrator.git import Git, GitError
from orchestrator.outlook import ahead
from orchestrator.report import svg
from orchestrator.report.difficulty import panel
from orchestrator.verdicts import current
from state.atomic import write_all
from state.errors import UsageError
from state.files import Linked, last_cycle, open_issues, read_bytes, read_text
from state.history import GateVerdict, History, HistoryRecord, Outcome, cached_share, read_history
from state.paths import StatePaths
from state.prover_jobs import ProverJob, read_jobs
from state.reviews import Reviews, parse

PERSISTENT_SHOWN = 25
OPEN_SHOWN = 200
SHOWN_OPEN = 10  # rows of a list shown unfolded; a longer one is folded under a line saying how long it is

TEMPLATES = files("orchestrator.report") / "templates"
ROLLING = 10  # cycles in the moving average of the score, at least
RAW_SCORES_UP_TO = 200  # cycles up to which each score is drawn, beside the average; past that, it is noise
ISSUE_TEXT_LIMIT = 20_000  # characters of an issue shown; the rest is cut with a note
NO_CHAPTER = "(no chapter)"


# ---------------------------------------------------------------- the data


@dataclass(frozen=True)
class CycleRow:
    cycle: int
    finished_at: datetime | None
    outcome: str | None  # None: a record of the reference script, which kept no outcome or gates
    gates: list[GateVerdict]
    score: int | None  # None: no Evaluator scored it
    pre_sorries: int | None
    post_sorries: int | None
    cost_usd: float | None  # None: the price of some role is unknown
    spent_usd: float  # what is known to have been spent: the cost, or the sum of the roles with a price
    summary: str
    details: list[tuple[str, str]]  # the record's other readable fields, for the details on demand

    @classmethod
    def of(cls, r: HistoryRecord) -> CycleRow:
        details = [(label, text) for label, text in (
            ("Stuck on", r.stuck_on), ("Error", r.error or ""), ("Restructuring", r.restructuring or ""),
            ("Pivot from", r.pivot or ""), ("Consultant advice", r.consultant or ""),
            ("Worker stopped", r.worker_stop or ""), ("Scope", ", ".join(r.scope)),
            ("Changed files", ", ".join(r.changed_files)), ("Recommendation", r.strategy_recommendation),
            ("Attempts", r.attempts_update)) if text]
        return cls(r.cycle, r.finished_at, r.outcome.value if r.outcome else None, list(r.gates), r.score,
                   r.pre_sorry_count, r.post_sorry_count, r.cost_usd, r.spent_usd, r.summary, details)

    @property
    def sorries_after(self) -> int | None:
        """The branch's count after the cycle; a reverted reference-script cycle left the count it found."""
        if self.outcome is None and self.summary.startswith("REVERTED"):
            return self.pre_sorries
        return self.post_sorries if self.post_sorries is not None else self.pre_sorries


@dataclass(frozen=True)
class RoundRow:
    """A parallel round: its items' records (`round`, `item`), in the order they landed or were rejected."""

    round: int
    items: list[HistoryRecord]

    @property
    def cost_usd(self) -> float | None:
        """What the round cost, its items together; None when the price of some role is unknown."""
        costs = [r.cost_usd for r in self.items]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    @property
    def spent_usd(self) -> float:
        return sum(r.spent_usd for r in self.items)


def rounds(records: Sequence[HistoryRecord]) -> list[RoundRow]:
    """Every parallel round the history holds, in the order its first record was written."""
    by_round: dict[int, list[HistoryRecord]] = {}
    for r in records:
        if r.round is not None:
            by_round.setdefault(r.round, []).append(r)
    return [RoundRow(n, items) for n, items in by_round.items()]


@dataclass(frozen=True)
class PlanChapter:
    chapter: str
    targets: int
    done: int


@dataclass(frozen=True)
class ChapterCoverage:
    chapter: str
    entities: int
    formalized: int
    proved: int
    faithful: int
    stronger: int
    different: int

    @property
    def judged(self) -> int:
        return self.faithful + self.stronger + self.different


@dataclass(frozen=True)
class AuditSummary:
    path: str
    when: str | None
    summary: str  # the audit's own headline figures
    overlap: tuple[OverlapRow, ...] = ()  # `audit --mathlib`'s proofs and overlaps per book and chapter
    successors: tuple[SuccessorRow, ...] = ()  # `audit --successors`' verdicts per book and chapter
    rows: tuple[dict[str, Any], ...] = ()  # its entities as the JSON holds them, with the judges' verdicts
    rubric: str = ""  # what the judges were asked with
    protocols: tuple[str, ...] = ()  # the judges' protocols it ran


class OverlapRow(BaseModel):
    """One book and chapter of `mathlib_overlap.books` in the audit; a chapter `by` file is its Lean folder."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    book: str | None = None
    chapter: str = ""
    by: str = "entity"
    proofs: int = 0
    overlap: int = 0


class SuccessorRow(BaseModel):
    """One book and chapter of `successors.books` in the audit: how many theorems tried have each verdict."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    book: str | None = None
    chapter: str = ""
    by: str = "entity"
    tried: int = 0
    tested: int = 0
    weak: int = Field(0, alias="weakly tested")
    untested: int = 0
    no_users: int = Field(0, alias="no users")


@dataclass(frozen=True)
class IssueRow:
    slug: str
    title: str
    text: str
    added_at: datetime
    from_git: bool  # False: the file's modification time (not committed, or no git)


@dataclass(frozen=True)
class Overview:
    cycle: int
    sorries: int
    admits: int
    lean_files: int
    spend_usd: float
    unpriced: int  # records with a role whose price is unknown: the spend leaves that role out
    outcomes: dict[str, int]  # outcome (or "legacy") → records
    cached: float | None = None  # share of the input tokens read from the prompt cache


@dataclass(frozen=True)
class Report:
    name: str
    generated_at: datetime
    overview: Overview
    cycles: list[CycleRow]  # in the order of history.jsonl
    plan: list[PlanChapter]
    coverage: list[ChapterCoverage]  # from the audit's entities; empty without an audit
    audit: AuditSummary | None
    issues: list[IssueRow]  # oldest first
    problems: list[str]
    prover_jobs: list[ProverJob] = field(default_factory=list)  # in the order submitted
    persistent: list[SorryAge] = field(default_factory=list)  # sorries unchanged for sorry_age_days, oldest first
    large: list[tuple[str, int, bool]] = field(default_factory=list)  # file, lines, over the cap (else the warning)
    holes: list[tuple[str, str, int]] = field(default_factory=list)  # declaration, file:line, sorries and admits
    axioms: list[tuple[str, str]] = field(default_factory=list)  # the project's own axioms: name, file:line
    rounds: list[RoundRow] = field(default_factory=list)  # the parallel rounds, oldest first
    plan_file: str = "plan.md"
    unfilled: int = 0  # plan targets still the template's placeholders
    audit_dir: str = ".prover-state/audit"
    forecast: Forecast | None = None  # the open targets' difficulty and what is left (`autoformalize forecast`)
    people: dict[str, Any] | None = None  # people's verdicts against the judges' (`audit.people.section`)


@dataclass
class Unlinked:
    """The working tree as the dashboard reads it: a file reached through a symbolic link is left out, never
    followed (it could name any file the report's process may read)."""

    tree: DirTree

    def files(self) -> list[str]:
        root = self.tree.root
        return [p for p in self.tree.files()
                if not any((root / "/".join(p.split("/")[:i])).is_symlink() for i in range(1, p.count("/") + 2))]

    def read(self, path: str) -> bytes:
        data = read_bytes(self.tree.root / path)
        if data is None:
            raise FileNotFoundError(path)
        return data


def gather(repo: Path, now: datetime) -> Report:
    """Everything the page shows, from the repository's files alone: state files and the plan never read through
    a symbolic link (`state.files`), nor a Lean file (`Unlinked`)."""
    config = load_config(repo)
    paths = config.state(repo)
    problems: list[str] = []
    history = _unless_linked(lambda: read_history(paths.history), History(), problems)
    problems += history.problems
    tree = census(Unlinked(DirTree(repo)), config.project.lean_roots)
    problems += tree.problems
    try:
        cycle = last_cycle(paths, (r.cycle for r in history.records))
    except UsageError as e:  # the counter unreadable, or the task results' folder a link
        cycle = max((r.cycle for r in history.records), default=0)
        problems.append(str(e))
    rows = [CycleRow.of(r) for r in history.records]
    outcomes = Counter(row.outcome or "legacy" for row in rows)
    overview = Overview(cycle, tree.total_sorries, tree.total_admits, len(tree.files),
                        sum(r.spent_usd for r in rows), sum(1 for r in rows if r.cost_usd is None),
                        dict(outcomes), cached_share(history.records))
    plan_text = _unless_linked(lambda: read_text(repo / config.project.plan), None, problems)
    nothing: tuple[list[_Entity], AuditSummary | None] = ([], None)
    entities, audit = _unless_linked(lambda: _read_audit(paths, problems), nothing, problems)
    try:
        jobs = read_jobs(paths.prover_jobs).jobs
    except UsageError as e:
        jobs = []
        problems.append(str(e))
    try:  # the working tree's sorries; ages the loop already blamed come from its cache
        old = persistent(Git(repo), None, tree, now, config.housekeeping.sorry_age_days, keep=False)
    except GitError as e:
        old = []
        problems.append(f"the ages of the sorries could not be read: {e}")
    gates = config.gates
    big = [(p, n, n > gates.file_cap_lines) for p, n in large(tree, gates.file_warn_lines)]
    unfilled = plan.placeholders(plan_text or "")
    if unfilled:
        problems.append(f"{config.project.plan}: {unfilled} target(s) are still the template's placeholders "
                        "(`- [ ] Chapter 1: …`); they are left out of the coverage")
    holes = [(d.name or d.kind, f"{path}:{d.line}", d.holes) for path, d in tree.decls() if d.holes]
    holes += [(name, path, 0) for path, name in tree.hidden_holes()]
    axioms = [(d.name or "axiom", f"{path}:{d.line}") for path, d in tree.axioms()]
    reviewed = _people(repo, config, tree, audit)
    return Report(repo.name, now, overview, rows, plan_chapters(plan_text or ""), coverage(entities), audit,
                  _unless_linked(lambda: _issues(repo, paths, problems), [], problems), problems, jobs, old, big, holes,
                  axioms, rounds(history.records), config.project.plan, unfilled, paths.relative(paths.audit),
                  ahead(config, repo, history.records, tree), reviewed)


def _people(repo: Path, config: Config, tree: Census, audit: AuditSummary | None) -> dict[str, Any]:
    """People's verdicts as the working tree holds them, against the latest audit's judges: each verdict holds while
    its declaration means now what it meant when reviewed (the census read here), whenever the audit ran."""
    file = config.gates.reviews
    try:
        try:
            found = current(Git(repo), file)
        except GitError:  # not a repository: the file alone, no commit to name a reviewer
            text = read_text(repo / file)
            found = parse(text, file) if text is not None else Reviews()
    except Linked as e:
        found = Reviews(problems=[str(e)])
    files = {name: path for path, d in tree.decls() if (name := d.name)}
    digests = closures(tree) if found.reviews else {}  # hashing every declaration: only when there is a verdict
    return people.section(audit.rows if audit else (), found.reviews, digests,
                          rubric=audit.rubric if audit else "", protocols=audit.protocols if audit else (),
                          port=config.review.port, files=files, source=file, problems=found.problems)


T = TypeVar("T")
Row = TypeVar("Row", bound=BaseModel)


def _unless_linked(read: Callable[[], T], instead: T, problems: list[str]) -> T:
    """What `read` returns; `instead`, with the reason among the problems, when it met a symbolic link (or another
    file that is not regular) where a state file or the plan should be: the page never shows what one names."""
    try:
        return read()
    except Linked as e:
        problems.append(str(e))
        return instead


# ---------------------------------------------------------------- the plan

_CHAPTERISH = re.compile(r"^(?:chapter|ch\.|part|appendix|§)\s*(?:\d|[IVXLC]+\b)|^\d+(?:\.\d+)*[.:)]?\s", re.I)


def plan_chapters(text: str) -> list[PlanChapter]:
    """The `- [ ]`/`- [x]` targets of the plan, counted per chapter, in the plan's order.

    A target belongs to the outermost heading that names a chapter ("Chapter 3", "Part II", "3 …"); else
    to its top-level item when nested; else a target that names a chapter is its own chapter; else to the
    nearest heading. Only leaves count: an item with nested items groups them, and is not a target itself.
    """
    items = plan.items(text)
    counts: dict[str, list[int]] = {}
    parent: plan.Item | None = None
    for i, item in enumerate(items):
        if parent is None or item.indent <= parent.indent or item.headings != parent.headings:
            parent = item
        has_children = i + 1 < len(items) and items[i + 1].indent > item.indent
        if has_children:
            continue
        tally = counts.setdefault(_chapter_of(item, parent)[:160], [0, 0])
        tally[0] += 1
        tally[1] += item.done
    return [PlanChapter(name, targets, done) for name, (targets, done) in counts.items()]


def _chapter_of(item: plan.Item, parent: plan.Item) -> str:
    chapterish = [h for h in item.headings if _CHAPTERISH.match(h)]
    if chapterish:
        return chapterish[0]
    if parent is not item:
        return parent.text
    if _CHAPTERISH.match(item.text):
        return item.text
    return item.headings[-1] if item.headings else "Plan"


# ---------------------------------------------------------------- the audit


class _Entity(BaseModel):
    """One entity of `<state>/audit/latest.json`; every key optional."""

    model_config = ConfigDict(extra="ignore")

    id: str = ""
    book: str | None = None
    chapter: str | None = None
    lean: list[str] = []
    formalized: bool = False
    proved: bool = False
    faithful: str | bool | None = None


def _read_audit(paths: StatePaths, problems: list[str]) -> tuple[list[_Entity], AuditSummary | None]:
    path = paths.audit / "latest.json"
    text = read_text(path)
    if text is None:
        return [], None
    where = paths.relative(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        problems.append(f"{where}: not valid JSON ({e}); the audit is left out")
        return [], None
    if not isinstance(data, dict):
        problems.append(f"{where}: not a JSON object; the audit is left out")
        return [], None
    raw = data.get("entities") or []
    entities: list[_Entity] = []
    bad = 0
    for item in raw if isinstance(raw, list) else []:
        try:
            entities.append(_Entity.model_validate(item))
        except ValidationError:
            bad += 1
    if not isinstance(raw, list):
        problems.append(f"{where}: `entities` is not a list; coverage by entity is left out")
    elif bad:
        problems.append(f"{where}: {bad} of {len(raw)} entities could not be read; coverage counts the rest")
    when = next((str(data[k]) for k in ("generated_at", "finished_at", "created_at", "timestamp") if data.get(k)),
                None)
    summary = data.get("summary") if isinstance(data.get("summary"), str) else ""
    overlap = _rows(data.get("mathlib_overlap"), OverlapRow, "mathlib_overlap", where, problems)
    tested = _rows(data.get("successors"), SuccessorRow, "successors", where, problems)
    judged = data.get("faithfulness")
    judged = judged if isinstance(judged, dict) else {}
    ran = tuple(p for p in people.PROTOCOLS if isinstance(judged.get(p), dict))
    kept = tuple(item for item in raw if isinstance(item, dict)) if isinstance(raw, list) else ()
    return entities, AuditSummary(where, when, summary or "", overlap, tested, kept, str(judged.get("rubric") or ""),
                                  ran)


def _rows(section: object, model: type[Row], name: str, where: str, problems: list[str]) -> tuple[Row, ...]:
    """The readable rows of an audit section's `books`; each row that is not is named among the problems."""
    if not isinstance(section, dict):
        return ()
    books = section.get("books")
    rows = []
    for item in books if isinstance(books, list) else []:
        try:
            rows.append(model.model_validate(item))
        except ValidationError:
            problems.append(f"{where}: a row of `{name}.books` could not be read; it is left out")
    return tuple(rows)


def coverage(entities: Sequence[_Entity]) -> list[ChapterCoverage]:
    """Per chapter, in first-seen order: entities formalized, proved, and as the faithfulness judge found them."""
    chapters: dict[str, list[_Entity]] = {}
    for e in entities:
        chapter = (e.chapter or "").strip() or NO_CHAPTER
        chapters.setdefault(f"{e.book} · {chapter}" if e.book else chapter, []).append(e)
    out = []
    for name, group in chapters.items():
        verdicts = Counter("faithful" if e.faithful is True else "different" if e.faithful is False else e.faithful
                           for e in group)
        out.append(ChapterCoverage(name, len(group), sum(e.formalized for e in group), sum(e.proved for e in group),
                                   verdicts["faithful"], verdicts["stronger"], verdicts["different"]))
    return out


# ---------------------------------------------------------------- issues


def _issues(repo: Path, paths: StatePaths, problems: list[str]) -> list[IssueRow]:
    found = open_issues(paths)
    if not found:
        return []
    added = _added_dates(repo, paths, problems)
    rows = []
    for issue in found:
        text = issue.text()
        rel = paths.relative(issue.path)
        when = added.get(rel)
        rows.append(IssueRow(issue.slug, _title(text, issue.slug), text,
                             when or datetime.fromtimestamp(issue.mtime, UTC), when is not None))
    return sorted(rows, key=lambda i: (i.added_at, i.slug))


def _added_dates(repo: Path, paths: StatePaths, problems: list[str]) -> dict[str, datetime]:
    """When each file under `<state>/issues` was last added, by the author date of the commit adding it."""
    try:
        git = Git(repo)
        if not git.run("rev-list", "-n", "1", "--all"):
            return {}  # no commit yet
        out = git.run("-c", "core.quotepath=off", "log", "--no-renames", "--diff-filter=A", "--format=%x00%aI",
                      "--name-only", "--", paths.relative(paths.issues))
    except GitError as e:
        problems.append(f"issue ages are file times, not commit dates: {e}")
        return {}
    dates: dict[str, datetime] = {}
    for entry in out.split("\x00")[1:]:
        if not entry.strip():
            continue
        stamp, *names = entry.strip().splitlines()
        when = datetime.fromisoformat(stamp).astimezone(UTC)
        for name in filter(None, (n.strip() for n in names)):
            dates.setdefault(name, when)  # newest first: the last time it was added
    return dates


def _title(text: str, fallback: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:160]
    return fallback


# ---------------------------------------------------------------- the page


def build(repo: Path, out: Path, now: datetime) -> Path:
    """Write the report of `repo` into the directory `out` (index.html and style.css); return the page's path."""
    page = render(gather(repo, now))
    files: dict[Path, str | bytes] = {out / "style.css": (TEMPLATES / "style.css").read_text(encoding="utf-8"),
                                      out / "index.html": page}
    write_all(files)  # both or neither
    for path in files:
        path.chmod(0o644)  # a web server, or a person other than the owner, reads them
    return out / "index.html"


def render(report: Report) -> str:
    template = Template((TEMPLATES / "index.html").read_text(encoding="utf-8"))
    return template.substitute(
        title=_e(f"autoformalize — {report.name}"),
        generated=_e(report.generated_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")),
        generated_iso=_e(report.generated_at.astimezone(UTC).isoformat()),
        overview=_next_steps(report) + _overview(report),
        charts=_charts(report.cycles) if report.cycles else
        '<p class="note" id="no-cycles">No cycle yet: the plots of the sorries, the scores and the spend start with '
        "the first cycle.</p>",
        difficulty=panel(report.forecast, [(float(r.cycle), float(n)) for r in sorted(report.cycles,
                                                                                      key=lambda r: r.cycle)
                                           if (n := r.sorries_after) is not None]),
        coverage=_coverage(report.plan, report.coverage),
        outcomes=_outcomes(report.overview.outcomes),
        cycles=_cycles(report.cycles),
        rounds=_rounds(report.rounds),
        issues=_issue_list(report.issues, report.generated_at),
        audit=_audit(report.audit, report.coverage),
        people=_people_section(report.people, report.audit),
        prover=_prover(report.prover_jobs),
        watch=_watch(report.persistent, report.large),
        open=_open(report.holes, report.axioms),
        notes=_notes(report.problems),
    )


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _next_steps(r: Report) -> str:
    """On a project no cycle has run in, what to do next, in order; nothing once the loop runs."""
    if r.cycles:
        return ""
    describe = (f"Describe the book in <code>{_e(r.plan_file)}</code>: a <code>- [ ]</code> line for each "
                "definition or theorem to formalize, under a heading per chapter"
                + (f" ({r.unfilled} target(s) are still the template's)" if r.unfilled else "") + "; then commit it.")
    steps = [describe if r.unfilled or not r.plan else "",
             "Check the setup: <code>autoformalize doctor</code> (the toolchain, the sandbox, the keys, the remote, "
             "then every gate tried on your Lean).",
             "See what a cycle would do and cost: <code>autoformalize cycle --dry-run</code> (it names anything "
             "that would stop a cycle); then run one, <code>autoformalize cycle</code>, or keep them coming with "
             "<code>autoformalize run</code>.",
             "" if r.audit else f"Measure the book: <code>autoformalize audit</code>, then commit "
             f"<code>{_e(r.audit_dir)}/</code> to see the coverage by chapter here.",
             "Build this page again: <code>autoformalize report --out DIR</code>."]
    items = "".join(f"<li>{s}</li>" for s in steps if s)
    return (f'<div id="next" class="next"><h3>No cycle has run yet. What to do next</h3><ol>{items}</ol></div>')


def _collapsed(table: str, count: int, noun: str) -> str:
    """A list longer than `SHOWN_OPEN` rows, folded under a line saying how long it is."""
    if count <= SHOWN_OPEN:
        return table
    return f'<details class="long"><summary>{count} {noun}: show them</summary>{table}</details>'


def _overview(r: Report) -> str:
    o = r.overview
    accepted = o.outcomes.get("accepted", 0)
    cards = [
        ("Cycle", str(o.cycle), f"{len(r.cycles)} recorded"),
        ("Sorries now", str(o.sorries), f"{o.admits} admit" + ("" if o.admits == 1 else "s")),
        ("Lean files", str(o.lean_files), ""),
        ("Accepted cycles", str(accepted), f"of {len(r.cycles)}" if r.cycles else ""),
        ("Spend", f"${o.spend_usd:,.2f}", f"{o.unpriced} cycles with an unknown price" if o.unpriced else ""),
        ("Open issues", str(len(r.issues)), ""),
        ("Cached input", "—" if o.cached is None else f"{o.cached:.0%}", "of the input tokens, from the prompt cache"),
    ]
    items = "".join(f'<div><dt>{_e(label)}</dt><dd data-card="{_e(label)}">{_e(value)}'
                    + (f" <small>{_e(note)}</small>" if note else "") + "</dd></div>"
                    for label, value, note in cards)
    return f'<dl class="cards">{items}</dl>'


def _charts(rows: Sequence[CycleRow]) -> str:
    ordered = sorted(rows, key=lambda r: r.cycle)  # stable: retried cycle numbers keep their file order
    sorries = [(float(r.cycle), float(n)) for r in ordered if (n := r.sorries_after) is not None]
    scores = [(float(r.cycle), float(r.score)) for r in ordered if r.score is not None]
    window = max(ROLLING, len(scores) // 30)
    mean = _moving_mean(scores, window)
    spent, total = [], 0.0
    for r in ordered:
        total += r.spent_usd
        spent.append((float(r.cycle), round(total, 4)))
    cycle_axis = svg.Axis("cycle", integer=True)
    charts = [
        svg.Chart("chart-sorries", "Sorries after each cycle", cycle_axis, svg.Axis("sorries", lo=0, integer=True),
                  [svg.Series("sorries", sorries, svg.PALETTE[0], unit="sorries")],
                  _describe("Sorry count", sorries, svg.fmt_number)),
        svg.Chart("chart-score", "Progress score of each cycle", cycle_axis,
                  svg.Axis("score", lo=-2, hi=2, integer=True),
                  ([svg.Series("score", scores, "#9bb8cf", 1.2)] if len(scores) <= RAW_SCORES_UP_TO else [])
                  + [svg.Series(f"mean of last {window}", mean, svg.PALETTE[1], 2.2)],
                  _describe("Progress score", scores, svg.fmt_number), legend=True),
        svg.Chart("chart-spend", "Cumulative spend", cycle_axis, svg.Axis("USD", lo=0, format=svg.fmt_usd),
                  [svg.Series("spend", spent, svg.PALETTE[2], unit="spent so far")],
                  _describe("Cumulative spend", spent, svg.fmt_usd)),
    ]
    notes = {
        "chart-sorries": "Sorries plus admits on the branch after the cycle, from history.jsonl.",
        "chart-score": f"The Evaluator's score, −2 to 2: its mean over the last {window} cycles"
                       + (", and each cycle's." if len(scores) <= RAW_SCORES_UP_TO else "."),
        "chart-spend": "Model spend summed over cycles; a role whose price is unknown adds nothing.",
    }
    figures = "".join(f'<figure><figcaption><h3>{_e(c.title)}</h3><p>{_e(notes[c.id])}</p></figcaption>'
                      f"{svg.line_chart(c)}</figure>" for c in charts)
    return f'<div class="charts">{figures}</div>'


def _moving_mean(points: Sequence[svg.Point], window: int) -> list[svg.Point]:
    out, total = [], 0.0
    for i, (x, y) in enumerate(points):
        total += y - (points[i - window][1] if i >= window else 0.0)
        out.append((x, round(total / min(i + 1, window), 3)))
    return out


def _describe(what: str, points: Sequence[svg.Point], fmt: Callable[[float], str]) -> str:
    if not points:
        return f"{what}: no cycles recorded yet."
    (x0, y0), (x1, y1) = points[0], points[-1]
    return (f"{what} over {len(points)} cycles: {fmt(y0)} at cycle {x0:.0f}, {fmt(y1)} at cycle {x1:.0f}; "
            f"lowest {fmt(min(y for _, y in points))}, highest {fmt(max(y for _, y in points))}.")


def _pct(part: int, whole: int) -> str:
    share = 100 * part / whole if whole else 0
    return (f'{part} ({share:.0f}%)<span class="bar" role="presentation"><span style="width:{share:.0f}%">'
            "</span></span>")


def _coverage(plan: Sequence[PlanChapter], entities: Sequence[ChapterCoverage]) -> str:
    out = []
    if entities:
        total = ChapterCoverage("All chapters", *(sum(getattr(c, f) for c in entities) for f in (
            "entities", "formalized", "proved", "faithful", "stronger", "different")))
        body = "".join(_entity_row(c) for c in entities)
        out.append('<h3>Textbook entities (from the latest audit)</h3><div class="scroll">'
                   '<table id="entity-coverage"><thead><tr><th scope="col">Chapter</th>'
                   '<th scope="col" class="num">Entities</th><th scope="col" class="num">Formalized</th>'
                   '<th scope="col" class="num">Proved</th><th scope="col" class="num">Judged faithful</th>'
                   '<th scope="col" class="num">Stronger</th><th scope="col" class="num">Different</th>'
                   '<th scope="col" class="num">Not judged</th></tr></thead>'
                   f"<tbody>{body}</tbody><tfoot>{_entity_row(total, 'th')}</tfoot></table></div>")
    if plan:
        rows = "".join(f'<tr><th scope="row">{_e(c.chapter)}</th><td class="num">{c.targets}</td>'
                       f'<td class="num">{_pct(c.done, c.targets)}</td></tr>' for c in plan)
        targets, done = sum(c.targets for c in plan), sum(c.done for c in plan)
        out.append('<h3>Targets of the plan</h3><div class="scroll"><table id="plan-coverage"><thead><tr>'
                   '<th scope="col">Chapter</th><th scope="col" class="num">Targets</th>'
                   f'<th scope="col" class="num">Checked off</th></tr></thead><tbody>{rows}</tbody>'
                   f'<tfoot><tr><th scope="row">All chapters</th><td class="num">{targets}</td>'
                   f'<td class="num">{_pct(done, targets)}</td></tr></tfoot></table></div>')
    if not out:
        return ('<p class="note">Nothing to measure yet: the plan has no <code>- [ ]</code> targets and no audit '
                "has listed the book's entities.</p>")
    return "".join(out)


def _entity_row(c: ChapterCoverage, head: str = "th") -> str:
    cells = [_pct(c.formalized, c.entities), _pct(c.proved, c.entities), _pct(c.faithful, c.entities),
             str(c.stronger), str(c.different), str(c.entities - c.judged)]
    return (f'<tr><{head} scope="row">{_e(c.chapter)}</{head}><td class="num">{c.entities}</td>'
            + "".join(f'<td class="num">{cell}</td>' for cell in cells) + "</tr>")


def _outcomes(outcomes: dict[str, int]) -> str:
    if not outcomes:
        return '<p class="note">No cycle has been recorded yet.</p>'
    order = ["accepted", "rejected", "no_change", "error", "interrupted", "legacy"]
    names = sorted(outcomes, key=lambda o: order.index(o) if o in order else len(order))
    head = "".join(f'<th scope="col" class="num">{_e(_outcome_label(o))}</th>' for o in names)
    cells = "".join(f'<td class="num" data-outcome="{_e(o)}">{outcomes[o]}</td>' for o in names)
    return (f'<table id="outcome-counts"><caption>Cycles by outcome</caption><thead><tr>{head}</tr></thead>'
            f"<tbody><tr>{cells}</tr></tbody></table>")


def _outcome_label(outcome: str) -> str:
    return "legacy (no outcome)" if outcome == "legacy" else outcome.replace("_", " ")


def _cycles(rows: Sequence[CycleRow]) -> str:
    if not rows:
        return ""
    body = "".join(_cycle_row(r) for r in reversed(rows))
    return ('<h3>Every cycle, newest first</h3><div class="scroll"><table id="cycle-table"><thead><tr>'
            '<th scope="col" class="num">Cycle</th><th scope="col">Finished (UTC)</th><th scope="col">Outcome</th>'
            '<th scope="col">Gates</th><th scope="col" class="num">Score</th><th scope="col" class="num">Sorries</th>'
            '<th scope="col" class="num">Cost</th><th scope="col">Summary</th></tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _rounds(rounds: Sequence[RoundRow]) -> str:
    """Each round's items (newest round first): name, outcome, engine, commit, cost; and the round's cost."""
    if not rounds:
        return ""
    body = ""
    for rr in reversed(rounds):
        landed = sum(1 for r in rr.items if r.outcome is Outcome.ACCEPTED)
        body += (f'<tbody data-round="{rr.round}"><tr class="round-head"><th scope="rowgroup" colspan="5">'
                 f"Round {rr.round}: {len(rr.items)} item(s), {landed} accepted</th>"
                 f'<td class="num" data-round-cost="{rr.round}">{_cost(rr.cost_usd, rr.spent_usd)}</td></tr>')
        for r in rr.items:
            outcome = r.outcome.value if r.outcome else "legacy"
            commit = f"<code>{_e(r.commit[:12])}</code>" if r.commit else "—"
            body += (f'<tr data-item="{_e(r.item or "")}" data-outcome="{_e(outcome)}">'
                     f'<td>{_e(r.item or "—")}</td><td class="num">{r.cycle}</td>'
                     f'<td><span class="outcome outcome-{_e(outcome)}">{_e(outcome.replace("_", " "))}</span></td>'
                     f'<td>{_e(r.worked_by or "—")}</td><td>{commit}</td>'
                     f'<td class="num">{_cost(r.cost_usd, r.spent_usd)}</td></tr>')
        body += "</tbody>"
    return ('<h3>Parallel rounds, newest first</h3><div class="scroll"><table id="round-table"><thead><tr>'
            '<th scope="col">Item</th><th scope="col" class="num">Cycle</th><th scope="col">Outcome</th>'
            '<th scope="col">Engine</th><th scope="col">Commit</th><th scope="col" class="num">Cost</th></tr>'
            f"</thead>{body}</table></div>")


def _cost(cost: float | None, spent: float) -> str:
    return (f"${cost:,.2f}" if cost is not None else
            f'<span title="the price of a role is unknown">≥ ${spent:,.2f}</span>' if spent else "—")


def _cycle_row(r: CycleRow) -> str:
    when = (f'<time datetime="{_e(r.finished_at.isoformat())}">{_e(r.finished_at.strftime("%Y-%m-%d %H:%M"))}</time>'
            if r.finished_at else "—")
    if r.outcome is None:
        outcome = ('<span class="outcome outcome-legacy" title="recorded by the reference script: no outcome or '
                   'gates">legacy</span>')
    else:
        outcome = f'<span class="outcome outcome-{_e(r.outcome)}">{_e(r.outcome.replace("_", " "))}</span>'
    score_class = "" if r.score is None else "score-pos" if r.score > 0 else "score-neg" if r.score < 0 else ""
    score = '<span title="no Evaluator scored this cycle">—</span>' if r.score is None else f"{r.score:+d}"
    sorries = ("—" if r.pre_sorries is None and r.post_sorries is None else
               f"{_e(_count(r.pre_sorries))} → {_e(_count(r.post_sorries))}")
    cost = _cost(r.cost_usd, r.spent_usd)
    summary = f"<p>{_e(r.summary)}</p>" if r.summary else ""
    if r.details:
        items = "".join(f"<dt>{_e(label)}</dt><dd>{_e(text)}</dd>" for label, text in r.details)
        summary += f'<details><summary>More</summary><dl class="fields">{items}</dl></details>'
    return (f'<tr data-cycle="{r.cycle}" data-outcome="{_e(r.outcome or "legacy")}">'
            f'<td class="num">{r.cycle}</td><td class="when">{when}</td><td>{outcome}</td>'
            f'<td class="gates">{_gates(r.gates, r.outcome)}</td>'
            f'<td class="num {score_class}">{score}</td><td class="num">{sorries}</td>'
            f'<td class="num">{cost}</td><td class="summary">{summary}</td></tr>')


def _count(n: int | None) -> str:
    return "?" if n is None else str(n)


def _gates(gates: Sequence[GateVerdict], outcome: str | None) -> str:
    if not gates:
        return "—" if outcome is None else "not run"
    failed = [g.name for g in gates if not g.passed]
    head = (f"{len(gates) - len(failed)} of {len(gates)} passed"
            + (f'; <span class="gate-failed">failed: {_e(", ".join(failed))}</span>' if failed else ""))
    items = "".join(
        f'<li><span class="gate-{"passed" if g.passed else "failed"}">{_e(g.name)}: '
        f'{"passed" if g.passed else "failed"}</span>'
        + (f'<pre class="text">{_e(g.detail)}</pre>' if g.detail else "") + "</li>" for g in gates)
    return f'<details class="gates"><summary>{head}</summary><ul>{items}</ul></details>'


def _issue_list(issues: Sequence[IssueRow], now: datetime) -> str:
    if not issues:
        return '<p class="note">No open issue.</p>'
    rows = []
    for i in issues:
        age = now - i.added_at
        text = i.text if len(i.text) <= ISSUE_TEXT_LIMIT else i.text[:ISSUE_TEXT_LIMIT] + "\n… (cut here)"
        source = "added in git" if i.from_git else "file time (not committed)"
        rows.append(
            f'<tr data-issue="{_e(i.slug)}"><th scope="row"><code>{_e(i.slug)}</code></th>'
            f'<td class="num" data-age-days="{age.days}">{_e(_age(age))}</td>'
            f'<td class="when"><time datetime="{_e(i.added_at.isoformat())}">'
            f'{_e(i.added_at.strftime("%Y-%m-%d"))}</time> <small>{_e(source)}</small></td>'
            f'<td><details><summary>{_e(i.title)}</summary><pre class="text">{_e(text)}</pre></details></td></tr>')
    return _collapsed('<div class="scroll"><table id="issue-table"><caption>Oldest first; the age counts from the '
                      'commit that added the file.</caption><thead><tr><th scope="col">Issue</th><th scope="col" '
                      'class="num">Age</th><th scope="col">Opened</th><th scope="col">Title and text</th></tr></thead>'
                      f"<tbody>{''.join(rows)}</tbody></table></div>", len(issues), "open issues, oldest first")


def _age(age: timedelta) -> str:
    if age.days >= 1:
        return f"{age.days} day" + ("" if age.days == 1 else "s")
    hours = max(int(age.total_seconds() // 3600), 0)
    return f"{hours} h" if hours else "under an hour"


def _audit(audit: AuditSummary | None, chapters: Sequence[ChapterCoverage]) -> str:
    if audit is None:
        return ('<p class="note">No audit yet: <code>autoformalize audit</code> writes one to '
                "<code>&lt;state&gt;/audit/latest.json</code>.</p>")
    n = sum(c.entities for c in chapters)
    counts = {f: sum(getattr(c, f) for c in chapters) for f in ("formalized", "proved", "faithful", "stronger",
                                                                  "different")}
    judged = counts["faithful"] + counts["stronger"] + counts["different"]
    line = (f"{n} entities: {counts['formalized']} formalized, {counts['proved']} proved; {judged} judged — "
            f"{counts['faithful']} faithful, {counts['stronger']} stronger, {counts['different']} different.")
    out = [f'<p>From <code>{_e(audit.path)}</code>' + (f", {_e(audit.when)}" if audit.when else "") + ".</p>",
           f'<p id="audit-line">{_e(line)}</p>']
    if audit.summary:
        out.append(f'<pre class="text">{_e(audit.summary)}</pre>')
    out.append(f'<p>Every figure, and each entity with its verdicts: <code>{_e(audit.path.removesuffix(".json"))}.md'
               "</code> beside it.</p>")
    if audit.overlap:
        out.append(_overlap_table(audit.overlap))
    if audit.successors:
        out.append(_successors_table(audit.successors))
    return "".join(out)


def _people_section(s: dict[str, Any] | None, audit: AuditSummary | None) -> str:
    """People's verdicts: how the judges agree with them, what they decided per book and chapter, each declaration
    linked to its card in `autoformalize review`, and the statements the judges doubt that no one has decided."""
    if s is None:
        return ""
    cards = (f'<p>Each declaration links to its card at <code>{_e(s["cards"])}…</code>, served while '
             "<code>autoformalize review</code> runs.</p>")
    out = []
    if s["declarations"]:
        out.append(f'<p id="people-line">{s["reviewed"]} declarations reviewed in <code>{_e(s["source"])}</code>: '
                   f'{s["approved"]} approved, {s["rejected"]} rejected, {s["commented"]} commented; {s["stale"]} '
                   "stale (reviewed when they meant something else, no decision holding: in no table).</p>")
    else:
        out.append(f'<p class="note" id="people-line">No one has reviewed a statement yet: <code>autoformalize review'
                   f'</code> shows each with the book\'s text, and records a verdict in <code>{_e(s["source"])}</code>.'
                   "</p>")
    if s["declarations"] and audit is None:
        out.append('<p class="note">No audit yet: the judges\' verdicts to set against people\'s come from '
                   "<code>autoformalize audit</code>.</p>")
    for t in s["tables"]:
        out.append(_confusion(t))
    if s["books"]:
        out.append(_people_books(s["books"]))
    if s["declarations"]:
        out.append(cards + _collapsed(_people_reviews(s["declarations"]), len(s["declarations"]),
                                      "declarations reviewed"))
    doubted = _awaiting(audit, s)
    if doubted:
        items = "".join(f'<li><a href="{_e(url)}"><code>{_e(name)}</code></a> <small>{_e(entity)}: {_e(why)}</small>'
                        "</li>" for name, entity, why, url in doubted)
        out.append("<h3>Judged different or stronger, no person's decision yet</h3>"
                   + _collapsed(f'<ul id="people-awaiting">{items}</ul>', len(doubted), "declarations to decide"))
    if s["problems"]:
        out.append('<ul class="notes">' + "".join(f"<li>{_e(p)}</li>" for p in s["problems"]) + "</ul>")
    return ('<section id="people" aria-labelledby="people-h"><h2 id="people-h">People\'s reviews</h2>'
            + "".join(out) + "</section>")


def _place(book: str | None, chapter: str, by: str) -> str:
    """A row's book and chapter, as the tables per book and chapter name it (a chapter read from a file's folder marked
    so)."""
    return " · ".join([*([book] if book else []), chapter + (" (folder)" if by == "file" else "")])


def _confusion(t: dict[str, Any]) -> str:
    """One judge against people: its verdicts (rows) × the decisions that hold (columns), and how often they agree."""
    name = people.PROTOCOL_LABELS[t["protocol"]]
    body = "".join(f'<tr><th scope="row">{_e(j)}</th>' + "".join(
        f'<td class="num" data-judge="{_e(j)}" data-person="{k}">{t["cells"][j][k]}</td>' for k in people.DECIDED)
        + "</tr>" for j in people.JUDGED)
    agree = (f'<p id="agreement-{_e(t["protocol"])}">Agreement: {t["agree"]} of {t["compared"]} '
             f'({t["rate"]:.1%}) — faithful where approved, stronger or different where rejected; {t["grouped"]} '
             f'({t["grouped_rate"]:.1%}) with stronger taken as faithful.</p>' if t["compared"] else "")
    return (f'<div class="scroll"><table id="people-{_e(t["protocol"])}"><caption>The {_e(name)} judge (rubric '
            f'<code>{_e(t["rubric"])}</code>) against people</caption><thead><tr><th scope="col">Judge \\ person'
            '</th><th scope="col" class="num">Approved</th><th scope="col" class="num">Rejected</th></tr></thead>'
            f"<tbody>{body}</tbody></table></div>{agree}")


def _people_books(rows: Sequence[dict[str, Any]]) -> str:
    body = "".join(f'<tr><th scope="row">{_e(_place(r["book"], r["chapter"], r["by"]))}</th>'
                   + "".join(f'<td class="num">{r[k]}</td>' for k in people.COUNTS) + "</tr>" for r in rows)
    total = ('<tr><th scope="row">All</th>' + "".join(f'<td class="num">{sum(r[k] for r in rows)}</td>'
                                                    for k in people.COUNTS) + "</tr>")
    head = "".join(f'<th scope="col" class="num">{k.capitalize()}</th>' for k in people.COUNTS)
    return ('<h3>Per book and chapter</h3><div class="scroll"><table id="people-books"><thead><tr>'
            f'<th scope="col">Book · chapter</th>{head}</tr></thead><tbody>{body}</tbody><tfoot>{total}</tfoot>'
            "</table></div>")


def _people_reviews(rows: Sequence[dict[str, Any]]) -> str:
    body = "".join(
        f'<tr data-declaration="{_e(d["declaration"])}"><th scope="row"><a href="{_e(d["card"])}"><code>'
        f'{_e(d["declaration"])}</code></a></th><td>{_e(d["entity"] or "—")}</td>'
        f'<td>{_e(d["decision"] or ("stale" if d["stale"] else "commented"))}</td><td>{_e(d["reviewer"] or "—")}</td>'
        f'<td>{_e(d["direct"])}</td><td>{_e(d["round_trip"])}</td><td>{_remarks(d)}</td></tr>'
        for d in rows)
    return ('<div class="scroll"><table id="people-reviews"><thead><tr><th scope="col">Declaration</th>'
            '<th scope="col">Entity</th><th scope="col">Person</th><th scope="col">Reviewer</th>'
            '<th scope="col">Direct judge</th><th scope="col">Round trip</th><th scope="col">Note</th></tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _remarks(d: dict[str, Any]) -> str:
    """The decision's note, then each comment's that holds, one paragraph each."""
    return "".join(f"<p><small>{_e(n)}</small></p>" for n in [d["note"], *d["comment_notes"]] if n) or "—"


def _awaiting(audit: AuditSummary | None, s: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The declarations of entities a judge found different or stronger on which no person's decision holds:
    declaration, entity, the verdicts, its card."""
    decided = {d["declaration"] for d in s["declarations"] if d["decision"]}
    out = []
    for row in audit.rows if audit else ():
        labels = {p: v.get("label") for p in people.PROTOCOLS if isinstance(v := row.get(p), dict)}
        doubts = [f"{people.PROTOCOL_LABELS[p]} {label}" for p, label in labels.items()
                  if label in ("different", "stronger")]
        names = row.get("lean")
        for name in names if doubts and isinstance(names, list) else []:
            if isinstance(name, str) and name not in decided:
                out.append((name, str(row.get("id") or ""), ", ".join(doubts),
                            s["cards"] + quote(name, safe="")))
    return out


def _successors_table(rows: Sequence[SuccessorRow]) -> str:
    """How well each statement's users test it, per book and chapter (a chapter read from a file's folder is marked
    so)."""
    def row(name: str, counts: Sequence[int], head: str = "th") -> str:
        cells = "".join(f'<td class="num">{n}</td>' for n in counts)
        return f'<tr><{head} scope="row">{_e(name)}</{head}>{cells}</tr>'

    def counts(r: SuccessorRow) -> list[int]:
        return [r.tried, r.tested, r.weak, r.untested, r.no_users]

    body = "".join(row(" · ".join([*([r.book] if r.book else []), r.chapter + (" (folder)" if r.by == "file" else "")]),
                       counts(r)) for r in rows)
    total = row("All", [sum(c) for c in zip(*(counts(r) for r in rows), strict=True)])
    return ('<h3>Successor tests (from <code>audit --successors</code>)</h3><div class="scroll">'
            '<table id="successors"><thead><tr><th scope="col">Book · chapter</th>'
            '<th scope="col" class="num">Theorems tried</th><th scope="col" class="num">Tested</th>'
            '<th scope="col" class="num">Weakly tested</th><th scope="col" class="num">Untested</th>'
            '<th scope="col" class="num">No users</th>'
            f"</tr></thead><tbody>{body}</tbody><tfoot>{total}</tfoot></table></div>")


def _overlap_table(rows: Sequence[OverlapRow]) -> str:
    """Proofs `exact?` closes with the library alone, per book and chapter (a chapter read from a file's folder is
    marked so)."""
    def row(name: str, proofs: int, overlap: int, head: str = "th") -> str:
        return (f'<tr><{head} scope="row">{_e(name)}</{head}><td class="num">{proofs}</td>'
                f'<td class="num">{_pct(overlap, proofs)}</td></tr>')

    body = "".join(row(" · ".join([*([r.book] if r.book else []), r.chapter + (" (folder)" if r.by == "file" else "")]),
                       r.proofs, r.overlap) for r in rows)
    total = row("All", sum(r.proofs for r in rows), sum(r.overlap for r in rows), "th")
    return ('<h3>Mathlib overlap (<code>exact?</code>, from <code>audit --mathlib</code>)</h3><div class="scroll">'
            '<table id="mathlib-overlap"><thead><tr><th scope="col">Book · chapter</th>'
            '<th scope="col" class="num">Proofs tried</th><th scope="col" class="num">Closed by the library alone</th>'
            f"</tr></thead><tbody>{body}</tbody><tfoot>{total}</tfoot></table></div>")


def _prover(jobs: Sequence[ProverJob]) -> str:
    if not jobs:
        return ""
    rows = "".join(
        f'<tr data-job="{_e(j.id)}"><th scope="row"><code>{_e(j.id)}</code></th><td>{_e(j.prover)}</td>'
        f'<td class="num">{j.submitted_cycle}</td>'
        f"<td>{_e(', '.join(t.declaration for t in j.targets))}</td><td>{_e(j.status.value)}</td>"
        f"<td>{_e(j.use.value if j.use else '')}</td><td>{_e(', '.join(j.closed))}</td>"
        f'<td><small>{_e(j.note)}</small></td></tr>' for j in jobs)
    closed = sum(len(j.closed) for j in jobs)
    return ('<section id="prover" aria-labelledby="prover-h"><h2 id="prover-h">External prover</h2>'
            f'<p id="prover-line">{len(jobs)} jobs; its proofs closed {closed} '
            f'{"sorry" if closed == 1 else "sorries"}.</p><div class="scroll"><table id="prover-table"><thead><tr>'
            '<th scope="col">Job</th><th scope="col">Prover</th><th scope="col" class="num">Cycle</th>'
            '<th scope="col">Targets</th><th scope="col">Status</th><th scope="col">Use</th>'
            '<th scope="col">Closed</th><th scope="col">Note</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div></section>")


def _watch(old: Sequence[SorryAge], big: Sequence[tuple[str, int, bool]]) -> str:
    """Sorries the loop keeps walking past, and files to split."""
    if not old and not big:
        return ""
    out = ['<section id="watch" aria-labelledby="watch-h"><h2 id="watch-h">To watch</h2>']
    if old:
        rows = "".join(f'<tr><th scope="row"><code>{_e(a.declaration)}</code></th><td><code>{_e(a.file)}:{a.line}'
                       f'</code></td><td class="num">{a.age_days:.0f}</td><td><small>{_e(a.summary)}</small></td></tr>'
                       for a in old[:PERSISTENT_SHOWN])
        more = f" ({len(old) - PERSISTENT_SHOWN} more not shown)" if len(old) > PERSISTENT_SHOWN else ""
        out.append(f'<p id="persistent-line">{len(old)} persistent {"sorry" if len(old) == 1 else "sorries"}: '
                   f'lines unchanged the longest{more}.</p><div class="scroll"><table id="persistent-table"><thead>'
                   '<tr><th scope="col">Declaration</th><th scope="col">Where</th><th scope="col" class="num">Days'
                   '</th><th scope="col">Last changed by</th></tr></thead>'
                   f"<tbody>{rows}</tbody></table></div>")
    if big:
        items = "".join(f"<li><code>{_e(p)}</code>: {n:,} lines, over the {'cap: to split' if cap else 'warning'}"
                        "</li>" for p, n, cap in big)
        out.append(f'<ul id="large-files">{items}</ul>')
    return "".join(out) + "</section>"


def _open(holes: Sequence[tuple[str, str, int]], axioms: Sequence[tuple[str, str]]) -> str:
    """What is left to prove, and what the project assumes."""
    out = ['<section id="open" aria-labelledby="open-h"><h2 id="open-h">Open sorries and axioms</h2>']
    if not holes and not axioms:
        out.append('<p class="note">No sorry, no admit and no axiom of the project\'s own.</p>')
    if holes:
        rows = "".join(f'<tr><th scope="row"><code>{_e(name)}</code></th><td><code>{_e(where)}</code></td>'
                       f'<td class="num">{n if n else "Lean says sorryAx"}</td></tr>'
                       for name, where, n in holes[:OPEN_SHOWN])
        more = f" ({len(holes) - OPEN_SHOWN} more not shown)" if len(holes) > OPEN_SHOWN else ""
        out.append(f'<p id="open-line">{len(holes)} declaration(s) not yet proved{more}.</p>'
                   + _collapsed('<div class="scroll"><table id="open-table"><thead><tr><th scope="col">Declaration'
                                '</th><th scope="col">Where</th><th scope="col" class="num">Sorries</th></tr></thead>'
                                f"<tbody>{rows}</tbody></table></div>", min(len(holes), OPEN_SHOWN),
                                "declarations not yet proved"))
    if axioms:
        items = "".join(f"<li><code>{_e(name)}</code> <small>{_e(where)}</small></li>" for name, where in axioms)
        out.append(f'<p>The project\'s own axioms, which every result using them rests on:</p>'
                   f'<ul id="axioms">{items}</ul>')
    return "".join(out) + "</section>"


def _notes(problems: Sequence[str]) -> str:
    if not problems:
        return ""
    items = "".join(f"<li>{_e(p)}</li>" for p in problems)
    return (f'<section id="notes" aria-labelledby="notes-h"><h2 id="notes-h">Notes on the files read</h2>'
            f'<ul class="notes">{items}</ul></section>')
