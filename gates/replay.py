"""The kernel's replay where the toolchain has no `leanchecker` (before v4.28): a program of ours (`replay.lean`)
reads the `.olean` of each project module asked about and adds every constant they hold to the environment of
what they import from outside the project, through Lean's kernel (`Lean.Environment.replay`). Run as the probe's
program is (`[build] read_file`, `lake env lean`: nothing built, no plugin of the project loaded), over the same
build outputs.

What it prints, framed as the probe's lines are (`gates.env.frames`):
- `["P", parts, file, n]`: a module asked about, the `.olean` it was read from, its number of constants;
- `["S", parts, suffix]`: that module keeps a part beside it (`.olean.private`: Lean's module system), unread here;
- `["R", toolchain, project]` and `["F", parts, file]`: as the probe prints them, for every module of the
  environment the others are added to (what they import from outside the set), which the gates account for;
- `["K", checked, held, copies]`: the kernel added again `checked` constants, and each of the `copies` (a theorem
  another module of the set holds too) under a name of its own; `held` are theorems the environment holds already
  with the same statement (a lemma Lean makes on demand in whichever module asks first). Or `["D", message]`: the
  kernel refused one, and why.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from gates.env import Compiler, Unreadable, failed, filled, frames, header, printed, unaccounted

CANNOT = (" (a toolchain this program cannot run on needs leanchecker, from Lean v4.28, or `[gates] kernel_replay "
          "= \"off\"`)")


@dataclass
class Replayed:
    """What one replay answered."""

    files: dict[str, str] = field(default_factory=dict)  # each module read → its `.olean`
    constants: int = 0  # what those hold
    apart: list[str] = field(default_factory=list)  # modules keeping a part this program does not read
    loaded: dict[str, str] = field(default_factory=dict)  # every module of the environment → its `.olean`
    project: str = ""  # the folder Lean ran in
    checked: tuple[int, int, int] | None = None  # (added again, held already, copies), when the kernel added all
    refused: str | None = None  # the kernel's message, when it refused one


def program(nonce: str, modules: list[str]) -> str:
    return filled("replay.lean", nonce, modules)


def read(output: str, nonce: str) -> Replayed:
    """The program's answer in `output`. Raises `Unreadable` unless every line is in place and it ends in a
    verdict."""
    out = Replayed()
    for item in frames(output, nonce):
        match item:
            case ["P", list(parts), str(file), int(n)]:
                out.files[printed(parts)] = file
                out.constants += n
            case ["S", list(parts), str()]:
                out.apart.append(printed(parts))
            case ["R", str(), str(project)]:
                out.project = project
            case ["F", list(parts), str(file)]:
                out.loaded[printed(parts)] = file
            case ["K", int(checked), int(held), int(copies)]:
                out.checked = (checked, held, copies)
            case ["D", str(message)]:
                out.refused = message
            case _:
                raise Unreadable(f"a line the program never prints: {str(item)[:200]}")
    if (out.checked is None) == (out.refused is None):
        raise Unreadable("no single verdict of the kernel")
    return out


def check(compiler: Compiler, modules: list[str], files: dict[str, str], ours: set[str]) -> tuple[list[str], str]:
    """The kernel's replay of `modules` (project modules, named as Lean prints them; `files`: the `.olean` the probe's
    listing loaded for those it loaded): the problems (none when every constant was added again, from those files,
    on an environment of modules all accounted for, with no module of `ours` taken as it is), and what was
    checked."""
    # A module the listing did not load this time (it came from the cache) may never have been built here: built
    # first, as the probe builds what it reads, so the program reads what its source builds to now.
    if unbuilt := [m for m in modules if m not in files]:
        built = compiler.probe(header(unbuilt))
        if not built.ok:
            return [failed(built, f"the modules to replay do not build ({', '.join(unbuilt[:6])})")], ""
    nonce = secrets.token_hex(12)
    ran = compiler.read(program(nonce, modules))
    if ran.exit_code is None:
        return [f"the kernel's replay timed out after {ran.seconds:.0f}s (`[build] timeout_s`)"], ""
    if "PANIC" in ran.output:  # Lean carries on past a panic with a default value: nothing after it is taken
        return [failed(ran, "Lean panicked while replaying the project's modules")], ""
    try:
        got = read(ran.output, nonce)
    except Unreadable as e:
        return [failed(ran, f"the kernel's replay could not be read ({e}){CANNOT}")], ""
    if not ran.ok:
        return [failed(ran, f"Lean reported an error while replaying the project's modules in its kernel{CANNOT}")], ""
    if got.refused is not None:
        # `Lean.Environment.replay` checks under the default heartbeats, whatever `maxHeartbeats` the declaration was
        # elaborated under; leanchecker checks without a limit.
        heavy = (" (this replay checks each declaration within Lean's default `maxHeartbeats`; leanchecker, from Lean "
                 "v4.28, checks without a limit)" if "deterministic timeout" in got.refused else "")
        return [f"Lean's kernel refused a constant of the project's modules as it added them again (a declaration "
                f"stored without its check, or an `.olean` not written from checked code): {got.refused[:2000]}"
                f"{heavy}"], ""
    problems = [f"{m}: the replay did not read it" for m in modules if m not in got.files]
    problems += [f"{m}: the replay read {got.files[m]}, the listing {files[m]}" for m in modules
                 if m in got.files and m in files and got.files[m] != files[m]]
    problems += [f"{m}: it keeps a part apart (Lean's module system), which this replay does not read; leanchecker "
                 "(Lean v4.28 on) does" for m in got.apart]
    problems += [f"{m}: a module of the project the replay took as it is, unchecked" for m in got.loaded
                 if m in ours and m not in got.files]
    problems += unaccounted(got.loaded, got.project, ours)
    assert got.checked is not None
    if sum(got.checked) != got.constants:
        problems.append(f"the replay accounts for {sum(got.checked)} of the {got.constants} constants it read")
    return problems, f"Lean's kernel added again the {got.constants} constants of {', '.join(modules)}"
