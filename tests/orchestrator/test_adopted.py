"""A repository a loop already ran in, and a plan as people write it: cycles numbered after the last one run here
(no report of an earlier cycle written over), a plan's legend that is no target, and the template plan refused
before any model is paid."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import pytest

from orchestrator import doctor, plan, readiness
from orchestrator.cli import main
from orchestrator.config import load_config
from orchestrator.cycle import Options
from orchestrator.cyclestate import last_task_result
from orchestrator.daemon import Limits, run_daemon
from orchestrator.report.site import build, plan_chapters
from tests.conftest import git
from tests.orchestrator.harness import PLAN, Project, configure, evaluation, strategy

DATA = Path(__file__).parent.parent / "data" / "openmath"
STATE = ".prover-state"
TEMPLATE = resources.files("orchestrator.templates").joinpath("plan.md").read_text(encoding="utf-8")


def test_a_loop_that_ran_here_before_is_continued_after_its_last_cycle(project: Project,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """OpenMath at 783aeb4: its counter says 295, its task results run to cycle_304.md. The dry run and `status`
    say so, and the next cycle is 305: its report is a new file, and cycle 296's is as it was."""
    reports = {f"{STATE}/task_results/cycle_{n:03d}.md": f"# Cycle {n}\nits own words\n" for n in range(296, 305)}
    project.commit_files({f"{STATE}/cycle": "295\n", **reports}, "a loop ran here")
    repo = str(project.repo)
    assert main(["status", "--json", "--repo", repo]) == 0
    assert json.loads(capsys.readouterr().out)["cycle"] == 304
    main(["cycle", "--dry-run", "--repo", repo])
    assert "baseline: cycle 305;" in capsys.readouterr().out

    project.agents.plan(strategy("Book/A.lean", target="Close `Book.hard`."))
    project.agents.work([("finish", {"report": "no luck"})])
    project.agents.evaluate(evaluation(0, "nothing closed", stuck_on="Book.hard"))
    record, _ = project.cycle()
    assert record.cycle == 305
    assert project.show("HEAD", f"{STATE}/task_results/cycle_296.md") == "# Cycle 296\nits own words\n"
    assert project.show("HEAD", f"{STATE}/task_results/cycle_305.md").strip()
    assert project.show("HEAD", f"{STATE}/cycle").strip() == "305"
    # The Planner's "latest task result" is the latest cycle's, however its name is padded.
    paths = project.config.state(project.repo)
    (paths.task_results / "cycle_0099.md").write_text("an old one\n")
    assert last_task_result(paths) == project.show("HEAD", f"{STATE}/task_results/cycle_305.md")

    # The task results' folder replaced by a link: `status` names it, and still answers.
    moved = project.repo / "elsewhere"
    paths.task_results.rename(moved)
    paths.task_results.symlink_to(moved)
    assert main(["status", "--json", "--repo", repo]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["cycle"] == 305 and any("task_results" in p for p in status["problems"])


def test_init_adopts_the_last_cycle_a_loop_reported(make_repo: Callable[..., Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A counter kept local by the loop that ran here (OpenMath's `.prover-state/cycle`, ignored), its reports
    committed: `init` writes the counter at the last report, and says the next cycle follows it."""
    repo = make_repo({f"{STATE}/task_results/cycle_506.md": "# Cycle 506\n", f"{STATE}/task_results/cycle_2.md": "x"})
    assert main(["init", str(repo)]) == 0
    assert (repo / STATE / "cycle").read_text() == "506\n"
    assert "a loop ran here to cycle 506 (its counter, history or task results); the next cycle is 507" in \
        capsys.readouterr().out


def test_a_plans_legend_is_no_target() -> None:
    """OpenMath's plan opens with a "Status Key" (`- [x] Formalized (0 sorry)`, `- [ ] Not started`): marks
    explained, not results. A section of results whose heading starts with "Key" is still targets."""
    head = (DATA / "plan_head.md").read_text(encoding="utf-8")
    found = plan.items(head)
    assert all("Status Key" not in item.headings for item in found)
    assert not any(item.text.startswith(("Formalized", "Not started")) for item in found)
    chapters = plan_chapters(head)
    assert [c.chapter for c in chapters] == ["Chapter 1: Multistep Methods"]
    assert (chapters[0].targets, chapters[0].done) == (8, 8)  # section 1.1: its leaves
    for results in ("## Key Theorems", "## Chapter 9\n### Public key", "## Chapter 7: The legend of Fermat",
                    "# Key\n## Chapter 1", "## Answer Key Lemmas", "## Legendre polynomials"):
        assert [i.text for i in plan.items(f"{results}\n- [ ] The theorem\n")] == ["The theorem"], results
    for legend in ("## Legend", "## Status Keys", "### Key to symbols", "## **Legend:**", "## Key"):
        assert plan.items(f"## Chapter 1\n{legend}\n- [ ] Not started\n") == [], legend


def test_a_plan_done_but_for_its_legend_stops_the_daemon(project: Project) -> None:
    configure(project)
    proved = {f"Book/{name}.lean": (project.repo / f"Book/{name}.lean").read_text().replace("  sorry", "  simp")
              for name in ("A", "B")}
    project.commit_files({"plan.md": PLAN + "\n## Status Key\n- [x] Formalized\n- [ ] Not started\n\n"
                                            "## Chapter 1\n- [x] Theorem 1.1\n", **proved})
    reason = run_daemon(project.repo, project.config, project.deps(), Limits(max_cycles=1), Options())
    assert reason == "done: no sorry left and every target in the plan is checked off"
    assert project.history() == []


def test_the_template_plan_is_refused_before_any_model_is_called(project: Project,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The plan `init` writes names no result of the book (`- [ ] Chapter 1: …`): the dry run, the cycle, `run`,
    `status` and `doctor` each say so, and what to write; nothing is asked of a model."""
    project.commit_files({"plan.md": TEMPLATE}, "init's plan, unedited")
    repo = str(project.repo)
    said = ("plan.md is still the template: its 2 target(s) are placeholders (`- [ ] Chapter 1: …`); describe the "
            "book there (a `- [ ]` line for each definition or theorem to formalize, under a heading per chapter)")
    assert main(["cycle", "--dry-run", "--repo", repo]) == 2
    assert said in capsys.readouterr().err
    for command in (["cycle"], ["run", "--max-cycles", "1"]):
        assert main([*command, "--repo", repo]) == 2
        assert said in capsys.readouterr().err
    assert main(["status", "--json", "--repo", repo]) == 0
    assert any(p.startswith(said) for p in json.loads(capsys.readouterr().out)["problems"])
    found = doctor.book(project.repo, load_config(project.repo))
    assert (found.status, found.detail.startswith(said)) == (doctor.Status.FAIL, True)
    assert project.server.requests == [] and project.history() == []

    main(["cycle", "--dry-run", "--skip-planner", "--repo", repo])  # no Planner: the plan is not its to refuse
    assert said not in capsys.readouterr().err

    # Partly filled in (or sketched by a Planner in the template's style): a plan, with its placeholders noted.
    project.commit_files({"plan.md": TEMPLATE.replace("- [ ] Chapter 2: …", "- [ ] Theorem 2.1 (Euler)")})
    assert readiness.book(project.repo, load_config(project.repo)) == []
    assert plan.placeholders("```\n- [ ] Chapter 1: …\n```\n- [ ] Theorem 1\n") == 0  # an example, in code

    git(project.repo, "rm", "-q", "plan.md")
    project.commit_files({}, "no plan")
    assert main(["cycle", "--dry-run", "--repo", repo]) == 2
    assert "plan.md is missing: the Planner works from it" in capsys.readouterr().err


def test_the_dashboard_shows_an_unscored_cycle_as_unscored(project: Project, capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    """OpenMath's records of another shape carry no score: the dashboard's row says so rather than +0, its score
    plot leaves it out, and `status` says "unscored"."""
    project.commit_files({f"{STATE}/history.jsonl": (DATA / "openmath_history_unscored.jsonl").read_text()})
    page = build(project.repo, project.repo / "_site", datetime.now(UTC)).read_text(encoding="utf-8")
    row = page[page.index('<tr data-cycle="135"'):]
    row = row[:row.index("</tr>")]
    assert 'title="no Evaluator scored this cycle">—<' in row and "+0" not in row
    assert main(["status", "--repo", str(project.repo)]) == 0
    assert "score unscored" in capsys.readouterr().out
