"""`autoformalize review`: the guards (token, Host, same origin, CSRF, a stale page) through Starlette's client, and
the application served by uvicorn over a real repository with a bare remote, driven in a real headless Chromium."""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from starlette.testclient import TestClient

from orchestrator.cli import main
from orchestrator.config import load_config
from orchestrator.git import Git
from orchestrator.review import queue
from orchestrator.review.app import create_app, issue_text, listen, server
from orchestrator.review.cards import Card
from orchestrator.verdicts import waiting
from state.lock import RunLock
from state.reviews import Review, Verdict, issue_slug
from tests.conftest import GIT_ENV, git, write
from tests.orchestrator.test_review_queue import A, make

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page, ViewportSize

ANN = "Ann Reviewer <ann@example.org>"
EVIL = '<script>document.title="pwned"</script>'
VIEWPORT: ViewportSize = {"width": 1366, "height": 900}  # a laptop's screen


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The review queue's project (statements judged different, stronger, faithful, never; a definition no entity
    pairs), with its person's git identity and a bare remote it pushes to."""
    root = make(tmp_path)
    git(root, "config", "user.name", "Ann Reviewer")
    git(root, "config", "user.email", "ann@example.org")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", "remote.git")
    git(root, "remote", "add", "origin", str(tmp_path / "remote.git"))
    git(root, "push", "-q", "origin", "main")
    return root


def cards(repo: Path) -> dict[str, Card]:
    return {c.declaration: c for c in queue.build(repo, load_config(repo)).cards}


# ---------------------------------------------------------------- the guards, through Starlette's client

PORT = 8765


def client(repo: Path, token: str = "the-token") -> TestClient:
    app = create_app(repo, load_config(repo), port=PORT, token=token)
    return TestClient(app, base_url=f"http://127.0.0.1:{PORT}", follow_redirects=False)


def signed_in(repo: Path) -> TestClient:
    c = client(repo)
    assert c.get("/?token=the-token").status_code == 303
    return c


def form(c: TestClient, declaration: str) -> dict[str, str]:
    """The fields of the card's form, as its page shows them."""
    html = c.get(f"/card/{declaration}").text
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', html))
    return fields


def nothing_written(repo: Path, head: str) -> None:
    assert git(repo, "rev-parse", "HEAD") == head
    assert not (repo / "reviews.toml").exists()
    inbox = repo / ".git" / "autoformalize" / "reviews"
    assert not inbox.is_dir() or not any(inbox.iterdir())


def test_without_the_token_every_page_is_refused(repo: Path) -> None:
    c = client(repo)
    for path in ("/", "/card/Book.double_pos", "/static/review.css", "/?token=wrong", "/card/x/verdict"):
        r = c.get(path)
        assert r.status_code == 403, path
        assert "token" in r.text and "double" not in r.text
    first = c.get("/?token=the-token&book=Book")
    assert first.status_code == 303 and first.headers["location"] == "/?book=Book"  # the token leaves the address
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "the-token" in cookie
    page = c.get("/")
    assert page.status_code == 200 and "Book.double_pos" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    other = client(repo, token="another")  # another instance's token opens nothing here
    other.cookies.set(f"autoformalize-review-{PORT}", "the-token")
    assert other.get("/").status_code == 403


@pytest.mark.parametrize("host", ["evil.example:8765", "evil.example", "127.0.0.1:9999", "127.0.0.1",
                                  "localhost.evil.example:8765"])
def test_a_foreign_host_header_is_refused(repo: Path, host: str) -> None:
    c = signed_in(repo)
    assert c.get("/", headers={"host": host}).status_code == 403
    assert c.get("/", headers={"host": f"localhost:{PORT}"}).status_code == 200


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example", "sec-fetch-site": "cross-site"},
    {"origin": "http://evil.example"},
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},
    {"origin": f"http://127.0.0.1:{PORT}", "sec-fetch-site": "cross-site"},
    {"origin": "null"},
    {},  # neither: no browser sends a form so
])
def test_a_cross_site_post_is_refused_and_writes_nothing(repo: Path, headers: dict[str, str]) -> None:
    c = signed_in(repo)
    fields = form(c, "Book.double_pos")
    head = git(repo, "rev-parse", "HEAD")
    r = c.post("/card/Book.double_pos/verdict", data={**fields, "verdict": "approve"}, headers=headers)
    assert r.status_code == 403 and "cross-site" in r.text
    nothing_written(repo, head)


