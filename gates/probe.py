"""Asking Lean about declarations: one generated file per round, its answers read back.

A round is one Lean file: imports of the modules holding the names asked about, `set_option pp.all true`,
then `#print axioms N`, `#check @N` and `#print D` commands, run through the configured `check_file`
command (`Compiler.probe`). Each command follows a marker `#check "<nonce>:<i>"`, so the output splits
into one answer per command whatever it prints; nothing printed before the first marker (a build of the
imports) is read. The `lean` command line prints information messages bare; a `FILE:L:C: info:` prefix
(and lake's `info: FILE:L:C:`) is accepted too, and a list of axioms may wrap over several lines.

The Worker controls the names asked about (a `«»` name may hold any character but `»`, a line break included,
and Lean prints it so) and what Lean prints about them, so the reading fails closed: every line after the first
marker must fall between two markers that come once each and in order; the nonce (random per round) anywhere
else means code running inside Lean read the probe; and the answer to `#print axioms N` must be exactly one
verdict, for `N` as Lean prints it, or the command has no verdict.

A statement's fingerprint is its `#check @N` under `pp.all` (instances, coercions, universes and full
names explicit) and the `#print` of every project definition it reaches, transitively: what Lean
elaborates, not what the text says. Which definitions to print is first guessed from the text (names
in the statement → project declarations → names in their text …, bounded); a project name that appears
in Lean's answers but was not printed is printed in one more round, so `depth + 1` rounds print every
definition within `[gates] fingerprint_depth` levels. A definition reached but not printed (past that depth,
or past `[gates] fingerprint_max_defs` printed in one probe) is a gap, written into the fingerprint as such
(`gaps` reads them back): the text alone cannot say it is unchanged, so the kernel gate decides what a gap
means.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from gates import hooks
from gates.census import Census
from gates.header import module_paths
from gates.index import BUILD_TIME_CODE, Decl
from gates.lexer import ID_FIRST, ID_REST

if TYPE_CHECKING:
    from gates.base import Compiler

MAX_HOOKS = 6
FORMAT = "2"  # of a fingerprint's text: a cached or locked fingerprint of another format is not compared
DEFINING = frozenset({"def", "abbrev", "structure", "class", "inductive", "instance", "opaque"})
_PART = rf"(?:«[^»\n]*»|[{ID_FIRST}][{ID_REST}]*)"
IDENT = re.compile(rf"{_PART}(?:\.{_PART})*")
_LEAN = re.compile(r"^(?P<file>[^\n]+?):\d+:\d+(?:-\d+:\d+)?: (?P<sev>error|warning|info|information)"
                   r"(?:\([^)\n]*\))?: ?(?P<msg>.*)$")
_LAKE = re.compile(r"^(?P<sev>error|warning|info|information): (?P<file>[^\n]+?):\d+:\d+: ?(?P<msg>.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
_COMPONENT = re.compile(r"«[^»]*»|[^.«»]+")
_PLAIN = re.compile(rf"[{ID_FIRST}][{ID_REST}]*")
# One axiom of a printed list, and the separator after it (`, `, or a line break where the list wraps).
_AXIOM = re.compile(r"(?P<name>(?:«[^»]*»|[^\s,.«»\[\]]+)(?:\.(?:«[^»]*»|[^\s,.«»\[\]]+))*)(?:,\s+(?=\S)|\Z)")


def canonical(name: str) -> str:
    """A name as a key: `«»` escapes dropped, so `Book.«my thm»` as written and as Lean prints it agree."""
    return name.replace("«", "").replace("»", "")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Answers:
    """What Lean answered in one probe (all its rounds), by canonical name."""

    axioms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)  # `#check @N` under pp.all
    prints: dict[str, str] = field(default_factory=dict)  # `#print D` under pp.all
    errors: dict[str, str] = field(default_factory=dict)  # "axioms N" / "check N" / "print D" → Lean's error
    failure: str | None = None  # a round whose output could not be split: what it printed last
    rounds: int = 0
    seconds: float = 0.0


@dataclass
class Baseline:
    """What Lean said about the base before the Worker ran: the kernel gate's "before"."""

    fingerprints: dict[str, str] = field(default_factory=dict)  # declaration → its fingerprint at the base
    locked: dict[str, str] = field(default_factory=dict)  # locked declaration → fingerprint digest from the lock
    problem: str | None = None  # why the base could not be fingerprinted, when it could not
    toolchain: str = ""  # digest of lean-toolchain and lake-manifest.json: fingerprints compare within one


