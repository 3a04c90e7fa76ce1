"""`exact?` asked of Lean about one proved theorem: the probe file, and Lean's answer read back.

The probe is the theorem's own file up to and including it, its proof replaced by `by exact?` and nothing after it
(the paper's Mathlib-usage test, §3.2.2). Before the theorem stands `#check "<nonce>"`: Lean prints its messages
in the order of the commands, so what follows the nonce is the theorem's own answer, never a `Try this` that an
earlier `simp?` or `#eval` of the file printed. The theorem is elaborated under `pp.fullNames` and without field
notation, so every constant of the suggestion is printed by its full name (`Nat.le_trans (Nat.le_succ n) h`, not
`(le_succ n).trans h` under an `open`), which is what the project's listing is matched against.

What Lean answers, as its source writes it (`Lean.Elab.Tactic.LibrarySearch`, `Lean.Meta.Tactic.TryThis`):

- found, an information message in one of three shapes: `Try this: exact t` (before lean4#9966),
  `Try this:` then `exact t` on the next line, indented (lean4#9966), or `Try this:` then `[apply] exact t`
  (lean4#10524, from v4.25); the tactic may read `refine t` or `(expose_names; exact t)`, and a long term breaks
  over further indented lines. `lean` prints an information message bare, or (newer releases, and Lake) after its
  position;
- found, but the tactic it printed did not elaborate again: the error `found a proof, but the corresponding tactic
  failed:` with the tactic indented below it (a proof exists all the same);
- not found: the error "`exact?` could not close the goal." with or without " Try `apply?` to see partial
  suggestions.";
- out of time: Lean's deterministic timeout (`maximum number of heartbeats`), or the process killed at the
  time limit. Neither says the theorem is original: it is recorded as a timeout.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from gates.diagnostics import CheckResult, Severity, parse_diagnostics
from gates.index import Decl
from gates.probe import IDENT, canonical

NONCE = "@NONCE@"  # what stands for the nonce in a probe's text when it is keyed
MESSAGE_CHARS = 2_000
FOUND = "Try this:"
INVALID = "found a proof, but the corresponding tactic failed:"
NOT_FOUND = "`exact?` could not close the goal"
_HEARTBEATS = re.compile(r"maximum number of heartbeats|\(deterministic\) timeout")
# Before a message's text: `lean`'s position (newer releases), or Lake's `info: FILE:L:C:`.
_POSITION = re.compile(r"^(?:[^\n]*?:\d+:\d+(?:-\d+:\d+)?: (?:info|information|error|warning)(?:\([^)\n]*\))?: ?"
                       r"|(?:info|information|error|warning): [^\n]*?:\d+:\d+: ?)")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
_WRAPPED = re.compile(r"^\(expose_names;\s*(?P<tactic>.*)\)$", re.S)
_TACTIC = re.compile(r"^(?:exact|refine)\s+", re.S)
_PRIVATE = re.compile(r"_private\.(?:(?:«[^»]*»|[^\s.«»()]+)\.)*?0\.")  # the prefix of a private name
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)\'')
# Words of the term language that are not constants.
KEYWORDS = frozenset({"fun", "λ", "let", "have", "show", "from", "by", "at", "with", "match", "if", "then", "else",
                      "do", "Type", "Sort", "Prop", "forall", "exists", "this", "mod", "in", "using", "exact",
                      "refine", "expose_names", "nomatch", "nofun", "calc", "sorry"})
BINDERS = frozenset({"fun", "λ", "∀", "∃", "∃!", "Π", "Σ", "∑", "∏", "⋃", "⋂", "⨆", "⨅"})
_OPEN, _CLOSE = "([{⦃⟨", ")]}⦄⟩"


class Kind(StrEnum):
    FOUND = "found"  # a term closes it: the suggestion
    NONE = "none"  # `exact?` found nothing
    TIMEOUT = "timeout"  # the time limit, or Lean's heartbeats, ran out first
    ERROR = "error"  # no answer about the theorem: its file does not compile up to it, or Lean did not run


class Answer(BaseModel):
    """What Lean said of one theorem, as kept in the cache."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind
    suggestion: str | None = None  # the term, without `exact`/`refine` and `expose_names`
    valid: bool = True  # False: Lean found the proof but the tactic it printed did not elaborate again
    message: str = ""  # why there is no suggestion: Lean's words, clipped
    seconds: float = 0.0


def probe(text: str, decl: Decl, nonce: str) -> str:
    """The file `text` up to `decl` (a theorem of it), the nonce printed, then `decl`'s signature proved by
    `exact?`, printing every name in full."""
    head = text[:decl.start].rstrip(" \t")
    if head and not head.endswith("\n"):
        head += "\n"
    signature = text[decl.start:decl.signature_end].rstrip()
    return (f'{head}#check "{nonce}"\n'
            "set_option pp.fullNames true in\n"
            "set_option pp.fieldNotation false in\n"
            f"{signature} := by\n  exact?\n")


