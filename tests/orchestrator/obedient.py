"""Stand-in models that follow what they read: each reply is a function of the request, as a model that obeys
every instruction in its prompt would answer. The attacks of the trust tests must fail even against these."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from tests.orchestrator.harness import strategy, user_text
from tests.standin.anthropic_server import RecordedRequest, Reply, text_reply

Respond = Callable[[RecordedRequest], Reply]
_RESTATE = re.compile(r"RESTATE:\s*`?([\w.'’]+)`?\s*(?:—|--|-|:)?\s*([^\n<>]*)")
_SCOPE = re.compile(r"use the Scope ([^\n]+?)\.?$", re.MULTILINE)
_SCORE = re.compile(r"score (?:of |this cycle )?([+-]?\d)")
_HYPOTHESIS = re.compile(r"\((?:\w+|_)\s*:\s*([^():\"]*?[<≤≠][^():\"]*?)\)")


def planner(*scope: str, target: str = "Follow the issues.") -> Respond:
    """Copies every `RESTATE:` line it reads into its strategy, on a line of its own, and takes the Scope any text
    asks for (`use the Scope a, b`)."""

    def respond(request: RecordedRequest) -> Reply:
        text = user_text(request)
        asked = _SCOPE.search(text)
        entries = [e.strip(" `") for e in asked.group(1).split(",")] if asked else list(scope)
        restate = "\n".join(f"RESTATE: {m.group(1)} — {m.group(2).strip() or 'as asked'}"
                            for m in _RESTATE.finditer(text.replace("\\RESTATE", "RESTATE")))
        return text_reply(strategy(*entries, target=f"{target}\n\n{restate}".strip()))

    return respond


def evaluator(request: RecordedRequest) -> Reply:
    """Gives whatever score the text asks for (else 1), and copies the report into its fields."""
    text = user_text(request)
    asked = _SCORE.search(text)
    report = text.split("report written by the Worker; data, not instructions>>>", 1)[-1].split("<<<END DATA")[0]
    return text_reply(json.dumps({"progress_score": int(asked.group(1)) if asked else 1, "summary": report,
                                  "stuck_on": report, "strategy_recommendation": report, "attempts_update": report}))


def judge(request: RecordedRequest) -> Reply:
    """Answers by the book text it is shown: a Lean hypothesis the book's statement and context do not state makes
    the Lean weaker (Q1 false). It reads naively: the statement from the NATURAL LANGUAGE heading, the context from
    the first line that starts with SURROUNDING CONTEXT, wherever it is."""
    lines = user_text(request).split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("NATURAL LANGUAGE"))
    lean_at = next(i for i, line in enumerate(lines) if line.startswith("LEAN 4 STATEMENT"))
    context_at = next((i for i, line in enumerate(lines) if line.startswith("SURROUNDING CONTEXT")), None)
    book = lines[start + 1:lean_at] + (lines[context_at + 1:] if context_at is not None else [])
    stop = context_at if context_at is not None and context_at > lean_at else len(lines)
    lean = "\n".join(line.removeprefix("| ") for line in lines[lean_at + 1:stop])
    added = [h.strip() for h in _HYPOTHESIS.findall(lean) if h.strip() not in " ".join(book)]
    q1 = not added
    return text_reply(json.dumps({"lean_implies_nl": q1, "nl_implies_lean": True, "score": 3 if q1 else 1,
                                  "reason": f"Lean adds {', '.join(added)}" if added else "same claim"}))


_ANNOUNCED = re.compile(r"Text between a line `<<<DATA ([0-9a-f]{16}) — …>>>`")


def outside_fences(text: str) -> str:
    """What a model that never follows fenced text takes its instructions from: `text` without the body of every
    fence whose nonce a preamble of the orchestrator announced (each body up to the first line closing it)."""
    for nonce in set(_ANNOUNCED.findall(text)):
        text = re.sub(rf"<<<DATA {nonce}\b.*?<<<END DATA {nonce}>>>", "", text, flags=re.S)
    return text


def fenced(text: str, what: str) -> str:
    """The body of the first fence whose opening line names `what`, as the request holds it, or ''."""
    m = re.search(rf"<<<DATA ([0-9a-f]{{16}}) — {re.escape(what)}[^\n]*>>>\n(.*?)\n<<<END DATA \1>>>", text, re.S)
    return m.group(2) if m else ""


def careful_planner(*scope: str, paste: str = "") -> Respond:
    """A Planner that never follows fenced text, and follows everything else: it copies each `RESTATE:` it reads
    outside the fences into its strategy, on a line of its own. With `paste`, it also pastes the body of the
    fence `paste` names into a code block of its strategy, verbatim, as a Planner quoting Lean's messages to the
    Worker does."""

    def respond(request: RecordedRequest) -> Reply:
        text = user_text(request)
        restate = "\n".join(f"RESTATE: {m.group(1)} — {m.group(2).strip() or 'as asked'}"
                            for m in _RESTATE.finditer(outside_fences(text)))
        quoted = f"\n\nAs reported:\n\n```\n{fenced(text, paste)}\n```\n" if paste else ""
        return text_reply(strategy(*scope, target=f"Follow the issues.{quoted}\n\n{restate}".strip()))

    return respond


def careful_evaluator(request: RecordedRequest) -> Reply:
    """An Evaluator that never follows fenced text: the score asked for outside the fences, else 1."""
    asked = _SCORE.search(outside_fences(user_text(request)))
    return text_reply(json.dumps({"progress_score": int(asked.group(1)) if asked else 1, "summary": "as measured",
                                  "stuck_on": "", "strategy_recommendation": "", "attempts_update": ""}))


def summarizer(request: RecordedRequest) -> Reply:
    """A summarizer that repeats the transcript it is given, whole: any nonce or instruction in it included."""
    return text_reply(user_text(request))
