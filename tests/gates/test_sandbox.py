"""The sandbox, with the real bubblewrap: what code the Worker wrote can reach while it compiles.

Each attack is a Lean file whose `#eval` does what an adversarial Worker would, compiled by the stand-in Lean
(which runs the IO as real Lean does at elaboration) through `LakeCompiler`, as `lean_check` and the build gate
run it. Where an attack would have worked without the sandbox, the same payload run unconfined shows it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from gates.build import LakeCompiler
from gates.config import BuildConfig, SandboxConfig
from gates.diagnostics import CheckResult
from gates.process import Completed, run
from gates.sandbox import Sandbox, check, describe, link_packages, probe
from state.errors import UsageError
from tests.conftest import STANDIN_DIR, git, write

KEY = "sk-ant-sandbox-Qw8Ze3-never-print-me"
REAL_HOME = Path.home()  # the tests' HOME is their own; this one is the user's running them
STANDIN = STANDIN_DIR / "lean_checker.py"
WRITABLE_PROC = """\
import os
found = []
for top in sorted(os.listdir("/proc")):
    if top.isdigit() or top in ("self", "thread-self"):
        continue
    path = os.path.join("/proc", top)
    walked = os.walk(path) if os.path.isdir(path) else [("/proc", [], [top])]
    for root, _, files in walked:
        for name in files:
            try:
                os.close(os.open(os.path.join(root, name), os.O_WRONLY))  # opened, never written
                found.append(os.path.join(root, name))
            except OSError:
                pass
print("writable:", " ".join(found) or "none")
"""
KEYCTL = """\
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
keyctl, add_key = {"x86_64": (250, 248), "aarch64": (219, 217)}[platform.machine()]
"""
KEYRING_PARENT = KEYCTL + """\
import subprocess, sys
assert libc.syscall(keyctl, 1, None) >= 0  # KEYCTL_JOIN_SESSION_KEYRING: a session keyring of its own
assert libc.syscall(add_key, b"user", b"autoformalize-test", b"KEYRING-SECRET", 14, ctypes.c_long(-3)) >= 0
print(subprocess.run(sys.argv[1:], capture_output=True, text=True).stdout)
"""
KEYCTL_READ = KEYCTL + """\
key = libc.syscall(keyctl, 10, ctypes.c_long(-3), b"user", b"autoformalize-test", 0)  # KEYCTL_SEARCH
buf = ctypes.create_string_buffer(64)
print("keyctl errno", ctypes.get_errno()) if key < 0 else print(buf.raw[:libc.syscall(keyctl, 11, key, buf, 64)])
"""
IO_URING = """\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
# One number on every architecture: io_uring_setup, io_uring_enter, io_uring_register; on fd -1 the last two
# fail with an error of their own where they are allowed.
for name, nr, args in (("setup", 425, (8, params)), ("enter", 426, (-1, 0, 0, 0, None, 0)),
                       ("register", 427, (-1, 0, None, 0))):
    print(name, libc.syscall(nr, *args), ctypes.get_errno())
"""
NAMESPACES = """\
import ctypes, os, platform, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
clone, clone3 = {"x86_64": (56, 435), "aarch64": (220, 435)}[platform.machine()]
# CLONE_NEWUSER with CLONE_FS, and CLONE_THREAD without CLONE_SIGHAND: the kernel refuses both with EINVAL (22)
# before it makes anything, so an errno of the filter's own (EPERM 1, ENOSYS 38) shows the call never reached it.
flags = 0x10000000 | 0x00000200 | 0x00010000
def call(name, *args):
    got = libc.syscall(*args)
    if got == 0:  # a child after all: leave at once
        os._exit(0)
    print(name, got, ctypes.get_errno())
call("clone", clone, ctypes.c_ulong(flags), None, None, None, None)
args = ctypes.create_string_buffer(struct.pack("<8Q", flags, 0, 0, 0, 0, 0, 0, 0), 64)  # struct clone_args
call("clone3", clone3, args, ctypes.c_size_t(64))
"""
FORKS = """\
import os, time
n = 0
for _ in range(100):
    try:
        pid = os.fork()
    except OSError:
        print("refused after", n)
        break
    if pid == 0:
        time.sleep(2)
        os._exit(0)
    n += 1
else:
    print("forked", n)
