"""Lean's listing of a tree's modules (`gates.env`): from a cache where a module's import closure was listed before,
else asked of Lean, one probe for all that is missing.

A module's listing depends on its file's content, the content of every project file it imports (transitively),
the toolchain and the dependencies, and nothing else Lean reads (a Lake file or the toolchain changing changes
every key; with `[gates] allow_build_time_code`, `include_str` can read other files, which the kernel gate then
treats as changing every module). Its cache key is the digest of all of them (`closure_keys`), so an equal key
means an equal listing. The cache is a folder of one JSON file per key; one that cannot be read is dropped and
asked again, never trusted.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from gates import env, hooks
from gates.census import Census
from gates.config import GatesConfig
from gates.env import Module
from gates.probe import modules_of
from gates.tree import Tree, is_lean_source
from state.atomic import read_kept, write_atomic

log = structlog.get_logger()
KEPT = 20_000  # listings the cache keeps; the oldest go first
TOOLCHAIN_FILES = ("lean-toolchain", "lake-manifest.json", "lakefile.lean", "lakefile.toml")
MAX_HOOKS = 6


def toolchain(root: Path) -> str:
    """A digest of what Lean's answers depend on beyond the sources (the toolchain, the dependencies' versions, the
    Lake files) and of the listing's format: listings and meanings compare only under the same one."""
    h = hashlib.sha256(f"environment format {env.FORMAT}\0".encode())
    for name in TOOLCHAIN_FILES:
        file = root / name
        h.update(name.encode() + b"\0" + (file.read_bytes() if file.is_file() else b"(none)") + b"\0")
    return h.hexdigest()[:16]


def chain(toolchain_digest: str, tree: Tree, roots: list[str], gates: GatesConfig, state_dir: str) -> str:
    """What every key is computed under: the toolchain's digest and, where build-time code may read any file
    (`include_str`, with `[gates] allow_build_time_code`), the content of every file of `tree` but its Lean sources
    and the orchestrator's state (which no change may write, and every cycle rewrites)."""
    if not gates.allow_build_time_code:
        return toolchain_digest
    h = hashlib.sha256(toolchain_digest.encode())
    state = state_dir.strip("/") + "/"
    for path in sorted(tree.files()):
        if not is_lean_source(path, roots) and not path.startswith(state):
            h.update(path.encode() + b"\0" + hashlib.sha256(tree.read(path)).digest())
    return h.hexdigest()[:16]


def closure_keys(census: Census, chain: str) -> dict[str, str]:
    """Per Lean file: the digest of its content, of every project file it imports (transitively), and of `chain`."""
    graph = census.graph
    out: dict[str, str] = {}
    for path in graph.order(set(census.files)):  # imports first
        content = census.files[path].digest
        parts = [chain, path, content, *sorted(out.get(q, q) for q in graph.imports.get(path, ()))]
        out[path] = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
    return out


# Listings read or written lately, by folder and key: a process running cycle after cycle (the daemon) parses an
# unchanged module's listing once. A listing is never changed once made.
_LIVE: OrderedDict[tuple[Path, str], Module] = OrderedDict()
_LOCK = threading.Lock()
LIVE = 2_048  # listings kept in memory at most, the latest used
SPARE = 4  # listings kept beyond a tree's own (`Cache.settle`)


@dataclass
class Cache:
    """Listings by closure key, one file each."""

    folder: Path

    def get(self, key: str) -> Module | None:
        with _LOCK:
            if (found := _LIVE.get((self.folder, key))) is not None:
                _LIVE.move_to_end((self.folder, key))
                return found
        module = self._read(key)
        if module is not None:
            self._remember(key, module)
        return module

    def settle(self, keys: set[str]) -> None:
        """Keep in memory this folder's listings of `keys` (a tree's closure keys) and `SPARE` others, the latest
        used: those of contents gone are not asked for again."""
        with _LOCK:
            others = [k for k in _LIVE if k[0] == self.folder and k[1] not in keys]
            for k in others[:max(0, len(others) - SPARE)]:
                del _LIVE[k]

    def _remember(self, key: str, module: Module) -> None:
        with _LOCK:
            _LIVE[(self.folder, key)] = module
            _LIVE.move_to_end((self.folder, key))
            while len(_LIVE) > LIVE:
                _LIVE.popitem(last=False)

    def _read(self, key: str) -> Module | None:
        module = read_kept(self.folder / f"{key}.json", Module)
        return module if module is not None and module.format == env.FORMAT else None

    def put(self, key: str, module: Module) -> None:
        write_atomic(self.folder / f"{key}.json", module.model_dump_json())
        self._remember(key, module)

    def trim(self, kept: int = KEPT) -> None:
        """Drop the oldest listings beyond `kept`."""
        try:
            entries = [e for e in os.scandir(self.folder) if e.name.endswith(".json")]
        except OSError:
            return
        if len(entries) <= kept:
            return
        entries.sort(key=lambda e: e.stat().st_mtime)
        for e in entries[:len(entries) - kept]:
            Path(e.path).unlink(missing_ok=True)


@dataclass
class Gathered:
    """The listings of the files asked for, by path; what kept Lean from answering; what it cost."""

    modules: dict[str, Module] = field(default_factory=dict)
    problem: str | None = None
    fresh: dict[str, tuple[str, Module]] = field(default_factory=dict)  # path → (key, listing) Lean gave now
    files: dict[str, str] = field(default_factory=dict)  # of a probe run now: each module Lean loaded → its file
    project: str = ""  # of a probe run now: the folder Lean ran in, the Lake project's
    runs: int = 0
    seconds: float = 0.0


def gather(compiler: env.Compiler, census: Census, roots: list[str], paths: Iterable[str], chain: str,
           cache: Cache | None, *, known: dict[str, Module] | None = None) -> Gathered:
    """The listing of every file of `paths` and of every project file they import (what their constants reach):
    `known`'s where it has one (the caller vouches that its closure is the same), else `cache`'s where it holds the
    file's closure key, else asked of Lean, all at once."""
    wanted = census.graph.imported(paths)
    keys = closure_keys(census, chain)
    names = modules_of(census, roots)
    known = known or {}
    out = Gathered()
    missing: list[str] = []
    for path in sorted(wanted):
        found = known.get(path) or (cache.get(keys[path]) if cache is not None else None)
        if found is not None and found.module == names[path]:
            out.modules[path] = found
        else:
            missing.append(path)
    if not missing:
        return out
    asked = [names[p] for p in missing]
    if refused := hooks.refused(census, asked):
        shown = "; ".join(refused[:MAX_HOOKS]) + (f"; … and {len(refused) - MAX_HOOKS} more"
                                                  if len(refused) > MAX_HOOKS else "")
        out.problem = ("Lean was not asked: the modules to list import project code that runs as they are loaded, and "
                       f"could write what Lean answers ({shown}); remove it, or move it where no module the gates list "
                       "imports it")
        return out
    answer = env.ask(compiler, asked)
    out.runs, out.seconds = answer.runs, answer.seconds
    log.info("listing.asked", modules=len(asked), runs=answer.runs, seconds=round(answer.seconds, 2),
             lines=answer.lines, problem=(answer.problem or "")[:200])
    if answer.problem is not None:
        out.problem = answer.problem
        return out
    out.files, out.project = answer.files, answer.project or ""
    for path in missing:
        module = answer.modules[names[path]]
        out.modules[path] = module
        out.fresh[path] = (keys[path], module)
    return out
