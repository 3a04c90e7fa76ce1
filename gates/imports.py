"""The import graph of a project, read from its sources."""

from __future__ import annotations

import graphlib
from collections import defaultdict
from collections.abc import Iterable

from gates.census import Census


def module_name(path: str) -> str:
    """`Book/Chapter1/Intro.lean` → `Book.Chapter1.Intro`."""
    return path.removesuffix(".lean").replace("/", ".")


class ImportGraph:
    """Which project file imports which. Modules outside the project (Mathlib) are ignored."""

    def __init__(self, census: Census) -> None:
        self.files = list(census.files)
        self._by_module: dict[str, str] = {}
        # A lakefile may set `srcDir`, so `src/Book/A.lean` is module `Book.A`: also index the suffixes,
        # never overriding a longer match.
        for path in sorted(self.files, key=lambda p: p.count("/")):
            parts = module_name(path).split(".")
            for i in range(len(parts)):
                self._by_module.setdefault(".".join(parts[i:]), path)
        self.imports: dict[str, set[str]] = {}
        self.importers: dict[str, set[str]] = defaultdict(set)
        self.unresolved: dict[str, set[str]] = defaultdict(set)  # module → files importing it that lack it
        for path, index in census.files.items():
            deps = set()
            for module in index.imports:
                target = self._by_module.get(module)
                if target is not None:
                    deps.add(target)
                    self.importers[target].add(path)
                else:  # a dependency such as Mathlib, or a project file that is gone
                    self.unresolved[module].add(path)
            self.imports[path] = deps

    def dependents(self, paths: set[str]) -> set[str]:
        """The present files among `paths` and every project file importing one of them, transitively."""
        frontier = list(paths)
        for path in paths - self.imports.keys():  # deleted: its importers still name its module
            frontier += [f for module, files in self.unresolved.items() if _is_module_of(module, path)
                         for f in files]
        seen = {p for p in frontier if p in self.imports}
        while frontier:
            for importer in self.importers.get(frontier.pop(), ()):
                if importer not in seen:
                    seen.add(importer)
                    frontier.append(importer)
        return seen

    def closure(self, modules: Iterable[str]) -> set[str]:
        """The project files providing `modules` and every project file they import, transitively."""
        return self.imported([p for m in modules if (p := self._by_module.get(m)) is not None])

    def imported(self, paths: Iterable[str]) -> set[str]:
        """The present files among `paths` and every project file they import, transitively."""
        todo = [p for p in paths if p in self.imports]
        seen: set[str] = set()
        while todo:
            path = todo.pop()
            if path not in seen:
                seen.add(path)
                todo += self.imports.get(path, ())
        return seen

    def order(self, paths: set[str]) -> list[str]:
        """`paths` with every file after the files it imports; ties by path."""
        sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
        for path in sorted(paths):
            sorter.add(path, *sorted(self.imports.get(path, set()) & paths))
        try:
            return list(sorter.static_order())
        except graphlib.CycleError:
            return sorted(paths)  # Lean rejects import cycles; the build will say so


def _is_module_of(module: str, path: str) -> bool:
    name = module_name(path)
    return name == module or name.endswith("." + module)
