"""The stand-in Lean running autoformalize's environment probe (`gates/env_probe.lean`).

Real Lean elaborates that program and runs it: it loads the modules named in its `wanted` string with
`importModules` (from the `.olean` files a build wrote) and prints, as framed JSON lines, every constant each module
adds, then every module it loaded with its file. The stand-in cannot run Lean code, so it recognises the program
(by its namespace and its `#eval`) and answers only the one its answers were written against (`PROGRAM`, the
program's digest), reads the same two strings the program reads (`nonce`, `wanted`, as Lean string literals), and
prints what the program would print over the stand-in's own model of each built module (`lean_elab`): the same
line shapes, ids and order rules, names as Lean makes them (`_private.<Module>.0.<name>` for a private
declaration, `inst…` for an anonymous instance), each term as one string node holding the model's elaborated text
(instances and full names explicit), and `#eval`'s captured output printed bare, as the `lean` command line prints
an information message.

Independent of autoformalize (it shares no code with it).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import lean_elab
from lean_syntax import MODULE, module_name, module_parts

MARK = "namespace AutoformalizeEnvProbe"
REPLAY_MARK = "namespace AutoformalizeReplay"
# The program these answers were written against (`gates/env_probe.lean` as `gates.env.program` fills it, its two
# strings emptied), and `gates/replay.lean`'s: a program changed since answers nothing, so a change to it cannot pass
# the suite unread.
PROGRAM = "f357e8203ed26fb5327267d35b86b2588c945c33beded6e089156126cf2ff40f"
REPLAY = "0a6743b4993bad30334eecc9164426a7172e14ad80a24a548c2e9b6218f4c0b0"
TOOLCHAIN = Path(__file__).parent / "toolchain"  # the folder the stand-in's `lean` runs from
_STRING = r'"((?:[^"\\]|\\.)*)"'
_NONCE = re.compile(rf"^def nonce : String := {_STRING}$", re.M)
_WANTED = re.compile(rf"^def wanted : String := {_STRING}$", re.M)
_IMPORT = re.compile(rf"^import\s+({MODULE})", re.M)
OUTSIDE = "Init.Prelude"  # where the model's constants from outside the project (Nat, propext, sorryAx) live
KIND = {"theorem": "thm", "lemma": "thm", "def": "def", "abbrev": "def", "instance": "def", "axiom": "axiom",
        "opaque": "opaque", "structure": "induct", "class": "induct", "inductive": "induct"}


def is_program(text: str) -> bool:
    return MARK in text and "#eval AutoformalizeEnvProbe.main" in text


def is_replay(text: str) -> bool:
    return REPLAY_MARK in text and "#eval AutoformalizeReplay.main" in text


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


def digest(text: str) -> str:
    """The program's digest, its nonce and its modules left out."""
    blank = _WANTED.sub('def wanted : String := ""', _NONCE.sub('def nonce : String := ""', text))
    return hashlib.sha256(blank.encode()).hexdigest()


def unbuilt(root: Path, text: str) -> list[str]:
    """The modules the program asks for that no build wrote (`importModules` throws on the first)."""
    wanted = _WANTED.search(text)
    project = lean_elab.Project(root, built=True)
    asked = [module_name(parts) for parts in json.loads(_literal(wanted.group(1)))] if wanted else []
    return [m for m in asked if not project.module_path(m).exists()]


def answer(root: Path, text: str) -> str | None:
    """What Lean prints running the probe program `text` (or the replay program) in the project at `root` over what
    was built (every module it asks for is: `unbuilt`); None for a program other than the one these answers were
    written against."""
    nonce, wanted = _NONCE.search(text), _WANTED.search(text)
    if nonce is None or wanted is None or digest(text) != (REPLAY if is_replay(text) else PROGRAM):
        return None
    if is_replay(text):
        return replayed(root, [module_name(parts) for parts in json.loads(_literal(wanted.group(1)))],
                        _literal(nonce.group(1)))
    modules = [module_name(parts) for parts in json.loads(_literal(wanted.group(1)))]
    out = Printer(_literal(nonce.group(1)))
    project = lean_elab.Project(root, built=True)  # `importModules` reads `.olean` files, never a source
    for module in modules:
        mid = out.module(module)
        path = project.module_path(module)
        model = lean_elab.File(project, path).elaborate()
        for name in model.own:
            decl = model.env.decls[name]
            if decl.module == module:
                _record(out, model, mid, decl)
    out.emit(["R", str(TOOLCHAIN), str(root)])
    for module, path in loaded(project, modules).items():
        out.emit(["F", out.module(module), str(path)])
    out.emit(["E", len(out.lines)])
    return "\n".join(out.lines)


def replayed(root: Path, modules: list[str], nonce: str) -> str:
    """What the replay program prints: each module read from its `.olean` with its number of constants (and a part
    Lean's module system keeps beside it, `.olean.private`, when one is there), every module of the environment of
    what they import from outside that set (`Init` among them, as every module without `prelude` imports it) with
    its file, then the kernel's verdict on adding every constant again: the first declaration the model added
    without the kernel's check (`addDeclWithoutChecking`, or under `debug.skipKernelTC`) is refused with the
    kernel's message, as `Lean.Environment.replay` throws it."""
    out = Printer(nonce)
    project = lean_elab.Project(root, built=True)
    trusted: list[str] = []
    count, refused = 0, None
    for module in modules:
        path = project.module_path(module)
        model = lean_elab.File(project, path).elaborate()
        own = [d for name in model.own if (d := model.env.decls[name]).module == module]
        out.emit(["P", module_parts(module), str(project.olean(module)), len(own)])
        for part in (".server", ".private"):
            if path.with_name(path.name + part).exists():
                out.emit(["S", module_parts(module), part])
        count += len(own)
        for imported in _IMPORT.findall(path.read_text(encoding="utf-8")):
            if imported not in modules and imported not in trusted:
                trusted.append(imported)
        if refused is None and (bad := [d for d in own if d.unchecked]):
            refused = (f"(kernel) declaration type mismatch, '{lean_name(bad[0])}' has type\n  ?\nbut it is expected "
                       f"to have type\n  {bad[0].type}")
    out.emit(["R", str(TOOLCHAIN), str(root)])
    for module, file in loaded(project, trusted).items():
        out.emit(["F", module_parts(module), str(file)])
    out.emit(["K", count, 0, 0] if refused is None else ["D", refused])
    out.emit(["E", len(out.lines)])
    return "\n".join(out.lines)


def loaded(project: lean_elab.Project, modules: list[str]) -> dict[str, Path]:
    """Every module of the environment `importModules` makes of `modules` → the `.olean` it loads: the project's and
    what a build left in its build folder, where Lake writes them; the model's outside constants, the toolchain's."""
    out = {OUTSIDE: TOOLCHAIN.joinpath("lib", "lean", *module_parts(OUTSIDE)).with_suffix(".olean")}
    todo = list(reversed(modules))
    while todo:
        module = todo.pop()
        path = project.module_path(module)
        if module in out or not path.exists():
            continue
        out[module] = project.olean(module)
        todo += reversed(_IMPORT.findall(path.read_text(encoding="utf-8")))
    return out


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
        "r": decl.line, "unsafe": decl.unsafe,
        "h": max(1, decl.holes) if "sorryAx" in decl.axioms and kind != "axiom" else 0}
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
                        "r": None, "unsafe": False, "x": [n], "ci": 0, "np": 0, "nf": 0, "h": 0}])
