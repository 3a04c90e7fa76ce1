"""A Lean file's header (`module`, `prelude`, its imports) and the keywords its imports put in Lean's token table.

A string after `throwError` holds code in its braces only where `throwError` is a keyword, which is where the
module declaring its syntax is imported: a file that imports nothing from `Lean` may define `throwError` as an
ordinary function, and Lean then reads a plain string there. So the lexer is told, per file, which interpolating
keywords exist (`Keywords.present`), which may or may not (`unknown`: both readings are compared) and, by
omission, which do not. `keywords` decides from the modules a file imports, transitively through the project's
own files.

The header is read as Lean reads it (`header` in `src/Lean/Parser/Module.lean`, newer
`src/Lean/Parser/Module/Syntax.lean`): blanks and comments, an optional `module`, an optional `prelude`, then
`[public] [meta] import [all] Name` (older Lean: `import [runtime] Name`), each name with its `«…»` escapes
removed per component, as Lean resolves it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

# The interpolating keywords, grouped by where their syntax is declared.
# Init: `s!` src/Init/Data/ToString/Macro.lean, `f!` src/Init/Data/Format/Macro.lean, `println!`
# src/Init/System/IO.lean, `Macro.trace[` src/Init/NotationExtra.lean. Every file but a `prelude` imports Init.
INIT = frozenset({"s!", "f!", "println!", "Macro.trace["})
# Lean: `throwError` and `throwErrorAt` src/Lean/Exception.lean, `m!` src/Lean/Message.lean, `trace[`
# src/Lean/Util/Trace.lean: keywords only where those modules are imported.
LEAN = frozenset({"throwError", "throwErrorAt", "m!", "trace["})
# Keywords whose existence depends on the toolchain or a package: the named-error macros
# (src/Lean/ErrorExplanation.lean, later builtin parsers of src/Lean/Parser/Term.lean, keywords in every file),
# grind's `reportIssue!`, `reportDbgIssue!`, `reportEMatchIssue!` and `trace_goal[` (src/Lean/Meta/Tactic/Grind/),
# Aesop's `aesop_trace[`.
# Never known: both readings of their strings are always compared.
VARIABLE = frozenset({"throwNamedError", "throwNamedErrorAt", "logNamedError", "logNamedErrorAt", "logNamedWarning",
                      "logNamedWarningAt", "reportIssue!", "reportDbgIssue!", "reportEMatchIssue!", "trace_goal[",
                      "aesop_trace["})
# Modules whose import certainly brings Lean's keywords: `Lean` itself, its elaborator and meta framework, and
# Mathlib, every module of which imports `Mathlib.Init` or is imported by it (its own linters, written with them).
_BRINGS_LEAN = re.compile(r"(?:Lean|Lean\.(?:Elab|Meta)(?:\..*)?|Mathlib(?:\..*)?)\Z")


@dataclass(frozen=True, slots=True)
class Keywords:
    """What the lexer may take for a keyword in one file. `present`: interpolating keywords Lean's token table
    holds there; `unknown`: ones it may hold (a string after them is read both ways, and a difference is noted as
    ambiguous); any other is an ordinary name. `tokens`: tokens the project declared that hold the start of a
    comment, string, character literal or escaped name after their first character (`" +-- "`): where one may be
    read, the spot is noted as ambiguous."""

    present: frozenset[str]
    unknown: frozenset[str] = VARIABLE
    tokens: tuple[str, ...] = ()


# A file importing Init only (no project knowledge): what `lex` assumes for text with no header.
PLAIN = Keywords(INIT)


@dataclass(frozen=True, slots=True)
class Header:
    prelude: bool
    imports: tuple[str, ...]  # module names as Lean resolves them: `«Book».A` is `Book.A`
    end: int  # offset after the last import (where the first command may start)


_BLANK = re.compile(r"(?:[ \t\r\n]+|--[^\n]*)*")
_BLOCK_EDGE = re.compile(r"/-|-/")
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_PART = r"(?:«[^»]*»|[^\s.«»/\-\"'`(){}\[\],:;]+)"
_MODULE = re.compile(rf"{_PART}(?:\.{_PART})*")
_IMPORT_FLAGS = frozenset({"public", "meta"})


def read_header(text: str) -> Header:
    """The header of one file; where it is malformed, what was read up to there."""
    pos, prelude, imports = _blank(text, 0), False, list[str]()
    word = _word(text, pos)
    if word == "module":
        pos = _blank(text, pos + len(word))
        word = _word(text, pos)
    if word == "prelude":
        prelude = True
        pos = _blank(text, pos + len(word))
    end = pos
    while True:
        at = pos
        word = _word(text, at)
        while word in _IMPORT_FLAGS:
            at = _blank(text, at + len(word))
            word = _word(text, at)
        if word != "import":
            return Header(prelude, tuple(imports), end)
        at = _blank(text, at + len(word))
        flag = _word(text, at)
        if flag in ("all", "runtime") and _MODULE.match(text, after := _blank(text, at + len(flag))):
            at = after
        m = _MODULE.match(text, at)
        if m is None:
            return Header(prelude, tuple(imports), end)
        imports.append(module_name(m.group()))
        pos = end = _blank(text, m.end())


def module_name(written: str) -> str:
    """A module or declaration name as Lean reads it: `«Book».«A»` is `Book.A` (escapes removed per component)."""
    if "«" not in written:
        return written
    return ".".join(part[1:-1] if part.startswith("«") and part.endswith("»") else part
                    for part in re.findall(r"«[^»]*»|[^.]+", written))


def _blank(text: str, pos: int) -> int:
    """After Lean's whitespace: blanks, line comments and (nested) block comments that are not doc comments."""
    while True:
        pos = _BLANK.match(text, pos).end()  # type: ignore[union-attr]  # matches empty
        if not text.startswith("/-", pos) or text.startswith(("/--", "/-!"), pos):
            return pos
        depth, i = 1, pos + 3
        while depth:
            m = _BLOCK_EDGE.search(text, i)
            if m is None:
                return len(text)
            depth += 1 if m.group() == "/-" else -1
            i = m.end()
        pos = i


