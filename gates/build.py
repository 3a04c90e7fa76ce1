"""The build gate: the changed Lean files and every project file importing them compile."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from gates.base import GateInput, GateResult
from gates.config import BuildConfig
from gates.diagnostics import CheckResult, parse_diagnostics
from gates.imports import ImportGraph, module_name
from gates.process import run
from gates.tree import ChangeKind

NAME = "build"
MAX_REPORTED = 12


@dataclass
class LakeCompiler:
    """Runs the configured `check_file` / `build_all` commands in a working copy."""

    root: Path
    config: BuildConfig

    def check(self, path: str, module: str) -> CheckResult:
        return self._run(self.config.check_file, path, module)

    def build_all(self) -> CheckResult:
        return self._run(self.config.build_all, "", "")

    def _run(self, template: str, path: str, module: str) -> CheckResult:
        args = [a.replace("{file}", path).replace("{module}", module) for a in shlex.split(template)]
        done = run(args, self.root, self.config.timeout_s)
        return CheckResult(" ".join(args), done.exit_code, done.output, done.seconds, parse_diagnostics(done.output))


def check(inp: GateInput) -> GateResult:
    lean = inp.lean_changes()
    if not lean:
        return GateResult(NAME, True, "no Lean file changed")
    if inp.compiler is None:
        raise ValueError("the build gate needs a compiler")
    graph = ImportGraph(inp.after)
    present = {c.path for c in lean if c.kind is not ChangeKind.DELETED}
    targets = graph.dependents({c.path for c in lean}) | present
    if not targets:
        return GateResult(NAME, True, "only deleted files, imported by no project file")
    if len(targets) > inp.build.max_check_files:
        result = inp.compiler.build_all()
        return _verdict([result], f"{len(targets)} affected files, so the whole project was built")
    results: list[CheckResult] = []
    for path in graph.order(targets):
        result = inp.compiler.check(path, module_name(path))
        results.append(result)
        if not result.ok:
            break  # its importers would only repeat the failure
    checked = ", ".join(path for path in graph.order(targets))
    return _verdict(results, f"checked {len(results)} of {len(targets)} file(s) in import order: {checked}")


def _verdict(results: list[CheckResult], what: str) -> GateResult:
    failed = [r for r in results if not r.ok]
    if not failed:
        return GateResult(NAME, True, what)
    lines = [what]
    for r in failed:
        if r.exit_code is None:
            lines.append(f"`{r.command}` timed out after {r.seconds:.0f}s")
        elif r.errors:
            lines += [str(d) for d in r.errors[:MAX_REPORTED]]
            if len(r.errors) > MAX_REPORTED:
                lines.append(f"… and {len(r.errors) - MAX_REPORTED} more errors")
        else:
            tail = "\n".join(r.output.strip().splitlines()[-15:])
            lines.append(f"`{r.command}` exited with {r.exit_code} without a parseable error:\n{tail}")
    return GateResult(NAME, False, "\n".join(lines))
