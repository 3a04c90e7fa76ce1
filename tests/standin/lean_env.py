"""The stand-in Lean running autoformalize's environment probe (`gates/env_probe.lean`).

Real Lean elaborates that program and runs it: it loads the modules named in its `wanted` string with
`importModules` and prints, as framed JSON lines, every constant each module adds. The stand-in cannot run Lean
code, so it recognises the program (by its namespace and its `#eval`), reads the same two strings the program
reads (`nonce`, `wanted`, as Lean string literals), and prints what the program would print over the stand-in's
own model of each module (`lean_elab`): the same line shapes, ids and order rules, names as Lean makes them
(`_private.<Module>.0.<name>` for a private declaration, `inst…` for an anonymous instance), each term as one
string node holding the model's elaborated text (instances and full names explicit), and `#eval`'s captured
output printed bare, as the `lean` command line prints an information message.

Independent of autoformalize (it shares no code with it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import lean_elab
from lean_syntax import module_name, module_parts

MARK = "namespace AutoformalizeEnvProbe"
_STRING = r'"((?:[^"\\]|\\.)*)"'
_NONCE = re.compile(rf"^def nonce : String := {_STRING}$", re.M)
_WANTED = re.compile(rf"^def wanted : String := {_STRING}$", re.M)
OUTSIDE = "Init.Prelude"  # where the model's constants from outside the project (Nat, propext, sorryAx) live
KIND = {"theorem": "thm", "lemma": "thm", "def": "def", "abbrev": "def", "instance": "def", "axiom": "axiom",
        "opaque": "opaque", "structure": "induct", "class": "induct", "inductive": "induct"}


def is_program(text: str) -> bool:
    return MARK in text and "#eval AutoformalizeEnvProbe.main" in text


def _literal(body: str) -> str:
    """A Lean string literal's value (the escapes the probe's strings use)."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def components(name: str) -> list[str | int]:
    out: list[str | int] = []
    for part in re.findall(r"«[^»]*»|[^.«»]+", name):
        out.append(part[1:-1] if part.startswith("«") else int(part) if part.isdigit() else part)
    return out


class Printer:
    def __init__(self, nonce: str) -> None:
        self.nonce = nonce
        self.lines: list[str] = []
        self.mods: dict[str, int] = {}
        self.names: dict[str, int] = {}
        self.nodes: dict[str, int] = {}

    def emit(self, item: object) -> None:
        payload = json.dumps(item, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        self.lines.append(f"{self.nonce} {len(self.lines)} {payload}")

    def module(self, module: str) -> int:
        if module not in self.mods:
            self.mods[module] = len(self.mods)
            self.emit(["M", self.mods[module], module_parts(module)])
        return self.mods[module]

    def name(self, name: str, home: str) -> int:
        if name not in self.names:
            mid = self.module(home) if home else -1
            self.names[name] = len(self.names)
            self.emit(["N", self.names[name], components(name), mid])
        return self.names[name]

    def node(self, text: str) -> int:
        if text not in self.nodes:
            self.nodes[text] = len(self.nodes)
            self.emit(["X", self.nodes[text], "t", text])
        return self.nodes[text]


def answer(root: Path, text: str) -> str:
    """What Lean prints running the probe program `text` in the project at `root`."""
    nonce, wanted = _NONCE.search(text), _WANTED.search(text)
    if nonce is None or wanted is None:
        return "error: the stand-in does not recognise this probe program"
    modules = [module_name(parts) for parts in json.loads(_literal(wanted.group(1)))]
    out = Printer(_literal(nonce.group(1)))
    project = lean_elab.Project(root)
    for module in modules:
        mid = out.module(module)
        path = project.module_path(module)
        if not path.exists():
            out.emit(["U", mid])
            continue
        model = lean_elab.File(project, path).elaborate()
        for name in model.own:
            decl = model.env.decls[name]
            if decl.module == module:
                _record(out, model, mid, decl)
    out.emit(["E", len(out.lines)])
    return "\n".join(out.lines)


def lean_name(decl: lean_elab.Decl) -> str:
    return f"_private.{decl.module}.0.{decl.name}" if decl.private else decl.name


def _record(out: Printer, model: lean_elab.File, mid: int, decl: lean_elab.Decl) -> None:
    decls = model.env.decls

    def ref(name: str) -> int:
        d = decls.get(name)
        return out.name(lean_name(d) if d is not None else name, d.module if d is not None else OUTSIDE)

    kind = KIND[decl.kind]
    n = out.name(lean_name(decl), decl.module)
    typed = out.node(f"{decl.binders} : {decl.type}" if decl.binders else decl.type)
    body_refs = decl.refs - decl.type_refs
    direct = {a for a in decl.axioms if a != decl.name}
    record: dict[str, object] = {
        "m": mid, "n": n, "k": kind, "u": [], "t": typed,
        "v": out.node(decl.body) if kind in ("def", "opaque") else None,
        "tu": sorted(ref(r) for r in decl.type_refs), "vu": sorted({*(ref(r) for r in body_refs),
                                                                 *(out.name(a, OUTSIDE) for a in direct)}),
        "ax": sorted(out.name(a, decls[a].module if a in decls else OUTSIDE) for a in model.axioms_of(decl.name)),
        "r": decl.line, "unsafe": decl.unsafe}
    if kind == "def":
        record.update({"s": "unsafe" if decl.unsafe else "safe", "ib": None, "ex": False})
    if kind == "opaque":
        record.update({"ib": None, "ex": False})
    if kind == "induct":
        ctor = out.name(f"{lean_name(decl)}.mk", decl.module)
        record.update({"x": [ctor], "np": 0, "ni": 0, "rc": False})
    out.emit(["C", record])
    if kind == "induct":
        out.emit(["C", {"m": mid, "n": out.names[f"{lean_name(decl)}.mk"], "k": "ctor", "u": [],
                        "t": out.node(f"{decl.body} → {decl.name}"), "v": None, "tu": [n], "vu": [], "ax": [],
                        "r": None, "unsafe": False, "x": [n], "ci": 0, "np": 0, "nf": 0}])