class Names:
    """A tree's declarations by canonical name, with where a name written in Lean text may point."""

    def __init__(self, census: Census, roots: Iterable[str]) -> None:
        self.census = census
        self.roots = [r.strip("/") for r in roots]
        self.decls: dict[str, tuple[str, Decl]] = {}
        for path, d in census.decls():
            if d.name:
                self.decls.setdefault(canonical(d.name) if "«" in d.name else d.name, (path, d))
        # The namespaces Lean's own names for the project's declarations fall under (anonymous instances, matchers):
        # the root folders', and those the declarations use, which need not match them (root `Book`, `namespace
        # Textbook`). A project extending an outside namespace (`Nat.foo`) makes Lean's names there count too:
        # printed in fingerprints, never settled, so more of them reach the bounds.
        self.prefixes = {r.rsplit("/", 1)[-1] for r in self.roots} | {n.split(".")[0] for n in self.decls if "." in n}

    @cached_property
    def by_last(self) -> dict[str, list[str]]:
        """The last component of every name → the names ending with it."""
        out: dict[str, list[str]] = {}
        for name in self.decls:
            out.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        return out

    def decl(self, name: str) -> Decl | None:
        found = self.decls.get(canonical(name))
        return found[1] if found else None

    def askable(self, name: str) -> bool:
        """Named, and resolvable from another file: Lean hides a `private` declaration from importers."""
        d = self.decl(name)
        return d is not None and "private" not in d.modifiers

    def module(self, name: str) -> str | None:
        found = self.decls.get(canonical(name))
        return self.module_of(found[0]) if found else None

    def module_of(self, path: str) -> str:
        """The module `path` is: as the project's own files import it, else as its Lean root names it."""
        return self.imported.get(path) or module_of(path, self.roots)

    @cached_property
    def imported(self) -> dict[str, str]:
        """Project file → the module name the project's files import it by (the longest, should several resolve
        to it): what Lean's search path knows it as, whatever folders the lakefile's libraries start from."""
        paths = module_paths(self.census.files)
        out: dict[str, str] = {}
        imports = {m for index in self.census.files.values() for m in index.imports}
        for module in sorted(imports, key=lambda m: (-m.count("."), m)):
            if (path := paths.get(module)) is not None:
                out.setdefault(path, module)
        return out

    def written(self, text: str, near: str = "") -> set[str]:
        """Project declarations a Lean text in the declaration `near` may name: for each name, those its
        namespaces resolve it to, innermost first, as Lean does; failing that, every declaration whose name ends
        so (one `open` away)."""
        out: set[str] = set()
        spaces = canonical(near).split(".")[:-1]
        for token in set(IDENT.findall(text)):
            token = canonical(token)
            found = [n for n in self.by_last.get(token.rsplit(".", 1)[-1], ())
                     if n == token or n.endswith("." + token)]
            inner = next(([n] for k in range(len(spaces), 0, -1)
                          for n in [".".join([*spaces[:k], token])] if n in self.decls), None)
            out.update(inner or found)
        return out

    def printed(self, answer: str) -> set[str]:
        """Project definitions an answer of Lean names (Lean prints full names): the project's own definitions,
        and names under its namespaces that the source never spells (anonymous instances, matchers)."""
        out = set()
        for token in IDENT.findall(answer):
            name = canonical(token)
            found = self.decls.get(name)
            if found is not None:
                if found[1].kind in DEFINING and "private" not in found[1].modifiers:
                    out.add(name)
            elif name.split(".")[0] in self.prefixes and "." in name:
                out.add(name)
        return out

    def text_of(self, name: str) -> str:
        d = self.decl(name)
        return "" if d is None else f"{d.statement_text} {d.body_code}"

    def guess(self, starts: Iterable[str], depth: int, limit: int) -> list[str]:
        """The project definitions the statements of `starts` reach in their text, breadth first."""
        frontier: set[str] = set()
        for name in starts:
            d = self.decl(name)
            if d is not None:
                frontier |= self.written(d.statement_text, name)
        out: list[str] = []
        seen: set[str] = set()
        for _ in range(depth):
            nxt: set[str] = set()
            for name in sorted(frontier - seen):
                seen.add(name)
                d = self.decl(name)
                if d is None or d.kind not in DEFINING or not self.askable(name):
                    continue
                if len(out) >= limit:
                    return out
                out.append(name)
                nxt |= self.written(self.text_of(name), name)
            frontier = nxt
        return out


