"""Alerts to a webhook: a line per cycle, stalls, failures and stops, in each chat service's format."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from orchestrator.cli import main
from orchestrator.config import load_config
from orchestrator.cycle import Options
from orchestrator.daemon import Limits, run_daemon
from orchestrator.notify import Event, Notifier, NotifyConfig, escaped, stalled
from state.errors import UsageError
from state.history import HistoryRecord, Outcome
from tests.conftest import git, write
from tests.orchestrator.harness import Project, config_text, evaluation, strategy
from tests.standin.anthropic_server import error_reply
from tests.standin.webhook import Webhook

EDIT = [("edit_file", {"path": "Book/A.lean", "old_string": "  sorry", "new_string": "  simp"})]


def configure(project: Project, **sections: dict[str, object]) -> None:
    loop = {"heartbeat_s": 1, "cooldown_s": 0, "escalate_after": 2, **sections.pop("loop", {})}
    write(project.repo, {"autoformalize.toml": config_text(loop=loop, **sections)})
    git(project.repo, "commit", "-qam", "config")
    git(project.repo, "push", "-q", "origin", "main")


@pytest.mark.parametrize(("fmt", "content_type", "key"), [("slack", "application/json", "text"),
                                                          ("discord", "application/json", "content"),
                                                          ("text", "text/plain", None)])
def test_each_format_carries_the_line_as_its_service_expects(fmt: str, content_type: str, key: str | None) -> None:
    with Webhook() as hook:
        assert Notifier(hook.url, NotifyConfig(format=fmt), "book").send(Event.STOPPED, reason="done")  # type: ignore[arg-type]
    [post] = hook.posts
    assert post.content_type.startswith(content_type)
    line = "[book] run stopped: done"
    extra = {"allowed_mentions": {"parse": []}} if fmt == "discord" else {}  # Discord pings no one
    assert (post.json() == {key: line, **extra}) if key else post.body.decode() == line


LURE = ("<!channel> fixed, see <https://evil.example|https://github.com/o/r> @everyone "
        "[https://github.com/o/r](https://evil.example) *now* & <@U123>")


def test_a_workers_markup_in_a_field_is_shown_by_each_chat_never_acted_on() -> None:
    with Webhook() as hook:
        for fmt in ("slack", "discord", "text"):
            config = NotifyConfig(format=fmt, templates={Event.STOPPED: "<!here> {project}: {reason}"})  # type: ignore[arg-type]
            Notifier(hook.url, config, "book").send(Event.STOPPED, reason=LURE)
    slack, discord, text = hook.posts
    assert slack.json() == {"text": "<!here> book: &lt;!channel&gt; fixed, see &lt;https://evil.example|"
                                    "https://github.com/o/r&gt; @\u2060everyone [https://github.com/o/r]\u2060"
                                    "(https://evil.example) *now* &amp; &lt;@\u2060U123&gt;"}  # the template's own
    assert discord.json() == {"content": "<!here> book: \\<!channel\\> fixed, see \\<https://evil.example\\|"
                                         "https://github.com/o/r\\> @\u2060everyone \\[https://github.com/o/r\\]"
                                         "\\(https://evil.example\\) \\*now\\* & \\<@\u2060U123\\>",
                              "allowed_mentions": {"parse": []}}
    assert text.body.decode() == f"<!here> book: {LURE}"  # a plain-text body has no markup


def test_discord_pings_whom_the_users_template_names_and_no_one_a_field_names() -> None:
    config = NotifyConfig(format="discord", templates={Event.STOPPED: "<@&42> <@7> @here {project}: {reason}"})
    with Webhook() as hook:
        Notifier(hook.url, config, "book").send(Event.STOPPED, reason="<@&99> <@8> @everyone")
    [post] = hook.posts
    assert post.json()["allowed_mentions"] == {"parse": ["everyone"], "users": ["7"], "roles": ["42"]}
    assert post.json()["content"] == "<@&42> <@7> @here book: \\<@&99\\> \\<@\u20608\\> @\u2060everyone"
    # An address is no mention: its `@` is left alone.
    assert escaped("mail ann@example.org", "slack") == "mail ann@example.org"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_no_field_text_leaves_slacks_or_discords_escape(field: str) -> None:
    slack, discord = escaped(field, "slack"), escaped(field, "discord")
    assert "<" not in slack and ">" not in slack and re.fullmatch(r"(?:[^&]|&(?:amp|lt|gt);)*", slack, re.S)
    assert not re.search(r"(?<!\w)@(?!\u2060)\w", slack) and not re.search(r"(?<!\w)@(?!\u2060)\w", discord)
    assert "](" not in slack  # no masked link or image for Mattermost's markdown
    # Each of Discord's markdown characters comes escaped: taking the escapes off gives the field back.
    assert re.sub(r"\\([\\*_~`|\[\]()<>#])", r"\1", discord).replace("\u2060", "") == field.replace("\u2060", "")
    assert not re.search(r"(?<!\\)(?:\\\\)*[*_~`|\[\]()<>#]", discord)
    assert slack.replace("\u2060", "").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == \
        field.replace("\u2060", "")


def test_a_users_template_replaces_the_default_and_a_bad_one_is_refused(project: Project) -> None:
    config = NotifyConfig(templates={Event.STOPPED: "{project} halted ({reason})"})
    with Webhook() as hook:
        Notifier(hook.url, config, "book").send(Event.STOPPED, reason="budget")
    assert hook.texts() == ["book halted (budget)"]

    for template, problem in (("{cycle} {colour}", "unknown field 'colour'"),
                              ("{cycle} {score:+d}", "Unknown format code 'd'")):
        write(project.repo, {"autoformalize.toml": f'[notify]\ntemplates = {{ cycle = "{template}" }}\n'})
        with pytest.raises(UsageError, match=rf"templates\.cycle: {problem}.*\{{outcome\}}.*already text"):
            load_config(project.repo)


def test_an_older_file_still_loads_and_gets_a_line_per_cycle() -> None:
    """`init` used to write `every_cycle = false`, the old default; `events` now says what is sent."""
    assert NotifyConfig.model_validate({"every_cycle": False}).events == list(Event)
    assert NotifyConfig.model_validate({"every_cycle": True, "events": ["failure"]}).events == [Event.FAILURE]


def test_events_left_out_are_not_sent_and_no_url_sends_nothing() -> None:
    with Webhook() as hook:
        quiet = Notifier(hook.url, NotifyConfig(events=[Event.FAILURE]), "book")
        assert not quiet.send(Event.STOPPED, reason="x")
        assert quiet.send(Event.FAILURE, cycle=3, error="disk full")
        assert not Notifier(None).send(Event.FAILURE, cycle=3, error="x")
    assert hook.texts() == ["[book] cycle 3 failed: disk full"]


def test_an_alert_that_cannot_be_delivered_is_logged_without_the_url() -> None:
    with Webhook() as hook, capture_logs() as logs:
        hook.status = 503
        assert not Notifier(hook.url).send(Event.STOPPED, reason="x")
        assert not Notifier("hooks.example.invalid/services/T0-secret-token").send(Event.STOPPED, reason="x")
    assert len(hook.posts) == 1 and [e["event"] for e in logs] == ["notify.failed", "notify.failed"]
    assert "secret-token" not in repr(logs) and "is not a URL" in logs[1]["error"]


def record(cycle: int, score: int) -> HistoryRecord:
    return HistoryRecord(cycle=cycle, outcome=Outcome.NO_CHANGE, progress_score=score)


def test_a_stall_is_announced_when_it_reaches_the_threshold_and_every_as_many_cycles_after() -> None:
    history = [record(1, 1), *(record(n, s) for n, s in zip(range(2, 9), [0, -1, 0, 0, -2, 0, 0], strict=True))]
    assert [stalled(history, r, 3) for r in history] == [0, 0, 0, 3, 0, 0, 6, 0]
    assert stalled([], record(1, 0), 1) == 1


def test_the_daemon_sends_each_cycle_then_the_stall_then_why_it_stopped(project: Project) -> None:
    configure(project)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work(EDIT, "closed it")
    project.agents.evaluate(evaluation(1, "closed Book.hard"))
    for score in (-1, 0):
        project.agents.plan(strategy("Book/A.lean"))
        project.agents.work("nothing left I can do")
        project.agents.evaluate(evaluation(score, "no progress", stuck_on="Book.uses needs a lemma"))
    project.agents.consult("Try induction on the other argument.")
    with Webhook() as hook:
        reason = run_daemon(project.repo, project.config, project.deps(), Limits(max_cycles=3), Options(),
                            Notifier(hook.url, project.config.notify, "book"))
    texts = hook.texts()
    assert texts[0] == "[book] cycle 1: accepted, score +1, sorries 2 → 1. closed Book.hard"
    assert texts[1] == "[book] cycle 2: no_change, score -1, sorries 1 → 1. no progress"
    assert texts[2] == "[book] cycle 3: no_change, score +0, sorries 1 → 1. no progress"
    assert texts[3] == ("[book] stalled: 2 cycles in a row without progress, up to cycle 3. Stuck on: Book.uses "
                        "needs a lemma. The Consultant was asked: .prover-state/issues/consultant_advice_cycle_003.md.")
    assert texts[4] == f"[book] run stopped: {reason}" and len(texts) == 5


def test_a_workers_markup_reaches_slack_through_the_evaluators_summary_as_text(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    configure(project)
    project.agents.plan(strategy("Book/A.lean"))
    project.agents.work(EDIT, f"closed it. {LURE}")
    project.agents.evaluate(evaluation(1, f"closed Book.hard; the Worker says {LURE}"))
    with Webhook() as hook:
        monkeypatch.setenv("AUTOFORMALIZE_WEBHOOK_URL", hook.url)
        assert main(["cycle", "--repo", str(project.repo)]) == 0
    [line] = hook.texts()
    assert line.startswith("[book] cycle 1: accepted, score +1, sorries 2 → 1. closed Book.hard; the Worker says "
                           "&lt;!channel&gt; fixed, see &lt;https://evil.example|https://github.com/o/r&gt; @\u2060")
    assert "<" not in line and ">" not in line


def test_a_scheduled_cycle_alerts_on_its_failure(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    configure(project, notify={"format": "text"})
    overloaded = error_reply(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})
    project.agents.add("planner", *[overloaded for _ in range(10)])
    with Webhook() as hook:
        monkeypatch.setenv("AUTOFORMALIZE_WEBHOOK_URL", hook.url)
        assert main(["cycle", "--repo", str(project.repo)]) == 1
        (project.repo / "Book/B.lean").write_text("-- mine\n")
        assert main(["cycle", "--repo", str(project.repo)]) == 2
    first, second = hook.texts()
    assert first.startswith("[book] cycle 1 failed: plan:") and "verloaded" in first
    assert second.startswith("[book] cycle (unnumbered) failed: uncommitted changes in Book/B.lean")