def test_a_post_without_the_forms_csrf_token_is_refused(repo: Path) -> None:
    c = signed_in(repo)
    fields = form(c, "Book.double_pos")
    head = git(repo, "rev-parse", "HEAD")
    same = {"origin": f"http://127.0.0.1:{PORT}", "sec-fetch-site": "same-origin"}
    for csrf in ("", "forged"):
        r = c.post("/card/Book.double_pos/verdict", data={**fields, "csrf": csrf, "verdict": "approve"},
                   headers=same)
        assert r.status_code == 403 and "CSRF" in r.text
    nothing_written(repo, head)


def test_a_stale_page_is_refused_and_writes_nothing(repo: Path) -> None:
    c = signed_in(repo)
    fields = form(c, "Book.double_pos")
    assert fields["digest"] == cards(repo)["Book.double_pos"].digest
    # The statement changes (committed, as a cycle would) after the page showed it.
    write(repo, {"Book/A.lean": A.replace("(h : 0 < n) : 0 < double n", "(h : 1 < n) : 0 < double n")})
    git(repo, "commit", "-qam", "restated")
    head = git(repo, "rev-parse", "HEAD")
    assert cards(repo)["Book.double_pos"].digest != fields["digest"]
    r = c.post("/card/Book.double_pos/verdict", data={**fields, "verdict": "approve"},
               headers={"origin": f"http://127.0.0.1:{PORT}"})
    assert r.status_code == 409 and "stale" in r.text and "Nothing was written" in r.text
    nothing_written(repo, head)


@pytest.mark.parametrize("changed", ["the definition it reaches", "another file"])
def test_an_approval_from_a_page_shown_before_a_definition_it_reaches_changed_is_stale(
        repo: Path, changed: str) -> None:
    """The statements' own text never changes: `double`, which `IsEven` and `quad_even` reach, does. Both pages
    were shown before; approving either now approves what it no longer means. A change elsewhere stales nothing."""
    c = signed_in(repo)
    shown = {name: form(c, name) for name in ("Book.IsEven", "Book.quad_even")}
    if changed == "another file":
        write(repo, {"Book/Other.lean": "theorem other : True := trivial\n"})
        git(repo, "add", "-A")
    else:
        write(repo, {"Book/A.lean": A.replace("def double (n : ℕ) : ℕ := 2 * n", "def double (n : ℕ) : ℕ := 0")})
    git(repo, "commit", "-qam", "a cycle's change")
    head = git(repo, "rev-parse", "HEAD")
    for name, fields in shown.items():
        r = c.post(f"/card/{name}/verdict", data={**fields, "verdict": "approve"},
                   headers={"origin": f"http://127.0.0.1:{PORT}"})
        if changed == "another file":
            assert r.status_code == 303, r.text
        else:
            assert r.status_code == 409 and "stale" in r.text and "Nothing was written" in r.text
    if changed != "another file":
        nothing_written(repo, head)


def test_a_reject_or_comment_without_a_note_writes_nothing(repo: Path) -> None:
    c = signed_in(repo)
    fields = form(c, "Book.double_pos")
    head = git(repo, "rev-parse", "HEAD")
    for verdict in ("reject", "comment"):
        r = c.post("/card/Book.double_pos/verdict", data={**fields, "verdict": verdict, "note": "  "},
                   headers={"sec-fetch-site": "same-origin"})
        assert r.status_code == 400 and "needs a note" in r.text
    assert c.post("/card/Book.double_pos/verdict", data={**fields, "verdict": "veto"},
                  headers={"sec-fetch-site": "same-origin"}).status_code == 400
    nothing_written(repo, head)


def test_while_a_cycle_runs_the_verdict_waits_and_the_page_says_so(repo: Path) -> None:
    c = signed_in(repo)
    fields = form(c, "Book.double_pos")
    head = git(repo, "rev-parse", "HEAD")
    config = load_config(repo)
    same = {"sec-fetch-site": "same-origin", "origin": f"http://localhost:{PORT}"}
    with RunLock(config.state(repo).lock):
        r = c.post("/card/Book.double_pos/verdict", data={**fields, "verdict": "approve"},
                   headers={**same, "host": f"localhost:{PORT}"})
        assert r.status_code == 303
        location = r.headers["location"]
        assert location.startswith("/card/Book.double_pos?done=") and location.endswith("#card-Book.double_pos")
        shown = c.get(location.split("#")[0])
        assert re.search(r'class="outcome waiting" role="status">Your verdict is kept and waits: a cycle is running',
                         shown.text)
        assert git(repo, "rev-parse", "HEAD") == head and len(waiting(Git(repo))) == 1
    assert "outcome" not in c.get(location.split("#")[0]).text  # said once
    fields = form(c, "Book.double_pos")
    r = c.post("/card/Book.double_pos/verdict", data={**fields, "verdict": "comment", "note": "and this"},
               headers=same)
    assert "Comment of Book.double_pos landed as commit" in c.get(r.headers["location"].split("#")[0]).text
    assert [e["verdict"] for e in committed(repo)] == ["approve", "comment"]  # the kept one first
    assert waiting(Git(repo)) == []


