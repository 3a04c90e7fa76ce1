"""The book's text, and which declarations formalize each of its statements, as the loop trusts them.

Whatever the judge is shown as the book decides its verdict, and whatever pairs a declaration with a statement
decides which changes are restatements, so the loop reads both only from what no agent can write:

- the blueprint and the mapping files `[audit]` names (always protected), as the cycle's base commit holds them —
  never the working copy, where the Worker's change sits. A Lean name they give means what it meant at the base,
  whatever a change declares since (`extract.Declarations`). An entity they pair is theirs alone;
- else the pairing ledger (`state/pairing.py`), which only the loop writes: each entity known from a numbered doc
  comment, with the doc comment's text as first recorded and the declarations paired with it. A doc comment
  counts once, when its pairing first lands: a person's when the loop (or `init`) first sees it in the tree, a
  Worker's when the change adding it lands. Later edits of a doc comment, its heading included, are not read.

A change may pair a declaration nothing pairs yet (a new one, or one that had no heading): with an entity the
ledger holds, which it joins, or with a new one whose only text is the change's own doc comment
(`Entity.fresh`). It cannot unpair or re-pair one: removing or renaming a paired declaration is a restatement
(the integrity gate, then the judge). Each entity's `source` says which text the judge was shown.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from audit.config import AuditConfig
from audit.entities import Entity
from audit.extract import doc_heading, find_entities, from_docstrings, side_files
from gates.census import Census
from gates.scope import matches
from gates.tree import Tree
from state.files import parse_model
from state.pairing import FILE, LEGACY_TEXT, Author, Entry, Member, Pairing, migrate, parse_pairing
from state.statement_lock import StatementLock

DOC = "the doc comment"
LOCK = "statement_lock.json"


def trusted(config: AuditConfig) -> list[str]:
    """Globs of the files that hold the book's text."""
    return [f"{config.blueprint.strip('/')}/**", *config.mappings, *side_files(config.mappings)]


def ledger_at(tree: Tree, state_dir: str, files: list[str] | None = None) -> tuple[Pairing, bool]:
    """The pairing ledger as `tree` holds it, and whether it was built from version 0's files (`book_text.json`
    and `statement_lock.json`) because the tree has no ledger yet."""
    state = state_dir.strip("/")
    present = set(tree.files() if files is None else files)
    path, text, lock = f"{state}/{FILE}", f"{state}/{LEGACY_TEXT}", f"{state}/{LOCK}"
    if path in present:
        return parse_pairing(tree.read(path), path), False
    if text not in present:
        return Pairing(), False
    locked = parse_model(tree.read(lock), StatementLock, lock) if lock in present else StatementLock()
    return migrate(tree.read(text), {n: s.entity for n, s in locked.statements.items()}, text), True


