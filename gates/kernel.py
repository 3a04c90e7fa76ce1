"""The kernel gate: what Lean itself says about the change, once it builds.

One generated file per round (`gates.probe`) asks Lean for the axioms of every declaration the change adds
or alters, of every declaration whose sorry it closes, of every locked declaration in the changed files or
in files importing them (an import-graph over-approximation of "uses what changed"), and of the project
declarations the claimed proofs name; and for the fingerprint of each closed and locked statement. It rejects:

- a requested name Lean gave no verdict on: no answer is never a pass;
- `sorryAx` in a declaration whose text holds no sorry: a sorry hidden by `stop`, `apply?`, a macro, meta code,
  or an error `#guard_msgs` swallowed (Lean still adds the declaration, backed by `sorryAx`). The sorry gate's
  top-down work (a proof using a lemma still sorried) is excused on Lean's word alone: a project declaration its
  text names must depend on `sorryAx` by Lean's verdict, and its own term, printed in one more round, must hold
  no `sorryAx` and name no auxiliary declaration of its own (`N.proof_1`, `N.match_1`: one could hold the sorry,
  so the excuse fails closed). What stays open: a sorry inside an auxiliary declaration Lean names outside the
  proof's own name (a shared `_auxLemma`), which a term naming a sorried lemma would carry unseen. The kernel
  facts of a cycle's census (`kernelcheck`) use the verdicts alone, without the term;
- an axiom outside `[gates] allowed_axioms` and the axioms the base itself declares, such as one added by
  meta code the source scan never sees; native code (`Lean.ofReduceBool`, `Lean.trustCompiler`) unless
  allowed there;
- a project axiom of the base (listed in `allowed_axioms` or not) that the change may have given another meaning
  (its file or one it imports changed) and whose fingerprint differs from the base's, or could not be compared:
  a name is allowed, not whatever statement later carries it;
- a statement whose sorry the change closes, or that is locked (unless the strategy restates it), which
  Lean elaborates differently than at the base: a local instance, an `open … in`, an imported
  `macro_rules`, a shadowing definition, a definition changed any number of levels down;
- such a statement when the base could not be fingerprinted (it did not build, or its probe failed), unless a
  locked one's fingerprint stored in the lock stands for the base's: the change cannot be shown not to alter
  it (with no toolchain configured the kernel gate does not run at all);
- such a statement whose fingerprint (at the base or now) leaves out a definition it reaches, past
  `[gates] fingerprint_depth` or `fingerprint_max_defs`, unless that definition is settled: its file and every
  file it imports are unchanged, so Lean elaborates it as at the base (a definition the census does not
  know, such as an anonymous instance, never is). Settled definitions are left out of the comparison too;
- the changed modules, or a project module importing one, failing a kernel replay (leanchecker, `[gates]
  kernel_replay`).

A change re-applied onto a moved branch keeps this gate's verdict against its base only when `gates.regate` shows
nothing Lean would answer on can differ (`GateInput.recheck`); otherwise the gate runs in full.

`private` declarations cannot be named from another file: the change's are asked about in a copy of their own
file, the questions after its last line (`probe.ask_home`). Where Lean cannot be asked so (the file runs code at
build time, or it or its imports hold code that could answer in Lean's place), a change that closes a private
declaration's sorry is rejected, and another changed private declaration is noted, not asked: it supports no
public statement but through its users, whose axioms Lean is asked, and the sorry gate still counts its text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gates.base import Compiler, GateInput, GateResult
from gates.census import Census
from gates.config import GatesConfig
from gates.imports import ImportGraph
from gates.integrity import restatements
from gates.meaning import changed_meanings
from gates.probe import (
    DEFINING,
    IDENT,
    Answers,
    Baseline,
    Command,
    Names,
    Unreadable,
    ask,
    ask_home,
    canonical,
    difference,
    digest,
    fingerprint,
    gaps,
    run_round,
    without,
)
from gates.tree import ChangeKind, is_lean_source

NAME = "kernel"
NATIVE = ("Lean.ofReduceBool", "Lean.trustCompiler")
MAX_REPORTED = 12


@dataclass
class Requests:
    """What the gate asks Lean about, by name as the source writes it."""

    changed: list[str] = field(default_factory=list)  # declarations of the change that are new or differ
    closing: list[str] = field(default_factory=list)  # declarations whose sorries the change closes
    locked: list[str] = field(default_factory=list)  # locked declarations in or importing the changed files
    referenced: list[str] = field(default_factory=list)  # declarations the claimed proofs name
    private: list[str] = field(default_factory=list)  # changed private declarations: not askable by name
    private_closing: list[str] = field(default_factory=list)  # private declarations whose sorries the change closes
    axioms: list[str] = field(default_factory=list)  # the base's project axioms the change may alter the meaning of
    modules: list[str] = field(default_factory=list)  # the changed modules, still present

    @property
    def judged(self) -> list[str]:
        return list(dict.fromkeys([*self.changed, *self.closing, *self.locked]))


def check(inp: GateInput) -> GateResult:
    lean = inp.lean_changes()
    if not lean:
        return GateResult(NAME, True, "no Lean file changed")
    if inp.compiler is None:
        raise ValueError("the kernel gate needs a compiler")
    if inp.recheck is not None and not inp.recheck.kernel:
        return GateResult(NAME, True, inp.recheck.why)
    names = Names(inp.after, inp.lean_roots)
    asked = requests(inp, names)
    bodies = own_bodies(inp.before, asked.judged)
    answers = ask(inp.compiler, names, imports=asked.modules, axioms=[*asked.judged, *asked.referenced],
                  checks=[*asked.judged, *asked.axioms], bodies=bodies, depth=inp.gates.fingerprint_depth,
                  limit=inp.gates.fingerprint_max_defs)
    inp.kernel_answers.append(answers)
    if answers.failure is None and (excused := suspects(names, answers, dict.fromkeys(asked.changed + asked.closing))):
        modules = {*asked.modules, *(m for n in excused if (m := names.module(n)))}
        run_round(inp.compiler, modules, [Command("print", n) for n in excused], answers, names)
    private, private_notes = _home(inp, names, asked)
    problems = (_unanswered(asked, answers) + _sorries(names, asked, answers) + private
                + _axioms(inp, names, asked, answers, bodies))
    changed_statements, notes = _statements(inp, names, asked, answers, bodies)
    problems += changed_statements
    notes += private_notes
    if not problems:
        failed, note = _replay(inp, replayed(inp, names))
        problems += failed
        notes += note
    if problems:
        shown = problems[:MAX_REPORTED] + ([f"… and {len(problems) - MAX_REPORTED} more"]
                                           if len(problems) > MAX_REPORTED else [])
        return GateResult(NAME, False, "\n".join(shown + notes))
    allowed = ", ".join(inp.gates.allowed_axioms) or "none"
    what = (f"Lean answered on {len(asked.judged)} declaration(s) in {answers.rounds} round(s): no sorryAx without "
            f"a sorry, no axiom beyond {allowed}; {len(asked.closing) + len(asked.locked)} closed or locked "
            "statement(s) elaborate as at the base")
    return GateResult(NAME, True, "; ".join([what, *notes]))


def requests(inp: GateInput, names: Names) -> Requests:
    """The declarations of the change to ask Lean about, and the modules holding them."""
    out = Requests()
    present = [c.path for c in inp.lean_changes() if c.kind is not ChangeKind.DELETED]
    out.modules = [names.module_of(p) for p in present]
    altered = changed_meanings(inp.before, inp.after)
    hidden_before = {name for _, name in inp.before.hidden_holes()}
    anywhere = {d.key: d for _, d in inp.before.decls()}  # a declaration may move to another file as it closes
    for path in present:
        old = {d.key: d for d in inp.before.files[path].decls} if path in inp.before.files else {}
        for d in inp.after.files[path].decls:
            if not d.name:
                continue
            was = old.get(d.key)
            if was is not None and was.text_hash == d.text_hash and d.name not in altered:
                continue
            target = out.private if "private" in d.modifiers else out.changed
            target.append(d.name)
            was = was or anywhere.get(d.key)
            if was is not None and not d.holes and (was.holes or d.name in hidden_before):
                (out.closing if target is out.changed else out.private_closing).append(d.name)
    out.changed += [d.name for path, d in inp.after.decls() if path not in present and d.name in altered
                    and "private" not in d.modifiers]  # stating something else: a definition it names changed
    if inp.locked:
        affected = ImportGraph(inp.after).dependents({c.path for c in inp.lean_changes()})
        out.locked = [d.name for path, d in inp.after.decls() if d.name in inp.locked and path in affected]
    out.referenced = references(names, out.changed + out.closing)
    settled = settled_definitions(inp)
    out.axioms = [d.name for _, d in inp.before.axioms() if d.name and names.askable(d.name) and not settled(d.name)]
    return out


def references(names: Names, claimed: Iterable[str]) -> list[str]:
    """The project declarations the text of the sorry-free `claimed` names: Lean's verdict on them tells whether a
    `sorryAx` in a claimed proof may come from a sorry elsewhere."""
    claimed = list(claimed)
    skip = {canonical(n) for n in claimed}
    out: dict[str, None] = {}
    for name in claimed:
        proof = names.decl(name)
        if proof is None or proof.holes:
            continue
        for ref in sorted(names.written(f"{proof.statement_text} {proof.body_code}", name) - skip):
            r = names.decl(ref)
            if r is not None and r.name and names.askable(ref):
                out[r.name] = None
    return list(out)


def own_bodies(before: Census, names: Iterable[str]) -> set[str]:
    """Of `names`, those whose fingerprint includes their own `#print`: definitions without a sorry at the base,
    whose whole text is what they mean. The rule reads the base only, so the base's fingerprint and the
    change's are taken alike."""
    wanted = set(names)
    hidden = {n for _, n in before.hidden_holes()}
    return {d.name for _, d in before.decls()
            if d.name in wanted and d.kind in DEFINING and not d.holes and d.name not in hidden}


