"""Git, through GitPython: the few operations a cycle needs, each checked.

Every failing git command raises `GitError` (an infrastructure error) naming
the command and git's own message.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import git
import structlog
from git.exc import GitCommandError

from gates.indexcache import IndexCache
from state.errors import InfraError

FALLBACK_AUTHOR = ("autoformalize", "autoformalize@localhost")
# Ignored folders of build outputs and dependency checkouts, left out of an ignored-files listing.
BUILD_DIRS = frozenset({".lake", "lake-packages", "build", ".elan", "node_modules", "__pycache__", ".venv", "venv"})
NETWORK_TIMEOUT_S = 300  # a fetch or push that has not finished by then is killed: the watchdog must not wait forever
# English messages (parsed below) and no credential prompt that would wait for a human.
_ENVIRONMENT = {"LC_ALL": "C", "LANG": "C", "GIT_TERMINAL_PROMPT": "0"}
# Hooks are programs nobody reviewed, run with the orchestrator's environment by commits, merges, checkouts, pushes
# and every ref update: every git command runs with none. /dev/null can never hold one (an empty directory could be
# written into); `--no-verify` alone skips only two of them.
NO_HOOKS = f"core.hooksPath={os.devnull}"


log = structlog.get_logger()
_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
LISTINGS = 16  # commits whose file listing a checkout's Git keeps
_REGISTERING = threading.Lock()  # `git worktree add` and `prune` of one repository, one at a time


class GitError(InfraError):
    pass


@dataclass(frozen=True)
class PushResult:
    pushed: bool
    rejected: bool  # the remote moved: fetch, re-apply, try again
    message: str


class Git:
    """One checkout (the user's, or a worktree of it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self.repo = git.Repo(root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as e:
            raise GitError(f"{root} is not a git checkout ({e})") from None
        self.repo.git.update_environment(**_ENVIRONMENT)
        self.repo.git.set_persistent_git_options(c=NO_HOOKS)
        self._listings: dict[str, tuple[str, ...]] = {}
        self._blobs: dict[str, dict[str, str]] = {}
        self._common: Path | None = None
        self._listing = threading.Lock()

    def run(self, *args: str, timeout_s: float | None = None, env: Mapping[str, str] | None = None) -> str:
        try:
            # The executable GitPython was configured with (GIT_PYTHON_GIT_EXECUTABLE), not whatever is on PATH.
            command = [git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", "-c", NO_HOOKS, *args]
            return str(self.repo.git.execute(command, with_extended_output=False, strip_newline_in_stdout=True,
                                             kill_after_timeout=timeout_s, env=env))
        except GitCommandError as e:
            raise GitError(f"`git {' '.join(args)}` failed in {self.root}: {(e.stderr or e.stdout or '').strip()}"
                           ) from None

    def head(self) -> str:
        return self.run("rev-parse", "HEAD")

    def diff_binary(self, old: str, new: str) -> bytes:
        """`git diff --binary old new`, as bytes: a patch any file's content survives."""
        return self._bytes("diff", "--binary", "--no-color", "--no-ext-diff", old, new)

    def apply(self, patch: bytes) -> None:
        """Apply `patch` to the checkout's files (`git apply --binary`); GitError, changing nothing, when it does not
        apply whole."""
        with tempfile.NamedTemporaryFile(suffix=".patch") as file:
            file.write(patch)
            file.flush()
            self.run("apply", "--binary", "--whitespace=nowarn", file.name)

    def patch_paths(self, patch: bytes) -> list[str]:
        """The path each file patch of `patch` writes (a rename's or a copy's new name; `patch_modes` has the old
        ones too), as `git apply` reads them, whether or not it applies; nothing is applied. GitError when git
        cannot read it as a patch."""
        with tempfile.NamedTemporaryFile(suffix=".patch") as file:
            file.write(patch)
            file.flush()
            out = self.run("apply", "--numstat", "-z", file.name)
        return [record.split("\t", 2)[2] for record in out.split("\0") if record.count("\t") >= 2]

    def patch_modes(self, patch: bytes, base: str) -> dict[str, str]:
        """What `patch` applied at `base` records for each path it touches: the mode git would commit ("000000"
        where it deletes). Applied to a scratch index of `base`, never to the files: git's own reading of every
        header, mode changes and links included. GitError when it does not apply there."""
        with tempfile.TemporaryDirectory(prefix="autoformalize-patch-") as tmp:
            (Path(tmp) / "change.patch").write_bytes(patch)
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.run("read-tree", base, env=env)
            self.run("apply", "--cached", "--binary", "--whitespace=nowarn", str(Path(tmp) / "change.patch"), env=env)
            out = self.run("diff-index", "--cached", "--raw", "-z", "--no-renames", base, env=env)
        fields = out.split("\0")
        # `:<old mode> <new mode> <old id> <new id> <status>`, then the path
        return {path: raw.split()[1] for raw, path in zip(fields[0::2], fields[1::2], strict=False) if raw}

    def _bytes(self, *args: str) -> bytes:
        command = [git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", "-c", NO_HOOKS, *args]
        status, out, err = self.repo.git.execute(command, with_extended_output=True, with_exceptions=False,
                                                 as_process=False, stdout_as_string=False,
                                                 strip_newline_in_stdout=False)
        if status != 0:
            raise GitError(f"`git {' '.join(args)}` failed in {self.root}: {err!s}".strip())
        return bytes(out)

    def ignored(self, paths: list[str]) -> dict[str, str]:
        """Of `paths` (existing or not, tracked or not), those the ignore rules exclude, each with its rule:
        `<file>:<line>: <pattern>`."""
        command = [git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", "-c", NO_HOOKS, "check-ignore", "-v", "-z",
                   "--no-index", "--stdin"]
        with tempfile.TemporaryFile() as stdin:  # a file, not a pipe: no deadlock whatever the list's length
            stdin.write("\0".join(paths).encode())
            stdin.seek(0)
            status, out, err = self.repo.git.execute(command, istream=stdin, with_extended_output=True,
                                                     with_exceptions=False, strip_newline_in_stdout=False)
        if status not in (0, 1):  # 1: none is ignored
            raise GitError(f"`git check-ignore` failed in {self.root}: {str(err).strip()}")
        fields = str(out).split("\0")
        found = {}
        for source, line, pattern, path in zip(*[iter(fields[:len(fields) // 4 * 4])] * 4, strict=True):
            if not pattern.startswith("!"):  # a negation matched: the path is kept
                found[path] = f"{source}:{line}: {pattern}"
        return found

    def listing(self, commit: str) -> list[str]:
        """Every file of `commit`, sorted: exactly what was committed, whatever its folder. A commit named by its
        id never changes, so its listing is read once (a round's merge queue reads each base's several times)."""
        if (known := self._listings.get(commit)) is not None:
            return list(known)
        listed = self.run("ls-tree", "-r", "-z", "--name-only", commit).split("\0")
        files = sorted(p for p in listed if p)
        if _COMMIT_ID.fullmatch(commit):
            with self._listing:
                self._listings[commit] = tuple(files)
                while len(self._listings) > LISTINGS:
                    self._listings.pop(next(iter(self._listings)))
        return files

    def common_dir(self) -> Path:
        """The repository's git directory, shared by all its worktrees (asked of git once)."""
        if self._common is None:
            self._common = (self.root / self.run("rev-parse", "--git-common-dir")).resolve()
        return self._common

    def blobs(self, commit: str) -> dict[str, str]:
        """Path → blob id of every file of `commit` that is a blob (a submodule is not), read once per commit id."""
        if (known := self._blobs.get(commit)) is not None:
            return dict(known)
        out: dict[str, str] = {}
        for entry in self.run("ls-tree", "-r", "-z", "--full-tree", commit).split("\0"):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                out[path] = parts[2]
        if _COMMIT_ID.fullmatch(commit):
            with self._listing:
                self._blobs[commit] = dict(out)
                while len(self._blobs) > LISTINGS:
                    self._blobs.pop(next(iter(self._blobs)))
        return out

    def branch(self) -> str | None:
        """The checked-out branch, or None when HEAD is detached."""
        name = self.run("rev-parse", "--abbrev-ref", "HEAD")
        return None if name == "HEAD" else name

    def dirty(self) -> list[str]:
        """Changed, staged and untracked paths (ignored ones excluded)."""
        return _porcelain(self.run("status", "--porcelain=v1", "-z", "--untracked-files=all"))

    def has_remote(self, name: str) -> bool:
        return name in {r.name for r in self.repo.remotes}

    def remote_url(self, name: str) -> str | None:
        return self.repo.remotes[name].url if self.has_remote(name) else None

    def fetch(self, remote: str, branch: str) -> str | None:
        """The remote branch's commit after fetching it; None when the remote has no such branch."""
        try:
            self.run("fetch", "--quiet", remote, f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}",
                     timeout_s=NETWORK_TIMEOUT_S)
        except GitError as e:
            if "couldn't find remote ref" in str(e):
                return None
            raise
        return self.run("rev-parse", f"refs/remotes/{remote}/{branch}")

    def is_ancestor(self, older: str, newer: str) -> bool:
        try:
            self.repo.git.merge_base("--is-ancestor", older, newer)
        except GitCommandError:
            return False
        return True

    def merge_ff(self, commit: str) -> None:
        self.run("merge", "--ff-only", "--quiet", commit)

    def reset_hard(self, commit: str) -> None:
        self.run("reset", "--hard", "--quiet", commit)

    def clean(self, *exclude: str) -> None:
        """Remove untracked files (ignored ones, such as build outputs, stay)."""
        self.run("clean", "-fdq", *[a for e in exclude for a in ("-e", e)])

    def status_paths(self, *, ignored: bool = False) -> list[str]:
        """Paths git sees as changed or untracked: what `git add -A` would stage, whatever folder they are in.
        With `ignored`, the ignored paths too (which can never land), but for build and dependency folders."""
        args = ["status", "--porcelain=v1", "-z", "--untracked-files=all"]
        out = self.run(*args, *(["--ignored=matching"] if ignored else []))
        return [p for code, p in _entries(out)
                if code != "!!" or not set(p.rstrip("/").split("/")) & BUILD_DIRS]

    def changed_between(self, old: str, new: str) -> list[str]:
        """Every path whose content differs; a renamed file is its two paths (git's rename detection off)."""
        return [p for p in self.run("diff", "--name-only", "--no-renames", "-z", old, new).split("\0") if p]

    def commit_all(self, message: str) -> str:
        """Stage everything in this checkout and commit it; returns the new commit."""
        self.run("add", "-A")
        name, email = self._identity()
        self.run("-c", f"user.name={name}", "-c", f"user.email={email}", "commit", "--quiet", "--no-verify",
                 "-m", message)
        return self.head()

    def push(self, remote: str, commit: str, branch: str) -> PushResult:
        try:
            self.repo.git.push(remote, f"{commit}:refs/heads/{branch}", porcelain=True,
                               kill_after_timeout=NETWORK_TIMEOUT_S)
        except GitCommandError as e:
            text = f"{e.stdout or ''}\n{e.stderr or ''}".strip()
            rejected = any(w in text for w in ("[rejected]", "Updates were rejected", "non-fast-forward",
                                               "fetch first", "stale info"))
            return PushResult(False, rejected, text)
        return PushResult(True, False, "")

    def cherry_pick(self, commit: str) -> str:
        name, email = self._identity()
        self.run("-c", f"user.name={name}", "-c", f"user.email={email}", "cherry-pick", "--allow-empty",
                 "--keep-redundant-commits", commit)
        return self.head()

    def abort_cherry_pick(self) -> None:
        with contextlib.suppress(GitCommandError):  # nothing in progress
            self.repo.git.cherry_pick("--abort")

    def worktree(self, path: Path, commit: str) -> Git:
        """A detached worktree at `commit`, created or reset; its ignored files (build outputs) are kept.

        It is ours alone (the run lock is held), so a lock file a killed git left in it is removed, and a
        worktree that cannot be reused (the repository moved, its metadata broke) is made anew. Several may be
        prepared at once (a round's): registering one reads every other's metadata, so registrations take turns,
        and the files are checked out after.
        """
        if (path / ".git").exists():
            try:
                return self._reset_worktree(path, commit)
            except GitError as e:
                log.warning("git.worktree_recreated", path=str(path), error=str(e)[:300])
                shutil.rmtree(path, ignore_errors=True)
        with _REGISTERING:
            self.run("worktree", "prune")
            path.parent.mkdir(parents=True, exist_ok=True)
            self.run("worktree", "add", "--quiet", "--detach", "--force", "--no-checkout", str(path), commit)
        tree = Git(path)
        tree.reset_hard(commit)  # its index and files, from nothing
        return tree

    def _reset_worktree(self, path: Path, commit: str) -> Git:
        tree = Git(path)
        Path(tree.run("rev-parse", "--absolute-git-dir"), "index.lock").unlink(missing_ok=True)
        tree.abort_cherry_pick()
        tree.run("checkout", "--quiet", "--detach", "--force", commit)
        tree.reset_hard(commit)
        tree.clean()
        return tree

    def _identity(self) -> tuple[str, str]:
        reader = self.repo.config_reader()
        name = reader.get_value("user", "name", default="")
        email = reader.get_value("user", "email", default="")
        if name and email:
            return str(name), str(email)
        return FALLBACK_AUTHOR


def _porcelain(out: str) -> list[str]:
    """Paths of `git status --porcelain=v1 -z`; a rename contributes both names."""
    return [path for _, path in _entries(out)]


def _entries(out: str) -> list[tuple[str, str]]:
    """(status code, path) of `git status --porcelain=v1 -z`; a rename contributes both names."""
    paths: list[tuple[str, str]] = []
    entries = out.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        if len(entry) > 3:
            paths.append((entry[:2], entry[3:]))
            if entry[0] in "RC" and i + 1 < len(entries):
                paths.append((entry[:2], entries[i + 1]))
                i += 1
        i += 1
    return paths


def _cat_blob(executable: str, root: Path, blob: str) -> bytes:
    done = subprocess.run([executable, "-c", NO_HOOKS, "cat-file", "blob", blob], cwd=root, capture_output=True,
                          check=False)
    if done.returncode != 0:
        raise GitError(f"`git cat-file blob {blob}` failed in {root}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


class GitTree:
    """The files of one commit, read from the object store: a base no working-copy edit can change."""

    def __init__(self, git: Git, commit: str, *, writes: bool = True) -> None:
        self.git = git
        self.commit = commit
        self.writes = writes  # whether a census of it may add to the index cache
        self._files: list[str] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            self._files = self.git.listing(self.commit)
        return self._files

    def read(self, path: str) -> bytes:
        try:  # one long-lived `git cat-file --batch` serves every read
            _, kind, _, data = self.git.repo.git.get_object_data(f"{self.commit}:{path}")
        except ValueError:
            raise FileNotFoundError(path) from None
        if kind != b"blob" and kind != "blob":
            raise FileNotFoundError(path)
        return bytes(data)

    def blobs(self) -> dict[str, str]:
        return self.git.blobs(self.commit)

    def reader(self) -> Callable[[str], bytes]:
        """Reads a blob by its id, each time by a process of its own: safe from any thread, as a lazily read index's
        text is, and holding nothing of this checkout's git but its folder."""
        return functools.partial(_cat_blob, git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", self.git.root)

    def indexes(self) -> IndexCache:
        """The census's per-file indexes, kept in the git directory (`gates.indexcache`)."""
        return IndexCache(self.git.common_dir() / "autoformalize" / "census", self.writes)
