"""GitHub, through PyGithub: the branch's last CI conclusion, which feeds the "build failing" rule."""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path

import structlog

from orchestrator.config import Config
from orchestrator.git import Git

log = structlog.get_logger()
OWN_WORKFLOW = ".github/workflows/autoformalize.yml"  # the loop's own runs say nothing about the build
_MEANING = {"success": "success", "failure": "failure", "timed_out": "failure"}
_GITHUB = re.compile(r"github\.com[:/](?P<repo>[^/\s]+/[^/\s]+?)(?:\.git)?/?$")


def ci_status(repo: Path, config: Config) -> GitHubCI | None:
    """The CI reader, when a token and a GitHub remote are present."""
    token = os.environ.get("GITHUB_TOKEN")
    url = Git(repo).remote_url(config.git.remote)
    m = _GITHUB.search(url or "")
    if not token or m is None:
        return None
    return GitHubCI(m.group("repo"), config.git.branch, token, os.environ.get("GITHUB_API_URL"))


@dataclass
class GitHubCI:
    repo: str  # owner/name
    branch: str
    token: str
    api_url: str | None = None

    def conclusion(self, commit: str) -> str | None:
        """"success" or "failure": the finished CI run of `commit` if there is one, else the branch's latest
        (the loop's own workflow excluded); None when unknown."""
        from github import Auth, Github, GithubException

        kwargs = {"base_url": self.api_url} if self.api_url else {}
        client = Github(auth=Auth.Token(self.token), retry=None, timeout=20, **kwargs)  # type: ignore[arg-type]
        try:
            repo = client.get_repo(self.repo)
            runs = repo.get_workflow_runs(branch=repo.get_branch(self.branch), status="completed")
            finished = [r for r in itertools.islice(runs, 20) if r.path != OWN_WORKFLOW and r.conclusion in _MEANING]
            chosen = next((r for r in finished if r.head_sha == commit), finished[0] if finished else None)
            return _MEANING[chosen.conclusion] if chosen else None
        except (GithubException, OSError) as e:  # advisory only: the local build check still runs
            log.warning("github.ci_unavailable", repo=self.repo, error=str(e)[:200])
            return None
        finally:
            client.close()
