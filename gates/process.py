"""The one way a subprocess is run: its own process group, killed whole on timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from state.errors import InfraError

KILL_GRACE_S = 5.0


@dataclass(frozen=True)
class Completed:
    args: tuple[str, ...]
    exit_code: int | None  # None when killed on timeout
    output: str  # stdout and stderr, interleaved; stdout alone when run with `apart`
    seconds: float
    errors: str = ""  # stderr, when run with `apart`
    data: bytes = b""  # stdout as bytes, when run with `apart`

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


class CommandFailed(InfraError):
    """A command that had to succeed did not."""

    def __init__(self, done: Completed) -> None:
        status = "timed out" if done.timed_out else f"exited with {done.exit_code}"
        tail = "\n".join((done.errors or done.output).rstrip().splitlines()[-20:])
        super().__init__(f"`{' '.join(done.args)}` {status}:\n{tail}")
        self.done = done


def run(args: Sequence[str], cwd: Path, timeout_s: float, *, env: Mapping[str, str] | None = None,
        check: bool = False, apart: bool = False) -> Completed:
    """Run `args` in `cwd`; on timeout, TERM then KILL its whole process group. With `apart`, stderr is kept
    apart from stdout (`Completed.errors`), and stdout is kept as bytes too (`Completed.data`)."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(list(args), cwd=cwd, env=dict(env) if env is not None else None,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE if apart else subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except FileNotFoundError:
        raise InfraError(f"`{args[0]}` was not found; install it or fix the command in autoformalize.toml "
                         f"(it was asked to run `{' '.join(args)}`)") from None
    except PermissionError:
        raise InfraError(f"`{args[0]}` is not executable (running `{' '.join(args)}`)") from None
    try:
        data, errors = proc.communicate(timeout=timeout_s)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        kill_group(proc.pid, reap=proc.poll)
        data, errors = proc.communicate()
        code = None
    done = Completed(tuple(args), code, data.decode("utf-8", errors="replace"), time.monotonic() - start,
                     (errors or b"").decode("utf-8", errors="replace"), data if apart else b"")
    if check and code != 0:
        raise CommandFailed(done)
    return done


def kill_group(pgid: int, grace_s: float = KILL_GRACE_S, reap: Callable[[], object] | None = None) -> None:
    """TERM the process group, wait up to `grace_s`, then KILL what is left.

    `reap` collects the group leader when it is our child, so a zombie does not
    look alive.
    """
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if reap is not None:
            reap()
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(pid: int, grace_s: float = KILL_GRACE_S, reap: Callable[[], object] | None = None) -> None:
    """`kill_group` for `pid`'s group and for the groups its descendants started (a compiler run has its own)."""
    groups = {pid}
    for d in descendants(pid):
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(d))
    for group in sorted(groups - {pid}):
        kill_group(group, grace_s)
    kill_group(pid, grace_s, reap)
