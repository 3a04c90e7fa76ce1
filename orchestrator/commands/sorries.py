"""`autoformalize sorries`: the sorry, admit and axiom census of a Lean tree."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import click

from gates.census import Census, census
from gates.tree import DirTree, MemTree
from orchestrator.repo import find_repo
from state.errors import UsageError


def run(path: Path | None, repo: Path | None, as_json: bool) -> int:
    result = census_for(path, repo)
    for problem in result.problems:
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(render(result))
    return 0


def census_for(path: Path | None, repo: Path | None) -> Census:
    """The census of PATH (any directory or file), or else of the repository's Lean roots."""
    if path is not None:
        if path.is_file():
            try:
                return census(MemTree({path.as_posix(): path.read_bytes()}))
            except OSError as e:
                raise UsageError(f"{path} cannot be read: {e.strerror}") from None
        if not path.is_dir():
            raise UsageError(f"{path} is neither a file nor a directory")
        return census(DirTree(path))
    from orchestrator.config import load_config  # pydantic models: only when a repository is read

    root = find_repo(repo)
    return census(DirTree(root), load_config(root).project.lean_roots)


def render(result: Census) -> str:
    """A table grouped by file and declaration."""
    lines: list[str] = []
    for path, index in result.files.items():
        if not index.holes:
            continue
        lines.append(path)
        groups: dict[str, list[int]] = defaultdict(list)
        kinds: dict[str, set[str]] = defaultdict(set)
        for hole in index.holes:
            owner = hole.declaration or _anonymous(hole.owner, hole.in_macro)
            groups[owner].append(hole.line)
            kinds[owner].add(hole.keyword)
        width = max(len(owner) for owner in groups)
        for owner, at in groups.items():
            count = f"{len(at)} {'/'.join(sorted(kinds[owner]))}"
            where = f"line{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}"
            lines.append(f"  {owner:<{width}}  {count:<12}  {where}")
    with_holes = sum(1 for f in result.files.values() if f.holes)
    lines.append(
        f"{result.total_sorries} sorr{'y' if result.total_sorries == 1 else 'ies'}, "
        f"{result.total_admits} admit{'' if result.total_admits == 1 else 's'} in {with_holes} of "
        f"{len(result.files)} Lean files ({result.lines:,} lines)")
    axioms = result.axioms()
    if axioms:
        lines.append(f"{len(axioms)} axiom{'' if len(axioms) == 1 else 's'}: "
                     + ", ".join(f"{d.name} ({path}:{d.line})" for path, d in axioms))
    return "\n".join(lines)


def _anonymous(owner: str | None, in_macro: bool) -> str:
    if in_macro:
        return "(in a macro or notation)"
    if owner is None:
        return "(outside any declaration)"
    kind, line = owner.split("@")
    return f"({kind} at line {line})"
