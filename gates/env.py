"""Lean's environment as the gates read it: every constant a module adds, its terms as digests, what it uses,
its axioms. Asked by one generated Lean program per probe (`program`) and read back from its output (`read`).

Why a program of our own: the statement of a theorem, the definitions it reaches, the instances it elaborates
through are constants with terms, and only the terms say what they mean. A module's constants include those its
text never names (an anonymous instance `instHoldsEqNat…`, a `private` one `_private.Book.A.0.Book.gradeLT`,
auxiliary ones `T.proof_1`, `T.match_1`, what `irreducible_def`, `alias` or meta code made), so the listing comes
from Lean, never from the source.

A probe is two runs: `[build] check_file` on a file of `import` lines (Lake builds the modules, as they are now, and
the project's code may run as it does), then `[build] read_file` (`lake env lean`: nothing built, no plugin of the
project loaded) on the program, which imports only `Lean` and loads the built modules with `Lean.importModules`.
The program's own
syntax is thus read with no project notation, macro or elaborator in scope: nothing the project declares can
change what the program does. It prints one line per fact, each `<nonce> <seq> <json>`; the nonce is random per
probe and the sequence numbers must run 0, 1, 2 … to the last line `["E", n]`, so a line out of place, repeated
or missing makes the answer unreadable, never partial (`Unreadable`).

What a line says (JSON arrays; ids are per probe, and a line only names ids printed before it):
- `["M", id, parts]`: a module name; `["N", id, parts, module id or -1]`: a constant's name and the module
  declaring it (-1: none imported, a constant the program itself declares);
- `["X", id, tag, …]`: one node of a term, its children by id: `b` de Bruijn index, `f`/`m` free or meta
  variable, `s` sort, `c` constant with universe levels, `a` application, `l` λ, `p` ∀, `z` let, `n` natural
  literal, `t` string literal, `j` projection. Binder names and binder annotations are left out (terms equal up to
  them mean the same), and so is metadata (`mdata`), which the kernel ignores;
- `["C", {…}]`: a constant of a module asked about: kind, universe parameters, type node, value node (all but
  theorems), the names its type and its value use, its axioms (Lean's `collectAxioms` walk, shared between
  constants), how many holes its value holds (`h`: distinct `sorryAx` applications), the line of its command
  (declaration ranges; none for a constant Lean generated), and what else
  defines it (definition safety, `implemented_by`, `extern`, an inductive's constructors, a constructor's place);
- `["U", module id]`: a module asked about that the environment does not hold;
- `["R", toolchain, project]`: the toolchain's folder (the running `lean`'s `bin/`'s parent) and the folder it runs
  in (the Lake project's);
- `["F", module id, file]`: each module of the environment, imported ones included, with the `.olean` it was loaded
  from, found as `importModules` found it;
- `["E", n]`: the end, after `n` lines.

A term's digest is computed here, bottom up (each node hashed with its children's digests): it covers the whole
term, shared subterms once, never a pretty-printer's output, never cut short.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import secrets
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from gates.diagnostics import CheckResult
from gates.lexer import ID_FIRST, ID_REST

T = TypeVar("T")
_DERIVED: dict[int, dict[str, object]] = {}  # a listing's id → what `Module.derived` made of it, dropped with it

FORMAT = 2  # of the facts this module reads: cached facts of another format are not used
SORRY = "sorryAx"
KINDS = frozenset({"axiom", "def", "thm", "opaque", "quot", "induct", "ctor", "rec"})
_PLAIN = re.compile(rf"[{ID_FIRST}][{ID_REST}]*")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
# What may stand before a line of ours: `lean`'s position prefix of an information message (newer releases), or
# Lake's (`info: FILE:L:C:`); Lean prints the rest of a multi-line message bare.
_PREFIX = re.compile(r"(?:[^\n]*?:\d+:\d+(?:-\d+:\d+)?: (?:info|information)(?:\([^)\n]*\))?: ?"
                     r"|(?:info|information): [^\n]*?:\d+:\d+: ?)")


class Unreadable(ValueError):
    """The program's output is not what the program prints: what could not be read, and where."""


# -- names ---------------------------------------------------------------------------------------------------


