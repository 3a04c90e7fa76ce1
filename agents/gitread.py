"""The project's history, read-only: the `git` tool (log, show, blame) of the Planner and the Worker.

Each reads the branch as the cycle found it (`rev`, the base commit), never the working copy or another ref, with
`git` run on an argument list (no shell), options fixed by the tool: a revision or path an agent names may not
start with `-`, so it cannot pass for one. An answer is cut at `MAX_CHARS`, saying so.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agents.model import ToolSpec
from agents.tools import Refused, Tool, _schema

MAX_CHARS = 12_000
MAX_COMMITS = 50
TIMEOUT_S = 30
_REV = re.compile(r"^[\w./~^@{}-]+$")


@dataclass(frozen=True)
class GitReader:
    root: Path  # a checkout whose object store holds `rev`
    rev: str  # the commit the cycle started from

    def tools(self) -> list[Tool]:
        return [Tool(ToolSpec(
            "git", "The project's history, read-only. log: commits, newest first (touching `path`, or whose "
            "message holds `grep`); show: a `commit`'s message and diff; blame: each line of `path` with its commit.",
            _schema(action=("string", "log, show or blame."), path=("string", "(optional)"),
                    commit=("string", "(optional) for show"), grep=("string", "(optional) for log"),
                    start_line=("integer", "(optional) for blame"), end_line=("integer", "(optional) for blame"))),
            self.run)]

    def run(self, action: str, path: str | None = None, commit: str | None = None, grep: str | None = None,
            start_line: int | None = None, end_line: int | None = None) -> str:
        if action == "log":
            return self.log(path, grep)
        if action == "show":
            return self.show(commit or "", path)
        if action == "blame":
            return self.blame(path or "", start_line, end_line)
        raise Refused(f"action {action!r}: give log, show or blame")

    def log(self, path: str | None = None, grep: str | None = None) -> str:
        matching = [f"--grep={grep}", "--fixed-strings", "--regexp-ignore-case"] if grep else []
        args = ["log", f"-{MAX_COMMITS}", "--format=%h %ad %s", "--date=short", *matching, self.rev, "--",
                *([_path(path)] if path else [])]
        return self._git(args) or "(no commits)"

    def show(self, commit: str, path: str | None = None) -> str:
        if not _REV.match(commit) or commit.startswith("-"):
            raise Refused(f"{commit!r} is not a commit hash")
        if self._run(["merge-base", "--is-ancestor", commit, self.rev]).returncode != 0:
            raise Refused(f"{commit} is not on the branch as this cycle found it")
        return self._git(["show", "--stat", "--patch", "--format=%h %ad %an%n%n%B", "--date=short", commit, "--",
                          *([_path(path)] if path else [])])

    def blame(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        lines = [f"-L{max(1, start_line or 1)},{end_line}"] if end_line else (
            [f"-L{start_line},"] if start_line else [])
        return self._git(["blame", "--date=short", *lines, self.rev, "--", _path(path)])

    def _git(self, args: list[str]) -> str:
        """git's answer, cut at `MAX_CHARS`; its failure, refused with git's last line."""
        done = self._run(args)
        if done.returncode != 0:
            raise Refused(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"git {args[0]} failed")
        out = done.stdout
        return out if len(out) <= MAX_CHARS else out[:MAX_CHARS] + f"\n[… {len(out) - MAX_CHARS:,} more characters: " \
                                                                   "narrow it by path or line range]"


    def _run(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=self.root, capture_output=True,
                                  text=True, errors="replace", timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise Refused(f"git took over {TIMEOUT_S} s: narrow it by path or line range") from None


def _path(path: str) -> str:
    if not isinstance(path, str) or not path.strip() or path.startswith(("-", "/")) or ".." in path.split("/"):
        raise Refused(f"{path!r}: give a repository-relative path")
    return path
