"""The integrity gate's source rules: constructs a change adds that a kernel check cannot see, or sees too late.

Each rule names the construct and, where a project may need it, the `[gates]` switch that allows it. Only
additions count, and one construct is told from another by what it is, not by its kind: a construct inside a
declaration by that declaration (`native_decide` moved from one proof to another is new), a command by its own
text (`#guard_msgs` by the command it wraps, an `elab` by what it runs), an attribute on a declaration by the
declaration's text, a spot the lexer cannot read by the text around it. So a construct the project already had
may stay where it is; moved, rewritten or repeated, it is new.

Attributes are allowed from a list of those that only tag or transform declarations the kernel checks
(`HARMLESS_ATTRIBUTES`, and any the project registers with `register_simp_attr` or `register_label_attr`); any
other attribute may register code the elaborator runs (`@[command_elab]`, `@[simproc]`, `@[norm_num]`,
`@[positivity]`, `@[delab]`…) and is meta code.
"""

from __future__ import annotations

import bisect
import hashlib
from collections import Counter
from dataclasses import dataclass

from gates.base import GateInput
from gates.config import GatesConfig
from gates.index import SUSPECT_NAMES, THEOREM_KINDS, Decl, FileIndex, Marker, attribute_items, attribute_names

WEAKENING_OPTIONS = frozenset({"debug.skipKernelTC", "debug.byAsSorry", "warn.sorry", "suppressSorry"})
TRUSTING_ATTRIBUTES = frozenset({"implemented_by", "extern"})
# Attributes an honest formalization adds, as in Mathlib practice: simp sets and normal forms, extensionality,
# instances, reducibility and compilation hints, the eliminators and relation tags tactics use, lemma generators
# whose output the kernel checks (`simps`, `to_additive`, `reassoc`, `mk_iff`…), and tags for Mathlib's tactics'
# lemma sets (`gcongr`, `bound`, `fun_prop`, `continuity`…). `aesop` too, unless it registers a tactic.
HARMLESS_ATTRIBUTES = frozenset({
    "simp", "simps", "norm_cast", "push_cast", "field_simps", "zify_simps", "qify_simps", "rify_simps",
    "mfld_simps", "seval", "grind", "ext", "instance", "default_instance", "class", "reducible", "irreducible",
    "semireducible", "inline", "noinline", "always_inline", "macro_inline", "specialize", "nospecialize", "csimp",
    "implemented_by", "extern", "export", "expose", "no_expose", "match_pattern", "elab_as_elim",
    "induction_eliminator", "cases_eliminator", "refl", "symm", "trans", "congr", "coe", "deprecated",
    "inherit_doc", "nolint", "pp_nodot", "pp_with_univ", "pp_using_anonymous_constructor", "to_additive",
    "reassoc", "elementwise", "mk_iff", "gcongr", "mono", "bound", "fun_prop", "continuity", "measurability",
    "nontriviality", "aesop", "wf_preprocess",
})


@dataclass(frozen=True, slots=True)
class _Rule:
    what: str  # the construct, `{detail}` and `{kind}` filled in
    switches: tuple[str, ...] = ()  # all of them on allows it
    told_by: str = "declaration"  # "declaration" (its name), "command" (the command's text), "text" (either's text)


