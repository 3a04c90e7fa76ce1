"""The successors gate: a statement is tested by the declarations that use it.

When a change alters what constants of the project mean (`_altered`, from Lean's listings of both sides, which the
kernel gate took: a constant gone, one whose own terms differ, and every constant whose meaning reaches one of
those, so a statement renamed, moved, or reaching a definition changed in another file counts as the statement
itself), the project's declarations that used one at the base are compiled again **as they were at the base**
against the changed tree, in the sandbox, with the build's limits. A file holding users that declares no altered
constant is checked as it was at the base, whole, so nothing the Worker wrote into it (a patched user, a
`variable`, an `open`, a `#guard_msgs`) is compiled with them; the statement's own file is checked as changed, with
the users' base text in place of theirs (a user the change deleted put back at its end, before any `#exit`, in its
namespace). A user Lean reports an error inside is a broken successor: it relied on something the statement no
longer gives (a hypothesis added, a parameter restricted, a conclusion weakened, the name gone). A statement
weakened and its users patched to fit is exactly what this catches and the meaning check alone lets through under a
declared `RESTATE:`.

With `[gates] successors = "locked"` (the default), breaking a successor of a statement locked as faithful
(statement_lock.json) rejects the change; other broken successors pass as evidence, named in the verdict (and so
in the record and the task result). `"strict"` rejects any broken successor; `"off"` compiles nothing. A change
that leaves every meaning as it was compiles nothing extra. The compiles share `RUNS` times the build's time
limit, over at most `MAX_FILES` files (each a compile and a listing).

Each file is compiled as a module of its own (`Compiler.compile`) and, when its users elaborate, listed by the
probe's program (`gates.env.listed`). A user is broken when Lean reports an error on the lines its text occupies
in the file the gate wrote; or, as Lean lists it, when it no longer uses every altered declaration it used (its
base text now means something else: a term macro or notation the change added took its token) or now rests on
`sorryAx` and did not (a `stop`, only a warning, in what a macro expands to). What cannot be decided is "not
checked", which rejects for a locked statement: a file past the caps, a compile that timed out, an error outside
every user, a constant using the statement that no declaration of the text answers for (an anonymous instance), a
base module Lean did not list, a compiled file Lean could not list, or no listing at all when a locked statement
is restated. An `autoParam` or `optParam` a statement gained (Lean fills it in at every user, without a hole) is
named, and kept for the judge (`GateInput.defaults`). Left open: a user in the statement's own file is compiled in
that file's changed context (its `variable`s and `open`s; the `… in` commands written before the user are left
out); and a user whose name the change captures (a new `Book.Ch2.qux` that `qux` in `namespace Book.Ch2` now
means) compiles against the capture.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace

import structlog

from gates import env
from gates.base import GateInput, GateResult
from gates.directives import restatements
from gates.env import SORRY, Module, declaration, normal
from gates.environment import Env, lean_names
from gates.imports import ImportGraph
from gates.index import Decl
from gates.probe import modules_of
from gates.tree import is_lean_source

log = structlog.get_logger()
NAME = "successors"
MAX_FILES = 24  # user files compiled per change; past it the rest are named as not checked
RUNS = 2  # the gate's compiles share this many `[build] timeout_s`: a cycle's time limits count on it
DEFAULTS = frozenset({"autoParam", "optParam"})  # what a binder with a default elaborates to, in the type
BROKE = "no longer elaborates against the changed"
"""Each broken successor's line in the verdict says this, then the constants it relied on (the review queue reads
them), then why."""


@dataclass(frozen=True)
class User:
    """A declaration of the base whose terms use an altered one."""

    name: str  # its declaration's full name, as the index qualifies it
    path: str  # its file at the base
    text: str  # its text at the base
    namespace: str  # the namespace its text declares it in
    uses: tuple[str, ...]  # the altered constants it uses, as Lean names them
    lean: str = ""  # its name as Lean gives it (`_private.<module>.0.…` for a private one)


@dataclass(frozen=True)
class Region:
    user: User
    first: int  # lines of the spliced file the user's base text occupies
    last: int


def check(inp: GateInput) -> GateResult:
    mode = inp.gates.successors
    if mode == "off":
        return GateResult(NAME, True, "off ([gates] successors)")
    reads_any = inp.gates.allow_build_time_code and bool(inp.changes)  # `include_str` reads any file
    if not inp.lean_changes() and not reads_any:
        return GateResult(NAME, True, "no Lean file changed")
    if inp.recheck is not None and not inp.recheck.kernel:
        return GateResult(NAME, True, inp.recheck.why)
    assert inp.compiler is not None
    restated = sorted(n for n in restatements(inp.strategy) if n in inp.locked)
    if not inp.before.lean or not inp.after.lean:
        if restated:
            return GateResult(NAME, False, f"the users of {', '.join(restated)} (locked, restated) cannot be found: "
                                           "Lean listed no module of one side, so they were not compiled")
        return GateResult(NAME, True, "Lean listed no module of one side: no meanings to compare")
    before = Env(inp.before.lean.values(), modules_of(inp.before, inp.lean_roots).values())
    after = Env(inp.after.lean.values(), modules_of(inp.after, inp.lean_roots).values())
    altered, unlisted = _altered(inp, before, after)
    locked = {x for n in inp.locked for x in (n, inp.before.lean_name(n)) if x} & set(altered)
    if unlisted and (locked or restated):
        return GateResult(NAME, False, f"locked statements mean something else, and Lean listed no base module of "
                                       f"{', '.join(unlisted[:5])}, which can hold their users: not checked")
    if not altered:
        return GateResult(NAME, True, "no declaration the project uses means something else")
    inp.defaults.update(_defaults(before, after, altered))
    users, unmapped = _users(inp, altered)
    broken, unchecked = _compile(inp, users, altered)
    unchecked += unmapped
    reject: list[str] = []
    evidence: list[str] = []
    for user, why in broken:
        hit = sorted(set(user.uses) & locked)
        line = f"{user.name} ({user.path}), as it was at the base, {BROKE} {', '.join(user.uses[:5])}: {why}"
        (reject if mode == "strict" or hit else evidence).append(line)
        for d in user.uses:
            inp.broken_successors.setdefault(d, []).append(f"{user.name}: {why}")
    for where, uses, why in unchecked:
        if mode == "strict" or set(uses) & locked:
            whose = "of a locked statement " if set(uses) & locked else ""
            reject.append(f"users {whose}in {where} could not be checked: {why}")
        else:
            evidence.append(f"users in {where} not checked: {why}")
    silent = [f"{name} gained a hypothesis with a default ({', '.join(kinds)}) that Lean fills in at every use: its "
              "users still elaborate, and the judge is told it is an added hypothesis"
              for name, kinds in sorted(inp.defaults.items())]
    if reject:
        what = ("a statement locked as faithful no longer gives what its users relied on; restore it, or restate it "
                "so that its users still hold" if mode == "locked" else "[gates] successors is \"strict\"")
        return GateResult(NAME, False, "\n".join([f"broken successors ({what}):", *reject, *evidence, *silent]))
    head = f"{len(users)} user(s) of {len(altered)} altered constant(s) compiled as at the base"
    if evidence:
        return GateResult(NAME, True, "\n".join([f"{head}; broken successors (evidence, not locked):", *evidence,
                                                 *silent]))
    return GateResult(NAME, True, "\n".join([f"{head}: none broke", *silent]))


# -- what changed, who used it ---------------------------------------------------------------------------------


def _altered(inp: GateInput, before: Env, after: Env) -> tuple[dict[str, str], list[str]]:
    """Every project constant of the base whose meaning the change alters, with how, and the base files that can
    hold one but Lean did not list. A constant of a file the change can alter is *changed* when it is gone, or its
    own terms (type, a definition's value, its shape) differ; a constant is *altered* when it is changed or what
    its meaning reaches (its type's constants, a definition's value's, an inductive's constructors: as
    `gates.environment.Env.meaning` follows them) holds a changed one. So a statement renamed, moved to another
    file, or reaching a definition changed elsewhere, and the constructors and projections of a changed structure,
    are altered as the statement itself is."""
    changed = {c.path for c in inp.lean_changes()}
    if inp.gates.allow_build_time_code and any(not is_lean_source(c.path, inp.lean_roots) for c in inp.changes):
        affected = set(inp.before.files)
    else:
        affected = ImportGraph(inp.before).dependents(changed) & set(inp.before.files)
    out: dict[str, str] = {}
    unlisted = sorted(p for p in affected if p not in inp.before.lean)
    for path in sorted(affected - set(unlisted)):
        for name, c in inp.before.lean[path].consts.items():
            now = after.consts.get(name)
            if now is None:
                out[name] = "gone"
            elif now.digest != c.digest or now.extra != c.extra:
                out[name] = "changed"
    reverse: dict[str, list[str]] = {}
    for name, c in before.consts.items():
        if before.ours(name):
            for u in {*c.type_uses, *c.extra, *(c.value_uses if c.kind != "thm" else ())}:
                reverse.setdefault(u, []).append(name)
    queue = list(out)
    while queue:
        for name in reverse.get(queue.pop(), ()):
            if name not in out:
                out[name] = "what it states reaches a changed constant"
                queue.append(name)
    return out, unlisted


def _defaults(before: Env, after: Env, altered: dict[str, str]) -> dict[str, list[str]]:
    """The altered statements whose type, as Lean lists it, gained a hypothesis with a default (`autoParam`,
    `optParam`), which Lean fills in at every use without a hole."""
    out = {}
    for name in altered:
        now, was = after.consts.get(name), before.consts.get(name)
        if now is not None and was is not None and (gained := sorted(DEFAULTS & set(now.type_uses)
                                                                     - set(was.type_uses))):
            out[name] = gained
    return out


def _users(inp: GateInput, altered: dict[str, str]) -> tuple[list[User], list[tuple[str, list[str], str]]]:
    """The declarations of the base whose own terms (or those Lean generated for them) use an altered constant;
    and, as not checked, the constants using one that no declaration of the text answers for."""
    found: dict[tuple[str, str], set[str]] = {}
    unmapped: list[tuple[str, list[str], str]] = []
    for path, module in sorted(inp.before.lean.items()):
        if path not in inp.before.files:
            continue
        texts = _by_lean(inp.before.files[path].decls, module)
        for c in module.consts.values():
            owner = module.owner(c.name)
            hits = sorted(u for u in c.uses if u in altered and u != owner and module.owner(u) != owner)
            # A declaration whose own terms the change altered is what is tested, never a user put back as it was.
            if not hits or altered.get(owner) == "changed":
                continue
            if owner in texts:
                found.setdefault((path, owner), set()).update(hits)
            elif owner == c.name:
                unmapped.append((f"{path} ({owner})", hits, "Lean's constant has no declaration its text names"))
    out = []
    for (path, owner), uses in sorted(found.items()):
        index = inp.before.files[path]
        d = _by_lean(index.decls, inp.before.lean[path])[owner]
        assert d.name is not None
        head = index.text[d.start:d.header].split()
        written = head[-1] if head else d.name
        namespace = d.name[:-len(written) - 1] if d.name.endswith("." + written) else ""
        out.append(User(d.name, path, index.text[d.start:d.end], namespace, tuple(sorted(uses)), owner))
    return out, unmapped


def _by_lean(decls: list[Decl], module: Module) -> dict[str, Decl]:
    names = lean_names(module)
    return {lean: d for d in decls if d.name and (lean := names.get(normal(d.name))) is not None}


# -- compiling the users as they were ----------------------------------------------------------------------------


def _compile(inp: GateInput, users: list[User], altered: dict[str, str]
             ) -> tuple[list[tuple[User, str]], list[tuple[str, list[str], str]]]:
    """Each file holding users, checked once. A file that declares no altered constant, before or after the change,
    is checked as it was at the base, whole: the Worker's edits to it (a patched user, a new `variable`, an `open`,
    a `#guard_msgs`) are not in it. A file that declares one (the statement's own) is checked as changed, with the
    users' base text in place of theirs. An error on a user's lines breaks it; an error elsewhere, or none where
    Lean failed, leaves the file not checked."""
    assert inp.compiler is not None
    by_file: dict[str, list[User]] = {}
    for u in users:
        by_file.setdefault(u.path, []).append(u)
    broken: list[tuple[User, str]] = []
    unchecked: list[tuple[str, list[str], str]] = []
    deadline = time.monotonic() + RUNS * inp.build.timeout_s
    for k, (path, group) in enumerate(sorted(by_file.items())):
        uses = sorted({d for u in group for d in u.uses})
        left = deadline - time.monotonic()
        if k >= MAX_FILES:
            unchecked.append((path, uses, f"more than {MAX_FILES} files hold users; the rest were not compiled"))
            continue
        if left <= 0:
            unchecked.append((path, uses, f"the gate's time ({RUNS} × [build] timeout_s) was spent on other files"))
            continue
        if any(not u.text.strip() for u in group):
            unchecked.append((path, uses, "a user's text at the base could not be read"))
            continue
        now, was = inp.after.lean.get(path), inp.before.lean.get(path)
        holds = [m for m in (now, was) if m is not None and any(n in altered for n in m.consts)]
        if path in inp.after.files and holds:
            text, regions = splice(inp.after.files[path].text, inp.after.files[path].decls, group)
        else:
            text, regions = as_it_was(inp.before.files[path].text, inp.before.files[path].decls, group)
        module, result = inp.compiler.compile(text, left)
        try:
            if result.exit_code is None:
                unchecked.append((path, uses, f"`{result.command}` timed out"))
                continue
            errors = result.errors
            hit = {r.user.name for r in regions for e in errors if r.first <= e.line <= r.last}
            elsewhere = [e for e in errors if not any(r.first <= e.line <= r.last for r in regions)]
            for r in regions:
                mine = [e for e in errors if r.first <= e.line <= r.last]
                if mine:
                    broken.append((r.user, mine[0].message.splitlines()[0][:300]))
            if elsewhere or (result.exit_code != 0 and not hit):
                why = (f"Lean reported an error outside the users (line {elsewhere[0].line}: "
                       f"{elsewhere[0].message.splitlines()[0][:200]})" if elsewhere
                       else f"`{result.command}` exited with {result.exit_code} and reported no error on a user")
                unchecked.append((path, uses, why))
            elif not hit:  # each user elaborates: what it now means, from Lean's listing of what was compiled
                listed = env.listed(inp.compiler, [module])
                if listed.problem is not None:
                    unchecked.append((path, uses, f"Lean could not list the users as compiled: {listed.problem}"))
                else:
                    was = inp.before.lean[path]
                    for r in regions:
                        if (found := _meant(r.user, listed.modules[module], was)) is not None:
                            broken.append(found)
            log.info("successors.compiled", path=path, users=len(group), errors=len(errors))
        finally:
            inp.compiler.discard(module)
    return broken, unchecked


def _meant(user: User, now: Module, was: Module) -> tuple[User, str] | None:
    """Why `user`, compiled as it was into the module `now` and elaborating, no longer means what it meant at the
    base (`was`, its module there), as Lean lists it, with the altered declarations that concerns; None when it still
    does. It must declare its constant, use every altered declaration it used (else its text now means something
    else: a notation, macro or name the change added), and rest on `sorryAx` (Lean's axioms of its constants, through
    every constant they reach: a `let rec` or a lemma a macro names included) only where it did."""
    here, there = f"_private.{now.module}.0.", f"_private.{was.module}.0."

    def back(name: str) -> str:  # a private name of the compiled module, as its file's module names it
        return there + name[len(here):] if name.startswith(here) else name

    owner = here + user.lean[len(there):] if user.lean.startswith(there) else user.lean
    own = [c for c in now.consts.values() if now.owner(c.name) == owner]
    if not own:
        return user, "Lean lists no such declaration: its text now declares something else"
    used = {declaration(back(u)) for c in own for u in c.uses}
    if lost := sorted({declaration(u) for u in user.uses} - used):
        lost_uses = tuple(u for u in user.uses if declaration(u) in lost)
        return (replace(user, uses=lost_uses), f"it no longer uses {', '.join(lost[:3])}: its text now means "
                "something else (a notation, macro or name the change added)")
    rested = any(SORRY in c.axioms for c in was.consts.values() if was.owner(c.name) == user.lean)
    if any(SORRY in c.axioms for c in own) and not rested:
        return user, ("it now rests on sorryAx, though it did not (a `stop`, a warning, a hole in what a macro it "
                      "runs through expands to)")
    return None


def as_it_was(text: str, decls: list[Decl], users: list[User]) -> tuple[str, list[Region]]:
    """The file's base text, whole; the lines each user occupies in it."""
    at = {d.name: d for d in decls if d.name}
    regions = []
    for u in users:
        d = at[u.name]
        first = text.count("\n", 0, d.start) + 1
        regions.append(Region(u, first, first + text.count("\n", d.start, d.end)))
    return text, regions


_PREFIX = re.compile(r"^(?:#guard_msgs|set_option|open|attribute|include|omit)\b[^\n]*\bin[ \t]*\n[ \t\n]*\Z", re.M)


def _prefixed(text: str, start: int, floor: int) -> int:
    """Where the declaration at `start` begins once the `… in` commands written before it (`#guard_msgs (drop
    error) in`, `set_option … in`, `open … in`) are left out: the change wrote them, and they would apply to the
    user's base text put in its place."""
    while (m := _PREFIX.search(text, floor, start)) is not None and m.end() == start:
        start = m.start()
    return start


def splice(text: str, decls: list[Decl], users: list[User]) -> tuple[str, list[Region]]:
    """`text` with each user's declaration (and the `… in` commands before it) replaced by its text at the base, and
    each user it no longer declares appended in its namespace; the lines each user's base text occupies in the
    result."""
    current = {d.name: d for d in decls if d.name}
    placed = sorted(((current[u.name], u) for u in users if u.name in current), key=lambda p: p[0].start)
    out: list[str] = []
    regions: list[Region] = []
    at = 0
    for d, u in placed:
        out.append(text[at:_prefixed(text, d.start, at)])
        first = "".join(out).count("\n") + 1
        out.append(u.text)
        regions.append(Region(u, first, first + u.text.count("\n")))
        at = d.end
    rest = text[at:]
    stop = re.search(r"^#exit\b", rest, re.M)  # Lean reads nothing after it: what is put back goes before
    tail = rest[stop.start():] if stop else ""
    out.append(rest[:stop.start()] if stop else rest)
    for u in users:
        if u.name in current:
            continue
        body = u.text
        opening = f"\n\nnamespace {u.namespace}\n" if u.namespace else "\n\n"
        out.append(opening)
        first = "".join(out).count("\n") + 1
        out.append(body)
        regions.append(Region(u, first, first + body.count("\n")))
        if u.namespace:
            out.append(f"\nend {u.namespace}\n")
    out.append(("\n" + tail) if tail else "")
    return "".join(out), regions
