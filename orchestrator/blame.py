"""How long each sorry has stood: `git blame` of the census's hole lines.

A sorry whose line nobody has touched for `sorry_age_days` is one the Planner
keeps steering around; naming it, oldest first, is what gets it picked up.
A line moved or edited counts as changed (no `-M`): the age is of the text as
it stands.

Blame walks a file's history, tens of milliseconds a file; a cycle changes
few files, so what blame said is kept per (path, content) in the git
directory, one file each (`autoformalize/blame/`), and only new contents are
blamed, several at a time; a process keeps what it read, so the daemon reads
an unchanged file's ages once. An entry that cannot be read is blamed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from gates.census import Census
from gates.chosen import shown
from orchestrator.git import Git
from state.atomic import write_atomic

_HEADER = re.compile(r"^([0-9a-f]{40}) \d+ (\d+)(?: \d+)?$")
SPARE = 4  # entries kept beyond those in use: in memory, and (beyond twice them) on disk


@dataclass(frozen=True)
class SorryAge:
    declaration: str  # the enclosing declaration, or where it is when it has no name
    file: str
    line: int
    age_days: float
    commit: str  # the commit that last changed the line; zeros when it is not committed
    summary: str  # that commit's subject

    def to_json(self) -> dict[str, object]:
        return {"declaration": self.declaration, "file": self.file, "line": self.line,
                "age_days": round(self.age_days, 1), "commit": self.commit, "summary": self.summary}

    def describe(self) -> str:
        """One line, every string in it chosen by a Worker (or, the subject, derived from its report) rendered by
        `shown`: a prompt shows this line as data."""
        return (f"{shown(self.declaration)} ({shown(self.file)}:{self.line}): unchanged for {self.age_days:.0f} days, "
                f"since {self.commit[:12]} {shown(repr(self.summary), 200)}")


Blamed = dict[int, tuple[str, int, str]]  # line → (commit, committer time, subject)


def ages(git: Git, rev: str | None, census: Census, now: datetime, *, keep: bool = True, at_least: float = 0.0
         ) -> list[SorryAge]:
    """Every hole line of `census` at least `at_least` days old, with the age of its last change at `rev` (the
    working tree when None), oldest first. One `git blame` per file with holes whose content is not in the cache,
    limited to their lines; the cache is updated unless `keep` is false (a dry run writes nothing)."""
    owners: dict[str, dict[int, str]] = {}
    for path, index in census.files.items():
        for h in index.holes:
            owners.setdefault(path, {}).setdefault(
                h.line, h.declaration or (f"({h.owner})" if h.owner else "(outside declarations)"))
    if not owners:
        return []
    paths = sorted(owners)
    blobs = dict(zip(paths, _blobs(git, rev, paths), strict=True))
    folder = Path(git.run("rev-parse", "--absolute-git-dir")) / "autoformalize" / "blame"
    cache = {key: found for p in paths if (found := _get(folder, key := _key(p, blobs[p]))) is not None}
    missing = [p for p in paths if _key(p, blobs[p]) not in cache]

    def blame(path: str) -> Blamed:
        ranges = [a for start, end in _runs(sorted(owners[path])) for a in ("-L", f"{start},{end}")]
        return _parse(git.run("blame", "--line-porcelain", *ranges, *([rev] if rev else []), "--", path))

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        fresh = dict(zip(missing, pool.map(blame, missing), strict=True))
    out: list[SorryAge] = []
    days: dict[int, float] = {}  # committer time → age; many lines share a commit
    for path in paths:
        blamed = fresh[path] if path in fresh else cache[_key(path, blobs[path])]
        for line, (commit, when, summary) in blamed.items():
            if line in owners[path]:
                if when not in days:
                    days[when] = max(0.0, (now - datetime.fromtimestamp(when, UTC)).total_seconds() / 86400)
                if days[when] >= at_least:
                    out.append(SorryAge(owners[path][line], path, line, days[when], commit, summary))
    if keep and rev is not None and fresh:  # uncommitted lines are not worth keeping
        for path, blamed in fresh.items():
            _put(folder, _key(path, blobs[path]), blamed)
        _trim(folder, {_key(p, blobs[p]) for p in paths})
    _forget(len(paths))
    return sorted(out, key=lambda a: (-a.age_days, a.file, a.line))


def persistent(git: Git, rev: str | None, census: Census, now: datetime, days: float, *, keep: bool = True
               ) -> list[SorryAge]:
    """The holes whose line is unchanged for `days` or more, oldest first."""
    return ages(git, rev, census, now, keep=keep, at_least=days)


def _blobs(git: Git, rev: str | None, paths: list[str]) -> list[str]:
    """The content hash of each path, at `rev` (from the commit's listing) or in the working tree."""
    if rev is None:
        return git.run("hash-object", "--", *paths).split("\n")
    listed = git.blobs(rev)
    if all(p in listed for p in paths):
        return [listed[p] for p in paths]
    return git.run("rev-parse", *(f"{rev}:{p}" for p in paths)).split("\n")


def _key(path: str, blob: str) -> str:
    return f"{blob} {path}"


# Entries read or written lately, by folder and key: the last call's, and `SPARE` more.
_LIVE: OrderedDict[tuple[Path, str], Blamed] = OrderedDict()
_LOCK = threading.Lock()


def _file(folder: Path, key: str) -> Path:
    return folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _get(folder: Path, key: str) -> Blamed | None:
    with _LOCK:
        if (found := _LIVE.get((folder, key))) is not None:
            _LIVE.move_to_end((folder, key))
            return found
    try:
        raw = json.loads(_file(folder, key).read_text(encoding="utf-8"))
        if raw["key"] != key:
            return None
        blamed = {int(line): (str(c), int(t), str(s)) for line, (c, t, s) in raw["lines"].items()}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, AttributeError, KeyError):  # written atomically: a foreign file
        return None
    with _LOCK:
        _LIVE[(folder, key)] = blamed
    return blamed


def _put(folder: Path, key: str, blamed: Blamed) -> None:
    write_atomic(_file(folder, key), json.dumps({"key": key, "lines": blamed}))
    with _LOCK:
        _LIVE[(folder, key)] = blamed


def _forget(used: int) -> None:
    """Keep in memory the latest `used` entries, and `SPARE` more."""
    with _LOCK:
        while len(_LIVE) > used + SPARE:
            _LIVE.popitem(last=False)


def _trim(folder: Path, used: set[str]) -> None:
    """Drop the files of entries not `used` once they outnumber those used (and `SPARE` more)."""
    try:
        names = [e.name for e in os.scandir(folder) if e.name.endswith(".json")]
    except OSError:
        return
    if len(names) > 2 * len(used) + SPARE:
        keep = {_file(folder, k).name for k in used}
        for name in names:
            if name not in keep:
                (folder / name).unlink(missing_ok=True)


def _runs(lines: list[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as maximal runs of consecutive lines."""
    runs: list[tuple[int, int]] = []
    for n in lines:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _parse(text: str) -> Blamed:
    """`--line-porcelain` output: final line number → (commit, committer time, subject)."""
    out: Blamed = {}
    commit, line, when, summary = "", 0, 0, ""
    for row in text.split("\n"):
        if row.startswith("\t"):
            out[line] = (commit, when, summary)
            continue
        m = _HEADER.match(row)
        if m:
            commit, line = m.group(1), int(m.group(2))
        elif row.startswith("committer-time "):
            when = int(row.split(" ", 1)[1])
        elif row.startswith("summary "):
            summary = row.split(" ", 1)[1]
    return out
