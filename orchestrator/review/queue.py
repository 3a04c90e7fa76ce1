"""The review queue: a card per statement the book pairs, and per project definition such a statement reaches, in
the order a person should look at them. Built from what a commit holds (HEAD, or any revision): no model and no
Lean is asked anything.

What a card is made of, and where each part comes from:

- the book's trusted text and its source: the blueprint and mapping files, else the pairing ledger (`audit.book`);
  a definition no entity pairs has none;
- `lean`: the declaration as written, comments dropped (a theorem's signature, a definition whole). Not its type as
  Lean elaborates it: the kernel gate's listings (`gates.env.Module`) keep digests of each constant's type and
  value, never their printed text;
- `reaches`: the project's definitions its statement names, walked through definitions (`gates.meaning.reached`);
- `judgements`: the loop's judge (the `faithfulness` of each landed cycle's history record; where history keeps
  none, the statement lock's verdict while it still means what was judged) and the audit's judges (the committed
  `<state>/audit/latest.json`, its rubric named). The latest judgement of the loop's judge is `current`, unless a
  later cycle restated the declaration unjudged; the audit's are, unless a cycle after the audit judged or
  restated it;
- `successors`: the audit's successor test of the declaration (`audit --successors`), else what the successors gate
  of a cycle that touched it named of it (a user that no longer elaborated against it);
- `proved` and `rests_on`: the holes and project axioms it reaches (`audit.rests`: Lean's terms where a kept
  listing covers every module on the way, else the names written);
- `cycles`: the landed cycles that judged, restated, closed, opened or split it, or changed its file;
- people's verdicts: `reviews.toml` at the commit (`orchestrator.verdicts.recorded`), held against the meaning
  digests now (`state.reviews.standing`): a verdict on a meaning the declaration no longer has is stale, shown
  and not applied.

The order (`Risk`): a current judgement DIFFERENT first, then STRONGER; then a theorem judged but whose users no
successor test showed to rely on it (no result, or `untested`, `no users`, `unchecked`; users the loop's gate found
broken by a change of it count as a test); then what was never judged (a definition no entity pairs is judged by
nobody); then the rest. Among equal risks the latest cycle that touched it first, then by book, chapter, file and
line.

`select`'s verdict filter takes the person's states — `approved`, `rejected` (the decision that holds),
`commented` (a comment holds), `stale` (some verdict is stale), `unreviewed` (neither a decision nor a comment
holds) — and the judges' — `different`, `stronger`, `faithful` (some current judgement says so), `unjudged` (no
current judgement has a verdict).

`to_json` is what `review --list --json` prints: `{"format": 1, "cards": [...]}`, each card the `Card`'s fields
by name, with `risk` as its lower-case name (`different`, `stronger`, `untested`, `unjudged`, `judged`),
`standing` the person's state and `judged` the judges' (the values the filters take).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audit.book import Book
from audit.entities import Entity
from audit.rests import Support
from audit.run import sources_of
from gates.census import Census, census
from gates.index import THEOREM_KINDS, Decl
from gates.lexer import ID_FIRST, ID_REST
from gates.meaning import closures, definitions, meanings, reached
from gates.successors import BROKE
from orchestrator.config import Config
from orchestrator.git import Git, GitError, GitTree
from orchestrator.kernelcheck import mark
from orchestrator.review.cards import Card, Judgement, Risk
from orchestrator.verdicts import recorded
from state.errors import UsageError
from state.files import parse_model
from state.history import HistoryRecord, Outcome, parse_history
from state.reviews import Standing, standing
from state.statement_lock import StatementLock

FORMAT = 1
"""Of `to_json`'s document."""
PERSON = ("approved", "rejected", "commented", "stale", "unreviewed")
"""The person's states `select` filters by (a card's `standing` is the first that applies)."""
JUDGES = ("different", "stronger", "faithful", "unjudged")
"""The judges' verdicts `select` filters by (a card's `judged` is the first that applies)."""
LABELS = {3: "faithful", 2: "stronger", 1: "different"}
NOT_JUDGED = "not judged"
AUDIT = "latest.json"
TESTED = ("tested", "weakly tested")
"""The audit's successor verdicts that show its users rely on a theorem (some mutant of it breaks one)."""
BROKEN = "broken successors"
"""How a card's successor result from the loop's gate starts: users that relied on it broke when it changed."""
_NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")
PROTOCOLS = {"direct": "the audit's direct judge", "round_trip": "the audit's round-trip judge"}


