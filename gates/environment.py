"""Decisions read from Lean's environment (`gates.env`), over the modules it answered for: what a statement means,
which constants hold a hole, what a declaration rests on.

"The project" is the set of modules of the Lake project (the files under the Lean roots): a constant belongs to
it when the module declaring it does, whatever its name (a project may extend `Nat`, and nothing stops it from
declaring `Mathlib.Foo`).

A statement's meaning is its type's digest, and the digest of every project constant its type reaches,
transitively: for each, its type, and for all but theorems its value (a definition's body is what it means,
a proof is not), its shape (kind, safety, an inductive's constructors). Private constants, anonymous instances
and auxiliary definitions are constants like any other, so a change to any of them changes the meaning of every
statement reaching it, and a change to a constant it does not reach does not. A definition judged as a statement
(a locked `def`) means its own value too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from gates.env import Const, Module, _hash, user_name


class Unanswered(LookupError):
    """A constant the decision needs lies in a project module Lean did not answer for."""

    def __init__(self, name: str, module: str) -> None:
        super().__init__(f"{name} (of {module}, which Lean did not list)")
        self.name = name
        self.module = module


class Env:
    """What Lean answered for some modules of one tree, and which modules are the project's."""

    def __init__(self, modules: Iterable[Module], project: Iterable[str]) -> None:
        self.modules = {m.module: m for m in modules}
        self.project = set(project)
        self.consts: dict[str, Const] = {}
        self.homes: dict[str, str] = {}
        for m in self.modules.values():
            self.homes.update(m.homes)
        for m in self.modules.values():
            for name, c in m.consts.items():
                self.consts[name] = c
                self.homes[name] = m.module

    def home(self, name: str) -> str:
        return self.homes.get(name, "")

    def ours(self, name: str) -> bool:
        """A constant of the project's own modules."""
        return self.home(name) in self.project

    def get(self, name: str) -> Const:
        c = self.consts.get(name)
        if c is None:
            raise Unanswered(name, self.home(name) or "an unknown module")
        return c

    def meaning(self, name: str, *, own_value: bool = False) -> str:
        """The digest of what `name` states: its type, and every project constant the type reaches (with
        `own_value`, its own value and what that reaches too). Raises `Unanswered` when a constant on the way lies
        in a project module Lean was not asked about."""
        c = self.get(name)
        start = [*c.type_uses, *c.extra, *(c.value_uses if own_value else ())]
        parts = [["self", c.kind, c.shape, c.type, c.value if own_value and c.value else ""]]
        seen = {name}
        for reached in self._walk(start, seen):
            parts.append([reached.name, reached.digest])
        return _hash(sorted(parts))

    def reach(self, name: str, *, own_value: bool = True) -> list[Const]:
        """The project constants `name` uses, transitively through types and values (proofs included when
        `own_value`): what it rests on within the project."""
        c = self.get(name)
        return list(self._walk([*c.type_uses, *c.extra, *(c.value_uses if own_value else ())], {name}, proofs=True))

    def _walk(self, start: Iterable[str], seen: set[str], *, proofs: bool = False) -> Iterable[Const]:
        queue = deque(n for n in sorted(set(start)) if self.ours(n) and n not in seen)
        seen.update(queue)
        while queue:
            c = self.get(queue.popleft())
            yield c
            more = [*c.type_uses, *c.extra, *(c.value_uses if c.kind != "thm" or proofs else ())]
            for n in sorted(set(more)):
                if n not in seen and self.ours(n):
                    seen.add(n)
                    queue.append(n)

    def holes_reached(self, name: str) -> list[str]:
        """The project constants holding `sorryAx` in their own terms that `name` reaches (itself included)."""
        c = self.get(name)
        return sorted({c.name} if c.sorry else set()) + sorted(d.name for d in self.reach(name) if d.sorry)


def lean_names(module: Module) -> dict[str, str]:
    """A module's constants by the name its text writes (`gates.env.normal`; a private one's prefix for this very
    module dropped). A name two constants could answer to (a public `Book.T` and a private one) is left out: it
    stands for neither. Made once per listing."""
    def make() -> dict[str, str]:
        out: dict[str, str] = {}
        twice: set[str] = set()
        for name in module.consts:
            key = user_name(name, module.module)
            if key in out:
                twice.add(key)
            out[key] = name
        return {k: v for k, v in out.items() if k not in twice}
    return module.derived("lean_names", make)


@dataclass
class Baseline:
    """What Lean said of the base before the Worker ran: the kernel gate's "before"."""

    modules: dict[str, Module] = field(default_factory=dict)  # path → its module's constants at the base
    locked: dict[str, str] = field(default_factory=dict)  # locked declaration → its meaning as stored in the lock
    problem: str | None = None  # why Lean could not list the base, when it could not
    toolchain: str = ""  # digest of the toolchain and the dependencies: meanings compare within one
