"""The sandbox: the one function that turns a command running code the Worker wrote into a confined command.

Every process that compiles or runs Worker-written code goes through
`Sandbox.wrap` — `lean_check`, the build gate and the baseline build (all
through `LakeCompiler._run`), the kernel checks, a claude-code Worker's Bash,
and the MCP servers it starts. The result is self-contained, environment
included, so it can be run as an argument list or handed to a shell:

    [systemd-run --scope …] env -i <allowlist> sh -c 'exec "$@" 3<"$0"' <seccomp filter> bwrap <namespaces>
        --seccomp 3 <mounts> --chdir <work>/<lake_dir> -- [setpriv …] prlimit … -- <command>

Under bubblewrap (`[sandbox] mode = "bwrap"`):

- no network: a network namespace of its own, with only its own loopback;
- its own pid namespace, bwrap its init, `--die-with-parent`: when the run is
  killed (its timeout), every process in it dies with it, `setsid` or not;
  `--new-session`; every capability dropped; its `/proc` shows only its own
  processes, so no other process's environment;
- no way to more privilege: as a normal user the sandbox is a user namespace
  of its own and may make no other (`--disable-userns`); as root the code
  runs as `[sandbox] unprivileged_uid` (`limits.py` says why and how); a
  seccomp filter (`seccomp.py`) refuses the kernel keyring, perf, bpf,
  userfaultfd and new user namespaces;
- the environment an allowlist: PATH, LANG, LANGUAGE, LC_*, TZ,
  ELAN_TOOLCHAIN, `[sandbox] env`, ELAN_HOME pointing at the toolchain, HOME
  a private directory, TMPDIR — never a credential (the environment of bwrap
  itself is the same list: `env -i` runs before it);
- the filesystem: the system directories (/usr, /bin, /lib*, the few /etc
  files programs need) read-only; `/proc` read-only (its `sys/` is the
  kernel's settings); a minimal `/dev`, read-only but for its devices; a
  private `/tmp` and `/dev/shm`, tmpfs of `tmp_mb` each; the toolchain
  (ELAN_HOME, default `~/.elan`), the program the command runs and the
  absolute paths the command names, `[sandbox] read_only`, all read-only,
  each at its real path and at the symlink it was named by; the working copy
  read-only except the Lake project's `.lake` (the build outputs), and its `.lake/packages` (in
  the working copy a symlink to the main checkout's, resolved) read-only
  again. Nothing else exists: not your home directory, not the user's
  checkout, its git directory or its state directory. A directory that would
  show one of those (`hidden`) is left out. A program's installation prefix
  (`/opt/x` of `/opt/x/bin/tool`) is shown only outside your home directory;
  inside it only the executable (and a Python's own installation and virtual
  environment), so `~/.local/bin/uvx` does not show `~/.local`;
- limits (`limits.py`): heap, CPU time, processes and file size per process,
  set inside the sandbox, and a cgroup for the whole command where systemd
  makes one.

With `mode = "none"` the command runs as it is, with the same allowlisted
environment (and your HOME): code the Worker wrote can read and write what
your user can.

`probe` runs a trivial command through the sandbox once per process: the
commands that start cycles refuse to run when it fails (`check`).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from gates import limits, seccomp
from gates.config import SandboxConfig
from gates.limits import tool
from gates.process import run
from state.errors import InfraError, UsageError

log = structlog.get_logger()
PRIVATE_HOME = "/tmp/home"
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("alternatives", "ca-certificates", "group", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
       "nsswitch.conf", "passwd", "ssl")
ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "ELAN_TOOLCHAIN")
NETWORK_ETC = ("resolv.conf", "hosts", "host.conf", "gai.conf", "hostname")
"""What an engine's process reads to reach its API by name, beside `ETC`."""
PROBE_TIMEOUT_S = 30.0
FILTER_FD = "3"
WITH_FILTER = 'exec "$@" 3<"$0"'
"""`sh -c` opening the seccomp filter (its $0) as descriptor 3 for bwrap, then becoming bwrap."""
HOW_TO = ("install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`, Fedora: `sudo dnf install "
          "bubblewrap`); on Ubuntu 24.04 and later AppArmor keeps unprivileged programs from creating user "
          "namespaces: allow it with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor "
          "profile for bwrap). Or set `[sandbox] mode = \"none\"` in autoformalize.toml to run the code the Worker "
          "writes unconfined, with your user's rights")


