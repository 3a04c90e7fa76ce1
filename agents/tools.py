"""The Worker's tools (SPEC §6), confined to its working copy.

Every path is resolved (symlinks included) and refused when it leaves the
working copy, enters `.git` or a build folder, is protected, or — for writes —
lies outside the Scope. The gates check the result again regardless: these
refusals save the Worker wasted turns, they are not the guard.

Every call's arguments and result pass through the known secrets' redaction:
a credential's value reaches neither the model nor a file the Worker writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.lsp import LeanServer, rooted
from agents.model import ToolCall, ToolResult, ToolSpec
from agents.provers import desk as provers
from agents.provers.desk import Declined, Desk
from gates.base import Compiler
from gates.census import census
from gates.config import GatesConfig
from gates.credentials import Secrets
from gates.index import Decl
from gates.issues import SLUG, SLUG_RULE, issue_dir, refusal, slug_of
from gates.probe import module_of
from gates.scope import in_scope, matches
from gates.tree import DirTree, ignored
from state.atomic import write_atomic
from state.history import ToolStat

MAX_READ_CHARS = 60_000
MAX_MATCHES = 200
MAX_DIAGNOSTICS = 60

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


def _schema(**props: tuple[str, str]) -> dict[str, Any]:
    """`name=(type, description)`; a description starting with '(optional)' marks it optional."""
    return {
        "type": "object",
        "properties": {k: {"type": t, "description": d} for k, (t, d) in props.items()},
        "required": [k for k, (_, d) in props.items() if not d.startswith("(optional)")],
    }


SPECS = [
    ToolSpec("read_file", "Read a file of the repository. Long files: ask for a line range.",
             _schema(path=("string", "Repository-relative path."),
                     start_line=("integer", "(optional) First line, 1-based."),
                     end_line=("integer", "(optional) Last line, inclusive."))),
    ToolSpec("write_file", "Create or replace a file. Only files in the Scope of strategy.md.",
             _schema(path=("string", "Repository-relative path."), content=("string", "The whole new content."))),
    ToolSpec("edit_file", "Replace one exact occurrence of old_string by new_string in a file in the Scope.",
             _schema(path=("string", "Repository-relative path."),
                     old_string=("string", "Text that occurs exactly once in the file."),
                     new_string=("string", "Its replacement."))),
    ToolSpec("list_files", "List repository files, optionally matching a glob (`**` crosses directories).",
             _schema(glob=("string", "(optional) e.g. `Book/Chapter3/**/*.lean`."))),
    ToolSpec("search", "Search file contents with a regular expression; returns file:line: text.",
             _schema(pattern=("string", "A Python regular expression."),
                     glob=("string", "(optional) Limit to files matching this glob."))),
    ToolSpec("lean_check", "Compile one Lean file and return Lean's diagnostics (errors, warnings).",
             _schema(path=("string", "Repository-relative path of a .lean file."))),
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
    handlers: dict[str, Callable[..., str]] = field(init=False)
    existing: set[str] = field(init=False)  # issues there before the session: not the Worker's to change
    opened: set[str] = field(init=False, default_factory=set)  # issues it opened this cycle

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        folder = self.root / issue_dir(self.state_dir)
        self.existing = {p.stem for p in folder.glob("*.md")} if folder.is_dir() else set()
        self.handlers = {
            "read_file": self.read_file, "write_file": self.write_file, "edit_file": self.edit_file,
            "list_files": self.list_files, "search": self.search, "lean_check": self.lean_check,
            "sorries": self.sorries, "read_declaration": self.read_declaration, "open_issue": self.open_issue,
            "submit_to_prover": self.submit_to_prover, "prover_result": self.prover_result,
            "apply_prover_result": self.apply_prover_result, "finish": self.finish,
        }

    def specs(self) -> list[ToolSpec]:
        """The tools offered now: the builtin ones, then the Lean server's (none once it is dropped)."""
        return [*SPECS, *(self.lsp.specs if self.lsp is not None else [])]

    def known(self, name: str) -> bool:
        return name in self.handlers or (self.lsp is not None and name in self.lsp.offered)

    def call(self, call: ToolCall) -> ToolResult:
        result = self._call(call.name, {k: self.secrets.redact(v) if isinstance(v, str) else v
                                        for k, v in call.arguments.items()})
        return ToolResult(call.id, self.secrets.redact(result[0]), result[1])

    def _call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        handler = self.handlers.get(name)
        if handler is None and self.lsp is not None and name in self.lsp.offered:
            return self.lsp.call(name, rooted(arguments, self.root))
        if handler is None:
            return f"unknown tool {name!r}; use one of {', '.join(s.name for s in self.specs())}", True
        return invoke(name, handler, arguments)

    # -- paths -------------------------------------------------------------

    def resolve(self, path: str, *, write: bool = False) -> tuple[Path, str]:
        """The real path and its repository-relative form; refuses escapes, protected and (writes) out-of-scope."""
        if not isinstance(path, str) or not path.strip():
            raise Refused("give a repository-relative path")
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
        files = DirTree(self.root).files()
        if glob:
            files = [f for f in files if matches(f, [glob])]
        shown = files[:1000]
        return "\n".join(shown) + (f"\n[… {len(files) - 1000} more]" if len(files) > 1000 else "") or "(no files)"

    def search(self, pattern: str, glob: str | None = None) -> str:
        regex = re.compile(pattern)
        tree = DirTree(self.root)
        hits: list[str] = []
        for rel in tree.files():
            if glob and not matches(rel, [glob]):
                continue
            try:
                text = tree.read(rel).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                if regex.search(line):
                    hits.append(f"{rel}:{number}: {line.strip()[:200]}")
                    if len(hits) >= MAX_MATCHES:
                        return "\n".join(hits) + f"\n[stopped at {MAX_MATCHES} matches; narrow the pattern]"
        return "\n".join(hits) or "(no matches)"

    def lean_check(self, path: str) -> str:
        _, rel = self.resolve(path)
        if not rel.endswith(".lean"):
            raise Refused(f"{rel} is not a Lean file")
        result = self.compiler.check(rel, module_of(rel, self.lean_roots))
        if result.exit_code is None:
            return f"timed out after {result.seconds:.0f}s"
        shown = [str(d) for d in result.diagnostics[:MAX_DIAGNOSTICS]]
        more = len(result.diagnostics) - len(shown)
        status = "ok" if result.ok else f"failed (exit {result.exit_code})"
        body = "\n".join(shown) if shown else result.output.strip()[-4000:]
        return f"{status}: {len(result.errors)} error(s)\n{body}" + (f"\n[… {more} more]" if more > 0 else "")

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
