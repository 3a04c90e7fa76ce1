"""People's verdicts, from the review application to the branch: never lost, never racing the loop.

A verdict first goes to the inbox, a folder in the repository's git directory (no commit, no worktree and no
agent sees it). It lands through the path the loop's own commits take: on the branch's head (caught up with the
remote first), in a worktree of its own, one commit per verdict with the person's git identity as author and
committer, pushed (a push that loses a race fetches and lands again, on the new head), then the checkout
fast-forwards. It lands only under the run lock: the review application lands it at once when no cycle holds the
lock, and otherwise a cycle lands it in its sync, before its base is taken, and pushes it at once (a verdict left for
the cycle's own push would be dropped when that push loses a race: the change is redone on the remote's head).
An inbox file is deleted only once its commit is on the branch (and pushed, where the application pushes).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import structlog
from pydantic import BaseModel, ValidationError

from gates.census import Census, census
from gates.meaning import closures
from gates.tree import DirTree
from orchestrator.config import Config
from orchestrator.git import Git, GitError
from state.atomic import write_atomic
from state.errors import LockHeld, UsageError
from state.files import read_text
from state.lock import RunLock
from state.paths import StatePaths
from state.reviews import (
    Review,
    Reviews,
    Standing,
    Verdict,
    appended,
    issue_slug,
    legacy_slug,
    parse,
    standing,
)

log = structlog.get_logger()
PUSH_ATTEMPTS = 3
TRAILER = "Autoformalize-Review"
"""The trailer of a verdict's commit: its verdict."""


class Pending(BaseModel):
    """A verdict waiting to land: the entry, the issue a rejection opens, and who commits it."""

    review: Review
    name: str  # the reviewer's git identity: the commit's author and committer
    email: str
    issue: str = ""  # the text of `review-<entity>.md`, for a rejection


@dataclass
class Landed:
    commits: list[str] = field(default_factory=list)
    waiting: int = 0  # verdicts still in the inbox
    pushed: bool | None = None  # None: nothing to push, or pushing is not this path's
    message: str = ""  # what the person should know, when something did not go through


def recorded(git: Git, rev: str, file: str) -> Reviews:
    """The verdicts of `file` at commit `rev`, each with its reviewer and time: an entry written by hand, or merged
    from a pull request, without them has its commit's author and date (`git blame` of its `[[review]]` line)."""
    try:
        text = git.run("show", f"{rev}:{file}")
    except GitError:
        return Reviews()  # no such file at `rev`: nobody has reviewed anything yet
    return _attributed(git, parse(text + "\n", file), file, rev)


def current(git: Git, file: str) -> Reviews:
    """The verdicts of `file` as the working tree holds it (never through a symbolic link), attributed as `recorded`
    attributes them; an entry not committed yet has no reviewer until it is."""
    text = read_text(git.root / file)
    return Reviews() if text is None else _attributed(git, parse(text, file), file)


def _attributed(git: Git, found: Reviews, file: str, *rev: str) -> Reviews:
    """`found` with each entry lacking a reviewer or a time given its commit's author and date (`git blame` of its
    `[[review]]` line, at `rev` or in the working tree)."""
    blind = [e for e in found.entries if not e.review.reviewer or e.review.at is None]
    if not blind:
        return found
    try:
        lines = git.run("blame", "--line-porcelain", *[a for e in blind for a in ("-L", f"{e.line},{e.line}")],
                        *rev, "--", file)
    except GitError:  # a file git does not track yet: no commit to tell
        return found
    by_line = _blamed(lines)
    for i, e in enumerate(found.entries):
        if e in blind and e.line in by_line:
            who, when = by_line[e.line]
            review = e.review.model_copy(update={"reviewer": e.review.reviewer or who, "at": e.review.at or when})
            found.entries[i] = type(e)(review, e.line)
    return found


def held(git: Git, rev: str, file: str, census: Census) -> dict[str, Standing]:
    """What people's verdicts in `file` at commit `rev` hold, given what `census` (`rev`'s) means: the loop reads
    them from the base, never from a change."""
    found = recorded(git, rev, file)
    for problem in found.problems:
        log.warning("reviews.unreadable", problem=problem[:300])
    if not found.entries:
        return {}
    return standing(found.reviews, closures(census, only=[r.declaration for r in found.reviews]))


