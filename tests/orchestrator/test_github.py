"""The branch's CI conclusion through the real PyGithub client, against a local stand-in of GitHub's API."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from orchestrator.config import Config
from orchestrator.github import OWN_WORKFLOW, GitHubCI, ci_status
from tests.conftest import git


class GitHub:
    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []
        self.queries: list[dict[str, list[str]]] = []
        self.status = 200
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        github = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                base = f"{github.url}/repos/owner/book"
                if github.status != 200:
                    body: Any = {"message": "Server Error"}
                elif url.path == "/repos/owner/book":
                    body = {"id": 1, "name": "book", "full_name": "owner/book", "url": base}
                elif url.path == "/repos/owner/book/branches/main":
                    body = {"name": "main", "commit": {"sha": "abc", "url": f"{base}/commits/abc"}}
                elif url.path == "/repos/owner/book/actions/runs":
                    github.queries.append(parse_qs(url.query))
                    body = {"total_count": len(github.runs), "workflow_runs": github.runs}
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(github.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def run(self, sha: str, conclusion: str, path: str = ".github/workflows/ci.yml") -> None:
        self.runs.append({"id": len(self.runs) + 1, "head_sha": sha, "conclusion": conclusion, "status": "completed",
                          "path": path, "url": f"{self.url}/runs/{len(self.runs) + 1}"})


@pytest.fixture
def github() -> Iterator[GitHub]:
    server = GitHub()
    yield server
    server.httpd.shutdown()


def ci(github: GitHub) -> GitHubCI:
    return GitHubCI("owner/book", "main", "ghp_test_token", github.url)


def test_the_latest_finished_run_decides_and_the_loops_own_runs_are_ignored(github: GitHub) -> None:
    github.run("c3", "failure", OWN_WORKFLOW)
    github.run("c2", "failure")
    github.run("c1", "success")
    assert ci(github).conclusion("c9") == "failure"
    assert github.queries[0] == {"branch": ["main"], "status": ["completed"]}


def test_the_run_of_the_commit_itself_is_preferred(github: GitHub) -> None:
    github.run("c2", "failure")
    github.run("c1", "success")
    assert ci(github).conclusion("c1") == "success"


def test_an_unreachable_or_failing_api_means_unknown(github: GitHub) -> None:
    github.status = 500
    assert ci(github).conclusion("c1") is None
    assert GitHubCI("owner/book", "main", "t", "http://127.0.0.1:9").conclusion("c1") is None


def test_ci_status_needs_a_token_and_a_github_remote(make_repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    repo: Path = make_repo()
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    git(repo, "remote", "add", "origin", "git@github.com:owner/book.git")
    assert ci_status(repo, Config()) is None
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    status = ci_status(repo, Config())
    assert status is not None and status.repo == "owner/book"
    git(repo, "remote", "set-url", "origin", "https://gitlab.com/owner/book.git")
    assert ci_status(repo, Config()) is None
