"""`autoformalize review`: the review application on 127.0.0.1, or its queue as JSON for tools."""

from __future__ import annotations

import html
import secrets
import shutil
import tempfile
import webbrowser
from pathlib import Path

import click

from orchestrator import verdicts
from orchestrator.config import load_config
from orchestrator.git import Git
from orchestrator.repo import find_repo
from orchestrator.review import queue
from orchestrator.review.app import HOST, create_app, listen, server
from state.errors import UsageError


def run(repo: Path | None, port: int | None, browser: bool, book: str | None, listing: bool, as_json: bool) -> int:
    root = find_repo(repo)
    config = load_config(root)
    if as_json and not listing:
        raise UsageError("--json goes with --list: `autoformalize review --list --json`")
    if listing:
        cards = queue.select(queue.build(root, config), book=book)
        if as_json:
            click.echo(queue.to_json(cards))
        else:
            for c in cards:
                click.echo(f"{c.declaration}\t{c.entity or '-'}\t{c.why or c.risk.name.lower()}")
        return 0
    sock = listen(config.review.port if port is None else port)
    if verdicts.waiting(Git(root)):  # verdicts kept while a cycle ran: they land before new ones are given
        landed = verdicts.deliver(root, config)
        click.echo(f"{len(landed.commits)} kept verdict(s) landed" if landed.commits else landed.message, err=True)
    bound = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    url = f"http://{HOST}:{bound}/?token={token}"
    click.echo(url)  # the first line: tools and people open this address
    click.echo("Review in the browser; stop with Ctrl+C.", err=True)
    app = create_app(root, config, port=bound, token=token, book=book)
    page = handover(url) if browser else None
    try:
        if page is not None:
            webbrowser.open(page.as_uri())
        server(app).run(sockets=[sock])
    finally:
        if page is not None:
            shutil.rmtree(page.parent, ignore_errors=True)
    return 0


def handover(url: str) -> Path:
    """A page only this user may read that sends the browser on to `url`: the browser is opened on it, since any
    local user may read a process's command line, and the token must not be there."""
    folder = Path(tempfile.mkdtemp(prefix="autoformalize-review-"))  # mode 0700
    page = folder / "open.html"
    shown = html.escape(url)
    page.write_text(f'<!doctype html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0;url={shown}">\n'
                    f'<p><a href="{shown}">Open the review</a></p>\n', encoding="utf-8")
    page.chmod(0o600)
    return page