class Queue(BaseModel):
    commit: str  # the commit it was built from
    cards: list[Card] = Field(default_factory=list)  # in the order a person should look
    problems: list[str] = Field(default_factory=list)  # what could not be read (reviews.toml entries, history lines…)
    books: list[str] = Field(default_factory=list)  # the books the cards belong to ("" for a project of one)
    counts: dict[str, int] = Field(default_factory=dict)  # cards per risk, by its lower-case name
    audit: str = ""  # the audit read ("<path>, generated <when>"), "" when the commit holds none
    # Each definition a card reaches → its whole text and its header (`audit.run.sources_of`), for a card's page.
    sources: dict[str, tuple[str, str]] = Field(default_factory=dict, exclude=True)


def build(repo: Path, config: Config, *, rev: str = "HEAD") -> Queue:
    """The queue of the project at `repo` as commit `rev` holds it."""
    git = Git(repo)
    try:
        commit = git.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except GitError:
        raise UsageError(f"{rev} names no commit of {repo}") from None
    tree = GitTree(git, commit)
    paths = config.state(repo)
    problems: list[str] = []
    found = census(tree, config.project.lean_roots)
    mark(found, git, repo, config.project, config.gates)  # Lean's listings where kept: holes only Lean sees count
    present = set(tree.files())
    history = _history(tree, paths.relative(paths.history), present, problems)
    entities = _entities(tree, commit, found, config, history, problems)
    lock = _lock(tree, paths.relative(paths.statement_lock), present, problems)
    audit_path = f"{paths.relative(paths.audit)}/{AUDIT}"
    audited = _Audit.read(tree, audit_path, present, problems)
    reviews = recorded(git, commit, config.gates.reviews)
    problems += reviews.problems
    digests = meanings(found)  # a statement's own text, as the statement lock keeps it
    whole = closures(found)  # with the definitions it reaches: what a person approves
    held = standing(reviews.reviews, whole)

    decls: dict[str, tuple[str, Decl]] = {}
    for path, d in found.decls():
        if d.name:
            decls.setdefault(d.name, (path, d))
    paired: dict[str, Entity] = {}
    for e in entities:
        for name in e.lean:
            if name in decls:
                paired.setdefault(name, e)
    defining = definitions(found)
    reach = reached(found, paired, defining)
    cycles = _Cycles.of(history, decls)
    support = Support(found, config.project.lean_roots)
    places = _places(paired, decls)

    cards: list[Card] = []
    for name, e in paired.items():
        path, d = decls[name]
        cards.append(_card(name, path, d, "statement", (digests, whole), support, cycles, held, audited, lock,
                           entity=e, reaches=reach.get(name, [])))
    relied = Counter(n for n in chain.from_iterable(reach.values()) if n not in paired)  # definition → statements
    first: dict[str, list[str]] = {}  # definition → the first three statements reaching it
    open_ = set(relied)
    for name, defs in reach.items():
        for used in open_.intersection(defs) if open_ else ():
            first.setdefault(used, []).append(name)
            if len(first[used]) == 3:
                open_.discard(used)
    alone = sorted(n for n in relied if n in decls)
    reach_alone = reached(found, alone, defining)
    for name in alone:
        users = first[name]
        path, d = decls[name]
        book, chapter = places.get(path) or next((places[p] for u in users if (p := decls[u][0]) in places), ("", ""))
        cards.append(_card(name, path, d, "definition", (digests, whole), support, cycles, held, audited, lock,
                           reaches=reach_alone.get(name, []), book=book, chapter=chapter,
                           users=(users, relied[name])))
    cards.sort(key=lambda c: (c.risk, -c.newest, c.book, c.chapter, c.path, c.line, c.declaration))
    counts = {r.name.lower(): sum(c.risk is r for c in cards) for r in Risk}
    reachable = {n for c in cards for n in c.reaches}
    return Queue(commit=commit, cards=cards, problems=problems, books=sorted({c.book for c in cards}), counts=counts,
                 audit=audited.where, sources=sources_of({n: decls[n][1] for n in reachable if n in decls}, reachable))


