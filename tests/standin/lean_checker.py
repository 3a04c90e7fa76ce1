#!/usr/bin/env python3
"""A stand-in for `lake lean FILE` / `lake build`, printing diagnostics in Lean's format.

It knows just enough Lean to fail like Lean does in the cases the tests need,
with logic of its own (it shares no code with autoformalize):

- a reference to a project declaration (a dotted name under a namespace the
  project declares) that neither the file nor its imports declare is
  `unknown identifier`, as after a rename;
- `import X` of a project module that does not exist is `unknown module`;
- two imported modules declaring one name fail the import (`environment already contains`);
- unbalanced parentheses are a parse error;
- `exact absurd_marker` stands for a proof Lean rejects (`type mismatch`);
- a declaration written with `sorry`, `admit`, `stop` or `apply?` gets the sorry warning; `exact?` is answered
  as Lean answers it (`lean_elab`: `Try this`, or its error);
- `#print axioms`, `#check`, `#print`, instances, `macro_rules`, meta code and
  what each declaration depends on come from `lean_elab` (its own model of Lean);
- `#guard_msgs` drops, checks and passes messages as `Lean.Elab.GuardMsgs` does:
  `(drop all)` drops every message of its command, errors included;
- `-- standin: sleep N` sleeps N seconds first (for timeouts), after starting a
  grandchild that sleeps too (to prove the whole process group is killed);
- with $STANDIN_PAUSE_ON set to `check` or `build`, the first run of that mode
  creates the file $STANDIN_PAUSE_MARKER and sleeps a minute (a test kills it then).

Usage: lean_checker.py check FILE | env FILE | compile FILE OLEAN | build | replay MODULE… | has-replay

`compile FILE OLEAN` is `lake lean FILE -- -R ROOT -o OLEAN`: as `check`, then
the `.olean` written when Lean reported no error.

`env FILE` is `lake env lean FILE`: nothing is built; the probe's program reads only the `.olean` files a build
wrote in `.lake/build/lib/lean` (the stand-in's hold the text it compiled), as `importModules` does.

`replay` is `leanchecker MODULE…`: it replays each module (and those under
it) and fails, as leanchecker does, on a declaration that meta code added
without the kernel's check. `has-replay` is `lake env sh -c 'command -v
leanchecker'`: it exits 0 when the toolchain `lean-toolchain` names has one
(Lean ships it from v4.28.0; elan's default, with no such file), 1 otherwise.
`env FILE` on the replay program (`gates/replay.lean`) answers as that program
does: see `lean_env.replayed`.
Every invocation appends its arguments to $STANDIN_LOG when that is set.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import lean_elab  # beside this script, which runs as a program
import lean_env
from lean_elab import Guard, Message
from lean_io import run_evals  # `#eval`'s IO, run as Lean runs it while compiling
from lean_syntax import MODULE, module_parts

DECL = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*"
                  r"(?:theorem|lemma|def|abbrev|structure|inductive|class|axiom|instance)\s+([\w.']+)", re.M)
NAMESPACE = re.compile(r"^\s*(namespace|end)\s+([\w.]+)", re.M)
IMPORT = re.compile(rf"^import\s+({MODULE})", re.M)
SCOPE = re.compile(r"^\s*(?:namespace|end|section|open)\b[^\n]*", re.M)  # names namespaces, not declarations
ESCAPED = re.compile(r"«[^»]*»")
REF = re.compile(r"(?<![\w.])([A-Z]\w*(?:\.[\w']+)+)")


def strip_comments(text: str) -> str:
    text = re.sub(r"/-.*?-/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    return re.sub(r"--[^\n]*", "", text)


def declared(text: str) -> set[str]:
    names: set[str] = set()
    stack: list[str] = []
    events = sorted([(m.start(), "ns", m) for m in NAMESPACE.finditer(text)]
                    + [(m.start(), "decl", m) for m in DECL.finditer(text)], key=lambda e: e[0])
    for _, kind, m in events:
        if kind == "ns":
            if m.group(1) == "namespace":
                stack.append(m.group(2))
            elif stack:
                stack.pop()
        else:
            names.add(".".join([*stack, m.group(1)]))
    return names


def module_file(root: Path, module: str) -> Path:
    parts = module_parts(module)
    return root.joinpath(*parts).with_name(parts[-1] + ".lean")


def closure(root: Path, path: Path, seen: set[Path]) -> set[Path]:
    if path in seen or not path.exists():
        return seen
    seen.add(path)
    for module in IMPORT.findall(path.read_text(encoding="utf-8")):
        closure(root, module_file(root, module), seen)
    return seen


def check(root: Path, rel: str) -> list[Message]:
    path = root / rel
    text = strip_comments(path.read_text(encoding="utf-8"))
    model = lean_elab.File(lean_elab.Project(root), path).elaborate()
    out: list[Message] = []
    project_roots = {p.stem for p in root.glob("*.lean")} | {p.name for p in root.iterdir() if p.is_dir()}
    for m in IMPORT.finditer(text):
        module = m.group(1)
        if module_parts(module)[0] in project_roots and not module_file(root, module).exists():
            line = text.count("\n", 0, m.start()) + 1
            out.append(Message(line, 0, "error", f"unknown module prefix '{module}'"))
    known: set[str] = set(model.env.decls)
    first: dict[str, Path] = {}
    for file in sorted(closure(root, path, set())):
        names = declared(strip_comments(file.read_text(encoding="utf-8")))
        known |= names
        for name in sorted(names) if file != path else ():
            if (other := first.setdefault(name, file)) != file:  # two imported modules declare one name
                module = other.relative_to(root).with_suffix("").as_posix().replace("/", ".")
                out.append(Message(1, 0, "error", f"import failed, environment already contains '{name}' from "
                                                  f"{module}"))
    namespaces = {n.split(".")[0] for n in known}
    blank = lambda i: " " * len(i.group())  # noqa: E731
    # An escaped name (`«…»`) is one identifier, whatever it holds.
    for m in REF.finditer(ESCAPED.sub(blank, SCOPE.sub(blank, IMPORT.sub(blank, text)))):
        name = m.group(1)
        parts = name.split(".")
        prefixes = {".".join(parts[:k]) for k in range(2, len(parts) + 1)}  # `Book.h.elim` projects from `Book.h`
        if parts[0] in namespaces and not prefixes & known and not any(k.endswith("." + name) for k in known):
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1)
            out.append(Message(line, col, "error", f"unknown identifier '{name}'"))
    for number, line in enumerate(text.splitlines(), start=1):
        if "absurd_marker" in line:
            out.append(Message(number, line.index("absurd_marker"), "error", "type mismatch\n  absurd_marker\nhas "
                               "type\n  False : Prop\nbut is expected to have type\n  True : Prop"))
    if text.count("(") != text.count(")"):
        out.append(Message(text.count(chr(10)) + 1, 0, "error", "unexpected end of input; expected ')'"))
    reported = {(m.line, m.column) for m in model.messages if m.severity == "error"}
    out = [m for m in out if (m.line, m.column) not in reported] + model.messages
    out += [Message(line, 0, severity, message) for line, severity, message in run_evals(path)]
    for guard in model.guards:
        out = guarded(out, guard)
    return sorted(out, key=lambda m: (m.line, m.column))


def guarded(messages: list[Message], guard: Guard) -> list[Message]:
    """`#guard_msgs`: the messages of its command are checked against its doc comment, dropped, or passed on."""
    inside = [m for m in messages if guard.first <= m.line <= guard.last]
    outside = [m for m in messages if m not in inside]
    checked, passed = [], []
    for m in inside:
        action = next((a for a, sev in guard.spec if sev in ("all", m.severity)), "pass" if guard.spec else "check")
        if action == "check":
            checked.append(m)
        elif action == "pass":
            passed.append(m)
    rendered = "---\n".join(f"{m.severity}:{'' if m.text.startswith(chr(10)) else ' '}{m.text}\n"
                             for m in checked).strip()
    if _spaces(guard.expected.strip(), guard.whitespace) == _spaces(rendered, guard.whitespace):
        return outside + passed
    diff = "\n".join([*(f"- {x}" for x in guard.expected.strip().splitlines()),
                      *(f"+ {x}" for x in rendered.splitlines())])
    return [*messages, Message(guard.line, guard.column, "error",
                               f"❌️ Docstring on `#guard_msgs` does not match generated message:\n\n{diff}")]


def _spaces(text: str, mode: str) -> str:
    if mode == "exact":
        return text
    return " ".join(text.split()) if mode == "lax" else text.replace("\n", " ")


def render(rel: str, m: Message, build: bool) -> str:
    """As `lean` prints it (information bare), or as `lake build` does."""
    if build:
        return f"{m.severity}: {rel}:{m.line}:{m.column}: {m.text}"
    if m.severity == "info":
        return m.text
    return f"{rel}:{m.line}:{m.column}: {m.severity}: {m.text}"


def replay(root: Path, modules: list[str]) -> int:
    """leanchecker: every module (and those under it) replayed; a declaration added without the kernel fails."""
    project = lean_elab.Project(root)
    for module in modules:
        base = project.module_path(module)
        files = [base] if base.exists() else []
        files += sorted(base.with_suffix("").rglob("*.lean")) if base.with_suffix("").is_dir() else []
        if not files:
            print(f"uncaught exception: Could not find any oleans for: {module}", file=sys.stderr)
            return 1
        for file in files:
            env = project.env_of(file)
            bad = [d.name for d in env.decls.values() if d.unchecked and d.module == project.module_of(file)]
            if bad:
                print(f"leanchecker found a problem in {project.module_of(file)}", file=sys.stderr)
                print(f"uncaught exception: (kernel) declaration type mismatch, '{bad[0]}'", file=sys.stderr)
                return 1
    return 0


def written(root: Path, rel: str) -> str | None:
    """What `lake lean FILE` leaves in the build folder: an `.olean` for each project module the file imports, which
    Lake builds first (the stand-in's `.olean` holds the text it compiled), rewritten only when its source changed;
    why Lake could not write one, if it could not."""
    project = lean_elab.Project(root)
    for path in sorted(closure(root, root / rel, set()) - {root / rel}):
        target, text = project.olean(project.module_of(path)), path.read_text(encoding="utf-8")
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as e:
            return f"error: {target.relative_to(root)}: {e.strerror}"
    return None


def built(root: Path, rel: str) -> int:
    """`lake lean` on a generated file: Lake builds its imports first (a module that fails stops it, as Lake
    prints it), then Lean elaborates the file itself."""
    failed = False
    if problem := written(root, rel):
        print(problem)
        return 1
    for path in sorted(closure(root, root / rel, set()) - {root / rel}):
        module = path.relative_to(root).with_suffix("").as_posix()
        for msg in check(root, module + ".lean"):
            if msg.severity == "error":
                failed = True
                print(render(module + ".lean", msg, True))
    own = check(root, rel)
    print("\n".join(render(rel, m, False) for m in own))
    if failed or any(m.severity == "error" for m in own):
        print("error: build failed")
        return 1
    return 0


def compiled(root: Path, rel: str, olean: str) -> int:
    """`lake lean FILE -- -R ROOT -o OLEAN`: Lake builds the file's imports, Lean elaborates it and, when it reports no
    error, writes its `.olean` (the stand-in's holds the text it compiled) where `-o` says."""
    if (code := built(root, rel)) != 0:
        return code
    target = root / olean
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text((root / rel).read_text(encoding="utf-8"), encoding="utf-8")
    return 0


def main() -> int:
    try:
        return run(Path.cwd())
    except lean_elab.Beyond as e:
        print(f"stand-in Lean: {e}; Lean would answer, this model cannot", file=sys.stderr)
        return 3


def run(root: Path) -> int:
    if log := os.environ.get("STANDIN_LOG"):
        try:
            with open(log, "a", encoding="utf-8") as f:
                f.write(" ".join(sys.argv[1:]) + "\n")
        except OSError:
            pass  # a run given `.lake` read-only (`lean_try`'s) where the test keeps its log: not logged
    marker = os.environ.get("STANDIN_PAUSE_MARKER")
    if os.environ.get("STANDIN_PAUSE_ON") == sys.argv[1] and marker and not os.path.exists(marker):
        Path(marker).touch()
        time.sleep(60)
    if not any((root / name).is_file() for name in ("lakefile.lean", "lakefile.toml")):
        # Lake reads the package in the directory it runs in, never above it; the lines as Lake 5 printed them.
        print("error: [root]: no configuration file with a supported extension:\n././lakefile.lean\n././lakefile.toml",
              file=sys.stderr)
        return 1
    if sys.argv[1] == "has-replay":
        pinned = root / "lean-toolchain"
        version = re.search(r"v(\d+)\.(\d+)", pinned.read_text(encoding="utf-8")) if pinned.is_file() else None
        return 0 if version is None or (int(version[1]), int(version[2])) >= (4, 28) else 1
    if sys.argv[1] == "replay":
        return replay(root, sys.argv[2:])
    if sys.argv[1] == "compile":
        return compiled(root, sys.argv[2], sys.argv[3])
    if sys.argv[1] in ("check", "env"):
        files = [sys.argv[2]]
    else:
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.lean")
                       if ".lake" not in p.parts and not p.name.startswith("lakefile"))
    for rel in files:
        if m := re.search(r"-- standin: sleep (\d+)", (root / rel).read_text(encoding="utf-8")):
            subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({int(m.group(1)) * 4})"])
            time.sleep(int(m.group(1)))
    build = sys.argv[1] == "build"
    text = "" if build else (root / files[0]).read_text(encoding="utf-8")
    if lean_env.is_program(text) or lean_env.is_replay(text):
        if missing := lean_env.unbuilt(root, text):
            olean = lean_elab.Project(root).olean(missing[0]).relative_to(root)
            print(f"{files[0]}:{len(text.splitlines())}:0: error: object file ./{olean} of module {missing[0]} does "
                  "not exist")
            return 1
        if (answer := lean_env.answer(root, text)) is None:
            known = "REPLAY" if lean_env.is_replay(text) else "PROGRAM"
            print(f"{files[0]}:1:0: error: the stand-in's answers were written against another program (digest "
                  f"{getattr(lean_env, known)[:12]}, this one {lean_env.digest(text)[:12]}): read the new program "
                  f"against Lean's source, teach the stand-in what it prints, and record its digest in "
                  f"lean_env.{known}")
            return 1
        print(answer)  # `#eval`'s captured output: an information message, printed bare
        return 0
    if sys.argv[1] == "check" and Path(files[0]).parts[:2] == (".lake", "autoformalize"):
        return built(root, files[0])
    if sys.argv[1] == "check" and (problem := written(root, files[0])):
        print(problem)
        return 1
    found = [(rel, msg) for rel in files for msg in check(root, rel)]
    print("\n".join(render(rel, msg, build) for rel, msg in found))
    failed = any(msg.severity == "error" for _, msg in found)
    if build and failed:
        print("error: build failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
