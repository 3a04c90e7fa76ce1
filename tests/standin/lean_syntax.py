"""Lean text as the stand-in reads it: comments masked, tokens, binders, macro rules, the axioms a proof names.

Part of the stand-in Lean (`lean_checker.py`, `lean_elab.py`); independent of autoformalize.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

KINDS = frozenset({"theorem", "lemma", "def", "abbrev", "instance", "structure", "class", "inductive", "axiom",
                   "opaque", "example"})
SORRY = frozenset({"sorry", "admit", "stop", "apply?", "exact?", "sorryAx"})
CLASSICAL = frozenset({"by_contra", "by_cases", "classical", "choose", "tauto", "push_neg", "Classical"})
PROPEXT = frozenset({"simp", "simp_all", "norm_num", "linarith", "omega", "aesop", "ring", "propext", "simpa"})
CLASSICAL_AXIOMS = ("Classical.choice", "propext", "Quot.sound")
TYPES = {"ℕ": "Nat", "ℤ": "Int", "ℚ": "Rat", "ℝ": "Real", "ℂ": "Complex"}
BINDING = frozenset({"∀", "∃", "∃!", "fun", "λ", "intro", "intros", "rintro", "have", "let", "set", "case", "next",
                     "∑", "∏"})
OPENING, CLOSING = "([{⦃⟨", ")]}⦄⟩"
WIDTH = 120  # Lean's default `format.width`


_TOKEN = re.compile(r"""
  (?P<raw>(?<![\w])r(?P<hashes>\#*)"(?:.|\n)*?"(?P=hashes))
 |(?P<str>"(?:[^"\\]|\\.)*")
 |(?P<cmd>\#[A-Za-z_]+)
 |(?P<quoted>``?(?:«[^»]*»|[^\W\d][\w'!?]*)(?:\.(?:«[^»]*»|[^\W\d][\w'!?]*))*)
 |(?P<id>(?:«[^»]*»|[^\W\d][\w'!?]*)(?:\.(?:«[^»]*»|[^\W\d][\w'!?]*))*)
 |(?P<num>\d+)
 |(?P<sym>:=|=>|<;>|->|∃!|[^\s\w])
""", re.VERBOSE)


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str
    pos: int


@dataclass
class Rule:
    pattern: list[str]
    replacement: list[str]


def mask(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """The text with comments blanked (newlines kept), and the doc comments as (start, end, content)."""
    out = list(text)
    docs: list[tuple[int, int, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "r" and (raw := re.match(r'r(#*)"', text[i:])) and not (i and (text[i - 1].isalnum() or
                                                                               text[i - 1] == "_")):
            close = text.find('"' + raw.group(1), i + raw.end())
            i = n if close < 0 else close + 1 + len(raw.group(1))
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "'" and (m := re.match(r"'(?:\\.|[^\\'\n])'", text[i:])) and not (i and text[i - 1].isalnum()):
            i += m.end()
        elif text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif text.startswith("/-", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/-", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("-/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if text.startswith("/--", i):
                docs.append((i, j, text[i + 3:j - 2]))
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        else:
            i += 1
    return "".join(out), docs


def tokens(code: str, start: int = 0, end: int | None = None) -> list[Tok]:
    out = []
    for m in _TOKEN.finditer(code, start, len(code) if end is None else end):
        kind = next(k for k in ("raw", "str", "cmd", "quoted", "id", "num", "sym") if m.group(k) is not None)
        out.append(Tok("str" if kind == "raw" else kind, m.group(), m.start()))
    return out


def name_key(name: str) -> tuple[int, tuple[str, ...]]:
    """Lean's `Name.lt`: prefixes compare first, so names with fewer components come first."""
    parts = tuple(p.strip("«»") for p in re.findall(r"«[^»]*»|[^.]+", name))
    return len(parts), parts


# Lean's `isIdFirst`/`isIdRest`: ASCII letters, `_`, and the letter-like ranges (Greek but λ Π Σ, Coptic, letter-like
# symbols, mathematical alphanumerics); then digits, `'`, `!`, `?` and subscripts.
_LETTER = ("A-Za-z_\u03b1-\u03ba\u03bc-\u03c9\u0391-\u039f\u03a1\u03a2\u03a4-\u03a9\u03ca-\u03fb\u1f00-\u1ffe"
           "\u2100-\u214f\U0001d49c-\U0001d59f")
