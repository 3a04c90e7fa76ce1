"""The build gate: the changed Lean files and every project file importing them compile (of a change re-applied
onto a moved branch, those `GateInput.recheck` names: `gates.regate`)."""

from __future__ import annotations

import dataclasses
import hashlib
import posixpath
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path

from gates.base import Compiler, GateInput, GateResult
from gates.config import BuildConfig
from gates.diagnostics import CheckResult, parse_diagnostics
from gates.listing import TOOLCHAIN_FILES
from gates.probe import module_of
from gates.process import run
from gates.sandbox import Sandbox
from gates.tree import ChangeKind
from state.errors import InfraError

NAME = "build"
MAX_REPORTED = 12
# Toolchains `replay_available` said have leanchecker: one that has it keeps it, so each gate's replay need not
# start `lake env` to ask again. A no is not kept: it only ever skips the replay, and is asked again the next time.
_REPLAYABLE: set[str] = set()
SCRATCH_DIR = ".lake/autoformalize"  # in the Lake project: what the gates write for Lean to read, removed after
SCRATCH = "AutoformalizeSuccessors"  # the module prefix of the files `compile` writes there


@dataclass
class LakeCompiler:
    """Runs the configured `check_file` / `build_all` commands in a working copy, inside the sandbox."""

    root: Path
    config: BuildConfig
    sandbox: Sandbox
    outputs: bool = True  # whether its runs may write `.lake` (the build outputs the gates read)

    def check(self, path: str, module: str) -> CheckResult:
        return self._run(self.config.check_file, path, module)

    def build_all(self) -> CheckResult:
        return self._run(self.config.build_all, "", "")

    def probe(self, text: str, timeout_s: float | None = None) -> CheckResult:
        """`check_file` on `text` written under `.lake/` (which git ignores, so no gate sees it), removed after; within
        `timeout_s` when given, else `[build] timeout_s`."""
        return self._file(self.config.check_file, text, timeout_s)

    def read(self, text: str, timeout_s: float | None = None) -> CheckResult:
        """`read_file` on `text` as `probe` writes it. `.lake` stays as writable as the build's: newer Lake takes a
        lock under `.lake/config` for a dependency's `lakefile.lean` even to set up `lake env`."""
        return self._file(self.config.read_file, text, timeout_s)

    def _file(self, template: str, text: str, timeout_s: float | None) -> CheckResult:
        folder = self.sandbox.project(self.root) / SCRATCH_DIR
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"Probe{secrets.token_hex(6)}.lean"
        path.write_text(text, encoding="utf-8")
        try:
            return self._run(template, path.relative_to(self.root).as_posix(), "", timeout_s)
        finally:
            path.unlink(missing_ok=True)

    def compile(self, text: str, timeout_s: float | None = None) -> tuple[str, CheckResult]:
        """`compile_file` on `text` as a module of its own: its source under `.lake/autoformalize` (which git
        ignores), its `.olean` in `olean_dir`, where `read` finds it. The module's name, and what Lean said;
        `discard` removes both files."""
        module = f"{SCRATCH}.S{secrets.token_hex(6)}"
        source = self._scratch(module).with_suffix(".lean")
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(text, encoding="utf-8")
        olean = posixpath.join(self.config.olean_dir, *module.split(".")) + ".olean"
        try:
            result = self._run(self.config.compile_file, source.relative_to(self.root).as_posix(), module, timeout_s,
                               root=SCRATCH_DIR, olean=olean)
        except BaseException:
            self.discard(module)
            raise
        return module, result

    def discard(self, module: str) -> None:
        """The files `compile` wrote for `module`: its source, its `.olean` and what Lean writes beside it."""
        self._scratch(module).with_suffix(".lean").unlink(missing_ok=True)
        built = self.sandbox.project(self.root).joinpath(self.config.olean_dir, *module.split("."))
        for suffix in (".olean", ".ilean", ".ir", ".olean.server", ".olean.private"):
            built.with_name(built.name + suffix).unlink(missing_ok=True)

    def _scratch(self, module: str) -> Path:
        return self.sandbox.project(self.root).joinpath(SCRATCH_DIR, *module.split("."))

    def replay(self, modules: list[str]) -> CheckResult | None:
        """`replay` on the modules when `replay_available` says the toolchain has leanchecker; else None. A yes is
        asked once per process and toolchain (`_REPLAYABLE`); a no, every time."""
        toolchain = self._toolchain()
        if toolchain not in _REPLAYABLE:
            try:
                available = self._run(self.config.replay_available, "", "")
            except InfraError:
                return None
            if available.exit_code != 0:
                return None
            _REPLAYABLE.add(toolchain)
        listed = " ".join(shlex.quote(m) for m in modules)
        return self._run(self.config.replay.replace("{modules}", listed), "", "")

    def _toolchain(self) -> str:
        """What decides `replay_available`'s answer here: the command, the sandbox it runs in, and the files naming
        the toolchain and the dependencies (which no change may touch)."""
        h = hashlib.sha256(f"{self.config.replay_available}\0{self.sandbox.config!r}\0{self.sandbox.lake_dir}".encode())
        project = self.sandbox.project(self.root)
        for name in TOOLCHAIN_FILES:
            file = project / name
            h.update(b"\0" + name.encode() + b"\0" + (file.read_bytes() if file.is_file() else b"(none)"))
        return h.hexdigest()

    def _run(self, template: str, path: str, module: str, timeout_s: float | None = None, **fields: str) -> CheckResult:
        """`template` run where Lake runs, `path` (repository-relative) given relative to it, `fields` (relative to
        it already) in their places."""
        lake_dir = self.sandbox.lake_dir
        if path and lake_dir != ".":
            path = posixpath.relpath(path, lake_dir)
        args = [a.replace("{file}", path).replace("{module}", module) for a in shlex.split(template)]
        for key, value in fields.items():
            args = [a.replace("{" + key + "}", value) for a in args]
        # The Worker's Lean code runs here, at compile time (`#eval`, `initialize`…): confined to the sandbox.
        done = run(self.sandbox.wrap(args, self.root, outputs=self.outputs), self.sandbox.project(self.root),
                   self.config.timeout_s if timeout_s is None else timeout_s)
        self.sandbox.relink(self.root)  # it may have swapped `.lake/packages` for a link to anywhere
        diagnostics = parse_diagnostics(done.output)
        if lake_dir != ".":  # Lean names files relative to where it ran; the gates, relative to the repository
            diagnostics = [dataclasses.replace(d, file=_from_project(d.file, lake_dir)) for d in diagnostics]
        return CheckResult(" ".join(args), done.exit_code, done.output, done.seconds, diagnostics)


