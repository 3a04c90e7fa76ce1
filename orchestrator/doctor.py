"""`autoformalize doctor`: the user's real setup checked, then the gates proved on the user's real Lean.

The setup checks say what a cycle would need and lack: Lean and Lake (their versions against `lean-toolchain`),
the sandbox, the keys of the configured backends, a writable remote, Mathlib's prebuilt cache, and whether the
project builds (in the sandbox, in a throwaway copy). The canary suite then runs every gate on each change of
`orchestrator/canaries.py`, in a throwaway copy of the project with the canaries' base committed: every cheat
must be rejected, those the kernel can see by the kernel gate alone, and the honest proof accepted. The test
machines have no Lean; this is where the gates meet it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from agents import coding
from agents.config import ENGINES, installed
from gates import listing
from gates.base import Compiler, GateInput, GateResult
from gates.build import LakeCompiler
from gates.census import census
from gates.environment import Baseline
from gates.meaning import meanings
from gates.probe import module_of
from gates.process import run
from gates.registry import GATES
from gates.sandbox import Sandbox, elan_home, probe
from gates.tree import DirTree
from orchestrator import canaries, ignores, readiness, rules, workcopy
from orchestrator import toolchain as toolchain_check
from orchestrator.canaries import CANARIES, FOLDER, Canary
from orchestrator.config import CONFIG_FILE, Config
from orchestrator.git import NETWORK_TIMEOUT_S, Git, GitError, GitTree
from orchestrator.wiring import loop_roles, sandbox_for
from state.errors import InfraError, LockHeld
from state.lock import RunLock

VERSION_TIMEOUT_S = 120.0


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "FAIL"
    SKIP = "skip"  # not checked; the detail says why


@dataclass(frozen=True)
class Finding:
    check: str
    status: Status
    detail: str


# -- the setup -------------------------------------------------------------------------------------------------


def setup(repo: Path, config: Config) -> list[Finding]:
    """Every setup check, in the order a cycle meets them; Lake's, in the Lake project's folder."""
    lake = repo / config.project.lake_dir
    return [book(repo, config), notes(repo, config), toolchain(lake), offline(lake), sandbox(config), keys(config),
            engine(config), judge(config), remote(repo, config), mathlib_cache(lake), ignored(repo, config)]


def notes(repo: Path, config: Config) -> Finding:
    """The repository's CLAUDE.md or AGENTS.md, read below the loop's rules: where it tells agents otherwise."""
    found = rules.notes(repo, config.project.state_dir)
    if not found:
        return Finding("rules", Status.OK, "the loop's own rules (no CLAUDE.md or AGENTS.md of the project's)")
    if clash := rules.conflicts(repo, config.project.state_dir):
        return Finding("rules", Status.WARN, f"{len(clash)} line(s) of the project's notes tell agents what the "
                                             "loop's rules forbid (the loop's hold): " + "; ".join(clash[:5])
                       + (" …" if len(clash) > 5 else ""))
    return Finding("rules", Status.OK, f"the loop's rules, then {' and '.join(n for n, _ in found)} as the "
                                       "project's notes")


def book(repo: Path, config: Config) -> Finding:
    """The plan: there, and the book's rather than the template's."""
    if found := readiness.book(repo, config):
        return Finding("plan", Status.FAIL, found[0])
    return Finding("plan", Status.OK, f"{config.project.plan} describes the book")


def toolchain(repo: Path) -> Finding:
    """`lake` and `lean` answer, at the version `lean-toolchain` names."""
    wanted = (repo / "lean-toolchain").read_text(encoding="utf-8").strip() if (repo / "lean-toolchain").is_file() \
        else None
    versions = []
    for args in (["lake", "--version"], ["lake", "env", "lean", "--version"]):
        try:
            done = run(args, repo, VERSION_TIMEOUT_S)
        except InfraError as e:
            return Finding("toolchain", Status.FAIL, f"{e}; install elan (https://github.com/leanprover/elan), "
                                                     "which installs the toolchain `lean-toolchain` names")
        if done.exit_code != 0:
            tail = " ".join(done.output.strip().splitlines()[-3:])
            return Finding("toolchain", Status.FAIL, f"`{' '.join(args)}` exited with {done.exit_code}: {tail}")
        versions.append(done.output.strip().splitlines()[0] if done.output.strip() else "(no version printed)")
    lean = versions[1]
    tag = wanted.rsplit(":", 1)[-1].lstrip("v") if wanted else None
    if tag and tag not in lean:
        return Finding("toolchain", Status.WARN, f"{lean}; {versions[0]}; but lean-toolchain says {wanted}")
    return Finding("toolchain", Status.OK, f"{lean}; {versions[0]}")


def offline(repo: Path) -> Finding:
    """What a sandboxed compile, which has no network, would have to download."""
    missing = toolchain_check.problems(repo)
    if missing:
        return Finding("downloads", Status.FAIL, "; ".join(missing))
    elan = elan_home()
    if (repo / "lean-toolchain").is_file() and not (elan / "toolchains").is_dir():
        return Finding("downloads", Status.WARN, f"elan is not installed ({elan} holds no toolchains), so whether the "
                                                 "toolchain lean-toolchain names is on disk was not checked; the "
                                                 "dependencies are on disk")
    return Finding("downloads", Status.OK, "the toolchain lean-toolchain names (elan's) and the dependencies are on "
                                           "disk")


def sandbox(config: Config) -> Finding:
    if config.sandbox.mode == "none":
        return Finding("sandbox", Status.WARN, "off ([sandbox] mode = \"none\"): the code the Worker writes runs "
                                               "with your user's rights")
    problem = probe(config.sandbox)
    if problem:
        return Finding("sandbox", Status.FAIL, problem)
    return Finding("sandbox", Status.OK, f"bubblewrap works (memory {config.sandbox.memory_mb} MiB, cpu "
                                         f"{config.sandbox.cpu_s} s per process)")


def keys(config: Config) -> Finding:
    """Every loop role's key set and its backend's SDK installed."""
    if found := readiness.endpoints(config, loop_roles(config)):
        return Finding("keys", Status.FAIL, "; ".join(found))
    backends = sorted({e.backend for _, agent in config.agents for e in [agent, *agent.fallbacks]
                       if _ in loop_roles(config)})
    return Finding("keys", Status.OK, f"every loop role has its key ({', '.join(backends)})")


def engine(config: Config) -> Finding:
    """The Worker's coding agent, when it is one: its CLI found, its version, its credential."""
    worker = config.agents.worker
    if worker.backend not in ENGINES:
        return Finding("engine", Status.OK, f"none: the Worker is the {worker.backend} backend's tool loop")
    if not installed(worker.backend):
        return Finding("engine", Status.FAIL, f"the {worker.backend} backend's SDK is not installed")
    found = coding.check(worker)
    if found.problem:
        return Finding("engine", Status.FAIL, found.problem)
    return Finding("engine", Status.OK, f"{found.line(worker.backend)}, in a sandbox of its own")