def module_of(path: str, roots: Iterable[str]) -> str:
    """`Book/A.lean` → `Book.A`: relative to the folder holding the Lean root, so `src/Book/A.lean` with the
    root `src/Book` is `Book.A`."""
    stem = path.removesuffix(".lean")
    for root in roots:
        root = root.strip("/")
        if path == f"{root}.lean" or path.startswith(f"{root}/"):
            parent = root.rsplit("/", 1)[0] if "/" in root else ""
            stem = stem[len(parent) + 1:] if parent else stem
            break
    return stem.replace("/", ".")


# -- one probe -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    kind: str  # axioms | check | print
    name: str  # as written in the source (escapes kept)

    @property
    def text(self) -> str:
        return {"axioms": f"#print axioms {self.name}", "check": f"#check @{self.name}",
                "print": f"#print {self.name}"}[self.kind]

    @property
    def key(self) -> str:
        return f"{self.kind} {canonical(self.name)}"


def render(imports: Iterable[str], commands: list[Command], nonce: str, head: str | None = None) -> str:
    """The probe file: `head` (else imports of `imports`), then each command after a marker, and a last marker so
    the last answer ends too."""
    first = [head.rstrip("\n")] if head is not None else [f"import {m}" for m in sorted(set(imports))]
    lines = [*first, "", "set_option pp.all true", ""]
    for i, command in enumerate(commands):
        lines += [f'#check "{nonce}:{i}"', command.text]
    lines.append(f'#check "{nonce}:{len(commands)}"')
    return "\n".join(lines) + "\n"


class Unreadable(ValueError):
    """Lean's output is not what Lean prints for the probe: what could not be read, and where."""


@dataclass
class Answer:
    text: str  # the information Lean printed
    error: str | None  # the first error, when the command failed


def split(output: str, nonce: str, count: int) -> list[Answer]:
    """One answer per command, read between the markers. Every line after the first marker belongs to exactly one
    answer: the markers must come once each, in order, and nothing may follow the last one. The nonce is random per
    round, so only code run inside Lean that read the probe can print it: anywhere but in its own marker, the output
    is refused (`Unreadable`), as it is when a marker is missing (an import failed, or the run was cut short)."""
    marker = re.compile(rf'^"{re.escape(nonce)}:([0-9]+)" : String$')
    chunks: list[list[tuple[str, str]]] = []
    for raw in _ANSI.sub("", output).split("\n"):  # Lean's line breaks only: a name may hold U+2028
        severity, line = _classify(raw)
        m = marker.match(line.strip()) if severity in ("", "info") else None
        if m is not None:
            i = int(m.group(1))
            if i != len(chunks):
                raise Unreadable(f"marker {i} twice" if i < len(chunks) else
                                 f"marker {i} out of order (marker {len(chunks)} expected)")
            chunks.append([])
        elif nonce in raw:
            raise Unreadable("a line holds the nonce outside its marker (code run inside Lean read the probe): "
                             f"{raw[:200]!r}")
        elif len(chunks) > count and raw.strip():
            raise Unreadable(f"output after the last marker, which no question accounts for: {raw[:200]!r}")
        elif chunks:
            chunks[-1].append((severity, line))
    if len(chunks) <= count:
        raise Unreadable(f"no marker {len(chunks)}: Lean did not answer every question")
    out = []
    for lines in chunks[:count]:
        text: list[str] = []
        error: list[str] | None = None
        for severity, line in lines:
            if severity == "error" and error is None:
                error = [line]
            elif error is not None and severity == "":
                error.append(line)
            elif severity in ("info", ""):
                text.append(line)
        out.append(Answer("\n".join(text).strip(), None if error is None else "\n".join(error).strip()))
    return out


