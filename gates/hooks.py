"""What in a probe's imports could answer in Lean's place.

The probe (`gates.probe`) asks Lean by compiling a file that imports project modules, and reads what Lean prints.
Project code that runs in that process can print anything, the nonce of the probe's markers included (it can read
the probe file, or the marker it is asked to elaborate), so no reading of the output tells its answers from Lean's.
The probe therefore refuses to run when a project module it imports, directly or not, declares code that runs there:

- syntax of the command category (`syntax`, `macro`, `elab`, `elab_rules` … `: command`): it can take over
  `#print axioms`, `#check` or `#print`;
- a `macro_rules` or `elab_rules` (neither `local` nor `scoped`) whose patterns could match what the probe writes:
  one led by an antiquotation, a literal, `@`, a `#` command, a dotted name or a bracket, in the `term` or `command`
  category or none named, or one naming its syntax kind (`(kind := …)`). Rules whose every pattern is another
  category's (`tactic|`, `conv|`) or is led by a word of the project's own notation cannot;
- a global `syntax`, `macro`, `elab`, `notation` or operator of the term or command category that starts where the
  probe's own text could: with `@`, a `#` command, or a token category (`str`, `ident`, `x:num` …), which with a
  priority takes over string literals (the markers) or `@N`; one that starts with a word of its own, or with a term
  (an infix notation), cannot;
- `initialize` and `builtin_initialize`, run as the module is imported;
- an attribute registering an elaborator, macro, parser, initializer or delaborator (`HOOKS`), on a declaration or
  by `attribute […]`.

Code in the dependencies (Mathlib), which the project trusts, is not looked at.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from gates.census import Census
from gates.imports import ImportGraph
from gates.index import FileIndex, Marker, attribute_names

HOOKS = frozenset({
    "command_elab", "term_elab", "macro", "command_parser", "term_parser", "init", "delab", "app_delab",
    "builtin_command_elab", "builtin_term_elab", "builtin_macro", "builtin_command_parser", "builtin_term_parser",
    "builtin_init", "builtin_delab",
})
_RULES = re.compile(r"(?:@\[[^\]]*\]\s*)?(?:(?:local|scoped)\s+)?(?P<kind>macro_rules|elab_rules)\b")
_CATEGORY = re.compile(r"elab_rules\s*:\s*(?P<cat>[^\W\d][\w.]*)")
# An alternative's pattern: `| `(cat| lead …` with `cat|` optional.
_PATTERN = re.compile(r"\|\s*`\(\s*(?:(?P<cat>[^\W\d][\w.]*)\s*\|)?\s*(?P<lead>[^\s()]*)")
_WORD = re.compile(r"[^\W\d][\w'!?]*")
_PROBE_WORDS = frozenset({"set_option", "import"})  # the commands the probe writes that start with a word
_PROBE_CATEGORIES = frozenset({"term", "command"})


def refused(census: Census, modules: Iterable[str]) -> list[str]:
    """Where the project files the `modules` import (themselves included) declare code that could answer in Lean's
    place: `path:line: what`."""
    out: list[str] = []
    for path in sorted(ImportGraph(census).closure(modules)):
        f = census.files[path]
        out += [f"{path}:{m.line}: {what}" for m in f.markers if (what := _hook(m) or _leading(f, m))]
        for d in f.decls:
            if named := sorted(set(attribute_names(",".join(d.attributes))) & HOOKS):
                out.append(f"{path}:{d.line}: @[{', '.join(named)}] on {d.name or d.kind}")
    return out


def _hook(m: Marker) -> str | None:
    if m.kind == "command syntax":
        return f"{m.detail} declaring a command"
    if m.kind in ("initialize", "builtin_initialize"):
        return f"{m.kind} (run as the module is imported)"
    if m.kind == "attribute" and set(attribute_names(m.args)) & HOOKS:
        return f"`{m.detail}`"
    if m.kind == "syntax" and m.args not in ("local", "scoped") and (rules := _RULES.match(m.detail)):
        return f"{rules.group('kind')} whose patterns could match what the probe writes" if _may_match(
            m.detail) else None
    return None


def _may_match(rules: str) -> bool:
    """Whether a `macro_rules`/`elab_rules` (its text, strings blanked) could rewrite what the probe writes."""
    if re.search(r"\(\s*kind\s*:=", rules):
        return True
    declared = _CATEGORY.search(rules)
    if declared and declared.group("cat") not in _PROBE_CATEGORIES:
        return False
    patterns = list(_PATTERN.finditer(rules))
    if not patterns:
        return True  # no pattern it can read
    for p in patterns:
        if p.group("cat") and p.group("cat") not in _PROBE_CATEGORIES:
            continue
        lead = p.group("lead")
        if not _WORD.fullmatch(lead) or lead in _PROBE_WORDS:
            return True
    return False


_DECLARING = re.compile(r"(?:@\[[^\]]*\]\s*)?(?:(?:local|scoped)\s+)?"
                        r"(?P<kind>syntax|macro|elab|notation|infixl|infixr|infix|prefix|postfix)\b"
                        r"(?::\w+)?(?:\s*\(\s*(?:name|priority)\s*:=[^)]*\))*\s*")
_ATOM = re.compile(r'&?"(?P<atom>(?:[^"\\]|\\.)*)"')
_TERM = re.compile(r"(?:[^\W\d][\w']*:)?term(?::\w+)?")  # `term`, `x:term`, `term:max`
_VARIABLE = re.compile(r"[^\W\d][\w']*(?::\w+)?")  # a notation's term variable, `a` or `a:50`
_OTHER = frozenset({"tactic", "conv", "doElem", "attr", "prio", "prec", "level", "stx", "binderPred"})


def _leading(f: FileIndex, m: Marker) -> str | None:
    """A global syntax declaration whose first element could match what the probe writes, or None."""
    if m.kind != "syntax" or m.args in ("local", "scoped") or f.source is None:
        return None
    end = f.commands[i] if (i := bisect.bisect_right(f.commands, m.offset)) < len(f.commands) else len(f.text)
    code, text = f.source.code[m.offset:end], f.text[m.offset:end]
    head = _DECLARING.match(text)
    if head is None:
        return None
    kind = head.group("kind")
    arrow = code.find("=>")
    category = re.search(r":\s*([^\W\d][\w.]*)\s*$", code[:arrow] if arrow >= 0 and kind != "syntax" else code)
    if kind in ("syntax", "macro", "elab") and category is not None and category.group(1) in _OTHER:
        return None
    rest = text[head.end():]
    if atom := _ATOM.match(rest):
        word = atom.group("atom").strip()
        risky = not word or word == "@" or word.startswith("#") or word in _PROBE_WORDS
    else:
        first = rest.split(None, 1)[0] if rest.strip() else ""
        allowed = _VARIABLE if kind == "notation" else _TERM if kind in ("syntax", "macro", "elab") else None
        risky = allowed is None or not allowed.fullmatch(first)
    return f"{kind} whose first element could match what the probe writes" if risky else None