def judge(config: Config) -> Finding:
    """Which backend and model judge the loop's statements (chosen from the keys set and the SDKs installed, unless
    `[agents.judge]` names them)."""
    j = config.agents.judge
    if not config.audit.judge_in_loop:
        return Finding("judge", Status.OK, "off ([audit] judge_in_loop = false)")
    return Finding("judge", Status.OK, f"{j.model} on the {j.backend} backend")


def ignored(repo: Path, config: Config) -> Finding:
    """No state file a cycle commits is excluded by an ignore rule."""
    found = ignores.swallowed(Git(repo), config.state(repo), config.project.plan, CONFIG_FILE)
    if found:
        return Finding("ignore rules", Status.FAIL, ignores.refusal(found))
    return Finding("ignore rules", Status.OK, "no rule excludes a file a cycle commits")


def remote(repo: Path, config: Config) -> Finding:
    """The remote accepts a push of the branch (a dry run: nothing is sent)."""
    git, name, branch = Git(repo), config.git.remote, config.git.branch
    if not git.has_remote(name):
        return Finding("remote", Status.OK, f"no remote {name!r}: cycles commit locally")
    if not config.git.push:
        return Finding("remote", Status.OK, "[git] push = false: cycles commit locally")
    if refused := checked_out(git, name, branch):
        return Finding("remote", Status.FAIL, refused)
    try:
        git.run("push", "--dry-run", "--porcelain", name, f"HEAD:refs/heads/{branch}", timeout_s=NETWORK_TIMEOUT_S)
    except GitError as e:
        text = str(e)
        if "rejected" in text or "non-fast-forward" in text or "fetch first" in text:
            return Finding("remote", Status.WARN, f"{name}/{branch} has commits this checkout lacks; the next cycle "
                                                  "fast-forwards to them")
        return Finding("remote", Status.FAIL, f"cannot push to {name}: {text[-400:]}")
    return Finding("remote", Status.OK, f"{name} accepts a push to {branch}")


