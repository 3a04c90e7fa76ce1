"""What a declaration rests on: the declarations holding a sorry and the project's own axioms it reaches.

A result counts as proved only when it reaches none, so a theorem whose own text is sorry-free but which uses a
sorried helper, or an axiom, is not proved. What a declaration uses is read from the declaration index: the
project names written in its statement and proof, followed transitively (an over-approximation: a name written
is taken as used). Where Lean was asked (`kernel.json`, see `orchestrator/kernelcheck.py`), a declaration Lean
says depends on `sorryAx` counts as holding a sorry."""

from __future__ import annotations

from collections import deque

from gates.census import Census
from gates.probe import Names, canonical

METHOD = ("the declaration index: the project names written in each declaration's statement and proof, followed "
          "transitively; a declaration holds a sorry when its text does or Lean said it depends on sorryAx")


class Support:
    def __init__(self, census: Census) -> None:
        self.names = Names(census, [])
        self.hidden = {canonical(n) for _, n in census.hidden_holes()}
        self.uses: dict[str, set[str]] = {}

    def _uses(self, name: str) -> set[str]:
        if name not in self.uses:
            d = self.names.decl(name)
            self.uses[name] = set() if d is None else self.names.written(f"{d.statement_text} {d.body_code}", name)
        return self.uses[name]

    def unsound(self, name: str) -> bool:
        d = self.names.decl(name)
        return d is not None and (d.holes > 0 or d.kind == "axiom" or canonical(name) in self.hidden)

    def rests_on(self, name: str) -> list[str]:
        """The sorried declarations and axioms of the project `name` reaches, itself included, nearest first."""
        start = canonical(name)
        seen, queue, out = {start}, deque([start]), []
        while queue:
            current = queue.popleft()
            if self.unsound(current):
                out.append(current)
            for used in sorted(self._uses(current) - seen):
                seen.add(used)
                queue.append(used)
        return out
