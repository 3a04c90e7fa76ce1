"""The sandbox: the one function that turns a command running code the Worker wrote into a confined command.

Every process that compiles or runs Worker-written code goes through
`Sandbox.wrap` — `lean_check`, the build gate and the baseline build (all
through `LakeCompiler._run`), the kernel checks, a claude-code Worker's Bash,
and the MCP servers it starts. The result is self-contained, environment
included, so it can be run as an argument list or handed to a shell:

    env -i <allowlist> prlimit --data=… --cpu=… bwrap <namespaces> <mounts> --chdir <work> -- <command>

Under bubblewrap (`[sandbox] mode = "bwrap"`):

- no network: a network namespace of its own, with only its own loopback;
- its own pid namespace, bwrap its init, `--die-with-parent`: when the run is
  killed (its timeout), every process in it dies with it, `setsid` or not;
  `--new-session`; every capability dropped; its `/proc` shows only its own
  processes, so no other process's environment;
- the environment an allowlist: PATH, LANG, LANGUAGE, LC_*, TZ,
  ELAN_TOOLCHAIN, `[sandbox] env`, ELAN_HOME pointing at the toolchain, HOME
  a private directory, TMPDIR — never a credential (the environment of bwrap
  itself is the same list: `env -i` runs before it);
- the filesystem: the system directories (/usr, /bin, /lib*, the few /etc
  files programs need) read-only, a private /tmp, a minimal /dev; the
  toolchain (ELAN_HOME, default `~/.elan`), the program the command runs (the
  installation prefix of its executable, resolved and not) and the absolute
  paths the command names, `[sandbox] read_only`, all read-only; the working
  copy read-only except its `.lake` (the build outputs), and `.lake/packages`
  (in the working copy a symlink to the main checkout's) read-only again.
  Nothing else exists: not your home directory, not the user's checkout, its
  git directory or its state directory. A directory that would show one of
  those (`hidden`) is left out: an executable's directory, or the executable
  alone, is shown instead of its prefix;
- limits: bwrap has none, so `prlimit` sets them before exec. RLIMIT_DATA
  (`memory_mb`), not RLIMIT_AS: Lean maps every imported `.olean` read-only
  (all of Mathlib, several GB), which counts towards the address space but
  not towards private writable data (heap, anonymous memory, stacks).
  RLIMIT_CPU (`cpu_s`) is per process: a backstop behind the wall-clock
  timeout. Both apply to each process in the sandbox.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from gates.config import SandboxConfig
from gates.process import run
from state.errors import InfraError, UsageError

log = structlog.get_logger()
PRIVATE_HOME = "/tmp/home"
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("alternatives", "ca-certificates", "group", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
       "nsswitch.conf", "passwd", "ssl")
ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "ELAN_TOOLCHAIN")
PROBE_TIMEOUT_S = 30.0
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
    """The main checkout's `.lake/packages`: a working copy's is made a symlink to it before every run, so code
    that replaced it in one run (its `.lake` is writable) cannot hand forged dependencies to the next."""

    @property
    def on(self) -> bool:
        return self.config.mode == "bwrap"

    def wrap(self, args: Sequence[str], work: Path, env: Mapping[str, str] | None = None) -> list[str]:
        """`args`, run in the working copy `work`, as a confined, self-contained command; `env` adds variables
        (an MCP server's own) to the allowlisted environment."""
        if not args:
            raise ValueError("an empty command")
        assigned = [f"{k}={v}" for k, v in {**self.environment(), **(env or {})}.items()]
        if not self.on:
            return [_tool("env"), "-i", *assigned, *args]
        limits = [f"--data={self.config.memory_mb * 1024 * 1024}"] if self.config.memory_mb else []
        limits += [f"--cpu={self.config.cpu_s}"] if self.config.cpu_s else []
        prlimit = [_tool("prlimit"), *limits, "--"] if limits else []
        return [_tool("env"), "-i", *assigned, *prlimit, _tool("bwrap"), "--unshare-all", "--die-with-parent",
                "--new-session", "--cap-drop", "ALL", *self.mounts(args, work.resolve()), "--chdir",
                str(work.resolve()), "--", *args]

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

    def mounts(self, args: Sequence[str], work: Path) -> list[str]:
        """bwrap's filesystem for `args` run in `work` (resolved): everything not named here does not exist.
        It makes `work`'s `.lake` first, and restores its `.lake/packages` link."""
        out: list[str] = []
        for name in SYSTEM:
            path = Path(name)
            if path.is_symlink():
                out += ["--symlink", os.readlink(path), name]
            elif path.is_dir():
                out += ["--ro-bind", name, name]
        out += [a for name in ETC for a in ("--ro-bind-try", f"/etc/{name}", f"/etc/{name}")]
        out += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", PRIVATE_HOME]
        shown: list[Path] = [Path(p).resolve() for p in SYSTEM if Path(p).exists()]
        for path in self._read_only(args, work):
            if not any(_within(path, s) for s in shown) and not _within(path, work):
                out += ["--ro-bind", str(path), str(path)]
                shown.append(path)
        lake = work / ".lake"
        lake.mkdir(exist_ok=True)
        if self.packages is not None:
            link_packages(work, self.packages)
        out += ["--ro-bind", str(work), str(work), "--bind", str(lake), str(lake)]
        packages = lake / "packages"
        if packages.is_dir():  # the main checkout's dependencies (the symlink resolves to the same path inside)
            target = packages.resolve()
            out += ["--ro-bind", str(target), str(target)]
        return [*out, "--remount-ro", "/"]  # the directories made for the mount points: no place to write either

    def _read_only(self, args: Sequence[str], work: Path) -> list[Path]:
        """What the command needs to see: the toolchain, its program (its installation prefix, or its directory,
        or itself), the absolute paths it names, `read_only`; never a directory holding a hidden path."""
        hidden = [p.resolve() for p in (*self.hidden, Path.home())]
        exe = _executable(args[0], work)
        paths = [elan_home(), *(Path(p).expanduser() for p in self.config.read_only),
                 *(p for e in (exe, exe.resolve()) for p in (_prefix(e), e.parent, e)),
                 *(Path(a) for a in args[1:] if a.startswith("/"))]
        real = [p.resolve() for p in paths if p.exists()]
        return [p for p in real if p != Path("/") and not any(_within(h, p) for h in hidden)]


def link_packages(work: Path, source: Path) -> None:
    """Make `work`'s `.lake/packages` (Mathlib and the other dependencies) a symlink to `source`, whatever it was."""
    target = work / ".lake" / "packages"
    if not source.is_dir():
        return
    if target.is_symlink():
        if target.resolve() == source.resolve():
            return
        target.unlink()  # pointing elsewhere: the repository moved, or code run in the sandbox changed it
    elif target.is_dir():
        shutil.rmtree(target)  # only code run in the sandbox makes one: the working copy is the orchestrator's
    elif target.exists():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(source, target_is_directory=True)


def elan_home() -> Path:
    """The toolchain manager's directory: $ELAN_HOME, else ~/.elan."""
    return Path(os.environ.get("ELAN_HOME") or Path.home() / ".elan").expanduser()


def probe(config: SandboxConfig) -> str | None:
    """Why the sandbox cannot run here, or None when it can (a trivial command through it, once per process)."""
    if config.mode == "none":
        return None
    tools = tuple(shutil.which(t) for t in ("env", "prlimit", "bwrap"))
    return _probe(config.model_dump_json(), tools)


@functools.cache
def _probe(config: str, tools: tuple[str | None, ...]) -> str | None:
    if tools[2] is None:
        return "bwrap (bubblewrap) is not installed"
    with tempfile.TemporaryDirectory(prefix="autoformalize-probe-") as work:
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
    return "bwrap: no network, no credentials, only the working copy and the toolchain visible"


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise InfraError(f"`{name}` was not found on PATH; the sandbox needs it ({HOW_TO})")
    return found


def _executable(program: str, work: Path) -> Path:
    if "/" in program:
        return (work / program) if not program.startswith("/") else Path(program)
    found = shutil.which(program)
    if found is None:
        raise InfraError(f"`{program}` was not found; install it or fix the command in autoformalize.toml")
    return Path(found)


def _prefix(exe: Path) -> Path:
    """The installation prefix of an executable: `/opt/x` for `/opt/x/bin/tool`, else its directory."""
    return exe.parent.parent if exe.parent.name in ("bin", "sbin") else exe.parent


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
