"""What each role is told: its context, assembled from the repository's state within fixed budgets."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from agents.context import Context, Keep, Section, window
from gates.census import Census
from gates.config import GatesConfig
from state.history import HistoryRecord

HISTORY_LINES = 12
ISSUES_SHOWN = 8
ISSUE_CHARS = 2000
PERSISTENT_SHOWN = 15


@dataclass(frozen=True)
class IssueText:
    slug: str
    text: str


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


def ranked_issues(issues: list[IssueText], target: str) -> tuple[str, str]:
    """Issues touching the target first, then the rest, newest first (the order given); capped."""
    words = {w for w in re.findall(r"[\w./]{4,}", target)}
    touching = [i for i in issues if any(w in i.text for w in words)]
    ordered = touching + [i for i in issues if i not in touching]
    shown = ordered[:ISSUES_SHOWN]
    note = f"{len(ordered) - len(shown)} more open issues not shown" if len(ordered) > len(shown) else ""
    return "\n\n".join(f"### {i.slug}\n{_clip(i.text, ISSUE_CHARS)}" for i in shown), note


def planner(*, plan: str | None, plan_name: str, census: Census, history: list[HistoryRecord],
            attempts: str | None, last_result: str | None, issues: list[IssueText], advice: str | None,
            pivot: str | None, build: str, locked: list[str] | None = None, gates: GatesConfig | None = None,
            prover: str = "", persistent: list[str] | None = None) -> Context:
    target = section(plan, "Current Target")
    lines, history_note = window([history_line(r) for r in history], HISTORY_LINES, "cycles")
    issue_text, issue_note = ranked_issues(issues, target)
    sections = [
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
        Section("Recent cycles", lines, 5_000, Keep.TAIL, history_note),
        Section("Attempts (attempts.md)", attempts or "", 8_000, Keep.TAIL),
        Section("Latest task result", last_result or "", 6_000),
        Section("Open issues", issue_text, 12_000, note=issue_note),
        Section("Latest Consultant advice", advice or "", 5_000),
        Section("Statements locked as faithful to the book (change one only with `RESTATE: <name> — <why>`)",
                ", ".join(locked or []), 4_000),
        Section("External prover (request a job with a line `PROVER: <declaration>` in the strategy)", prover,
                3_000),
    ]
    if pivot:
        sections.append(Section("Pivot required", f"The last cycles were all stuck on the same blocker: {pivot}\n"
                                "Do not target it this cycle; choose different work.", 1_000))
    return Context(sections)


def worker(*, strategy: str, census: Census, scope_files: list[str], issues: list[IssueText],
           prover: str = "") -> Context:
    issue_text, issue_note = ranked_issues(issues, " ".join(scope_files))
    return Context([
        Section("strategy.md", strategy, 16_000),
        Section("Sorries in the Scope", sorry_table(census, scope_files), 6_000),
        Section("Open issues", issue_text, 8_000, note=issue_note),
        Section("External prover (tools submit_to_prover, prover_result, apply_prover_result)", prover, 3_000),
    ])


def evaluator(*, diff: str, report: str, gates: str, outcome: str, history: list[HistoryRecord],
              attempts: str | None, faithfulness: str = "", oversized: str = "") -> Context:
    lines, note = window([history_line(r) for r in history], 8, "cycles")
    return Context([
        Section("Outcome", outcome, 1_000),
        Section("Gate verdicts", gates, 6_000),
        Section("Lean files over the size cap that this change made longer", oversized, 2_000),
        Section("Faithfulness of the statements this change added or changed (the judge, against the book)",
                faithfulness, 4_000),
        Section("Worker report", report, 8_000),
        Section("Diff", diff, 30_000),
        Section("Recent cycles", lines, 4_000, Keep.TAIL, note),
        Section("Attempts (attempts.md)", attempts or "", 4_000, Keep.TAIL),
    ])


def consultant(*, blocker: str, history: list[HistoryRecord], attempts: str | None, issues: list[IssueText],
               census: Census) -> Context:
    lines, note = window([history_line(r) for r in history], 15, "cycles")
    issue_text, issue_note = ranked_issues(issues, blocker)
    return Context([
        Section("Blocker", blocker or "(no single blocker named)", 2_000),
        Section("Recent cycles", lines, 6_000, Keep.TAIL, note),
        Section("Attempts (attempts.md)", attempts or "", 10_000, Keep.TAIL),
        Section("Open issues", issue_text, 10_000, note=issue_note),
        Section("Sorries by declaration", sorry_table(census), 6_000),
    ])


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[… {len(text) - limit:,} more characters]"