def printed(parts: Iterable[str | int]) -> str:
    """A name from its components as Lean prints it: a string component that is not an identifier (or that
    holds only digits, which would read as a number) in `«»`, a numeric one as digits."""
    out = []
    for p in parts:
        if isinstance(p, int):
            out.append(str(p))
        elif _PLAIN.fullmatch(p) and not p.isdigit():
            out.append(p)
        else:
            out.append(f"«{p}»")
    return ".".join(out)


_COMPONENT = re.compile(r"«[^»]*»|[^.«»]+")


def components(name: str) -> list[str]:
    """A printed name's components, escapes kept (`a.«b.c».d` → `a`, `«b.c»`, `d`)."""
    return _COMPONENT.findall(name)


def prefixes(name: str) -> list[str]:
    """The proper prefixes of a printed name, longest first."""
    parts = components(name)
    return [".".join(parts[:k]) for k in range(len(parts) - 1, 0, -1)]


# The last components Lean gives what it makes for a declaration: auxiliary proofs and matchers, made with it; and
# the lemmas it makes on demand (reserved names: equations, unfolding, induction and case principles, matchers'
# splitters), in whichever module first asks for one.
_AUXILIARY = re.compile(r"(?:proof|match|omega)_\d+")
_ON_DEMAND = re.compile(r"eq_\d+|eq_def|eq_unfold|induct|mutual_induct|induct_unfolding|fun_cases|splitter"
                        r"|congr_eq_\d+")


def _made(part: str) -> bool:
    """A last component as Lean names what it makes for another declaration."""
    return (part.startswith("_") or part.isdigit() or _AUXILIARY.fullmatch(part) is not None
            or _ON_DEMAND.fullmatch(part) is not None)


def generated(name: str) -> bool:
    """Named as Lean names what it makes for another declaration: a component starting with `_`, a numeric last
    component, or one of `_AUXILIARY`'s or `_ON_DEMAND`'s last."""
    parts = components(name)
    return any(p.startswith("_") for p in parts) or _made(parts[-1])


def declaration(name: str) -> str:
    """The declaration a constant Lean made for another belongs to (`f.match_1`, `f.eq_1`, `f._proof_1` → `f`): its
    last components dropped while they are Lean's; a private prefix stays (`_private.M.0.f.eq_1` →
    `_private.M.0.f`)."""
    parts = components(name)
    while len(parts) > 1 and _made(parts[-1]):
        parts.pop()
    return ".".join(parts)


def normal(name: str) -> str:
    """A name as Lean text writes it, as Lean prints it: needless `«»` dropped, needed ones kept, so
    `Book.«mono»` is `Book.mono` and `«Book.mono»` (one component) stays apart from it."""
    return printed(parts(name))


def user_name(name: str, module: str) -> str:
    """A private constant's name as written in its file: `_private.Book.A.0.Book.foo` → `Book.foo`."""
    head = f"_private.{module}.0."
    return name[len(head):] if name.startswith(head) else name


# -- what a module adds ----------------------------------------------------------------------------------------


