"""The kernel gate: what Lean's environment says about the change, once it builds.

Lean lists every constant of the modules the change can alter (the changed files and every project file importing
one) and of everything they import (`gates.listing`, `gates.env`): named or not, private or not, auxiliary or
not, whatever command made it. The base's listing was taken before the Worker ran (`GateInput.kernel_base`). From
the two, the gate rejects:

- a change Lean could not list: a module that does not build, an answer missing, cut short or unreadable, a
  module importing project code that runs as it is loaded; no answer is never a pass;
- a hole no text shows: a constant of the change whose own terms hold `sorryAx` (`stop`, `apply?`, a macro, meta
  code, an error `#guard_msgs` swallowed, a second command on the line of a sorried one), unless it belongs to a
  declaration whose text writes a `sorry` or `admit`, or held one at the base;
- a module Lean loaded from a file nothing vouches for (`unaccounted`): one the change's code wrote while it was
  built;
- more holes than the base, counted as Lean says (each declaration owning a constant with `sorryAx` in its own
  terms counts the distinct `sorryAx` terms their values hold; anonymous instances and generated constants count
  too), unless the report declares a restructuring the budget has room for (`gates.sorry.judge`);
- an axiom beyond `[gates] allowed_axioms` and the base's own project axioms that any constant of those modules
  depends on and did not at the base (an axiom of the base whose meaning the change altered is no longer the
  base's); native code (`Lean.ofReduceBool`, `Lean.trustCompiler`, the `_native` axioms of newer Lean) with
  its own message;
- a statement whose hole the change closes, or that is locked (by the judge or a person's approval, never one a
  person rejected; unless the strategy restates it), whose meaning
  (`gates.environment.Env.meaning`: its type and every project constant it reaches, private and generated ones
  included) differs from the base's, or cannot be computed; with no listing of the base, a locked statement is
  held to the meaning stored in the lock;
- a project module of the change's environment (the changed ones, those importing one, and every project module
  they import) failing a kernel replay: leanchecker where the toolchain has it, else our own program
  (`gates.replay`); `[gates] kernel_replay = "off"` alone skips it.

A declaration closed by appeal to a lemma still holding a hole is top-down work, not a proof: its own hole is gone
(and Lean counts the lemma's), so it passes, and the verdict names the holes it rests on. Nothing here reads a
declaration's text to excuse what Lean says: the text only says how many sorries a holed declaration shows, and
which declaration a person or the lock means by a name.

A change re-applied onto a moved branch keeps this gate's verdict against its base only when `gates.regate` shows
nothing Lean would answer on can differ (`GateInput.recheck`); otherwise the gate runs in full.
"""

from __future__ import annotations

import structlog

from gates import listing, replay, sorry
from gates.base import GateInput, GateResult
from gates.census import Census
from gates.env import SORRY, Module, normal, unaccounted
from gates.environment import Baseline, Env, Unanswered, lean_names
from gates.index import Decl
from gates.integrity import restate_approvals, restatements
from gates.listing import gather
from gates.meaning import closures
from gates.probe import canonical, modules_of
from gates.tree import is_lean_source

log = structlog.get_logger()
NAME = "kernel"
NATIVE = ("Lean.ofReduceBool", "Lean.trustCompiler")
MAX_REPORTED = 12


