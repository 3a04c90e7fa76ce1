"""The successors gate: a statement is tested by the declarations that use it.

When a change alters what a declaration D means (its statement's terms, as `gates.environment.Env.meaning` digests
them from Lean's listings of both sides, which the kernel gate took), the project's declarations that used D at the
base are compiled again **as they were at the base** against the changed tree: in each of their files, the users'
current text is replaced by their text at the base (a user the change deleted is put back at the end of its file,
in its namespace), and the file is checked as a generated module, in the sandbox, with the build's limits. A user
Lean reports an error inside is a broken successor: it relied on something D no longer gives (a hypothesis added, a
parameter restricted, a conclusion weakened). A statement weakened and its users patched to fit is exactly what
this catches and the meaning check alone lets through under a declared `RESTATE:`.

With `[gates] successors = "locked"` (the default), breaking a successor of a statement locked as faithful
(statement_lock.json) rejects the change; other broken successors pass as evidence, named in the verdict (and so
in the record and the task result). `"strict"` rejects any broken successor; `"off"` compiles nothing. A change
that leaves every meaning as it was compiles nothing extra. The compiles share `RUNS` times the build's time
limit; a file left when it is spent is named as not checked.

Which users broke is read from Lean's errors and the lines of the spliced file each user's text occupies (the gate
wrote that file, so the lines are its own); an error outside every user (a later declaration of the file that used
a restored user) is no verdict on D. A check that does not answer (a timeout, no run) fails closed for a locked D.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import structlog

from gates.base import GateInput, GateResult
from gates.env import Module, normal
from gates.environment import Env, Unanswered, lean_names
from gates.index import Decl
from gates.probe import modules_of

log = structlog.get_logger()
NAME = "successors"
MAX_FILES = 24  # user files compiled per change; past it the rest are named as not checked
RUNS = 2  # the gate's compiles share this many `[build] timeout_s`: a cycle's time limits count on it


@dataclass(frozen=True)
class User:
    """A declaration of the base whose terms use an altered one."""

    name: str  # its declaration's full name, as the index qualifies it
    path: str  # its file at the base
    text: str  # its text at the base
    namespace: str  # the namespace its text declares it in
    uses: tuple[str, ...]  # the altered declarations it uses, as their texts write them


@dataclass(frozen=True)
class Region:
    user: User
    first: int  # lines of the spliced file the user's base text occupies
    last: int


def check(inp: GateInput) -> GateResult:
    mode = inp.gates.successors
    if mode == "off":
        return GateResult(NAME, True, "off ([gates] successors)")
    if not inp.lean_changes() or not inp.before.lean or not inp.after.lean:
        return GateResult(NAME, True, "no statement Lean listed on both sides changed")
    if inp.recheck is not None and not inp.recheck.kernel:
        return GateResult(NAME, True, inp.recheck.why)
    assert inp.compiler is not None
    altered = _altered(inp)
    if not altered:
        return GateResult(NAME, True, "no declaration the project uses means something else")
    users = _users(inp, altered)
    if not users:
        return GateResult(NAME, True, f"{len(altered)} declaration(s) mean something else; none had users at the base")
    broken, unchecked = _compile(inp, users)
    locked = {n for n in altered.values() if n in inp.locked}
    reject: list[str] = []
    evidence: list[str] = []
    for user, why in broken:
        hit = sorted(set(user.uses) & locked)
        line = f"{user.name} ({user.path}), as it was at the base, no longer elaborates against the changed " \
               f"{', '.join(user.uses)}: {why}"
        (reject if mode == "strict" or hit else evidence).append(line)
        for d in user.uses:
            inp.broken_successors.setdefault(d, []).append(f"{user.name}: {why}")
    for path, why in unchecked:
        if any(u.path == path and set(u.uses) & locked for u in users):
            reject.append(f"the users of a locked statement in {path} could not be checked: {why}")
        else:
            evidence.append(f"users in {path} not checked: {why}")
    if reject:
        what = ("a statement locked as faithful no longer gives what its users relied on; restore it, or restate it "
                "so that its users still hold" if mode == "locked" else "[gates] successors is \"strict\"")
        return GateResult(NAME, False, "\n".join([f"broken successors ({what}):", *reject, *evidence]))
    n = len(users)
    head = f"{n} user(s) of {len(altered)} altered declaration(s) compiled as at the base"
    if evidence:
        return GateResult(NAME, True, "\n".join([f"{head}; broken successors (evidence, not locked):", *evidence]))
    return GateResult(NAME, True, f"{head}: none broke")


def broken(result: GateResult) -> list[str]:
    """The broken successors a passing verdict names as evidence (one per line)."""
    if result.name != NAME:
        return []
    lines = result.detail.splitlines()
    return [line for line in lines[1:] if "no longer elaborates" in line]


# -- what changed, who used it ---------------------------------------------------------------------------------


def _altered(inp: GateInput) -> dict[str, str]:
    """Lean's name → the text's name of each declaration the changed files declare, present on both sides, whose
    meaning differs (or cannot be compared: then it counts as altered, so its users are checked)."""
    before = Env(inp.before.lean.values(), modules_of(inp.before, inp.lean_roots).values())
    after = Env(inp.after.lean.values(), modules_of(inp.after, inp.lean_roots).values())
    out: dict[str, str] = {}
    for path in sorted({c.path for c in inp.lean_changes()}):
        now, was = inp.after.lean.get(path), inp.before.lean.get(path)
        if now is None or was is None or path not in inp.after.files:
            continue
        names = lean_names(now)
        for d in inp.after.files[path].decls:
            lean = names.get(normal(d.name)) if d.name else None
            if lean is None or lean not in before.consts:
                continue
            own = d.kind in ("def", "abbrev", "instance", "structure", "class", "inductive")
            try:
                same = before.meaning(lean, own_value=own) == after.meaning(lean, own_value=own)
            except Unanswered:
                same = False
            if not same:
                out[lean] = d.name or lean
    return out


def _users(inp: GateInput, altered: dict[str, str]) -> list[User]:
    """The declarations of the base whose own terms (or those Lean generated for them) use an altered one."""
    found: dict[tuple[str, str], set[str]] = {}
    for path, module in inp.before.lean.items():
        if path not in inp.before.files:
            continue
        texts = _by_lean(inp.before.files[path].decls, module)
        for c in module.consts.values():
            owner = module.owner(c.name)
            hits = [altered[u] for u in c.uses if u in altered and u != owner]
            if hits and owner in texts:
                found.setdefault((path, owner), set()).update(hits)
    out = []
    for (path, owner), uses in sorted(found.items()):
        index = inp.before.files[path]
        d = _by_lean(index.decls, inp.before.lean[path])[owner]
        assert d.name is not None
        head = index.text[d.start:d.header].split()
        written = head[-1] if head else d.name
        namespace = d.name[:-len(written) - 1] if d.name.endswith("." + written) else ""
        out.append(User(d.name, path, index.text[d.start:d.end], namespace, tuple(sorted(uses))))
    return out


def _by_lean(decls: list[Decl], module: Module) -> dict[str, Decl]:
    names = lean_names(module)
    return {lean: d for d in decls if d.name and (lean := names.get(normal(d.name))) is not None}


# -- compiling the users as they were ----------------------------------------------------------------------------


def _compile(inp: GateInput, users: list[User]) -> tuple[list[tuple[User, str]], list[tuple[str, str]]]:
    assert inp.compiler is not None
    by_file: dict[str, list[User]] = {}
    for u in users:
        by_file.setdefault(u.path, []).append(u)
    broken: list[tuple[User, str]] = []
    unchecked: list[tuple[str, str]] = []
    deadline = time.monotonic() + RUNS * inp.build.timeout_s
    for k, (path, group) in enumerate(sorted(by_file.items())):
        left = deadline - time.monotonic()
        if k >= MAX_FILES:
            unchecked.append((path, f"more than {MAX_FILES} files hold users; the rest were not compiled"))
            continue
        if left <= 0:
            unchecked.append((path, f"the gate's time ({RUNS} × [build] timeout_s) was spent on other files"))
            continue
        if path not in inp.after.files:
            unchecked.append((path, "the change removed the file"))
            continue
        if any(not u.text.strip() for u in group):
            unchecked.append((path, "a user's text at the base could not be read"))
            continue
        text, regions = splice(inp.after.files[path].text, inp.after.files[path].decls, group)
        result = inp.compiler.probe(text, left)
        if result.exit_code is None:
            unchecked.append((path, f"`{result.command}` timed out"))
            continue
        errors = result.errors
        if result.exit_code != 0 and not errors:
            unchecked.append((path, f"`{result.command}` exited with {result.exit_code} and reported no error"))
            continue
        for r in regions:
            mine = [e for e in errors if r.first <= e.line <= r.last]
            if mine:
                broken.append((r.user, mine[0].message.splitlines()[0][:300]))
        log.info("successors.compiled", path=path, users=len(group), errors=len(errors))
    return broken, unchecked


def splice(text: str, decls: list[Decl], users: list[User]) -> tuple[str, list[Region]]:
    """`text` with each user's declaration replaced by its text at the base, and each user it no longer declares
    appended in its namespace; the lines each user's base text occupies in the result."""
    current = {d.name: d for d in decls if d.name}
    placed = sorted(((current[u.name], u) for u in users if u.name in current), key=lambda p: p[0].start)
    out: list[str] = []
    regions: list[Region] = []
    at = 0
    for d, u in placed:
        out.append(text[at:d.start])
        first = "".join(out).count("\n") + 1
        out.append(u.text)
        regions.append(Region(u, first, first + u.text.count("\n")))
        at = d.end
    out.append(text[at:])
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
    return "".join(out), regions
