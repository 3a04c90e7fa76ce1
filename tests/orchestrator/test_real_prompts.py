"""Each role's request on a real repository's released state, as the scripted endpoint receives it in a whole
cycle (`benchmarks/real_prompts.py`): OpenMath at f6f6071, trimmed (`tests/data/SOURCES.md`), whose plan.md is
41.6k characters, whose 90 issues include seven pieces of Consultant advice from cycles 30–70, and whose CLAUDE.md
tells agents to commit, push and sleep. Each role must hold what its job needs: the plan's Current Target whole and
first, the loop's rules before the project's notes, the Worker's library tools and what decides, the issues about
the target, no stale advice, within the goal's bounds.

Lean here is a command that accepts every file and prints nothing, as Lean does for a project that builds: what is
tested is what the roles are sent, not Lean's answers (the gates' own tests hold those).
"""

from __future__ import annotations

from pathlib import Path

import real_prompts as real

from agents import briefs
from tests.orchestrator.harness import config_text, evaluation, make_project, strategy, user_text
from tests.orchestrator.test_lake_dir import PART, ROOTS, layout
from tests.standin.anthropic_server import AnthropicStandin, text_reply, tool_use_reply


def test_each_role_on_openmaths_released_state_gets_what_its_job_needs(tmp_path: Path,
                                                                         server: AnthropicStandin) -> None:
    project = real.openmath(tmp_path, server)
    sent = real.capture(project)
    assert project.history()[-1].cycle == 507  # after OpenMath's own cycle 506
    assert {"planner", "worker", "evaluator", "consultant"} <= set(sent)
    target = briefs.current_target((real.RELEASED / "plan.md").read_text(encoding="utf-8"))
    assert len(target) > 4_000 and "### Do NOT" in target

    planner = real.opening(sent["planner"])
    assert planner.split("\n## ", 2)[1].startswith("Current Target") and target in planner  # whole and first
    assert planner.count("Concrete next steps:") == 1  # once
    rest = briefs.section(planner, "plan.md, its other sections (headings demoted)")
    assert "##### Backlog Queue" in rest and "##### Blockers / Deferred" in rest
    issues = briefs.section(planner, "Open issues")
    for about in ("butcher_section382_composition", "butcher_section384_convolution", "bdf4_lyapunov_gap"):
        assert f"(issue {about})" in issues  # named by the target, or sharing its declarations: whole
    assert "(issue consultant_advice" not in planner and "- consultant_advice" not in planner  # 437–477 cycles old
    rules = real.system(sent["planner"])
    assert rules.index("## Stay faithful to the book") < rules.index("## The project's notes") < rules.index(
        "OpenMath — Autonomous Lean 4 Formalization")
    assert rules.count("Semi-autonomous formalization of") == 1  # AGENTS.md, a copy of CLAUDE.md, not again

    for role in ("planner", "consultant"):  # a statement checked before it is handed over; the history read
        assert {"find_declaration", "git", "lean_try"} <= {t["name"] for t in sent[role].body["tools"]}, role
    worker = sent["worker"]
    tools = {t["name"] for t in worker.body["tools"]}
    assert {"find_declaration", "git", "search", "read_file", "lean_check"} <= tools
    assert not tools & {"submit_to_prover", "prover_result", "apply_prover_result"}  # the prover is off
    said = real.opening(worker)
    assert "## What decides whether your change lands" in said and "restructurings left" in said
    assert "(issue butcher_section382_composition)" in said and "consultant_advice" not in said
    assert "External prover" not in said + real.system(worker)

    assert target in real.opening(sent["evaluator"])
    consultant = real.opening(sent["consultant"])
    assert target in consultant and "nothing closed" in consultant and real.TARGET_FILE in consultant

    sizes = real.measured(sent)
    assert real.missed(sizes) == [], sizes
    assert sizes["planner"]["total"] <= real.PLANNER_CHARS and 2 * sizes["planner"]["task"] >= sizes["planner"]["total"]


# ReasBook at f5ca540 (trimmed: tests/data/reasbook), its Lake project in `ReasBook/`, with no loop state of its own:
# the plan is what a person adopting it writes.
REASBOOK_PLAN = f"""# Plan

## Book
Rockafellar, *Convex Analysis* (1970), as formalized in ReasBook.

## Chapter 1
- [x] Section 5, part 1: stated.

## Current Target
Close `Section05.add_comm_nat` in `{PART}` (Rockafellar §5): look the commutativity lemma up in Mathlib first.
"""
DEPENDENCY = "ReasBook/.lake/packages/mathlib/Mathlib/Algebra/Group/Defs.lean"
LEMMA = "namespace Nat\n\ntheorem add_comm' (a b : Nat) : a + b = b + a := Nat.add_comm a b\n\nend Nat\n"


def test_each_role_on_reasbooks_layout_gets_the_target_and_the_library_in_its_project_folder(
        tmp_path: Path, server: AnthropicStandin) -> None:
    project = make_project(tmp_path, server, lean=layout(), files={"plan.md": REASBOOK_PLAN}, config=config_text(
        project={"lake_dir": "ReasBook", "lean_roots": ROOTS}, gates={"repair_rounds": 0}))
    (project.repo / DEPENDENCY).parent.mkdir(parents=True)
    (project.repo / DEPENDENCY).write_text(LEMMA)  # Lake's checkout of the dependency, which git ignores
    statement = "theorem add_comm_nat' (a b : Nat) : a + b = b + a := by\n  sorry\n"
    project.agents.add("planner", tool_use_reply([("lean_try", {"code": statement})]),
                       text_reply(strategy(PART, target="Prove `Section05.add_comm_nat`.")))
    project.agents.work([("find_declaration", {"name": "add_comm'"})], [("read_file", {"path": DEPENDENCY})],
                        "## Result\nfound Nat.add_comm'")
    project.agents.evaluate(evaluation(0))
    project.cycle()

    planner, checked = project.agents.requests["planner"][:2]
    assert "the result of lean_try" in user_text(checked) and "ok: 0 error(s)" in user_text(checked)
    assert "declaration uses 'sorry'" in user_text(checked)
    said = real.opening(planner)
    assert said.split("\n## ", 2)[1].startswith("Current Target") and f"`Section05.add_comm_nat` in `{PART}`" in said
    rules = real.system(planner)
    assert rules.index("## Stay faithful to the book") < rules.index("## The project's notes")
    opening, found, read = project.agents.requests["worker"][:3]
    assert f"-- {DEPENDENCY}:3 (theorem Nat.add_comm')" in user_text(found)  # a path the read tools take
    assert LEMMA in user_text(read)
    sizes = real.measured({"planner": planner, "worker": opening})
    assert sizes["planner"]["total"] <= real.PLANNER_CHARS
    assert sizes["worker"]["total"] - sizes["worker"]["tools"] <= real.WORKER_CHARS
