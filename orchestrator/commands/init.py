"""`autoformalize init`: add the configuration, state skeleton and agent rules to a Lean repository."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from orchestrator.config import CONFIG_FILE, Config, ProjectConfig, render_config
from orchestrator.repo import detect_lean_project, find_repo
from state.atomic import write_atomic
from state.errors import UsageError
from state.paths import StatePaths


def run(directory: Path | None, lean_roots: tuple[str, ...]) -> int:
    repo = find_repo(directory)
    project = detect_lean_project(repo)
    if project is None:
        raise UsageError(f"{repo} holds no Lean project (no lakefile.lean, lakefile.toml or lean-toolchain); "
                         "create one with `lake new` or `lake init` first")
    roots = list(lean_roots) or project.roots
    config = Config(project=ProjectConfig(lean_roots=roots))
    paths = StatePaths(repo, config.project.state_dir)
    rules = resources.files("agents.prompts").joinpath("standing_rules.md").read_text(encoding="utf-8")
    rules = rules.replace("{state_dir}", config.project.state_dir)
    plan = resources.files("orchestrator.templates").joinpath("plan.md").read_text(encoding="utf-8")

    files = {
        CONFIG_FILE: render_config(config),
        config.project.plan: plan,
        "CLAUDE.md": rules,
        "AGENTS.md": rules,
        paths.relative(paths.cycle): "0\n",
        paths.relative(paths.history): "",
        paths.relative(paths.attempts): "# Attempts\n",
        paths.relative(paths.issues / ".gitkeep"): "",
        paths.relative(paths.task_results / ".gitkeep"): "",
    }
    written, skipped = [], []
    for rel, content in files.items():
        target = repo / rel
        if target.exists():
            skipped.append(rel)
        else:
            write_atomic(target, content)
            written.append(rel)
    # Temp files of interrupted atomic writes must never be committed either.
    ignored = _ignore(repo, [paths.relative(paths.heartbeat), paths.relative(paths.lock),
                             f"{paths.relative(paths.root)}/**/.*.tmp"])

    click.echo(f"Lean project: {project.lakefile or 'no lakefile'}, toolchain {project.toolchain or 'unknown'}, "
               f"Lean roots: {', '.join(roots) or '(the whole repository)'}")
    for rel in written:
        click.echo(f"  wrote    {rel}")
    for rel in skipped:
        click.echo(f"  kept     {rel} (exists; not overwritten)")
    if ignored:
        click.echo(f"  ignored  {', '.join(ignored)} (added to .gitignore)")
    click.echo("Next: describe the book in plan.md, review autoformalize.toml, commit, "
               "then `autoformalize status`.")
    return 0


def _ignore(repo: Path, entries: list[str]) -> list[str]:
    """Append the entries .gitignore lacks; returns them."""
    path = repo / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip().lstrip("/") for line in text.splitlines()}
    missing = [e for e in entries if e not in present]
    if missing:
        lead = "" if not text or text.endswith("\n") else "\n"
        block = "# autoformalize: files of the running process, never committed\n" + "\n".join(missing) + "\n"
        write_atomic(path, text + lead + block)
    return missing