def statements_to_compare(census: Census, locked: Iterable[str], paths: set[str] | None = None) -> list[str]:
    """The base's declarations (in `paths`, when given) a change may need the fingerprint of: those holding a
    sorry (written, or as Lean says), which a change may close, the locked ones, and the axioms (allowed by name
    only while they state what they stated)."""
    hidden = {n for _, n in census.hidden_holes()}
    locked = set(locked)
    return [d.name for path, d in census.decls() if d.name and "private" not in d.modifiers
            and (paths is None or path in paths)
            and (d.holes or d.name in hidden or d.name in locked or d.kind == "axiom")]


def take_baseline(compiler: Compiler, census: Census, roots: list[str], gates: GatesConfig, statements: list[str],
                  *, axioms: Iterable[str] = (), toolchain: str = "") -> tuple[Baseline, Answers]:
    """The fingerprints of `statements` in the tree `compiler` compiles (the base, before any change), and the
    axioms of `axioms` (with the declarations their proofs name): one Lean process per round."""
    names = Names(census, roots)
    axioms = list(axioms)
    bodies = own_bodies(census, statements)
    answers = ask(compiler, names, axioms=[*axioms, *references(names, axioms)], checks=statements, bodies=bodies,
                  depth=gates.fingerprint_depth, limit=gates.fingerprint_max_defs)
    prints = {canonical(n): fingerprint(answers, names, n, own_body=n in bodies, depth=gates.fingerprint_depth)
              for n in statements}
    return Baseline({k: v for k, v in prints.items() if v is not None}, problem=answers.failure,
                    toolchain=toolchain), answers