@dataclass(frozen=True)
class Sandbox:
    config: SandboxConfig
    hidden: tuple[Path, ...] = ()
    """Paths no binding may show (the user's checkout, its git directory); your home directory always."""
    packages: Path | None = None
    """The main checkout's `.lake/packages`: a working copy's is made a symlink to it before and after every run,
    so code that replaced it in one run (its `.lake` is writable) cannot hand forged dependencies to the next."""
    lake_dir: str = "."
    """The Lake project's folder in a working copy (`[project] lake_dir`): commands run there, and its `.lake` is
    the one writable place."""

    @property
    def on(self) -> bool:
        return self.config.mode == "bwrap"

    def wrap(self, args: Sequence[str], work: Path, env: Mapping[str, str] | None = None, *,
             outputs: bool = True) -> list[str]:
        """`args`, run in the working copy `work`, as a confined, self-contained command; `env` adds variables
        (an MCP server's own) to the allowlisted environment. `outputs=False` shows `.lake` read-only too, for a
        server that lives through the gates' compiles: nothing it runs may write the build outputs they read."""
        if not args:
            raise ValueError("an empty command")
        assigned = [f"{k}={v}" for k, v in {**self.environment(), **(env or {})}.items()]
        if not self.on:
            return [tool("env"), "-i", *assigned, *args]
        work = work.resolve()
        bpf = seccomp.path()
        filtered = [tool("sh"), "-c", WITH_FILTER, str(bpf)] if bpf else []
        return [*limits.cgroup(self.config), tool("env"), "-i", *assigned, *filtered, tool("bwrap"),
                *_namespaces(), *(["--seccomp", FILTER_FD] if bpf else []),
                *self.mounts(args, work, outputs=outputs), "--chdir", str(self.project(work)), "--",
                *limits.inside(self.config), *args]

    def engine(self, args: Sequence[str], work: Path, home: Path, env: Mapping[str, str], *,
               shown: Sequence[Path] = (), writable: Sequence[Path] = ()) -> tuple[list[str], dict[str, str]]:
        """A coding agent's own process (`args`, its CLI) confined for the whole session: it reaches the network
        (its model's API), writes only the working copy `work` (its `.lake/packages` read-only), its private
        `home` (HOME: its settings, sessions and login) and `writable` (its temporary files), reads the system, the
        toolchain, its own installation and `shown` (a relay's socket, a Python), and nothing else: not your home
        directory, the user's checkout, its git directory or its state. `env` is its environment beside the
        allowlist (its key, its settings): no other credential. It runs in a user namespace of its own with no
        capability, as you (as root: as `unprivileged_uid` of that namespace, which is root outside), so an engine's
        own sandbox (Codex's bubblewrap) can run inside it; the code the Worker writes never runs here but through
        `wrap` (the relay) or the engine's own sandbox.

        The command and the whole environment to run it with (`os.execve`'s, `Popen(env=…)`'s); with `mode =
        "none"`, the engine itself with that environment."""
        env = {**{k: v for k, v in self.environment().items() if k not in ("HOME", "TMPDIR")}, "HOME": str(home),
               **env}
        if not self.on:
            return list(args), env
        work, home = work.resolve(), home.resolve()
        rw = [work, home, *(p.resolve() for p in writable)]
        lake = self.project(work) / ".lake"
        lake.mkdir(exist_ok=True)
        self.relink(work)
        # No capability, even in its own namespace (with one, it could remount what it is shown read-only); as root,
        # not root there either: `unprivileged_uid`, which is root outside, so its builds write `.lake` as root.
        out = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if limits.as_root():
            uid = str(self.config.unprivileged_uid)
            out += ["--uid", uid, "--gid", uid]
            _hand_over(work, lake, 0)
        out += [*_system((*ETC, *NETWORK_ETC)),
                "--perms", "1777", "--size", str(self.config.tmp_mb * limits.MIB), "--tmpfs", "/tmp"]
        shown_dirs = [*(Path(p) for p in SYSTEM), *(Path(p).resolve() for p in SYSTEM if Path(p).exists())]
        made = {Path("/tmp")}
        programs = [_executable(args[0], work), *(p for p in shown if p.is_file() and os.access(p, os.X_OK))]
        wanted = [elan_home(), *(Path(p).expanduser() for p in self.config.read_only), *shown,
                  *(q for exe in programs for q in (*_program(exe), *_program(exe.resolve())))]
        for source, dest in sorted(self._visible(wanted), key=lambda pair: len(pair[1].parts)):
            if any(_within(dest, s) for s in shown_dirs) or any(_within(dest, w) for w in rw):
                continue
            out += [*_parents(dest, shown_dirs, made), "--ro-bind", str(source), str(dest)]
            shown_dirs.append(dest)
        for place in sorted(rw, key=lambda p: len(p.parts)):
            out += [*_parents(place, shown_dirs, made), "--bind", str(place), str(place)]
            shown_dirs.append(place)
        packages = lake / "packages"
        if packages.is_dir():
            target = packages.resolve()
            out += [*_parents(target, shown_dirs, made), "--ro-bind", str(target), str(target)]
        out += ["--dev", "/dev", "--proc", "/proc", "--chdir", str(work)]
        return [tool("bwrap"), *out, "--", *args], env

    def project(self, work: Path) -> Path:
        """Where Lake runs in the working copy `work`: the folder holding the lakefile."""
        return work / self.lake_dir

    def environment(self) -> dict[str, str]:
        """The allowlisted environment of a sandboxed command."""
        names = {*ENV, *self.config.env}
        env = {k: v for k, v in os.environ.items() if k in names or k.startswith("LC_")}
        env["PATH"] = env.get("PATH") or os.defpath
        elan = elan_home()
        if elan.is_dir():
            env["ELAN_HOME"] = str(elan)  # HOME moves: elan would look for its toolchains under the new one
        if self.on:
            env |= {"HOME": PRIVATE_HOME, "TMPDIR": "/tmp"}
        elif "HOME" in os.environ:
            env["HOME"] = os.environ["HOME"]
        return env

    def mounts(self, args: Sequence[str], work: Path, *, outputs: bool = True) -> list[str]:
        """bwrap's filesystem for `args` run in `work` (resolved): everything not named here does not exist.
        It makes `work`'s `.lake` first, and restores its `.lake/packages` link."""
        out = _system(ETC)
        size = str(self.config.tmp_mb * limits.MIB)
        # /proc read-only: its sys/, sysrq-trigger… are the kernel's settings, and bwrap covers them only where it
        # can tell they are writable. /dev read-only but for its devices; its shm, like /tmp, a bounded tmpfs.
        out += ["--proc", "/proc", "--remount-ro", "/proc",
                "--dev", "/dev", "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
                "--perms", "1777", "--size", size, "--tmpfs", "/tmp", "--perms", "1777", "--dir", PRIVATE_HOME]
        shown = [*(Path(p) for p in SYSTEM), *(Path(p).resolve() for p in SYSTEM if Path(p).exists())]
        made = {Path("/tmp"), Path(PRIVATE_HOME)}
        for source, dest in sorted(self._read_only(args, work), key=lambda pair: len(pair[1].parts)):
            if not any(_within(dest, s) for s in shown) and not _within(dest, work):
                out += [*_parents(dest, shown, made), "--ro-bind", str(source), str(dest)]
                shown.append(dest)
        lake = self.project(work) / ".lake"
        lake.mkdir(exist_ok=True)
        self.relink(work)
        if limits.as_root() and outputs:  # read-only, it needs no ownership (and takes none from an engine's build)
            _hand_over(work, lake, self.config.unprivileged_uid)
        out += [*_parents(work, shown, made), "--ro-bind", str(work), str(work), "--bind" if outputs else "--ro-bind",
                str(lake), str(lake)]
        packages = lake / "packages"
        if packages.is_dir():  # the main checkout's dependencies (the symlink resolves to the same path inside)
            target = packages.resolve()
            out += [*_parents(target, [*shown, work], made), "--ro-bind", str(target), str(target)]
        return [*out, "--remount-ro", "/"]  # the directories made for the mount points: no place to write either

    def relink(self, work: Path) -> None:
        """Make `work`'s `.lake/packages` the link to the shared dependencies again: code run in the sandbox may
        have replaced it (its `.lake` is writable). Done before every run and after every run that returns."""
        if self.on and self.packages is not None:
            link_packages(self.project(work), self.packages)

    def _read_only(self, args: Sequence[str], work: Path) -> list[tuple[Path, Path]]:
        """What the command needs to see, as (source, where it is shown): the toolchain, its program, the absolute
        paths it names, `read_only`, the tools run inside; each at its real path and, when it is reached through a
        symlink (`~/.elan` on another disk), at that path too; never a directory holding a hidden path."""
        exe = _executable(args[0], self.project(work))
        return self._visible([elan_home(), *(Path(p).expanduser() for p in self.config.read_only), *_program(exe),
                              *_program(exe.resolve()), *(Path(a) for a in args[1:] if a.startswith("/")),
                              *(Path(t) for t in limits.tools(self.config))])

    def _visible(self, paths: Sequence[Path]) -> list[tuple[Path, Path]]:
        """`paths` that exist as (source, where it is shown): at its real path and at the path it was named by;
        never `/` or a directory holding a hidden path (the checkout, its git directory, your home)."""
        hidden = [p.resolve() for p in (*self.hidden, Path.home())]
        out: list[tuple[Path, Path]] = []
        for path in (p for p in paths if p.exists()):
            real = path.resolve()
            for dest in dict.fromkeys((real, Path(os.path.abspath(path)))):
                if dest != Path("/") and not any(_within(h, real) or _within(h, dest) for h in hidden):
                    out.append((real, dest))
        return out


