"""What a declaration rests on: the declarations holding a hole and the project's own axioms it reaches.

A result counts as proved only when it reaches none, so a theorem whose own proof is whole but which uses a
sorried helper, or an axiom, is not proved. Where Lean listed every project module on the way
(`Census.lean`, kept by the loop: see `orchestrator/kernelcheck.py`), Lean's terms say what is used, proofs
included, and a hole is a constant whose own terms hold `sorryAx`, named or not. Elsewhere the declaration index
stands in: the project names written in a declaration's statement and proof, followed transitively (an
over-approximation: a name written is taken as used)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from functools import cached_property

from gates.census import Census
from gates.env import user_name
from gates.environment import Env, Unanswered
from gates.probe import Names, canonical, modules_of

METHOD = ("Lean's environment where the loop listed every module on the way (the constants each declaration's terms "
          "use, proofs included; a hole is a constant whose own terms hold sorryAx); elsewhere the declaration index: "
          "the project names written in each declaration's statement and proof, followed transitively")


class Support:
    def __init__(self, census: Census, roots: Iterable[str] = ()) -> None:
        self.names = Names(census, roots)
        self.holed = {canonical(h.name) for h in census.holed()}
        self.uses: dict[str, set[str]] = {}
        listed = [m for p, m in census.lean.items() if p in census.files]
        self.env = Env(listed, modules_of(census, roots).values()) if listed else None
        self.census = census

    def _uses(self, name: str) -> set[str]:
        if name not in self.uses:
            d = self.names.decl(name)
            self.uses[name] = set() if d is None else self.names.written(f"{d.statement_text} {d.body_code}", name)
        return self.uses[name]

    def unsound(self, name: str) -> bool:
        d = self.names.decl(name)
        return d is not None and (canonical(name) in self.holed or d.kind == "axiom")

    def rests_on(self, name: str) -> list[str]:
        """The holes and project axioms `name` reaches, itself included, nearest first."""
        if (found := self._lean(name)) is not None:
            return found
        start = canonical(name)
        tainted = self._tainted
        if start not in tainted:
            return []
        seen, queue, out = {start}, deque([start]), []
        while queue:
            current = queue.popleft()
            if self.unsound(current):
                out.append(current)
            for used in sorted((self._uses(current) & tainted) - seen):  # nothing unsound lies past the rest
                seen.add(used)
                queue.append(used)
        return out

    @cached_property
    def _tainted(self) -> set[str]:
        """The declarations from which the names written lead to a hole or a project axiom (those included): a
        walk from any other finds none, so none is taken."""
        users: dict[str, set[str]] = {}
        for name in self.names.decls:
            for used in self._uses(name):
                users.setdefault(used, set()).add(name)
        found = {n for n in self.names.decls if self.unsound(n)}
        queue = deque(found)
        while queue:
            for user in users.get(queue.popleft(), ()):
                if user not in found:
                    found.add(user)
                    queue.append(user)
        return found

    def _lean(self, name: str) -> list[str] | None:
        """Lean's answer, or None when a module on the way was not listed."""
        lean = self.census.lean_name(name)
        if self.env is None or lean is None:
            return None
        try:
            start = self.env.get(lean)
            reached = [start, *self.env.reach(lean)]
        except Unanswered:
            return None
        owners = (user_name(self.env.modules[c.module].owner(c.name), c.module) for c in reached
                  if c.sorry or c.kind == "axiom")
        return list(dict.fromkeys(owners))
