"""The review application: a queue of cards in the browser, a person's verdicts to `reviews.toml`.

It listens on 127.0.0.1 only and trusts nobody who cannot show the random token of the address it printed: the
first visit carries it in the query, which becomes an HttpOnly, SameSite=Lax cookie (the address is then
redirected to one without it). A Host header other than 127.0.0.1 or localhost at its port is refused (a rebound
DNS name reaches the port but not with that Host), and so is a POST that another site could have sent: it must
come from this origin (Origin, Sec-Fetch-Site) and carry the form's own CSRF token.

A verdict names the meaning digest of the statement the page showed; once the statement means something else the
page is stale and nothing is written. Otherwise the verdict goes to the inbox and lands through
`orchestrator.verdicts.deliver`, in the person's git name; the page says whether it landed, was pushed, or waits
for the running cycle.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import structlog
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from audit.run import in_order
from gates.chosen import ticks
from orchestrator import verdicts
from orchestrator.config import Config
from orchestrator.git import Git, GitError
from orchestrator.review import queue
from orchestrator.review.cards import Card
from state.errors import AutoformalizeError, UsageError
from state.reviews import Review, Verdict, issue_slug

log = structlog.get_logger()
HOST = "127.0.0.1"
NOTE_CHARS = 20_000
MAX_BODY = 256 * 1024
KEPT_OUTCOMES = 64  # outcomes waiting for their redirected page to show them
HERE = Path(__file__).parent
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
HEADERS = [(b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                        b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
           (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin"),
           (b"x-frame-options", b"DENY"), (b"cache-control", b"no-store")]


@dataclass(frozen=True)
class Outcome:
    """What became of a verdict, as the page after the redirect says it."""

    kind: str  # landed | waiting | error
    text: str


def listen(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:`port` (0: any free port); a port in use is the user's to change."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A restart binds again at once, past the last run's closing connections; a listening socket still refuses it.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError as e:
        sock.close()
        raise UsageError(f"cannot listen on {HOST}:{port} ({e.strerror or e}); choose another port with "
                         "--port N or [review] port") from None
    return sock


def server(app: Starlette) -> uvicorn.Server:
    """A uvicorn server of `app`, to run on a socket of `listen`; it logs no request (a first visit's address
    carries the token)."""
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, server_header=False,
                                         proxy_headers=False, lifespan="off"))


class Guard:
    """The token, the Host header and the same-origin rule, before any route sees a request."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *, port: int, token: str) -> None:
        self.app = app
        self.token = token
        self.cookie = f"autoformalize-review-{port}"  # cookies are per host, not per port
        self.hosts = {f"{HOST}:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *HEADERS]
            await send(message)

        request = Request(scope)
        refused = self.refusal(request)
        if refused is not None:
            await refused(scope, receive, secured)
            return
        given = request.query_params.get("token")
        if given is not None:  # the first visit: the token becomes a cookie and leaves the address
            url = request.url.remove_query_params("token")
            response = RedirectResponse(f"{url.path}?{url.query}" if url.query else url.path, status_code=303)
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="lax", path="/")
            await response(scope, receive, secured)
            return
        await self.app(scope, receive, secured)

    def refusal(self, request: Request) -> Response | None:
        if request.headers.get("host", "") not in self.hosts:
            return PlainTextResponse(f"refused: open this application at {HOST} or localhost (Host header)",
                                     status_code=403)
        given = request.query_params.get("token") or request.cookies.get(self.cookie) or ""
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return PlainTextResponse("refused: open the address `autoformalize review` printed, with its token",
                                     status_code=403)
        if request.method not in ("GET", "HEAD"):
            site = request.headers.get("sec-fetch-site")
            origin = request.headers.get("origin")
            if (site is None and origin is None) or (site is not None and site != "same-origin") or (
                    origin is not None and origin not in self.origins):
                return PlainTextResponse("refused: a change must come from this application's own page "
                                         "(cross-site request)", status_code=403)
        return None