def _blamed(porcelain: str) -> dict[int, tuple[str, datetime]]:
    """`git blame --line-porcelain`: final line number → its commit's author (`Name <email>`) and date."""
    out: dict[int, tuple[str, datetime]] = {}
    line, name, mail, when = 0, "", "", datetime.fromtimestamp(0, UTC)
    for row in porcelain.splitlines():
        head, _, rest = row.partition(" ")
        if len(head) in (40, 64) and all(ch in "0123456789abcdef" for ch in head):
            # A line not committed yet (git names it by zeros) has no author: 0 keeps it out.
            line = int(rest.split()[1]) if head.strip("0") else 0
        elif head == "author":
            name = rest
        elif head == "author-mail":
            mail = rest.strip("<>")
        elif head == "author-time":
            when = datetime.fromtimestamp(int(rest), UTC)
        elif row.startswith("\t") and line:
            out[line] = (f"{name} <{mail}>", when)
    return out


def identity(git: Git) -> tuple[str, str]:
    """The person's git identity (`user.name`, `user.email`), which their verdicts are committed under."""
    reader = git.repo.config_reader()
    name = str(reader.get_value("user", "name", default="")).strip()
    email = str(reader.get_value("user", "email", default="")).strip()
    if not name or not email:
        raise UsageError("your git identity is not set: verdicts are committed in your name; run `git config "
                         "user.name \"Your Name\"` and `git config user.email you@example.org`")
    return name, email


def inbox(git: Git) -> Path:
    return git.common_dir() / "autoformalize" / "reviews"


def submit(git: Git, pending: Pending) -> Path:
    """Keep `pending` in the inbox; it lands at the next `land`."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    path = inbox(git) / f"{stamp}-{uuid.uuid4().hex[:8]}.json"
    write_atomic(path, pending.model_dump_json(indent=1))
    return path


def waiting(git: Git) -> list[tuple[Path, Pending]]:
    """The inbox, oldest first. A file that is not a verdict is set aside (renamed `.bad`), never applied."""
    folder = inbox(git)
    out: list[tuple[Path, Pending]] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.append((path, Pending.model_validate_json(path.read_bytes())))
        except (OSError, ValidationError) as e:
            log.error("reviews.inbox_unreadable", file=str(path), error=str(e)[:300])
            path.rename(path.with_suffix(".bad"))
    return out


def land(git: Git, config: Config, paths: StatePaths, *, push: bool) -> Landed:
    """Commit every waiting verdict on the branch; the caller holds the run lock. With `push`, on the remote's head
    and pushed there, landing again on the new head when the push loses a race."""
    pending = waiting(git)
    if not pending:
        return Landed()
    branch, remote = config.git.branch, config.git.remote
    if git.branch() != branch:
        return Landed(waiting=len(pending), message=f"the checkout is on {git.branch() or 'a detached HEAD'}, not "
                                                    f"{branch}: the verdicts wait in the inbox until it is")
    pushing = push and config.git.push and git.has_remote(remote)
    work_path = git.common_dir() / "autoformalize" / "review-work"
    for _ in range(PUSH_ATTEMPTS):
        base = _base(git, remote, branch) if pushing else git.head()
        if base is None:
            return Landed(waiting=len(pending), message=f"{branch} and {remote}/{branch} have diverged; reconcile "
                                                        "them (`git pull --rebase`): the verdicts wait in the inbox")
        work = git.worktree(work_path, base)
        commits = [_commit(work, config, paths, p) for _, p in pending]
        if not pushing:
            break
        result = work.push(remote, commits[-1], branch)
        if result.pushed:
            break
        if not result.rejected:  # unreachable, refused: committed here, a later push carries it
            log.warning("reviews.push_failed", error=result.message[:300])
            _finish(git, commits, pending, pushed=False)
            return Landed(commits, 0, False, f"committed, but {remote} refused the push: {result.message[:200]}")
        log.info("reviews.push_lost_race", remote=remote)
    else:
        return Landed(waiting=len(pending), pushed=False,
                      message=f"{remote}/{branch} kept moving; the verdicts wait in the inbox for the next try")
    _finish(git, commits, pending, pushed=pushing)
    return Landed(commits, 0, True if pushing else None)


def deliver(repo: Path, config: Config) -> Landed:
    """The review application's landing: at once when no cycle holds the run lock, else by the next cycle."""
    git = Git(repo)
    paths = config.state(repo)
    try:
        with RunLock(paths.lock):
            return land(git, config, paths, push=True)
    except LockHeld:
        return Landed(waiting=len(waiting(git)),
                      message="a cycle is running: the verdict lands at the start of the next one")


def _base(git: Git, remote: str, branch: str) -> str | None:
    """The commit to land on: the remote's head when the checkout is behind it or at it, the checkout's when it is
    ahead; None when they diverged."""
    head = git.head()
    theirs = git.fetch(remote, branch)
    if theirs is None or theirs == head or git.is_ancestor(theirs, head):
        return head
    return theirs if git.is_ancestor(head, theirs) else None