def link_packages(work: Path, source: Path) -> None:
    """Make the Lake project `work`'s `.lake/packages` (Mathlib and the other dependencies) a symlink to `source`,
    resolved (only the target is shown in the sandbox), whatever it was. Never in the checkout `source` belongs to,
    and never deleting a directory: one made by code in the sandbox is moved aside (the build outputs' check removes
    it later)."""
    target = work / ".lake" / "packages"
    if not source.is_dir() or os.path.abspath(target) == os.path.abspath(source):
        return
    real = source.resolve()
    if target.is_symlink():
        if os.readlink(target) == str(real):
            return
        target.unlink()  # pointing elsewhere: the repository moved, or code run in the sandbox changed it
    elif target.is_dir():
        if target.resolve() == real:  # the checkout itself, reached another way
            return
        aside = target.with_name(f"packages.replaced-{time.time_ns()}")
        target.rename(aside)
        log.warning("sandbox.packages_moved_aside", path=str(aside))
    elif target.exists():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(real, target_is_directory=True)


def elan_home() -> Path:
    """The toolchain manager's directory: $ELAN_HOME, else ~/.elan."""
    return Path(os.environ.get("ELAN_HOME") or Path.home() / ".elan").expanduser()


def probe(config: SandboxConfig) -> str | None:
    """Why the sandbox cannot run here, or None when it can (a trivial command through it, once per process)."""
    if config.mode == "none":
        return None
    tools = tuple(shutil.which(t) for t in ("env", "sh", "prlimit", "setpriv", "bwrap"))
    return _probe(config.model_dump_json(), tools, os.geteuid())