def _unanswered(asked: Requests, answers: Answers) -> list[str]:
    missing = [n for n in asked.judged if canonical(n) not in answers.axioms]
    out = [f"{n}: Lean gave no verdict on its axioms ({answers.errors.get(f'axioms {canonical(n)}', 'no answer')})"
           for n in missing]
    if answers.failure is not None:  # Lean did not run the probe to its end: nothing it left out may pass
        out.append(answers.failure)
    return out


def hidden_sorries(names: Names, answers: Answers, asked: Iterable[str], *, terms: bool = False) -> dict[str, str]:
    """Of `asked`, the declarations Lean says depend on `sorryAx` whose text holds no sorry, each with why its
    sorryAx is not excused. It is only when Lean says a project declaration its text names depends on sorryAx too
    (top-down work: the proof uses a lemma still sorried) and, with `terms`, when its own term as Lean printed it
    (`answers.prints`) holds no `sorryAx` and names no auxiliary declaration of its own that could hold one."""
    out = {}
    for name in asked:
        d = names.decl(name)
        key = canonical(name)
        if d is None or d.holes or "sorryAx" not in answers.axioms.get(key, ()):
            continue
        refs = names.written(f"{d.statement_text} {d.body_code}", name) - {key}
        if not any("sorryAx" in answers.axioms.get(ref, ()) for ref in refs):
            out[name] = "names no project declaration Lean says depends on sorryAx"
        elif terms and (why := _own_sorry(answers, names, key)) is not None:
            out[name] = why
    return out


