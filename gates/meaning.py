"""What a declaration means to a reader of the book, as a hash; and which meanings a change altered.

The statement lock compares these. A theorem's meaning is its signature; a
definition's is its whole text (the body is what it defines). Both are read
after the settings that change them: the `variable`/`include`/`omit` binders
and the notations declared before it, and the namespaces `open`ed at column 0.
Left out, so proof work never counts as restating: `set_option` and
`attribute` commands, and commands scoped with `… in` to another declaration.
A definition that names a definition whose meaning changed has changed
meaning too, to any depth (a cycle of definitions ends the walk), and so has a
theorem whose statement names one. A name counts for every declaration it may
stand for (`Nice` for `Book.Nice` and `Other.Nice`): which one Lean picks
depends on what is open.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections import deque
from collections.abc import Callable, Collection, Iterable

from gates.census import Census
from gates.index import MACRO_KINDS, THEOREM_KINDS, Decl, FileIndex
from gates.lexer import ID_FIRST, ID_REST

SETTING_WORDS = frozenset({"variable", "include", "omit"}) | MACRO_KINDS
DEFINING = frozenset({"def", "abbrev", "structure", "class", "inductive", "instance", "opaque"})
_OPEN = re.compile(r"^open[ \t]+[^\n]*", re.MULTILINE)


def meanings(census: Census, *, bodies: bool = True, only: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Named declaration → the meaning hash of each declaration of that name (two files may repeat one), from
    every file or `only` those. Without `bodies`, a definition's signature alone stands for it, as a theorem's
    does."""
    out: dict[str, list[str]] = {}
    files = census.files if only is None else {p: census.files[p] for p in sorted(only) if p in census.files}
    for index in files.values():
        for name, digest in _file_meanings(index, bodies):
            out.setdefault(name, []).append(digest)
    return out


def touched(before: Census, after: Census) -> set[str]:
    """The files whose index differs; `Census.replace` keeps the others' as they are, so hashing them again
    would only find them equal."""
    return {p for p in before.files.keys() | after.files.keys() if before.files.get(p) is not after.files.get(p)}


def _file_meanings(index: FileIndex, bodies: bool) -> list[tuple[str, str]]:
    if not index.decls:
        return []
    source = index.decls[0].source
    assert source is not None
    opens = [(m.start(), " ".join(m.group().split())) for m in _OPEN.finditer(source.code)]
    opens = [(at, text) for at, text in opens if not text.endswith(" in")]
    starts = [at for at, _ in opens]
    first_after: set[int] = set()  # declarations that a `… in` command just before them applies to
    seen: set[int] = set()
    for d in index.decls:
        if d.context not in seen:
            seen.add(d.context)
            first_after.add(id(d))
    out = []
    for d in index.decls:
        if d.name is None:
            continue
        contexts = source.contexts[:d.context]
        setting = [c for i, c in enumerate(contexts) if SETTING_WORDS.intersection(c.split()[:2])
                   and (not c.endswith(" in") or (i == len(contexts) - 1 and id(d) in first_after))]
        opened = [text for _, text in opens[:bisect.bisect_left(starts, d.start)]]
        what = d.text_hash if bodies and d.kind not in THEOREM_KINDS else d.statement_text
        text = "\n".join([d.kind, what, *setting, *opened])
        out.append((d.name, hashlib.sha256(text.encode()).hexdigest()[:16]))
    return out


def changed_meanings(before: Census, after: Census) -> dict[str, str]:
    """Named declarations of `after` whose meaning is new or differs from `before`'s, each with why."""
    files = touched(before, after)
    old, new = meanings(before, only=files), meanings(after, only=files)
    known = before.named
    present = after.named  # a name that left a touched file may stay elsewhere
    out = {name: "is new" if name not in known else "changed" for name in new.keys() | (old.keys() & present)
           if sorted(new.get(name, [])) != sorted(old.get(name, []))}
    defining = definitions(after)
    through = _through({n for n in out if n in known and n in defining}, defining)
    for name, chain in through.items():
        if len(chain) > 1 and name not in out:
            out[name] = f"means something else: it uses {_path(chain[1:])}, which changed"
    if through:
        refers = _resolver(list(through))
        for _, d in after.decls():
            if d.name and d.name not in out and d.kind in THEOREM_KINDS:
                used = sorted(named(d.statement_text, refers))
                if used:
                    out[d.name] = (f"states something else: it uses {', '.join(_path(through[n]) for n in used)}, "
                                   "which changed")
    return out


_NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")


def _resolver(names: list[str]) -> Callable[[str], list[str]]:
    """Which of `names` a name written in Lean may stand for: the one it spells, or any it ends (`Nice` for
    `Book.Nice`) — every candidate, since which one Lean picks depends on what is open."""
    by_last: dict[str, list[str]] = {}
    for n in names:
        by_last.setdefault(n.rsplit(".", 1)[-1], []).append(n)

    def refers(token: str) -> list[str]:
        token = token.removeprefix("_root_.")
        return [n for n in by_last.get(token.rsplit(".", 1)[-1], []) if n == token or n.endswith("." + token)]

    return refers


def definitions(census: Census) -> dict[str, Decl]:
    """The project's definitions (what a statement can name and so mean through), by full name."""
    return {d.name: d for _, d in census.decls() if d.name and d.kind in DEFINING}


def named(text: str, refers: Callable[[str], list[str]], *, near: str = "",
          known: Collection[str] | None = None) -> set[str]:
    """The names `refers` knows that `text` writes, each short name standing for every one it may mean. With `known`
    (the names `refers` knows), a name the namespaces of the declaration `near` resolve among them stands for that
    one alone, innermost first, as Lean resolves it."""
    pool = known if known is not None else ()
    spaces = near.split(".")[:-1] if pool else []
    bound = _bound(text)

    def resolve(token: str) -> list[str]:
        inner = None if token.startswith("_root_.") else next(
            (n for k in range(len(spaces), 0, -1) if (n := ".".join([*spaces[:k], token])) in pool), None)
        return [inner] if inner is not None else refers(token)

    out: set[str] = set()
    for token in _NAMES.findall(text):
        parts = token.split(".")
        if len(parts) == 1 and token in bound:
            continue  # a variable the text binds, not a declaration
        out.update(resolve(token))
        if len(parts) > 1 and parts[0] in bound:  # `n.Good`: `Good` of the namespace of `n`'s type, any one
            out.update(n for n in refers(parts[-1]) if n.rsplit(".", 1)[-1] == parts[-1])
        elif len(parts) > 1:  # `Weak.Nonempty`: a projection of `Weak`
            for k in range(1, len(parts)):
                out.update(resolve(".".join(parts[:k])))
    return out


_BINDER = re.compile(r"[({⦃\[]\s*([^\s:(){}⦃⦄\[\]][^:(){}⦃⦄\[\]]*?)\s*:(?!=)")
_QUANTIFIED = re.compile(r"(?:∀|∃!?|fun|λ)\s+([^,:=()]+?)\s*(?:,|=>|:)")


def _bound(text: str) -> set[str]:
    """The names `text`'s binders and quantifiers bind (`(f : ℕ → ℕ) (x y : ℕ)`, `∀ k,`, `fun n =>`)."""
    out: set[str] = set()
    for m in [*_BINDER.finditer(text), *_QUANTIFIED.finditer(text)]:
        out.update(w for w in m.group(1).split() if _NAMES.fullmatch(w) and "." not in w)
    return out


def definition_uses(defining: dict[str, Decl], *, nearest: bool = False) -> dict[str, set[str]]:
    """Each definition → the other definitions its whole text (signature and body) names; with `nearest`, a name its
    namespaces resolve stands for that declaration alone (`named`)."""
    refers = _resolver(list(defining))
    known = defining if nearest else None
    return {name: named(d.statement_text + "\n" + d.body_code, refers, near=name, known=known) - {name}
            for name, d in defining.items()}


