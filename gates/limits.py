"""What a sandboxed command may use, and as whom it runs: set inside the sandbox, and a cgroup where systemd makes one.

bubblewrap sets no limit, so the command inside the sandbox is run through

    [setpriv --reuid U --regid U --clear-groups --]  prlimit --data --cpu --nproc --fsize --  <command>

- `setpriv`, only when autoformalize runs as root (a container, usually):
  bwrap maps only the caller's own uid, so without it the code would run as
  uid 0, whose owner rights reach the kernel's settings under `/proc/sys` and
  which RLIMIT_NPROC exempts; `[sandbox] unprivileged_uid` (65534, nobody)
  instead. bwrap keeps CAP_SETUID and CAP_SETGID for that one step; setting
  a non-zero uid clears every capability, and `no_new_privs` keeps them
  cleared across exec;
- RLIMIT_DATA (`memory_mb`), not RLIMIT_AS: Lean maps every imported
  `.olean` read-only (all of Mathlib, several GB), which counts towards the
  address space but not towards private writable data;
- RLIMIT_CPU (`cpu_s`), per process, a backstop behind the wall-clock
  timeout;
- RLIMIT_NPROC (`max_processes`), set inside the sandbox: as a normal user
  the sandbox is a user namespace of its own and the kernel counts the
  processes of each (user namespace, uid) pair, so only the sandbox's own
  count, never your other processes; as root it counts every process of
  `unprivileged_uid`;
- RLIMIT_FSIZE (`max_file_mb`): the largest file a process may write.

Outside the sandbox, where `systemd-run --user --scope` (as root:
`systemd-run --scope`) works — tried once per process — the whole command
runs in a transient scope with MemoryMax (`total_memory_mb`: all its
processes and its tmpfs together) and TasksMax (`max_processes`). Elsewhere
(a container without systemd, a session without a user manager) only the
per-process limits hold; `describe` says which.
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from gates.config import SandboxConfig
from gates.process import run
from state.errors import InfraError

MIB = 1024 * 1024
SCOPE_PROBE_S = 15.0


def tool(name: str) -> str:
    """The path of a program the sandbox needs."""
    found = shutil.which(name)
    if found is None:
        raise InfraError(f"`{name}` was not found on PATH; the sandbox needs it (bubblewrap, and util-linux for "
                         "prlimit and setpriv)")
    return found


def as_root() -> bool:
    return os.geteuid() == 0


def inside(config: SandboxConfig) -> list[str]:
    """What runs inside the sandbox before the command: the switch to `unprivileged_uid` as root, then prlimit."""
    out: list[str] = []
    if as_root():
        uid = str(config.unprivileged_uid)
        out += [tool("setpriv"), "--reuid", uid, "--regid", uid, "--clear-groups", "--inh-caps=-all", "--"]
    limits = [f"--{name}={value}" for name, value in (
        ("data", config.memory_mb * MIB), ("cpu", config.cpu_s), ("nproc", config.max_processes),
        ("fsize", config.max_file_mb * MIB)) if value]
    return out + ([tool("prlimit"), *limits, "--"] if limits else [])


def tools(config: SandboxConfig) -> list[str]:
    """The programs `inside` runs, which the sandbox must show."""
    return [a for a in inside(config) if a.startswith("/")]


def cgroup(config: SandboxConfig) -> list[str]:
    """The `systemd-run … --scope` prefix putting the whole command in a cgroup of its own, or nothing where that
    does not work here."""
    scope = _scope(shutil.which("systemd-run"), config.total_memory_mb, config.max_processes, as_root())
    return list(scope) if isinstance(scope, tuple) else []


def describe(config: SandboxConfig) -> str:
    """Which limits hold here, in one line."""
    every = (f"{config.memory_mb or 'unlimited'} MiB heap, {config.cpu_s or 'unlimited'} CPU s and "
             f"{config.max_file_mb or 'unlimited'} MiB per file per process, {config.max_processes or 'unlimited'} "
             f"processes, /tmp and /dev/shm {config.tmp_mb} MiB each")
    scope = _scope(shutil.which("systemd-run"), config.total_memory_mb, config.max_processes, as_root())
    if isinstance(scope, tuple):
        return f"{every}; a cgroup (systemd scope) of {config.total_memory_mb} MiB for all its processes"
    return f"{every}; no cgroup ({scope})"


@functools.cache
def _scope(found: str | None, memory_mb: int, tasks: int, root: bool) -> tuple[str, ...] | str:
    """The prefix running a command in a systemd scope with the program `found`, or why there is none."""
    if not memory_mb:
        return "[sandbox] total_memory_mb = 0"
    if found is None:
        return "systemd-run is not installed"
    prefix = (found, *(() if root else ("--user",)), "--scope", "--quiet", "--collect",
              "-p", f"MemoryMax={memory_mb}M", *(("-p", f"TasksMax={tasks}") if tasks else ()), "--")
    try:
        done = run([*prefix, "true"], Path("/"), SCOPE_PROBE_S)
    except InfraError as e:
        return str(e)
    if done.exit_code != 0:
        what = "systemd-run --scope" if root else "systemd-run --user --scope"
        return f"`{what}` does not work here: {' '.join(done.output.split())[-200:] or f'exit {done.exit_code}'}"
    return prefix