def check(inp: GateInput) -> GateResult:
    reads_any = inp.gates.allow_build_time_code and bool(inp.changes)  # `include_str` reads any file
    if not inp.lean_changes() and not reads_any:
        return GateResult(NAME, True, "no Lean file changed")
    if inp.compiler is None:
        raise ValueError("the kernel gate needs a compiler")
    if inp.recheck is not None and not inp.recheck.kernel:
        return GateResult(NAME, True, inp.recheck.why)
    base = inp.kernel_base or Baseline(problem="no listing of the base was taken")
    affected = affected_files(inp)
    known = {p: m for p, m in base.modules.items() if p in inp.after.files and p not in affected}
    chain = listing.chain(base.toolchain, inp.changed, inp.lean_roots, inp.gates, inp.state_dir)
    got = gather(inp.compiler, inp.after, inp.lean_roots, affected, chain, inp.kernel_cache, known=known)
    if got.problem is not None:
        return GateResult(NAME, False, f"Lean's environment could not be listed after the change, so nothing it "
                                       f"would say can be shown: {got.problem}")
    inp.before.lean.update({p: m for p, m in base.modules.items() if p in inp.before.files})
    inp.after.lean.update(got.modules)
    before = Env(base.modules.values(), modules_of(inp.before, inp.lean_roots).values())
    ours = set(modules_of(inp.after, inp.lean_roots).values())
    after = Env(got.modules.values(), ours)
    changed_modules = [got.modules[p] for p in sorted(affected) if p in got.modules]
    problems = unaccounted(got.files, got.project, ours)
    problems += (_holes(inp, base, changed_modules) + _count(inp) + _axioms(inp, before, after, changed_modules))
    statements, notes = _statements(inp, base, before, after, affected)
    problems += statements
    if not problems:
        failed, note = _replay(inp, replayed(inp, got.files, ours), got.files, ours)
        problems += failed
        notes += note
    if problems:
        shown = problems[:MAX_REPORTED] + ([f"… and {len(problems) - MAX_REPORTED} more"]
                                           if len(problems) > MAX_REPORTED else [])
        return GateResult(NAME, False, "\n".join(shown + notes))
    # Kept for later cycles only once it passed: a listing of a refused change may be one its own code forged, and a
    # cached listing is never asked of Lean again (no module accounted for, no replay).
    inp.kernel_learned = got.fresh
    allowed = ", ".join(inp.gates.allowed_axioms) or "none"
    consts = sum(len(m.consts) for m in changed_modules)
    what = (f"Lean listed {len(changed_modules)} module(s) the change can alter ({consts} constants; {got.runs} Lean "
            f"run(s)): no hole a text does not show, no axiom beyond {allowed}")
    return GateResult(NAME, True, "; ".join([what, *notes]))


def affected_files(inp: GateInput) -> set[str]:
    """The files of the changed tree whose listing the change can alter: the changed ones and every project file
    importing one; every file, when build-time code may read a changed file no import names (`include_str`)."""
    changed = {c.path for c in inp.changes}
    if inp.gates.allow_build_time_code and any(not is_lean_source(p, inp.lean_roots) for p in changed):
        return set(inp.after.files) | {p for p in changed if p in inp.after.files}
    return inp.after.graph.dependents({c.path for c in inp.lean_changes()})


# -- modules ---------------------------------------------------------------------------------------------------


# -- holes -----------------------------------------------------------------------------------------------------


def _texts(census: Census, path: str, module: Module) -> dict[str, Decl]:
    """Lean's name of each constant of `module` its text declares → that declaration."""
    by_text = lean_names(module)
    out: dict[str, Decl] = {}
    for d in census.files[path].decls if path in census.files else ():
        if d.name is not None and (lean := by_text.get(normal(d.name))) is not None:
            out[lean] = d
    return out


def _holes(inp: GateInput, base: Baseline, modules: list[Module]) -> list[str]:
    """Holes no text shows, in what the change wrote or altered: a hole is written where it is, or it held one at
    the base and the change left its text as it was."""
    was_keyed = inp.before.by_key
    paths = {m.module: p for p, m in inp.after.lean.items()}
    out = []
    for m in modules:
        was = base.modules.get(paths.get(m.module, ""))
        held = was.holes() if was is not None and was.module == m.module else {}
        written = _texts(inp.after, paths.get(m.module, ""), m)
        for owner, consts in sorted(m.holes().items()):
            d = written.get(owner)
            if d is not None and d.holes > 0:
                continue
            # A hole of the base, left as it was: its text unchanged, or (no text declaring it) its terms.
            untouched = ((old := was_keyed.get(d.key)) is not None and old.text_hash == d.text_hash if d is not None
                         else was is not None and all(was.consts.get(c) == m.consts[c] for c in consts))
            if untouched and owner in held:
                continue
            where = f"line {c.line}" if (c := m.consts[owner]).line else "no line of its own"
            held_by = [c for c in consts if c != owner]
            inside = f" (in {', '.join(held_by[:3])}, which Lean made for it)" if held_by else ""
            out.append(f"{m.module}: {owner} ({where}) holds sorryAx{inside}, though no sorry or "
                       "admit is written in it (a `stop` or `apply?`, a macro, meta code, an error `#guard_msgs` hid, "
                       "or a second command on one line); it is not proved")
    return out