def read(result: CheckResult, nonce: str) -> Answer:
    """Lean's answer about the theorem after the nonce in `result`'s output."""
    seconds = round(result.seconds, 3)
    if result.exit_code is None:
        return Answer(kind=Kind.TIMEOUT, message=f"killed after {result.seconds:.0f}s", seconds=seconds)
    output = _ANSI.sub("", result.output)
    at = output.find(nonce)
    if at < 0:
        return Answer(kind=Kind.ERROR, seconds=seconds,
                      message=clip("Lean did not reach the theorem: " + _tail(output)))
    before = output[:output.rfind("\n", 0, at) + 1]
    after = output[output.find("\n", at) + 1:] if "\n" in output[at:] else ""
    errors = [d for d in parse_diagnostics(before) if d.severity is Severity.ERROR]
    if errors:  # what precedes the theorem does not compile: its answer would be about another file
        return Answer(kind=Kind.ERROR, seconds=seconds,
                      message=clip(f"the file has errors before the theorem: {errors[0]}"))
    if _HEARTBEATS.search(after):
        return Answer(kind=Kind.TIMEOUT, seconds=seconds, message=clip(_first_line(after, _HEARTBEATS)))
    if (term := _suggestion(after, FOUND)) is not None:
        return Answer(kind=Kind.FOUND, suggestion=term, seconds=seconds)
    if (term := _suggestion(after, INVALID)) is not None:
        return Answer(kind=Kind.FOUND, suggestion=term, valid=False, seconds=seconds)
    if NOT_FOUND in after:
        return Answer(kind=Kind.NONE, seconds=seconds,
                      message=clip(_first_line(after, re.compile(re.escape(NOT_FOUND)))))
    return Answer(kind=Kind.ERROR, seconds=seconds,
                  message=clip("no answer from `exact?`: " + (_tail(after) or "Lean printed nothing after the "
                                                               "theorem")))


def _suggestion(text: str, header: str) -> str | None:
    """The term after `header` in `text`: on its line, or on the indented lines below it (`[apply] ` dropped)."""
    lines = text.split("\n")
    for i, raw in enumerate(lines):
        line = _POSITION.sub("", raw, count=1)
        if not line.startswith(header):
            continue
        rest = [line[len(header):].strip()] if line[len(header):].strip() else []
        for more in lines[i + 1:]:
            if not more[:1].isspace() or not more.strip():
                break
            rest.append(more)
        if not rest:
            return None
        body = _dedent(rest)
        body = re.sub(r"^\[apply\]\s*", "", body)
        return _term(body)
    return None


def _dedent(lines: list[str]) -> str:
    first, *others = lines
    indent = min((len(x) - len(x.lstrip()) for x in others if x.strip()), default=0)
    return "\n".join([first.strip(), *(x[indent:].rstrip() for x in others)]).strip()


def _term(tactic: str) -> str:
    """The term of `exact t`, `refine t` or `(expose_names; exact t)`."""
    if m := _WRAPPED.match(tactic):
        tactic = m.group("tactic").strip()
    return _TACTIC.sub("", tactic, count=1).strip()


def _first_line(text: str, pattern: re.Pattern[str]) -> str:
    for raw in text.split("\n"):
        if pattern.search(raw):
            return _POSITION.sub("", raw, count=1).strip()
    return ""


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-12:])


def clip(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + " …"


# -- the names a suggestion writes ------------------------------------------------------------------------------


def names(term: str) -> list[str]:
    """The names `term` writes that are not bound inside it, in order, once each: constants, and the theorem's own
    locals (which only its statement can tell apart). `_root_.` is dropped; a private name is written as its user
    name; a name after `.` (field notation) or marked inaccessible (`a✝`) is left out."""
    code = _PRIVATE.sub("", _STRING.sub(lambda m: " " * len(m.group()), term))
    inside = bound(code)
    out: dict[str, None] = {}
    for m in IDENT.finditer(code):
        start, end = m.span()
        if start and code[start - 1] == ".":
            continue
        if end < len(code) and code[end] == "✝":
            continue
        name = canonical(m.group())
        if name.startswith("_root_."):
            name = name[len("_root_."):]
        if name in KEYWORDS or name in inside or name.isdigit() or name == "_":
            continue
        out.setdefault(name)
    return list(out)


def bound(code: str) -> set[str]:
    """Names a binder inside the term introduces: `fun x y =>`, `fun (x : T) ↦`, `fun ⟨a, b⟩ =>`, `∀ x,`,
    `∃ x ∈ s,`, `let x :=`, `have h :`; the type after a binder's `:` names constants, not locals."""
    out: set[str] = set()
    for m in re.finditer(r"(?<![\w.])(fun|λ|∀|∃!|∃|Π|Σ|∑|∏|⋃|⋂|⨆|⨅)(?![\w'])", code):
        end = _binder_end(code, m.end())
        out |= binder_names(code[m.end():end])
    for m in re.finditer(r"(?<![\w.])(?:let|have)\s+(" + IDENT.pattern + r")", code):
        out.add(canonical(m.group(1)))
    return out


def _binder_end(code: str, start: int) -> int:
    """Where the binders after a `fun`/`∀` end: at `=>`, `↦` or `,` outside brackets."""
    depth = 0
    i = start
    while i < len(code):
        c = code[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth < 0:
                return i
        elif not depth and (code.startswith("=>", i) or c in "↦,"):
            return i
        i += 1
    return i


def binder_names(segment: str) -> set[str]:
    """The names a binder segment binds: before each group's `:` (and bare ones), never the types after it."""
    out: set[str] = set()
    depth = 0
    typed = False  # past a `:` at this depth: a type, until the group closes
    stack: list[bool] = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c in _OPEN:
            stack.append(typed)
            typed = False
            depth += 1
            i += 1
            continue
        if c in _CLOSE:
            typed = stack.pop() if stack else False
            depth -= 1
            i += 1
            continue
        if c == ":" and not segment.startswith(":=", i):
            typed = True
            i += 1
            continue
        if c in "∈⊆<≤>≥≠" and not depth:  # `∃ x ∈ s,`: what follows is a term
            typed = True
        if m := IDENT.match(segment, i):
            if not typed and (not i or segment[i - 1] != "."):
                out.add(canonical(m.group()))
            i = m.end()
            continue
        i += 1
    return out