def reached(census: Census, names: Iterable[str], defining: dict[str, Decl] | None = None) -> dict[str, list[str]]:
    """Each of `names` → the project's definitions its meaning reaches, in name order: those a theorem's statement
    (a definition's whole text) names, and those these name, to any depth — the walk `changed_meanings` follows
    backwards, but a name that the declaration's namespaces resolve (`Chapter5.shift` for `shift` written in
    `Chapter5.t`) stands for that one alone, as Lean resolves it, not for every definition it may end (the meaning
    check takes every one: it must not miss a change; a reader must not be sent to read every chapter's `shift`).
    `defining`: `definitions(census)`, passed by a caller that has it."""
    defining = definitions(census) if defining is None else defining
    uses = definition_uses(defining, nearest=True)
    closures = _closures(uses)
    refers = _resolver(list(defining))
    decls = {d.name: d for _, d in census.decls() if d.name}
    out: dict[str, list[str]] = {}
    walked: dict[frozenset[str], list[str]] = {}  # statements naming the same definitions reach the same ones
    for name in names:
        d = decls.get(name)
        if d is None:
            continue
        start = frozenset(uses[name] if name in uses else
                          named(d.statement_text, refers, near=name, known=defining) - {name})
        if start not in walked:
            walked[start] = sorted(start.union(*(closures[u] for u in start)))
        out[name] = [n for n in walked[start] if n != name] if name in defining else walked[start]
    return out


def closures(census: Census, *, only: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Named declaration → the digest of what it means whole, one per declaration of that name: its own meaning
    (`meanings`) where it reaches no project definition, else that together with the meanings of every definition
    it reaches (`reached`), so that a change of any of them is a change of it. What a person approves and a card's
    stale check compare. `only`: the names wanted (every one by default)."""
    names = sorted({d.name for _, d in census.decls() if d.name}) if only is None else list(dict.fromkeys(only))
    reach = reached(census, names)
    wanted = set(names).union(*reach.values())
    own = meanings(census, only={p for p, d in census.decls() if d.name in wanted})  # the files that hold them
    names = [n for n in names if n in own]
    out: dict[str, list[str]] = {}
    for name in names:
        used = reach.get(name, [])
        tail = "\0".join(f"{r}={','.join(sorted(own.get(r, [])))}" for r in used)
        out[name] = own[name] if not used else [hashlib.sha256(f"{d}\0{tail}".encode()).hexdigest()[:16]
                                                for d in own[name]]
    return out


def _closures(uses: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    """Each definition → every definition it reaches through `uses`, to any depth (itself only when a cycle of
    definitions leads back to it). Tarjan's strongly connected components: each closed once all it reaches is."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: dict[str, frozenset[str]] = {}
    for root in uses:
        if root in order:
            continue
        order[root] = low[root] = len(order)
        stack.append(root)
        work = [(root, iter(uses[root]))]
        while work:
            node, pending = work[-1]
            for used in pending:
                if used not in order:
                    order[used] = low[used] = len(order)
                    stack.append(used)
                    work.append((used, iter(uses[used])))
                    break
                if used not in out:  # on the stack: in the component being walked
                    low[node] = min(low[node], order[used])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    members = [stack.pop()]
                    while members[-1] != node:
                        members.append(stack.pop())
                    found: set[str] = set()
                    for m in members:
                        for used in uses[m]:
                            found.add(used)
                            found |= out.get(used, frozenset())
                    closed = frozenset(found)
                    for m in members:
                        out[m] = closed
    return out


def _through(changed: set[str], defining: dict[str, Decl]) -> dict[str, list[str]]:
    """Definitions whose meaning changed, directly or through a definition they name, followed to any depth:
    name → the chain of definitions from it to one whose text changed. Each enters once, so a cycle of
    definitions ends the walk."""
    if not changed:
        return {}
    users: dict[str, set[str]] = {}
    for name, names in definition_uses(defining).items():
        for u in names:
            users.setdefault(u, set()).add(name)
    chains = {name: [name] for name in changed}
    queue = deque(sorted(changed))
    while queue:
        used = queue.popleft()
        for user in sorted(users.get(used, ())):
            if user not in chains:
                chains[user] = [user, *chains[used]]
                queue.append(user)
    return chains


def _path(chain: list[str]) -> str:
    return chain[0] + (f" (through {' → '.join(chain[1:])})" if len(chain) > 1 else "")
