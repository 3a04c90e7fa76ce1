"""What each role is told: its context, assembled from the repository's state within fixed budgets.

Everything the Worker wrote, or another agent derived from it (its report, issues and diff; the Evaluator's
notes in the history and attempts.md), reaches a prompt as a fenced `Quote`, labelled with its author. The
orchestrator's own issues — the judge's findings, the Consultant's advice — are shown as its own words (what a
finding quotes, the Lean a Worker wrote among it, as data), and the judge's findings always in full, outside the
cap on issues.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from agents import diffs
from agents.context import Context, Keep, Quote, Section, label, window
from gates.census import Census
from gates.config import GatesConfig
from state.history import HistoryRecord

HISTORY_LINES = 12
TOOL_CYCLES = 5  # the cycles whose Worker tool calls the Planner sees summed
ISSUES_SHOWN = 8
ISSUE_CHARS = 2000
PERSISTENT_SHOWN = 15
JUDGE = "the judge"
CONSULTANT = "the Consultant"
ORCHESTRATOR = frozenset({JUDGE, CONSULTANT, "the orchestrator"})  # authors whose words are the loop's own
EVALUATOR = "the Evaluator (its notes on the Workers' reports)"
BOOK = "## The book"  # in a judge's finding, the line where its own words end and what it quotes begins
WRITERS = "the book, the judge and a Worker (the Lean and its doc comment)"
FINDINGS = "Statements the judge found DIFFERENT from the book (all of them; fix these before new work)"


@dataclass(frozen=True)
class IssueText:
    slug: str
    text: str
    author: str = "an unrecorded author"  # who wrote it (the provenance the cycle could establish)

    @property
    def own(self) -> bool:
        """Written by the orchestrator (the judge, the Consultant, a notice): its own words, not data."""
        return self.author in ORCHESTRATOR


def section(markdown: str | None, title: str) -> str:
    """The body of the `## title` section of `markdown`, or ''."""
    if not markdown:
        return ""
    m = re.search(rf"^##\s+{re.escape(title)}\s*$(.*?)(?=^##?\s|\Z)", markdown, re.MULTILINE | re.DOTALL | re.I)
    return m.group(1).strip() if m else ""


def history_line(r: HistoryRecord) -> str:
    counts = f" sorries {r.pre_sorry_count}→{r.post_sorry_count}" if r.pre_sorry_count is not None else ""
    stuck = f" | stuck on: {r.stuck_on}" if r.stuck_on else ""
    return f"cycle {r.cycle} [{r.outcome or 'recorded'}] score {r.progress_score:+d}{counts}: {r.summary}{stuck}"


def sorry_table(census: Census, only: list[str] | None = None) -> str:
    """Sorry and admit counts by file and declaration."""
    lines = [f"{census.total_sorries} sorry and {census.total_admits} admit in total."]
    for path, index in census.files.items():
        if not index.holes or (only is not None and path not in only):
            continue
        per: dict[str, list[int]] = defaultdict(list)
        for h in index.holes:
            per[h.declaration or h.owner or "(outside declarations)"].append(h.line)
        lines.append(f"{path}: " + "; ".join(f"{name} (line{'s' if len(at) > 1 else ''} "
                                             f"{', '.join(map(str, at))})" for name, at in per.items()))
    return "\n".join(lines)


def file_sizes(census: Census, gates: GatesConfig) -> str:
    """Lean files by length, those over the warning or the cap marked, and what a file over the cap demands."""
    warn, cap = gates.file_warn_lines, gates.file_cap_lines
    ranked = sorted(census.files.items(), key=lambda kv: -kv[1].lines)
    rows = [f"{path}: {index.lines:,} lines" + (" — OVER THE CAP: split it this cycle" if index.lines > cap else
                                                 " — over the warning: split it soon" if index.lines > warn else "")
            for path, index in ranked]
    over = sum(1 for _, index in ranked if index.lines > cap)
    head = (f"Warning at {warn:,} lines, cap at {cap:,}. "
            + (f"{over} file{'s are' if over > 1 else ' is'} over the cap: schedule a split (move declarations to a "
               "new file that the old one, or its users, import), with the new file in the Scope. Until then a "
               "change that makes such a file longer is rejected, unless the Worker declares `SPLITTING:`."
               if over else ""))
    return "\n".join([head.strip(), *rows])


def ranked_issues(issues: list[IssueText], target: str) -> tuple[list[IssueText], str]:
    """Issues touching the target first, then the rest, newest first (the order given); capped."""
    words = {w for w in re.findall(r"[\w./]{4,}", target)}
    touching = [i for i in issues if any(w in i.text for w in words)]
    ordered = touching + [i for i in issues if i not in touching]
    shown = ordered[:ISSUES_SHOWN]
    note = f"{len(ordered) - len(shown)} more open issues not shown" if len(ordered) > len(shown) else ""
    return shown, note


def issues_section(title: str, issues: list[IssueText], target: str, budget: int) -> Section:
    """The open issues other than the judge's findings, the orchestrator's own as text, the rest as quotes."""
    shown, note = ranked_issues([i for i in issues if i.author != JUDGE], target)
    own = "\n\n".join(f"### {label(i.slug)} (by {i.author})\n{_clip(i.text, ISSUE_CHARS)}" for i in shown if i.own)
    quotes = tuple(Quote(i.author, _clip(i.text, ISSUE_CHARS), f"issue `{i.slug}`") for i in shown if not i.own)
    return Section(title, own, budget, note=note, quotes=quotes)


def findings(issues: list[IssueText]) -> Section:
    """Every open finding of the judge, whole: no cap may push one out of view. The judge's own words are shown
    as text; what a finding quotes (from its line `## The book` on: the book's text, the judge's reason, the
    Lean a Worker wrote) as data, and all of it when the line is missing."""
    own, quotes = [], []
    for i in issues:
        if i.author != JUDGE:
            continue
        head, mark, rest = i.text.strip().partition(f"\n{BOOK}\n")
        said, quoted = (head, mark.strip() + "\n" + rest) if mark else ("", i.text.strip())
        own.append(f"### {label(i.slug)}\n{_demoted(said)}".strip())
        quotes.append(Quote(WRITERS, quoted, f"what the finding `{i.slug}` quotes"))
    text = "\n\n".join(own)
    return Section(FINDINGS, text, len(text) + sum(len(q.text) for q in quotes) + 1, quotes=tuple(quotes))


def history_quote(history: list[HistoryRecord], limit: int) -> tuple[tuple[Quote, ...], str]:
    """The last records as lines: the record's facts, then the Evaluator's words."""
    lines, note = window([history_line(r) for r in history], limit, "cycles")
    return ((Quote(EVALUATOR, lines, "one line per cycle, the record's facts then"),) if lines else ()), note


def attempts_quote(attempts: str | None) -> tuple[Quote, ...]:
    return (Quote(EVALUATOR, attempts, "attempts.md"),) if attempts and attempts.strip() else ()


def planner(*, plan: str | None, plan_name: str, census: Census, history: list[HistoryRecord],
            attempts: str | None, last_result: str | None, issues: list[IssueText], advice: str | None,
            pivot: str | None, build: str, locked: list[str] | None = None, gates: GatesConfig | None = None,
            prover: str = "", persistent: list[str] | None = None) -> Context:
    target = section(plan, "Current Target")
    recent, history_note = history_quote(history, HISTORY_LINES)
    sections = [
        findings(issues),
        Section(plan_name, plan or f"({plan_name} is missing: ask the user to describe the book and its target.)",
                12_000),
        Section("Current target", target or "(plan.md names no `## Current Target`; choose the next step.)",
                2_000),
        Section("Build", build, 4_000),
        Section("Sorries by declaration", sorry_table(census), 8_000),
        Section("Persistent sorries: lines long unchanged, oldest first (take one on, or say why not)",
                "\n".join(f"- {p}" for p in (persistent or [])[:PERSISTENT_SHOWN]), 3_000,
                note=f"{len(persistent) - PERSISTENT_SHOWN} more not shown"
                if persistent and len(persistent) > PERSISTENT_SHOWN else ""),
        Section("Lean file sizes", file_sizes(census, gates or GatesConfig()), 3_000),
        Section("Recent cycles", "", 5_000, Keep.TAIL, history_note, recent),
        *([Section("The Worker's tool calls in recent cycles", used, 1_500)] if (used := tool_use(history)) else []),
        Section("Attempts (attempts.md)", "", 8_000, Keep.TAIL, quotes=attempts_quote(attempts)),
        Section("Latest task result", "" if last_result else "(none yet)", 6_000, quotes=(
            Quote("the Worker", last_result, "the last cycle's task result (its report; the gate verdicts at "
                                             "its end are the orchestrator's)"),) if last_result else ()),
        issues_section("Open issues", [i for i in issues if not _is_advice(i, advice)], target, 12_000),
        Section("Latest Consultant advice", advice or "", 5_000),
        Section("Statements locked as faithful to the book (change one only with `RESTATE: <name> — <why>`)",
                ", ".join(locked or []), 4_000),
        Section("External prover (request a job with a line `PROVER: <declaration>` in the strategy)", prover,
                3_000),
    ]
    if pivot:
        sections.append(Section("Pivot required", "The last cycles were all stuck on the same blocker, as the "
                                "Evaluator named it below. Do not target it this cycle; choose different work.", 1_000,
                                quotes=(Quote(EVALUATOR, pivot, "blocker"),)))
    return Context(sections)


def tool_use(history: list[HistoryRecord], cycles: int = TOOL_CYCLES) -> str:
    """Which tools the last `cycles` Worker sessions called, how often and for how long, most called first."""
    recent = [r for r in history if r.tool_calls][-cycles:]
    if not recent:
        return ""
    total: dict[str, list[float]] = {}
    for record in recent:
        for name, stat in record.tool_calls.items():
            count, seconds = total.setdefault(name[:60], [0, 0.0])
            total[name[:60]] = [count + stat.count, seconds + stat.seconds]
    shown = sorted(total.items(), key=lambda item: (-item[1][0], item[0]))
    calls = ", ".join(f"{name} {int(count)} ({seconds:.0f}s)" for name, (count, seconds) in shown)
    cycles_text = ", ".join(str(r.cycle) for r in recent)
    return f"Cycles {cycles_text}: {calls}."


def worker(*, strategy: str, census: Census, scope_files: list[str], issues: list[IssueText],
           prover: str = "") -> Context:
    return Context([
        Section("strategy.md", strategy, 16_000),
        Section("Sorries in the Scope", sorry_table(census, scope_files), 6_000),
        findings(issues),
        issues_section("Open issues", issues, " ".join(scope_files), 8_000),
        Section("External prover (tools submit_to_prover, prover_result, apply_prover_result)", prover, 3_000),
    ])


def evaluator(*, diff: str, report: str, gates: str, outcome: str, history: list[HistoryRecord],
              attempts: str | None, faithfulness: str = "", oversized: str = "", facts: str = "",
              diff_chars: int) -> Context:
    """The Evaluator's context; the diff within `diff_chars` (`agents.diffs.view`: summarized by file when
    larger)."""
    recent, note = history_quote(history, 8)
    shown = diffs.view(diff, diff_chars)
    sections = [
        Section("Outcome", outcome, 1_000),
        Section("Facts (measured by the orchestrator; the score is capped by them)", facts, 3_000),
        # The gates' words quote Lean's messages, which quote the Worker's code: data like the rest.
        Section("Gate verdicts", "", 6_000, quotes=(Quote("the gates, quoting Lean on the Worker's change", gates,
                                                          "verdicts"),) if gates.strip() else ()),
        Section("Lean files over the size cap that this change made longer", oversized, 2_000),
        Section("Faithfulness of the statements this change added or changed (the judge, against the book)",
                faithfulness, 4_000),
        Section("Worker report (its claims: check them against the diff and the facts)", "", 8_000,
                quotes=(Quote("the Worker", report, "report"),) if report.strip() else ()),
        Section("Diff", "", max(diff_chars, len(shown)), quotes=(Quote("the Worker", shown, "change, as a diff"),)),
        Section("Recent cycles", "", 4_000, Keep.TAIL, note, recent),
        Section("Attempts (attempts.md)", "", 4_000, Keep.TAIL, quotes=attempts_quote(attempts)),
    ]
    return Context(sections)


def evaluator_rest() -> int:
    """Characters the Evaluator's sections other than the diff may take together (their budgets' sum)."""
    empty = evaluator(diff="", report="", gates="", outcome="", history=[], attempts=None, diff_chars=0)
    return sum(s.budget for s in empty.sections if s.title != "Diff")


def consultant(*, blocker: str, history: list[HistoryRecord], attempts: str | None, issues: list[IssueText],
               census: Census) -> Context:
    recent, note = history_quote(history, 15)
    return Context([
        Section("Blocker (as the Evaluator named it)", "" if blocker else "(no single blocker named)", 2_000,
                quotes=(Quote(EVALUATOR, blocker, "blocker"),) if blocker else ()),
        Section("Recent cycles", "", 6_000, Keep.TAIL, note, recent),
        Section("Attempts (attempts.md)", "", 10_000, Keep.TAIL, quotes=attempts_quote(attempts)),
        findings(issues),
        issues_section("Open issues", issues, blocker, 10_000),
        Section("Sorries by declaration", sorry_table(census), 6_000),
    ])


def _is_advice(issue: IssueText, advice: str | None) -> bool:
    """The Consultant's issue that is the latest advice, which has a section of its own."""
    return advice is not None and issue.author == CONSULTANT and issue.text.strip() == advice.strip()


def _demoted(markdown: str) -> str:
    """Headings three levels down, below the section's own."""
    return re.sub(r"^(#+)(?=\s)", r"###\1", markdown, flags=re.MULTILINE)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[… {len(text) - limit:,} more characters]"
