"""Who may write which issue: the rules the scope gate and the Worker's tools share.

Issues live in `<state>/issues/<slug>.md` (SPEC §2). The orchestrator's own — the judge's `unfaithful-*`
findings, the Consultant's `consultant_advice_cycle_NNN`, and the loop's notices (`stall-*`, `autoformalize-*`)
— are recognised by their reserved names, and so are the issues a person's rejection opens (`review-*`, written
with the verdict in the person's name: `orchestrator.verdicts`). A Worker may only open new issues: at most
`[gates] max_new_issues` per cycle, each at most `max_issue_chars` long, never under a reserved name nor under
one that is not a plain slug (`SLUG`: an issue's name reaches prompts as a label, where a newline or a heading
would pass for the orchestrator's words); it may not change or delete any issue that exists at the base,
whoever wrote it. Closed issues (`issues/closed/`) are the sweep's.
"""

from __future__ import annotations

import re

from gates.chosen import shown
from gates.config import GatesConfig
from gates.tree import Change, ChangeKind, Tree
from state.reviews import ISSUE_PREFIX

SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,80}")  # matched whole (fullmatch): no newline may trail it
SLUG_RULE = "lowercase letters, digits, '.', '_' and '-', starting with a letter or digit, at most 81 characters"
REVIEW = "a person's review"
RESERVED = {"unfaithful-": "the judge", "consultant_advice": "the Consultant", "stall-": "the orchestrator",
            "autoformalize-": "the orchestrator", ISSUE_PREFIX: REVIEW}


def issue_dir(state_dir: str) -> str:
    return f"{state_dir.strip('/')}/issues"


def slug_of(path: str, state_dir: str) -> str | None:
    """The slug of an open issue's path, or None when `path` is not one."""
    folder = issue_dir(state_dir) + "/"
    if not path.startswith(folder) or not path.endswith(".md") or "/" in path[len(folder):]:
        return None
    return path[len(folder):-3]


def reserved(slug: str) -> str | None:
    """Who a reserved name belongs to, or None when anyone may use it."""
    return next((owner for prefix, owner in RESERVED.items() if slug.startswith(prefix)), None)


def refusal(slug: str, *, exists: bool, opened: int, size: int, gates: GatesConfig) -> str | None:
    """Why a Worker may not write the issue `slug`, or None. `opened`: new issues it already opened this cycle,
    not counting this one."""
    if not SLUG.fullmatch(slug):
        return f"the issue name {slug!r} is not valid: {SLUG_RULE}"
    owner = reserved(slug)
    if owner is not None:
        return f"the issue name {slug!r} is reserved for {owner}"
    if exists:
        return f"the issue {slug!r} already exists; a Worker may open new issues, never change existing ones"
    if opened >= gates.max_new_issues:
        return f"a Worker may open at most {gates.max_new_issues} issues per cycle ([gates] max_new_issues)"
    if size > gates.max_issue_chars:
        return f"the issue is {size:,} characters; at most {gates.max_issue_chars:,} ([gates] max_issue_chars)"
    return None


def problems(changes: list[Change], changed: Tree, state_dir: str, gates: GatesConfig) -> list[str]:
    """What a change does to the issues that a Worker may not do."""
    out: list[str] = []
    opened = 0
    for c in changes:
        slug = slug_of(c.path, state_dir)
        if slug is None:
            continue
        if c.kind is not ChangeKind.ADDED:
            out.append(f"{shown(c.path)} was {c.kind}: a Worker may open new issues, never change or delete existing "
                       "ones")
            continue
        why = refusal(slug, exists=False, opened=opened, size=len(changed.read(c.path).decode("utf-8", "replace")),
                      gates=gates)
        if why:
            out.append(f"{shown(c.path)}: {why}")
        else:
            opened += 1
    return out
