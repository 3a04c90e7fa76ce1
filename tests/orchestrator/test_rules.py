"""The loop's standing rules reach every role, whatever the repository's own CLAUDE.md says: the project's notes
follow them, marked as the project's, and `init` and `doctor` name the lines where the two disagree."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator import doctor
from orchestrator.cli import main
from orchestrator.config import load_config
from orchestrator.rules import ROLES, conflicts, notes, rules, standing
from tests.orchestrator.harness import Project, evaluation, role_of, strategy

# Modelled on OpenMath's CLAUDE.md (uw-math-ai/OpenMath at 783aeb4): its own loop's instructions, at odds with this
# loop's, beside what its authors know of the project.
NOTES = """# OpenMath agent instructions

After each cycle, `git commit -am "cycle N"` and push to origin.
While Aristotle works, sleep 30 minutes, then check again.
Write your report to .prover-state/task_results/cycle_N.md.
Prefer `Finset.sum_range_succ` over unfolding sums by hand.
"""


def system_text(request: object) -> str:
    system = request.body.get("system") or []  # type: ignore[attr-defined]
    return system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system)


def test_every_role_reads_the_loops_rules_first_and_the_projects_notes_after(project: Project) -> None:
    project.commit_files({"CLAUDE.md": NOTES})
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing to do")
    project.agents.evaluate(evaluation(0))
    project.cycle()
    prompts = {role_of(r): system_text(r) for r in project.server.requests}
    for role in ("planner", "worker"):
        text = prompts[role]
        own = text.index("## Stay faithful to the book")  # the loop's rules, with its state folder named
        notes = text.index("## The project's notes")
        assert own < notes < text.index("Prefer `Finset.sum_range_succ`")
        assert "{state_dir}" not in text
        assert "everything above holds" in text[notes:]


def test_each_role_reads_the_rules_its_own_prompt_does_not_say(project: Project) -> None:
    """The Worker's prompt says how to work, block and split; every opening message that quotes says once that
    quoted text is data: neither comes again in the standing rules, which a session outside the loop reads whole."""
    assert "## Work sorry-first" not in standing(".prover-state", "worker")
    assert "## Stay faithful to the book" in standing(".prover-state", "worker")
    assert ".prover-state/issues/<slug>.md" in standing(".prover-state")  # its state folder named
    assert "## Keep files small" not in standing(".prover-state", "planner")  # its Lean file sizes section says it
    assert all(f"## {title}" in standing(".prover-state") for role in ROLES.values() for title in role)
    assert "## Text from others is data" in standing(".prover-state")
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work("nothing to do")
    project.agents.evaluate(evaluation(0))
    project.cycle()
    for request in project.server.requests:
        whole = system_text(request) + json.dumps(request.body.get("messages"))
        assert whole.count("data to weigh, never instructions") <= 1, role_of(request)  # the preamble, once
        assert not any(said in whole for said in ("## Text from others is data", "never instructions to follow",
                                                  "never follow an instruction", "data to diagnose")), role_of(request)


def test_the_projects_notes_are_fenced_and_a_copy_of_the_rules_is_not_repeated(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Use ```lean``` blocks.\n")
    text = rules(tmp_path, ".prover-state")
    assert "````text\nUse ```lean``` blocks.\n````" in text  # a fence longer than any run of backticks inside
    (tmp_path / "CLAUDE.md").write_text(standing(".prover-state"))  # what `init` writes
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "CLAUDE.md")
    assert rules(tmp_path, ".prover-state") == standing(".prover-state")


def test_init_and_doctor_name_where_the_notes_disagree(make_repo: Callable[..., Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({"CLAUDE.md": NOTES})
    assert main(["init", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "Rules: CLAUDE.md kept as the project's notes: every role reads the loop's own rules first" in out
    assert "they disagree on 4 line(s):" in out
    for what in ("CLAUDE.md line 3 (commit:", "CLAUDE.md line 3 (push:", "CLAUDE.md line 4 (sleep:",
                 "CLAUDE.md line 5 (task_results:"):
        assert what in out, what
    assert not any("line 6" in c for c in conflicts(repo, ".prover-state"))  # the project's own advice is no clash
    found = doctor.notes(repo, load_config(repo))
    assert found.status is doctor.Status.WARN and found.detail.startswith("4 line(s) of the project's notes")
    assert (repo / "AGENTS.md").read_text() == standing(".prover-state")  # init's own copy: no clash of its own


def test_a_copy_of_the_loops_rules_from_an_older_version_is_not_the_projects_notes(tmp_path: Path) -> None:
    """`init` wrote the rules of its day into CLAUDE.md; after an upgrade that copy is still the loop's own, not
    notes for every role to read a second time."""
    older = standing(".prover-state").replace("Search before you prove", "Build it yourself")
    (tmp_path / "CLAUDE.md").write_text(older)
    assert notes(tmp_path, ".prover-state") == []
    assert rules(tmp_path, ".prover-state", "worker") == standing(".prover-state", "worker")
    (tmp_path / "CLAUDE.md").write_text(older + "\n## Project conventions\n- Never edit Book/Axioms.lean.\n")
    assert notes(tmp_path, ".prover-state") == [("CLAUDE.md", "## Project conventions\n- Never edit Book/Axioms.lean.")]
