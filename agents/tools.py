"""The Worker's tools (SPEC §6), confined to its working copy and, for reading, its dependencies' sources.

Every path is resolved (symlinks included) and refused when it leaves the
working copy, enters `.git` or a build folder, is protected, or — for writes —
lies outside the Scope. The gates check the result again regardless: these
refusals save the Worker wasted turns, they are not the guard.

The dependencies (Mathlib…) are read where the Lake project's `.lake/packages`
pointed when the Workspace was made, never written: `read_file` takes a path
under it, `list_files` and `search` a glob under it (their Lean files only,
not their git and build folders). A listing or search of the project says it
left them out and how to ask; one of the dependencies, which packages it
covered; a search stops at `MAX_MATCHES` matches or after `SEARCH_S` seconds.

Every call's arguments and result pass through the known secrets' redaction:
a credential's value reaches neither the model nor a file the Worker writes.
"""

from __future__ import annotations

import os
import posixpath
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents import goals
from agents.lsp import LeanServer, rooted
from agents.model import ToolCall, ToolResult, ToolSpec
from agents.provers import desk as provers
from agents.provers.desk import Declined, Desk
from gates.base import Compiler
from gates.build import SCRATCH_DIR
from gates.census import census
from gates.config import GatesConfig
from gates.credentials import Secrets
from gates.diagnostics import CheckResult, parse_diagnostics
from gates.index import Decl
from gates.issues import SLUG, SLUG_RULE, issue_dir, refusal, slug_of
from gates.probe import module_of
from gates.scope import in_scope, matches
from gates.tree import NOT_SOURCES, DirTree, ignored
from state.atomic import write_atomic
from state.history import ToolStat

PACKAGES = Path(".lake") / "packages"  # in the Lake project's folder: the dependencies' sources


def dependencies(lake_dir: str) -> str:
    """The dependencies' folder as the repository names it (`PACKAGES` in the Lake project's folder)."""
    return posixpath.normpath(posixpath.join(lake_dir, PACKAGES.as_posix()))

SCRATCH = ".scratch"
"""The scratch folder for experiments: the Worker's tools may write Lean files there whatever the Scope, and it is
put back as the base has it before any gate runs, so nothing there lands and nothing that lands may import it."""
TRY = ToolSpec("lean_try", "Lean's answer on a scratch file of its own, removed after: does `theorem t : … := by "
               "sorry` elaborate, what do `#check`, `exact?` say.", {"type": "object", "properties": {"code": {
                   "type": "string", "description": "The whole file, `import` lines first."}}, "required": ["code"]})
MAX_READ_CHARS = 60_000
MAX_MATCHES = 200
SEARCH_S = 20.0  # a search of the dependencies stops after this long (all of Mathlib takes about a second)
MAX_DIAGNOSTICS = 60
MAX_INFO_CHARS = 4_000  # of one information message Lean printed without a position, its end kept
_PROBE = "probe.lean:1:0: info: probe"  # a header: whatever the diagnostics' parser appends to it continues it

def _declaration(text: str, path: str, name: str) -> Decl:
    found = provers.declaration(text, path, name)
    if found is None:
        raise Refused(f"{path} has no single declaration named {name!r}")
    return found


class Refused(Exception):
    """A tool call the Worker may not make; the message goes back to it."""


def invoke(name: str, handler: Callable[..., str], arguments: dict[str, Any]) -> tuple[str, bool]:
    """`handler`'s answer to `arguments` and whether it is an error: a refusal, wrong arguments or a failed read
    are told to the model, never raised."""
    try:
        return handler(**arguments), False
    except Refused as e:
        return f"refused: {e}", True
    except TypeError as e:  # wrong or missing arguments
        return f"bad arguments for {name}: {e}", True
    except (OSError, UnicodeDecodeError, re.error) as e:
        return f"{name} failed: {e}", True


@dataclass(frozen=True)
class Tool:
    """A tool the caller adds (`find_declaration`): its spec, and the function its arguments are passed to."""

    spec: ToolSpec
    run: Callable[..., str]


def _schema(**props: tuple[str, str]) -> dict[str, Any]:
    """`name=(type, description)`; a description starting with '(optional)' marks it optional."""
    return {
        "type": "object",
        "properties": {k: {"type": t, "description": d} for k, (t, d) in props.items()},
        "required": [k for k, (_, d) in props.items() if not d.startswith("(optional)")],
    }


