"""Crash-safe file writes: a reader sees the old content or the new, never half."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path
from typing import TypeVar

import structlog
from pydantic import BaseModel, ValidationError

log = structlog.get_logger()
M = TypeVar("M", bound=BaseModel)


def read_kept(path: Path, model: type[M]) -> M | None:
    """A cache entry written by `write_atomic`: None when it is missing, and when it cannot be read as `model` (it is
    then deleted, so that it is made again, never trusted)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    try:
        return model.model_validate_json(raw)
    except ValidationError:
        log.warning("cache.unreadable", file=str(path))
        path.unlink(missing_ok=True)
        return None


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data`: temp file in the same directory, fsync, rename, fsync the directory."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes it 0600; the file keeps the mode it had, or gets a new file's (a compiler run as another
        # user, the sandbox's as root, must read what the Worker wrote).
        os.fchmod(fd, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _umask() -> int:
    """This process's umask, read without changing it (Linux); 022 where it cannot be read."""
    try:
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("Umask:"))
        return int(line.split()[1], 8)
    except (OSError, StopIteration, ValueError):
        return 0o022


def append_line(path: Path, line: str) -> None:
    """Append one line with a single `write` on an O_APPEND descriptor, then fsync.

    Appenders take turns (an advisory lock on the file; readers are not
    blocked). A previous line cut short by a crash is left as it is; the new
    line starts on a line of its own.
    """
    if "\n" in line:
        raise ValueError("append_line takes one line without newlines")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        lead = ""
        if size and _last_byte(path, size) != b"\n":
            lead = "\n"
        os.write(fd, (lead + line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _last_byte(path: Path, size: int) -> bytes:
    with path.open("rb") as f:
        f.seek(size - 1)
        return f.read(1)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some filesystems do not open directories; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def unwritable(path: Path) -> str | None:
    """Why `path` (a file or directory, existing or not) could not be written, or None: the nearest existing
    folder above it must be a writable directory (a read-only filesystem says so here too), and `path` itself, if
    it exists, writable."""
    if path.exists() and not os.access(path, os.W_OK):
        return f"{path} is not writable"
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is not a directory"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable" + (" (a read-only filesystem)" if _read_only(folder) else "")
    return None


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def write_all(files: dict[Path, str | bytes]) -> None:
    """Write every file or none: on a failure, the files this call created and the folders it made are removed and
    the ones it replaced restored, then the error raised."""
    made: list[Path] = []
    before: dict[Path, bytes | None] = {}
    try:
        for path, data in files.items():
            folder = path.parent
            missing = []
            while not folder.exists():
                missing.append(folder)
                folder = folder.parent
            made += reversed(missing)
            before[path] = path.read_bytes() if path.is_file() else None
            write_atomic(path, data)
    except BaseException:
        for path, old in before.items():
            with contextlib.suppress(OSError):  # undo what can be undone; the first error is the one to tell
                if old is None:
                    path.unlink(missing_ok=True)
                else:
                    write_atomic(path, old)
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
