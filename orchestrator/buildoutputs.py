"""The working copy's build outputs: whatever code run during the Worker's session wrote there is gone before a
gate compiles.

`.lake` is writable in the sandbox (Lake must write its outputs) and kept from
cycle to cycle (so builds stay incremental). Code the Worker wrote runs there
while it works — `lean_check`, a claude-code Worker's Bash — and could replace
an imported module's `.olean` (or `.lake/lakefile.olean`) keeping Lake's trace
valid: the build gate would then compile the change against it, and a false
proof would land. So:

- `take`, before the session (for a round item worked elsewhere, before its
  patch is applied here, `remote.adopt`): every file and link under `.lake` but
  `packages` (the shared dependencies, a link restored before and after every
  run) is recorded as (inode, ctime, size). ctime cannot be set from user
  space, and writing, renaming, linking or replacing a file changes it (or
  the inode).
- `restore`, before every gate run and after a rejected change's: every file
  that is new or whose record differs is deleted (a new directory whole), so
  Lake rebuilds it from the sources, under the gates. Nothing else is
  touched; no link is followed.
- `settle`, when the cycle has landed: a change that passed the gates keeps
  the outputs its gates built (they compiled it, and code of it ran only if
  `[gates] allow_build_time_code` let it), one that did not is restored; the
  record is then forgotten.

The record lives beside the working copy (its `….outputs.json`), out of the
sandbox's sight. A cycle killed before it settled leaves it behind, and
preparing the next cycle's working copy restores from it first.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import structlog

from state.atomic import write_atomic

SHARED = "packages"
"""`.lake/packages`: the dependencies, a link the sandbox restores; not build outputs of the working copy."""

log = structlog.get_logger()

Record = dict[str, list[int]]  # a path under `.lake` → [inode, ctime_ns, size], or [] for a directory


def take(work: Path, lake_dir: str = ".") -> None:
    """Record the build outputs of the working copy `work` (its Lake project in `lake_dir`) as they are now."""
    record: Record = {}
    lake = work / lake_dir / ".lake"
    if lake.is_dir():
        for rel, st in _walk(lake):
            record[rel] = [] if stat.S_ISDIR(st.st_mode) else [st.st_ino, st.st_ctime_ns, st.st_size]
    write_atomic(_path(work), json.dumps(record, separators=(",", ":")))


def restore(work: Path, lake_dir: str = ".") -> int:
    """Delete what is new or changed under `work`'s `.lake` since `take`; how many files and directories went.
    Without a record, nothing (no session ran since the last cycle settled)."""
    path = _path(work)
    if not path.is_file():
        return 0
    record: Record = json.loads(path.read_text(encoding="utf-8"))
    lake = work / lake_dir / ".lake"
    if not lake.is_dir():
        return 0
    removed = 0
    for rel, st in list(_walk(lake, keep=record)):
        target = lake / rel
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(target)
        else:
            target.unlink()
        removed += 1
    if removed:
        log.info("outputs.restored", removed=removed)
    return removed


def settle(work: Path, keep: bool, lake_dir: str = ".") -> None:
    """The cycle is over: keep the gates' outputs of a change they passed, else restore; forget the record."""
    if not keep:
        restore(work, lake_dir)
    _path(work).unlink(missing_ok=True)


def recover(work: Path, lake_dir: str = ".") -> None:
    """A cycle ended without settling (killed): restore from its record, and forget it."""
    if _path(work).is_file():
        settle(work, keep=False, lake_dir=lake_dir)


def _walk(lake: Path, keep: Record | None = None) -> list[tuple[str, os.stat_result]]:
    """Every entry under `lake` but `packages`, relative, with its lstat, never following a link. With `keep`,
    only those it does not hold as they are (not descending into a directory it does not hold: it goes whole)."""
    out: list[tuple[str, os.stat_result]] = []
    todo = [""]
    while todo:
        rel_dir = todo.pop()
        with os.scandir(lake / rel_dir) as entries:
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if rel == SHARED:
                    continue
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    if keep is None or keep.get(rel) == []:
                        todo.append(rel)
                    if keep is None or keep.get(rel) != []:
                        out.append((rel, st))
                elif keep is None or keep.get(rel) != [st.st_ino, st.st_ctime_ns, st.st_size]:
                    out.append((rel, st))
    return out


def _path(work: Path) -> Path:
    return work.parent / f"{work.name}.outputs.json"