YIELDING = frozenset({"lean_goal"})
"""Builtin tools a Lean server's tool of the same name stands in for while it runs: it answers at any position of a
file, from the elaboration it holds, where the builtin one checks a copy."""
PROVER_TOOLS = ("submit_to_prover", "prover_result", "apply_prover_result")  # offered while the prover is on
SPECS = [
    ToolSpec("read_file", "Read a file of the repository. Long files: ask for a line range.",
             _schema(path=("string", "Repository-relative path."),
                     start_line=("integer", "(optional) First line, 1-based."),
                     end_line=("integer", "(optional) Last line, inclusive."))),
    ToolSpec("write_file", "Create or replace a file in the Scope of strategy.md, or a scratch file under `.scratch/`.",
             _schema(path=("string", "Repository-relative path."), content=("string", "The whole new content."))),
    ToolSpec("edit_file", "Replace one exact occurrence of old_string by new_string in a file in the Scope.",
             _schema(path=("string", "Repository-relative path."),
                     old_string=("string", "Text that occurs exactly once in the file."),
                     new_string=("string", "Its replacement."))),
    ToolSpec("list_files", "List repository files, optionally matching a glob (`**` crosses directories). The "
             "dependencies' Lean files (Mathlib…) are listed only for a glob under `.lake/packages/`.",
             _schema(glob=("string", "(optional) e.g. `Book/Chapter3/**/*.lean` or "
                                     "`.lake/packages/mathlib/Mathlib/Order/**/*.lean`."))),
    ToolSpec("search", "Search file contents with a regular expression; returns file:line: text. The dependencies' "
             "Lean files (Mathlib…) are searched only for a glob under `.lake/packages/`.",
             _schema(pattern=("string", "A Python regular expression."),
                     glob=("string", "(optional) Limit to files matching this glob, e.g. "
                                     "`.lake/packages/mathlib/Mathlib/Order/**/*.lean`."))),
    ToolSpec("lean_check", "Compile one Lean file and return Lean's messages (errors, warnings, and information: "
             "`#check`, `exact?`'s `Try this`).",
             _schema(path=("string", "Repository-relative path of a .lean file."))),
    ToolSpec("lean_goal", "The goals Lean shows before and after the tactic that starts on a line of a tactic proof "
             "(on a line ending in `by` or `=>`: at the start of its block), from a check of a copy of the file.",
             _schema(path=("string", "Repository-relative path of a .lean file."),
                     line=("integer", "The line, 1-based."))),
    ToolSpec("sorries", "The current sorry and admit locations, with their declarations.", _schema()),
    ToolSpec("read_declaration", "Show the source of a declaration by (qualified or final part of its) name.",
             _schema(name=("string", "e.g. `Book.Chapter3.rk_order` or `rk_order`."))),
    ToolSpec("submit_to_prover", "Hand declarations holding a sorry to the external prover; a job takes tens of "
             "minutes and its result reaches a later cycle.",
             _schema(declarations=("string", "Declaration names, separated by commas."))),
    ToolSpec("prover_result", "Show the external prover's returned proof of a declaration.",
             _schema(declaration=("string", "e.g. `Book.Chapter3.rk_order` or `rk_order`."))),
    ToolSpec("apply_prover_result", "Replace a declaration in its file (in the Scope) by the external prover's "
             "returned version; check it with lean_check like any edit.",
             _schema(declaration=("string", "e.g. `Book.Chapter3.rk_order` or `rk_order`."))),
    ToolSpec("open_issue", "Record a blocker for the next cycles: what is stuck, why, what was tried.",
             _schema(slug=("string", "File name: lowercase letters, digits, '-', '_'."),
                     body=("string", "Markdown explaining WHY it is blocked."))),
    ToolSpec("finish", "End the session. The report becomes this cycle's task result.",
             _schema(report=("string", "What you did, tried and suggest next. A sorry-count rise needs a line "
                                       "`RESTRUCTURING: <rationale>`; making a Lean file over the size cap "
                                       "longer, a line `SPLITTING: <rationale>`."))),
]


@dataclass
class Tally:
    """A session's tool calls by name: how many, and the seconds they took (the record's `tool_calls`)."""

    calls: dict[str, ToolStat] = field(default_factory=dict)

    def add(self, name: str, seconds: float, count: int = 1) -> None:
        stat = self.calls.setdefault(name, ToolStat())
        stat.count += count
        stat.seconds = round(stat.seconds + max(0.0, seconds), 3)