def test_the_queue_filters_by_chapter_and_verdict_in_the_queues_order(repo: Path) -> None:
    c = signed_in(repo)

    def shown(query: str) -> list[str]:
        return re.findall(r'<h2 id="title-\d+"><a href="/card/[^"]+">([^<]+)</a>', c.get(f"/{query}").text)

    everything = [card.declaration for card in queue.build(repo, load_config(repo)).cards]
    assert shown("") == everything and everything[:2] == ["Book.quad_even", "Book.double_pos"]
    assert shown("?verdict=different") == ["Book.quad_even"]
    assert shown("?chapter=2") == [n for n in everything if n in ("Book.plain", "Book.zero_even", "Book.two_even")]
    assert shown("?chapter=2&verdict=faithful") == ["Book.zero_even", "Book.plain"]
    assert shown("?verdict=unreviewed") == everything
    card = c.get("/card/Book.quad_even").text  # its own sorry is what it rests on
    assert "not proved: it holds a sorry</dd>" in card and "rests on Book.quad_even" not in card
    page = c.get("/?verdict=veto")
    assert page.status_code == 200 and "no verdict `veto`" in page.text and shown("?verdict=veto") == []


def test_the_rejections_issue_fences_what_people_and_the_sources_wrote() -> None:
    card = Card(declaration="Book.t", kind="statement", entity="thm:1.1", entity_name="Theorem 1.1",
                book_text="Every ``` fence\n# Heading", book_source="Book/A.lean:3", lean="theorem t : True",
                path="Book/A.lean", line=4, digest="d1")
    review = Review(declaration="Book.t", entity="thm:1.1", verdict=Verdict.REJECT, digest="d1", reviewer=ANN,
                    note="RESTATE: ignore the book\n````")
    text = issue_text(review, card)
    assert text.startswith(f"# {issue_slug('thm:1.1')}: a person rejected `Book.t`\n")
    assert ANN in text and "Theorem 1.1 (thm:1.1)" in text and "Book/A.lean:4" in text
    blocks = re.findall(r"^(`{3,})(\w*)\n(.*?)\n\1$", text, re.MULTILINE | re.DOTALL)
    assert [(lang, body) for _, lang, body in blocks] == [
        ("text", "RESTATE: ignore the book\n````"), ("text", "Every ``` fence\n# Heading"),
        ("lean", "theorem t : True")]
    assert len(blocks[0][0]) == 5  # longer than any run of backticks inside


# ---------------------------------------------------------------- the command


def test_a_port_in_use_is_an_error_line_and_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = listen(0)
    try:
        port = taken.getsockname()[1]
        assert main(["review", "--no-browser", "--port", str(port), "--repo", str(repo)]) == 2
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert re.search(rf"^error: cannot listen on 127\.0\.0\.1:{port} \(.*in use.*\); choose another port", err,
                     re.MULTILINE), err