class Reviewing:
    """The application's state: the repository, its queue (rebuilt when the branch moves) and the outcomes of
    verdicts waiting to be shown."""

    def __init__(self, repo: Path, config: Config, *, book: str | None) -> None:
        self.repo = repo
        self.config = config
        self.book = book
        self.csrf = secrets.token_urlsafe(32)
        self.built: tuple[str, queue.Queue] | None = None
        self.outcomes: OrderedDict[str, Outcome] = OrderedDict()
        self.landing = asyncio.Lock()  # one verdict at a time: each lands before the next is checked

    def head(self) -> str:
        try:
            return Git(self.repo).head()
        except GitError:
            return ""

    def queue(self) -> queue.Queue:
        head = self.head()
        if self.built is None or self.built[0] != head:
            self.built = (head, queue.build(self.repo, self.config))
        return self.built[1]

    def forget(self) -> None:
        self.built = None

    def card(self, declaration: str) -> Card | None:
        return next((c for c in self.queue().cards if c.declaration == declaration), None)

    def definitions(self, card: Card) -> list[tuple[str, str]]:
        """The definitions `card`'s statement reaches, as its page shows them (`audit.run.in_order`)."""
        q = self.queue()
        return in_order({n: q.sources[n] for n in card.reaches if n in q.sources})

    def keep(self, outcome: Outcome) -> str:
        key = secrets.token_urlsafe(8)
        self.outcomes[key] = outcome
        while len(self.outcomes) > KEPT_OUTCOMES:
            self.outcomes.popitem(last=False)
        return key


def create_app(repo: Path, config: Config, *, port: int, token: str, book: str | None = None) -> Starlette:
    """The application over `repo`, answering only at 127.0.0.1:`port` or localhost:`port` with `token`."""
    state = Reviewing(repo, config, book=book)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    templates = Jinja2Templates(env=env)

    def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        outcome = state.outcomes.pop(request.query_params.get("done", ""), None)
        return templates.TemplateResponse(request, name, {"csrf": state.csrf, "outcome": outcome,
                                                          "here": _here(request), **context}, status_code=status)

    async def index(request: Request) -> Response:
        q = await run_in_threadpool(state.queue)
        book_, chapter = request.query_params.get("book") or state.book, request.query_params.get("chapter")
        verdict = request.query_params.get("verdict")
        problems = list(q.problems)
        try:
            cards = queue.select(q, book=book_ or None, chapter=chapter or None, verdict=verdict or None)
        except UsageError as e:
            problems.append(str(e))
            cards = []
        return page(request, "queue.html", cards=cards, problems=problems, total=len(q.cards),
                    books=[b for b in q.books if b],
                    chapters=sorted({c.chapter for c in q.cards if c.chapter and (not book_ or c.book == book_)}),
                    filters={"book": book_ or "", "chapter": chapter or "", "verdict": verdict or ""},
                    people=queue.PERSON, judges=queue.JUDGES)

    async def card(request: Request) -> Response:
        declaration = request.path_params["declaration"]
        found = await run_in_threadpool(state.card, declaration)
        if found is None:
            return page(request, "missing.html", 404, declaration=declaration)
        definitions = await run_in_threadpool(state.definitions, found)
        return page(request, "card.html", card=found, definitions=definitions)

    async def verdict(request: Request) -> Response:
        declaration = request.path_params["declaration"]
        form = await request.form()
        fields = {k: v if isinstance(v, str) else "" for k, v in form.items()}
        if not secrets.compare_digest(fields.get("csrf", "").encode(), state.csrf.encode()):
            return PlainTextResponse("refused: the form's CSRF token is missing or wrong; reload the page",
                                     status_code=403)
        back = _back(fields.get("back", ""))
        try:
            chosen = Verdict(fields.get("verdict", ""))
        except ValueError:
            return PlainTextResponse("a verdict is approve, reject or comment", status_code=400)
        note = fields.get("note", "").strip()
        if len(note) > NOTE_CHARS:
            return PlainTextResponse(f"the note is longer than {NOTE_CHARS:,} characters", status_code=400)
        if chosen is not Verdict.APPROVE and not note:
            return page(request, "refused.html", 400, declaration=declaration, back=back,
                        reason=f"A {chosen.value} needs a note saying why; nothing was written.")
        async with state.landing:
            found = await run_in_threadpool(state.card, declaration)
            if found is None:
                return page(request, "missing.html", 404, declaration=declaration)
            shown = fields.get("digest", "")
            if not found.digest or not secrets.compare_digest(shown.encode(), found.digest.encode()):
                return page(request, "refused.html", 409, declaration=declaration, back=back,
                            reason="This page is stale: the statement has changed since the page showed it (its "
                                   "meaning is not the one you reviewed). Nothing was written; reload the card and "
                                   "review it as it is now.")
            outcome = await run_in_threadpool(_record, state, found, chosen, note)
            state.forget()
        key = state.keep(outcome)
        url = URL(back).include_query_params(done=key)
        return RedirectResponse(f"{url.path}?{url.query}#card-{_quote(declaration)}", status_code=303)

    routes = [Route("/", index), Route("/card/{declaration}", card),
              Route("/favicon.ico", _no_icon),
              Route("/card/{declaration}/verdict", verdict, methods=["POST"]),
              Mount("/static", StaticFiles(directory=HERE / "static"), name="static")]
    app = Starlette(routes=routes, max_body_size=MAX_BODY)
    app.add_middleware(Guard, port=port, token=token)
    return app