def _count(inp: GateInput) -> list[str]:
    """The sorry gate's rule, on the count Lean gives: a file Lean did not list, on a side where it exists, counts by
    its text on both."""
    unlisted = [{p for p in side.files if p not in side.lean} for side in (inp.before, inp.after)]
    text = unlisted[0] | unlisted[1]
    pre, post = inp.before.count(text), inp.after.count(text)
    if (written := (inp.before.count(inp.before.files), inp.after.count(inp.after.files))) != (pre, post):
        log.info("kernel.count_differs", text=written, lean=(pre, post))
    verdict = sorry.judge(pre, post, inp)
    return [] if verdict.passed else [f"as Lean counts them: {verdict.detail}"]


# -- axioms ----------------------------------------------------------------------------------------------------


def _axioms(inp: GateInput, before: Env, after: Env, modules: list[Module]) -> list[str]:
    ours = {n for n, c in before.consts.items() if c.kind == "axiom" and before.ours(n)}
    altered: dict[str, str] = {}
    for name in ours:
        if name not in after.consts:
            continue
        try:
            if before.meaning(name) != after.meaning(name):
                altered[name] = "its statement means something else now"
        except Unanswered as e:
            altered[name] = f"its meaning cannot be compared ({e})"
    configured = set(inp.gates.allowed_axioms)
    allowed, was_allowed = configured | (ours - set(altered)), configured | ours
    out = []
    for m in modules:
        for c in m.consts.values():
            was = before.consts.get(c.name)
            before_bad = {a for a in was.axioms if a not in was_allowed} if was is not None else set()
            bad = [a for a in c.axioms if a != SORRY and a not in allowed and a not in before_bad]
            native = [a for a in bad if a in NATIVE or "_native" in a.split(".")]
            other = [a for a in bad if a not in native]
            if native:
                out.append(f"{c.name} trusts compiled code rather than the kernel ({', '.join(native[:3])}: "
                           "`native_decide`, `decide +native`, `bv_decide`); allow it in [gates] allowed_axioms only "
                           "if the project means to")
            for a in other:
                if a in altered:
                    out.append(f"{c.name} depends on {a}, a project axiom the change altered ({altered[a]}): an "
                               "axiom is allowed by its name only while it states what it stated; leave it as it "
                               "was, or assume something else under a new name that [gates] allowed_axioms lists")
                else:
                    out.append(f"{c.name} depends on {a}, not among the allowed axioms "
                               f"({', '.join(sorted(allowed)) or 'none'}); add it to [gates] allowed_axioms if the "
                               "project means to assume it")
    return out


# -- statements ------------------------------------------------------------------------------------------------