_BUILD = ("allow_build_time_code", "allow_meta_code")
_RULES = {
    "#exit": _Rule("#exit (nothing after it is checked)", told_by="command"),
    "#guard_msgs": _Rule("#guard_msgs (it drops Lean's messages, the sorry warning and errors included)",
                         ("allow_guard_msgs",), "command"),
    "#eval": _Rule("#eval (code run at build time, meta code included: an action of `CommandElabM` can add "
                   "declarations)", _BUILD, "command"),
    "#guard": _Rule("#guard (code run at build time: it evaluates its condition)", _BUILD, "command"),
    "include_str": _Rule("include_str (code run at build time)", ("allow_build_time_code",)),
    "run_cmd": _Rule("run_cmd (meta code run at build time)", _BUILD, "command"),
    "run_elab": _Rule("run_elab (meta code run at build time)", _BUILD, "command"),
    "run_meta": _Rule("run_meta (meta code run at build time)", _BUILD, "command"),
    "initialize": _Rule("initialize (meta code run at build time)", _BUILD, "command"),
    "builtin_initialize": _Rule("builtin_initialize (meta code run at build time)", _BUILD, "command"),
    "meta command": _Rule("{detail} (meta code)", ("allow_meta_code",), "command"),
    "command syntax": _Rule("{detail} declaring a command (one can add declarations and axioms no reading of the "
                            "text sees)",
                            ("allow_command_syntax",), "command"),
    "interpolatedStr syntax": _Rule("{detail} taking `interpolatedStr` (the gates cannot tell its strings from "
                                    "plain ones)", ("allow_command_syntax",), "command"),
    "token": _Rule("token: {detail}, which holds a comment, string, character literal or escape start after its "
                   "first character, or a letter only newer Lean reads as one (Lean reads it as one token where the "
                   "gates would not); choose another token", told_by="command"),
    "ambiguous": _Rule("text the gates cannot read as Lean does: {detail}", told_by="text"),
}
_CONTEXT = frozenset({"open", "export", "deriving", "syntax"})  # weighed by `gates/reach.py`


def problems(inp: GateInput) -> list[str]:
    """Every construct a change adds that these rules refuse, in every changed Lean file."""
    out: list[str] = []
    registered = {name for f in inp.after.files.values() for name in f.registered}
    base_axioms = {(d.key, d.statement_hash) for _, d in inp.before.axioms()}
    for change in inp.lean_changes():
        before = inp.before.files.get(change.path, FileIndex(change.path))
        after = inp.after.files.get(change.path)
        if after is None:
            continue
        where = change.path
        for d in after.axioms:
            if (d.key, d.statement_hash) not in base_axioms and d.name not in inp.gates.allowed_axioms:
                out.append(f"{where}:{d.line}: new axiom {d.name} (allowed: {', '.join(inp.gates.allowed_axioms)})")
        out += _rises(where, _holes(before, "admit"), _holes(after, "admit"))
        out += _rises(where, _holes(before, "macro"), _holes(after, "macro"))
        out += _rises(where, constructs(before, inp.gates, registered), constructs(after, inp.gates, registered))
        if not inp.gates.allow_meta_code:
            out += [f"{where}: new import {m} (meta code; set [gates] allow_meta_code to permit it)"
                    for m in sorted(set(after.imports) - set(before.imports)) if m == "Lean" or m.startswith("Lean.")]
        base_trusting = {d.key for d in before.decls if _trusting(d)}
        out += [f"{where}:{d.line}: @[{', '.join(d.attributes)}] on {d.kind} {d.name}"
                for d in after.decls if _trusting(d) and d.key not in base_trusting]
    return out + _unseen_imports(inp)


def constructs(f: FileIndex, gates: GatesConfig, registered: set[str]) -> Counter[tuple[str, str]]:
    """The constructs of one file the rules refuse under `gates`: (what it is, which one it is)."""
    out: Counter[tuple[str, str]] = Counter()
    for m in f.markers:
        for what, told_by in _weigh(m, gates, registered):
            out[(what, _identity(f, m.offset, told_by))] += 1
    for d in f.decls:
        for name in meta_attributes(",".join(d.attributes), registered):
            if not gates.allow_meta_code:
                out[(f"@[{name}] on {d.name or d.kind} (meta code; set [gates] allow_meta_code to permit it)",
                     d.text_hash)] += 1
    return out