@functools.cache
def _probe(config: str, tools: tuple[str | None, ...], uid: int) -> str | None:
    if tools[-1] is None:
        return "bwrap (bubblewrap) is not installed"
    with tempfile.TemporaryDirectory(prefix="autoformalize-probe-") as work:
        os.chmod(work, 0o755)  # as root the code runs as another user, who must see the working copy
        try:
            done = run(Sandbox(SandboxConfig.model_validate_json(config)).wrap(["true"], Path(work)), Path(work),
                       PROBE_TIMEOUT_S)
        except InfraError as e:
            return str(e)
    if done.exit_code != 0:
        status = "timed out" if done.timed_out else f"exited with {done.exit_code}"
        return f"`bwrap … true` {status}: {done.output.strip()[-500:]}"
    return None


def check(config: SandboxConfig) -> None:
    """Refuse to start work the sandbox cannot confine (exit 2, saying how to install it or opt out)."""
    problem = probe(config)
    if problem is not None:
        raise UsageError(f"the sandbox for code the Worker writes cannot run: {problem}; {HOW_TO}")


def warn_if_off(config: SandboxConfig) -> None:
    """Every cycle run without the sandbox says so."""
    if config.mode == "none":
        log.warning("sandbox.off", detail=describe(config))


def describe(config: SandboxConfig) -> str:
    """One line on how Worker-written code runs here."""
    if config.mode == "none":
        return ('unsandboxed ([sandbox] mode = "none"): code the Worker writes runs with your user\'s rights, '
                "network, files and credentials reachable")
    problem = probe(config)
    if problem is not None:
        return f"bwrap, but it cannot run: {problem}; a cycle would refuse to start (exit 2)"
    who = f"as uid {config.unprivileged_uid} (you are root)" if limits.as_root() else "as you, in a user namespace"
    calls = ("keyring, perf, bpf and user-namespace calls refused" if seccomp.program() is not None
             else f"no system-call filter for {seccomp.machine()}")
    return (f"bwrap: no network, no credentials, only the working copy and the toolchain visible, {who}; {calls}; "
            f"limits: {limits.describe(config)}")


