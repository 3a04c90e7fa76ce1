"""Faithfulness inside the loop: judge the statements a cycle added or changed for a textbook entity, lock the
faithful ones, and turn a different one into an issue."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agents.model import Model
from audit.entities import Entity
from audit.extract import find_entities
from audit.judge import Score, judge_direct
from audit.run import declarations, lean_text
from gates.census import Census
from state.history import Faithfulness
from state.statement_lock import Locked, StatementLock


@dataclass
class Judged:
    entity: Entity
    lean: str  # what the judge read
    verdict: Faithfulness
    hashes: dict[str, str]  # declaration → statement hash, as judged


def changed_statements(before: Census, after: Census) -> set[str]:
    """Named declarations whose statement is new or differs from the base's."""
    old = {d.name: d.statement_hash for _, d in before.decls() if d.name}
    return {d.name for _, d in after.decls() if d.name and old.get(d.name) != d.statement_hash}


def judge_changes(model: Model, root: Path, before: Census, after: Census, *, context_chars: int) -> list[Judged]:
    """The direct judge on every entity one of whose declarations changed its statement."""
    changed = changed_statements(before, after)
    if not changed:
        return []
    entities, _ = find_entities(root, after)
    decls = declarations(after)
    out: list[Judged] = []
    for entity in entities:
        if not changed.intersection(entity.lean):
            continue
        text, missing = lean_text(decls, entity.lean)
        present = [n for n in entity.lean if n in decls]
        if missing:
            verdict = Faithfulness(entity=entity.id, declarations=present, score=None,
                                   error=f"not declared in the project: {', '.join(missing)}")
        else:
            v = judge_direct(model, entity, text, context_chars=context_chars)
            verdict = Faithfulness(entity=entity.id, declarations=present, score=v.score, reason=v.reason,
                                   error=v.error)
        out.append(Judged(entity, text, verdict, {n: decls[n].statement_hash for n in present}))
    return out


def update_lock(lock: StatementLock, judged: list[Judged], after: Census, cycle: int) -> StatementLock:
    """Faithful and stronger statements locked at their judged hash; those judged different, and locked ones
    that no longer exist (a declared restatement removed them), unlocked."""
    names = {d.name for _, d in after.decls() if d.name}
    statements = {n: s for n, s in lock.statements.items() if n in names}
    for j in judged:
        score = j.verdict.score
        if score is None:
            continue
        for name, digest in j.hashes.items():
            if score >= Score.STRONGER:
                statements[name] = Locked(hash=digest, entity=j.entity.id, score=score, cycle=cycle)
            else:
                statements.pop(name, None)
    return StatementLock(statements=dict(sorted(statements.items())))


def issue_slug(entity_id: str) -> str:
    return "unfaithful-" + (re.sub(r"[^a-z0-9._-]+", "-", entity_id.lower()).strip("-.") or "entity")


def issue_text(j: Judged, cycle: int) -> str:
    e = j.entity
    return "\n".join([
        f"# {e.name}: the Lean statement differs from the book", "",
        f"Cycle {cycle:03d}'s judge read {', '.join(j.verdict.declarations)} against {e.id} ({e.source}) and "
        f"judged it different: {j.verdict.reason or 'no reason given'}.", "",
        "A statement that adds a hypothesis, restricts a parameter, or covers only part of the book's claim is "
        "not a formalization of it, however well it is proved. Restate it (declare `RESTATE: <declaration> — "
        "<rationale>` in the strategy if it is locked), or split it into declarations that together cover the "
        "book's claim.", "", "## The book", "", e.nl.strip(), "", "## The Lean", "", "```lean", j.lean, "```"])