def select(queue: Queue, *, book: str | None = None, chapter: str | None = None, verdict: str | None = None
           ) -> list[Card]:
    """The cards of `book`, of `chapter` and whose person's state or judges' verdict is `verdict` (see the module's
    docstring for the values), in the queue's order; a filter left None takes every card."""
    if verdict is not None and verdict not in (*PERSON, *JUDGES):
        raise UsageError(f"no verdict `{verdict}`: the filters are {', '.join((*PERSON, *JUDGES))}")
    return [c for c in queue.cards if (book is None or c.book == book) and (chapter is None or c.chapter == chapter)
            and (verdict is None or verdict in states(c))]


def states(card: Card) -> set[str]:
    """Every filter value `card` answers to."""
    out = set()
    if card.decision is not None:
        out.add("approved" if card.decision.verdict == "approve" else "rejected")
    if card.comments:
        out.add("commented")
    if card.stale:
        out.add("stale")
    if card.decision is None and not card.comments:
        out.add("unreviewed")
    labels = {j.verdict for j in card.judgements if j.current and j.verdict in LABELS.values()}
    out |= labels or {"unjudged"}
    return out


def to_json(cards: Iterable[Card]) -> str:
    """The cards for tools (`review --list --json`): see the module's docstring for the keys."""
    rows = []
    for c in cards:
        row = c.model_dump(mode="json")
        row["risk"] = c.risk.name.lower()
        rows.append(row)
    return json.dumps({"format": FORMAT, "cards": rows}, ensure_ascii=False)


# -- the parts -----------------------------------------------------------------------------------------------------


def _card(name: str, path: str, d: Decl, kind: str, digests: tuple[dict[str, list[str]], dict[str, list[str]]],
          support: Support,
          cycles: _Cycles, held: dict[str, Standing], audited: _Audit, lock: StatementLock, *,
          entity: Entity | None = None, reaches: list[str], book: str = "", chapter: str = "",
          users: tuple[list[str], int] | None = None) -> Card:
    theorem = d.kind in THEOREM_KINDS
    rests = support.rests_on(name)
    touched = cycles.touching(name, path)
    own, whole = digests  # `meanings`, `closures`
    judgements = _judgements(name, cycles, audited, lock, own)
    tested = audited.successors.get(name) or cycles.successors(name)
    person = held.get(name, Standing())
    card = Card(declaration=name, kind=kind, path=path, line=d.line, digest=(whole.get(name) or [""])[0],
                lean=d.written(body=not theorem), reaches=reaches, judgements=judgements, successors=tested,
                proved=not rests, rests_on=rests, cycles=touched, newest=max(touched, default=0),
                decision=person.decision, comments=list(person.comments), stale=list(person.stale), book=book,
                chapter=chapter)
    if entity is not None:
        card.entity, card.entity_name, card.book, card.chapter = entity.id, entity.name, entity.book, entity.chapter
        card.book_text, card.book_source = entity.nl, entity.source
    card.risk, card.why = _risk(card, theorem=theorem, users=users)
    labels = states(card)
    card.standing = next(s for s in PERSON if s in labels)
    card.judged = next(s for s in JUDGES if s in labels)
    return card


def _risk(card: Card, *, theorem: bool, users: tuple[list[str], int] | None) -> tuple[Risk, str]:
    """The card's risk and why; `users`: for a definition no entity pairs, the first statements relying on it and
    how many do."""
    current = [j for j in card.judgements if j.current and j.verdict in LABELS.values()]
    for verdict, risk, what in (("different", Risk.DIFFERENT, "different from"), ("stronger", Risk.STRONGER,
                                                                                 "stronger than")):
        found = [j for j in current if j.verdict == verdict]
        if found:
            return risk, f"{_who(found)} found it {what} the book" + (f": {found[0].reason}" if found[0].reason
                                                                      else "")
    if not current:
        if users is not None:
            names, count = users
            shown = ", ".join(names) + (f" and {count - len(names)} more" if count > len(names) else "")
            return Risk.UNJUDGED, f"a definition no judge reads alone, which {shown} rely on"
        return Risk.UNJUDGED, "never judged against the book"
    if theorem and not (card.successors or "").startswith((*TESTED, BROKEN)):
        why = f"its successor test says: {card.successors.split(':', 1)[0]}" if card.successors else \
            "no successor test has shown that its users rely on what it says"
        return Risk.UNTESTED, f"judged {current[0].verdict} by {_who(current)}, but {why}"
    return Risk.JUDGED, f"judged {current[0].verdict} by {_who(current)}" + (", and its users test it" if theorem
                                                                              else "")


def _who(judgements: list[Judgement]) -> str:
    return " and ".join(dict.fromkeys(j.by for j in judgements))


