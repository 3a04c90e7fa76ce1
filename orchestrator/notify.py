"""Alerts: a plain-text line per cycle, and on stalls, failures, stops, restarts and give-ups, to a webhook.

Slack and Mattermost take `{"text": …}`, Discord `{"content": …}`, ntfy and most chat bridges (Telegram's
included) a plain-text body; `[notify] format` chooses. The URL is read from an environment variable, never from
a committed file: a webhook URL is a credential. A failed alert is logged without the URL, never fatal.

A field's text (a summary, an error, what a cycle was stuck on) may carry a Worker's words, so the chat shows it
and never acts on it (`escaped`); the template, the user's own, is sent as written.
"""

from __future__ import annotations

import json
import os
import re
import string
import urllib.error
import urllib.request
from enum import StrEnum
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator import pause
from state.history import HistoryRecord, Outcome, scored

log = structlog.get_logger()
TIMEOUT_S = 10
SUMMARY_CHARS = 300
PLANNER_REMINDER = 10  # a Planner still failing is announced again every this many cycles
JOINER = "\u2060"  # WORD JOINER: invisible, and it ends the word a mention would start with
# Discord's markdown: emphasis, code, spoilers, masked links `[label](url)`, `<@id>` / `<#id>` / `<url>` forms.
DISCORD_MARKUP = re.compile(r"([\\*_~`|\[\]()<>#])")


class Event(StrEnum):
    CYCLE = "cycle"
    STALL = "stall"
    FAILURE = "failure"
    STOPPED = "stopped"
    RESTART = "restart"
    GIVE_UP = "give_up"
    PLANNER = "planner"


TEMPLATES: dict[Event, str] = {
    Event.CYCLE: "[{project}] cycle {cycle}: {outcome}, score {score}, sorries {sorries}. {summary}",
    Event.STALL: "[{project}] stalled: {streak} cycles in a row without progress, up to cycle {cycle}. "
                 "Stuck on: {stuck_on}. {action}",
    Event.FAILURE: "[{project}] cycle {cycle} failed: {error}",
    Event.STOPPED: "[{project}] run stopped: {reason}",
    Event.RESTART: "[{project}] watchdog: {reason}; restarting in {wait}s. Log: {log}",
    Event.GIVE_UP: "[{project}] watchdog gave up: {reason}. Log: {log}",
    Event.PLANNER: "[{project}] the Planner failed {streak} cycles in a row, up to cycle {cycle}: {error}. Cycles "
                   "work on within the last valid Scope; look at the issues and the plan.",
}
FIELDS: dict[Event, frozenset[str]] = {
    event: frozenset(name for _, name, _, _ in string.Formatter().parse(text) if name)
    for event, text in TEMPLATES.items()}


class NotifyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    webhook_env: str = Field(default="AUTOFORMALIZE_WEBHOOK_URL", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The environment variable holding the webhook URL (a URL is a credential, so never in this file)."""
    format: Literal["slack", "discord", "text"] = "slack"
    """The body posted: `slack` is `{"text": …}` (Slack, Mattermost), `discord` is `{"content": …}`, `text` is the
    bare line (ntfy, Telegram bridges)."""
    events: list[Event] = Field(default_factory=lambda: list(Event))
    """What is sent: `cycle` (each cycle's outcome, score, sorry change and summary; a failed cycle sends `failure`
    instead), `stall` (`[loop] escalate_after` cycles in a row without progress by the facts, and again every as
    many), `failure`, `stopped` (why `run` stopped), the watchdog's `restart` and `give_up`, and `planner` (its
    answer unusable two cycles in a row, and again every ten more: `run` backs off)."""
    templates: dict[Event, str] = Field(default_factory=dict)
    """Your own wording per event, e.g. `{ cycle = "{project} #{cycle}: {outcome}" }`. The fields of each are those
    of its default: cycle {project} {cycle} {outcome} {score} {sorries} {summary}; stall {project} {streak} {cycle}
    {stuck_on} {action}; failure {project} {cycle} {error}; stopped {project} {reason}; restart {project} {reason}
    {wait} {log}; give_up {project} {reason} {log}; planner {project} {streak} {cycle} {error}."""

    @model_validator(mode="before")
    @classmethod
    def _every_cycle(cls, data: Any) -> Any:
        """Files written before `events` existed have `every_cycle`, whose default `init` wrote as `false`; a line
        per cycle is now the default, and `events` the way to turn it off."""
        if isinstance(data, dict) and "every_cycle" in data:
            data = {k: v for k, v in data.items() if k != "every_cycle"}
        return data

    @model_validator(mode="after")
    def _known_fields(self) -> NotifyConfig:
        for event, text in self.templates.items():
            try:
                text.format(**{name: "" for name in FIELDS[event]})
            except (KeyError, IndexError, ValueError) as e:
                problem = f"unknown field {e}" if isinstance(e, KeyError) else str(e)
                raise ValueError(f"templates.{event}: {problem}; its fields are "
                                 f"{', '.join('{' + f + '}' for f in sorted(FIELDS[event]))}, each already text"
                                 ) from None
        return self


class Notifier:
    """Sends the configured events; with no URL it sends nothing."""

    def __init__(self, url: str | None, config: NotifyConfig | None = None, project: str = "") -> None:
        self.url = url
        self.config = config or NotifyConfig()
        self.project = project

    @classmethod
    def from_env(cls, config: NotifyConfig, project: str) -> Notifier:
        return cls(os.environ.get(config.webhook_env) or None, config, project)

    def send(self, event: Event, **fields: object) -> bool:
        if not self.url or event not in self.config.events:
            return False
        text = self.config.templates.get(event, TEMPLATES[event])
        shown = {k: escaped(str(v), self.config.format) for k, v in fields.items()}
        return self.post(text.format(project=self.project, **shown).strip(), mentions(text))

    def post(self, text: str, allowed: dict[str, list[str]] | None = None) -> bool:
        """`text` posted; on Discord, pinging only `allowed` (`mentions`: those the template writes), else nobody."""
        assert self.url is not None
        if self.config.format == "text":
            body, kind = text.encode(), "text/plain; charset=utf-8"
        elif self.config.format == "slack":
            body, kind = json.dumps({"text": text}).encode(), "application/json"
        else:
            body = json.dumps({"content": text, "allowed_mentions": allowed or {"parse": []}}).encode()
            kind = "application/json"
        try:
            request = urllib.request.Request(self.url, data=body, headers={"Content-Type": kind}, method="POST")
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                response.read()
        except ValueError:  # its message would quote the URL, a credential
            log.warning("notify.failed", error=f"{self.config.webhook_env} is not a URL urllib can post to")
            return False
        except (urllib.error.URLError, OSError) as e:
            log.warning("notify.failed", error=str(e)[:200])
            return False
        return True

    def cycle(self, record: HistoryRecord, history: list[HistoryRecord], *, stall_after: int) -> None:
        """The cycle's line (a failure's when it failed), then a stall alert when one is due."""
        if record.outcome is Outcome.ERROR:
            self.send(Event.FAILURE, cycle=record.cycle, error=_clip(record.error or record.summary))
        else:
            sorries = "?" if record.pre_sorry_count is None else f"{record.pre_sorry_count} → {record.post_sorry_count}"
            self.send(Event.CYCLE, cycle=record.cycle, outcome=record.outcome or "recorded",
                      score=scored(record.score), sorries=sorries, summary=_clip(record.summary))
        streak = stalled(history, record, stall_after)
        if streak:
            action = (f"The Consultant was asked: {record.consultant}." if record.consultant else
                      f"The Planner was told to leave: {record.pivot}." if record.pivot else "")
            self.send(Event.STALL, streak=streak, cycle=record.cycle, stuck_on=_clip(record.stuck_on or "(not named)"),
                      action=action)
        failed = planner_streak(history, record)
        if failed >= 2 and (failed - 2) % PLANNER_REMINDER == 0:
            self.send(Event.PLANNER, streak=failed, cycle=record.cycle, error=_clip(record.planner_failed or ""))


def stalled(history: list[HistoryRecord], record: HistoryRecord, every: int) -> int:
    """The length of the run of cycles without progress (by the facts, not the score) ending at `record`, when it
    is a multiple of `every`; else 0."""
    if record.paused:  # a rate limit is neither progress nor a stall
        return 0
    streak = 0
    for r in reversed(pause.counted([*(h for h in history if h.cycle < record.cycle), record])):
        if r.made_progress:
            break
        streak += 1
    return streak if streak and streak % every == 0 else 0


def planner_streak(history: list[HistoryRecord], record: HistoryRecord) -> int:
    """How many cycles in a row, ending at `record`, could not use the Planner's answer."""
    streak = 0
    for r in reversed(pause.counted([*(h for h in history if h.cycle < record.cycle), record])):
        if not r.planner_failed:
            break
        streak += 1
    return streak


def escaped(text: str, fmt: str) -> str:
    """`text` as the chat of `fmt` shows it rather than acts on it. Slack (and Mattermost, which reads Slack's
    format): `&`, `<`, `>` as the entities Slack's formatting asks for, so `<!channel>`, `<@U…>` and `<url|label>`
    are text, and a WORD JOINER between `]` and `(`, so Mattermost's markdown makes no masked link or image of
    `[label](url)`; an `@` starting a word is joined to a WORD JOINER, which Mattermost's `@channel`, `@all` and
    `@user` do not match. Discord: its markdown escaped by backslashes (a masked link shows its brackets), the `@`
    joined as for Mattermost, and the body pings only what the template writes (`mentions`). Plain text is plain."""
    if fmt == "slack":
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("](", "]" + JOINER + "(")
    elif fmt == "discord":
        text = DISCORD_MARKUP.sub(r"\\\1", text)
    else:
        return text
    return re.sub(r"(?<!\w)@(?=\w)", "@" + JOINER, text)


def mentions(template: str) -> dict[str, list[str]]:
    """Discord's `allowed_mentions` for a message from `template`: the mentions the template itself writes (`<@id>`,
    `<@&id>`, `@everyone`, `@here`), the user's own; a field, escaped, holds none."""
    users = sorted(set(re.findall(r"<@!?(\d+)>", template)))
    roles = sorted(set(re.findall(r"<@&(\d+)>", template)))
    return {"parse": ["everyone"] if re.search(r"@(?:everyone|here)\b", template) else [],
            **({"users": users} if users else {}), **({"roles": roles} if roles else {})}


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS - 1] + "…"
