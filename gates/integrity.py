"""The integrity gate: no change may weaken what a proof means.

It rejects, in the changed files: a new axiom (unless allowed), a new `admit`,
`sorryAx` (however it is spelled), `native_decide`/`bv_decide`/`decide +native`,
an option that skips or hides checking, `#exit`, `@[implemented_by]`/`@[extern]`
on a theorem, a macro that hides a `sorry`, code run at build time, `#guard_msgs`,
meta code (`elab`, `macro_rules`, elaborator attributes, `import Lean…`), syntax
that declares a command or takes an interpolated string (each unless its
`[gates]` switch allows it), text the lexer cannot read as Lean does, an import
of a project module no committed file provides; an instance attribute, `local
instance`, `open` or new instance that a statement whose sorry the change closes
can see (unless allowed); edits to protected files or to the orchestrator's
state files; and closing a sorry by deleting, renaming or restating its
declaration, by changing what its statement depends on (the variables, notations
and options before it, or a definition it names); a proof traded for a sorry
without a declared restructuring and room in the restructuring budget, whatever
the net count; and a change of meaning to a statement locked as faithful
(statement_lock.json) or paired with the book at the base, unless the strategy
declares the restatement on a line of its own (`gates/directives.py`) and, with
`restate_requires_approval`, a person approved that very change. A declared
restatement still lands only if the judge finds it faithful or stronger (the
cycle's `restatement` gate).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter

from gates import directives
from gates.base import GateInput, GateResult
from gates.imports import ImportGraph
from gates.index import (
    BUILD_TIME_CODE,
    META_ATTRIBUTES,
    SUSPECT_NAMES,
    THEOREM_KINDS,
    Decl,
    FileIndex,
    Marker,
    attribute_names,
)
from gates.lexer import ID_REST
from gates.meaning import changed_meanings, meanings
from gates.scope import matches
from gates.sorry import over_budget, restructuring, traded

NAME = "integrity"

WEAKENING_OPTIONS = frozenset({"debug.skipKernelTC", "debug.byAsSorry", "warn.sorry", "suppressSorry"})
_TRUSTING_ATTRIBUTES = ("implemented_by", "extern")
_DEFINING = frozenset({"def", "abbrev", "structure", "class", "inductive", "instance", "opaque"})
_META_COMMANDS = frozenset({"elab", "elab_rules", "macro_rules"})
_META_BUILD_TIME = frozenset({"run_cmd", "run_elab", "run_meta", "initialize", "builtin_initialize"})
_CONTEXT_MARKERS = frozenset({"open", "instance attribute"})


def restatements(strategy: str) -> dict[str, str]:
    """`RESTATE: <declaration> — <rationale>` lines of the strategy: declaration → rationale (maybe empty)."""
    return directives.restatements(strategy)


def check(inp: GateInput) -> GateResult:
    problems = (_protected(inp) + _new_constructs(inp) + _unseen_imports(inp) + _context_with_proof(inp)
                + _vanished(inp) + _weakened(inp) + _restated(inp))
    if problems:
        return GateResult(NAME, False, "; ".join(problems))
    return GateResult(NAME, True, "no new axiom, admit, sorryAx or checking option; no sorry closed by removal "
                                  "or restatement")


def _protected(inp: GateInput) -> list[str]:
    state = inp.state_dir.strip("/")
    out = [f"{c.path} is protected and was {c.kind}" for c in inp.changes if matches(c.path, inp.gates.protected)]
    if state:
        out += [f"{c.path} belongs to the orchestrator and was {c.kind}" for c in inp.changes
                if c.path.startswith(f"{state}/") and not matches(c.path, [f"{state}/issues/*.md"])]
    return out


def _new_constructs(inp: GateInput) -> list[str]:
    out: list[str] = []
    base_axioms = {(d.key, d.statement_hash) for _, d in inp.before.axioms()}
    for change in inp.lean_changes():
        before = inp.before.files.get(change.path, FileIndex(change.path))
        after = inp.after.files.get(change.path)
        if after is None:
            continue
        where = change.path
        for d in after.axioms:
            if (d.key, d.statement_hash) not in base_axioms and d.name not in inp.gates.allowed_axioms:
                out.append(f"{where}:{d.line}: new axiom {d.name} (allowed: {', '.join(inp.gates.allowed_axioms)})")
        out += _rises(where, "admit", _admits(before), _admits(after))
        out += _rises(where, "sorry inside a macro/notation", _macro_holes(before), _macro_holes(after))
        out += _rises(where, "", _markers(before, inp), _markers(after, inp))
        if not inp.gates.allow_meta_code:
            out += [f"{where}: new import {m} (meta code; set [gates] allow_meta_code to permit it)"
                    for m in sorted(set(after.imports) - set(before.imports)) if m == "Lean" or m.startswith("Lean.")]
        base_trusting = {d.key for d in before.decls if _trusting(d)}
        out += [f"{where}:{d.line}: @[{', '.join(d.attributes)}] on {d.kind} {d.name}"
                for d in after.decls if _trusting(d) and d.key not in base_trusting]
    return out


def _vanished(inp: GateInput) -> list[str]:
    """Sorry-holding declarations of the base that were deleted, renamed, or restated while closed."""
    touched = {c.path for c in inp.lean_changes()}
    now: dict[str, Decl] = {d.key: d for _, d in inp.after.decls()}
    meant_before, meant_now = meanings(inp.before, bodies=False, only=touched), meanings(inp.after, bodies=False,
                                                                                         only=touched)
    old_keys = {d.key for _, d in inp.before.decls()}
    added = [d for path, d in inp.after.decls() if path in touched and d.key not in old_keys]
    out: list[str] = []
    for path, d in inp.before.decls():
        if path not in touched or not d.holes:
            continue
        label = d.name or f"{d.kind} at {path}:{d.line}"
        successor = now.get(d.key)
        if successor is None:
            twin = next((a for a in added if a.statement_hash == d.statement_hash), None)
            verb = f"renamed to {twin.name}" if twin and twin.name else "deleted"
            out.append(f"{label} held {d.holes} sorry/admit in {path} and was {verb}; close the sorry instead")
        elif successor.holes < d.holes and (
                sorted(meant_now.get(d.name, [])) != sorted(meant_before.get(d.name, [])) if d.name
                else successor.statement_hash != d.statement_hash):
            what = ("its statement" if successor.statement_text != d.statement_text
                    else "what its statement means (the variables, includes, notations or namespaces opened "
                         "before it)")
            out.append(f"{label}: {what} changed in the same change that closed its sorry; change a statement in "
                       "one cycle and prove it in another")
    return out


def _weakened(inp: GateInput) -> list[str]:
    """A definition a closed theorem's statement names was changed; a proof was traded for a sorry."""
    before = {d.key: d for _, d in inp.before.decls()}
    after = {d.key: d for _, d in inp.after.decls()}
    changed = {d.name.rsplit(".", 1)[-1]: d.name for key, d in before.items()
               if d.kind in _DEFINING and d.name and (key not in after or after[key].text_hash != d.text_hash)}
    out: list[str] = []
    for key, old in before.items():
        new = after.get(key)
        if new is None:
            continue
        if old.holes and new.holes < old.holes and changed:
            used = [full for short, full in changed.items()
                    if re.search(rf"(?<![{ID_REST}]){re.escape(short)}(?![{ID_REST}])", new.statement_text)]
            if used:
                out.append(f"{old.name}: {', '.join(used)}, which its statement uses, changed in the same change "
                           "that closed its sorry; change definitions in one cycle and prove in another")
    return out + _traded(inp)