def _system(etc: Sequence[str]) -> list[str]:
    """bwrap's system directories, read-only (their links as links), and the `etc` files of /etc."""
    out: list[str] = []
    for name in SYSTEM:
        path = Path(name)
        if path.is_symlink():
            out += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            out += ["--ro-bind", name, name]
    return [*out, "--perms", "0755", "--dir", "/etc",
            *(a for name in etc for a in ("--ro-bind-try", f"/etc/{name}", f"/etc/{name}"))]


def _namespaces() -> list[str]:
    """Every namespace of its own, no capability. As a normal user that includes a user namespace, and no nested
    one may be made (`--disable-userns`); as root none (bwrap maps only the caller's uid, and the code is to run as
    another: `limits.inside`), so the seccomp filter refuses new user namespaces instead."""
    common = ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if limits.as_root():
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", *common,
                "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return ["--unshare-all", "--unshare-user", "--disable-userns", "--assert-userns-disabled", *common]


def _parents(dest: Path, shown: list[Path], made: set[Path]) -> list[str]:
    """The directories leading to a mount point that no binding shows, made 0755 (bwrap would make them 0700,
    which as root keeps the sandbox's own user out); `made` grows by them."""
    out: list[str] = []
    for parent in reversed(dest.parents):
        if parent == Path("/") or parent in made or any(_within(parent, s) for s in shown):
            continue
        out += ["--perms", "0755", "--dir", str(parent)]
        made.add(parent)
    return out


def _hand_over(work: Path, lake: Path, uid: int) -> None:
    """Give `.lake` to the user sandboxed code runs as when we are root: once, as what it writes is then its own.
    Never through a link (`.lake/packages` is one): every change is made relative to an open directory."""
    if work.stat().st_mode & 0o005 != 0o005:
        raise InfraError(f"{work} cannot be read by other users (a umask of 077?), and as root the sandbox runs the "
                         f"code as uid {uid}: run autoformalize with `umask 022`, or as a normal user")
    if lake.lstat().st_uid == uid:
        return
    for _, dirs, files, fd in os.fwalk(lake):
        for name in (*dirs, *files):
            os.chown(name, uid, uid, dir_fd=fd, follow_symlinks=False)
    os.chown(lake, uid, uid, follow_symlinks=False)


def _executable(program: str, work: Path) -> Path:
    if "/" in program:
        return (work / program) if not program.startswith("/") else Path(program)
    found = shutil.which(program)
    if found is None:
        raise InfraError(f"`{program}` was not found; install it or fix the command in autoformalize.toml")
    return Path(found)


def _program(exe: Path) -> list[Path]:
    """What running `exe` needs besides the system directories. Outside your home directory: its installation
    prefix (`/opt/x` for `/opt/x/bin/tool`) and its directory. Inside it, never a prefix (`~/.local` holds
    credentials, `~/.cargo` tokens): the file alone, and for a Python its installation (the directory holding
    `lib/pythonX.Y/os.py`, `~/.pyenv/versions/3.11.7`) and its virtual environment."""
    if not _within(exe, Path.home().resolve()) and not _within(exe, Path.home()):
        return [_prefix(exe), exe.parent, exe]
    return [exe, *_python(exe)]


def _python(exe: Path) -> list[Path]:
    """A Python interpreter's installation and virtual environment, when `exe` is one."""
    if not exe.name.startswith("python") or exe.parent.name != "bin":
        return []
    root = exe.parent.parent
    out = [root] if any(root.glob("lib/python3*/os.py")) else []
    config = root / "pyvenv.cfg"
    if config.is_file():  # a virtual environment: its packages, and the installation it was made from
        out.append(root)
        home = next((line.partition("=")[2].strip() for line in config.read_text().splitlines()
                     if line.partition("=")[0].strip() == "home"), "")
        base = Path(home).parent if home else None
        if base is not None and any(base.glob("lib/python3*/os.py")):
            out.append(base)
    return out


def _prefix(exe: Path) -> Path:
    """The installation prefix of an executable: `/opt/x` for `/opt/x/bin/tool`, else its directory."""
    return exe.parent.parent if exe.parent.name in ("bin", "sbin") else exe.parent


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