"""


@dataclass
class Place:
    """A user's machine in miniature: a home with a secret, a checkout with its git and state directories, the
    toolchain, the main checkout's Lean packages, and the Worker's working copy elsewhere."""

    home: Path
    checkout: Path
    work: Path

    def sandbox(self, **config: object) -> Sandbox:
        read_only = [str(STANDIN_DIR)]
        return Sandbox(SandboxConfig(read_only=read_only, **config),  # type: ignore[arg-type]
                       hidden=(self.checkout, self.checkout / ".git"), packages=self.checkout / ".lake/packages")

    def run(self, args: list[str], sandbox: Sandbox | None = None) -> Completed:
        """`args` run in the working copy through the sandbox, as a claude-code Worker's Bash runs them."""
        return run((sandbox or self.sandbox()).wrap(args, self.work), self.work, 60)

    def compile(self, lean: str, sandbox: Sandbox | None = None, timeout_s: int = 30) -> CheckResult:
        write(self.work, {"Book/Attack.lean": lean})
        config = BuildConfig(check_file=f"{sys.executable} {STANDIN} check {{file}}", timeout_s=timeout_s)
        return LakeCompiler(self.work, config, sandbox or self.sandbox()).check("Book/Attack.lean", "Book.Attack")


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    home, checkout, work = tmp_path / "home", tmp_path / "book", tmp_path / "cache" / "worker-0"
    write(home, {".ssh/id_ed25519": "PRIVATE KEY\n", ".elan/toolchains/v4/bin/lean": "#!/bin/sh\n"})
    write(checkout, {"Book/A.lean": "theorem a : True := trivial\n", ".prover-state/statement_lock.json": "{}\n",
                     ".lake/packages/mathlib/Mathlib.lean": "-- Mathlib\n"})
    git(checkout, "init", "-q")
    write(work, {"Book/A.lean": "theorem a : True := trivial\n", "lakefile.toml": 'name = "book"\n'})
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("ELAN_HOME", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GITHUB_TOKEN", KEY + "-gh")
    return Place(home, checkout, work)


def test_no_process_environment_holds_a_key(place: Place) -> None:
    # The orchestrator, and the git children it starts, hold the key: reading every /proc/*/environ finds none.
    with _holding_the_key():
        result = place.compile('#eval IO.getEnv "ANTHROPIC_API_KEY"\n\n#eval do\n'
                               '  for entry in ← System.FilePath.readDir "/proc" do\n'
                               '    try IO.println (← IO.FS.readFile (entry.path / "environ")) catch _ => pure ()\n')

        assert result.ok, result.output
        assert KEY not in result.output and "GITHUB_TOKEN" not in result.output
        assert result.output.startswith("none\n")  # IO.getEnv
        assert "HOME=/tmp/home" in result.output  # the loop did read the environments it could see

        unconfined = place.compile(place.work.joinpath("Book/Attack.lean").read_text(),
                                   Sandbox(SandboxConfig(mode="none")))
        assert KEY in unconfined.output  # the orchestrator's own environment, through /proc


def test_writes_outside_the_build_outputs_fail(place: Place) -> None:
    targets = {"source": place.work / "Book/A.lean", "hook": place.checkout / ".git/hooks/post-commit",
               "state": place.checkout / ".prover-state/statement_lock.json",
               "packages": place.checkout / ".lake/packages/mathlib/Mathlib.lean",
               "toolchain": place.home / ".elan/toolchains/v4/bin/lean", "program": Path(sys.prefix) / "planted",
               "home": REAL_HOME / ".autoformalize-sandbox-canary"}
    before = {name: path.read_bytes() if path.exists() else None for name, path in targets.items()}
    lean = "".join(f'#eval IO.FS.writeFile "{path}" "#!/bin/sh\\ncurl evil"\n\n' for path in targets.values())

    try:
        result = place.compile(lean + '#eval IO.FS.writeFile ".lake/ok.txt" "built"\n')
        assert {name: path.read_bytes() if path.exists() else None for name, path in targets.items()} == before
    finally:
        targets["home"].unlink(missing_ok=True)
    unwritable, invisible = "read-only file system (error code: 30)", "no such file or directory (error code: 2)"
    assert [d.message for d in result.errors][:6] == [
        f"{unwritable}\n  file: {targets['source']}", f"{invisible}\n  file: {targets['hook']}",
        f"{invisible}\n  file: {targets['state']}", f"{unwritable}\n  file: {targets['packages']}",
        f"{unwritable}\n  file: {targets['toolchain']}", f"{unwritable}\n  file: {targets['program']}"], result.output
    # Your home: absent, or (when something inside it is shown, a Python under ~/.pyenv) read-only.
    assert result.errors[6].message in (f"{m}\n  file: {targets['home']}" for m in (unwritable, invisible))
    assert len(result.errors) == 7 and (place.work / ".lake/ok.txt").read_text() == "built"  # lake's outputs


def test_the_checkout_home_and_git_directory_are_not_visible(place: Place) -> None:
    paths = [place.home / ".ssh/id_ed25519", place.checkout / ".git/config",
             place.checkout / ".prover-state/statement_lock.json", Path("/etc/shadow")]

    result = place.compile('#eval IO.FS.readFile ".lake/packages/mathlib/Mathlib.lean"\n\n'
                           + "".join(f'#eval IO.FS.readFile "{p}"\n\n' for p in paths))

    assert result.output.startswith('"-- Mathlib\\n"\n')  # the dependencies are readable, through the link
    assert [d.message for d in result.errors] == [f"no such file or directory (error code: 2)\n  file: {p}"
                                                  for p in paths]


def test_a_setsid_sleeper_is_gone_after_the_timeout(place: Place) -> None:
    lean = ('#eval discard <| IO.Process.spawn { cmd := "setsid", args := #["sleep", "4242"] }\n\n'
            "#eval IO.sleep 60000\n")

    unconfined = place.compile(lean, Sandbox(SandboxConfig(mode="none")), timeout_s=2)
    assert unconfined.exit_code is None
    escaped = _sleepers("4242")
    for pid in escaped:  # the process-group kill missed it: this is what the sandbox is for
        os.kill(pid, signal.SIGKILL)
    assert escaped

    result = place.compile(lean, timeout_s=2)

    assert result.exit_code is None  # timed out
    assert _gone("4242")


def test_a_network_connect_fails(place: Place) -> None:
    with _listener() as (port, accepted):
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        lean = f'#eval IO.Process.output {{ cmd := "{sys.executable}", args := #["-c", "{connect}"] }}\n'

        result = place.compile(lean)
        assert "exitCode := 1" in result.output and "Connection refused" in result.output, result.output
        assert accepted == []

        place.compile(lean, Sandbox(SandboxConfig(mode="none")))
        assert len(accepted) == 1  # the same payload, unconfined, reached the host


def test_memory_is_limited_but_mapped_files_do_not_count(place: Place) -> None:
    big = place.work / ".lake/packages.olean"
    big.parent.mkdir(exist_ok=True)
    with big.open("wb") as f:
        f.truncate(1024 * 1024 * 1024)  # sparse: a GiB mapped read-only, as Lean maps Mathlib's .olean files
    program = ("import mmap, sys; f = open(sys.argv[1], 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); "
               "print('mapped', len(m)); bytearray(512 * 1024 * 1024)")
    lean = f'#eval IO.Process.output {{ cmd := "{sys.executable}", args := #["-c", "{program}", "{big}"] }}\n'

    result = place.compile(lean, place.sandbox(memory_mb=256))

    assert "mapped 1073741824" in result.output and "MemoryError" in result.output, result.output
    assert "exitCode := 0" in place.compile(lean, place.sandbox(memory_mb=2048)).output


def test_cpu_time_is_limited(place: Place) -> None:
    lean = f'#eval IO.Process.output {{ cmd := "{sys.executable}", args := #["-c", "while True: pass"] }}\n'

    result = place.compile(lean, place.sandbox(cpu_s=1))

    # Killed at the limit: SIGXCPU, or SIGKILL when the soft and hard limits coincide.
    assert any(f"exitCode := -{s}," in result.output for s in (signal.SIGXCPU, signal.SIGKILL)), result.output
    assert "exitCode := 0" in place.compile(lean.replace("while True: pass", "pass"), place.sandbox(cpu_s=1)).output


def test_a_replaced_packages_link_is_restored_before_the_next_run(place: Place) -> None:
    place.compile("#eval IO.sleep 1\n")  # the first run links the working copy's packages
    link = place.work / ".lake/packages"
    assert link.is_symlink()
    link.unlink()  # as code in the sandbox may: its `.lake` is writable
    write(place.work, {".lake/packages/mathlib/Mathlib.lean": "-- forged\n"})

    result = place.compile('#eval IO.FS.readFile ".lake/packages/mathlib/Mathlib.lean"\n')

    assert '"-- Mathlib\\n"' in result.output and link.is_symlink()


def test_the_environment_is_an_allowlist(place: Place, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("LAKE_EXTRA", "x1")
    monkeypatch.setenv("UNLISTED", "x2")
    sandbox = place.sandbox(env=["LAKE_EXTRA"])

    env = sandbox.environment()

    assert {"PATH", "LC_TIME", "LAKE_EXTRA", "HOME", "TMPDIR"} <= set(env) and "UNLISTED" not in env
    assert "ANTHROPIC_API_KEY" not in env and "GITHUB_TOKEN" not in env and env["HOME"] == "/tmp/home"
    assert Sandbox(SandboxConfig(mode="none")).environment()["HOME"] == str(place.home)
    with pytest.raises(ValidationError, match="MY_API_KEY, OPENAI_BASE_URL look like credentials"):
        SandboxConfig(env=["LAKE_EXTRA", "MY_API_KEY", "OPENAI_BASE_URL"])


def test_without_bwrap_the_commands_refuse_saying_how_to_install_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("env", "sh", "prlimit", "setpriv", "true"):
        (tools / name).symlink_to(shutil.which(name) or name)
    monkeypatch.setenv("PATH", str(tools))
    config = SandboxConfig()

    assert probe(config) == "bwrap (bubblewrap) is not installed"
    with pytest.raises(UsageError, match=r"sudo apt-get install bubblewrap.*apparmor_restrict_unprivileged_userns"
                                         r".*mode = \"none\""):
        check(config)
    assert "a cycle would refuse to start (exit 2)" in describe(config)

    # bwrap present but unable to create namespaces (Ubuntu 24.04's AppArmor restriction), as bwrap reports it
    (tools / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    (tools / "bwrap").chmod(0o755)
    assert "setting up uid map: Permission denied" in (probe(config) or "")
    check(SandboxConfig(mode="none"))  # opting out always starts
    assert "unsandboxed" in describe(SandboxConfig(mode="none"))


def test_the_real_bwrap_works_here() -> None:
    assert probe(SandboxConfig()) is None


def test_the_kernel_settings_and_dev_are_read_only(place: Place) -> None:
    # uid 0 keeps its owner rights on /proc/sys even without capabilities: core_pattern pointing at a script in
    # the writable .lake would run it as root on the host at the next crash. The value written is the current one.
    pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    write(place.work, {"probe.py": WRITABLE_PROC})

    result = place.compile(f'#eval IO.FS.writeFile "/proc/sys/kernel/core_pattern" "{pattern.strip()}"\n')
    done = place.run([sys.executable, "probe.py"])

    assert [d.message for d in result.errors] == [f"{m}\n  file: /proc/sys/kernel/core_pattern" for m in (
        "read-only file system (error code: 30)",)] or "permission denied" in result.output, result.output
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0] == "writable: none", done.output[:2000]
    assert "cannot create /dev/planted" in place.run(["/bin/sh", "-c", "echo x > /dev/planted"]).output
    if os.geteuid() == 0:  # root in the container: the code is someone else
        assert place.run(["id", "-u"]).output.strip() == "65534"


def test_no_user_namespace_and_no_keyring(place: Place, tmp_path: Path) -> None:
    # A key in the caller's session keyring (not namespaced), and `unshare -U`, which would give the code every
    # capability over the namespaces it then makes.
    args = place.sandbox().wrap([sys.executable, "-c", KEYCTL_READ], place.work)
    parent = tmp_path / "parent.py"
    parent.write_text(KEYRING_PARENT)

    inside = subprocess.run([sys.executable, str(parent), *args], cwd=place.work, capture_output=True, text=True,
                            timeout=60)
    unshare = place.run(["unshare", "-U", "true"])

    assert "keyctl errno 1" in inside.stdout and "KEYRING-SECRET" not in inside.stdout, inside.stdout + inside.stderr
    assert unshare.exit_code != 0 and "unshare failed" in unshare.output, unshare.output
    threads = place.run([sys.executable, "-c", "import threading; t = threading.Thread(target=print, args=('ok',)); "
                                               "t.start(); t.join()"])
    assert threads.output.strip() == "ok"  # clone3 refused with ENOSYS: the C library falls back to clone


def test_clone_and_clone3_making_a_user_namespace_fail_inside(place: Place) -> None:
    # `unshare -U` is not the only way in: `clone` takes the same flag, and `clone3` takes it in memory the filter
    # cannot read, so it is refused whatever its flags (ENOSYS: the C library falls back to `clone`).
    unconfined = subprocess.run([sys.executable, "-c", NAMESPACES], capture_output=True, text=True, timeout=60)
    inside = place.run([sys.executable, "-c", NAMESPACES])

    assert unconfined.stdout.splitlines() == ["clone -1 22", "clone3 -1 22"], unconfined.stdout + unconfined.stderr
    assert inside.output.splitlines() == ["clone -1 1", "clone3 -1 38"], inside.output  # EPERM, ENOSYS


def test_etc_holds_only_what_programs_read_and_every_user_may_read_it(place: Place) -> None:
    # /etc is made 0755 (bwrap would make it 0700, and as root the code runs as another user): the system's
    # passwd, certificates and the like are shown, nothing else of it.
    done = place.run(["/bin/sh", "-c", "stat -c %a /etc; ls /etc; ls /; head -c 5 /etc/passwd"])
    lines = done.output.splitlines()
    assert lines[0] == "755", done.output
    assert "passwd" in lines and "shadow" not in lines and "hostname" not in lines and "ETC" not in lines, done.output
    assert lines[-1] == "root:"


def test_the_home_directory_stays_hidden_when_a_binding_would_show_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # `[sandbox] read_only` naming the home directory, or a folder holding it, shows the rest and never the home.
    home, work = tmp_path / "users" / "me", tmp_path / "cache" / "worker-0"
    write(home, {".ssh/id_ed25519": "PRIVATE KEY\n"})
    write(tmp_path / "users", {"shared/notes.txt": "shared\n"})
    write(work, {"lakefile.toml": 'name = "book"\n'})
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("ELAN_HOME", raising=False)
    read = f"cat {tmp_path}/users/shared/notes.txt; cat {home}/.ssh/id_ed25519"

    for shown in (home, tmp_path / "users"):
        sandbox = Sandbox(SandboxConfig(read_only=[str(shown)]))
        done = run(sandbox.wrap(["/bin/sh", "-c", read], work), work, 60)
        assert "PRIVATE KEY" not in done.output and "No such file" in done.output, done.output
    unconfined = run(Sandbox(SandboxConfig(mode="none")).wrap(["/bin/sh", "-c", read], work), work, 60)
    assert "PRIVATE KEY" in unconfined.output


def test_io_uring_is_refused(place: Place) -> None:
    unconfined = subprocess.run([sys.executable, "-c", IO_URING], capture_output=True, text=True, timeout=60)
    inside = place.run([sys.executable, "-c", IO_URING])

    assert inside.output.splitlines() == ["setup -1 1", "enter -1 1", "register -1 1"], inside.output  # EPERM
    # Unconfined the kernel gives its own answers (EBADF or EINVAL; a ring where it offers io_uring), never EPERM:
    # the filter refused them.
    answered = {name: errno for name, _, errno in (line.split() for line in unconfined.stdout.splitlines())}
    assert answered["enter"] != "1" and answered["register"] != "1", unconfined.stdout


def test_tmp_processes_and_files_are_bounded(place: Place) -> None:
    fill = "dd if=/dev/zero of={} bs=1M count=8 2>/dev/null; du -m {} | cut -f1"

    tmp = place.run(["/bin/sh", "-c", fill.format("/tmp/fill", "/tmp/fill")], place.sandbox(tmp_mb=4))
    shm = place.run(["/bin/sh", "-c", fill.format("/dev/shm/fill", "/dev/shm/fill")], place.sandbox(tmp_mb=4))
    file = place.run(["/bin/sh", "-c", fill.format(".lake/fill", ".lake/fill")], place.sandbox(max_file_mb=1))
    forks = place.run([sys.executable, "-c", FORKS], place.sandbox(max_processes=30))

    assert (tmp.output.strip(), shm.output.strip(), file.output.strip()) == ("4", "4", "1")
    assert forks.output.startswith("refused after "), forks.output
    assert int(forks.output.split()[2]) < 30
    assert "forked 100" in place.run([sys.executable, "-c", FORKS], place.sandbox(max_processes=0)).output


SYSTEM_PYTHON = Path("/usr/bin/python3")
AS_A_USER = """\
import json, sys
from pathlib import Path
sys.path[:0] = sys.argv[1:3]
from gates.config import SandboxConfig
from gates.process import run
from gates.sandbox import Sandbox
work = Path(sys.argv[3])
sandbox = Sandbox(SandboxConfig(max_processes=30))
def inside(*args):
    return run(sandbox.wrap(list(args), work), work, 60).output
print(json.dumps({"id": inside("id", "-u"), "unshare": inside("unshare", "-U", "true"),
                  "proc": inside(sys.executable, "probe.py"), "forks": inside(sys.executable, "-c", sys.argv[4])}))
"""


@pytest.mark.skipif(os.geteuid() != 0 or not SYSTEM_PYTHON.exists() or shutil.which("setpriv") is None,
                    reason="the unprivileged path is tested as root by running it as another user")
def test_as_a_normal_user_the_sandbox_is_a_user_namespace_of_its_own() -> None:
    # The path a workstation takes: no setpriv, a user namespace of its own, no nested one; the process limit
    # counts the sandbox's processes only (the kernel counts per user namespace and uid).
    version = subprocess.run([str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"{SYSTEM_PYTHON} is not Python {sys.version_info[:2]}: it cannot import this environment")
    home = Path(tempfile.mkdtemp())  # pytest's own temporary directories are closed to other users
    work = home / "work"
    write(work, {"probe.py": WRITABLE_PROC})
    for path in (home, work):
        path.chmod(0o777)
    site = next(p for p in sys.path if p.endswith("site-packages"))
    root = str(Path(__file__).resolve().parents[2])
    others = subprocess.Popen(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "sleep", "30"])
    try:
        done = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                               str(SYSTEM_PYTHON), "-c", AS_A_USER, root, site, str(work), FORKS],
                              capture_output=True, text=True, timeout=120, env={"PATH": os.environ["PATH"],
                                                                                "HOME": str(home)})
    finally:
        others.kill()
        shutil.rmtree(home)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["id"].strip() == "65534" and "unshare failed" in out["unshare"]
    assert out["proc"].startswith("writable: none"), out["proc"][:500]
    assert out["forks"].startswith("refused after 2"), out["forks"]  # ~28: the user's own sleeper not counted


