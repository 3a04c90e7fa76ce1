"""What Lean does with the IO of an `#eval` while it compiles a file, for the stand-in checker (stdlib only).

Real Lean runs `#eval e` during elaboration (src/Lean/Elab/BuiltinEvalCommand.lean):
what the program prints is captured and logged as one information message at
the `#eval` token; a value other than `Unit` is logged as a second one (its
`ToExpr` or `Repr` form: `some "x"`, `"a\\nb"`, `{ exitCode := 0, … }`); an
`IO.Error` is logged as an error at the token, in `IO.Error.toString`'s words
(`no such file or directory (error code: 2)\\n  file: p`; EACCES, EROFS and
EPERM are `permissionDenied`, worded by `strerror`, src/runtime/io.cpp). The
`lean` command line prints information messages bare and errors as
`FILE:LINE:COL: error: MESSAGE`. The code runs with the compiler's rights, in
its working directory: here, the stand-in's own, so whatever confines the
stand-in confines it.

The forms it knows; any other `#eval` prints nothing:

    #eval IO.FS.writeFile "PATH" "TEXT"
    #eval IO.FS.createDirAll "PATH"
    #eval IO.FS.readFile "PATH"
    #eval IO.getEnv "NAME"
    #eval IO.sleep MS
    #eval IO.Process.output { cmd := "CMD", args := #["A", …] }
    #eval discard <| IO.Process.spawn { cmd := "CMD", args := #["A", …] }
    #eval do
      for entry in ← System.FilePath.readDir "DIR" do
        try IO.println (← IO.FS.readFile (entry.path / "NAME")) catch _ => pure ()
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

STRING = r'"((?:[^"\\]|\\.)*)"'
ARGS = r"\{\s*cmd\s*:=\s*" + STRING + r"\s*(?:,\s*args\s*:=\s*#\[((?:\s*" + STRING + r"\s*,?)*)\]\s*)?\}"
EVAL = re.compile(r"^#eval\b(.*?)(?=^\S|\Z)", re.M | re.S)


class LeanIOError(Exception):
    """An `IO.Error`, already in `IO.Error.toString`'s words."""


def run_evals(path: Path) -> list[tuple[int, str, str]]:
    """Run the `#eval` commands of the file at `path` as Lean would; the messages Lean reports for them, as
    (line, severity, text): what the program printed and its value are information, an IO error an error."""
    text = path.read_text(encoding="utf-8")
    out: list[tuple[int, str, str]] = []
    for m in EVAL.finditer(_without_comments(text)):
        line = text.count("\n", 0, m.start()) + 1
        term = " ".join(m.group(1).split())
        try:
            printed, value = _evaluate(term)
        except LeanIOError as e:
            out.append((line, "error", str(e)))
            continue
        out += [(line, "info", m) for m in (printed.removesuffix("\n"), value) if m]
    return out


def _evaluate(term: str) -> tuple[str, str]:
    """(what the program printed, the value's form or "" for `Unit`)."""
    forms: list[tuple[str, Callable[..., tuple[str, str]]]] = [
        (rf"IO\.FS\.writeFile {STRING} {STRING}", _write),
        (rf"IO\.FS\.createDirAll {STRING}", _make_dirs),
        (rf"IO\.FS\.readFile {STRING}", lambda p: ("", quote(_read(_string(p))))),
        (rf"IO\.getEnv {STRING}", _getenv),
        (r"IO\.sleep (\d+)", lambda ms: (time.sleep(int(ms) / 1000), ("", ""))[1]),
        (rf"IO\.Process\.output {ARGS}", _output),
        (rf"discard <\| IO\.Process\.spawn {ARGS}", _spawn),
        (rf"do for (\w+) in ← System\.FilePath\.readDir {STRING} do try IO\.println \(← IO\.FS\.readFile "
         rf"\(\1\.path / {STRING}\)\) catch _ => pure \(\)", _read_all),
    ]
    for pattern, action in forms:
        m = re.fullmatch(pattern, term)
        if m:
            return action(*[g for g in m.groups() if g is not None])
    return "", ""