_PLAIN = re.compile(f"[{_LETTER}][{_LETTER}0-9'!?\u2080-\u2089\u2090-\u209c\u1d62-\u1d6a]*")


def printed(name: str) -> str:
    """A name as `Name.toString` prints it: a component escaped with `«»` unless it is a plain identifier."""
    parts = [p.strip("«»") for p in name_parts(name)]
    return ".".join(p if _PLAIN.fullmatch(p) else f"«{p}»" for p in parts)


def axioms_message(name: str, axioms: set[str]) -> str:
    name = printed(name)
    if not axioms:
        return f"'{name}' does not depend on any axioms"
    listed = sorted((printed(a) for a in axioms), key=name_key)
    head = f"'{name}' depends on axioms: "
    flat = head + "[" + ", ".join(listed) + "]"
    if len(flat) <= WIDTH:
        return flat
    return head + "[" + ",\n ".join(listed) + "]"  # the group breaks at every `line`, nested by one


# -- token helpers -----------------------------------------------------------------------------------


def name_parts(name: str) -> list[str]:
    return re.findall(r"«[^»]*»|[^.]+", name)


def is_name(word: str) -> bool:
    return bool(word) and (word[0].isalpha() or word[0] in "_«") and word not in KINDS


def top_level(toks: list[Tok], word: str) -> int | None:
    depth = 0
    for i, t in enumerate(toks):
        if t.text in OPENING:
            depth += 1
        elif t.text in CLOSING:
            depth -= 1
        elif not depth and t.text == word:
            return i
    return None


def matching(toks: list[Tok], i: int) -> int:
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text in OPENING:
            depth += 1
        elif toks[j].text in CLOSING:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def signature(toks: list[Tok], kind: str) -> tuple[list[Tok], list[Tok]]:
    depth = 0
    for i, t in enumerate(toks):
        if t.text in OPENING:
            depth += 1
        elif t.text in CLOSING:
            depth -= 1
        elif not depth and (t.text == ":=" or t.text == "where" or (t.text == "|" and kind != "axiom")):
            return toks[:i], toks[i + (t.text == ":="):]
    return toks, []


def split_type(words: list[str]) -> tuple[int, list[str]]:
    """Where the binders end, and the type after the last top-level `:`."""
    depth, at = 0, None
    for i, w in enumerate(words):
        if w in OPENING:
            depth += 1
        elif w in CLOSING:
            depth -= 1
        elif not depth and w == ":":
            at = i
    return (len(words), []) if at is None else (at, words[at + 1:])


def groups(toks: list[Tok]) -> list[list[Tok]]:
    out, i = [], 0
    while i < len(toks):
        if toks[i].text in OPENING:
            j = matching(toks, i)
            out.append(toks[i:j + 1])
            i = j + 1
        else:
            i += 1
    return out


def bound_names(words: list[str]) -> set[str]:
    """Names bound by a binder `(x y : T)` or after `∀`, `fun`, `intro`, …: locals, never declarations."""
    out: set[str] = set()
    for i, w in enumerate(words):
        if w in OPENING[:4] or w in BINDING:
            j = i + 1
            while j < len(words) and is_name(words[j]):
                j += 1
            if w in BINDING or (j < len(words) and words[j] == ":"):
                out.update(words[i + 1:j])
    return out


def type_names(sig: list[str], variables: list[list[Tok]]) -> set[str]:
    words = [t.text for g in variables for t in g] + sig
    out = {TYPES.get(w, w) for i, w in enumerate(words) if i and words[i - 1] == ":" and is_name(w)}
    if any(w.isdigit() for w in sig):
        out.add("Nat")
    return out


def class_of(type_words: list[str]) -> tuple[str, str] | None:
    names = [w for w in type_words if is_name(w) or w in TYPES]
    if not names:
        return None
    return names[0], TYPES.get(names[1], names[1]) if len(names) > 1 else ""


def attribute(toks: list[Tok]) -> tuple[str, list[str]]:
    words = [t.text for t in toks]
    if "[" not in words or "]" not in words:
        return "", []
    inside = words[words.index("[") + 1:words.index("]")]
    names = [w for w in words[words.index("]") + 1:] if is_name(w) and w != "in"]
    return " ".join(inside), names