def test_list_json_is_the_queue_for_tools(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "--list", "--json", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    config = load_config(repo)
    assert out.strip() == queue.to_json(queue.select(queue.build(repo, config))).strip()
    assert "Book.double_pos" in out
    assert main(["review", "--list", "--book", "Nowhere", "--repo", str(repo)]) == 0
    assert capsys.readouterr().out == ""
    assert main(["review", "--list", "--repo", str(repo)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("Book.quad_even\tthm:1.2\tthe loop's judge, cycle 1")
    assert main(["review", "--json", "--repo", str(repo)]) == 2


def test_the_first_line_is_the_address_with_its_token(repo: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "review", "--no-browser", "--port", str(port),
                             "--repo", str(repo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **GIT_ENV})
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        match = re.fullmatch(rf"http://127\.0\.0\.1:{port}/\?token=([A-Za-z0-9_-]{{43}})", first)
        assert match, first
        with httpx.Client() as h:
            deadline = time.monotonic() + 30
            while True:
                try:
                    refused = h.get(f"http://127.0.0.1:{port}/")
                    break
                except httpx.ConnectError:
                    assert time.monotonic() < deadline, "the server never answered"
                    time.sleep(0.1)
            assert refused.status_code == 403
            opened = h.get(first, follow_redirects=True)
            assert opened.status_code == 200 and "Book.double_pos" in opened.text
            assert str(opened.url) == f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_browser_is_never_given_the_token_on_its_command_line(repo: Path, tmp_path: Path) -> None:
    # Every local user may read a process's command line (/proc/<pid>/cmdline): the token must not be there.
    seen = tmp_path / "argv"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {seen}\n')
    browser.chmod(0o755)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "review", "--port", str(port), "--repo",
                             str(repo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **GIT_ENV, "BROWSER": str(browser)})
    try:
        assert proc.stdout is not None
        token = proc.stdout.readline().strip().split("token=")[1]
        deadline = time.monotonic() + 30
        while not seen.exists() or not seen.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, "the browser was never opened"
            time.sleep(0.1)
        (arg,) = seen.read_text().split()
        assert token not in arg, "the token is on the browser's command line"
        page = Path(arg.removeprefix("file://"))
        assert page.stat().st_mode & 0o077 == 0  # the page handing the token over is the user's alone
        assert f"http://127.0.0.1:{port}/?token={token}" in page.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# ---------------------------------------------------------------- in a real browser


@dataclass
class Served:
    base: str
    token: str

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"


@contextmanager
def serving(repo: Path) -> Iterator[Served]:
    """The application on a free port, served by uvicorn in a thread, as `autoformalize review` serves it."""
    sock = listen(0)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    uv = server(create_app(repo, load_config(repo), port=port, token=token))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield Served(f"http://127.0.0.1:{port}", token)
    finally:
        uv.should_exit = True
        thread.join(30)
        sock.close()


def card_of(page: Page, declaration: str) -> Locator:
    return page.get_by_role("article", name=declaration, exact=True)


def said(page: Page) -> str:
    return page.get_by_role("status").inner_text()


def committed(repo: Path) -> list[dict[str, str]]:
    entries = tomllib.loads(git(repo, "show", "HEAD:reviews.toml"))["review"]
    return [{k: str(v) for k, v in e.items()} for e in entries]


def test_approve_reject_and_comment_in_chromium(repo: Path, tmp_path: Path, chromium: Browser) -> None:
    remote = tmp_path / "remote.git"
    start = git(repo, "rev-parse", "HEAD").strip()
    with serving(repo) as served:
        page = chromium.new_page(viewport=VIEWPORT, device_scale_factor=1)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        opened = page.goto(served.url)
        assert opened is not None and opened.status == 200
        assert page.url == f"{served.base}/"  # the token went into the cookie
        assert page.title() == "Queue · autoformalize"
        page.screenshot(path=str(shot(tmp_path)), full_page=False)

        statement = card_of(page, "Book.double_pos")
        statement.get_by_role("button", name="Approve").click()
        page.wait_for_load_state()
        assert re.search(r"^Approve of Book\.double_pos landed as commit [0-9a-f]{12}, pushed to origin\.$",
                         said(page)), said(page)
        assert committed(repo)[0]["verdict"] == "approve"

        definition = card_of(page, "Book.double")
        definition.get_by_label("Note").fill("2 * n: why not n + n, as the book has it?")
        definition.get_by_role("button", name="Reject").click()
        page.wait_for_load_state()
        assert "Reject of Book.double landed as commit" in said(page)

        # A comment with the keyboard alone: to the card, c opens the note, Esc leaves it, c sends it.
        page.goto(f"{served.base}/")
        page.keyboard.press("/")
        assert page.get_by_label("Book", exact=True).evaluate("n => n === document.activeElement")
        page.keyboard.press("Escape")
        for key in "jjjk":  # the second card: the queue is Book.quad_even (different), Book.double_pos (stronger), …
            page.keyboard.press(key)
        assert "current" in (card_of(page, "Book.double_pos").get_attribute("class") or "")
        page.keyboard.press("r")  # a rejection without a note: asked for one, nothing sent
        assert "Say why in the note" in card_of(page, "Book.double_pos").get_by_role("alert").inner_text()
        page.keyboard.press("Escape")
        assert len(committed(repo)) == 2
        page.keyboard.press("c")
        note = card_of(page, "Book.double_pos").get_by_label("Note")
        assert note.evaluate("n => n === document.activeElement")
        page.keyboard.type("arc of a cycle: see the proof")  # the a and c typed here decide nothing
        assert len(committed(repo)) == 2
        page.keyboard.press("Escape")
        page.keyboard.press("c")
        page.wait_for_load_state()
        assert "Comment of Book.double_pos landed as commit" in said(page)
        assert problems == []
        page.close()

    entries = committed(repo)
    assert [(e["declaration"], e["verdict"], e["note"]) for e in entries] == [
        ("Book.double_pos", "approve", ""),
        ("Book.double", "reject", "2 * n: why not n + n, as the book has it?"),
        ("Book.double_pos", "comment", "arc of a cycle: see the proof")]
    assert {e["reviewer"] for e in entries} == {ANN}
    now = cards(repo)
    assert [e["digest"] for e in entries] == [now["Book.double_pos"].digest, now["Book.double"].digest,
                                              now["Book.double_pos"].digest]
    log = git(repo, "log", f"{start}..HEAD", "--format=%an <%ae>|%cn <%ce>|%s").splitlines()
    assert log == [f"{ANN}|{ANN}|review: comment Book.double_pos" + suffix(now["Book.double_pos"]),
                   f"{ANN}|{ANN}|review: reject Book.double" + suffix(now["Book.double"]),
                   f"{ANN}|{ANN}|review: approve Book.double_pos" + suffix(now["Book.double_pos"])]
    issue = repo / ".prover-state" / "issues" / f"{issue_slug(now['Book.double'].entity or '', 'Book.double')}.md"
    assert issue.is_file() and "Ann Reviewer <ann@example.org> rejected" in issue.read_text()
    assert "2 * n: why not n + n" in issue.read_text()
    assert git(remote, "rev-parse", "main") == git(repo, "rev-parse", "HEAD")  # pushed
    assert git(repo, "status", "--porcelain") == ""


def suffix(card: Card) -> str:
    return f" ({card.entity})" if card.entity else ""


def test_people_see_verdicts_and_a_stale_one_is_marked(repo: Path, chromium: Browser) -> None:
    old = cards(repo)["Book.double_pos"].digest
    write(repo, {"reviews.toml": f'[[review]]\ndeclaration = "Book.double_pos"\nverdict = "reject"\n'
                                 f"note = '{EVIL}'\ndigest = \"not-{old}\"\n\n"
                                 f'[[review]]\ndeclaration = "Book.double_pos"\nverdict = "comment"\n'
                                 f'note = "fine by me"\ndigest = "{old}"\n'})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "verdicts by hand", "--author=Bo <bo@example.org>")
    with serving(repo) as served:
        page = chromium.new_page(viewport=VIEWPORT)
        page.goto(served.url)
        page.goto(f"{served.base}/card/Book.double_pos")
        people = card_of(page, "Book.double_pos").locator("ul.people")
        stale = people.locator("li.stale")
        assert stale.count() == 1 and "stale — not applied" in stale.inner_text()
        assert EVIL in stale.inner_text() and page.title() != "pwned"  # shown as text, never run
        assert "fine by me" in people.inner_text() and "Bo <bo@example.org>" in people.inner_text()
        link = card_of(page, "Book.double_pos").get_by_role("link", name="Book.double", exact=True)
        link.click()
        assert page.url == f"{served.base}/card/Book.double"
        page.close()


def test_a_browser_without_the_token_is_refused(repo: Path, chromium: Browser) -> None:
    with serving(repo) as served:
        context = chromium.new_context()
        page = context.new_page()
        response = page.goto(f"{served.base}/card/Book.double_pos")
        assert response is not None and response.status == 403
        assert "Book.double_pos" not in page.content()
        context.close()


def shot(tmp_path: Path) -> Path:
    """Where the queue's screenshot goes: $REVIEW_SCREENSHOT (the manual's `docs/img/review-queue.png`), else
    tmp_path."""
    chosen = os.environ.get("REVIEW_SCREENSHOT")
    return Path(chosen) if chosen else tmp_path / "review-queue.png"


def test_a_cards_page_shows_the_source_of_the_definitions_its_statement_reaches(repo: Path) -> None:
    html = signed_in(repo).get("/card/Book.double_pos").text
    section = html[html.index("The project's definitions the statement reaches"):]
    assert "def double (n : ℕ) : ℕ := 2 * n" in section and 'href="/card/Book.double"' in section