def checked_out(git: Git, name: str, branch: str) -> str | None:
    """Why a local, non-bare remote would refuse the push that `git push --dry-run` cannot see refused: the branch
    is checked out there and its `receive.denyCurrentBranch` keeps the default (refuse)."""
    url = git.run("remote", "get-url", name).strip()
    path = Path(url.removeprefix("file://")) if url.startswith(("/", "file://", ".")) else None
    if path is None:
        return None
    path = path if path.is_absolute() else (git.root / path)
    if not (path / ".git").exists():
        return None  # bare, or not a repository: the dry run answers
    there = Git(path)
    if there.branch() != branch:
        return None
    try:
        setting = there.run("config", "--get", "receive.denyCurrentBranch").strip() or "refuse"
    except GitError:  # unset
        setting = "refuse"
    if setting in ("ignore", "warn", "updateInstead", "false"):
        return None
    return (f"{name} ({path}) is a repository with a work tree and {branch} checked out, so it refuses a push to "
            f"{branch} (receive.denyCurrentBranch = {setting}); push to a bare repository (`git clone --bare`), or "
            "set [git] push = false")


def mathlib_cache(repo: Path) -> Finding:
    """Mathlib's prebuilt `.olean` files are present, when Mathlib is a dependency."""
    package = repo / ".lake" / "packages" / "mathlib"
    manifest = repo / "lake-manifest.json"
    named = manifest.is_file() and '"mathlib"' in manifest.read_text(encoding="utf-8", errors="replace")
    if not package.is_dir():
        if named:
            return Finding("mathlib", Status.FAIL, "lake-manifest.json names mathlib but .lake/packages/mathlib is "
                                                   f"missing: run `lake exe cache get` in {repo}")
        return Finding("mathlib", Status.OK, "not a dependency")
    built = any((package / ".lake" / "build" / "lib" / sub / "Mathlib.olean").is_file() for sub in ("lean", "."))
    if not built:
        return Finding("mathlib", Status.FAIL, "Mathlib's .olean files are missing: run `lake exe cache get` "
                                               "(building Mathlib itself takes hours, and the sandbox cannot download)")
    return Finding("mathlib", Status.OK, "the prebuilt cache is in .lake/packages/mathlib")


def builds(repo: Path, config: Config, sandboxed: Sandbox) -> Finding:
    """The project builds in the sandbox, in the Worker's working copy at HEAD (warm build outputs), as a first
    cycle's baseline builds it. The run lock is held meanwhile: a running loop owns that copy."""
    git = Git(repo)
    try:
        with RunLock(config.state(repo).lock):
            work = workcopy.prepare(git, git.head(), config.project.lake_dir)
            result = LakeCompiler(work.root, config.build, sandboxed).build_all()
    except LockHeld:
        return Finding("build", Status.WARN, "a loop holds the run lock; its baseline checks the build every cycle")
    if result.ok:
        return Finding("build", Status.OK, f"`{result.command}` passed in {result.seconds:.0f}s")
    errors = [str(d) for d in result.errors[:5]] or result.output.strip().splitlines()[-5:]
    status = "timed out" if result.exit_code is None else f"exited with {result.exit_code}"
    return Finding("build", Status.FAIL, f"`{result.command}` {status}: " + " | ".join(errors))