def _traded(inp: GateInput) -> list[str]:
    """A proof traded for a sorry is a restructuring whatever the net count: declared, and within the budget."""
    names = traded(inp.before, inp.after)
    if not names:
        return []
    if restructuring(inp.report) is None:
        return [f"{name} was proved and now holds a sorry; if that is a deliberate restructuring, declare it with "
                "`RESTRUCTURING: <rationale>` on a line of its own in the report" for name in names]
    spent = over_budget(inp)
    return [f"{', '.join(names)}: a proof traded for a sorry is a restructuring, and {spent}; close sorries "
            "instead"] if spent else []


def restated(inp: GateInput) -> dict[str, str]:
    """Statements locked as faithful, or paired with the book at the base, whose meaning this change altered or
    that it removed: declaration → what happened."""
    names = set(inp.locked) | inp.paired
    if not names:
        return {}
    present = {d.name for _, d in inp.after.decls() if d.name}
    changed = changed_meanings(inp.before, inp.after)
    holding = {path for path, d in inp.after.decls() if d.name in inp.locked}
    now = meanings(inp.after, only=holding)
    out: dict[str, str] = {}
    for name in sorted(names):
        if name not in present:
            out[name] = "was deleted or renamed"
        elif name in changed:
            out[name] = changed[name]
        elif name in inp.locked and any(f != inp.locked[name] for f in now.get(name, [])):
            out[name] = "changed"
    return out


