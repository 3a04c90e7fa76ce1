"""The loop's standing rules reach every role, whatever the repository's own CLAUDE.md says: the project's notes
follow them, marked as the project's, and `init` and `doctor` name the lines where the two disagree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator import doctor
from orchestrator.cli import main
from orchestrator.config import load_config
from orchestrator.rules import conflicts, rules, standing
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
        own = text.index("## Work sorry-first")  # the loop's rules, whole, with its state folder named
        notes = text.index("## The project's notes")
        assert own < notes < text.index("Prefer `Finset.sum_range_succ`")
        assert ".prover-state/issues/<slug>.md" in text and "{state_dir}" not in text
        assert "the rules above hold" in text[notes:]


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