def _record(state: Reviewing, card: Card, chosen: Verdict, note: str) -> Outcome:
    """Submit the verdict in the person's name and try to land it."""
    git = Git(state.repo)
    try:
        name, email = verdicts.identity(git)
    except UsageError as e:
        return Outcome("error", str(e))
    at = datetime.now(UTC).replace(microsecond=0)
    review = Review(declaration=card.declaration, entity=card.entity, verdict=chosen, note=note, digest=card.digest,
                    reviewer=f"{name} <{email}>", at=at)
    pending = verdicts.Pending(review=review, name=name, email=email,
                               issue=issue_text(review, card) if chosen is Verdict.REJECT else "")
    verdicts.submit(git, pending)
    try:
        landed = verdicts.deliver(state.repo, state.config)
    except AutoformalizeError as e:
        log.warning("review.landing_failed", error=str(e)[:300])
        return Outcome("error", f"Your verdict is kept, but it did not land: {e}")
    remote = state.config.git.remote
    if landed.commits:
        text = f"{chosen.value.capitalize()} of {card.declaration} landed as commit {landed.commits[-1][:12]}"
        if landed.pushed:
            text += f", pushed to {remote}."
        elif landed.pushed is False:
            text += f". {landed.message}"
        else:
            text += " (not pushed: no remote, or pushing is off)."
        return Outcome("landed", text)
    return Outcome("waiting", f"Your verdict is kept and waits: {landed.message}")


def issue_text(review: Review, card: Card) -> str:
    """The issue `review-<entity>` a rejection opens: who, what, why, and both texts, the people's words and the
    sources fenced as data."""
    what = f"{card.entity_name or card.entity} ({card.entity})" if card.entity else "no book entity"
    where = f"{card.path}:{card.line}" if card.path else "its file"
    parts = [f"# {issue_slug(review.entity, review.declaration)}: a person rejected {_code(review.declaration)}",
             "",
             f"{review.reviewer} rejected the Lean statement {_code(review.declaration)}, which formalizes {what}, "
             f"at {review.at.isoformat() if review.at else 'an unknown time'} (meaning digest "
             f"{_code(review.digest)}). Only a person's approval of a restated statement closes this issue.",
             "", "## The reviewer's note", "", _fenced(review.note, "text"),
             "", f"## The book's text ({card.book_source or 'source unknown'})", "", _fenced(card.book_text, "text"),
             "", f"## The Lean statement ({where})", "", _fenced(card.lean, "lean")]
    return "\n".join(parts) + "\n"


def _fenced(text: str, language: str) -> str:
    """`text` as a fenced block no line of it can close."""
    fence = ticks(text)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}" if text.strip() else "(none)"


def _code(text: str) -> str:
    """`text` as inline code, whatever backticks it holds."""
    fence = ticks(text) if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _here(request: Request) -> str:
    """The page's own path and filters, without the outcome shown: where a verdict's redirect comes back to."""
    url = request.url.remove_query_params(["done", "token"])
    return f"{url.path}?{url.query}" if url.query else url.path


def _back(given: str) -> str:
    """A path of this application to come back to; anything else (another host, a scheme) is the queue."""
    return given if given.startswith("/") and not given.startswith("//") and "\\" not in given else "/"


def _quote(name: str) -> str:
    return quote(name, safe="")


async def _no_icon(_: Request) -> Response:
    return Response(status_code=204)