@dataclass
class Book:
    files: dict[str, bytes]  # the trusted files, as the base commit has them
    config: AuditConfig
    base: Census
    read: Pairing  # the ledger as the base holds it (built from version 0's files when `migrated`)
    known: Pairing  # the same, with the pairings the loop sees for the first time in the base, without the
    #                 declarations the base no longer has (a person removed them)
    commit: str  # the base commit
    cycle: int  # the cycle whose base this is: what it enters is entered in it
    migrated: bool = False
    found: dict[int, tuple[Census, list[Entity], list[str]]] = field(default_factory=dict)  # doc comments, by census
    filed: dict[int, tuple[Census, list[Entity]]] = field(default_factory=dict)  # the files' entities, by census

    @classmethod
    def at(cls, tree: Tree, commit: str, base: Census, config: AuditConfig, state_dir: str, cycle: int) -> Book:
        globs = trusted(config)
        listed = tree.files()
        files = {p: tree.read(p) for p in listed if matches(p, globs)}
        read, migrated = ledger_at(tree, state_dir, listed)
        book = cls(files, config, base, read, read, commit, cycle, migrated)
        book.known = book.enter(_present(read, base), base, Author.PERSON, where=f" at {commit[:12]}")
        return book

    def entities(self, census: Census, touching: set[str] | None = None) -> list[Entity]:
        """The book's entities, each paired with the declarations of `census` that formalize it: the files', the
        ledger's, and those `census` pairs first (a change's new pairings). With `touching`, of the ledger's only
        those pairing one of these declarations (the others are not built)."""
        out = {e.id: e for e in self._files(census)}
        owned, filed = _owned(out.values())
        declared = _declared(census)
        new = self._pairings(census, self.known, owned, filed)
        joined = {key for key, _, _ in new}
        for key, entry in self.known.entities.items():
            if key in filed:
                continue  # the files pair it: theirs alone
            if touching is not None and key not in joined and touching.isdisjoint(entry.declarations):
                continue  # not asked for
            names = [n for n in entry.declarations if n in declared and n not in owned]
            if key in out:  # the files hold its text, the ledger its pairing
                out[key].lean = names
            else:
                out[key] = _recorded(key, entry, names)
        for key, names, doc in new:
            if key in out:
                out[key].lean = list(dict.fromkeys([*out[key].lean, *names]))
            else:
                out[key] = dataclasses.replace(doc, lean=names, fresh=True, source=(
                    f"{DOC} of {names[0]} ({doc.source}), first written by this change"))
        return list(out.values())

    def pairing(self, census: Census) -> dict[str, str]:
        """Declarations of `census` the book pairs with a statement: name → entity id (as `entities` pairs them,
        without building each entity)."""
        files = self._files(census)
        owned, filed = _owned(files)
        declared = _declared(census)
        out = {n: e.id for e in files for n in e.lean if n in declared}
        for key, entry in self.known.entities.items():
            if key not in filed:
                out.update({n: key for n in entry.declarations if n in declared and n not in owned})
        for key, names, _ in self._pairings(census, self.known, owned, filed):
            out.update({n: key for n in names if n in declared})
        return out

    def record(self, after: Census | None) -> Pairing:
        """The ledger this cycle leaves: the base's, with what the loop first saw there and, when a change lands
        (`after`), the pairings it makes, without the paired declarations it removed (a restatement that
        passed the gates)."""
        if after is None:
            return self.known
        return self.enter(_present(self.known, after), after, Author.WORKER, where="")

    def realign(self, lock: StatementLock) -> StatementLock:
        """The lock with each statement's entity as the ledger pairs it: version 0's lock could name an entity by
        an id a later census gave it."""
        entity_of = self.known.entity_of()
        return StatementLock(statements={n: s.model_copy(update={"entity": entity_of.get(n, s.entity)})
                                         for n, s in lock.statements.items()})

    def enter(self, ledger: Pairing, census: Census, by: Author, *, where: str) -> Pairing:
        """`ledger` with the pairings `census` makes first, entered as `by`'s in this cycle; `where` follows the
        source of a text recorded now."""
        out = Pairing(entities=dict(ledger.entities))  # the entries it changes are copied, the others shared
        for key, names, doc in self._pairings(census, ledger, *_owned(self._files(census))):
            entry = out.entities.get(key)
            if entry is None:
                entry = Entry(nl=doc.nl, declaration=names[0], source=f"{doc.source}{where}", by=by,
                              cycle=self.cycle, chapter=doc.chapter, terms=doc.terms)
            member = Member(by=by, cycle=self.cycle)
            out.entities[key] = entry.model_copy(update={"declarations": {
                **entry.declarations, **{n: member for n in names if n not in entry.declarations}}})
        return out

    def _pairings(self, census: Census, ledger: Pairing, owned: set[str], filed: set[str]
                  ) -> list[tuple[str, list[str], Entity]]:
        """The pairings `census` makes that neither the files (`owned`: the declarations they pair) nor `ledger`
        hold: each numbered doc comment's declarations nothing pairs yet, with the entity they join — the one of
        the doc comment's id in the ledger, else the ledger's entity of a declaration sharing that heading (its id
        re-keyed since), else a new one. An entity the files pair (`filed`) takes no declaration from a doc
        comment."""
        entity_of = ledger.entity_of()
        out: list[tuple[str, list[str], Entity]] = []
        for doc in self._docs(census):
            new = [n for n in doc.lean if n not in owned and n not in entity_of]
            if not new:
                continue
            known = [entity_of[n] for n in doc.lean if n in entity_of]
            key = doc.id if doc.id in ledger.entities or not known else known[0]
            if key in filed:
                continue
            out.append((key, new, doc))
        return out

    def _docs(self, census: Census) -> list[Entity]:
        """The doc-comment entities of `census`, read once per census (a cycle asks about the base and the change
        more than once); never changed by the caller."""
        key = id(census)
        if key not in self.found or self.found[key][0] is not census:
            self.found[key] = (census, *from_docstrings(census))
        return self.found[key][1]

    def _files(self, census: Census) -> list[Entity]:
        """The entities of the blueprint and the mapping files, their Lean names read against `census` as the
        base reads them; a fresh copy each time."""
        key = id(census)
        if key not in self.filed or self.filed[key][0] is not census:
            with tempfile.TemporaryDirectory(prefix="autoformalize-book-") as tmp:
                root = Path(tmp)
                for path, data in self.files.items():
                    (root / path).parent.mkdir(parents=True, exist_ok=True)
                    (root / path).write_bytes(data)
                found, _ = find_entities(root, census, blueprint=self.config.blueprint,
                                         mappings=self.config.mappings, docstrings=([], []), base=self.base)
            for e in found:
                e.source = f"{e.source} at {self.commit[:12]}"
            self.filed[key] = (census, found)
        return [dataclasses.replace(e, lean=list(e.lean)) for e in self.filed[key][1]]


def _owned(entities: Iterable[Entity]) -> tuple[set[str], set[str]]:
    """The declarations the files' `entities` pair, and the ids of those that pair any."""
    found = list(entities)
    return {n for e in found for n in e.lean}, {e.id for e in found if e.lean}


def _declared(census: Census) -> AbstractSet[str]:
    return census.named


def _present(ledger: Pairing, census: Census) -> Pairing:
    """`ledger` without the declarations `census` does not declare."""
    declared = _declared(census)
    return Pairing(entities={key: entry if all(n in declared for n in entry.declarations) else entry.model_copy(
        update={"declarations": {n: m for n, m in entry.declarations.items() if n in declared}})
        for key, entry in ledger.entities.items()})


def _recorded(key: str, entry: Entry, names: list[str]) -> Entity:
    """The entity of a ledger entry, its text as recorded."""
    kind, name, book = doc_heading(key)
    return Entity(id=key, kind=kind, name=name, nl=entry.nl, lean=names, terms=list(entry.terms),
                  chapter=entry.chapter, book=book,
                  source=f"{DOC} of {entry.declaration} as it first landed ({entry.source}, recorded in cycle "
                         f"{entry.cycle}); later edits of it are not read")