def _restated(inp: GateInput) -> list[str]:
    """A statement locked as faithful, or paired with the book, changed meaning (or vanished) without a declared
    restatement, or without a person's approval where one is required. A declared one lands only if the judge
    then finds it faithful or stronger (the cycle's judge phase)."""
    moved = restated(inp)
    if not moved:
        return []
    declared = restatements(inp.strategy)
    approvals, problem = _approvals(inp) if inp.gates.restate_requires_approval else ({}, None)
    old = meanings(inp.before, only={p for p, d in inp.before.decls() if d.name in moved})
    out: list[str] = [problem] if problem else []
    for name, what in moved.items():
        kind = ("was judged faithful to the book and is locked" if name in inp.locked
                else "is paired with a statement of the book")
        why = declared.get(name)
        if not why:
            hint = (f"the strategy's `RESTATE: {name}` gives no rationale" if why == "" else
                    f"restating it needs a line `RESTATE: {name} — <rationale>` in the strategy")
            out.append(f"{name}: its statement {kind}, and it {what}; {hint}")
            continue
        digest = (old.get(name) or ["?"])[0]
        if inp.gates.restate_requires_approval and digest not in approvals.get(name, set()):
            out.append(f"{name}: its statement {kind}, and it {what}; restatements need a person's approval "
                       f"([gates] restate_requires_approval): add `[[restate]]` with `declaration = \"{name}\"` and "
                       f"`from = \"{digest}\"` to {inp.gates.restate_approvals} and commit it")
    return out