# -- the canaries ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdicts:
    """What each gate said of one canary's change."""

    canary: Canary
    results: list[GateResult]
    holes: int | None = None  # what the census counts in the canary's files after the change, Lean's where it listed

    @property
    def rejected_by(self) -> list[str]:
        return [r.name for r in self.results if not r.passed]

    def finding(self) -> Finding:
        c = self.canary
        if not self.results:
            return Finding(f"canary {c.name}", Status.WARN, f"skipped: it needs {c.needs}, which the project does not "
                                                             "depend on")
        build = next((r for r in self.results if r.name == "build"), None)
        decisive = next((r for r in self.results if r.name == c.gate), None)
        if c.honest:
            if self.rejected_by:
                return Finding(f"canary {c.name}", Status.FAIL, "the honest proof was rejected: "
                               + "; ".join(f"{r.name}: {_short(r.detail)}" for r in self.results if not r.passed))
            return Finding(f"canary {c.name}", Status.OK, "accepted, as it must be")
        if c.counted is not None:
            if self.rejected_by:
                return Finding(f"canary {c.name}", Status.FAIL, "rejected, though every gate must accept it: "
                               + "; ".join(f"{r.name}: {_short(r.detail)}" for r in self.results if not r.passed))
            if self.holes != c.counted:
                return Finding(f"canary {c.name}", Status.FAIL, f"{c.what}; the count gives {self.holes} hole(s), not "
                               f"the {c.counted} Lean's terms hold: the change would be scored as progress")
            return Finding(f"canary {c.name}", Status.OK, f"accepted, and counted as Lean counts: {c.counted} holes")
        if not self.rejected_by:
            return Finding(f"canary {c.name}", Status.FAIL, f"GOT THROUGH: {c.what}; no gate rejected it")
        if build is not None and not build.passed:
            return Finding(f"canary {c.name}", Status.FAIL, "the canary does not compile on this Lean, so it proves "
                           f"nothing about the gates: {_short(build.detail)}")
        if c.gate and (decisive is None or decisive.passed):
            caught = ", ".join(self.rejected_by)
            return Finding(f"canary {c.name}", Status.FAIL, f"rejected by {caught} only: the {c.gate} gate let it "
                           f"through ({_short(decisive.detail) if decisive else 'it did not run'})")
        return Finding(f"canary {c.name}", Status.OK, "rejected by " + ", ".join(self.rejected_by))


def probed(got: listing.Gathered) -> Finding:
    """What the environment probe cost on this Lean, listing the canaries' base: the one run of the program a cycle
    makes per side, over a closure of the project's size."""
    if got.problem is not None:
        return Finding("environment probe", Status.FAIL, f"Lean did not list the canaries' base: {_short(got.problem)}")
    consts = sum(len(m.consts) for m in got.modules.values())
    return Finding("environment probe", Status.OK, f"Lean listed {consts} constants of {len(got.modules)} module(s) "
                   f"({len(got.files)} loaded) in {got.seconds:.1f}s ({got.runs} Lean run(s))")