def _classify(raw: str) -> tuple[str, str]:
    """A line's severity when it opens a positioned message ("" for a bare line), and its text."""
    m = _LEAN.match(raw) or _LAKE.match(raw)
    if m is None:
        return "", raw
    sev = m.group("sev")
    return "info" if sev == "information" else sev, m.group("msg")


def printed_name(name: str) -> str:
    """A name as Lean prints it (`Name.toString`): each component escaped with `«»` unless it is a plain
    identifier (or holds a `»`); none escaped in an inaccessible, hygienic or pseudo-syntax name."""
    parts = [p.strip("«»") for p in _COMPONENT.findall(name)]
    if parts[:1] == ["_root_"] and len(parts) > 1:
        parts = parts[1:]
    last = parts[-1]
    if "✝" in last or last in ("_inaccessible", "_hyg") or parts[0].startswith(("#", "?")) or parts == ["_"]:
        return ".".join(parts)
    return ".".join(p if _PLAIN.fullmatch(p) or "»" in p else f"«{p}»" for p in parts)


def verdict(text: str, name: str) -> tuple[str, ...]:
    """The axioms in Lean's answer to `#print axioms name`, which must be exactly one message about that name, as
    Lean prints it: `'N' does not depend on any axioms`, or `'N' depends on axioms: [a, b]` (the list wrapped or
    not). Anything else is `Unreadable`: a verdict for another name, a second verdict, text around it."""
    if not text:
        raise Unreadable("no verdict in Lean's answer")
    head = f"'{printed_name(name)}' "
    rest = text[len(head):] if text.startswith(head) else ""
    if rest == "does not depend on any axioms":
        return ()
    listed = re.fullmatch(r"depends on axioms: \[(.+)\]", rest, re.DOTALL)
    axioms: list[str] = []
    pos = 0
    while listed is not None and (m := _AXIOM.match(listed.group(1), pos)) is not None:
        axioms.append(m.group("name"))
        pos = m.end()
        if pos == len(listed.group(1)):
            return tuple(axioms)
    raise Unreadable(f"not what Lean prints for `#print axioms {name}`: {text[:300]!r}")


def ask_home(compiler: Compiler, names: Names, path: str, text: str, targets: list[str]) -> dict[str, tuple[str, ...]]:
    """The axioms of `targets`, private declarations of the file `path` whose text is `text`: asked in a copy of
    that file, where a private name resolves, with the questions after its last line. Raises `Unreadable` when
    Lean was not asked (code of the file or its imports could answer in Lean's place, or run while the copy is
    elaborated) or did not answer as it does."""
    module = names.module_of(path)
    found = hooks.refused(names.census, [module])
    running = [m for m in names.census.files[path].markers if m.kind in BUILD_TIME_CODE]
    if found or running:
        what = found or [f"{path}:{m.line}: {m.kind}" for m in running]
        raise Unreadable("not asked in its own file, beside code that runs while it is elaborated and could answer "
                         f"in Lean's place ({'; '.join(what[:MAX_HOOKS])})")
    nonce = secrets.token_hex(8)
    result = compiler.probe(render((), [Command("axioms", n) for n in targets], nonce, head=text))
    parts = split(result.output, nonce, len(targets))
    out = {}
    for name, answer in zip(targets, parts, strict=True):
        if answer.error is not None:
            raise Unreadable(f"#print axioms {name}: {answer.error[:300]}")
        out[canonical(name)] = verdict(_unmangled(answer.text, name), name)
    return out