def _word(text: str, pos: int) -> str | None:
    m = _WORD.match(text, pos)
    return m.group() if m else None


def module_paths(paths: Iterable[str]) -> dict[str, str]:
    """Module name → the project file providing it: `Book/A.lean` is `Book.A`. A lakefile may set `srcDir`, so
    `src/Book/A.lean` is `Book.A` too: every suffix is indexed, never overriding a longer match."""
    out: dict[str, str] = {}
    for path in sorted(paths, key=lambda p: p.count("/")):
        parts = path.removesuffix(".lean").split("/")
        for i in range(len(parts)):
            out.setdefault(".".join(parts[i:]), path)
    return out


def keywords(headers: Mapping[str, Header], tokens: Iterable[str] = ()) -> dict[str, Keywords]:
    """Per project file, the keywords its imports bring, transitively through the project's files; any import no
    project file provides is an outside module (Lean's, Mathlib's, a package's). `tokens`: the project's own
    tokens that hold a literal start (`Keywords.tokens`)."""
    paths = module_paths(headers)
    deps = {path: [paths[m] for m in h.imports if m in paths] for path, h in headers.items()}
    reach: dict[str, _Reach] = {}
    for root in headers:
        frames, active = [(root, iter(deps[root]))], {root}
        while frames:  # depth first without recursion, as an import chain may be long
            path, todo = frames[-1]
            dep = next((d for d in todo if d not in reach and d not in active), None)  # in `active`: a cycle,
            if dep is not None:  # which Lean refuses and the build reports
                frames.append((dep, iter(deps[dep])))
                active.add(dep)
                continue
            frames.pop()
            active.discard(path)
            own = _reach(headers[path].prelude, [m for m in headers[path].imports if m not in paths])
            reach[path] = _Reach(*(any(flags) for flags in zip(own, *(reach[d] for d in deps[path] if d in reach),
                                                                  strict=True)))
    kept = tuple(sorted(set(tokens)))
    return {path: _keywords(reach[path], kept) for path in headers}


def own_keywords(header: Header) -> Keywords:
    """The keywords of a file read alone: every import is an outside module, so a project module it imports counts
    as one that may bring any keyword."""
    return _keywords(_reach(header.prelude, header.imports), ())


class _Reach(NamedTuple):
    """What a file's imports reach, transitively."""

    init: bool  # Init: a file that is no `prelude` imports it whole
    outside: bool  # some module outside the project
    beyond_init: bool  # some outside module that is not part of Init (it imports Init itself)
    lean: bool  # a module certain to bring Lean's keywords


def _reach(prelude: bool, outside: Iterable[str]) -> _Reach:
    outside = list(outside)
    return _Reach(not prelude or "Init" in outside, bool(outside),
                  any(m != "Init" and not m.startswith("Init.") for m in outside),
                  any(_BRINGS_LEAN.match(m) for m in outside))


def _keywords(reach: _Reach, tokens: tuple[str, ...]) -> Keywords:
    present, unknown = set[str](), set(VARIABLE)
    if reach.init or reach.beyond_init:
        present |= INIT
    elif reach.outside:  # a `prelude` file importing parts of Init
        unknown |= INIT
    if reach.lean:
        present |= LEAN
    elif reach.beyond_init:
        unknown |= LEAN
    return Keywords(frozenset(present), frozenset(unknown), tokens)
