"""State files the repository's ignore rules must not swallow: git would leave a cycle's record out of its commit.

A project may ignore what another loop kept local (`strategy.md`, `history.jsonl`, `cycle`); here those files are
the agents' only channel and the run's record, so `init` re-includes them and `cycle`, `run` and `status` refuse
while one is still ignored."""

from __future__ import annotations

from orchestrator.git import Git
from state.paths import StatePaths

# Under the state directory: a file each cycle may commit (for a folder, an example of its files), and the rule
# that re-includes it.
_COMMITTED = {"cycle": "cycle", "strategy.md": "strategy.md", "history.jsonl": "history.jsonl",
              "attempts.md": "attempts.md", "statement_lock.json": "statement_lock.json",
              "pairing.json": "pairing.json", "prover_jobs.json": "prover_jobs.json", "issues/x.md": "issues/*.md",
              "task_results/cycle_001.md": "task_results/*.md", "prover_results/x/X.lean": "prover_results/*/*.lean",
              "sweeps/x.md": "sweeps/*.md", "audit/latest.json": "audit/latest.*"}


def committed(paths: StatePaths, plan: str, config: str) -> dict[str, str]:
    """Each path that must be committable (some stand for a folder's files) → the rule re-including it."""
    own = {p: p for p in (plan, config, "CLAUDE.md", "AGENTS.md")}
    return own | {f"{paths.state_dir}/{p}": f"{paths.state_dir}/{rule}" for p, rule in _COMMITTED.items()}


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
