"""What a closed statement can see: the instances, `open`s, exports and syntax around a statement whose sorry a
change closes, compared before and after the change.

A statement's text can stay the same while what it means changes: an instance found by a different search, a name
resolved through another namespace, a notation or macro that expands differently. Until the kernel compares the
elaborated statements, a change that closes a sorry may not also add or change, where that statement can see it:

- in its own file, before it: an instance (`instance`, `@[instance] def`, `attribute [instance]`, `deriving
  instance`, each `local` one until the end of its section or namespace), an `open` (an `open … in` only where it
  wraps the statement's declaration, or a command the statement comes after: an instance, a notation), an `export`;
- in a project file it imports, transitively: an instance or instance attribute that is not `local` (`scoped` ones
  reach every file that opens the namespace), an `export`, and every `syntax`, `macro`, `notation`, `infix`…,
  `elab` or `macro_rules` that is not `local`.

Each is told from another by its text, so one the base had that moved into sight, whose text changed (an
instance's body), or that a newly imported project file shows, counts as added. Out of sight, and so allowed:
anything inside the closed declaration after its statement (`by open Real in simp`, `haveI`, `letI`), in another
declaration's proof (an `open … in` wrapping a tactic or a term), after the statement, in a section closed before
it, or in a file it does not import. The class of a new instance is not weighed: the statement's elaboration may
need it through instance chains, coercions or numerals without naming it, so a new instance anywhere the statement
can see counts.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterator

from gates.base import GateInput
from gates.census import Census
from gates.imports import ImportGraph
from gates.index import Decl, FileIndex, Marker, attribute_items
from gates.lexer import ID_REST

NAME = "what a closed statement can see"
_INSTANCE_ATTRIBUTES = frozenset({"instance", "default_instance"})
_OPEN_IN = re.compile(rf"open\b.*?(?<![{ID_REST}.])in(?![{ID_REST}])")
_SPACE = re.compile(r"\s*")


def problems(inp: GateInput) -> list[str]:
    """The closed statements that something added or changed in the same change can reach."""
    if inp.gates.allow_context_with_proof:
        return []
    touched = {c.path for c in inp.lean_changes()}
    base = inp.before.located
    closed = [(path, d) for path, d in inp.after.decls()
              if path in touched and d.key in base and d.holes < base[d.key][1].holes]
    if not closed:
        return []
    graphs = (inp.before.graph, inp.after.graph)
    out: list[str] = []
    for path, d in closed:
        old_path, old = base[d.key]
        was = Counter(key for key, _ in _seen(inp.before, graphs[0], old_path, old))
        seen = []
        for key, label in _seen(inp.after, graphs[1], path, d):
            if was[key] > 0:
                was[key] -= 1
            else:
                seen.append(label)
        if seen:
            out.append(f"{d.name or d.key}: {', '.join(seen)} added where its statement can see it, in the same "
                       "change that closed its sorry: it can change what the statement means; land it in a change "
                       "of its own (inside the proof, an `open … in`, `haveI` or `letI` stays out of the statement's "
                       "sight), or set [gates] allow_context_with_proof")
    return out


def _seen(census: Census, graph: ImportGraph, path: str, d: Decl) -> Iterator[tuple[str, str]]:
    """What `d`'s statement can see that a change may add: (which it is, how to name it)."""
    f = census.files[path]
    for key, label, at in _own(f, d):
        yield key, f"{label} (line {f.source.line(at) if f.source else '?'})"
    for other in sorted(_imported(graph, path) - {path}):
        g = census.files.get(other)
        if g is not None:
            for key, label, at in _exported(g):
                yield key, f"{label} ({other}:{g.source.line(at) if g.source else '?'})"


def _own(f: FileIndex, d: Decl) -> Iterator[tuple[str, str, int]]:
    """Instances, `open`s and exports of `d`'s file that reach its statement."""
    for m in f.markers:
        if m.offset >= d.start or not _context(m):
            continue
        target = _in_target(f, m)
        if target is not None:  # `open X in` reaches only what it wraps
            if not _wraps(f, target, d):
                continue
        elif _scoped_out(f, m.offset, m.kind == "open" or _local(m), d):
            continue
        yield f"{m.kind}:{m.detail}", f"`{m.detail}`", m.offset
    for other in f.decls:
        if (other is not d and other.start < d.start and _instance(other)
                and not _scoped_out(f, other.start, "local" in other.modifiers or _local_attribute(other), d)):
            yield f"instance:{other.text_hash}", f"instance {other.name}" if other.name else "an instance", other.start


