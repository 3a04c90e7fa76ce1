"""Names and modules of a Lean project, as the gates key them; and how many Lean runs a probe of its environment
takes (`gates.env`).

The text index gives views and fast pre-checks (`Names.written`: which project declarations a Lean text may name);
what a declaration means and rests on is Lean's to say (`gates.env`, `gates.environment`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property

from gates.census import Census
from gates.env import printed
from gates.header import module_paths
from gates.index import Decl
from gates.lexer import ID_FIRST, ID_REST

RUNS = 2  # Lean runs of one probe: the modules' imports built, then the program that lists them
_PART = rf"(?:«[^»\n]*»|[{ID_FIRST}][{ID_REST}]*)"
IDENT = re.compile(rf"{_PART}(?:\.{_PART})*")


def canonical(name: str) -> str:
    """A name as a key: `«»` escapes dropped, so `Book.«my thm»` as written and as Lean prints it agree."""
    return name.replace("«", "").replace("»", "")


class Names:
    """A tree's declarations by canonical name, with where a name written in Lean text may point."""

    def __init__(self, census: Census, roots: Iterable[str]) -> None:
        self.census = census
        self.roots = [r.strip("/") for r in roots]
        self.decls: dict[str, tuple[str, Decl]] = {}
        for path, d in census.decls():
            if d.name:
                self.decls.setdefault(canonical(d.name) if "«" in d.name else d.name, (path, d))

    @cached_property
    def by_last(self) -> dict[str, list[str]]:
        """The last component of every name → the names ending with it."""
        out: dict[str, list[str]] = {}
        for name in self.decls:
            out.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        return out

    def decl(self, name: str) -> Decl | None:
        found = self.decls.get(canonical(name))
        return found[1] if found else None

    def module_of(self, path: str) -> str:
        """The module `path` is: as the project's own files import it, else as its Lean root names it."""
        return self.imported.get(path) or module_of(path, self.roots)

    @cached_property
    def imported(self) -> dict[str, str]:
        """Project file → the module name the project's files import it by (`imported`)."""
        return imported(self.census)

    def written(self, text: str, near: str = "") -> set[str]:
        """Project declarations a Lean text in the declaration `near` may name: for each name, those its
        namespaces resolve it to, innermost first, as Lean does; failing that, every declaration whose name ends
        so (one `open` away)."""
        out: set[str] = set()
        spaces = canonical(near).split(".")[:-1]
        for token in set(IDENT.findall(text)):
            token = canonical(token)
            found = [n for n in self.by_last.get(token.rsplit(".", 1)[-1], ())
                     if n == token or n.endswith("." + token)]
            inner = next(([n] for k in range(len(spaces), 0, -1)
                          for n in [".".join([*spaces[:k], token])] if n in self.decls), None)
            out.update(inner or found)
        return out


def module_of(path: str, roots: Iterable[str]) -> str:
    """`Book/A.lean` → `Book.A`: relative to the folder holding the Lean root, so `src/Book/A.lean` with the
    root `src/Book` is `Book.A`. A folder or file name that is not an identifier is escaped as Lean escapes it
    (`Book/a b.lean` → `Book.«a b»`: Lake names a module by its path's components)."""
    stem = path.removesuffix(".lean")
    for root in roots:
        root = root.strip("/")
        if path == f"{root}.lean" or path.startswith(f"{root}/"):
            parent = root.rsplit("/", 1)[0] if "/" in root else ""
            stem = stem[len(parent) + 1:] if parent else stem
            break
    return printed(stem.split("/"))


def imported(census: Census) -> dict[str, str]:
    """Project file → the module name the project's files import it by (the longest, should several resolve to it):
    what Lean's search path knows it as, whatever folders the lakefile's libraries start from."""
    paths = module_paths(census.files)
    out: dict[str, str] = {}
    found = {m for index in census.files.values() for m in index.imports}
    for module in sorted(found, key=lambda m: (-m.count("."), m)):
        if (path := paths.get(module)) is not None:
            out.setdefault(path, module)
    return out


def modules_of(census: Census, roots: Iterable[str]) -> dict[str, str]:
    """Every Lean file of the census → its module name: as the project's own files import it, else as its Lean root
    names it."""
    by_import, roots = imported(census), [r.strip("/") for r in roots]
    return {path: by_import.get(path) or module_of(path, roots) for path in census.files}
