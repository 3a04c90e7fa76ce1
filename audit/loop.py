"""Faithfulness inside the loop: judge the statements a cycle added or changed for a textbook entity against the
book's trusted text (`audit/book.py`), lock the faithful ones, turn a different one into an issue, and refuse a
restatement the judge does not find faithful or stronger."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from agents.briefs import BOOK, finding_head
from agents.model import Model
from audit.entities import Entity
from audit.judge import Rubric, Score, judge_direct
from audit.run import declarations, definitions_read, lean_text, repeated
from gates.base import GateResult
from gates.census import Census
from gates.chosen import shown, ticks
from gates.integrity import VANISHED
from gates.meaning import meanings, reached
from state import slugs
from state.history import Faithfulness, HistoryRecord, Outcome
from state.statement_lock import Locked, StatementLock


@dataclass
class Judged:
    entity: Entity
    lean: str  # what the judge read
    verdict: Faithfulness
    hashes: dict[str, str]  # declaration → meaning hash, as judged


RESTATEMENT = "restatement"
FINDING = "unfaithful-"  # the judge's findings' names begin so


def judge_changes(model: Model, entities: list[Entity], changed: set[str], after: Census, *, context_chars: int,
                  broken: dict[str, list[str]] | None = None,
                  defaults: dict[str, list[str]] | None = None) -> list[Judged]:
    """The direct judge on every entity of the book one of whose declarations is `changed`; where the successors
    gate found users of one that no longer elaborate against it (`broken`), or hypotheses with a default its
    statement gained (`defaults`), the judge reads them after the Lean, as comments: a statement weaker than what its
    users relied on."""
    if not changed:
        return []
    decls, twice = declarations(after), repeated(after)
    meant = meanings(after)
    asked = [e for e in entities if changed.intersection(e.lean)]
    reach = reached(after, [n for e in asked for n in e.lean])
    out: list[Judged] = []
    for entity in asked:
        text, missing = lean_text(decls, entity.lean)
        text += definitions_read(decls, reach, entity.lean)
        present = [n for n in entity.lean if n in decls]
        if missing:
            why = [f"{n} is declared in more than one file ({', '.join(twice[n])}), so which one formalizes it "
                   "cannot be told" for n in missing if n in twice]
            rest = [n for n in missing if n not in twice]
            why += [f"not declared in the project: {', '.join(rest)}"] if rest else []
            verdict = Faithfulness(entity=entity.id, declarations=present, score=None, error="; ".join(why),
                                   book=entity.source)
        else:
            # Always the default rubric: this verdict is a gate over a Worker's Lean, which only its fences keep
            # from passing for the book's text.
            notes = successors_note(present, broken or {}) + defaults_note(present, defaults or {})
            v = judge_direct(model, entity, text + notes,
                             rubric=Rubric(context_chars=context_chars))
            verdict = Faithfulness(entity=entity.id, declarations=present, score=v.score, reason=v.reason,
                                   error=v.error, book=entity.source)
        out.append(Judged(entity, text, verdict, {n: meant[n][0] for n in present}))
    return out


def successors_note(names: list[str], broken: dict[str, list[str]]) -> str:
    """Lean comments naming the declarations of the project that used `names` before this change and no longer
    elaborate against them."""
    lines = [f"-- {n} was used by {line}" for n in names for line in broken.get(n, [])]
    if not lines:
        return ""
    return ("\n\n-- The project's declarations below used this statement before the change and, compiled as they "
            "were, no longer elaborate against it:\n" + "\n".join(line.replace("\n", " ") for line in lines) + "\n")


def defaults_note(names: list[str], defaults: dict[str, list[str]]) -> str:
    """Lean comments naming the hypotheses with a default (`autoParam`, `optParam`) that `names` gained: Lean fills
    each in at every use, so no user shows it, yet each is a hypothesis the statement added."""
    lines = [f"-- {n} gained a hypothesis with a default ({kind}) that Lean fills in at every use: it is a "
             "hypothesis the statement added, however silently its users accept it"
             for n in names for kind in defaults.get(n, [])]
    return "\n\n" + "\n".join(lines) + "\n" if lines else ""


def restatements(judged: list[Judged], restated: dict[str, str], entity_of: dict[str, str]) -> GateResult:
    """The judge's verdict as a gate: each restated statement (`restated`: declaration → what happened) lands only
    when the judge, against the book's trusted text, read it and found its entity (`entity_of`, the book's
    pairing and the lock at the base) faithful or stronger — never on a verdict about other declarations the
    entity pairs with now, nor on one that also read a declaration joining the entity in the same change (a
    faithful newcomer beside a weakened statement can pass for a case split). A statement removed or renamed
    (unpaired, or moved to the declarations that join its entity) has nothing left to read: its entity lands on
    the verdict about what it pairs with now, newcomers included, unless another of its statements changed."""
    verdicts = {j.entity.id: j.verdict for j in judged}
    changed = {entity_of.get(n, "?") for n, what in restated.items() if what != VANISHED}
    problems = []
    for name, what in sorted(restated.items()):
        entity = entity_of.get(name, "?")
        v = verdicts.get(entity)
        moved = what == VANISHED
        joined = [n for n in v.declarations if entity_of.get(n) != entity] if v is not None else []
        if v is None:
            problems.append(f"{name} {what}, and the judge did not read it: the book's {entity} pairs with no "
                            "declaration this change touched")
        elif name not in v.declarations and not (moved and v.declarations):
            problems.append(f"{name} {what}, and the judge did not read it: the book's {entity} now pairs with "
                            f"{', '.join(v.declarations) or 'no declaration of the project'}"
                            + (f" ({v.error})" if v.error else ""))
        elif joined and entity in changed:
            problems.append(f"{name} {what}, and the book's {entity} now also pairs with {', '.join(joined)}, not "
                            "paired with it at the base: a restatement is judged on the declarations paired at the "
                            "base; pair new ones in another cycle")
        elif v.score is None:
            problems.append(f"{name} {what}, and the judge could not judge {entity} ({v.error}); a restatement "
                            "lands only when judged faithful or stronger")
        elif v.score < Score.STRONGER:
            problems.append(f"{name} {what}, and the judge found {entity} DIFFERENT from the book "
                            f"({shown(v.reason or 'no reason given', 2000)}; book text: {shown(v.book)})")
    if problems:
        return GateResult(RESTATEMENT, False, "; ".join(problems) + "; the restatement does not land")
    return GateResult(RESTATEMENT, True, "judged faithful or stronger against the book: "
                      + ", ".join(sorted(restated)))


def settles(j: Judged, history: list[HistoryRecord]) -> bool:
    """Whether a verdict closes the judge's finding on its entity: faithful or stronger, about every declaration
    the finding judged different (the last verdict DIFFERENT on the entity a landed cycle recorded, which its issue
    holds). A verdict about other declarations closes nothing, whatever the entity pairs with now: a change of
    pairing (the statement found different renamed away, or left out beside a faithful newcomer) is not a verdict
    on it. The judge closes the finding by reading that statement again, or a person by removing the issue."""
    if j.verdict.score is None or j.verdict.score < Score.STRONGER:
        return False
    finding = next((f for r in reversed(history) if r.outcome is Outcome.ACCEPTED for f in r.faithfulness
                    if f.entity == j.entity.id and f.score == Score.DIFFERENT), None)
    return finding is not None and set(finding.declarations) <= set(j.verdict.declarations)


def update_lock(lock: StatementLock, judged: list[Judged], changed: set[str], after: Census, cycle: int, *,
                fingerprints: dict[str, str] | None = None, toolchain: str | None = None,
                rejected: Collection[str] = (), orphans: Collection[str] = ()) -> StatementLock:
    """Faithful and stronger statements locked as judged. A locked statement that vanished or changed (a
    declared restatement) is unlocked unless judged again faithful: a lock must always hold the current
    meaning, or every later cycle would be refused. A statement whose last decision by a person rejects it
    (`rejected`, `state.reviews.unanswered`) is never locked, whatever the judge says and however it was restated
    since: a person's word is final until a person approves it; nor is one of an entity in `orphans`, whose
    rejected declaration was renamed or moved away (`state.reviews.orphaned`).
    `fingerprints` (declaration → digest of how Lean elaborates it, under `toolchain`) are stored with the
    statements they belong to, new and kept."""
    fingerprints = fingerprints or {}
    names = after.named
    statements = {n: s for n, s in lock.statements.items() if n in names and n not in changed and n not in rejected}
    for j in judged:
        score = j.verdict.score
        if score is None or score < Score.STRONGER or j.entity.id in orphans:
            continue
        for name, digest in j.hashes.items():
            if name not in rejected:
                statements[name] = Locked(hash=digest, entity=j.entity.id, score=score, cycle=cycle)
    for name, s in statements.items():
        if name in fingerprints:
            statements[name] = s.model_copy(update={"fingerprint": fingerprints[name], "toolchain": toolchain})
    return StatementLock(statements=dict(sorted(statements.items())))


def issue_slug(entity_id: str) -> str:
    """The judge's finding on an entity: `unfaithful-<id>`, one per id (`state.slugs`)."""
    return slugs.slug(FINDING, entity_id, "entity")