def _judgements(name: str, cycles: _Cycles, audited: _Audit, lock: StatementLock, digests: dict[str, list[str]]
                ) -> list[Judgement]:
    """The loop's judgements of `name` (newest first), then the audit's."""
    loop = sorted(cycles.judged.get(name, []), key=lambda j: -(j.cycle or 0))
    latest = next((j for j in loop if j.verdict != NOT_JUDGED), None)
    restated = cycles.restated.get(name, 0)
    for j in loop:
        j.current = j is latest and (j.cycle or 0) >= restated
    locked = lock.statements.get(name)
    if not loop and locked is not None and locked.hash in digests.get(name, []):
        loop = [Judgement(by=f"the loop's judge, cycle {locked.cycle} (as the statement lock keeps it)",
                          verdict=LABELS.get(locked.score, NOT_JUDGED), cycle=locked.cycle)]
    since = cycles.after(audited.when, name)
    out = list(loop)
    for j in audited.judged.get(name, []):
        out.append(j.model_copy(update={"current": j.verdict != NOT_JUDGED and not since, "reason": (
            f"(judged before cycle {since} changed it) {j.reason}".strip() if since else j.reason)}))
    return out


@dataclass
class _Cycles:
    """What the landed cycles of the history did, by declaration and file."""

    records: list[HistoryRecord]
    named: dict[str, set[int]] = field(default_factory=dict)  # declaration → cycles that named it
    files: dict[str, set[int]] = field(default_factory=dict)  # file → cycles that changed it
    judged: dict[str, list[Judgement]] = field(default_factory=dict)
    restated: dict[str, int] = field(default_factory=dict)  # declaration → the latest cycle that restated it
    finished: dict[int, datetime] = field(default_factory=dict)
    gate: dict[int, str] = field(default_factory=dict)  # cycle → its successors gate's detail

    @classmethod
    def of(cls, records: list[HistoryRecord], decls: dict[str, tuple[str, Decl]]) -> _Cycles:
        out = cls([r for r in records if r.outcome in (Outcome.ACCEPTED, None)])
        for r in out.records:
            names = {*r.closed, *r.opened, *r.decomposed, *r.restated, *(p for ps in r.parts.values() for p in ps)}
            for f in r.faithfulness:
                names.update(f.declarations)
                for n in f.declarations:
                    out.judged.setdefault(n, []).append(Judgement(
                        by=f"the loop's judge, cycle {r.cycle}", verdict=LABELS.get(f.score or 0, NOT_JUDGED),
                        reason=f.reason or (f.error or ""), cycle=r.cycle))
            for n in names:
                out.named.setdefault(n, set()).add(r.cycle)
            for n in r.restated:
                if not any(n in f.declarations and f.score is not None for f in r.faithfulness):
                    out.restated[n] = max(out.restated.get(n, 0), r.cycle)
            for p in r.changed_files:
                out.files.setdefault(p, set()).add(r.cycle)
            if r.finished_at is not None:
                out.finished[r.cycle] = r.finished_at
            for g in r.gates:
                if g.name == "successors":
                    out.gate[r.cycle] = g.detail
        return out

    def of_name(self, name: str) -> set[int]:
        return self.named.get(name, set())

    def touching(self, name: str, path: str) -> list[int]:
        return sorted(self.of_name(name) | self.files.get(path, set()), reverse=True)

    def after(self, when: datetime | None, name: str) -> int:
        """The first cycle finished after `when` that judged or restated `name`; 0 for none."""
        if when is None:
            return 0
        later = [c for c in sorted(self.of_name(name)) if c in self.finished and self.finished[c] > when
                 and (c == self.restated.get(name) or any(j.cycle == c for j in self.judged.get(name, [])))]
        return later[0] if later else 0

    def successors(self, name: str) -> str | None:
        """What the latest successors gate that found users broken by a change of `name` (named by its full name, or
        its last component alone) said of them."""
        found = self.mentions.get(name) or self.mentions.get(name.rsplit(".", 1)[-1])
        if not found:
            return None
        cycle = max(found)
        return f"{BROKEN} (cycle {cycle}'s successors gate): " + "; ".join(found[cycle])

    @cached_property
    def mentions(self) -> dict[str, dict[int, list[str]]]:
        """Each constant a successors gate's broken-successor line names as changed → the cycles → those lines."""
        out: dict[str, dict[int, list[str]]] = {}
        for cycle, detail in self.gate.items():
            for line in detail.splitlines():
                _, broke, changed = line.partition(f" {BROKE} ")
                for token in set(_NAMES.findall(changed.split(": ", 1)[0]) if broke else ()):
                    lines = out.setdefault(token.rstrip(".").removeprefix("_root_."), {}).setdefault(cycle, [])
                    if line.strip() not in lines:
                        lines.append(line.strip())
        return out


