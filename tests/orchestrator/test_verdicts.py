"""A person's verdict lands on the branch in their name, through the loop's path: never lost, never racing a cycle."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gates.census import census
from gates.meaning import meanings
from orchestrator.config import Config
from orchestrator.git import Git, GitTree
from orchestrator.verdicts import Pending, deliver, identity, land, recorded, submit, waiting
from state.errors import UsageError
from state.lock import RunLock
from state.reviews import Review, Verdict, issue_slug
from tests.conftest import git, write

AT = datetime(2026, 11, 27, 12, 30, tzinfo=UTC)
ISSUE = f".prover-state/issues/{issue_slug('thm:1.1')}.md"


def repo_with_remote(tmp_path: Path, *, remote: bool = True) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Ann Reviewer")
    git(repo, "config", "user.email", "ann@example.org")
    write(repo, {"Book/Basic.lean": "theorem t : 1 = 1 := rfl\n", ".prover-state/issues/other.md": "x\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    if remote:
        git(tmp_path, "init", "-q", "--bare", "-b", "main", "remote.git")
        git(repo, "remote", "add", "origin", str(tmp_path / "remote.git"))
        git(repo, "push", "-q", "origin", "main")
    return repo


def pending(verdict: str, note: str = "", issue: str = "") -> Pending:
    review = Review(declaration="Book.t", entity="thm:1.1", verdict=Verdict(verdict), note=note, digest="d1",
                    reviewer="Ann Reviewer <ann@example.org>", at=AT)
    return Pending(review=review, name="Ann Reviewer", email="ann@example.org", issue=issue)


def who(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%aI", rev).strip()


def test_a_rejection_lands_in_the_persons_name_with_its_issue_and_is_pushed(tmp_path: Path) -> None:
    repo = repo_with_remote(tmp_path)
    g = Git(repo)
    submit(g, pending("reject", note="n > 0 is missing", issue="# Rejected by Ann\n"))
    landed = land(g, Config(), Config().state(repo), push=True)
    assert landed.pushed is True and landed.waiting == 0 and len(landed.commits) == 1
    assert who(repo) == "Ann Reviewer <ann@example.org>|Ann Reviewer <ann@example.org>|2026-11-27T12:30:00+00:00"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [ISSUE, "reviews.toml"]
    entry = tomllib.loads((repo / "reviews.toml").read_text())["review"][0]
    assert entry["verdict"] == "reject" and entry["note"] == "n > 0 is missing" and entry["digest"] == "d1"
    assert (repo / ISSUE).read_text() == "# Rejected by Ann\n"
    assert git(tmp_path / "remote.git", "rev-parse", "main") == git(repo, "rev-parse", "HEAD")
    assert waiting(g) == [] and git(repo, "status", "--porcelain") == ""


def test_an_approval_closes_the_rejections_issue(tmp_path: Path) -> None:
    repo = repo_with_remote(tmp_path, remote=False)
    g = Git(repo)
    submit(g, pending("reject", issue="# Rejected\n"))
    submit(g, pending("approve", note="fixed"))
    landed = land(g, Config(), Config().state(repo), push=True)
    assert landed.pushed is None and len(landed.commits) == 2
    assert not (repo / ISSUE).exists()
    closed = (repo / ".prover-state/issues/closed" / Path(ISSUE).name).read_text()
    assert closed.startswith("# Rejected\n") and "Ann Reviewer's approval of `Book.t`" in closed
    assert [r.verdict for r in recorded(g, "HEAD", "reviews.toml").reviews] == [Verdict.REJECT, Verdict.APPROVE]
    assert (repo / ".prover-state/issues/other.md").exists()  # another issue is nobody's business here


@pytest.mark.parametrize("whose", ["Book.t's", "another id's"])
def test_an_approval_closes_the_issue_a_rejection_opened_under_the_name_issues_had_before(
        tmp_path: Path, whose: str) -> None:
    """`review-thm-1.1.md`, as an earlier version named `thm:1.1`'s issue, is closed by the approval that closes
    it now; one of that name about another id (`thm-1.1`, which the old names could not tell apart) stays open."""
    repo = repo_with_remote(tmp_path, remote=False)
    g = Git(repo)
    old = repo / ".prover-state/issues/review-thm-1.1.md"
    declaration, entity = ("Book.t", "thm:1.1") if whose == "Book.t's" else ("Book.t2", "thm-1.1")
    old.write_text(f"# review-thm-1.1: a person rejected `{declaration}`\n")
    write(repo, {"reviews.toml": f'[[review]]\ndeclaration = "{declaration}"\nentity = "{entity}"\nverdict = "reject"\n'
                                 f'digest = "d0"\nreviewer = "Ann Reviewer <ann@example.org>"\n'})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a rejection as an earlier version recorded it")
    submit(g, pending("approve", note="fixed"))
    land(g, Config(), Config().state(repo), push=True)
    assert old.exists() == (whose == "another id's")
    assert (repo / ".prover-state/issues/closed/review-thm-1.1.md").exists() == (whose == "Book.t's")


def test_an_approval_leaves_open_the_issue_another_declarations_rejection_of_the_same_entity_holds(
        tmp_path: Path) -> None:
    # Two declarations formalize one entity: both rejected share `review-thm-1.1`. Approving one must neither close
    # the issue the other's rejection still holds, nor may the second rejection erase the first's text.
    repo = repo_with_remote(tmp_path, remote=False)
    g = Git(repo)
    other = pending("reject", issue="# Rejected u\n")
    other = other.model_copy(update={"review": other.review.model_copy(update={"declaration": "Book.u"})})
    submit(g, pending("reject", issue="# Rejected t\n"))
    submit(g, other)
    submit(g, pending("approve", note="fixed"))
    land(g, Config(), Config().state(repo), push=True)
    assert (repo / ISSUE).is_file(), "the issue of Book.u's standing rejection was closed by Book.t's approval"
    text = (repo / ISSUE).read_text()
    assert "# Rejected u" in text and "# Rejected t" in text  # each rejection's words are kept


def test_an_approval_stale_on_the_remotes_head_does_not_close_the_rejections_issue(tmp_path: Path) -> None:
    # The page showed `Book.t` as the checkout has it; meanwhile the remote's head restated it. The approval lands
    # there as a record, but stale: it must not close the issue the rejection opened, which the restated statement,
    # never approved, still owes a person.
    repo = repo_with_remote(tmp_path)
    write(repo, {"Book/T.lean": "namespace Book\ntheorem t : 1 = 1 := rfl\nend Book\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Book.t")
    git(repo, "push", "-q", "origin", "main")
    shown = meanings(census(GitTree(Git(repo), "HEAD"), ["Book"]))["Book.t"][0]

    def at(verdict: str) -> Pending:
        p = pending(verdict, issue="# Rejected\n" if verdict == "reject" else "")
        return p.model_copy(update={"review": p.review.model_copy(update={"digest": shown})})

    g = Git(repo)
    submit(g, at("reject"))
    land(g, Config(), Config().state(repo), push=True)
    assert (repo / ISSUE).is_file()
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), "other")
    other = tmp_path / "other"
    write(other, {"Book/T.lean": "namespace Book\ntheorem t : 2 = 2 := rfl\nend Book\n"})
    git(other, "commit", "-qam", "restated Book.t")
    git(other, "push", "-q", "origin", "main")
    submit(g, at("approve"))
    landed = land(g, Config(), Config().state(repo), push=True)
    assert landed.pushed is True and "2 = 2" in (repo / "Book/T.lean").read_text()
    assert (repo / ISSUE).is_file(), "a stale approval closed the rejection's issue"


def test_a_push_that_keeps_losing_leaves_the_verdict_waiting_then_it_lands(tmp_path: Path) -> None:
    repo = repo_with_remote(tmp_path)
    # Fetches read a mirror the pushes never reach, so each push finds the branch moved on: a race lost every time.
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(other))
    write(other, {"Book/More.lean": "theorem u : 2 = 2 := rfl\n"})
    git(other, "add", "-A")
    git(other, "commit", "-qm", "a cycle landed meanwhile")
    git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "remote.git"), "mirror.git")
    git(other, "push", "-q", "origin", "main")
    git(repo, "remote", "set-url", "origin", str(tmp_path / "mirror.git"))
    git(repo, "remote", "set-url", "--push", "origin", str(tmp_path / "remote.git"))
    g = Git(repo)
    submit(g, pending("comment", note="why ℝ and not ℚ?"))
    head = git(repo, "rev-parse", "HEAD")
    landed = land(g, Config(), Config().state(repo), push=True)
    assert landed.pushed is False and landed.waiting == 1 and "kept moving" in landed.message
    assert git(repo, "rev-parse", "HEAD") == head and len(waiting(g)) == 1  # nothing landed, nothing lost
    git(repo, "remote", "set-url", "origin", str(tmp_path / "remote.git"))  # the race is over
    landed = land(g, Config(), Config().state(repo), push=True)
    assert landed.pushed is True and waiting(g) == []
    assert git(repo, "log", "--format=%s", "-3").splitlines() == [
        "review: comment Book.t (thm:1.1)", "a cycle landed meanwhile", "base"]
    assert (repo / "Book/More.lean").exists()  # the checkout caught up with the remote on the way


def test_while_a_cycle_holds_the_run_lock_the_verdict_waits_for_it(tmp_path: Path) -> None:
    repo = repo_with_remote(tmp_path)
    g = Git(repo)
    config = Config()
    submit(g, pending("approve"))
    head = git(repo, "rev-parse", "HEAD")
    with RunLock(config.state(repo).lock):
        landed = deliver(repo, config)
    assert landed.waiting == 1 and landed.commits == [] and "next one" in landed.message
    assert git(repo, "rev-parse", "HEAD") == head
    landed = deliver(repo, config)
    assert landed.pushed is True and len(landed.commits) == 1 and waiting(g) == []


def test_the_persons_uncommitted_edit_of_the_file_is_never_overwritten(tmp_path: Path) -> None:
    repo = repo_with_remote(tmp_path, remote=False)
    g = Git(repo)
    write(repo, {"reviews.toml": "# mine, not committed\n"})
    submit(g, pending("approve"))
    with pytest.raises(UsageError, match=r"cannot fast-forward.*wait in the inbox"):
        land(g, Config(), Config().state(repo), push=True)
    assert (repo / "reviews.toml").read_text() == "# mine, not committed\n"
    assert len(waiting(g)) == 1  # the commit is on no branch: the verdict lands again later
    (repo / "reviews.toml").unlink()
    assert len(land(g, Config(), Config().state(repo), push=True).commits) == 1
    assert len(recorded(g, "HEAD", "reviews.toml").reviews) == 1


def test_a_hand_written_entry_has_its_commits_author_as_reviewer(tmp_path: Path) -> None:
    repo = repo_with_remote(tmp_path, remote=False)
    write(repo, {"reviews.toml": '# by hand\n[[review]]\ndeclaration = "Book.t"\nverdict = "approve"\n'
                                 'digest = "d1"\n\n[[review]]\ndeclaration = "Book.s"\nverdict = "comment"\n'
                                 'digest = "d2"\nreviewer = "Bo <bo@example.org>"\nat = 2026-01-02T03:04:05Z\n'})
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=Cy", "-c", "user.email=cy@example.org", "commit", "-qm", "verdicts by hand",
        "--author=Cy Hand <cy@example.org>", "--date=2026-03-04T05:06:07Z")
    got = recorded(Git(repo), "HEAD", "reviews.toml")
    assert [(r.declaration, r.reviewer, r.at) for r in got.reviews] == [
        ("Book.t", "Cy Hand <cy@example.org>", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
        ("Book.s", "Bo <bo@example.org>", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))]
    assert recorded(Git(repo), "HEAD~1", "reviews.toml").reviews == []  # before the file existed


def test_no_identity_no_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    repo = repo_with_remote(tmp_path, remote=False)
    assert identity(Git(repo)) == ("Ann Reviewer", "ann@example.org")
    git(repo, "config", "--unset", "user.email")
    with pytest.raises(UsageError, match=r"git config user\.email"):
        identity(Git(repo))


def test_an_inbox_file_that_is_not_a_verdict_is_set_aside(tmp_path: Path) -> None:
    repo = repo_with_remote(tmp_path, remote=False)
    g = Git(repo)
    path = submit(g, pending("comment"))
    path.write_text("{not json")
    assert waiting(g) == [] and path.with_suffix(".bad").exists()
    assert land(g, Config(), Config().state(repo), push=True).commits == []