@dataclass
class Workspace:
    """The Worker's working copy and what it may touch."""

    root: Path
    scope: list[str]
    protected: list[str]
    state_dir: str
    lean_roots: list[str]
    compiler: Compiler
    desk: Desk | None = None  # the external prover, when the cycle has one
    secrets: Secrets = field(default_factory=Secrets)  # values redacted from every argument and result
    report: str | None = None  # set by `finish`
    gates: GatesConfig = field(default_factory=GatesConfig)  # the bounds on the issues it may open
    lsp: LeanServer | None = None  # lean-lsp-mcp's tools, when configured and running
    lake_dir: str = "."  # the Lake project's folder, whose `.lake/packages` holds the dependencies' sources
    extra: list[Tool] = field(default_factory=list)  # the caller's tools (`find_declaration`)
    handlers: dict[str, Callable[..., str]] = field(init=False)
    existing: set[str] = field(init=False)  # issues there before the session: not the Worker's to change
    opened: set[str] = field(init=False, default_factory=set)  # issues it opened this cycle
    deps: str = field(init=False)  # the dependencies' folder, repository-relative
    # Where it resolved when the Workspace was made (the main checkout's, for a working copy): code the Worker runs
    # may re-point the link, and reads never follow it again. None: the project has no dependencies here.
    packages: Path | None = field(init=False)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        folder = self.root / issue_dir(self.state_dir)
        self.existing = {p.stem for p in folder.glob("*.md")} if folder.is_dir() else set()
        self.deps = dependencies(self.lake_dir)
        self.packages = (self.root / self.deps).resolve() if (self.root / self.deps).is_dir() else None
        self.handlers = {
            "read_file": self.read_file, "write_file": self.write_file, "edit_file": self.edit_file,
            "list_files": self.list_files, "search": self.search, "lean_check": self.lean_check,
            "lean_goal": self.lean_goal, "sorries": self.sorries, "read_declaration": self.read_declaration,
            "open_issue": self.open_issue,
            "submit_to_prover": self.submit_to_prover, "prover_result": self.prover_result,
            "apply_prover_result": self.apply_prover_result, "finish": self.finish,
            **{t.spec.name: t.run for t in self.extra},
        }

    def specs(self) -> list[ToolSpec]:
        """The tools offered now: the builtin ones (the prover's only while it is on; `YIELDING` ones only while the
        Lean server offers none of their name), the caller's, then the Lean server's (none once it is dropped)."""
        prover = self.desk is not None and not self.desk.off
        served = self.lsp.names if self.lsp is not None else set()
        return [*(s for s in SPECS if (prover or s.name not in PROVER_TOOLS) and s.name not in served),
                *(t.spec for t in self.extra), *(self.lsp.specs if self.lsp is not None else [])]

    def known(self, name: str) -> bool:
        return name in self.handlers or (self.lsp is not None and name in self.lsp.offered)

    def call(self, call: ToolCall) -> ToolResult:
        result = self._call(call.name, {k: self.secrets.redact(v) if isinstance(v, str) else v
                                        for k, v in call.arguments.items()})
        return ToolResult(call.id, self.secrets.redact(result[0]), result[1])

    def _call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        handler = self.handlers.get(name)
        if self.lsp is not None and name in self.lsp.offered and (handler is None or name in self.lsp.names):
            return self.lsp.call(name, rooted(arguments, self.root))
        if handler is None:
            return f"unknown tool {name!r}; use one of {', '.join(s.name for s in self.specs())}", True
        return invoke(name, handler, arguments)

    # -- paths -------------------------------------------------------------

    def resolve(self, path: str, *, write: bool = False) -> tuple[Path, str]:
        """The real path and its repository-relative form; refuses escapes, protected and (writes) out-of-scope."""
        if not isinstance(path, str) or not path.strip():
            raise Refused("give a repository-relative path")
        dependency = self._dependency(path)
        if dependency is not None:
            if write:
                raise Refused(f"{path} is a dependency's source (under {self.deps}/): read-only")
            return dependency
        real = (self.root / path).resolve()
        try:
            rel = real.relative_to(self.root).as_posix()
        except ValueError:
            raise Refused(f"{path} is outside the repository") from None
        if rel.split("/")[0] == ".git":
            raise Refused(f"{path} is in the git folder")
        if ignored(self.root, rel):
            raise Refused(f"{path} is ignored by git: it would never be committed")
        if write:
            for name in {path.removeprefix("./"), rel}:
                if matches(name, self.protected):
                    raise Refused(f"{name} is protected")
                slug = slug_of(name, self.state_dir)
                if slug is not None:
                    self._may_open(slug)
                    continue
                if name.startswith(f"{self.state_dir}/"):
                    raise Refused(f"{name} belongs to the orchestrator; blockers go to open_issue")
                if not in_scope(name, self.scope):
                    raise Refused(f"{name} is outside the Scope ({', '.join(self.scope)}: Lean files, and other "
                                  f"files only where an entry names them); blockers go to open_issue")
        return real, rel

    def _dependency(self, path: str) -> tuple[Path, str] | None:
        """A path under the dependencies' folder: its real path there and its repository-relative form; refused when
        it leads out of that folder or into a package's git or build folder. None: a path elsewhere."""
        if self.packages is None:
            return None
        try:
            inner = Path(os.path.normpath(self.root / path)).relative_to(self.root / self.deps)
        except ValueError:
            return None
        real = (self.packages / inner).resolve()
        try:
            rel = real.relative_to(self.packages)
        except ValueError:
            raise Refused(f"{path} leads out of the dependencies' folder {self.deps}/") from None
        if NOT_SOURCES.intersection(rel.parts):
            raise Refused(f"{path} is in a dependency's git or build folder; only its sources are read")
        return real, posixpath.join(self.deps, rel.as_posix()) if rel.parts else self.deps

    def _may_open(self, slug: str, size: int = 0) -> None:
        why = refusal(slug, exists=slug in self.existing, opened=len(self.opened - {slug}), size=size,
                      gates=self.gates)
        if why:
            raise Refused(why)
        self.opened.add(slug)

    def _sized(self, rel: str, content: str, fresh: bool) -> None:
        """An issue's text is bounded: refused before it is written, and then not counted as opened. `fresh`: the
        issue was not opened before this call."""
        slug = slug_of(rel, self.state_dir)
        if slug is None:
            return
        try:
            self._may_open(slug, len(content))
        except Refused:
            if fresh:
                self.opened.discard(slug)
            raise

    # -- tools -------------------------------------------------------------

    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        real, rel = self.resolve(path)
        if not real.is_file():
            raise Refused(f"{rel} is not a file")
        lines = real.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        first = max(1, start_line or 1)
        last = min(len(lines), end_line or len(lines))
        text = "".join(lines[first - 1:last])
        if len(text) > MAX_READ_CHARS:
            cut = text[:MAX_READ_CHARS]
            shown = first + cut.count("\n") - 1
            return f"{cut}\n[… truncated: lines {first}–{shown} of {len(lines)} shown; ask for a line range]"
        return text

    def write_file(self, path: str, content: str) -> str:
        fresh = len(self.opened)
        real, rel = self.resolve(path, write=True)
        self._sized(rel, content, len(self.opened) > fresh)
        write_atomic(real, content)
        return f"wrote {rel} ({content.count(chr(10)) + 1} lines)"

    def edit_file(self, path: str, old_string: str, new_string: str) -> str:
        fresh = len(self.opened)
        real, rel = self.resolve(path, write=True)
        text = real.read_text(encoding="utf-8")
        count = text.count(old_string) if old_string else 0
        if count != 1:
            raise Refused(f"old_string occurs {count} times in {rel}; it must occur exactly once (add context)")
        self._sized(rel, text.replace(old_string, new_string, 1), len(self.opened) > fresh)
        write_atomic(real, text.replace(old_string, new_string, 1))
        return f"edited {rel}"

    def list_files(self, glob: str | None = None) -> str:
        if glob and self._in_dependencies(glob):
            files = [rel for rel, _ in self._sources(glob)]
            note = f"\n[listed {self._covered(files)}]" if files else f"\n[{self._none(glob)}]"
        else:
            files = DirTree(self.root).files()
            if glob:
                files = [f for f in files if matches(f, [glob])]
            note = self._left_out("listed")
        shown = files[:1000]
        listing = "\n".join(shown) + (f"\n[… {len(files) - 1000} more]" if len(files) > 1000 else "") or "(no files)"
        return listing + note

    def search(self, pattern: str, glob: str | None = None) -> str:
        regex = re.compile(pattern)
        if glob and self._in_dependencies(glob):
            return self._search_dependencies(regex, glob)
        tree = DirTree(self.root)
        hits: list[str] = []
        for rel in tree.files():
            if glob and not matches(rel, [glob]):
                continue
            try:
                text = tree.read(rel).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if _grep(regex, rel, text, hits):
                return "\n".join(hits) + f"\n[stopped at {MAX_MATCHES} matches; narrow the pattern]"
        return ("\n".join(hits) or "(no matches)") + self._left_out("searched")

    def _search_dependencies(self, regex: re.Pattern[str], glob: str) -> str:
        hits: list[str] = []
        searched: list[str] = []
        started = time.monotonic()
        for rel, real in self._sources(glob):
            if time.monotonic() - started > SEARCH_S:
                return "\n".join([*hits, f"[stopped after {SEARCH_S:.0f} s, having searched "
                                          f"{self._covered(searched)}; narrow the glob]"])
            try:
                text = real.read_text("utf-8", "replace")
            except OSError:  # a link to nothing, say: one file unread is no failed search
                continue
            searched.append(rel)
            if _grep(regex, rel, text, hits):
                return "\n".join([*hits, f"[stopped at {MAX_MATCHES} matches, having searched "
                                          f"{self._covered(searched)}; narrow the pattern or the glob]"])
        if not searched:
            return f"(no matches)\n[{self._none(glob)}]"
        return ("\n".join(hits) or "(no matches)") + f"\n[searched {self._covered(searched)}]"

    def _in_dependencies(self, glob: str) -> bool:
        return self.packages is not None and f"{glob.removeprefix('./')}/".startswith(f"{self.deps}/")

    def _sources(self, glob: str) -> Iterator[tuple[str, Path]]:
        """The dependencies' Lean files `glob` (under `deps`) matches, repository-relative, with their real paths.
        The walk starts at the glob's folder before its first wildcard, stays in the dependencies' folder and skips
        the packages' git and build folders."""
        assert self.packages is not None
        head = glob.removeprefix("./")[len(self.deps) + 1:].split("/")[:-1]
        fixed = head[:next((i for i, part in enumerate(head) if any(c in part for c in "*?[")), len(head))]
        start = self.packages.joinpath(*fixed)
        if not self._within(start.resolve()):
            raise Refused(f"{glob} leads out of the dependencies' folder {self.deps}/")
        for folder, dirs, names in os.walk(start):
            dirs[:] = sorted(d for d in dirs if d not in NOT_SOURCES)
            for name in sorted(names):
                path = Path(folder) / name
                rel = f"{self.deps}/{path.relative_to(self.packages).as_posix()}"
                if name.endswith(".lean") and matches(rel, [glob]) and (
                        not path.is_symlink() or self._within(path.resolve())):
                    yield rel, path

    def _within(self, real: Path) -> bool:
        assert self.packages is not None
        return real == self.packages or self.packages in real.parents

    def _left_out(self, done: str) -> str:
        """The line saying the dependencies were not `done`, and how to ask for them; nothing without any."""
        if self.packages is None:
            return ""
        names = sorted(p.name for p in self.packages.iterdir() if p.is_dir() and p.name not in NOT_SOURCES)
        if not names:
            return ""
        first = "mathlib" if "mathlib" in names else names[0]
        return (f"\n[the dependencies under {self.deps}/ ({', '.join(names[:6])}{', …' if len(names) > 6 else ''}) "
                f"were not {done}: give a glob under it, e.g. `{self.deps}/{first}/**/*.lean`]")

    def _covered(self, files: list[str]) -> str:
        """How many dependencies' files were taken, and of which package folders."""
        packages = sorted({f[len(self.deps) + 1:].split("/")[0] for f in files})
        return f"{len(files)} Lean file(s) of {self.deps}/ ({', '.join(packages)})"

    def _none(self, glob: str) -> str:
        return f"no Lean file of the dependencies matches {glob}"

    def lean_check(self, path: str) -> str:
        _, rel = self.resolve(path)
        if not rel.endswith(".lean"):
            raise Refused(f"{rel} is not a Lean file")
        if self._dependency(rel) is not None:
            raise Refused(f"{rel} is a dependency's source; check a file of the project (a scratch file under "
                          "`.scratch/` that imports it)")
        result = self.compiler.check(rel, module_of(rel, self.lean_roots))
        if result.exit_code is None:
            return f"timed out after {result.seconds:.0f}s"
        messages = _messages(result) if result.diagnostics else []  # else Lean's output is shown, its end kept
        shown = messages[:MAX_DIAGNOSTICS]
        more = len(messages) - len(shown)
        status = "ok" if result.ok else f"failed (exit {result.exit_code})"
        body = "\n".join(shown) if shown else result.output.strip()[-4000:]
        return f"{status}: {len(result.errors)} error(s)\n{body}" + (f"\n[… {more} more]" if more > 0 else "")

    def lean_goal(self, path: str, line: int) -> str:
        target, rel = self.resolve(path)
        if not rel.endswith(".lean") or self._dependency(rel) is not None:
            raise Refused(f"{rel} is not a Lean file of the project")
        if not target.is_file():
            raise Refused(f"no file {rel}")
        if isinstance(line, bool) or not isinstance(line, int):
            raise Refused(f"line must be a whole number, not {repr(line)[:40]}")
        try:
            marks = goals.marked(target.read_text(encoding="utf-8"), line)
        except ValueError as e:
            raise Refused(str(e)) from None
        result = self.compiler.probe(marks.text)
        if result.exit_code is None:
            return f"timed out after {result.seconds:.0f}s"
        try:
            found = goals.read(result.output, marks)
        except ValueError as e:
            return str(e)
        parts = []
        for point, said in zip(marks.points, found, strict=True):
            if said is None:
                parts.append(f"{point.label}: not reached — Lean stopped before it (an error above), or this is not a "
                             "line where a tactic starts")
            else:
                parts.append(f"{point.label}:\n{said or 'no goals'}")
        # The copy's own errors, at the file's lines; those of the files it imports, which Lake built first, by their
        # first line (Lean's bare messages after one read as its continuation): `lean_check` shows them whole.
        own = [d for d in result.errors if f"{SCRATCH_DIR}/" in d.file]
        errors = []
        for d in own[:3]:
            at, inserted = marks.original(d.line)
            note = " [at the goal view's own lines: give a line where a tactic starts]" if inserted else ""
            errors.append(f"{rel}:{at}:{d.column}: error: {d.message}{note}")
        if errors:
            more = len(own) - len(errors)
            parts.append("Lean's errors in the file:\n" + "\n".join(errors) + (f"\n[… {more} more]" if more else ""))
        if imported := [d for d in result.errors if d not in own]:
            parts.append("Lean's errors in the files it imports:\n" + "\n".join(
                f"{d.file}:{d.line}:{d.column}: error: {d.message.partition(chr(10))[0]}" for d in imported[:3]) + (
                f"\n[… {len(imported) - 3} more]" if len(imported) > 3 else ""))
        elif not errors and result.exit_code != 0:  # no error Lean placed: Lake's, or Lean's own end
            parts.append(f"Lean failed (exit {result.exit_code}):\n{result.output.strip()[-2000:]}")
        return "\n\n".join(parts)

    def try_lean(self, code: str) -> str:
        """`code` checked by Lean as a scratch file of its own (the `lean_try` tool of the Planner and the
        Consultant), which is gone once Lean has answered."""
        rel = f"{SCRATCH}/Try_{os.getpid()}_{time.monotonic_ns()}.lean"
        path = self.root / rel
        path.parent.mkdir(exist_ok=True)
        write_atomic(path, code)
        try:
            return self.lean_check(rel)
        finally:
            path.unlink(missing_ok=True)

    def sorries(self) -> str:
        result = census(DirTree(self.root), self.lean_roots)
        lines = [f"{loc.file}:{loc.line}:{loc.column}: {loc.keyword} in {loc.declaration or '(unnamed)'}"
                 for loc in result.locations()]
        return "\n".join([f"{result.total_sorries} sorry, {result.total_admits} admit", *lines])

    def read_declaration(self, name: str) -> str:
        result = census(DirTree(self.root), self.lean_roots)
        found = [(path, d) for path, d in result.decls()
                 if d.name and (d.name == name or d.name.endswith("." + name))]
        if not found:
            raise Refused(f"no declaration named {name!r}")
        out = []
        for path, d in found[:5]:
            assert d.source is not None
            out.append(f"-- {path}:{d.line} ({d.kind} {d.name})\n{d.source.text[d.start:d.end]}")
        return "\n\n".join(out)

    def _desk(self) -> Desk:
        if self.desk is None:
            raise Refused("the external prover is off")
        if self.desk.off:
            raise Refused(f"the external prover is off: {self.desk.off}")
        return self.desk

    def submit_to_prover(self, declarations: str) -> str:
        names = [n.strip().strip("`") for n in declarations.split(",") if n.strip()]
        try:
            tree = DirTree(self.root)
            job = self._desk().submit(names, tree, census(tree, self.lean_roots))
        except Declined as e:
            raise Refused(str(e)) from None
        return f"submitted job {job.id}: " + ", ".join(t.declaration for t in job.targets)

    def prover_result(self, declaration: str) -> str:
        proof = self._desk().proof(declaration)
        if proof is None:
            raise Refused(f"no returned proof of {declaration!r}")
        return f"-- job {proof.job}, for {proof.file}\n{proof.text}"

    def apply_prover_result(self, declaration: str) -> str:
        desk = self._desk()
        proof = desk.proof(declaration)
        if proof is None:
            raise Refused(f"no returned proof of {declaration!r}")
        real, rel = self.resolve(proof.file, write=True)
        text = real.read_text(encoding="utf-8")
        d = _declaration(text, rel, declaration)
        if provers.signature(d) != proof.statement:
            raise Refused(f"the returned proof of {d.name} is of another statement than the one in {rel} now; "
                          "read it with prover_result and take from it what still fits")
        write_atomic(real, text[:d.start] + proof.text + text[d.end:])
        assert d.name is not None
        desk.applied[d.name] = proof.job
        return f"replaced {d.name} in {rel} by the proof of job {proof.job}; run lean_check on it"

    def open_issue(self, slug: str, body: str) -> str:
        if not SLUG.fullmatch(slug):
            raise Refused(f"slug: {SLUG_RULE}")
        fresh = len(self.opened)
        real, rel = self.resolve(f"{self.state_dir}/issues/{slug}.md", write=True)
        text = body if body.endswith("\n") else body + "\n"
        self._sized(rel, text, len(self.opened) > fresh)
        write_atomic(real, text)
        return f"wrote {rel}"

    def finish(self, report: str) -> str:
        self.report = report
        return "session finished"


