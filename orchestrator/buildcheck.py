"""Does the branch build? Asked before planning: a failing build is fixed before anything else."""

from __future__ import annotations

from dataclasses import dataclass, field

from gates import build
from gates.base import Compiler, GateInput
from gates.config import BuildConfig, GatesConfig
from gates.tree import DirTree, Tree, is_lean_source


@dataclass
class BuildStatus:
    ok: bool
    detail: str
    failing: list[str] = field(default_factory=list)  # files with errors
    errors: list[str] = field(default_factory=list)


def check(*, compiler: Compiler, verified: Tree | None, changed_since: list[str] | None, work: DirTree,
          build_config: BuildConfig, lean_roots: list[str], ci: str | None) -> BuildStatus:
    """Check what could have broken since the last commit the loop verified.

    `verified` is that commit's tree and `changed_since` the paths changed after it; without them
    (a first cycle), or when CI reports a failure, the whole project is built to find the failing files.
    """
    if ci != "failure" and verified is not None and changed_since is not None:
        if not any(is_lean_source(p, lean_roots) for p in changed_since):
            return BuildStatus(True, "builds (no Lean file changed since the last verified commit)")
        inp = GateInput(base=verified, changed=work, gates=GatesConfig(), build=build_config, lean_roots=lean_roots,
                        state_dir="", scope=[], report="", cycle=0, compiler=compiler, candidates=changed_since)
        verdict = build.check(inp)
        if verdict.passed:
            return BuildStatus(True, f"builds: {verdict.detail}")
        return _failing(verdict.detail, [line for line in verdict.detail.splitlines() if ": error" in line])
    result = compiler.build_all()
    note = " (CI reports a failure)" if ci == "failure" else ""
    if result.ok:
        return BuildStatus(True, f"builds: `{result.command}` passed{note}")
    errors = [str(d) for d in result.errors] or result.output.strip().splitlines()[-20:]
    return _failing(f"`{result.command}` failed{note}", errors)


def _failing(detail: str, errors: list[str]) -> BuildStatus:
    failing = sorted({e.split(":", 1)[0] for e in errors if e.split(":", 1)[0].endswith(".lean")})
    return BuildStatus(False, detail, failing, errors)
