"""Plain-text notifications to a webhook (Slack, Discord, ntfy and chat bridges all take `{"text": …}`).

The URL is read from an environment variable, never from a committed file:
a webhook URL is a credential. A failed notification is logged, never fatal.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

import structlog

from state.history import HistoryRecord

log = structlog.get_logger()
TIMEOUT_S = 10


class Notifier:
    def __init__(self, url: str | None, *, every_cycle: bool = False) -> None:
        self.url = url
        self.every_cycle = every_cycle

    @classmethod
    def from_env(cls, variable: str, *, every_cycle: bool = False) -> Notifier:
        return cls(os.environ.get(variable) or None, every_cycle=every_cycle)

    def send(self, text: str) -> bool:
        if not self.url:
            return False
        request = urllib.request.Request(self.url, data=json.dumps({"text": text}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                response.read()
        except (urllib.error.URLError, OSError, ValueError) as e:
            log.warning("notify.failed", error=str(e)[:200])  # never the URL: it is a credential
            return False
        return True

    def cycle(self, record: HistoryRecord) -> None:
        if not self.every_cycle:
            return
        delta = ""
        if record.pre_sorry_count is not None and record.post_sorry_count is not None:
            delta = f", sorries {record.pre_sorry_count} → {record.post_sorry_count}"
        self.send(f"autoformalize cycle {record.cycle}: {record.outcome}, score {record.progress_score:+d}{delta}. "
                  f"{record.summary}")