def _exported(f: FileIndex) -> Iterator[tuple[str, str, int]]:
    """What a file shows the files importing it: instances and instance attributes not `local`, exports, syntax."""
    for m in f.markers:
        if (m.kind in ("attribute", "deriving") and _context(m) and not _local(m)) or m.kind == "export" or (
                m.kind == "syntax" and m.args != "local"):
            yield f"{m.kind}:{m.detail}", f"`{m.detail[:80]}`", m.offset
    for d in f.decls:
        if _instance(d) and "local" not in d.modifiers and not _local_attribute(d):
            yield f"instance:{d.text_hash}", f"instance {d.name}" if d.name else "an instance", d.start


def _context(m: Marker) -> bool:
    if m.kind == "attribute":
        return bool({name for name, _ in attribute_items(m.args)} & _INSTANCE_ATTRIBUTES)
    if m.kind == "deriving":
        return m.detail.split()[1:2] == ["instance"]
    return m.kind in ("open", "export")


def _instance(d: Decl) -> bool:
    """An instance, however declared: `instance`, or a declaration with an instance attribute."""
    return d.kind == "instance" or any(name in _INSTANCE_ATTRIBUTES
                                       for attr in d.attributes for name, _ in attribute_items(attr))


def _local(m: Marker) -> bool:
    return any(item.split()[:1] == ["local"] for _, item in attribute_items(m.args))


def _local_attribute(d: Decl) -> bool:
    return any(name in _INSTANCE_ATTRIBUTES and item.split()[:1] == ["local"]
               for attr in d.attributes for name, item in attribute_items(attr))


def _in_target(f: FileIndex, m: Marker) -> int | None:
    """Where the command an `… in` wraps starts (blanks and comments skipped); None when `m` wraps nothing."""
    if f.source is None or m.kind not in ("open", "attribute"):
        return None
    code = f.source.code
    end: int | None
    if m.kind == "open":
        line_end = code.find("\n", m.offset)
        found = _OPEN_IN.match(code, m.offset, len(code) if line_end < 0 else line_end)
        end = found.end() if found else None
    else:
        i = bisect.bisect_right(f.commands, m.offset)
        stop = f.commands[i] if i < len(f.commands) else len(code)
        end = stop if code[m.offset:stop].split()[-1:] == ["in"] else None
    return None if end is None else _SPACE.match(code, end).end()  # type: ignore[union-attr]  # matches empty


def _wraps(f: FileIndex, target: int, d: Decl) -> bool:
    """Whether the command starting at `target` is `d`, or a command `d` comes after that can change it (an
    instance, a notation, another `… in` that does); a tactic or a term (an `open … in` inside a proof) is not."""
    code = f.source.code if f.source else ""
    first = {_SPACE.match(code, b).end(): b for b in f.commands}  # type: ignore[union-attr]  # doc comments skipped
    start = first.get(target)
    if start == d.start:
        return True
    if start is None or start >= d.start:
        return False
    wrapped = next((x for x in f.decls if x.start == start), None)
    if wrapped is not None:
        return _instance(wrapped)
    inner = next((m for m in f.markers if m.offset == start), None)
    if inner is not None and (nested := _in_target(f, inner)) is not None:
        return _wraps(f, nested, d)
    return True  # another command: a notation, an attribute, a `variable` the statement comes after


def _scoped_out(f: FileIndex, at: int, scoped: bool, d: Decl) -> bool:
    """Whether something at `at`, lasting to the end of its section or namespace, ends before `d`."""
    return scoped and any(start <= at and end <= d.start for start, end in f.scopes)


def _imported(graph: ImportGraph, path: str) -> set[str]:
    seen: set[str] = set()
    todo = [path]
    while todo:
        for dep in graph.imports.get(todo.pop(), set()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen
