"""What in the modules a probe loads runs as they are loaded.

The environment probe (`gates.env`) reads its program with no project module in scope, so no project notation,
macro or elaborator can change what it does. What still runs is an initializer: `initialize` and
`builtin_initialize` (and the attributes `@[init]`, `@[builtin_init]` that declare one) run when their module is
imported, in the probe's process, where they could print the nonce's lines or rewrite the build outputs the
program is about to read. The probe therefore refuses to load a module that imports, directly or not, a project
module declaring one.

Code in the dependencies (Mathlib), which the project trusts, is not looked at.
"""

from __future__ import annotations

from collections.abc import Iterable

from gates.census import Census
from gates.index import attribute_names

INITIALIZERS = frozenset({"init", "builtin_init"})


def refused(census: Census, modules: Iterable[str]) -> list[str]:
    """Where the project files the `modules` import (themselves included) declare code that runs as they are
    loaded: `path:line: what`."""
    out: list[str] = []
    for path in sorted(census.graph.closure(modules)):
        f = census.files[path]
        for m in f.markers:
            if m.kind in ("initialize", "builtin_initialize"):
                out.append(f"{path}:{m.line}: {m.kind} (run as the module is imported)")
            elif m.kind == "attribute" and set(attribute_names(m.args)) & INITIALIZERS:
                out.append(f"{path}:{m.line}: `{m.detail}`")
        for d in f.decls:
            if named := sorted(set(attribute_names(",".join(d.attributes))) & INITIALIZERS):
                out.append(f"{path}:{d.line}: @[{', '.join(named)}] on {d.name or d.kind}")
    return out
