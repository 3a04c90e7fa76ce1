"""No byte a Worker controls reaches any role's prompt outside a fence of data, whatever it chose.

Names, file names, reports, compiler messages and everything derived from them are generated — with every line
separator, long backtick runs, fence markers, headings and directives among them — and each begins with a mark
(`MARK`) no text of the orchestrator holds. Every prompt the orchestrator writes from them (the Planner's, the
Worker's, the Evaluator's and the Consultant's contexts, a repair round's gate report, a compacted summary) is then
read as a model that never follows fenced text would read it: outside the fences the mark never appears; inside,
no line passes for a directive, a heading or a fence's end; and the fences open and close in pairs.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import briefs, window
from agents.context import Context
from audit.entities import Entity
from audit.loop import Judged, issue_slug, issue_text
from gates import directives
from gates.base import GateResult
from gates.census import census
from gates.chosen import lines
from gates.tree import MemTree
from orchestrator import cyclestate
from orchestrator.blame import SorryAge
from orchestrator.config import Config
from orchestrator.facts import Facts
from orchestrator.outlook import brief, estimate_for
from state.history import Faithfulness, HistoryRecord, Outcome, ToolStat

MARK = "ᚠ"  # begins every string a Worker controls here; the orchestrator's own words never hold it
WORKER = "the Worker of cycle 3"
SEPARATORS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
FRAGMENTS = [*SEPARATORS, "RESTATE: Book.easy — erratum", "PROVER: Book.easy", "RESTRUCTURING: x", "## Scope",
             "# Heading", "- lakefile.toml", "<<<END DATA ", "<<<DATA ", ">>>", "0123456789abcdef", "```", "`" * 9,
             "~~~~", "> ", "1. ", "   ", "\t", "«", "x" * 300, "Book.easy", "<!--", "-->", "---", "==="]
pieces = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6))
chosen = st.lists(pieces, max_size=10).map(lambda parts: MARK + "".join(parts))
names = chosen.map(lambda s: s.replace("»", "").replace("\n", " "))  # inside `«…»` Lean takes anything else
files = chosen.map(lambda s: s.replace("/", "-").replace("\0", ""))


def outside(prompt: str) -> str:
    """The prompt without the body of any fence its preambles announce, checking the fences pair up."""
    for nonce in set(re.findall(r"<<<DATA ([0-9a-f]{16}) — …>>>`", prompt)):
        opened = [m.start() for m in re.finditer(rf"<<<DATA {nonce} ", prompt)]
        closed = [m.start() for m in re.finditer(rf"<<<END DATA {nonce}>>>", prompt)]
        assert len(opened) == len(closed), "a fence that does not close, or one closed twice"  # and the preamble
        for body in re.findall(rf"<<<DATA {nonce} — [^\n]*>>>\n(.*?)\n<<<END DATA {nonce}>>>", prompt, re.S):
            for line in lines(body):
                found = directives.directive(line)
                assert found is None or not found[2], line
                assert not re.match(r"\s*(#|<<<)", line), line
        # The body goes; the fence's opening line, the orchestrator's words alone, stays.
        prompt = re.sub(rf"(<<<DATA {nonce} — [^\n]*>>>)\n.*?\n<<<END DATA {nonce}>>>", r"\1", prompt, flags=re.S)
    return prompt


def data_only(prompt: str) -> None:
    assert MARK not in outside(prompt)
    assert not any(MARK in value for _, value in directives.lines(prompt))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decls=st.lists(names, min_size=1, max_size=3), paths=st.lists(files, min_size=1, max_size=2),
       said=st.lists(chosen, min_size=12, max_size=12), slug=chosen)
def test_no_worker_byte_reaches_a_prompt_outside_a_fence(decls: list[str], paths: list[str], said: list[str],
                                                         slug: str) -> None:
    report, message, diff, summary, stuck, attempts, subject, reason, nl, entity_id, tool, lean = said
    source = "namespace Book\n\n" + "".join(f"theorem «{d}» : True := by\n  sorry\n\n" for d in decls) + "end Book\n"
    tree = census(MemTree({f"Book/{p}.lean": source.encode() for p in paths}), ["Book"])
    history = [HistoryRecord(cycle=i, outcome=Outcome.REJECTED, progress_score=0, summary=summary, stuck_on=stuck,
                             tool_calls={tool: ToolStat(count=1, seconds=1.0)}) for i in (1, 2)]
    entity = Entity(id=entity_id, kind="theorem", name=entity_id, nl=nl, lean=decls, source=f"{paths[0]}:3")
    judged = Judged(entity, lean, Faithfulness(entity=entity_id, declarations=decls, score=1, reason=reason), {})
    finding = briefs.IssueText(issue_slug(entity_id), issue_text(judged, 4), briefs.JUDGE)
    issues = [finding, briefs.IssueText(slug, report, WORKER)]
    persistent = [SorryAge(decls[0], paths[0], 3, 40.0, "0" * 40, subject).describe()]
    facts = Facts(True, 2, 1, closed=decls, faithful=[entity_id], grew=paths).render()
    c = SimpleNamespace(judged=[judged])
    head, rows = brief(estimate_for(Config(), history, tree), Config())  # the Difficulty section: the holes by name

    contexts: list[Context] = [
        briefs.planner(plan="# Plan\n", plan_name="plan.md", census=tree, history=history, attempts=attempts,
                       last_result=report, issues=issues, pivot=stuck, build=message, locked=decls,
                       persistent=persistent, prover=f"- job 1: {decls[0]} ({paths[0]})", commits=subject,
                       difficulty_head=head, difficulty=rows),
        briefs.worker(strategy="# Strategy\n\n## Scope\n- Book/A.lean\n", census=tree, scope_files=list(tree.files),
                      issues=issues, prover=f"- job 1: {decls[0]}"),
        briefs.evaluator(diff=diff, report=report, gates=message, outcome="rejected", history=history,
                         attempts=attempts, faithfulness=cyclestate.faithfulness(c),  # type: ignore[arg-type]
                         oversized=f"- {paths[0]}", facts=facts, diff_chars=20_000),
        briefs.consultant(blocker=stuck, history=history, attempts=attempts, issues=issues, census=tree,
                          outcome="rejected"),
    ]
    for context in contexts:
        data_only(context.render())
    data_only(cyclestate.feedback([GateResult("build", False, message)], 1, 2))
    data_only(window.summarized(summary))
