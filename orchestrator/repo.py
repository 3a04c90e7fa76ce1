"""Finding the repository a command works on, and the Lean project inside it."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from state.errors import UsageError

LAKEFILES = ("lakefile.lean", "lakefile.toml")
LAKE_FILES = (*LAKEFILES, "lean-toolchain", "lake-manifest.json")
"""What decides how a Lake project builds, beside its sources."""
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
    """Repository-relative."""
    lake_dir: str = "."
    """The folder holding the project, repository-relative."""


def detect_lean_project(repo: Path, lake_dir: str = ".") -> LeanProject | None:
    """The lakefile, toolchain and library source roots of the Lake project in `lake_dir`, or None when that
    folder holds none."""
    folder = repo / lake_dir
    lakefile = next((name for name in LAKEFILES if (folder / name).is_file()), None)
    toolchain_file = folder / "lean-toolchain"
    toolchain = toolchain_file.read_text(encoding="utf-8", errors="replace").strip() if toolchain_file.is_file() \
        else None
    if lakefile is None and toolchain is None:
        return None
    roots = _library_roots(folder, lakefile) or _directories_with_lean(folder)
    prefix = "" if lake_dir == "." else f"{lake_dir}/"
    return LeanProject(lakefile, toolchain, [prefix + r for r in roots], lake_dir)


def lake_projects(repo: Path, depth: int = 3) -> list[str]:
    """The folders (repository-relative, at most `depth` below the root) holding a Lake project: a lakefile or
    a lean-toolchain. Never looks inside one (its own packages), nor in hidden or build folders."""
    found: list[str] = []
    todo = [(repo, 0)]
    while todo:
        folder, level = todo.pop()
        if any((folder / name).is_file() for name in (*LAKEFILES, "lean-toolchain")):
            found.append(folder.relative_to(repo).as_posix())
            continue
        if level < depth:
            todo += [(p, level + 1) for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
                     and not p.name.startswith(".") and p.name not in _NOT_ROOTS]
    return sorted(found)


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
        # Each `lean_lib` with the `srcDir` of its own `where` block (up to the next line starting a command);
        # the package's applies to a library that sets none.
        package = re.search(r"^package\b.*?(?=^\S)", text + "\nend", re.M | re.S)
        default = _src_dir(package.group()) if package else "."
        for m in re.finditer(r"^\s*lean_lib\s+(«[^»]+»|[\w.]+)(.*?)(?=^[^\s-]|\Z)", text, re.M | re.S):
            libs.append((m.group(1).strip("«»"), _src_dir(m.group(2), default)))
    roots = []
    for name, src in libs:
        root = (Path(src) / name.replace(".", "/")).as_posix().removeprefix("./")
        if (repo / root).is_dir() or (repo / f"{root}.lean").is_file():
            roots.append(root)
    return roots


def _src_dir(block: str, default: str = ".") -> str:
    m = re.search(r'srcDir\s*:=\s*"([^"]+)"', block)
    return m.group(1) if m else default


def _directories_with_lean(repo: Path) -> list[str]:
    return sorted(p.name for p in repo.iterdir()
                  if p.is_dir() and p.name not in _NOT_ROOTS and not p.name.startswith(".")
                  and next(p.rglob("*.lean"), None) is not None)
