"""The integrity gate: no change may weaken what a proof means.

It rejects, in the changed files (`gates/constructs.py`): a new axiom (unless
allowed), a new `admit`, `sorryAx` (however it is spelled), `native_decide`/
`bv_decide`/`decide +native`, an option that skips or hides checking, `#exit`,
`@[implemented_by]`/`@[extern]` on a theorem, a macro that hides a `sorry`, code
run at build time, `#guard_msgs`, meta code (`elab`, `macro_rules`, `simproc`,
any attribute not known to be harmless, `import Lean…`), syntax that declares a
command or takes an interpolated string (each unless its `[gates]` switch allows
it), a token holding a comment or string start, text the lexer cannot read as
Lean does, an import of a project module no committed file provides; an
instance, `open`, `export` or syntax that a statement whose sorry the change
closes can see (`gates/reach.py`, unless allowed); edits to protected files or to the orchestrator's
state files; and closing a sorry by deleting, renaming or restating its
declaration, by changing what its statement depends on (the variables, notations
and options before it, or a definition it names); a proof traded for a sorry
(under its name, or under a new one with its statement: `gates/sorry.traded`)
without a declared restructuring and room in the restructuring budget, whatever
the net count; and a change of meaning to a statement locked as faithful
(statement_lock.json), approved by a person (`inp.approved`, from the base's
reviews.toml, whatever `[audit] judge_in_loop` says) or paired with the book at
the base (`inp.paired`: by the book's files or the pairing ledger, never by a
doc comment's heading, so its removal or rename, which unpairs or moves it, is
one too), unless the strategy declares the restatement on a line of its own
(`gates/directives.py`) and, with `restate_requires_approval` or for a
statement a person approved, a person approved that very change. A statement a
person rejected (`inp.rejected`) is none of these: restating it is what the
rejection asks for. A declared restatement still lands only if the judge finds
it faithful or stronger (the cycle's `restatement` gate).
"""

from __future__ import annotations

import re
import tomllib

from gates import constructs, directives, reach
from gates.base import GateInput, GateResult
from gates.index import Decl
from gates.lexer import ID_REST
from gates.meaning import changed_meanings, closures, meanings
from gates.scope import matches
from gates.sorry import over_budget, restructuring, traded

NAME = "integrity"
VANISHED = "was deleted or renamed"  # what `restated` says of a statement the change removed

_DEFINING = frozenset({"def", "abbrev", "structure", "class", "inductive", "instance", "opaque"})


def restatements(strategy: str) -> dict[str, str]:
    """`RESTATE: <declaration> — <rationale>` lines of the strategy: declaration → rationale (maybe empty)."""
    return directives.restatements(strategy)


def check(inp: GateInput) -> GateResult:
    problems = (_protected(inp) + constructs.problems(inp) + reach.problems(inp)
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


def _vanished(inp: GateInput) -> list[str]:
    """Sorry-holding declarations of the base that were deleted, renamed, or restated while closed."""
    touched = {c.path for c in inp.lean_changes()}
    now: dict[str, Decl] = inp.after.by_key
    meant_before, meant_now = meanings(inp.before, bodies=False, only=touched), meanings(inp.after, bodies=False,
                                                                                         only=touched)
    old_keys = inp.before.by_key.keys()
    added = [d for _, d in inp.after.decls_in(touched) if d.key not in old_keys]
    out: list[str] = []
    for path, d in inp.before.decls_in(touched):
        if not d.holes:
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
    before, after = inp.before.by_key, inp.after.by_key
    # A declaration shared by both (an unchanged file's) is unchanged: only the keys of the files that differ can
    # name another, taken in the base's file order.
    _, keys = inp.before.changes(inp.after)
    located = inp.before.located
    rank = {p: i for i, p in enumerate(inp.before.files)}
    ordered = sorted((k for k in keys if k in before), key=lambda k: (rank[located[k][0]], located[k][1].line))
    changed = {d.name.rsplit(".", 1)[-1]: d.name for key in ordered if (d := before[key]).kind in _DEFINING and d.name
               and (key not in after or (after[key] is not d and after[key].text_hash != d.text_hash))}
    out: list[str] = []
    for key in ordered:
        old, new = before[key], after.get(key)
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
    """Statements locked as faithful or approved by a person, or paired with the book at the base (none a person
    rejected: `GateInput` leaves those out), whose meaning this change altered or that it removed: declaration →
    what happened."""
    names = set(inp.locked) | inp.paired
    if not names:
        return {}
    present = inp.after.named
    changed = changed_meanings(inp.before, inp.after)
    holding = {path for path, d in inp.after.decls() if d.name in inp.locked}
    # The lock keeps a statement's own meaning; a person approved it with the definitions it reaches (`closures`).
    now = {**meanings(inp.after, only=holding), **(closures(inp.after, only=inp.approved) if inp.approved else {})}
    out: dict[str, str] = {}
    for name in sorted(names):
        if name not in present:
            out[name] = VANISHED
        elif name in changed:
            out[name] = changed[name]
        elif name in inp.locked and any(f != inp.locked[name] for f in now.get(name, [])):
            out[name] = "changed"
    return out


def _restated(inp: GateInput) -> list[str]:
    """A statement locked as faithful, approved by a person, or paired with the book, changed meaning (or vanished)
    without a declared restatement, or without a person's approval where one is required: always for a statement
    a person approved. A declared one lands only if the judge then finds it faithful or stronger (the cycle's
    judge phase)."""
    moved = restated(inp)
    if not moved:
        return []
    declared = restatements(inp.strategy)
    needed = inp.gates.restate_requires_approval or any(n in inp.approved for n in moved)
    approvals, problem = restate_approvals(inp) if needed else ({}, None)
    old = closures(inp.before, only=moved)  # what it meant whole, definitions included: what a person leaves
    out: list[str] = [problem] if problem else []
    for name, what in moved.items():
        person = name in inp.approved
        kind = (f"was approved by a person ({inp.gates.reviews}) and is locked" if person
                else "was judged faithful to the book and is locked" if name in inp.locked
                else "is paired with a statement of the book")
        why = declared.get(name)
        if not why:
            hint = (f"the strategy's `RESTATE: {name}` gives no rationale" if why == "" else
                    f"restating it needs a line `RESTATE: {name} — <rationale>` in the strategy")
            out.append(f"{name}: its statement {kind}, and it {what}; {hint}"
                       + (", and a person's approval of the restatement" if person else ""))
            continue
        digest = (old.get(name) or ["?"])[0]
        if (person or inp.gates.restate_requires_approval) and digest not in approvals.get(name, set()):
            rule = ("a person approved this statement, so only a person may approve a change of it" if person
                    else "restatements need a person's approval ([gates] restate_requires_approval)")
            out.append(f"{name}: its statement {kind}, and it {what}; {rule}: add `[[restate]]` with "
                       f"`declaration = \"{name}\"` and `from = \"{digest}\"` to {inp.gates.restate_approvals} and "
                       "commit it")
    return out


def restate_approvals(inp: GateInput) -> tuple[dict[str, set[str]], str | None]:
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