def run_canaries(repo: Path, config: Config, compiler_for: Callable[[Path], Compiler],
                 selected: tuple[Canary, ...] = CANARIES,
                 listed: Callable[[listing.Gathered], None] = lambda got: None) -> list[Verdicts]:
    """Every canary's change judged by every gate, in a throwaway copy of `repo` at HEAD; `listed` is told what Lean
    listed of the canaries' base."""
    root = _canary_root(config)
    module = module_of(f"{root}/{FOLDER}.lean", config.project.lean_roots) if root else FOLDER
    folder = f"{root}/{FOLDER}" if root else FOLDER
    with throwaway(repo, config.project.lake_dir) as copy:
        git = Git(copy)
        skipped = [c for c in selected if c.needs and not depends_on(copy / config.project.lake_dir, c.needs)]
        selected = tuple(c for c in selected if c not in skipped)
        files = {f"{folder}/{name}": canaries.render(text, module) for c in selected for name, text in c.base.items()}
        base = _commit(git, files, "canaries: the base")
        before = census(GitTree(git, base), config.project.lean_roots)
        judged = {n: found[0] for n, found in meanings(before).items()}  # as the lock holds a statement's text
        # What Lean lists of the base's canary files before any cheat, as a cycle's `base_facts` asks it.
        digest = listing.toolchain(copy / config.project.lake_dir)
        keyed = listing.chain(digest, GitTree(git, base), config.project.lean_roots, config.gates,
                              config.project.state_dir)
        got = listing.gather(compiler_for(copy), before, config.project.lean_roots, set(files), keyed, None)
        listed(got)
        baseline = Baseline(got.modules, {}, got.problem, digest)
        before.lean.update(got.modules)
        out = []
        for canary in selected:
            git.reset_hard(base)
            git.clean()
            for name, text in canary.change.items():
                path = copy / folder / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(canaries.render(text, module), encoding="utf-8")
            inp = GateInput(base=GitTree(git, base), changed=DirTree(copy), gates=config.gates, build=config.build,
                            lean_roots=config.project.lean_roots, state_dir=config.project.state_dir,
                            scope=[f"{folder}/**"], report="", cycle=1, compiler=compiler_for(copy),
                            base_census=before, candidates=sorted(set(git.status_paths())), kernel_base=baseline,
                            strategy=canaries.render(canary.strategy, module),
                            locked={name: judged[name] for n in canary.locked
                                    if (name := canaries.render(n, module)) in judged})
            results = [check(inp) for check in GATES.values()]
            own = {f"{folder}/{name}" for name in canary.change}
            holes = sum(h.count for h in inp.after.holed() if h.path in own)
            out.append(Verdicts(canary, results, holes))
        return out + [Verdicts(c, []) for c in skipped]


def depends_on(lake_root: Path, package: str) -> bool:
    """Whether the Lake project at `lake_root` has the dependency `package`, fetched."""
    manifest = lake_root / "lake-manifest.json"
    try:
        named = {p.get("name") for p in json.loads(manifest.read_text(encoding="utf-8")).get("packages", [])}
    except (OSError, ValueError, AttributeError):
        return False
    return package in named and (lake_root / ".lake" / "packages" / package).is_dir()


@contextmanager
def throwaway(repo: Path, lake_dir: str = ".") -> Iterator[Path]:
    """A clone of `repo` at HEAD in a temporary directory, sharing its objects and the Lake project's
    `.lake/packages`; removed after."""
    parent = Path(tempfile.mkdtemp(prefix="autoformalize-doctor-"))
    copy = parent / repo.name
    try:
        Git(repo).run("clone", "--quiet", "--shared", "--no-hardlinks", str(repo), str(copy))
        workcopy.link_packages(copy / lake_dir, repo / lake_dir / ".lake" / "packages")
        yield copy
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _canary_root(config: Config) -> str:
    roots = [r.strip("/") for r in config.project.lean_roots]
    return roots[0] if roots else ""


def _commit(git: Git, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        path = git.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return git.commit_all(message)


def _short(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def examine(repo: Path, config: Config, *, with_canaries: bool = True,
            say: Callable[[Finding], None] = lambda f: None) -> list[Finding]:
    """The setup checks, the build, then (unless told not to) the canaries; each handed to `say` as it is known."""
    findings: list[Finding] = []

    def found(*new: Finding) -> None:
        for f in new:
            findings.append(f)
            say(f)

    found(*setup(repo, config))
    blocked = [f.check for f in findings if f.status is Status.FAIL and f.check in ("toolchain", "sandbox")]
    if blocked:  # nothing can be compiled
        why = f"skipped: the {' and the '.join(blocked)} check failed, so nothing can be compiled"
        found(Finding("build", Status.SKIP, why))
        if with_canaries:
            found(Finding("canaries", Status.SKIP, why))
        return findings
    sandboxed = sandbox_for(config, repo)
    found(builds(repo, config, sandboxed))
    if with_canaries:
        for verdicts in run_canaries(repo, config, lambda root: LakeCompiler(root, config.build, sandboxed),
                                     listed=lambda got: found(probed(got))):
            found(verdicts.finding())
    else:
        found(Finding("canaries", Status.SKIP, "skipped (--no-canaries): the gates were not tried on this Lean"))
    return findings
