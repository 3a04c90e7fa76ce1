"""The book's text as the loop trusts it.

Whatever the judge is shown as the book decides its verdict, so the loop reads the book only from what no agent
can write: the blueprint and the mapping files `[audit]` names (always protected), as the cycle's base commit
holds them — never the working copy, where the Worker's change sits — and, for a statement no such file gives,
its numbered doc comment as it first landed (`state/book_text.py`): the first version is the book's, and a later
edit of the doc comment is not read. Each entity's `source` says which of these the judge was shown.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from audit.config import AuditConfig
from audit.entities import Entity
from audit.extract import find_entities, from_docstrings, side_files
from gates.census import Census
from gates.scope import matches
from gates.tree import Tree
from state.book_text import BookText, FirstText

DOC = "the doc comment"


def trusted(config: AuditConfig) -> list[str]:
    """Globs of the files that hold the book's text."""
    return [f"{config.blueprint.strip('/')}/**", *config.mappings, *side_files(config.mappings)]


@dataclass
class Book:
    files: dict[str, bytes]  # the trusted files, as the base commit has them
    config: AuditConfig
    first: BookText  # doc comments recorded at their first landing
    base_docs: dict[str, Entity]  # the doc-comment entities of the base
    commit: str  # the base commit
    found: dict[int, tuple[Census, list[Entity], list[str]]] = field(default_factory=dict)  # doc comments, by census

    @classmethod
    def at(cls, tree: Tree, commit: str, base: Census, config: AuditConfig, first: BookText) -> Book:
        globs = trusted(config)
        files = {p: tree.read(p) for p in tree.files() if matches(p, globs)}
        book = cls(files, config, first, {}, commit)
        book.base_docs = {e.id: e for e in book._docs(base)[0]}
        return book

    def _docs(self, census: Census) -> tuple[list[Entity], list[str]]:
        """The doc-comment entities of `census`, read once per census (a cycle asks about the base and the change
        more than once); never changed by the caller."""
        key = id(census)
        if key not in self.found or self.found[key][0] is not census:
            self.found[key] = (census, *from_docstrings(census))
        return self.found[key][1], self.found[key][2]

    def entities(self, census: Census) -> list[Entity]:
        """The book's entities, each paired with the declarations of `census` that formalize it."""
        with tempfile.TemporaryDirectory(prefix="autoformalize-book-") as tmp:
            root = Path(tmp)
            for path, data in self.files.items():
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(data)
            found, _ = find_entities(root, census, blueprint=self.config.blueprint, mappings=self.config.mappings,
                                     docstrings=self._docstrings(census))
        for e in found:
            if not e.source.startswith(DOC):
                e.source = f"{e.source} at {self.commit[:12]}"
        return found

    def pairing(self, census: Census) -> dict[str, str]:
        """Declarations of `census` the book pairs with a statement: name → entity id."""
        declared = {d.name for _, d in census.decls() if d.name}
        return {n: e.id for e in self.entities(census) for n in e.lean if n in declared}

    def _docstrings(self, census: Census) -> tuple[list[Entity], list[str]]:
        """The doc-comment entities of `census`, each with the book's text of its first landing; one whose doc
        comment the change removed keeps its base declarations that still exist."""
        found, problems = self._docs(census)
        by_id = {e.id: dataclasses.replace(e) for e in found}
        declared = {d.name for _, d in census.decls() if d.name}
        for key, old in self.base_docs.items():
            kept = [n for n in old.lean if n in declared]
            if key not in by_id:
                by_id[key] = dataclasses.replace(old, lean=kept)
            else:
                by_id[key].lean = list(dict.fromkeys([*by_id[key].lean, *kept]))
        for key, e in by_id.items():
            recorded, base = self.first.docstrings.get(key), self.base_docs.get(key)
            if recorded is not None:
                e.nl = recorded.nl
                e.source = (f"{DOC} of {recorded.declaration} as it first landed ({recorded.source}, recorded in "
                            f"cycle {recorded.cycle}); later edits of it are not read")
            elif base is not None:
                e.nl = base.nl
                e.source = f"{DOC} of {base.lean[0]} at {self.commit[:12]} ({base.source}); later edits are not read"
            else:
                e.source = f"{DOC} of {e.lean[0]} ({e.source}), first written by this change"
                e.fresh = True
        return list(by_id.values()), problems

    def record(self, after: Census | None, cycle: int) -> BookText:
        """The first texts, with the base's doc comments not yet recorded and, when a change lands, the new ones."""
        out = dict(self.first.docstrings)
        for key, e in self.base_docs.items():
            out.setdefault(key, FirstText(nl=e.nl, declaration=e.lean[0], source=f"{e.source} at {self.commit[:12]}",
                                          cycle=cycle))
        if after is not None:
            for e in self._docs(after)[0]:
                out.setdefault(e.id, FirstText(nl=e.nl, declaration=e.lean[0], source=e.source, cycle=cycle))
        return BookText(docstrings=dict(sorted(out.items())))
