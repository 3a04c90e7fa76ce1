#!/usr/bin/env python3
"""A stand-in for `lake lean FILE` / `lake build`, printing diagnostics in Lean's format.

It knows just enough Lean to fail like Lean does in the cases the tests need,
with logic of its own (it shares no code with autoformalize):

- a reference to a project declaration (a dotted name under a namespace the
  project declares) that neither the file nor its imports declare is
  `unknown identifier`, as after a rename;
- `import X` of a project module that does not exist is `unknown module`;
- unbalanced parentheses are a parse error;
- `exact absurd_marker` stands for a proof Lean rejects (`type mismatch`);
- a declaration containing `sorry` gets the sorry warning;
- `-- standin: sleep N` sleeps N seconds first (for timeouts), after starting a
  grandchild that sleeps too (to prove the whole process group is killed);
- with $STANDIN_PAUSE_ON set to `check` or `build`, the first run of that mode
  creates the file $STANDIN_PAUSE_MARKER and sleeps a minute (a test kills it then).

Usage: lean_checker.py check FILE | lean_checker.py build
Every invocation appends its arguments to $STANDIN_LOG when that is set.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from lean_io import run_evals  # `#eval`'s IO, run as Lean runs it while compiling

DECL = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*"
                  r"(?:theorem|lemma|def|abbrev|structure|inductive|class|axiom|instance)\s+([\w.']+)", re.M)
NAMESPACE = re.compile(r"^\s*(namespace|end)\s+([\w.]+)", re.M)
IMPORT = re.compile(r"^import\s+([\w.]+)", re.M)
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
    return root / (module.replace(".", "/") + ".lean")


def closure(root: Path, path: Path, seen: set[Path]) -> set[Path]:
    if path in seen or not path.exists():
        return seen
    seen.add(path)
    for module in IMPORT.findall(path.read_text(encoding="utf-8")):
        closure(root, module_file(root, module), seen)
    return seen


def check(root: Path, rel: str) -> list[str]:
    path = root / rel
    text = strip_comments(path.read_text(encoding="utf-8"))
    out: list[str] = []
    project_roots = {p.stem for p in root.glob("*.lean")} | {p.name for p in root.iterdir() if p.is_dir()}
    for m in IMPORT.finditer(text):
        module = m.group(1)
        if module.split(".")[0] in project_roots and not module_file(root, module).exists():
            line = text.count("\n", 0, m.start()) + 1
            out.append(f"{rel}:{line}:0: error: unknown module prefix '{module}'")
    known: set[str] = set()
    for file in closure(root, path, set()):
        known |= declared(strip_comments(file.read_text(encoding="utf-8")))
    namespaces = {n.split(".")[0] for n in known}
    for m in REF.finditer(IMPORT.sub(lambda i: " " * len(i.group()), text)):
        name = m.group(1)
        if name.split(".")[0] in namespaces and name not in known \
                and not any(k.endswith("." + name) for k in known):
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1)
            out.append(f"{rel}:{line}:{col}: error: unknown identifier '{name}'")
    for number, line in enumerate(text.splitlines(), start=1):
        if "absurd_marker" in line:
            out.append(f"{rel}:{number}:{line.index('absurd_marker')}: error: type mismatch\n"
                       "  absurd_marker\nhas type\n  False : Prop\nbut is expected to have type\n  True : Prop")
    if text.count("(") != text.count(")"):
        out.append(f"{rel}:{text.count(chr(10)) + 1}:0: error: unexpected end of input; expected ')'")
    for m in DECL.finditer(text):
        end = DECL.search(text, m.end())
        body = text[m.end():end.start() if end else len(text)]
        if re.search(r"\bsorry\b", body):
            line = text.count("\n", 0, m.start(1)) + 1
            col = m.start(1) - (text.rfind("\n", 0, m.start(1)) + 1)
            out.append(f"{rel}:{line}:{col}: warning: declaration uses 'sorry'")
    return out + run_evals(path, rel)


def main() -> int:
    root = Path.cwd()
    if log := os.environ.get("STANDIN_LOG"):
        with open(log, "a", encoding="utf-8") as f:
            f.write(" ".join(sys.argv[1:]) + "\n")
    marker = os.environ.get("STANDIN_PAUSE_MARKER")
    if os.environ.get("STANDIN_PAUSE_ON") == sys.argv[1] and marker and not os.path.exists(marker):
        Path(marker).touch()
        time.sleep(60)
    if sys.argv[1] == "check":
        files = [sys.argv[2]]
    else:
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.lean")
                       if ".lake" not in p.parts and not p.name.startswith("lakefile"))
    for rel in files:
        if m := re.search(r"-- standin: sleep (\d+)", (root / rel).read_text(encoding="utf-8")):
            subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({int(m.group(1)) * 4})"])
            time.sleep(int(m.group(1)))
    messages = [msg for rel in files for msg in check(root, rel)]
    if sys.argv[1] == "build":
        messages = [f"error: {m.split(': error: ')[0]}: {m.split(': error: ', 1)[1]}" if ": error: " in m
                    else f"warning: {m.replace(': warning: ', ': ', 1)}" for m in messages]
    print("\n".join(messages))
    failed = any(": error: " in m.split("\n")[0] or m.startswith("error:") for m in messages)
    if sys.argv[1] == "build" and failed:
        print("error: build failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
