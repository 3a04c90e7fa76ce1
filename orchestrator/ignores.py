"""State files the repository's ignore rules must not swallow: git would leave a cycle's record out of its commit.

A project may ignore what another loop kept local (`strategy.md`, `history.jsonl`, `cycle`); here those files are
the agents' only channel and the run's record, so `init` re-includes them, checked path by path (a path of every
kind and name the loop writes), and `cycle`, `run` and `status` refuse while one is still ignored (`cycle --dry-run`
and `doctor` name it)."""

from __future__ import annotations

from orchestrator.git import Git
from state.paths import StatePaths

# Under the state directory: every kind of file a cycle may commit, each under the names the loop gives it (an
# ignore rule may catch one name of a folder and not another: `issues/consultant_advice_cycle_*.md`), and the rule
# that re-includes it.
_COMMITTED = {"cycle": "cycle", "strategy.md": "strategy.md", "history.jsonl": "history.jsonl",
              "attempts.md": "attempts.md", "statement_lock.json": "statement_lock.json",
              "pairing.json": "pairing.json", "prover_jobs.json": "prover_jobs.json",
              **{f"issues/{name}.md": "issues/*.md" for name in (
                  "some-issue", "consultant_advice_cycle_001", "unfaithful-book-basic-double-pos", "stall-cycle-001",
                  "autoformalize-build", "review-thm-1.1")},
              **{f"issues/closed/{name}.md": "issues/closed/*.md" for name in ("some-issue", "some-issue-cycle-001")},
              "task_results/cycle_001.md": "task_results/*.md",
              **{f"prover_results/job-1/{name}": "prover_results/**" for name in ("X.lean", "Book/Chapter/X.lean")},
              "sweeps/sweep_20260101-0000.md": "sweeps/*.md",
              **{f"audit/latest.{kind}": "audit/latest.*" for kind in ("json", "md")}}


def committed(paths: StatePaths, plan: str, config: str) -> dict[str, str]:
    """Each path that must be committable (a path of every kind and name the state folder's files take) → the rule
    re-including it. Other files there (a log of another tool) stay as the rules say."""
    own = {p: p for p in (plan, config, "CLAUDE.md", "AGENTS.md")}
    state = paths.state_dir.strip("/")
    return own | {f"{state}/{p}": f"{state}/{rule}" for p, rule in _COMMITTED.items()}


def swallowed(git: Git, paths: StatePaths, plan: str, config: str) -> dict[str, str]:
    """The paths of `committed` an ignore rule excludes, each with the rule."""
    return git.ignored(list(committed(paths, plan, config)))


def negations(paths: StatePaths, plan: str, config: str, ignored: list[str]) -> list[str]:
    """Lines re-including `ignored`: their rules, after every folder above them (git never looks inside an ignored
    folder)."""
    rules = committed(paths, plan, config)
    folders: dict[str, None] = {}
    for path in ignored:
        parts = rules[path].split("/")
        folders.update({f"!/{'/'.join(parts[:i])}/": None for i in range(1, len(parts))})
    return [*folders, *(f"!/{rules[p]}" for p in ignored)]


def refusal(found: dict[str, str]) -> str:
    shown = "; ".join(f"{path} (by {rule})" for path, rule in list(found.items())[:6])
    return (f"the ignore rules exclude files a cycle must commit: {shown}; its commit would leave them out. Run "
            "`autoformalize init` to re-include them, or remove those rules")