def reading(compiler: Compiler) -> Compiler:
    """`compiler` with `.lake` read-only to what it runs: for the Planner's and the Consultant's `lean_try`, whose
    code runs outside the Worker's session, where no record of the build outputs would undo a write to them."""
    return dataclasses.replace(compiler, outputs=False) if isinstance(compiler, LakeCompiler) else compiler


def _from_project(path: str, lake_dir: str) -> str:
    return path if posixpath.isabs(path) else posixpath.normpath(posixpath.join(lake_dir, path))


def check(inp: GateInput) -> GateResult:
    lean = inp.lean_changes()
    if not lean:
        return GateResult(NAME, True, "no Lean file changed")
    if inp.compiler is None:
        raise ValueError("the build gate needs a compiler")
    graph = inp.after.graph
    present = {c.path for c in lean if c.kind is not ChangeKind.DELETED}
    targets = graph.dependents({c.path for c in lean}) | present
    if not targets:
        return GateResult(NAME, True, "only deleted files, imported by no project file")
    if inp.recheck is not None and inp.recheck.files is not None:  # the others' verdicts carry over (`regate`)
        kept = len(targets - inp.recheck.files)
        targets &= inp.recheck.files
        if not targets:
            return GateResult(NAME, True, f"{kept} file(s) kept their verdict: {inp.recheck.why}")
    results: list[CheckResult] = []
    if len(targets) > inp.build.max_check_files:
        results.append(inp.compiler.build_all())
        # `build_all` builds what the library imports; a new file nothing imports is checked on its own.
        orphans = sorted(p for p in present if not graph.importers.get(p))
        results += [inp.compiler.check(p, module_of(p, inp.lean_roots)) for p in orphans]
        what = f"{len(targets)} affected files, so the whole project was built"
    else:
        for path in graph.order(targets):
            result = inp.compiler.check(path, module_of(path, inp.lean_roots))
            results.append(result)
            if not result.ok:
                break  # its importers would only repeat the failure
        checked = ", ".join(path for path in graph.order(targets))
        what = f"checked {len(results)} of {len(targets)} file(s) in import order: {checked}"
    return _verdict(results, what)


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