def finding_files(issues: Path, entity_id: str) -> list[Path]:
    """The judge's open findings on the entity: the one under its name, if there is one, and one under the name
    findings had before each id got its own (`slugs.legacy`), if it is about this entity (its text names the id
    as `issue_text` writes it) — not one another id shared that name with."""
    own = issues / f"{issue_slug(entity_id)}.md"
    old = issues / f"{slugs.legacy(FINDING, entity_id, 'entity', None)}.md"
    found = [own] if own.is_file() else []
    if old != own and old.is_file():
        # The line after `BOOK` names the entity (`issue_text`); the book's text and the Lean quoted below it may
        # name any id.
        _, _, quoted = old.read_text(encoding="utf-8").partition(f"\n{BOOK}\n")
        named = next((line for line in quoted.splitlines() if line.strip()), "")
        if f" ({shown(entity_id)}; " in named:
            found.append(old)
    return found


def issue_text(j: Judged, cycle: int) -> str:
    """The judge's finding. Its own words come first (`finding_head`: no name a Worker chose); from the line
    `BOOK` on it names the entity, its declarations and where the book's text came from, then quotes that text,
    the judge's reason and the Lean it read — a Worker chose the names and wrote the Lean and its doc comment
    (maybe the book's text too, for a doc comment first written by the change), so wherever the finding is
    shown, that part is shown as data (`agents.briefs.findings`)."""
    e = j.entity
    fence = ticks(j.lean)
    return "\n".join([
        finding_head(cycle), "", BOOK, "",
        f"{shown(e.name)} ({shown(e.id)}; {shown(e.source)}), as {shown(', '.join(j.verdict.declarations))}", "",
        e.nl.strip(), "", "## The judge's reason", "", j.verdict.reason or "no reason given", "", "## The Lean", "",
        f"{fence}lean", j.lean, fence])
