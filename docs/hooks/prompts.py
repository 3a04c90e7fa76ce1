"""MkDocs hook: what each role is sent, section by section, generated at build time by the functions that build the
prompts (`agents.briefs`, `orchestrator.rules`, the tools' specs) from a small sample state, so it cannot drift. A
section `agents.briefs.WHY` gives no reason for fails the build."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents import briefs
from agents.context import Context, Keep
from agents.gitread import GitReader
from agents.lookup import Lookup
from agents.reader import READ_ONLY
from agents.tools import PROVER_TOOLS, SPECS, Tool
from gates.census import Census
from gates.index import index_source
from orchestrator.rules import ROLES
from state.history import HistoryRecord, Outcome
from state.reviews import Review, Verdict, standing

MARKER = "<!-- prompts reference -->"


def _sample() -> dict[str, Any]:
    census = Census({"Book/A.lean": index_source("Book/A.lean", "theorem a : True := sorry\n")})
    issues = [briefs.IssueText("unfaithful-thm-1", "# A statement differs", briefs.JUDGE),
              briefs.IssueText("consultant_advice_cycle_001", "Try `a` by cases.", briefs.CONSULTANT),
              briefs.IssueText("blocker", "`a` needs a lemma", "the Worker of cycle 1")]
    history = [HistoryRecord(cycle=1, outcome=Outcome.REJECTED, summary="tried")]
    people = standing([Review(declaration="Book.a", verdict=Verdict.COMMENT, digest="d", note="see p. 3")],
                      {"Book.a": ["d"]})
    return {"census": census, "issues": issues, "history": history, "people": people}


def contexts() -> dict[str, Context]:
    s = _sample()
    plan = "# Plan\n## Chapter 1\nDone.\n## Current Target\nProve `a`.\n"
    return {
        "planner": briefs.planner(plan=plan, plan_name="plan.md", census=s["census"], history=s["history"],
                                  attempts="tried cases", last_result="report", issues=s["issues"], pivot="cases",
                                  build="builds", locked=["Book.a"], prover="a job", persistent=["Book.a"],
                                  commits="abc subject", overlap="Book.a", difficulty="- Book.a", difficulty_head="h",
                                  reviews=s["people"], means="tools", cycle=2),
        "worker": briefs.worker(strategy="## Scope\n- Book/A.lean\n", census=s["census"], scope_files=["Book/A.lean"],
                                issues=s["issues"], prover="a job", overlap="Book.a", uses="Book.b uses Book.a",
                                reviews=s["people"], targets=["Book.a"], rules="the gates", history=s["history"],
                                cycle=2),
        "evaluator": briefs.evaluator(diff="+x", report="done", gates="- build: passed", outcome="accepted",
                                      history=s["history"], attempts="tried", faithfulness="faithful",
                                      oversized="Book/A.lean", facts="closed 1", diff_chars=1000, strategy="s",
                                      target="Prove `a`."),
        "consultant": briefs.consultant(blocker="cases", history=s["history"], attempts="tried", issues=s["issues"],
                                        census=s["census"], outcome="rejected", report="r", strategy="s",
                                        target="Prove `a`.", cycle=2),
    }


def why(title: str) -> str:
    found = next((reason for start, reason in briefs.WHY.items() if title.startswith(start)), None)
    if found is None:
        raise ValueError(f"agents.briefs.WHY gives no reason for the section {title!r}")
    return found


def table(context: Context) -> str:
    rows = ["| section | budget (characters) | cut keeps | why |", "| --- | ---: | --- | --- |"]
    for s in context.sections:
        budget = "whole" if s.title == briefs.FINDINGS else f"{s.budget:,}"
        title = s.title.replace("|", "\\|")
        rows.append(f"| {title} | {budget} | "
                    f"{'the end' if s.keep is Keep.TAIL else 'the start'} | {why(s.title)} |")
    return "\n".join(rows)


def tools(role: str) -> str:
    if role == "worker":
        names = [s.name for s in SPECS if s.name not in PROVER_TOOLS] + [t.spec.name for t in _added()]
        return (", ".join(f"`{n}`" for n in names) + "; the prover's (" + ", ".join(f"`{n}`" for n in PROVER_TOOLS)
                + ") while it is on; Lean's language server's when `[agents.worker] lean_tools` starts it")
    if role == "evaluator":
        return "none"
    return (", ".join(f"`{n}`" for n in [*READ_ONLY, *(t.spec.name for t in _added())])
            + "; Lean's reading tools when configured")


def _added() -> list[Tool]:
    """The tools a cycle adds to the builtin ones (`orchestrator.cycle`): the lookup and the project's history."""
    return [Lookup(Census(), Path(".")).tool(), *GitReader(Path("."), "HEAD").tools()]


def reference() -> str:
    out = []
    for role, context in contexts().items():
        rules = ("; the standing rules' sections " + ", ".join(f'"{t}"' for t in ROLES[role])
                 + "; then the project's notes (its CLAUDE.md or AGENTS.md, fenced)") if role in ROLES else ""
        out += [f"## The {role.capitalize()}", "",
                f"**System prompt**: `agents/prompts/{role}.md`{rules}"
                + f". **Tools**: {tools(role)}.", "", "**Opening message**, in this order:", "", table(context), ""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "prompts.md":
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"prompts.md lost its marker {MARKER!r}: the reference has nowhere to go")
    return markdown.replace(MARKER, reference())