@dataclass
class _Audit:
    """The audit's judgements and successor tests, by declaration."""

    where: str = ""
    when: datetime | None = None
    judged: dict[str, list[Judgement]] = field(default_factory=dict)
    successors: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, tree: GitTree, path: str, present: set[str], problems: list[str]) -> _Audit:
        if path not in present:
            return cls()
        try:
            doc = json.loads(tree.read(path))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            problems.append(f"{path}: not valid JSON ({e}); the audit's judges are left out")
            return cls()
        if not isinstance(doc, dict):
            problems.append(f"{path}: not a JSON object; the audit's judges are left out")
            return cls()
        when = _when(doc.get("generated_at"))
        out = cls(f"{path}, generated {doc.get('generated_at')}" if when else path, when)
        faithfulness = doc.get("faithfulness")
        rubric = str(faithfulness.get("rubric") or "") if isinstance(faithfulness, dict) else ""
        rows = doc.get("entities")
        for row in rows if isinstance(rows, list) else []:
            if not isinstance(row, dict):
                continue
            for protocol, by in PROTOCOLS.items():
                verdict = row.get(protocol)
                if not isinstance(verdict, dict):
                    continue
                label = str(verdict.get("label") or "")
                judgement = Judgement(by=by, verdict=label if label in LABELS.values() else NOT_JUDGED,
                                      reason=str(verdict.get("reason") or verdict.get("error") or ""), rubric=rubric)
                for name in _strs(row.get("lean")):
                    out.judged.setdefault(name, []).append(judgement.model_copy())
        section = doc.get("successors")
        results = section.get("results") if isinstance(section, dict) else None
        for r in results if isinstance(results, list) else []:
            if isinstance(r, dict) and isinstance(r.get("declaration"), str):
                out.successors[r["declaration"]] = _tested(r)
        return out


def _tested(r: dict[str, Any]) -> str:
    """One theorem's successor test, as a card says it."""
    users = _strs(r.get("users"))
    mutants = [m for m in r.get("mutants") or [] if isinstance(m, dict)]
    killed = sum(m.get("status") == "killed" for m in mutants)
    alive = [str(m.get("change") or m.get("kind") or "") for m in mutants if m.get("status") == "survived"]
    text = f"{r.get('verdict')}: {killed} of {len(mutants)} mutants break a user"
    if users:
        text += f" ({len(users)} users: {', '.join(users[:5])}{' …' if len(users) > 5 else ''})"
    if alive:
        text += f"; surviving: {'; '.join(alive)}"
    return text + " (the audit's successor test)"


def _strs(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _when(value: object) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def _history(tree: GitTree, path: str, present: set[str], problems: list[str]) -> list[HistoryRecord]:
    if path not in present:
        return []
    history = parse_history(tree.read(path), path)
    problems += history.problems
    return history.records


def _lock(tree: GitTree, path: str, present: set[str], problems: list[str]) -> StatementLock:
    if path not in present:
        return StatementLock()
    try:
        return parse_model(tree.read(path), StatementLock, path)
    except UsageError as e:
        problems.append(f"{e}; the lock's verdicts are left out")
        return StatementLock()


def _entities(tree: GitTree, commit: str, found: Census, config: Config, history: list[HistoryRecord],
              problems: list[str]) -> list[Entity]:
    """The book's entities as the loop trusts them at `commit` (`audit.book`)."""
    cycle = 1 + max([0, *(r.cycle for r in history)])
    try:
        book = Book.at(tree, commit, found, config.audit, config.project.state_dir, cycle)
    except UsageError as e:
        problems.append(f"{e}; the book's statements cannot be paired")
        return []
    return book.entities(found)


def _places(paired: dict[str, Entity], decls: dict[str, tuple[str, Decl]]) -> dict[str, tuple[str, str]]:
    """File → the book and chapter of the first statement it holds: where a definition no entity pairs is shown."""
    out: dict[str, tuple[str, str]] = {}
    for name, e in paired.items():
        out.setdefault(decls[name][0], (e.book, e.chapter))
    return out