def _write(path: str, text: str) -> tuple[str, str]:
    target = _string(path)
    try:
        with open(target, "w", encoding="utf-8") as f:
            f.write(_string(text))
    except OSError as e:
        raise LeanIOError(_io_error(e, target)) from None
    return "", ""


def _make_dirs(path: str) -> tuple[str, str]:
    """`IO.FS.createDirAll`: every missing folder of the path made, an existing one left (`System.FilePath`)."""
    target = _string(path)
    try:
        os.makedirs(target, exist_ok=True)
    except OSError as e:
        raise LeanIOError(_io_error(e, target)) from None
    return "", ""


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        raise LeanIOError(_io_error(e, path)) from None


def _getenv(name: str) -> tuple[str, str]:
    value = os.environ.get(_string(name))
    return "", "none" if value is None else f"some {quote(value)}"


def _command(cmd: str, args: str | None) -> list[str]:
    return [_string(cmd), *(_string(a) for a in re.findall(STRING, args or ""))]


def _output(cmd: str, args: str | None = None, *_: str) -> tuple[str, str]:
    try:
        done = subprocess.run(_command(cmd, args), capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              check=False)
    except OSError as e:
        raise LeanIOError(_io_error(e, None)) from None
    return "", f"{{ exitCode := {done.returncode}, stdout := {quote(done.stdout)}, stderr := {quote(done.stderr)} }}"


def _spawn(cmd: str, args: str | None = None, *_: str) -> tuple[str, str]:
    try:
        subprocess.Popen(_command(cmd, args), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    except OSError as e:
        raise LeanIOError(_io_error(e, None)) from None
    return "", ""


def _read_all(_: str, directory: str, name: str) -> tuple[str, str]:
    root = _string(directory)
    try:
        entries = sorted(os.listdir(root))
    except OSError as e:
        raise LeanIOError(_io_error(e, root)) from None
    printed = []
    for entry in entries:
        try:
            printed.append(_read(os.path.join(root, entry, _string(name))) + "\n")
        except LeanIOError:
            continue  # `catch _ => pure ()`
    return "".join(printed), ""


def _io_error(e: OSError, path: str | None) -> str:
    """`IO.Error.toString` of the error Lean's runtime makes of `e`."""
    code = e.errno or 0
    details = os.strerror(code)
    gist = "no such file or directory" if code == errno.ENOENT else details[:1].lower() + details[1:]
    return f"{gist} (error code: {code})" + (f"\n  file: {path}" if path is not None else "")


def _string(literal: str) -> str:
    """The value of a Lean string literal's body."""
    simple = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "\r"}

    def escape(m: re.Match[str]) -> str:
        body = m.group(1)
        if body[0] in simple:
            return simple[body[0]]
        if body[0] == "x":
            return chr(int(body[1:3], 16))
        return chr(int(body[2:-1], 16))  # \u{…}

    return re.sub(r"\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)", escape, literal)


def quote(s: str) -> str:
    """Lean's `String.quote`: how a string value is shown."""
    out = []
    for c in s:
        if c in "\n\t\\\"":
            out.append({"\n": "\\n", "\t": "\\t", "\\": "\\\\", '"': '\\"'}[c])
        elif ord(c) <= 31 or c == "\x7f":
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _without_comments(text: str) -> str:
    """`text` with line and (nested) block comments blanked, strings kept, so offsets and lines stay."""
    out, i, depth = list(text), 0, 0
    while i < len(text):
        if depth == 0 and text[i] == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("/-", i):
            depth += 1
            out[i] = out[i + 1] = " "
            i += 2
        elif depth and text.startswith("-/", i):
            depth -= 1
            out[i] = out[i + 1] = " "
            i += 2
        elif depth == 0 and text.startswith("--", i):
            while i < len(text) and text[i] != "\n":
                out[i] = " "
                i += 1
        else:
            if depth and text[i] != "\n":
                out[i] = " "
            i += 1
    return "".join(out)