class Const(BaseModel):
    """One constant as Lean's environment holds it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str  # as Lean prints it
    module: str
    kind: str  # axiom | def | thm | opaque | quot | induct | ctor | rec
    type: str  # digest of the type term
    value: str | None  # digest of the value term; None for a theorem (its proof) and for what has no value
    shape: str  # digest of the rest that defines it: kind, universe parameters, safety, constructors …
    type_uses: tuple[str, ...]
    value_uses: tuple[str, ...]  # a theorem's too: what its proof uses
    axioms: tuple[str, ...]
    line: int | None  # of the command that declared it; None for a constant Lean generated for another
    holes: int = 0  # the holes its value holds, as Lean's term has them: its distinct `sorryAx` applications
    extra: tuple[str, ...] = ()  # constants that are part of what it is: an inductive's constructors, a
    # constructor's inductive

    @property
    def sorry(self) -> bool:
        """Its own value holds `sorryAx`: a hole, wherever else its axioms come from. (A type holding one is a
        statement about a sorried definition, as an equation lemma of one is: the hole is the definition's.)"""
        return SORRY in self.value_uses

    @property
    def digest(self) -> str:
        """What it is, but for a theorem's proof."""
        return _hash(["const", self.kind, self.shape, self.type, self.value or ""])

    @property
    def uses(self) -> tuple[str, ...]:
        return self.type_uses + self.value_uses


class Module(BaseModel):
    """Every constant one module adds, and where the constants its terms name are declared."""

    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT
    module: str
    consts: dict[str, Const]
    homes: dict[str, str]  # every name its constants use → the module declaring it ("" for none)
    def derived(self, key: str, make: Callable[[], T]) -> T:
        """`make()`, made once per listing and `key`: a process parses a listing once and asks of it every cycle.
        Kept beside the listing, not in it, so that two listings alike stay equal."""
        memo = _DERIVED.get(id(self))
        if memo is None:
            memo = _DERIVED[id(self)] = {}
            weakref.finalize(self, _DERIVED.pop, id(self), None)
        if key not in memo:
            memo[key] = make()
        return memo[key]  # type: ignore[return-value]

    def value_users(self) -> dict[str, set[str]]:
        """Each owner (`owner`) → the names, as its file writes them, that the values of its constants use."""
        def make() -> dict[str, set[str]]:
            out: dict[str, set[str]] = {}
            for name, c in self.consts.items():
                out.setdefault(self.owner(name), set()).update(user_name(u, self.homes.get(u, ""))
                                                               for u in c.value_uses)
            return out
        return self.derived("value_users", make)

    def owner(self, name: str) -> str:
        """The constant a constant belongs to: for one Lean generated for another (`T._proof_1`, `T.match_1`,
        `T.x._default`: named so, see `generated`), the nearest prefix of its name that is a constant of this module
        and whose terms use it (through other constants generated for it); else itself. An anonymous instance, a
        constant a command named after another (`theorem T.inst`), or one merely named like an auxiliary that its
        prefix does not use (`theorem T.proof_7`), is its own. A lemma Lean made on demand (`T.eq_1`, with no command
        of its own) belongs to its declaration though nothing of it uses the lemma."""
        if not generated(user_name(name, self.module)):
            return name
        if self._on_demand(name) and (p := prefixes(name)[0]) in self.consts:
            return p
        return next((p for p in prefixes(name) if p in self.consts and self._uses(p, name)), name)

    def _on_demand(self, name: str) -> bool:
        """Named as a lemma Lean makes on demand, with no command of its own."""
        last = components(user_name(name, self.module))[-1]
        return _ON_DEMAND.fullmatch(last) is not None and self.consts[name].line is None

    def _uses(self, start: str, target: str) -> bool:
        """Whether `start`'s terms use `target`, directly or through constants of this module named under it."""
        seen, todo = {start}, [start]
        while todo:
            for used in self.consts[todo.pop()].uses:
                if used == target:
                    return True
                if used not in seen and used in self.consts and used.startswith(start + "."):
                    seen.add(used)
                    todo.append(used)
        return False

    def holes(self) -> dict[str, list[str]]:
        """Owner → its constants whose own terms hold `sorryAx` (the owner's, or those Lean generated for it). A lemma
        Lean made on demand for a declaration of another module (stored in whichever module first asked for it) is
        that declaration's: its hole is counted where the declaration is."""
        out: dict[str, list[str]] = {}
        for name, c in self.consts.items():
            if c.sorry and not self.foreign(name):
                out.setdefault(self.owner(name), []).append(name)
        return out

    def foreign(self, name: str) -> bool:
        """Whether `name` is what Lean made for a declaration another module declares (`T.eq_1` of an imported `T`):
        named so, with no command of its own (one a command declared, `theorem T.induct` written in this module, is
        this module's whatever its name)."""
        if not self._on_demand(name):
            return False
        return any(self.homes.get(p, "") not in ("", self.module) for p in prefixes(name)[:1] if p not in self.consts)


# -- the program -----------------------------------------------------------------------------------------------


def header(modules: Iterable[str]) -> str:
    """The first run's file: the modules imported (as Lean prints their names), so that Lake builds them as they
    are now."""
    return "".join(f"import {m}\n" for m in sorted(set(modules)))


def parts(name: str) -> list[str]:
    """A printed name's components, escapes removed."""
    return [p[1:-1] if p.startswith("«") and p.endswith("»") else p for p in components(name)]


def program(nonce: str, modules: Iterable[str]) -> str:
    """The second run's file: the program that lists every constant of `modules` (module names as dotted
    strings), loaded with `importModules`."""
    return filled("env_probe.lean", nonce, modules)


def filled(resource: str, nonce: str, modules: Iterable[str]) -> str:
    """The Lean program `resource` of this package with its two strings given: `nonce`, and `modules` as a JSON list
    of their components."""
    wanted = json.dumps([parts(m) for m in sorted(set(modules))])
    text = resources.files("gates").joinpath(resource).read_text(encoding="utf-8")
    return text.replace("@NONCE@", _lean_string(nonce)).replace("@MODULES@", _lean_string(wanted))


def _lean_string(text: str) -> str:
    """A Lean string literal holding `text` (only ASCII printable characters reach here, JSON-escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- reading its output ----------------------------------------------------------------------------------------


@dataclass
class Listing:
    """What one probe answered: every module asked about that Lean holds, and those it does not; every module of
    the environment with the file it was loaded from, and the folder Lean ran in; names the listed constants use
    that no module of the environment declares."""

    modules: dict[str, Module]
    missing: list[str]
    lines: int
    files: dict[str, str] = field(default_factory=dict)
    project: str | None = None
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (constant, a name it uses that nothing declares)


def read(output: str, nonce: str) -> Listing:
    """The program's answer in `output`. Raises `Unreadable` unless every line of it is in place."""
    reader = _Reader()
    lines = 0
    for item in frames(output, nonce):
        reader.take(item, lines)
        lines += 1
    return Listing(reader.modules(), sorted(reader.missing), lines, reader.files, reader.project,
                   sorted(reader.unknown))


def frames(output: str, nonce: str) -> Iterator[object]:
    """The items of the lines a program of ours printed in `output` (`<nonce> <seq> <json>`, numbered from 0, the
    last `["E", n]`), in order. Raises `Unreadable`, once the lines it yielded are taken, unless every line is in
    place: a line out of place, repeated or missing, or the last missing, makes the whole answer unreadable."""
    seq = 0
    ended = False
    for raw in _ANSI.sub("", output).split("\n"):
        at = raw.find(nonce)
        if at < 0:
            continue  # Lean's and Lake's own lines; the caller judges an error among them
        head, rest = raw[:at], raw[at + len(nonce):]
        if head and not _PREFIX.fullmatch(head):
            raise Unreadable(f"a line holds the nonce where the program never prints it: {raw[:200]!r}")
        if ended:
            raise Unreadable(f"a line after the last: {raw[:200]!r}")
        number, _, payload = rest.lstrip(" ").partition(" ")
        if number != str(seq):
            raise Unreadable(f"line {number[:20]!r} where line {seq} was due")
        try:
            item = json.loads(payload)
        except ValueError as e:
            raise Unreadable(f"line {seq} is not JSON ({e}): {payload[:200]!r}") from None
        seq += 1
        if isinstance(item, list) and item[:1] == ["E"]:
            if item != ["E", seq - 1]:
                raise Unreadable(f"the last line counts {item[1:]!r} lines, not {seq - 1}")
            ended = True
            continue
        yield item
    if not ended:
        raise Unreadable(f"no last line after {seq} line(s): the program did not run to its end")


class _Reader:
    def __init__(self) -> None:
        self.mods: dict[int, str] = {}
        self.names: dict[int, tuple[str, str, str]] = {}  # id → (printed, digest form, module)
        self.nodes: list[str] = []  # id → digest
        self.consts: list[Const] = []
        self.homes: dict[str, dict[str, str]] = {}
        self.home: dict[str, str] = {}  # printed name → its module
        self.missing: set[str] = set()
        self.files: dict[str, str] = {}
        self.project: str | None = None
        self.unknown: set[tuple[str, str]] = set()

    def take(self, item: object, line: int) -> None:
        if not isinstance(item, list) or not item or not isinstance(item[0], str):
            raise Unreadable(f"line {line} is not a fact: {str(item)[:200]}")
        tag, rest = item[0], item[1:]
        try:
            if tag == "M":
                self._module(rest)
            elif tag == "N":
                self._name(rest)
            elif tag == "X":
                self._node(rest)
            elif tag == "C":
                self._const(rest)
            elif tag == "U":
                self.missing.add(self.mods[_int(rest[0])])
            elif tag == "F":
                self.files[self.mods[_int(rest[0])]] = _str(rest[1])
            elif tag == "R":
                _str(rest[0])  # the toolchain's folder: printed for a person reading the output
                self.project = _str(rest[1])
            else:
                raise Unreadable(f"unknown fact {tag!r}")
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise Unreadable(f"line {line} cannot be read ({type(e).__name__}: {e}): {str(item)[:200]}") from None

    def _module(self, rest: list[object]) -> None:
        i, parts = _int(rest[0]), _parts(rest[1])
        if i != len(self.mods):
            raise ValueError(f"module id {i} out of order")
        self.mods[i] = printed(parts)

    def _name(self, rest: list[object]) -> None:
        i, parts, mod = _int(rest[0]), _parts(rest[1]), _int(rest[2])
        if i != len(self.names):
            raise ValueError(f"name id {i} out of order")
        self.names[i] = (printed(parts), json.dumps(parts, ensure_ascii=False), "" if mod == -1 else self.mods[mod])
        self.home[self.names[i][0]] = self.names[i][2]

    def _node(self, rest: list[object]) -> None:
        i, tag, fields = _int(rest[0]), rest[1], rest[2:]
        if i != len(self.nodes):
            raise ValueError(f"node id {i} out of order")
        child = self._child
        if tag in ("a", "l", "p"):
            body = [child(fields[0]), child(fields[1])]
        elif tag == "z":
            body = [child(fields[0]), child(fields[1]), child(fields[2])]
        elif tag == "c":
            body = [self.names[_int(fields[0])][1], _level_list(fields[1])]
        elif tag == "j":
            body = [self.names[_int(fields[0])][1], str(_int(fields[1])), child(fields[2])]
        elif tag == "b":
            body = [str(_int(fields[0]))]
        elif tag == "s":
            body = [_level(fields[0])]
        elif tag in ("f", "m"):
            body = [json.dumps(_parts(fields[0]), ensure_ascii=False)]
        elif tag in ("n", "t"):
            if not isinstance(fields[0], str):
                raise TypeError("a literal is a string")
            body = [fields[0]]
        else:
            raise ValueError(f"unknown node {tag!r}")
        if len(fields) != {"a": 2, "l": 2, "p": 2, "z": 3, "c": 2, "j": 3}.get(str(tag), 1):
            raise ValueError(f"node {tag!r} with {len(fields)} field(s)")
        self.nodes.append(_hash([str(tag), *body]))

    def _child(self, x: object) -> str:
        i = _int(x)
        if not 0 <= i < len(self.nodes):
            raise KeyError(f"node {i} named before it was printed")
        return self.nodes[i]

    def _const(self, rest: list[object]) -> None:
        (raw,) = rest
        if not isinstance(raw, dict):
            raise TypeError("a constant is an object")
        kind = raw["k"]
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        module = self.mods[_int(raw["m"])]
        # The home Lean gives a name is the first module holding it; a theorem two modules both realize (an
        # equation lemma) is listed under each, with the module's own copy.
        name = self.names[_int(raw["n"])][0]
        value = raw["v"]
        if (value is None) != (kind in ("thm", "axiom", "quot", "induct", "ctor", "rec")):
            raise ValueError(f"a {kind} {'without' if value is None else 'with'} a value")
        tu, vu, ax = (self._names(raw[k]) for k in ("tu", "vu", "ax"))
        extra = self._names(raw.get("x", []))
        shape = {k: raw[k] for k in sorted(raw) if k not in ("m", "n", "t", "v", "tu", "vu", "ax", "r", "x", "h")}
        shape["x"] = [self.names[_int(i)][1] for i in raw.get("x", [])]
        if "ib" in raw:
            shape["ib"] = None if raw["ib"] is None else self.names[_int(raw["ib"])][1]
        line = raw["r"]
        if line is not None and (not isinstance(line, int) or line < 1):
            raise ValueError(f"line {line!r}")
        self.consts.append(Const(
            name=name, module=module, kind=kind, type=self._child(raw["t"]),
            value=None if value is None else self._child(value), shape=_hash(shape), type_uses=tu, value_uses=vu,
            axioms=ax, line=line, holes=_int(raw["h"]), extra=extra))
        homes = self.homes.setdefault(module, {})
        for used in (*tu, *vu, *extra):
            homes[used] = self.home[used]
            if not homes[used]:  # the kernel adds nothing naming a constant it does not hold
                self.unknown.add((name, used))

    def _names(self, ids: object) -> tuple[str, ...]:
        if not isinstance(ids, list):
            raise TypeError("a list of names")
        return tuple(sorted({self.names[_int(i)][0] for i in ids}))

    def modules(self) -> dict[str, Module]:
        out: dict[str, Module] = {}
        for c in self.consts:
            m = out.setdefault(c.module, Module(module=c.module, consts={}, homes=self.homes.get(c.module, {})))
            if c.name in m.consts:
                raise Unreadable(f"{c.name} listed twice")
            m.consts[c.name] = c
        for name in self.mods.values():  # a module that adds no constant (only imports) is still answered
            if name not in self.missing:
                out.setdefault(name, Module(module=name, consts={}, homes={}))
        return out


def _int(x: object) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise TypeError(f"{x!r} is not an integer")
    return x


def _str(x: object) -> str:
    if not isinstance(x, str):
        raise TypeError(f"{x!r} is not a string")
    return x


def _parts(x: object) -> list[str | int]:
    if not isinstance(x, list) or not all(isinstance(p, str) or (isinstance(p, int) and not isinstance(p, bool))
                                          for p in x):
        raise TypeError(f"{str(x)[:80]} is not a name")
    return x


def _level(x: object) -> str:
    """A universe level's canonical text: `["z"]`, `["s", l]`, `["m", a, b]`, `["i", a, b]`, `["p", name]`,
    `["?"]`."""
    if not isinstance(x, list) or not x or x[0] not in ("z", "s", "m", "i", "p", "?"):
        raise TypeError(f"{str(x)[:80]} is not a level")
    arity = {"z": 0, "s": 1, "m": 2, "i": 2, "p": 1, "?": 0}[x[0]]
    if len(x) != arity + 1:
        raise ValueError(f"level {x[0]!r} with {len(x) - 1} argument(s)")
    if x[0] == "p":
        if not isinstance(x[1], str):
            raise TypeError("a universe parameter is named")
        return json.dumps(["p", x[1]], ensure_ascii=False)
    return "(" + " ".join([x[0], *(_level(a) for a in x[1:])]) + ")"


def _level_list(x: object) -> str:
    if not isinstance(x, list):
        raise TypeError("a list of levels")
    return "[" + ",".join(_level(a) for a in x) + "]"


def _hash(parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


# -- where each module was loaded from ---------------------------------------------------------------------


PACKAGES = ".lake/packages"  # Lake's folder of the dependencies, in the project: outside the sandbox's reach


def unaccounted(files: dict[str, str], project: str, ours: set[str]) -> list[str]:
    """Modules Lean loaded from a file a change's code could have written: any but the project's own from inside the
    project's folder (its build folder above all, the one place code run while the change was built may write),
    the dependencies' folder aside; a module of the project from anywhere but the project's folder. What lies
    outside the project (the toolchain, a dependency a `path` require names) is outside a change's reach."""
    deps = posixpath.join(project, PACKAGES)
    out = []
    for module, file in sorted(files.items()):
        file = posixpath.normpath(posixpath.join(project, file))  # older Lake puts `./.lake/…` on LEAN_PATH
        inside = _under(file, project) and not _under(file, deps)
        if module in ours and not inside:
            out.append(f"{module}: Lean loaded this module of the project from {file}, outside the project's folder "
                       "or from the dependencies': not the module its source builds")
        elif module not in ours and inside:
            out.append(f"{module}: Lean loaded it from {file}, inside the project's folder, yet no Lean file of the "
                       "project is this module: code run while the change was built wrote it; a module is trusted "
                       "only where Lake builds it from the project's source, or where the dependencies and the "
                       "toolchain keep it")
    return out


def _under(path: str, folder: str) -> bool:
    return bool(folder) and (path == folder or path.startswith(folder.rstrip("/") + "/"))


# -- asking -----------------------------------------------------------------------------------------------------


class Compiler(Protocol):
    def probe(self, text: str) -> CheckResult: ...

    def read(self, text: str) -> CheckResult: ...


@dataclass
class Answer:
    """Lean's listing of the modules asked about, or why there is none."""

    modules: dict[str, Module] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # every module of the environment → the file Lean loaded
    project: str | None = None  # the folder Lean ran in: the Lake project's
    problem: str | None = None
    runs: int = 0
    seconds: float = 0.0
    lines: int = 0


MAX_SPLITS = 3  # halvings of a batch whose modules cannot be imported together (each declares a name the other does)
_CONFLICT = re.compile(r"already contains|already been declared|import failed")


def ask(compiler: Compiler, modules: Iterable[str], *, splits: int = MAX_SPLITS) -> Answer:
    """Every constant of `modules`, as Lean built them: a run of `check_file` on their imports (Lake builds them as
    they are now; a module that does not build fails closed), then the program. Modules two of which declare one
    name cannot be loaded together: such a batch is asked in halves."""
    modules = sorted(set(modules))
    out = Answer()
    if not modules:
        return out
    built = compiler.probe(header(modules))
    out.runs, out.seconds = 1, built.seconds
    if not built.ok:
        if len(modules) > 1 and splits > 0 and _CONFLICT.search(built.output):
            half = len(modules) // 2
            for part in (modules[:half], modules[half:]):
                got = ask(compiler, part, splits=splits - 1)
                out.modules.update(got.modules)
                out.files.update(got.files)
                out.project = got.project
                out.runs, out.seconds, out.lines = out.runs + got.runs, out.seconds + got.seconds, out.lines + got.lines
                if got.problem is not None:
                    out.problem = got.problem
                    return out
            return out
        out.problem = failed(built, "the modules asked about do not build")
        return out
    got = listed(compiler, modules)
    got.runs, got.seconds = got.runs + 1, got.seconds + out.seconds
    return got


def listed(compiler: Compiler, modules: list[str]) -> Answer:
    """Every constant of `modules` as their built `.olean` files hold them: the program's run alone, building
    nothing."""
    out = Answer()
    nonce = secrets.token_hex(12)
    ran = compiler.read(program(nonce, modules))
    out.runs, out.seconds = 1, ran.seconds
    try:
        listing = read(ran.output, nonce)
    except Unreadable as e:
        out.problem = failed(ran, f"Lean's listing of the environment could not be read ({e})")
        return out
    if not ran.ok:  # the program ran to its end, yet Lean reported an error: nothing it printed is taken
        out.problem = failed(ran, "Lean reported an error while listing the environment")
        return out
    if listing.missing:
        out.problem = f"Lean's environment does not hold {', '.join(listing.missing[:6])}"
        return out
    absent = [m for m in modules if m not in listing.modules]
    if absent:
        out.problem = f"Lean listed nothing for {', '.join(absent[:6])}"
        return out
    if listing.unknown:
        shown = "; ".join(f"{c} uses {u}" for c, u in listing.unknown[:6])
        out.problem = (f"constants Lean loaded use names no module of its environment declares ({shown}): the kernel "
                       "adds no such constant, so a module was not written by Lean from checked code")
        return out
    if listing.project is None or not listing.files:
        out.problem = "Lean's listing does not say which file each module was loaded from"
        return out
    out.modules, out.lines, out.files = {m: listing.modules[m] for m in modules}, listing.lines, listing.files
    out.project = listing.project
    return out


def failed(result: CheckResult, what: str) -> str:
    status = "timed out" if result.exit_code is None else f"exited with {result.exit_code}"
    tail = "\n".join(result.output.strip().splitlines()[-12:])
    return f"{what}: `{result.command}` {status}:\n{tail}"