def _unmangled(text: str, name: str) -> str:
    """Lean's answer about a private declaration, its name as written: Lean may print the private form it keeps,
    `_private.<module>.0.<name>`."""
    m = re.match(r"'_private\.(?:[^'\n]*?)\.0\.", text)
    return f"'{text[m.end():]}" if m is not None and text[m.end():].startswith(f"{printed_name(name)}' ") else text


def run_round(compiler: Compiler, imports: Iterable[str], commands: list[Command], answers: Answers,
              names: Names) -> None:
    """One Lean process answering `commands`, its answers added to `answers`; none when the imports hold project
    code that could answer in its place (`gates.hooks`)."""
    imports = list(imports)
    if found := hooks.refused(names.census, imports):
        shown = "; ".join(found[:MAX_HOOKS]) + (f"; … and {len(found) - MAX_HOOKS} more" if len(found) > MAX_HOOKS
                                                 else "")
        answers.failure = ("Lean was not asked: the probe imports project code that could answer in Lean's place, "
                           f"and its answers cannot be told from Lean's ({shown}); remove it, or move it where the "
                           "declarations the gate checks do not import it")
        for c in commands:
            answers.errors.setdefault(c.key, "no answer: Lean was not asked")
        return
    nonce = secrets.token_hex(8)
    result = compiler.probe(render(imports, commands, nonce))
    answers.rounds += 1
    answers.seconds += result.seconds
    try:
        parts = split(result.output, nonce, len(commands))
    except Unreadable as e:
        status = "timed out" if result.exit_code is None else f"exited with {result.exit_code}"
        tail = "\n".join(result.output.strip().splitlines()[-12:])
        answers.failure = f"`{result.command}` {status}; its output could not be read ({e}):\n{tail}"
        for c in commands:
            answers.errors.setdefault(c.key, "no answer: the probe's output could not be read")
        return
    for command, answer in zip(commands, parts, strict=True):
        name = canonical(command.name)
        if answer.error is not None:
            answers.errors[command.key] = answer.error
        elif command.kind == "axioms":
            try:
                answers.axioms[name] = verdict(answer.text, command.name)
            except Unreadable as e:
                answers.errors[command.key] = str(e)
        elif command.kind == "check":
            answers.checks[name] = answer.text
        else:
            answers.prints[name] = answer.text


def ask(compiler: Compiler, names: Names, *, imports: Iterable[str] = (), axioms: Iterable[str] = (),
        checks: Iterable[str] = (), bodies: Iterable[str] = (), depth: int, limit: int) -> Answers:
    """The axioms of `axioms`, the fingerprints of `checks` (with their own `#print` for `bodies`): one Lean
    process, and one more per round of names Lean printed that were not printed yet. With `imports` alone it
    still runs once: compiling the probe builds the imported modules (what a kernel replay reads)."""
    answers = Answers()
    axioms = [n for n in dict.fromkeys(axioms) if names.askable(n)]
    checks = [n for n in dict.fromkeys(checks) if names.askable(n)]
    bodies = [n for n in dict.fromkeys(bodies) if n in checks]
    imports = list(imports)
    if not axioms and not checks and not imports:
        return answers
    printing = list(dict.fromkeys([*bodies, *names.guess(checks, depth, limit)]))
    modules = {*imports, *(m for n in [*axioms, *checks, *printing] if (m := names.module(n)))}
    commands = ([Command("axioms", n) for n in axioms] + [Command("check", n) for n in checks]
                + [Command("print", n) for n in printing])
    run_round(compiler, modules, commands, answers, names)
    printed = len(printing)
    for _ in range(rounds(depth) - 1):
        if answers.failure is not None:
            break
        missing = sorted(set().union(*(_unprinted(answers, names, c, c in bodies, depth) for c in checks)))
        missing = missing[:max(0, limit - printed)]
        if not missing:
            break
        printed += len(missing)
        run_round(compiler, modules, [Command("print", n) for n in missing], answers, names)
    return answers