def _statements(inp: GateInput, base: Baseline, before: Env, after: Env, affected: set[str]
                ) -> tuple[list[str], list[str]]:
    """Closed and locked statements that mean something else than at the base, or whose meaning cannot be
    compared."""
    before_affected = inp.before.graph.dependents({c.path for c in inp.lean_changes()})
    was_holed = {h.name for h in inp.before.holed() if h.path in before_affected}
    now_holed = {h.name for h in inp.after.holed()}
    present = inp.after.named
    closed = sorted(n for n in was_holed if n not in now_holed and n in present)
    locked = sorted(d.name for _, d in inp.after.decls_in(affected) if d.name in inp.locked)
    declared = restatements(inp.strategy)
    out: list[str] = []
    notes: list[str] = []
    leaning = []
    for name in dict.fromkeys([*closed, *locked]):
        now = inp.after.lean_name(name)
        if now is None:
            out.append(f"{name}: no one constant Lean listed after the change answers to that name (none does, or "
                       "more than one declaration is written so)")
            continue
        is_closed = name in closed
        was = inp.before.lean_name(name)
        was = was if was in before.consts else None
        own = was is not None and before.consts[was].kind != "thm" and name not in was_holed
        try:
            meant_now = after.meaning(now, own_value=own)
        except Unanswered as e:
            out.append(f"{name}: its meaning after the change cannot be computed: it reaches {e}")
            continue
        if is_closed and (resting := [h for h in after.holes_reached(now) if h != now]):
            leaning.append(f"{name} (rests on {', '.join(resting[:3])})")
        if was is None:
            stored = base.locked.get(canonical(name))
            if not is_closed and stored is not None:
                if stored != meant_now and not declared.get(name):
                    out.append(f"{name}: its locked statement means something else than when it was judged faithful; "
                               f"restating it needs a line `RESTATE: {name} — <rationale>` in the strategy")
                continue
            why = base.problem or "Lean listed no such constant at the base"
            out.append(f"{name}: its meaning at the base is unknown ({why.splitlines()[0][:300]}), so a change to "
                       "what it states cannot be ruled out; make the base build and answer Lean, then close or touch "
                       "it in a later change")
            continue
        try:
            meant = before.meaning(was, own_value=own)
        except Unanswered as e:
            out.append(f"{name}: its meaning at the base cannot be computed: it reaches {e}")
            continue
        if meant == meant_now:
            continue
        if not is_closed and declared.get(name):
            # What a person approved changes only with a person's approval of leaving it, even where only Lean sees
            # the change (the integrity gate, reading the text, asks for none then).
            left = (closures(inp.before, only=[name]).get(name) or ["?"])[0]  # as the integrity gate names it
            if name in inp.approved and left not in restate_approvals(inp)[0].get(name, set()):
                out.append(f"{name}: Lean's terms for its statement differ from the base's, whatever its text says; "
                           "a person approved this statement, so only a person may approve a change of it: add "
                           f"`[[restate]]` with `declaration = \"{name}\"` and `from = \"{left}\"` "
                           f"to {inp.gates.restate_approvals} and commit it")
                continue
            notes.append(f"{name}: restated as the strategy declares")
            continue
        by = "approved by a person" if name in inp.approved else "judged faithful to the book"
        what = (f"is locked ({by}); restating it needs a line `RESTATE: {name} — <rationale>` in the strategy"
                if not is_closed
                else "had its sorry closed in the same change; change a statement in one cycle and prove it in another")
        out.append(f"{name}: Lean's terms for its statement (its type, and the project constants it reaches, private "
                   f"and generated ones included) differ from the base's, whatever its text says; it {what}")
    if closed or locked:
        notes.append(f"{len(closed)} closed and {len(locked)} locked statement(s) mean what they meant at the base")
    if leaning:
        notes.append(f"closed by appeal to holes Lean counts, not proved: {'; '.join(leaning[:MAX_REPORTED])}")
    return out, notes


# -- replay ----------------------------------------------------------------------------------------------------


def replayed(inp: GateInput, loaded: dict[str, str], ours: set[str]) -> list[str]:
    """The modules a kernel replay checks: every project module of the change's environment (the changed ones, those
    importing one, all they import, and any other the listing says Lean loaded), whose `.olean` a change's code may
    have written, changed or not."""
    names = modules_of(inp.after, inp.lean_roots)
    closure = inp.after.graph.imported(affected_files(inp))
    return sorted({names[p] for p in closure if p in names} | {m for m in loaded if m in ours})


def _replay(inp: GateInput, modules: list[str], files: dict[str, str], ours: set[str]) -> tuple[list[str], list[str]]:
    """leanchecker where the toolchain has it, else our own program: never no replay, unless it is turned off."""
    if inp.gates.kernel_replay == "off" or not modules:
        return [], []
    assert inp.compiler is not None
    result = inp.compiler.replay(modules)
    if result is None:
        problems, done = replay.check(inp.compiler, modules, files, ours)
        return problems, [] if problems else [f"{done} (the toolchain has no leanchecker)"]
    if result.exit_code is None:
        return [f"`{result.command}` timed out after {result.seconds:.0f}s replaying the project's modules"], []
    if result.exit_code != 0:
        tail = "\n".join(result.output.strip().splitlines()[-12:])
        return [f"the kernel's replay of the project's modules failed (`{result.command}` exited with "
                f"{result.exit_code}):\n{tail}"], []
    return [], [f"leanchecker replayed {', '.join(modules)}"]