def _grep(regex: re.Pattern[str], rel: str, text: str, hits: list[str]) -> bool:
    """Add `text`'s lines `regex` matches to `hits`; True when they reach `MAX_MATCHES`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if regex.search(line):
            hits.append(f"{rel}:{number}: {line.strip()[:200]}")
            if len(hits) >= MAX_MATCHES:
                return True
    return False


def _messages(result: CheckResult) -> list[str]:
    """Lean's messages in the order it printed them: each diagnostic, and each information message (`#check`,
    `exact?`'s `Try this`) it printed without a position where the diagnostics' parser keeps none — before any
    positioned message or after a line of Lake's. One that follows a positioned message is in that message's text:
    without a position nothing tells the two apart."""
    diagnostics = iter(result.diagnostics)
    out: list[str] = []
    bare: list[str] = []  # the lines of an information message
    inside = False  # in a positioned message, which holds the lines that follow it
    for line in result.output.splitlines():
        header = bool(parse_diagnostics(line))
        lakes = not header and _lakes(line)
        if not (header or lakes or inside):
            bare.append(line)
            continue
        if bare:
            out.append(_info("\n".join(bare)))
            bare = []
        if header:
            out += [str(d) for d in [next(diagnostics, None)] if d is not None]
        inside = header or (inside and not lakes)
    out.append(_info("\n".join(bare)))
    return [m for m in out if m] + [str(d) for d in diagnostics]


def _lakes(line: str) -> bool:
    """Whether `line` is Lake's own (progress, summary): the diagnostics' parser never continues a message with
    it. A blank line is not."""
    return bool(line.strip()) and parse_diagnostics(f"{_PROBE}\n{line}")[0].message == "probe"


def _info(text: str) -> str:
    text = text.strip()
    cut = text if len(text) <= MAX_INFO_CHARS else f"[…] {text[-MAX_INFO_CHARS:]}"  # as Lean's output alone is cut
    return f"information: {cut}" if cut else ""