def rounds(depth: int) -> int:
    """Lean processes one probe may run: the first, and one per level of definitions Lean printed that were not."""
    return depth + 1


def _reached(answers: Answers, names: Names, name: str, own_body: bool, depth: int) -> tuple[list[str], set[str]]:
    """The project definitions Lean's answers show `name`'s statement reaching, breadth first up to `depth`; and
    those the last level names, one past it."""
    key = canonical(name)
    frontier = names.printed(answers.checks.get(key, "")) - {key}
    if own_body:
        frontier.add(key)
    seen: list[str] = []
    for _ in range(depth):
        nxt: set[str] = set()
        for d in sorted(frontier - set(seen)):
            seen.append(d)
            nxt |= names.printed(answers.prints.get(d, ""))
        frontier = nxt - {key} if not own_body else nxt
    return seen, frontier - set(seen)


def _unprinted(answers: Answers, names: Names, name: str, own_body: bool, depth: int) -> set[str]:
    return {d for d in _reached(answers, names, name, own_body, depth)[0]
            if d not in answers.prints and f"print {d}" not in answers.errors}


def fingerprint(answers: Answers, names: Names, name: str, *, own_body: bool, depth: int) -> str | None:
    """`#check @N` and the `#print` of each project definition it reaches, as one text; None when Lean was not
    asked. An error is part of the fingerprint (without positions, which differ between probes). Lean's answers
    are indented, so a line at the margin is always one this function wrote: a command, or a gap."""
    key = canonical(name)
    if key not in answers.checks:
        error = answers.errors.get(f"check {key}")
        return None if error is None else f"#check @{key}\n{_indent('error: ' + _unpositioned(error))}"
    blocks = [f"#check @{key}\n{_indent(answers.checks[key])}"]
    reached, beyond = _reached(answers, names, name, own_body, depth)
    for d in sorted(reached):
        if d in answers.prints:
            blocks.append(f"#print {d}\n{_indent(answers.prints[d])}")
        elif (error := answers.errors.get(f"print {d}")) is not None:
            blocks.append(f"#print {d}\n{_indent('error: ' + _unpositioned(error))}")
        else:
            blocks.append(f"#unprinted {d} beyond [gates] fingerprint_max_defs")
    blocks += [f"#unprinted {d} beyond [gates] fingerprint_depth" for d in sorted(beyond)]
    return "\n".join(blocks)


_GAP = re.compile(r"^#unprinted (.+) beyond \[gates\] (\w+)$", re.M)


def gaps(text: str) -> dict[str, str]:
    """The definitions a fingerprint reaches but does not print → the `[gates]` key whose bound left them out."""
    return {m.group(1): m.group(2) for m in _GAP.finditer(text)}


def without(text: str, drop: Callable[[str], bool]) -> str:
    """The fingerprint `text` without the blocks of the definitions `drop` names (their `#print` or their gap)."""
    out: list[str] = []
    keep = True
    for line in text.splitlines():
        if line.startswith("#print "):
            keep = not drop(line.removeprefix("#print "))
        elif (m := _GAP.match(line)) is not None:
            keep = not drop(m.group(1))
        elif not line.startswith(" "):
            keep = True
        if keep:
            out.append(line)
    return "\n".join(out)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines()) or "  "


def _unpositioned(error: str) -> str:
    return error.split("\n", 1)[0]


def difference(before: str, after: str) -> str:
    """Where the two fingerprints first differ: the command whose answer changed, and its lines before and after,
    shortened."""
    old, new = before.splitlines(), after.splitlines()
    for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        heads = [line for line in [*old[:a1 + 1], *new[:b1 + 1]] if line.startswith(("#check @", "#print ", "#unp"))]
        was = " / ".join(x.strip() for x in old[a1:a2])[:240] or "(nothing)"
        now = " / ".join(x.strip() for x in new[b1:b2])[:240] or "(nothing)"
        where = f"in `{heads[-1].split(chr(10))[0][:120]}`: " if heads else ""
        return f"{where}was `{was}`, now `{now}`"
    return "the same text"