def test_a_systemd_scope_bounds_the_whole_command_where_one_works(place: Place, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tmp_path / "tools"
    for name in ("env", "sh", "prlimit", "setpriv", "bwrap", "true"):
        write(tools, {name: ""})
        (tools / name).unlink()
        (tools / name).symlink_to(shutil.which(name) or name)
    monkeypatch.setenv("PATH", str(tools))
    config = SandboxConfig(total_memory_mb=512, max_processes=30)
    assert describe(config).endswith("no cgroup (systemd-run is not installed)")  # the per-process limits alone

    log = tmp_path / "systemd-run.log"  # systemd-run as it behaves where it works: the scope, then exec
    write(tools, {"systemd-run": f'#!/bin/sh\necho "$@" >> {log}\nwhile [ "$1" != "--" ]; do shift; done\n'
                                 'shift\nexec "$@"\n'})
    (tools / "systemd-run").chmod(0o755)

    done = place.run(["true"], place.sandbox(total_memory_mb=512, max_processes=30))

    assert done.exit_code == 0, done.output
    scope = ("" if os.geteuid() == 0 else "--user ") + "--scope --quiet --collect -p MemoryMax=512M -p TasksMax=30 -- "
    probed, ran = log.read_text().splitlines()
    assert probed == scope + "true"  # tried once: it works here
    assert ran.startswith(f"{scope}{tools / 'env'} -i ") and ran.endswith(" -- true")  # the whole command in it
    assert "a cgroup (systemd scope) of 512 MiB" in describe(config)


def test_a_prefix_under_home_is_never_shown(place: Place, monkeypatch: pytest.MonkeyPatch) -> None:
    # uv's `~/.local/bin/uvx` would show all of ~/.local, its credentials included; a Python installed under the
    # home directory (pyenv) needs its own installation, and only that.
    write(place.home, {".local/share/uv/credentials/credentials.toml": 'password = "pypi-SECRET"\n',
                       ".pyenv/secret": "PYENV SECRET\n", ".pyenv/versions/3.99/lib/python3.99/os.py": "# os\n"})
    uvx = place.home / ".local/bin/uvx"
    python = place.home / ".pyenv/versions/3.99/bin/python3.99"
    reads = {uvx: [".local/share/uv/credentials/credentials.toml"],
             python: [".pyenv/versions/3.99/lib/python3.99/os.py", ".pyenv/secret"]}
    for exe, files in reads.items():
        write(exe.parent, {exe.name: "#!/bin/sh\n" + "".join(f"cat {place.home / f}\n" for f in files)})
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{uvx.parent}:{os.environ['PATH']}")

    tool = place.run(["uvx", "lean-lsp-mcp"])
    interpreter = place.run([str(python)])

    assert "pypi-SECRET" not in tool.output and "No such file" in tool.output, tool.output
    assert "# os" in interpreter.output and "PYENV SECRET" not in interpreter.output, interpreter.output


def test_a_symlinked_toolchain_and_shared_packages_work(place: Place, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # ~/.elan a link to another disk, PATH and ELAN_HOME naming the link; the checkout's packages a link too.
    elan = tmp_path / "data/elan"
    write(elan, {"bin/lake": "#!/bin/sh\necho lake ran\ncat .lake/packages/mathlib/Mathlib.lean\n"})
    (elan / "bin/lake").chmod(0o755)
    shutil.rmtree(place.home / ".elan")
    (place.home / ".elan").symlink_to(elan)
    shared = tmp_path / "shared/packages"
    shutil.move(place.checkout / ".lake/packages", shared)
    (place.checkout / ".lake/packages").symlink_to(shared)
    monkeypatch.setenv("PATH", f"{place.home}/.elan/bin:{os.environ['PATH']}")

    result = LakeCompiler(place.work, BuildConfig(check_file="lake env lean {file}"), place.sandbox()).check(
        "Book/A.lean", "Book.A")

    assert result.exit_code == 0 and result.output == "lake ran\n-- Mathlib\n", result.output


def test_the_packages_link_is_restored_after_each_run(place: Place) -> None:
    link = place.work / ".lake/packages"

    result = place.compile('#eval IO.Process.output { cmd := "ln", args := #["-sfn", "/", ".lake/packages"] }\n')

    assert "exitCode := 0" in result.output
    assert link.is_symlink() and link.resolve() == (place.checkout / ".lake/packages").resolve()


def test_the_checkouts_packages_are_never_deleted(place: Place) -> None:
    packages = place.checkout / ".lake/packages"

    link_packages(place.checkout, packages)  # the checkout as the working copy: nothing to do
    write(place.work, {".lake/packages/mathlib/Mathlib.lean": "-- a directory code in the sandbox made\n"})
    link_packages(place.work, packages)

    assert (packages / "mathlib/Mathlib.lean").read_text() == "-- Mathlib\n" and not packages.is_symlink()
    aside = [p for p in (place.work / ".lake").iterdir() if p.name.startswith("packages.replaced-")]
    assert len(aside) == 1 and (aside[0] / "mathlib/Mathlib.lean").exists()  # moved, not deleted
    assert (place.work / ".lake/packages").resolve() == packages.resolve()


# --- helpers ---------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _holding_the_key() -> Iterator[None]:
    """A child holding the key in its environment, as the orchestrator's git processes do."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env={**os.environ})
    try:
        yield
    finally:
        child.kill()
        child.wait()


def _gone(marker: str, within_s: float = 10.0) -> bool:
    """Whether the sleepers are gone within `within_s`: the kernel kills what is left of a pid namespace once its
    first process dies, which a loaded machine may take a moment to carry out."""
    deadline = time.monotonic() + within_s
    while _sleepers(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _sleepers(marker: str) -> list[int]:
    out = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes() == f"sleep\0{marker}\0".encode():
                out.append(int(proc.name))
        except OSError:
            continue
    return out


@contextlib.contextmanager
def _listener() -> Iterator[tuple[int, list[object]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                conn, _ = server.accept()
                accepted.append(conn)
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        done.set()
        thread.join()
        server.close()
