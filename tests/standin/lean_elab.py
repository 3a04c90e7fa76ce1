"""The stand-in Lean's model of a project: what each command declares, and what Lean answers about it.

Independent of autoformalize (it shares no code with it), and small: it knows
just enough of Lean's elaboration to answer a probe the way Lean would.

- Commands start at column 0; `open … in`, `set_option … in`, `attribute […] … in`
  and `#guard_msgs … in` apply to the command after them.
- Names resolve as Lean resolves them: the current namespaces innermost first,
  then the opened namespaces, then the root (`_root_.x` is `x`), so a new
  `Book.Nat.Prime` shadows `Nat.Prime` inside `namespace Book`.
- Instances: `instance`, `local instance`, `scoped instance` (active inside
  its namespace and where it is opened), `attribute [local instance] X`; the
  most recent active one of an operator's class is the one elaborated, and
  under `pp.all` it is printed explicitly (`(@LT.lt Book.weakLT)`).
- `macro_rules`, and `macro "name" : tactic`/`: term`, rewrite tokens (`$x`
  matches one atom or a parenthesised group), imported ones included.
- `exact?` closes a goal with a hypothesis, a theorem of the environment or one of `LIBRARY` (its
  stand-in for Mathlib), printing `Try this` in the shape of the toolchain `lean-toolchain` names, or fails
  with Lean's error.
- A binder with a default (`(h : 0 < n := by decide)`) elaborates to an `autoParam` (`:= v`: an `optParam`) in
  the type, and an application that leaves it out has it filled in.
- Axioms: `sorry`, `admit`, `stop`, `apply?`, `exact?` (unanswered) and an elaboration
  error (the declaration is still added, backed by `sorryAx`) give `sorryAx`;
  `native_decide` and `decide +native` give `Lean.ofReduceBool`; classical
  reasoning gives `Classical.choice`, `propext` and `Quot.sound`; `simp`-like
  tactics `propext`; `funext` `Quot.sound`; an `axiom` itself; all of it
  transitively through every declaration a declaration names.
- Meta code: `run_cmd`/`run_meta`/`run_elab`, and a command defined by
  `elab "kw" : command` when it is used, add what their `addDecl` calls add
  (`addDeclWithoutChecking`, or `addDecl` under `debug.skipKernelTC` set in
  code, skips the kernel, which only a replay notices).
- `#print axioms N`, `#check @N`, `#check "s"`, `#print D` answer as
  information messages.
- `trace "s"` and `trace_state` in a `by` block answer as information messages at their places, while no error
  of the declaration comes before them (Lean stops a tactic block at its first error). The goals are known at the
  block's start (the binders as hypotheses, `⊢` the type) and after a first tactic that closes the goal (none: an
  empty message); anywhere else the stand-in cannot tell them, and says so (`Beyond`) rather than invent them.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from lean_syntax import (
    KINDS,
    MODULE,
    SORRY,
    TYPES,
    Rule,
    Tok,
    attribute,
    axioms_message,
    bound_names,
    class_of,
    direct_axioms,
    groups,
    is_name,
    mask,
    matching,
    module_name,
    module_parts,
    name_parts,
    parse_rules,
    quotation,
    rewrite,
    signature,
    split_type,
    tokens,
    top_level,
    type_names,
)

STARTERS = frozenset({
    "import", "namespace", "section", "end", "open", "variable", "universe", "attribute", "set_option", "theorem",
    "lemma", "def", "abbrev", "instance", "structure", "class", "inductive", "axiom", "opaque", "example",
    "macro_rules", "macro", "syntax", "notation", "elab", "elab_rules", "run_cmd", "run_elab", "run_meta",
    "initialize", "alias", "irreducible_def", "private", "protected", "noncomputable", "local", "scoped", "mutual",
    "deriving", "include",
    "omit", "export", "infix", "infixl", "infixr", "prefix", "postfix", "unsafe", "partial", "nonrec"})
MODIFIERS = frozenset({"private", "protected", "noncomputable", "local", "scoped", "unsafe", "partial", "nonrec"})
PREFIXING = frozenset({"open", "set_option", "attribute", "#guard_msgs"})
OPERATORS = {"<": ("LT.lt", ("LT",)), ">": ("GT.gt", ("LT",)), "≤": ("LE.le", ("LE",)), "≥": ("GE.ge", ("LE",)),
             "+": ("HAdd.hAdd", ("HAdd", "Add")), "*": ("HMul.hMul", ("HMul", "Mul")),
             "-": ("HSub.hSub", ("HSub", "Sub")), "/": ("HDiv.hDiv", ("HDiv", "Div")), "∣": ("Dvd.dvd", ("Dvd",)),
             "%": ("HMod.hMod", ("HMod", "Mod"))}
INDENTED = frozenset({"namespace", "section", "end"})
OPENING_BRACKETS, CLOSING_BRACKETS = frozenset("([{⦃⟨"), frozenset(")]}⦄⟩")
# An operator as `mkInstanceName` sees it: its precedence (Lean visits the loosest first) and its function's name.
INSTANCE_PARTS = {"=": (50, "Eq"), "<": (50, "LT"), ">": (50, "GT"), "≤": (50, "LE"), "≥": (50, "GE"),
                  "∣": (50, "Dvd"), "+": (65, "HAdd"), "-": (65, "HSub"), "*": (70, "HMul"), "/": (70, "HDiv"),
                  "%": (70, "HMod")}
_ADD_DECL = re.compile(r"\baddDecl(WithoutChecking)?\b")
# Code setting the option `Lean.addDecl` reads to skip the kernel (`withOptions (·.setBool `debug.skipKernelTC true)`).
_SKIP_KERNEL = re.compile(r"`debug\.skipKernelTC\s+true\b")
_CTOR = re.compile(r"\b(axiomDecl|thmDecl|defnDecl|opaqueDecl)\b")
_DECL_NAME = re.compile(r"\bname\s*:=\s*``?((?:«[^»]*»|[^\W\d][\w'!?]*)(?:\.(?:«[^»]*»|[^\W\d][\w'!?]*))*)")
INDENT = "\n  "  # `indentExpr`: the term on a line of its own, two spaces in
_QUOTED = re.compile(r"``?((?:«[^»]*»|[^\W\d][\w'!?]*)(?:\.(?:«[^»]*»|[^\W\d][\w'!?]*))*)")


# Library theorems the stand-in's `exact?` knows (its Mathlib): name, explicit binders, conclusion as it renders.
LIBRARY = [
    ("Nat.le_succ", ["n"], "n ≤ n + 1"),
    ("Nat.add_comm", ["n", "m"], "n + m = m + n"),
    ("Nat.mul_comm", ["n", "m"], "n * m = m * n"),
    ("Nat.zero_le", ["n"], "0 ≤ n"),
    ("Nat.le_refl", ["n"], "n ≤ n"),
    ("Nat.add_zero", ["n"], "n + 0 = n"),
    ("Nat.zero_add", ["n"], "0 + n = n"),
]


CLOSERS = frozenset({"rfl", "trivial", "simp", "omega", "decide", "exact", "norm_num", "linarith", "assumption",
                     "sorry", "admit"})


class Beyond(Exception):
    """Input whose answer the stand-in does not model: it stops, saying so, where Lean would answer."""


def spaced(words: list[str]) -> str:
    """Words as Lean prints them: no space inside brackets or before a comma."""
    text = " ".join(words)
    return re.sub(r"([(\[{⟨]) | ([)\]}⟩,])", lambda m: m.group(1) or m.group(2), text)


def goals_at_start(binders: list[str], type_words: list[str]) -> str:
    """`goalsToMessageData` of a block's one goal: each hypothesis (consecutive ones of one type together), then
    `⊢` the target."""
    lines: list[tuple[list[str], list[str]]] = []
    for name, words in hypotheses(binders, written=True).items():
        if lines and lines[-1][1] == words:
            lines[-1][0].append(name)
        else:
            lines.append(([name], words))
    return "\n".join([*(f"{' '.join(names)} : {spaced(words)}" for names, words in lines),
                      f"⊢ {spaced(type_words)}"])


def try_this(tactic: str, minor: int) -> str:
    """The information message `exact?` logs: `Try this: t` (`Lean.Meta.Tactic.TryThis.addSuggestion`); from v4.24
    the suggestion on its own indented line (lean4#9966), from v4.25 after an `[apply]` button (lean4#10524)."""
    if minor < 24:
        return f"Try this: {tactic}"
    return f"Try this:\n  {'[apply] ' if minor >= 25 else ''}{tactic}"


def toolchain_minor(root: Path) -> int:
    """The minor version `lean-toolchain` names (`leanprover/lean4:v4.26.0` → 26); the newest when it names none."""
    file = root / "lean-toolchain"
    m = re.search(r"v4\.(\d+)", file.read_text(encoding="utf-8")) if file.is_file() else None
    return int(m.group(1)) if m else 99


def hypotheses(binders: list[str], written: bool = False) -> dict[str, list[str]]:
    """`(h : T)` binders: each name and its type's words (a default, `:= …`, left out), `ℕ` read as `Nat` unless
    `written` (as Lean prints it back under Mathlib's notation)."""
    out: dict[str, list[str]] = {}
    i = 0
    while i < len(binders):
        if binders[i] == "(" and ":" in binders[i:]:
            close = binders.index(")", i) if ")" in binders[i:] else len(binders)
            colon = binders.index(":", i)
            end = binders.index(":=", colon, close) if ":=" in binders[colon:close] else close
            for name in binders[i + 1:colon]:
                out[name] = [w if written else TYPES.get(w, w) for w in binders[colon + 1:end]]
            i = close + 1
        else:
            i += 1
    return out


def defaults(binders: list[str]) -> dict[str, str]:
    """The explicit binders with a default, each with what Lean elaborates its type to: `(h : T := by tac)` an
    `autoParam`, `(x : T := v)` an `optParam`; Lean fills either in where an application leaves it out."""
    out: dict[str, str] = {}
    i = 0
    while i < len(binders):
        if binders[i] == "(" and ":" in binders[i:] and ")" in binders[i:]:
            close, colon = binders.index(")", i), binders.index(":", i)
            if ":=" in binders[colon:close]:
                at = binders.index(":=", colon, close)
                kind = "autoParam" if binders[at + 1:at + 2] == ["by"] else "optParam"
                out.update({name: kind for name in binders[i + 1:colon]})
            i = close + 1
        else:
            i += 1
    return out


def explicit(binders: str) -> list[str]:
    """A theorem's explicit binder names, in order, from its rendered binders."""
    return [n for n in hypotheses(binders.split()) if n]


def unify(pattern: list[str], goal: list[str], params: list[str]) -> dict[str, str] | None:
    """`pattern` with `params` as holes (one token each, the same token where one repeats) equal to `goal`."""
    if len(pattern) != len(goal):
        return None
    got: dict[str, str] = {}
    for p, g in zip(pattern, goal, strict=True):
        if p in params:
            if got.setdefault(p, g) != g:
                return None
        elif p != g:
            return None
    return got if all(p in got for p in params) else None


def substituted(names: list[str], given: list[str], text: str) -> list[str]:
    values = dict(zip(names, given, strict=False))
    return [values.get(w, w) for w in text.split()]


# Propositions whose head is one of these inductive types (or `Iff`, a structure) are definitionally equal only
# when their heads are: an inductive type applied is already in weak head normal form, so `isDefEq` compares heads.
HEADS = ("↔", "∨", "∧", "=")


def head_of(words: list[str]) -> str | None:
    """The inductive type a proposition's words apply at the top (`True`, `∃`, `↔`, `∨`, `∧`, `=`), or None when the
    stand-in cannot tell (a `→`, a `∀`, a definition that may unfold)."""
    while len(words) > 1 and words[0] == "(" and matching_word(words, 0) == len(words) - 1:
        words = words[1:-1]
    if words in (["True"], ["False"]):
        return words[0]
    if not words or words[0] in ("∀", "fun", "λ"):
        return None
    if words[0] == "∃":
        return "∃"
    depth, found = 0, set()
    for w in words:
        depth += (w in ("(", "[", "{", "⟨")) - (w in (")", "]", "}", "⟩"))
        if depth == 0 and w in (*HEADS, "→"):
            found.add(w)
    if "→" in found:
        return None
    return next((h for h in HEADS if h in found), None)


def matching_word(words: list[str], i: int) -> int:
    depth = 0
    for j in range(i, len(words)):
        depth += (words[j] == "(") - (words[j] == ")")
        if depth == 0:
            return j
    return len(words)


def arguments(toks: list[Tok]) -> list[list[Tok]]:
    """An application's arguments: a bracketed group, or one token."""
    out, i = [], 0
    while i < len(toks):
        j = matching(toks, i) if toks[i].text in OPENING_BRACKETS else i
        out.append(toks[i:j + 1])
        i = j + 1
    return out


@dataclass
class Decl:
    name: str
    kind: str
    module: str
    line: int
    column: int
    binders: str = ""
    type: str = ""
    plain_type: str = ""
    body: str = ""
    refs: set[str] = field(default_factory=set)
    type_refs: set[str] = field(default_factory=set)  # of `refs`, those its type (binders included) names
    axioms: set[str] = field(default_factory=set)  # its own, before following refs
    instance_of: tuple[str, str] | None = None  # (class, first argument) when it is an instance
    private: bool = False
    unchecked: bool = False  # added without the kernel's check
    uses_sorry: bool = False  # written with a sorry (warned about), not an elaboration error
    unsafe: bool = False
    plain_binders: str = ""  # its binders as Lean prints them by default (no `pp.all`)
    holes: int = 0  # the sorries written in its value, each a `sorryAx` of Lean's term


@dataclass
class Scope:
    kind: str
    name: str | None
    opens: list[str] = field(default_factory=list)
    instances: list[str] = field(default_factory=list)
    variables: list[list[Tok]] = field(default_factory=list)
    included: set[str] = field(default_factory=set)
    rules: list[Rule] = field(default_factory=list)


@dataclass
class Env:
    """What a module exports to its importers (and, while it is elaborated, everything it has so far)."""

    decls: dict[str, Decl] = field(default_factory=dict)
    instances: list[str] = field(default_factory=list)
    scoped: dict[str, list[str]] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    commands: dict[str, str] = field(default_factory=dict)  # `elab "kw" : command` → its body
    macros: dict[str, Rule] = field(default_factory=dict)  # `macro "kw" … : command` → its rule

    def merge(self, other: Env) -> None:
        self.decls.update(other.decls)
        self.instances += [i for i in other.instances if i not in self.instances]
        for ns, names in other.scoped.items():
            self.scoped.setdefault(ns, []).extend(n for n in names if n not in self.scoped[ns])
        self.rules += [r for r in other.rules if r not in self.rules]
        self.commands.update(other.commands)
        self.macros.update(other.macros)


@dataclass
class Message:
    line: int
    column: int
    severity: str  # error | warning | info
    text: str


@dataclass
class Guard:
    """A `#guard_msgs` and the lines of the command it guards."""

    line: int
    column: int
    first: int
    last: int
    expected: str
    spec: list[tuple[str, str]]  # (check | drop | pass, severity | all)
    whitespace: str


@dataclass
class Context:
    """What applies to one command: `… in` prefixes."""

    opens: list[str] = field(default_factory=list)
    instances: list[str] = field(default_factory=list)
    pp_all: bool = False
    guard: Guard | None = None


BUILD = Path(".lake/build/lib/lean")  # Lake's folder of `.olean` files, on Lean's search path


class Project:
    """Modules under a root, elaborated on demand; each module once."""

    def __init__(self, root: Path, *, built: bool = False) -> None:
        self.root = root
        self.built = built  # read only what a build wrote, as `lake env lean` does
        self.exports: dict[Path, Env] = {}
        self.active: set[Path] = set()

    def module_path(self, module: str) -> Path:
        """What Lean reads for the module: its `.olean` in the build folder when only built outputs are read (Lean
        loads it from its search path, `Lean.findOLean`, stale or not); else its source, which Lake builds first, or
        for a module no source provides, the `.olean` a build left there."""
        source = self.root.joinpath(*module_parts(module)).with_name(module_parts(module)[-1] + ".lean")
        built = self.olean(module)
        return built if self.built or (not source.exists() and built.exists()) else source

    def olean(self, module: str) -> Path:
        """Where Lake writes the module's `.olean`. The stand-in's compiler keeps there the text it compiled."""
        return self.root.joinpath(BUILD, *module_parts(module)).with_suffix(".olean")

    def module_of(self, path: Path) -> str:
        rel = path.relative_to(self.root)
        if rel.is_relative_to(BUILD):
            rel = rel.relative_to(BUILD)
        return module_name(rel.with_suffix("").as_posix().split("/"))

    def env_of(self, path: Path) -> Env:
        if path not in self.exports:
            if path in self.active:  # an import cycle: Lean refuses it; the build reports it elsewhere
                return Env()
            self.active.add(path)
            self.exports[path] = File(self, path).elaborate().exported()
            self.active.discard(path)
        return self.exports[path]


class File:
    """One file's commands, elaborated in order."""

    def __init__(self, project: Project, path: Path, text: str | None = None) -> None:
        self.project = project
        self.path = path
        self.text = path.read_text(encoding="utf-8") if text is None else text
        self.code, self.docs = mask(self.text)
        self.module = project.module_of(path) if path.is_relative_to(project.root) else path.stem
        self.env = Env()
        self.own: list[str] = []  # names this file declared, in order
        self.own_instances: list[str] = []
        self.own_scoped: dict[str, list[str]] = {}
        self.own_rules: list[Rule] = []
        self.own_commands: dict[str, str] = {}
        self.own_macros: dict[str, Rule] = {}
        self.scopes: list[Scope] = [Scope("file", None)]
        self.messages: list[Message] = []
        self.guards: list[Guard] = []
        self.pp_all = False

    # -- positions ---------------------------------------------------------------

    def line(self, pos: int) -> int:
        return self.code.count("\n", 0, pos) + 1

    def column(self, pos: int) -> int:
        return pos - (self.code.rfind("\n", 0, pos) + 1)

    # -- the file ----------------------------------------------------------------

    def elaborate(self) -> File:
        for m in re.finditer(rf"^import\s+({MODULE})", self.code, re.M):
            target = self.project.module_path(m.group(1))
            if target.exists():
                self.env.merge(self.project.env_of(target))
        commands = self.commands()
        i = 0
        while i < len(commands):
            i = self.run(commands, i, Context())
        return self

    def exported(self) -> Env:
        out = Env()
        out.merge(self.env)  # what it imported stays visible through it
        for name in self.own:
            out.decls[name] = self.env.decls[name]
        out.instances += [n for n in self.own_instances if n not in out.instances]
        for ns, names in self.own_scoped.items():
            out.scoped.setdefault(ns, []).extend(names)
        out.rules += self.own_rules
        out.commands.update(self.own_commands)
        out.macros.update(self.own_macros)
        return out

    def commands(self) -> list[list[Tok]]:
        """Column-0 lines that start a command, each with the tokens up to the next one."""
        keywords = set(self.env.commands) | set(self.env.macros) | set(re.findall(
            r'^(?:elab|macro)\s+"([^"\s]+)\s*"[^\n]*:\s*command', self.code, re.M))
        starts = []
        for m in re.finditer(r"^([ \t]*)(\S+)", self.code, re.M):
            head = re.match(r"#?[\w?!.]+|@\[", m.group(2))
            word = head.group() if head else ""
            # Indented, only what never starts a line of a proof: a declaration, its modifiers, a scope.
            if word in (STARTERS | keywords if not m.group(1) else KINDS | MODIFIERS | INDENTED) or (
                    not m.group(1) and word.startswith("#")) or word == "@[":
                starts.append(m.start(2))
        bounds = [*sorted(set(starts) | set(self.inline(starts))), len(self.code)]
        return [tokens(self.code, a, b) for a, b in itertools.pairwise(bounds)]

    def inline(self, starts: list[int]) -> list[int]:
        """Where a command starts inside a line: Lean's parser ends a term at a token that cannot continue it, so a
        declaration keyword outside brackets starts the next command wherever it stands (with the modifiers and
        attributes before it)."""
        out = []
        toks = tokens(self.code)
        begins = set(starts)
        depth = 0
        for i, t in enumerate(toks):
            if t.pos in begins:
                depth = 0
            if t.text in OPENING_BRACKETS:
                depth += 1
            elif t.text in CLOSING_BRACKETS:
                depth = max(0, depth - 1)
            if depth or t.text not in KINDS or i == 0 or toks[i - 1].text in ("class", "deriving"):
                continue
            j = i
            while j > 0 and (toks[j - 1].text in MODIFIERS or toks[j - 1].text == "]"):
                if toks[j - 1].text == "]":  # an attribute `@[…]` before it
                    k = next((k for k in range(j - 2, -1, -1) if toks[k].text == "@"), None)
                    if k is None:
                        break
                    j = k
                else:
                    j -= 1
            if toks[j].pos not in begins:
                out.append(toks[j].pos)
        return out

    def run(self, commands: list[list[Tok]], i: int, ctx: Context) -> int:
        """Elaborate command `i` under `ctx`; the index of the next one."""
        toks = commands[i]
        if not toks:
            return i + 1
        head = toks[0].text
        if head in PREFIXING and (at := top_level(toks, "in")) is not None:
            inner = Context(list(ctx.opens), list(ctx.instances), ctx.pp_all, ctx.guard)
            self.prefix(toks[:at], inner)
            rest = toks[at + 1:]
            if rest:
                commands = [*commands[:i], rest, *commands[i + 1:]]
                self.run(commands, i, inner)
                return i + 1
            if i + 1 < len(commands):
                if inner.guard is not None:
                    nxt = commands[i + 1]
                    last = self.line(nxt[-1].pos) if nxt else inner.guard.line
                    inner.guard.first, inner.guard.last = self.line(nxt[0].pos) if nxt else last, last
                return self.run(commands, i + 1, inner)
            return i + 1
        self.command(toks, ctx)
        return i + 1

    def prefix(self, toks: list[Tok], ctx: Context) -> None:
        head = toks[0].text
        if head == "open":
            ctx.opens += self.opened(toks[1:])
        elif head == "set_option":
            if len(toks) >= 3 and toks[1].text == "pp.all":
                ctx.pp_all = toks[2].text == "true"
        elif head == "attribute":
            local, names = attribute(toks)
            if local == "local instance":
                ctx.instances += [self.resolve(n) or n for n in names]
        elif head == "#guard_msgs":
            ctx.guard = self.guard(toks)

    def guard(self, toks: list[Tok]) -> Guard:
        tok = toks[0]
        expected = ""
        for _, end, content in self.docs:
            if end <= tok.pos and not self.code[end:tok.pos].strip():
                expected = content
        spec: list[tuple[str, str]] = []
        whitespace = "normalized"
        inside = [t.text for t in toks[1:]]
        if inside and inside[0] == "(":
            for part in " ".join(inside[1:inside.index(")")]).split(","):
                words = part.split()
                if len(words) == 3 and words[0] == "whitespace":
                    whitespace = words[2]
                elif words and words[0] in ("check", "drop", "pass"):
                    spec.append((words[0], words[1]))
                elif words and words[0] != "ordering":
                    spec.append(("check", words[0]))
        line = self.line(tok.pos)
        guard = Guard(line, self.column(tok.pos), line, line, expected, spec, whitespace)
        self.guards.append(guard)
        return guard

    # -- one command ---------------------------------------------------------------

    def command(self, toks: list[Tok], ctx: Context) -> None:
        words = [t.text for t in toks]
        head = words[0]
        if ctx.guard is not None:
            ctx.guard.first, ctx.guard.last = self.line(toks[0].pos), self.line(toks[-1].pos)
        if head == "namespace":
            for part in name_parts(words[1] if len(words) > 1 else ""):
                self.scopes.append(Scope("namespace", part))
        elif head in ("section", "noncomputable") and "section" in words[:2]:
            name = words[words.index("section") + 1] if len(words) > words.index("section") + 1 else None
            self.scopes.append(Scope("section", name if name and is_name(name) else None))
        elif head == "mutual":
            self.scopes.append(Scope("mutual", None))
        elif head == "end":
            closing = name_parts(words[1]) if len(words) > 1 and is_name(words[1]) else [None]
            for _ in closing:
                if len(self.scopes) > 1:
                    self.scopes.pop()
        elif head == "open":
            self.scopes[-1].opens += self.opened(toks[1:])
        elif head == "variable":
            self.scopes[-1].variables += groups(toks[1:])
        elif head == "include":
            self.scopes[-1].included.update(w for w in words[1:] if is_name(w))
        elif head == "set_option":
            if len(words) >= 3 and words[1] == "pp.all":
                self.pp_all = words[2] == "true"
        elif head == "attribute":
            self.attribute(toks)
        elif head in ("macro_rules", "macro", "syntax", "notation") or words[:2] in (["local", "macro_rules"],
                                                                                    ["scoped", "macro_rules"]):
            self.macro(words)
        elif head == "elab" and ": command" in " ".join(words[:8]).replace(" :command", ": command"):
            keyword = words[1].strip('"')
            body = self.code[toks[0].pos:toks[-1].pos + len(toks[-1].text)]
            self.env.commands[keyword] = self.own_commands[keyword] = body
        elif head in ("run_cmd", "run_meta", "run_elab"):
            self.meta(self.code[toks[0].pos:toks[-1].pos + len(toks[-1].text)], toks[0])
        elif head in self.env.commands:
            self.meta(self.env.commands[head], toks[0])
        elif head.startswith("#") and (expanded := rewrite(words, [r for r in self.rules() if r.pattern[:1] == [head]])
                                      ) != words:
            self.expanded(expanded, toks[0])
        elif head == "#print" and len(words) >= 3 and words[1] == "axioms":
            self.print_axioms(toks[2])
        elif head == "#print" and len(words) >= 2:
            self.print_decl(toks[1])
        elif head == "#check" and len(toks) >= 2:
            self.check(toks[1:], ctx)
        elif head in self.env.macros:
            self.expand(toks, ctx)
        elif head == "alias" and len(words) >= 4 and words[2] == ":=":
            self.alias(toks, ctx)
        elif head == "irreducible_def":
            self.irreducible_def(toks, ctx)
        else:
            self.declaration(toks, ctx)

    def opened(self, toks: list[Tok]) -> list[str]:
        out = []
        depth = 0
        for t in toks:
            if t.text in "(":
                depth += 1
            elif t.text == ")":
                depth -= 1
            elif not depth and t.kind == "id" and t.text not in ("scoped", "hiding", "renaming", "in"):
                out.append(self.namespace_of(t.text))
        return out

    def namespace_of(self, name: str) -> str:
        """`open X` inside `namespace Book` opens `Book.X` when that namespace exists."""
        for prefix in self.prefixes():
            full = f"{prefix}.{name}" if prefix else name
            if any(d == full or d.startswith(full + ".") for d in self.env.decls) or full in self.env.scoped:
                return full
        return name

    def attribute(self, toks: list[Tok]) -> None:
        scope, names = attribute(toks)
        resolved = [self.resolve(n) or n for n in names]
        if scope == "local instance":
            self.scopes[-1].instances += resolved
        elif scope == "scoped instance":
            ns = self.namespace()
            self.env.scoped.setdefault(ns, []).extend(resolved)
            self.own_scoped.setdefault(ns, []).extend(resolved)
        elif scope == "instance":
            self.env.instances += resolved
            self.own_instances += resolved

    def macro(self, words: list[str]) -> None:
        local = words[0] == "local"
        rules = []
        if "macro_rules" in words[:2]:
            rules = parse_rules(words[words.index("macro_rules") + 1:])
        elif words[0] == "macro" and len(words) > 1 and words[1].startswith('"'):
            arrow = words.index("=>") if "=>" in words else -1
            if arrow > 0 and words[2] == ":":
                rules = [Rule([words[1].strip('"').strip()], quotation(words[arrow + 1:])[0])]
            elif arrow > 0 and words[arrow - 2:arrow] == [":", "command"]:
                self.command_macro(words[1:arrow - 2], quotation(words[arrow + 1:])[0])
                return
        target = self.scopes[-1].rules if local else self.env.rules
        target += rules
        if not local:
            self.own_rules += rules

    def command_macro(self, syntax: list[str], replacement: list[str]) -> None:
        """`macro "kw" x:ident " := " v:term : command => `(…)`: a command that expands to other commands."""
        pattern: list[str] = []
        i = 0
        while i < len(syntax):
            if syntax[i].startswith('"'):
                pattern.append(syntax[i].strip('"').strip())
                i += 1
            elif i + 2 < len(syntax) and syntax[i + 1] == ":":
                pattern.append("$" + syntax[i])
                i += 3
            else:
                i += 1
        self.env.macros[pattern[0]] = self.own_macros[pattern[0]] = Rule(pattern, replacement)

    def expand(self, toks: list[Tok], ctx: Context) -> None:
        """A command a command macro made: its expansion elaborated in its place."""
        rule = self.env.macros[toks[0].text]
        expanded = rewrite([t.text for t in toks], [rule])
        made = tokens(" ".join(expanded))
        self.command([Tok(t.kind, t.text, toks[0].pos) for t in made], ctx)

    # -- declarations ----------------------------------------------------------------

    def declaration(self, toks: list[Tok], ctx: Context) -> Decl | None:
        before = len(self.messages)
        i = 0
        attributes: list[str] = []
        modifiers: set[str] = set()
        while i < len(toks):
            if toks[i].text == "@" and i + 1 < len(toks) and toks[i + 1].text == "[":
                close = matching(toks, i + 1)
                attributes.append(" ".join(t.text for t in toks[i + 2:close]))
                i = close + 1
            elif toks[i].text in MODIFIERS:
                modifiers.add(toks[i].text)
                i += 1
            else:
                break
        if i >= len(toks) or toks[i].text not in KINDS:
            return None
        kind = toks[i].text
        i += 1
        if kind == "class" and i < len(toks) and toks[i].text in ("inductive", "abbrev"):
            i += 1
        if kind == "instance" and i < len(toks) and toks[i].text == "(":
            i = matching(toks, i) + 1
        written = None
        if kind != "example" and i < len(toks) and toks[i].kind == "id" and (kind != "instance" or toks[i].text not in
                                                                           ("where",)):
            written = toks[i]
            i += 1
        sig, body = signature(toks[i:], kind)
        rules = self.rules()
        sig_words, body_words = rewrite([t.text for t in sig], rules), rewrite([t.text for t in body], rules)
        body_words = self.include_str(body_words)
        at, type_words = split_type(sig_words)
        binders = sig_words[:at]
        bound = bound_names(sig_words) | bound_names(body_words)
        variables = [g for g in self.variables() if {t.text for t in g} & (set(sig_words) | self.included())]
        types = type_names(sig_words, variables)
        type_refs: set[str] = set()
        rendered_binders = " ".join(self.render([t.text for g in variables for t in g], bound, ctx, types, type_refs,
                                                True) + self.render(binders, bound, ctx, types, type_refs, True))
        rendered_type = " ".join(self.render(type_words, bound, ctx, types, type_refs, True))
        type_refs |= set(defaults(binders).values())
        plain_type = " ".join(self.render(type_words, bound, ctx, types, set(), False))
        plain_binders = " ".join(self.render(binders, bound, ctx, types, set(), False))
        refs = set(type_refs)
        rendered_body = " ".join(self.render(body_words, bound, ctx, types, refs, True))
        if written is None:
            name = None if kind == "example" else self.instance_name(type_words)
        else:
            name = self.qualify(written.text)
        pos = written.pos if written is not None else toks[i - 1].pos
        axioms = direct_axioms(body_words, kind)
        decl = Decl(name or "_example", kind, self.module, self.line(pos), self.column(pos), rendered_binders,
                    rendered_type, plain_type, rendered_body, refs, type_refs, axioms, private="private" in modifiers,
                    uses_sorry=bool(SORRY & set(body_words)) and "absurd_marker" not in body_words,
                    unsafe="unsafe" in modifiers, plain_binders=plain_binders,
                    holes=sum(w in SORRY for w in body_words))
        if kind == "axiom" and name:
            decl.axioms = {name}
        if asked := next((t for t in body if t.text == "exact?"), None):
            self.exact(decl, asked, binders, bound)
        elif kind in ("theorem", "lemma", "def", "abbrev", "instance") and body_words == [t.text for t in body]:
            self.application(decl, body, ctx, bound)  # a body a macro rewrote is another term, beyond this check
        if decl.uses_sorry:
            self.messages.append(Message(decl.line, decl.column, "warning", "declaration uses 'sorry'"))
        self.traces(body, binders, type_words, self.messages[before:])
        if name is None:
            return decl
        self.add(decl)
        if kind == "instance" or any(a.split()[0] == "instance" for a in attributes if a):
            decl.instance_of = class_of(type_words)
            if "local" in modifiers:
                self.scopes[-1].instances.append(name)
            elif "scoped" in modifiers:
                ns = self.namespace()
                self.env.scoped.setdefault(ns, []).append(name)
                self.own_scoped.setdefault(ns, []).append(name)
            else:
                self.env.instances.append(name)
                self.own_instances.append(name)
        elif kind == "def":
            decl.instance_of = class_of(type_words)
        return decl

    def traces(self, body: list[Tok], binders: list[str], type_words: list[str], said: list[Message]) -> None:
        """`trace "s"` and `trace_state` (`Lean.Elab.Tactic.evalTraceMessage`, `evalTraceState`) in the `by` block
        `body`, where a tactic starts at the block's first token or at the start of a line."""
        if not body or body[0].text != "by":
            return
        errors = [(m.line, m.column) for m in said if m.severity == "error"]
        errors += [(self.line(t.pos), self.column(t.pos)) for t in body if t.text == "absurd_marker"]
        state = "start"  # then "closed" after a closing first tactic, or "unknown"
        for i, tok in enumerate(body[1:], start=1):
            if i > 1 and self.line(tok.pos) == self.line(body[i - 1].pos):
                continue  # not where a tactic starts
            at = (self.line(tok.pos), self.column(tok.pos))
            if any(e < at for e in errors):
                return
            if tok.text == "trace" and i + 1 < len(body) and body[i + 1].kind == "str":
                self.info(tok, ast.literal_eval(body[i + 1].text))
            elif tok.text == "trace_state":
                if state == "unknown":
                    raise Beyond(f"the goals at line {at[0]} follow a tactic this stand-in does not run")
                self.info(tok, goals_at_start(binders, type_words) if state == "start" else "")
            else:
                state = "closed" if state == "start" and tok.text in CLOSERS else "unknown"

    def exact(self, decl: Decl, tok: Tok, binders: list[str], bound: set[str]) -> None:
        """`exact?` (`Lean.Elab.Tactic.LibrarySearch`): a hypothesis whose type is the goal, else a theorem of the
        environment, else one of `LIBRARY`, whose conclusion matches the goal (its explicit binders standing for
        anything) closes it, printed as `Try this` is at the toolchain `lean-toolchain` names; else the error Lean
        gives. Found, the declaration holds the proof: no sorry."""
        goal = decl.plain_type.split()
        found = None
        for name, types in hypotheses(binders).items():
            if types == goal:
                found = name
                break
        candidates = [(d.name, explicit(d.binders), d.plain_type) for d in self.env.decls.values()
                      if d.kind in ("theorem", "lemma") and d.name != decl.name and not d.uses_sorry
                      and (not d.private or d.module == self.module)]
        for name, params, conclusion in [*candidates, *LIBRARY]:
            if found is not None:
                break
            if (got := unify(conclusion.split(), goal, params)) is not None:
                found = " ".join([name, *(got[p] for p in params)])
                if name in self.env.decls:
                    decl.refs.add(name)
        decl.uses_sorry = False
        if found is None:
            shared = any(c.split()[1:2] == goal[1:2] for _, _, c in [*candidates, *LIBRARY])
            self.error(tok, "`exact?` could not close the goal." + (" Try `apply?` to see partial suggestions."
                                                                     if shared else ""))
            return
        decl.axioms.discard("sorryAx")
        decl.body = found
        self.info(tok, try_this(f"exact {found}", toolchain_minor(self.project.root)))

    def application(self, decl: Decl, body: list[Tok], ctx: Context, bound: set[str]) -> None:
        """A proof that is one application of a theorem, `t a b` or `by exact t a b`, checked against `t`'s explicit
        binders as `Lean.Elab.App` does against the expected type: too few arguments leave a `→` the declaration's
        type does not have (`type mismatch`, `Lean.Elab.throwTypeMismatchError`), too many apply a proposition
        (`function expected`); as many, a conclusion whose head (`True`, `∧`, `=`, …: `head_of`) is not the expected
        type's is a `type mismatch` too, as `isDefEq` fails on two different inductive types. An error leaves the
        declaration backed by `sorryAx`, as Lean's recovery does."""
        words = [t.text for t in body]
        at = 2 if words[:2] == ["by", "exact"] else 0 if words[:1] != ["by"] else None
        if at is None or len(words) <= at or not is_name(words[at]):
            return
        head = body[at]
        args = arguments(body[at + 1:])
        if any(len(g) == 1 and not (g[0].kind in ("id", "num") or g[0].text == "_") for g in args):
            return  # an operator, a `fun`, a `<|`: more than one application, beyond this check
        target = self.resolve(head.text, ctx)
        if target is None and args and "." not in head.text and head.text not in bound \
                and head.text not in {n.rsplit(".", 1)[-1] for n, _, _ in LIBRARY}:
            # A plain name applied that nothing declares: the project's, as the tests write them (a library
            # lemma is written qualified), so Lean's `unknown identifier` (`Lean.Elab.Term.elabIdent`).
            self.error(head, f"unknown identifier '{head.text}'")
            decl.axioms.add("sorryAx")
            return
        if target is None or self.env.decls[target].kind not in ("theorem", "lemma"):
            return
        t = self.env.decls[target]
        params = hypotheses(t.plain_binders.split())
        filled = defaults(t.plain_binders.split())
        names = [n for n in params if n not in filled]
        given = [" ".join(x.text for x in g) for g in args]
        if len(given) > len(names):
            applied = " ".join([head.text, *given[:len(names)]])
            self.error(head, f"function expected{INDENT}{applied}")
        elif len(given) < len(names) and not ({"→", "∀"} & set(decl.plain_type.split())):
            subst = dict(zip(names, given, strict=False))
            rest = [" ".join(subst.get(w, w) for w in params[n]) for n in names[len(given):]]
            result = " ".join(subst.get(w, w) for w in t.plain_type.split())
            shown = " ".join([head.text, *given])
            self.error(head, f"type mismatch{INDENT}{shown}\nhas type{INDENT}{' → '.join([*rest, result])} : Prop"
                             f"\nbut is expected to have type{INDENT}{decl.plain_type} : Prop")
        elif (has := head_of(result := substituted(names, given, t.plain_type))) is not None \
                and (wanted := head_of(decl.plain_type.split())) is not None and has != wanted:
            self.error(head, f"type mismatch{INDENT}{' '.join([head.text, *given])}\nhas type{INDENT}"
                             f"{' '.join(result)} : Prop\nbut is expected to have type{INDENT}{decl.plain_type} : Prop")
        else:
            return
        decl.axioms.add("sorryAx")

    def include_str(self, words: list[str]) -> list[str]:
        """`include_str "p"`: the text of the file `p`, relative to the folder of this module's source, as a string
        literal (of a built module, read when the listing is: the build just before wrote what it read then)."""
        out: list[str] = []
        i = 0
        while i < len(words):
            if words[i] == "include_str" and i + 1 < len(words) and words[i + 1].startswith('"'):
                built = self.path.is_relative_to(self.project.root / BUILD)
                folder = self.project.root.joinpath(*module_parts(self.module)).parent if built else self.path.parent
                target = folder / ast.literal_eval(words[i + 1])
                text = target.read_text(encoding="utf-8") if target.is_file() else ""
                out.append(json.dumps(text))
                i += 2
            else:
                out.append(words[i])
                i += 1
        return out

    def alias(self, toks: list[Tok], ctx: Context) -> None:
        """Batteries' `alias n := t`: a theorem (when `t` is one) or a definition whose value is `t`."""
        target = self.resolve(toks[3].text, ctx)
        if target is None:
            self.error(toks[3], f"unknown constant '{toks[3].text}'")
            return
        t = self.env.decls[target]
        name = self.qualify(toks[1].text)
        pos = toks[1].pos
        self.add(Decl(name, "theorem" if t.kind in ("theorem", "lemma") else "def", self.module, self.line(pos),
                      self.column(pos), t.binders, t.type, t.plain_type, target, {target, *t.type_refs},
                      set(t.type_refs)))

    def irreducible_def(self, toks: list[Tok], ctx: Context) -> None:
        """Mathlib's `irreducible_def n … := v`: `n`, whose value only a theorem `n_def` unfolds (the constants it
        goes through have hygienic names, which the stand-in leaves out)."""
        decl = self.declaration([Tok("id", "def", toks[0].pos), *toks[1:]], ctx)
        if decl is None or decl.name is None:
            return
        self.add(Decl(f"{decl.name}_def", "theorem", self.module, decl.line, decl.column, decl.binders,
                      f"{decl.name} = {decl.body}", f"{decl.name} = {decl.body}", "", {decl.name, *decl.refs},
                      {decl.name, *decl.refs}))

    def add(self, decl: Decl) -> None:
        self.env.decls[decl.name] = decl
        if decl.name not in self.own:
            self.own.append(decl.name)

    def instance_name(self, type_words: list[str]) -> str:
        """`Lean.Elab.mkInstanceName` for the simple types the tests write: the class, then the term's constants in
        the order Lean visits them (an operator's function before its arguments, the lowest precedence first), each
        the last component of its name, capitalized, once; `Nat` for numerals, as the type of a relation between
        them, then `OfNat`."""
        parts: list[str] = []
        numerals = any(w.isdigit() for w in type_words)
        ranked = sorted({w for w in type_words if w in INSTANCE_PARTS}, key=lambda w: (INSTANCE_PARTS[w][0],
                                                                                      type_words.index(w)))
        for w in type_words:
            if is_name(w) and not parts:
                parts.append(TYPES.get(w, w).split(".")[-1])
        for op in ranked:
            parts.append(INSTANCE_PARTS[op][1])
            if numerals and INSTANCE_PARTS[op][0] == 50:
                parts.append("Nat")
        parts += [TYPES.get(w, w).split(".")[-1] for w in type_words if is_name(w)][1:]
        if numerals:
            parts.append("OfNat")
        seen: list[str] = []
        for p in parts:
            p = p[:1].upper() + p[1:]
            if p not in seen:
                seen.append(p)
        base = self.qualify("inst" + "".join(seen))
        name, n = base, 0
        while name in self.env.decls:
            n += 1
            name = f"{base}_{n}"
        return name

    # -- names, instances, rendering -----------------------------------------------------

    def namespace(self) -> str:
        return ".".join(s.name for s in self.scopes if s.kind == "namespace" and s.name)

    def prefixes(self) -> list[str]:
        parts = self.namespace().split(".") if self.namespace() else []
        return [".".join(parts[:k]) for k in range(len(parts), 0, -1)] + [""]

    def qualify(self, name: str) -> str:
        if name.startswith("_root_."):
            return name[len("_root_."):]
        return f"{self.namespace()}.{name}" if self.namespace() else name

    def opens(self, ctx: Context | None = None) -> list[str]:
        out = list(reversed(ctx.opens)) if ctx else []
        for scope in reversed(self.scopes):
            out += reversed(scope.opens)
        return out

    def resolve(self, name: str, ctx: Context | None = None) -> str | None:
        """The declaration `name` means here, or None (a local, or something outside the project)."""
        if name.startswith("_root_."):
            return self._visible(name[len("_root_."):])
        namespaces = [p for p in self.prefixes() if p]
        for candidate in [f"{p}.{name}" for p in namespaces] + [f"{o}.{name}" for o in self.opens(ctx)] + [name]:
            if found := self._visible(candidate):
                return found
        return None

    def _visible(self, full: str) -> str | None:
        decl = self.env.decls.get(full)
        if decl is not None and (not decl.private or decl.module == self.module):
            return full
        return None

    def rules(self) -> list[Rule]:
        out = [r for s in reversed(self.scopes) for r in reversed(s.rules)]
        return out + list(reversed(self.env.rules))

    def variables(self) -> list[list[Tok]]:
        return [g for s in self.scopes for g in s.variables]

    def included(self) -> set[str]:
        return {n for s in self.scopes for n in s.included}

    def instance_for(self, classes: tuple[str, ...], types: set[str], ctx: Context) -> str | None:
        candidates = list(reversed(ctx.instances))
        for scope in reversed(self.scopes):
            candidates += reversed(scope.instances)
        for ns in [*self.opens(ctx), *(p for p in self.prefixes() if p)]:
            candidates += reversed(self.env.scoped.get(ns, []))
        candidates += reversed(self.env.instances)
        for name in candidates:
            decl = self.env.decls.get(name)
            if decl is None or decl.instance_of is None:
                continue
            cls, arg = decl.instance_of
            if cls.split(".")[-1] in classes and (not arg or arg in types or arg[:1].islower() or arg[:1] in "αβγ"):
                return name
        return None

    def render(self, words: list[str], bound: set[str], ctx: Context, types: set[str], refs: set[str],
               pp_all: bool) -> list[str]:
        out = []
        for w in words:
            if w in OPERATORS:
                function, classes = OPERATORS[w]
                instance = self.instance_for(classes, types, ctx)
                if instance:
                    refs.add(instance)
                if pp_all:
                    out.append(f"(@{function} {instance or 'inst' + classes[-1]})")
                    continue
            elif is_name(w) and w not in bound and (target := self._lookup(w, ctx)):
                full, rest = target
                refs.add(full)
                out.append(full + rest)
                continue
            out.append(TYPES.get(w, w))
        return out

    def _lookup(self, name: str, ctx: Context) -> tuple[str, str] | None:
        """The declaration a (possibly field-projected) name starts with, and the rest (`h.elim`)."""
        parts = name_parts(name)
        for k in range(len(parts), 0, -1):
            found = self.resolve(".".join(parts[:k]), ctx)
            if found:
                return found, "".join("." + p for p in parts[k:])
        return None

    # -- meta code -------------------------------------------------------------------------

    def meta(self, body: str, tok: Tok) -> None:
        calls = list(_ADD_DECL.finditer(body))
        for n, call in enumerate(calls):
            segment = body[call.end():calls[n + 1].start() if n + 1 < len(calls) else len(body)]
            ctor, named = _CTOR.search(segment), _DECL_NAME.search(segment)
            if ctor is None or named is None:
                continue
            name = named.group(1)
            kind = {"axiomDecl": "axiom", "thmDecl": "theorem", "defnDecl": "def",
                    "opaqueDecl": "opaque"}[ctor.group(1)]
            value = segment.split("value", 1)[1] if "value" in segment else ""
            type_part = segment.split("type", 1)[1].split("value", 1)[0] if "type" in segment else ""
            decl = Decl(name, kind, self.module, self.line(tok.pos), self.column(tok.pos),
                        type=" ".join(_QUOTED.findall(type_part)) or "?",
                        unchecked=bool(call.group(1)) or _SKIP_KERNEL.search(body, 0, call.start()) is not None)
            decl.plain_type = decl.type
            decl.axioms = {name} if kind == "axiom" else ({"sorryAx"} if "sorryAx" in value else set())
            decl.refs = {q for q in _QUOTED.findall(value) if q in self.env.decls}
            self.add(decl)

    # -- answers ---------------------------------------------------------------------------

    def axioms_of(self, name: str) -> set[str]:
        seen: set[str] = set()
        out: set[str] = set()
        todo = [name]
        while todo:
            current = todo.pop()
            if current in seen or current not in self.env.decls:
                continue
            seen.add(current)
            decl = self.env.decls[current]
            out |= decl.axioms
            todo += decl.refs
        return out

    def info(self, tok: Tok, text: str) -> None:
        self.messages.append(Message(self.line(tok.pos), self.column(tok.pos), "info", text))

    def error(self, tok: Tok, text: str) -> None:
        self.messages.append(Message(self.line(tok.pos), self.column(tok.pos), "error", text))

    def print_axioms(self, tok: Tok) -> None:
        full = self.resolve(tok.text)
        if full is None:
            self.error(tok, f"unknown constant '{tok.text}'")
            return
        self.info(tok, axioms_message(full, self.axioms_of(full)))

    def expanded(self, words: list[str], tok: Tok) -> None:
        """A command a `macro_rules` rewrote: `#print "s"` prints `s` (`Lean.Elab.Print`); the rest is beyond this
        model."""
        if words[0] == "#print" and len(words) == 2 and words[1].startswith('"'):
            self.info(tok, ast.literal_eval(words[1]))
        else:
            self.error(tok, f"the stand-in does not elaborate the expansion `{' '.join(words)}`")

    def check(self, toks: list[Tok], ctx: Context) -> None:
        if toks[0].kind == "str":
            self.info(toks[0], f"{toks[0].text} : String")
            return
        explicit = toks[0].text == "@"
        target = toks[1] if explicit and len(toks) > 1 else toks[0]
        full = self.resolve(target.text, ctx)
        if full is None:
            self.error(target, f"unknown identifier '{target.text}'")
            return
        decl = self.env.decls[full]
        pp_all = self.pp_all or ctx.pp_all
        shown = decl.type if pp_all else decl.plain_type
        self.info(toks[0], f"{full}{' ' + decl.binders if decl.binders else ''} : {shown}")

    def print_decl(self, tok: Tok) -> None:
        full = self.resolve(tok.text)
        if full is None:
            self.error(tok, f"unknown constant '{tok.text}'")
            return
        d = self.env.decls[full]
        head = f"{d.kind} {full}{' ' + d.binders if d.binders else ''} : {d.type}"
        value = f"sorryAx ({d.type}) true" if "sorryAx" in d.axioms else d.body  # Lean's term, not the tactics
        self.info(tok, head if d.kind == "axiom" or not value else f"{head} :=\n  {value}")