def _own_sorry(answers: Answers, names: Names, key: str) -> str | None:
    """Why `key`'s own term, as Lean printed it, does not show its sorryAx comes from elsewhere; None when it does."""
    term = answers.prints.get(key)
    if term is None:
        return f"Lean did not print its term ({answers.errors.get(f'print {key}', 'no answer')[:200]})"
    tokens = {canonical(t) for t in IDENT.findall(term)}
    if "sorryAx" in tokens:
        return "its own proof term holds sorryAx"
    aux = sorted(t for t in tokens if t.startswith(key + ".") and t not in names.decls)
    if aux:
        return (f"its term names declarations Lean made for it ({', '.join(aux[:3])}) whose sorryAx cannot be told "
                "from the lemma's")
    return None


def suspects(names: Names, answers: Answers, asked: Iterable[str]) -> list[str]:
    """Of `asked`, those whose sorryAx Lean's verdicts alone would excuse: their own term must be printed."""
    return [n for n in asked if names.askable(n) and n not in hidden_sorries(names, answers, [n])
            and "sorryAx" in answers.axioms.get(canonical(n), ())]


def _home(inp: GateInput, names: Names, asked: Requests) -> tuple[list[str], list[str]]:
    """The change's private declarations, which no other file can name, asked about in a copy of their own file:
    the problems (a hidden sorry, an axiom not allowed, a closed sorry Lean could not be asked about) and notes."""
    assert inp.compiler is not None
    by_file: dict[str, list[str]] = {}
    for name in asked.private:
        by_file.setdefault(names.decls[canonical(name)][0], []).append(name)
    allowed = set(inp.gates.allowed_axioms) | {canonical(d.name) for _, d in inp.before.axioms() if d.name}
    out: list[str] = []
    notes: list[str] = []
    for path, targets in by_file.items():
        try:
            found = ask_home(inp.compiler, names, path, inp.changed.read(path).decode("utf-8", "replace"), targets)
        except Unreadable as e:
            out += [f"{n}: the change closes its sorry, but Lean could not be asked about this private declaration "
                    f"in its own file ({e}), so nothing shows it is proved"
                    for n in targets if n in asked.private_closing]
            notes += [f"not asked (private, {e}): {n}" for n in targets if n not in asked.private_closing]
            continue
        for name in targets:
            used = found[canonical(name)]
            d = names.decl(name)
            assert d is not None
            if "sorryAx" in used and not d.holes:
                out.append(f"{path}:{d.line}: {name} has no sorry in its text, yet Lean says it depends on sorryAx; it "
                           "is not proved (a private declaration is not excused by the sorried ones it names)")
            if bad := [a for a in used if a != "sorryAx" and canonical(a) not in allowed]:
                out.append(f"{name} depends on {', '.join(bad)}, not among the allowed axioms "
                           f"({', '.join(sorted(allowed)) or 'none'})")
        notes.append(f"asked in its own file (private): {', '.join(targets[:MAX_REPORTED])}")
    return out, notes


def _sorries(names: Names, asked: Requests, answers: Answers) -> list[str]:
    out = []
    claimed = dict.fromkeys(asked.changed + asked.closing)
    for name, why in hidden_sorries(names, answers, claimed, terms=True).items():
        path = names.decls[canonical(name)][0]
        d = names.decl(name)
        assert d is not None
        out.append(f"{path}:{d.line}: {name} has no sorry in its text, yet Lean says it depends on sorryAx (a "
                   "tactic such as `stop` or `apply?`, a macro, meta code, or an error `#guard_msgs` hid); it is not "
                   f"proved: {name}: {why}")
    return out