def _approvals(inp: GateInput) -> tuple[dict[str, set[str]], str | None]:
    """The restatements a person approved, as the base has them: declaration → meaning hashes it may leave."""
    path = inp.gates.restate_approvals
    if path not in inp.base.files():
        return {}, None
    try:
        data = tomllib.loads(inp.base.read(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return {}, f"{path} cannot be read ({e}); no restatement is approved until it is fixed"
    out: dict[str, set[str]] = {}
    for row in data.get("restate", []) if isinstance(data.get("restate"), list) else []:
        if isinstance(row, dict) and isinstance(row.get("declaration"), str) and isinstance(row.get("from"), str):
            out.setdefault(row["declaration"], set()).add(row["from"])
    return out, None


def _rises(where: str, what: str, before: Counter[str], after: Counter[str]) -> list[str]:
    return [f"{where}: new {what or key}{f' in {key}' if what else ''} (+{after[key] - before[key]})"
            for key in sorted(after) if after[key] > before[key]]


def _admits(f: FileIndex) -> Counter[str]:
    return Counter(h.declaration or h.owner or "top level" for h in f.holes if h.keyword == "admit")


def _macro_holes(f: FileIndex) -> Counter[str]:
    return Counter("the file" for h in f.holes if h.in_macro)


def _markers(f: FileIndex, inp: GateInput) -> Counter[str]:
    gates = inp.gates
    out: Counter[str] = Counter()
    for m in f.markers:
        if m.kind == "set_option":
            if m.detail in WEAKENING_OPTIONS:
                out[f"set_option {m.detail}"] += 1
        elif m.kind == "#exit":
            out["#exit (nothing after it is checked)"] += 1
        elif m.kind in _META_BUILD_TIME:
            switches = [s for s, on in (("allow_build_time_code", gates.allow_build_time_code),
                                        ("allow_meta_code", gates.allow_meta_code)) if not on]
            if switches:
                out[f"{m.kind} (meta code run at build time; set [gates] {' and '.join(switches)} to permit it)"] += 1
        elif m.kind in BUILD_TIME_CODE:
            if not gates.allow_build_time_code:
                out[f"{m.kind} (code run at build time; set [gates] allow_build_time_code to permit it)"] += 1
        elif m.kind == "#guard_msgs":
            if not gates.allow_guard_msgs:
                out["#guard_msgs (it drops Lean's messages, the sorry warning and errors included; set [gates] "
                    "allow_guard_msgs to permit it)"] += 1
        elif m.kind == "meta attribute":
            if not gates.allow_meta_code:
                out[f"`{m.detail}` (meta code; set [gates] allow_meta_code to permit it)"] += 1
        elif m.kind == "command syntax":
            if not gates.allow_command_syntax:
                out[f"{m.detail} declaring a command (it could redefine `#print axioms`; set [gates] "
                    "allow_command_syntax to permit it)"] += 1
        elif m.kind == "interpolatedStr syntax":
            if not gates.allow_command_syntax:
                out[f"{m.detail} taking `interpolatedStr` (the gates cannot tell its strings from plain ones; set "
                    "[gates] allow_command_syntax to permit it)"] += 1
        elif m.kind == "ambiguous":
            out[f"text the gates cannot read as Lean does: {m.detail}"] += 1
        elif m.kind in _CONTEXT_MARKERS:
            continue  # weighed against the sorries the change closes
        elif m.kind == "attribute":
            out[f"`{m.detail}`"] += 1
        elif m.kind in SUSPECT_NAMES:
            out[f"{m.kind} (as `{m.detail}`)" if m.detail != m.kind else m.kind] += 1
        else:
            out[m.kind if m.detail == m.kind else f"{m.kind} (as `{m.detail}`)"] += 1
    if not gates.allow_meta_code:
        for kind, _ in f.macros:
            if kind in _META_COMMANDS:
                out[f"{kind} (meta code; set [gates] allow_meta_code to permit it)"] += 1
        for d in f.decls:
            for name in set(attribute_names(",".join(d.attributes))) & META_ATTRIBUTES:
                out[f"@[{name}] on {d.name or d.kind} (meta code; set [gates] allow_meta_code to permit it)"] += 1
    return out


def _unseen_imports(inp: GateInput) -> list[str]:
    """A new import of a project module that no file git would commit provides: the gates cannot see it, and a
    clean checkout could not build it."""
    ours = {root.strip("/").rsplit("/", 1)[-1] for root in inp.lean_roots}
    graph = ImportGraph(inp.after)
    out: list[str] = []
    for change in inp.lean_changes():
        after = inp.after.files.get(change.path)
        if after is None:
            continue
        before = inp.before.files.get(change.path, FileIndex(change.path))
        out += [f"{change.path} imports {module}, which no file that git would commit provides (it is missing, or "
                "git ignores it): the gates cannot read it and a clean checkout cannot build it"
                for module in sorted(set(after.imports) - set(before.imports))
                if module.split(".")[0] in ours and change.path in graph.unresolved.get(module, set())]
    return out


def _context_with_proof(inp: GateInput) -> list[str]:
    """An instance attribute, `local instance`, `open` or new instance that a statement whose sorry the change
    closes can see: its text stays the same while what it means may not."""
    if inp.gates.allow_context_with_proof:
        return []
    touched = {c.path for c in inp.lean_changes()}
    holes = {d.key: d.holes for _, d in inp.before.decls()}
    closed = [(path, d) for path, d in inp.after.decls()
              if path in touched and d.holes < holes.get(d.key, 0)]
    if not closed:
        return []
    old = {d.key for _, d in inp.before.decls()}
    added: dict[str, list[tuple[int, str, bool]]] = {}  # path → (line, what, seen beyond the file)
    for path in touched:
        after = inp.after.files.get(path)
        if after is None:
            continue
        before = inp.before.files.get(path, FileIndex(path))
        found = [(m.line, f"`{m.detail}`", m.kind == "instance attribute" and not _local(m.detail))
                 for m in _new_markers(before, after) if m.kind in _CONTEXT_MARKERS]
        found += [(d.line, f"instance {d.name}" if d.name else "an instance", "local" not in d.modifiers)
                  for d in after.decls if d.kind == "instance" and d.key not in old]
        if found:
            added[path] = found
    if not added:
        return []
    graph = ImportGraph(inp.after)
    out: list[str] = []
    for path, d in closed:
        seen = [f"{what} (line {line})" for line, what, _ in added.get(path, []) if line < d.line
                and _reaches(inp.after.files[path], line, what, d)]
        seen += [f"{what} ({other}:{line})" for other in sorted(_imported(graph, path)) if other != path
                 for line, what, beyond in added.get(other, []) if beyond]
        if seen:
            out.append(f"{d.name or d.key}: {', '.join(seen)} added where its statement can see it, in the same change "
                       "that closed its sorry: it can change what the statement means; land it in a change of its "
                       "own, or set [gates] allow_context_with_proof")
    return out


def _new_markers(before: FileIndex, after: FileIndex) -> list[Marker]:
    """The markers of `after` that `before` lacks, counted by kind and text."""
    left = Counter((m.kind, m.detail) for m in before.markers)
    out = []
    for m in after.markers:
        if left[(m.kind, m.detail)] > 0:
            left[(m.kind, m.detail)] -= 1
        else:
            out.append(m)
    return out


def _reaches(f: FileIndex, line: int, what: str, d: Decl) -> bool:
    """Whether something at `line` reaches `d`: `open … in` only the declaration right after it."""
    if not (what.startswith("`open") and what.endswith(" in`")):
        return True
    following = [x for x in f.decls if x.line >= line]
    return bool(following) and min(following, key=lambda x: x.line) is d


def _local(attribute: str) -> bool:
    return bool(re.search(r"\[\s*(?:local|scoped)\b", attribute))


def _imported(graph: ImportGraph, path: str) -> set[str]:
    seen: set[str] = set()
    todo = [path]
    while todo:
        for dep in graph.imports.get(todo.pop(), set()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def _trusting(d: Decl) -> bool:
    return d.kind in THEOREM_KINDS and any(a.split()[0] in _TRUSTING_ATTRIBUTES
                                           for attr in d.attributes for a in attr.split(",") if a.strip())
