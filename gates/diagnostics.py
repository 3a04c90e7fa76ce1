"""Lean's diagnostics, as `lean`, `lake env lean`, `lake lean` and `lake build` print them.

    path:line:col: error: message            lean (col is 0-based, in code points)
    path:line:col-l2:c2: error(name): message newer lean, with an end position and a name
    error: ././path:line:col: message         lake build (older lake also repeats `error:`)

Lines that follow a header without one of their own continue its message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    column: int
    severity: Severity
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"


@dataclass
class CheckResult:
    """One compiler run: its command, exit status, output and parsed diagnostics."""

    command: str
    exit_code: int | None  # None when it timed out
    output: str
    seconds: float
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.errors


_SEV = r"(?P<{0}>error|warning|info|information)(?:\([^)\n]*\))?"
_POS = r"(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+)(?:-\d+:\d+)?"
_LAKE = re.compile(rf"^{_SEV.format('prefix')}: {_POS}: (?:{_SEV.format('sev')}: )?(?P<msg>.*)$")
_LEAN = re.compile(rf"^{_POS}: {_SEV.format('sev')}: (?P<msg>.*)$")
# Lake's progress and summary lines, which never continue a message.
_LAKE_NOISE = re.compile(
    r"^(?:[✔⚠✖ℹ] )?\[\d+/\d+\]|^(?:error|warning|info|trace): |^Build completed|^All targets up-to-date"
    r"|^Nothing to build|^Some required (?:targets|builds) logged failures|^- [\w.«»]+$|^Build summary"
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def parse_diagnostics(output: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    current: dict[str, object] | None = None
    continuation: list[str] = []

    def flush() -> None:
        if current is not None:
            message = "\n".join([str(current["msg"]), *continuation]).rstrip()
            out.append(Diagnostic(str(current["file"]), int(str(current["line"])), int(str(current["col"])),
                                  _severity(str(current["sev"])), message))

    for raw in _ANSI.sub("", output).splitlines():
        m = _LAKE.match(raw) or _LEAN.match(raw)
        if m is not None:
            flush()
            groups = m.groupdict()
            current = {"file": _normalise(groups["file"]), "line": groups["line"], "col": groups["col"],
                       "sev": groups.get("sev") or groups.get("prefix"), "msg": groups["msg"]}
            continuation = []
        elif current is not None and not _LAKE_NOISE.match(raw):
            continuation.append(raw)
        else:
            flush()
            current, continuation = None, []
    flush()
    return out


def _severity(word: str) -> Severity:
    return Severity.INFO if word == "information" else Severity(word)


def _normalise(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path