def _axioms(inp: GateInput, names: Names, asked: Requests, answers: Answers, bodies: set[str]) -> list[str]:
    altered = {}  # the base's project axioms whose statement the change may have altered → why they may have
    base = inp.kernel_base or Baseline(problem="no fingerprints of the base were taken")
    settled = settled_definitions(inp)
    for name in asked.axioms:
        now = fingerprint(answers, names, name, own_body=name in bodies, depth=inp.gates.fingerprint_depth)
        was = base.fingerprints.get(canonical(name))
        if now is None or was is None:
            altered[canonical(name)] = f"no fingerprint of it {'now' if now is None else 'at the base'}"
        elif (why := _unlike(was, now, settled)) is not None:
            altered[canonical(name)] = why
    allowed = (set(inp.gates.allowed_axioms) | {canonical(d.name) for _, d in inp.before.axioms() if d.name}) - set(
        altered)
    out = []
    for name in asked.judged:
        used = answers.axioms.get(canonical(name), ())
        bad = [a for a in used if a != "sorryAx" and canonical(a) not in allowed and canonical(a) not in altered]
        native = [a for a in bad if a in NATIVE]
        other = [a for a in bad if a not in NATIVE]
        if native:
            out.append(f"{name} trusts compiled code rather than the kernel ({', '.join(native)}: `native_decide`, "
                       "`decide +native`, `bv_decide`); allow it in [gates] allowed_axioms only if the project means "
                       "to")
        if other:
            out.append(f"{name} depends on {', '.join(other)}, not among the allowed axioms "
                       f"({', '.join(sorted(allowed)) or 'none'}); add it to [gates] allowed_axioms if the project "
                       "means to assume it")
        for a in used:
            if canonical(a) in altered:
                out.append(f"{name} depends on {a}, a project axiom Lean elaborates differently than at the base "
                           f"({altered[canonical(a)]}): an axiom is allowed by its name only while it states what it "
                           "stated; leave it as it was, or assume something else under a new name that [gates] "
                           "allowed_axioms lists")
    return out


def _unseen(was: str, now: str, settled: Callable[[str], bool]) -> str | None:
    """What two fingerprints leave out that the change can alter, None when nothing."""
    unseen = {d: key for d, key in {**gaps(was), **gaps(now)}.items() if not settled(d)}
    if not unseen:
        return None
    shown = ", ".join(f"{d} (beyond [gates] {key})" for d, key in sorted(unseen.items())[:MAX_REPORTED])
    keys = " and ".join(f"[gates] {k}" for k in sorted(set(unseen.values())))
    return (f"reaches definitions Lean did not print, in files the change touches or that import one it touches, so "
            f"a change to them cannot be ruled out: {shown}; raise {keys}")


def _unlike(was: str, now: str, settled: Callable[[str], bool]) -> str | None:
    """How two fingerprints of one declaration differ, None when they do not: a definition neither prints that the
    change can alter, or where the texts differ once settled definitions are left out."""
    if (why := _unseen(was, now, settled)) is not None:
        return f"it {why}"
    was, now = without(was, settled), without(now, settled)
    return None if digest(was) == digest(now) else difference(was, now)


