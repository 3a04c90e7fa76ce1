"""The system calls sandboxed code may not make: a seccomp filter, as the classic BPF program bwrap installs.

bwrap loads it from a file descriptor (`--seccomp FD`) just before it runs the
command, after `no_new_privs`, so it binds every process of the sandbox and
cannot be lifted from inside. Denied, with EPERM:

- the kernel keyring (`add_key`, `request_key`, `keyctl`): a key in your
  session keyring (a login token, an ssh-agent's, a kerberos ticket) is
  otherwise readable from inside, as the keyring is not namespaced;
- `perf_event_open`, `bpf`, `userfaultfd`: kernel interfaces no compiler
  needs and exploits often do (Flatpak and Docker refuse them too);
- io_uring (`io_uring_setup`, `io_uring_enter`, `io_uring_register`): its
  operations run in kernel workers that no seccomp filter sees, it has been a
  steady source of kernel exploits, and nothing Lean runs uses it (Docker's
  default profile refuses it too);
- a new user namespace (`unshare` or `clone` with CLONE_NEWUSER): one gives
  its creator every capability over the namespaces it then makes. `clone3`
  passes its flags in memory a filter cannot read, so it answers ENOSYS, and
  the C library falls back to `clone`;
- any call of another ABI than the machine's own (x32, or 32-bit programs on
  a 64-bit kernel), whose numbers name other calls.

The program knows x86_64 and aarch64; on another machine there is no filter
(`program` returns None and `describe` in `sandbox.py` says so).
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import os
import platform
import shutil
import struct
import tempfile
from pathlib import Path

# Classic BPF, as <linux/filter.h> and <linux/seccomp.h> define it.
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (little-endian: the low half of args[0])
_CLONE_NEWUSER = 0x10000000
_X32 = 0x40000000

# Calls added since Linux 5.1 have one number on every architecture (arch/x86/entry/syscalls/syscall_64.tbl,
# include/uapi/asm-generic/unistd.h).
IO_URING = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
ARCHES = {
    # machine: (AUDIT_ARCH_*, denied calls, (unshare, clone), clone3)
    "x86_64": (0xC000003E, {"add_key": 248, "request_key": 249, "keyctl": 250, "perf_event_open": 298, "bpf": 321,
                            "userfaultfd": 323, **IO_URING}, (272, 56), 435),
    "aarch64": (0xC00000B7, {"add_key": 217, "request_key": 218, "keyctl": 219, "perf_event_open": 241, "bpf": 280,
                             "userfaultfd": 282, **IO_URING}, (97, 220), 435),
}
ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


def machine() -> str:
    m = platform.machine().lower()
    return ALIASES.get(m, m)


def program(arch: str | None = None) -> bytes | None:
    """The filter for `arch` (default: this machine's) as bwrap reads it (struct sock_filter[]), or None."""
    name = arch or machine()
    if name not in ARCHES:
        return None
    audit, denied, namespaces, clone3 = ARCHES[name]
    code: list[tuple[int | str, int | str, int | str, int]] = [
        (_LD_W_ABS, 0, 0, _ARCH), (_JEQ_K, 0, "eperm", audit), (_LD_W_ABS, 0, 0, _NR)]
    if name == "x86_64":
        code.append((_JGE_K, "eperm", 0, _X32))
    code += [(_JEQ_K, "eperm", 0, nr) for nr in sorted(denied.values())]
    code.append((_JEQ_K, "enosys", 0, clone3))
    code += [(_JEQ_K, "flags", 0, nr) for nr in namespaces]
    code += [(_RET_K, 0, 0, _ALLOW),
             ("flags", 0, 0, 0), (_LD_W_ABS, 0, 0, _ARG0), (_JSET_K, "eperm", 0, _CLONE_NEWUSER),
             (_RET_K, 0, 0, _ALLOW),
             ("eperm", 0, 0, 0), (_RET_K, 0, 0, _ERRNO | errno.EPERM),
             ("enosys", 0, 0, 0), (_RET_K, 0, 0, _ERRNO | errno.ENOSYS)]
    return _assemble(code)


def _assemble(code: list[tuple[int | str, int | str, int | str, int]]) -> bytes:
    """Instructions with jumps to labels (a label is an entry `(name, 0, 0, 0)`) as sock_filter bytes."""
    labels: dict[str, int] = {}
    body: list[tuple[int, int | str, int | str, int]] = []
    for op, jt, jf, k in code:
        if isinstance(op, str):
            labels[op] = len(body)
        else:
            body.append((op, jt, jf, k))

    def offset(target: int | str, at: int) -> int:
        return target if isinstance(target, int) else labels[target] - at - 1

    return b"".join(struct.pack("<HBBI", op, offset(jt, i), offset(jf, i), k) for i, (op, jt, jf, k) in enumerate(body))


def path() -> Path | None:
    """A file holding this machine's filter, written once per process into a private directory (and again if
    something removed it), or None where there is none."""
    data = program()
    if data is None:
        return None
    if not _made or not _made[-1].is_dir():
        _made.append(Path(tempfile.mkdtemp(prefix="autoformalize-seccomp-")))
        atexit.register(shutil.rmtree, _made[-1], ignore_errors=True)
    target = _made[-1] / f"{machine()}-{hashlib.sha256(data).hexdigest()[:16]}.bpf"
    if not target.is_file():
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    return target


_made: list[Path] = []  # the private directories this process made, the last one in use