def direct_axioms(body: list[str], kind: str) -> set[str]:
    out: set[str] = set()
    words = set(body)
    if words & SORRY or "absurd_marker" in words:
        out.add("sorryAx")
    if "native_decide" in words or "Lean.ofReduceBool" in words or "ofReduceBool" in words or any(
            a == "+" and b == "native" for a, b in itertools.pairwise(body)):
        out.add("Lean.ofReduceBool")
    if "Lean.trustCompiler" in words:
        out.add("Lean.trustCompiler")
    if words & CLASSICAL or any(w.startswith("Classical.") for w in words):
        out.update(CLASSICAL_AXIOMS)
    if words & PROPEXT:
        out.add("propext")
    if "funext" in words or "Quot.sound" in words:
        out.add("Quot.sound")
    return out


def quotation(words: list[str]) -> tuple[list[str], int]:
    """The tokens inside `` `( … ) `` (after `cat|`), and the index after it."""
    if len(words) < 2 or words[0] != "`" or words[1] != "(":
        return [], 0
    depth, j = 0, 1
    for j in range(1, len(words)):
        if words[j] in OPENING:
            depth += 1
        elif words[j] in CLOSING:
            depth -= 1
            if depth == 0:
                break
    inner = words[2:j]
    if len(inner) >= 2 and inner[1] == "|" and is_name(inner[0]):
        inner = inner[2:]
    return pattern_variables(inner), j + 1


def pattern_variables(words: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] == "$" and i + 1 < len(words):
            out.append("$" + words[i + 1])
            i += 2
            if i + 1 < len(words) and words[i] == ":" and is_name(words[i + 1]):
                i += 2  # `$x:term`
        else:
            out.append(words[i])
            i += 1
    return out


def parse_rules(words: list[str]) -> list[Rule]:
    out = []
    i = 0
    while i < len(words):
        if words[i] == "|":
            pattern, used = quotation(words[i + 1:])
            j = i + 1 + used
            if pattern and j < len(words) and words[j] == "=>":
                replacement, used2 = quotation(words[j + 1:])
                out.append(Rule(pattern, replacement))
                i = j + 1 + used2
                continue
        i += 1
    return out


def atom(words: list[str], i: int) -> int:
    """The end of the atom starting at `i`: one token, or a bracketed group."""
    if words[i] in OPENING:
        depth = 0
        for j in range(i, len(words)):
            depth += words[j] in OPENING
            depth -= words[j] in CLOSING
            if depth == 0:
                return j + 1
    return i + 1


def match_at(pattern: list[str], words: list[str], i: int) -> tuple[int, dict[str, list[str]]] | None:
    bound: dict[str, list[str]] = {}
    for p in pattern:
        if i >= len(words):
            return None
        if p.startswith("$"):
            end = atom(words, i)
            bound[p] = words[i:end]
            i = end
        elif words[i] == p:
            i += 1
        else:
            return None
    return i, bound


def rewrite(words: list[str], rules: list[Rule]) -> list[str]:
    for _ in range(8):
        changed = False
        for rule in rules:
            out, i = [], 0
            while i < len(words):
                hit = match_at(rule.pattern, words, i)
                if hit is None:
                    out.append(words[i])
                    i += 1
                    continue
                end, bound = hit
                out += [x for r in rule.replacement for x in bound.get(r, [r])]
                i, changed = end, True
            words = out
        if not changed:
            break
    return words


MODULE = r"(?:«[^»]*»|[\w']+)(?:\.(?:«[^»]*»|[\w']+))*"  # a module name in an `import`, escapes kept


def module_parts(module: str) -> list[str]:
    """A module name's components, escapes removed (`Book.«a.b»` → `Book`, `a.b`)."""
    return [p[1:-1] if p.startswith("«") else p for p in re.findall(r"«[^»]*»|[^.«»]+", module)]


def module_name(parts: list[str]) -> str:
    """Components as Lean prints a module's name: a component that is not an identifier in `«»`."""
    return ".".join(p if re.fullmatch(r"[^\W\d][\w']*", p) else f"«{p}»" for p in parts)
