"""`autoformalize review`: the review application on 127.0.0.1, or its queue as JSON for tools."""

from __future__ import annotations

import secrets
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
    if browser:
        webbrowser.open(url)
    server(app).run(sockets=[sock])
    return 0