def _weigh(m: Marker, gates: GatesConfig, registered: set[str]) -> list[tuple[str, str]]:
    """What a marker is, as refused under `gates`, and how one is told from another; nothing when allowed."""
    if m.kind == "set_option":
        return [(f"set_option {m.detail}", "declaration")] if m.detail in WEAKENING_OPTIONS else []
    if m.kind == "attribute":
        out = []
        if set(attribute_names(m.args)) & TRUSTING_ATTRIBUTES:
            out.append((f"`{m.detail}`", "command"))
        if meta_attributes(m.args, registered) and not gates.allow_meta_code:
            out.append((f"`{m.detail}` (meta code; set [gates] allow_meta_code to permit it)", "command"))
        return out
    if m.kind in _CONTEXT:
        return []
    if m.kind in SUSPECT_NAMES:
        return [(f"{m.kind} (as `{m.detail}`)" if m.detail != m.kind else m.kind, "declaration")]
    rule = _RULES.get(m.kind)
    if rule is None:  # native_decide, bv_decide, `decide +native`
        return [(m.kind if m.detail == m.kind else f"{m.kind} (as `{m.detail}`)", "declaration")]
    off = [s for s in rule.switches if not getattr(gates, s)]
    if rule.switches and not off:
        return []
    what = rule.what.format(detail=m.detail, kind=m.kind)
    if off:
        what = what[:-1] + f"; set [gates] {' and '.join(off)} to permit it)" if what.endswith(")") else (
            f"{what} (set [gates] {' and '.join(off)} to permit it)")
    return [(what, rule.told_by)]


def meta_attributes(inside: str, registered: set[str]) -> list[str]:
    """The attributes of `@[…]` or `attribute […]` contents that are not known to be harmless: they may register
    code the elaborator runs."""
    return [name for name, item in attribute_items(inside) if name not in registered and (
        name not in HARMLESS_ATTRIBUTES or (name == "aesop" and "tactic" in item.split()))]


def _identity(f: FileIndex, offset: int, told_by: str) -> str:
    """Which construct this is: the declaration holding `offset` (by name, or by its text), or else the text of the
    command starting there, with the command it wraps when it ends in `in` (`#guard_msgs in theorem …`)."""
    holder = next((d for d in reversed(f.decls) if d.start <= offset < max(d.end, d.header)), None)
    if holder is not None and told_by != "command":
        return holder.key if told_by == "declaration" else holder.text_hash
    if f.source is None:
        return ""
    starts, code = f.commands, f.source.code
    i = bisect.bisect_right(starts, offset)
    end = starts[i] if i < len(starts) else len(code)
    while code[offset:end].split()[-1:] == ["in"] and i + 1 < len(starts):
        i += 1
        end = starts[i]
    if code[offset:end].split()[-1:] == ["in"]:
        end = len(code)
    return hashlib.sha256(f.source._normal(offset, end).encode()).hexdigest()[:16]


def _rises(where: str, before: Counter[tuple[str, str]], after: Counter[tuple[str, str]]) -> list[str]:
    """Per construct, how many the change added: those of `after` that `before` lacks, told apart by identity."""
    added: Counter[str] = Counter()
    for key, n in after.items():
        if n > before[key]:
            added[key[0]] += n - before[key]
    return [f"{where}: new {what} (+{n})" for what, n in sorted(added.items())]


def _holes(f: FileIndex, which: str) -> Counter[tuple[str, str]]:
    """New `admit`s, told apart by their declaration; `sorry`s inside a macro or notation, by the file."""
    if which == "admit":
        return Counter((f"admit in {h.declaration or h.owner or 'top level'}", "") for h in f.holes
                       if h.keyword == "admit")
    return Counter(("sorry inside a macro/notation in the file", "") for h in f.holes if h.in_macro)


def _unseen_imports(inp: GateInput) -> list[str]:
    """A new import of a project module that no file git would commit provides: the gates cannot see it, and a
    clean checkout could not build it."""
    ours = {root.strip("/").rsplit("/", 1)[-1] for root in inp.lean_roots}
    graph = inp.after.graph
    out: list[str] = []
    for change in inp.lean_changes():
        after = inp.after.files.get(change.path)
        if after is None:
            continue
        before = inp.before.files.get(change.path, FileIndex(change.path))
        out += [f"{change.path} imports {module}, which no file that git would commit provides (it is missing, or "
                "git ignores it): the gates cannot read it and a clean checkout cannot build it"
                for module in sorted(set(after.imports) - set(before.imports))
                if module.split(".")[0] in ours and change.path in graph.unresolved.get(module, set())]
    return out


def _trusting(d: Decl) -> bool:
    return d.kind in THEOREM_KINDS and bool(set(attribute_names(",".join(d.attributes))) & TRUSTING_ATTRIBUTES)