def _statements(inp: GateInput, names: Names, asked: Requests, answers: Answers, bodies: set[str]
                ) -> tuple[list[str], list[str]]:
    """Closed and locked statements whose fingerprint differs from the base's, or leaves out a definition the
    change can alter."""
    targets = list(dict.fromkeys(asked.closing + asked.locked))
    if not targets:
        return [], []
    base = inp.kernel_base or Baseline(problem="no fingerprints of the base were taken")
    if base.problem:  # what the base said is unknown: only a fingerprint stored in the lock can stand for it
        base = Baseline(locked=base.locked, problem=base.problem, toolchain=base.toolchain)
    declared = restatements(inp.strategy)
    settled = settled_definitions(inp)
    out, notes = [], []
    for name in targets:
        now = fingerprint(answers, names, name, own_body=name in bodies, depth=inp.gates.fingerprint_depth)
        was = base.fingerprints.get(canonical(name))
        locked = name in asked.locked
        if now is None:
            out.append(f"{name}: Lean printed no statement to compare with the base's")
            continue
        if (why := _unseen(was or "", now, settled)) is not None:
            out.append(f"{name}: its statement {why}")
            continue
        if was is None:
            if locked and (stored := base.locked.get(canonical(name))) is not None:
                if stored != digest(now) and not declared.get(name):
                    out.append(f"{name}: its locked statement elaborates differently than when it was judged "
                               f"faithful; restating it needs a line `RESTATE: {name} — <rationale>` in the strategy")
                continue
            if base.problem:
                lines = base.problem.strip().splitlines()
                why = " … ".join(dict.fromkeys([lines[0][:300], lines[-1][:300]]))
                out.append(f"{name}: the base's statements could not be fingerprinted, so a change to what this one "
                           f"states cannot be ruled out ({why}); make the base build and answer Lean's probe, then "
                           "close or touch it in a later change")
            else:
                out.append(f"{name}: no fingerprint of its statement at the base, so a change to it cannot be ruled "
                           "out")
            continue
        why = _unlike(was, now, settled)
        if why is None:
            continue
        if locked and declared.get(name) and name not in asked.closing:
            notes.append(f"{name}: restated as the strategy declares")
            continue
        what = ("is locked (judged faithful to the book); restating it needs a line "
                f"`RESTATE: {name} — <rationale>` in the strategy" if locked and name not in asked.closing
                else "had its sorry closed in the same change; change a statement in one cycle and prove it in another")
        out.append(f"{name}: Lean elaborates its statement differently than at the base ({why}), "
                   f"whatever its text says; it {what}")
    return out, notes


def settled_definitions(inp: GateInput) -> Callable[[str], bool]:
    """Whether a project definition is the base's whatever the change: every file declaring it, and every file those
    import, unchanged. Lean elaborates a declaration from its file and its imports alone, so its `#print` is the
    base's and its fingerprint block need not be compared (nor printed). A name the census does not know (an
    anonymous instance, a matcher) is never settled. With build-time code allowed, `include_str` can read a changed
    file no import names, so nothing is."""
    changed = {c.path for c in inp.changes}
    if inp.gates.allow_build_time_code and any(not is_lean_source(p, inp.lean_roots) for p in changed):
        return lambda _: False
    moved = ImportGraph(inp.after).dependents(changed)
    where: dict[str, set[str]] = {}
    for path, d in inp.after.decls():
        if d.name:
            where.setdefault(canonical(d.name), set()).add(path)
    return lambda name: bool(where.get(canonical(name))) and not where[canonical(name)] & moved


def replayed(inp: GateInput, names: Names) -> list[str]:
    """The modules a kernel replay checks: the changed ones and every project module importing one, which the change
    can alter too (a command, a macro or an instance it redefines runs there)."""
    affected = ImportGraph(inp.after).dependents({c.path for c in inp.lean_changes()})
    return sorted({names.module_of(p) for p in affected if p in inp.after.files})


def _replay(inp: GateInput, modules: list[str]) -> tuple[list[str], list[str]]:
    mode = inp.gates.kernel_replay
    if mode == "off" or not modules:
        return [], []
    assert inp.compiler is not None
    result = inp.compiler.replay(modules)
    if result is None:
        if mode == "on":
            return [f"[gates] kernel_replay is \"on\" but the toolchain has no leanchecker "
                    f"(`{inp.build.replay_available}` failed); install Lean v4.28 or later, or set kernel_replay to "
                    "\"auto\""], []
        return [], ["kernel replay skipped: the toolchain has no leanchecker"]
    if result.exit_code is None:
        return [f"`{result.command}` timed out after {result.seconds:.0f}s replaying the changed modules and their "
                "importers"], []
    if result.exit_code != 0:
        tail = "\n".join(result.output.strip().splitlines()[-12:])
        return [f"the kernel's replay of the changed modules and their importers failed (`{result.command}` exited "
                f"with {result.exit_code}):\n{tail}"], []
    return [], [f"leanchecker replayed {', '.join(modules)}"]