def _commit(work: Git, config: Config, paths: StatePaths, p: Pending) -> str:
    """Apply one verdict in `work` and commit it in the person's name."""
    r = p.review
    written = [config.gates.reviews]
    target = work.root / config.gates.reviews
    text = appended(target.read_text(encoding="utf-8") if target.is_file() else "", r)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, text)
    state = StatePaths(work.root, paths.state_dir)
    slug = issue_slug(r.entity, r.declaration)
    issue = state.issues / f"{slug}.md"
    rel = state.relative(issue)
    # A decision stale where it lands is a record only: its issue is neither opened nor closed on a statement the
    # person did not see.
    live = r.decides and not _stale(work, config, r)
    if live and r.verdict is Verdict.REJECT:
        # Declarations of one entity share its issue: a rejection adds its words to those standing there.
        before = issue.read_text(encoding="utf-8") if issue.is_file() else ""
        write_atomic(issue, f"{before.rstrip()}\n\n---\n\n{p.issue}" if before.strip() else p.issue)
        written.append(rel)
    elif live and r.verdict is Verdict.APPROVE:
        # Its issue, and one a rejection opened under the name issues had before each id got its own.
        old = legacy_slug(r.entity, r.declaration)
        for name, of in ((slug, issue_slug), *([(old, legacy_slug)] if old != slug else [])):
            held = state.issues / f"{name}.md"
            if not held.is_file() or _rejected_too(text, name, r.declaration, of):
                continue
            head = f"a person rejected `{r.declaration}`"  # each rejection's head names its declaration
            if of is legacy_slug and not any(line.startswith("# ") and line.endswith(head)
                                             for line in held.read_text(encoding="utf-8").splitlines()):
                continue  # another id's, which shared that name
            closed = state.issues / "closed" / held.name
            closed.parent.mkdir(parents=True, exist_ok=True)
            note = f"\n\n---\nClosed by {p.name}'s approval of `{r.declaration}` at {r.at or datetime.now(UTC)}.\n"
            write_atomic(closed, held.read_text(encoding="utf-8") + note)
            held.unlink()
            written += [state.relative(held), state.relative(closed)]
    work.run("add", "--", *written)
    subject = f"review: {r.verdict.value} {r.declaration}" + (f" ({r.entity})" if r.entity else "")
    body = r.note.strip()
    message = subject + (f"\n\n{body}" if body else "") + f"\n\n{TRAILER}: {r.verdict.value}"
    when = (r.at or datetime.now(UTC)).isoformat()
    work.run("-c", f"user.name={p.name}", "-c", f"user.email={p.email}", "commit", "--quiet", "--no-verify",
             f"--author={p.name} <{p.email}>", f"--date={when}", "-m", message,
             env={"GIT_COMMITTER_NAME": p.name, "GIT_COMMITTER_EMAIL": p.email, "GIT_COMMITTER_DATE": when})
    return work.head()


def _stale(work: Git, config: Config, r: Review) -> bool:
    """Whether the statement `r` names means something else where it lands than on the page that was reviewed (the
    remote's head moved on under it). A declaration the tree does not hold is not told stale here."""
    found = census(DirTree(work.root), config.project.lean_roots)
    now = closures(found, only=[r.declaration])
    return r.declaration in now and r.digest not in now[r.declaration]


def _rejected_too(text: str, slug: str, declaration: str, name: Callable[[str, str], str] = issue_slug) -> bool:
    """Whether another declaration sharing the issue `slug` (as `name` names issues) still stands rejected in the
    reviews file's `text` (its last decision, whatever meaning it was given on): that rejection's issue stays open."""
    last: dict[str, Review] = {}
    for r in parse(text).reviews:
        if r.decides and r.declaration != declaration and name(r.entity, r.declaration) == slug:
            last[r.declaration] = r
    return any(r.verdict is Verdict.REJECT for r in last.values())


def _finish(git: Git, commits: list[str], pending: list[tuple[Path, Pending]], *, pushed: bool) -> None:
    """The checkout follows the landed commits; then the inbox lets go of them. When the checkout cannot follow (the
    person's uncommitted edit of the same file), a commit that was not pushed is on no branch: its verdicts stay in
    the inbox and land again later."""
    try:
        git.merge_ff(commits[-1])
    except GitError as e:
        if pushed:
            for path, _ in pending:
                path.unlink(missing_ok=True)
        kept = "they are on the remote; the next cycle's sync brings them" if pushed else "they wait in the inbox"
        raise UsageError(f"the verdicts were committed, but the checkout cannot fast-forward to them "
                         f"({str(e)[:200]}); {kept}. Commit or stash your edits of the same files") from None
    for path, _ in pending:
        path.unlink(missing_ok=True)
