"""Finding the repository a command works on, and the Lean project inside it."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from state.errors import UsageError

LAKEFILES = ("lakefile.lean", "lakefile.toml")
# Folders never guessed to be a Lean root: build outputs and dependency checkouts.
_NOT_ROOTS = frozenset({"build", "lake-packages", "node_modules", "venv"})


def find_repo(start: Path | None) -> Path:
    """The root of the git repository containing `start` (default: the current directory)."""
    here = (start or Path.cwd()).resolve()
    if not here.exists():
        raise UsageError(f"{here} does not exist")
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    raise UsageError(f"{here} is not inside a git repository; run this in your Lean project's repository "
                     "or pass --repo DIR")


@dataclass(frozen=True)
class LeanProject:
    lakefile: str | None
    toolchain: str | None
    roots: list[str]


def detect_lean_project(repo: Path) -> LeanProject | None:
    """The lakefile, toolchain and library source roots, or None when `repo` holds no Lean project."""
    lakefile = next((name for name in LAKEFILES if (repo / name).is_file()), None)
    toolchain_file = repo / "lean-toolchain"
    toolchain = toolchain_file.read_text(encoding="utf-8", errors="replace").strip() if toolchain_file.is_file() \
        else None
    if lakefile is None and toolchain is None:
        return None
    roots = _library_roots(repo, lakefile) or _directories_with_lean(repo)
    return LeanProject(lakefile, toolchain, roots)


def _library_roots(repo: Path, lakefile: str | None) -> list[str]:
    """The `lean_lib` directories the lakefile declares, where they exist."""
    if lakefile is None:
        return []
    text = (repo / lakefile).read_text(encoding="utf-8", errors="replace")
    libs: list[tuple[str, str]] = []  # (name, srcDir)
    if lakefile.endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return []
        src = str(data.get("srcDir", "."))
        for lib in data.get("lean_lib", []):
            if isinstance(lib, dict) and "name" in lib:
                libs.append((str(lib["name"]), str(lib.get("srcDir", src))))
    else:
        src_match = re.search(r'srcDir\s*:=\s*"([^"]+)"', text)
        src = src_match.group(1) if src_match else "."
        libs = [(name.strip("«»"), src) for name in re.findall(r"^\s*lean_lib\s+(«[^»]+»|[\w.]+)", text, re.M)]
    roots = []
    for name, src in libs:
        root = (Path(src) / name.replace(".", "/")).as_posix().removeprefix("./")
        if (repo / root).is_dir() or (repo / f"{root}.lean").is_file():
            roots.append(root)
    return roots


def _directories_with_lean(repo: Path) -> list[str]:
    return sorted(p.name for p in repo.iterdir()
                  if p.is_dir() and p.name not in _NOT_ROOTS and not p.name.startswith(".")
                  and next(p.rglob("*.lean"), None) is not None)
